"""Text edge lists: ``src dst [weight]`` per line (``.el``, ``.txt``, ``.edges``, ``.tsv``,
``.csv``, each optionally ``.gz``).

The file is read as blocks of whole lines (:func:`digraph.io._files.text_blocks`, gunzipped on the
fly) and each block is parsed by one Numba pass (:mod:`digraph.io._kernels`), so that the text is
never held whole: what the reader keeps is the arcs parsed so far, checked against the memory
available after every block (:func:`digraph.memory.check_arcs`).  The Python side: header
recognition for csv/tsv (:mod:`digraph.io._header`); feeding the blocks to the kernels, turning
their error codes into messages with the file name, line number and offending text and
converting the few weights they leave to ``float()`` (:class:`ArcScanner`, in
:mod:`digraph.io._arc_scanner`); and here, the entry points, which build the
:class:`~digraph.Graph`.

Header rule (csv and tsv only): the first line that is neither blank nor a comment is a header
when every one of its fields is a name -- not empty, not starting like a number (an optional
sign, an optional ``.``, then a digit) and not a number for ``float()`` (``inf``, ``nan``) --
as in ``src,dst,weight``.  Any other first line is data, and a field of it that does not parse
is an error naming the file, the line and the field (``0,1,2.5x``; ``0,,1``).

Id rule: the first data line (after a header) decides whether the file's vertex ids are integers
or names.  When its two id fields are decimal integers (an optional sign and digits), every id
of the file must be an int64 integer: the Numba parser of :func:`digraph.io._kernels.parse_arcs`,
unchanged, and a field that is not one is an error at its line.  Otherwise every id is a name,
its text kept as written (``1`` and ``01`` are then two vertices): the texts are interned by
:func:`digraph.io._names.intern_names` in order of first appearance and ``Graph.vertex_ids``
holds them as ``str`` objects.  A file whose first data line is the only one, among the lines
read, with an id that is not an integer is refused at that line: a header in a plain edge list,
or a typo, rather than a file of names.  With ``num_vertices`` ids must be integers.

:class:`ArcScanner` is shared with the Matrix Market reader (integer ids only).
"""

import numpy as np

from ..errors import GraphFormatError
from ..graph import Graph
from ._arc_scanner import ArcScanner
from ._files import CHUNK_BYTES, default_name, text_blocks
from ._header import is_header

__all__ = ["read_edgelist", "parse_edgelist", "ArcScanner", "scan_arcs", "is_header"]

#: format -> (comma separated, may start with a header line)
_DIALECTS = {"edgelist": (False, False), "tsv": (False, True), "csv": (True, True)}
_BOM = b"\xef\xbb\xbf"


def scan_arcs(data, arr, path, *, start=0, comma=False, expect_cols=0, keep_weights=True, base=0,
              limit=-1):
    """Parse the arc lines of a whole text held in memory (see :class:`ArcScanner`).

    Parameters
    ----------
    data : bytes
        The file content (decompressed).
    arr : numpy.ndarray of uint8
        ``data`` viewed as bytes (unused; kept for the callers that pass it).
    path : str or os.PathLike
        Used in error messages only.
    start : int
        Byte offset where the arc lines begin.
    comma, expect_cols, keep_weights, base, limit
        See :class:`ArcScanner`.

    Returns
    -------
    src, dst : numpy.ndarray of int64
    weight : numpy.ndarray of float64 or None
        None when the lines have two fields or ``keep_weights`` is False.
    ncols : int
        Fields per line (0 when there was no data line).

    Raises
    ------
    GraphFormatError, InvalidWeightError, GraphTooLargeError
        See :meth:`ArcScanner.feed`.
    """
    scanner = ArcScanner(path, comma=comma, expect_cols=expect_cols, keep_weights=keep_weights,
                         base=base, limit=limit)
    scanner.feed(data, len(data), 1, start=start)
    return scanner.result()


def _scanner(path, fmt, num_vertices, weighted, header=None):
    comma, may = _DIALECTS[fmt]
    header = may if header is None else ("always" if header else False)
    return ArcScanner(path, comma=comma, header=header, keep_weights=weighted is not False,
                      limit=-1 if num_vertices is None else int(num_vertices),
                      vertices=0 if num_vertices is None else int(num_vertices),
                      names=num_vertices is None)


def _finish(scanner, path, weighted):
    """``(src, dst, weight, names)`` of a scanner fed the whole file: ``names`` is the object
    array of the vertex names that ``src``/``dst`` index, or None for integer ids."""
    src, dst, w, ncols = scanner.result()
    if weighted is True:
        if ncols == 2:
            raise GraphFormatError("weighted=True, but the lines have no weight column "
                                   "(2 fields: src dst)", path=str(path))
        if w is None:
            w = np.zeros(0, dtype=np.float64)
    return src, dst, w, scanner.vertex_names


def _bom(data, first_line):
    """Offset past a UTF-8 byte order mark at the start of the file."""
    return len(_BOM) if first_line == 1 and data.startswith(_BOM) else 0


def parse_edgelist(data, path="<bytes>", fmt="edgelist", *, num_vertices=None, weighted=None):
    """Parse the text of an edge list held in memory.

    Parameters
    ----------
    data : bytes
        The (decompressed) file content.
    path : str or os.PathLike
        Named in error messages.
    fmt : {"edgelist", "tsv", "csv"}
        Blank-separated without header, blank-separated with an optional header line, or
        comma-separated with an optional header line (see the module text for the header rule).
    num_vertices : int, optional
        Ids must lie in ``0..num_vertices-1``.
    weighted : bool, optional
        None: weighted when the lines have a third field.  False: ignore a third field.
        True: require one.

    Returns
    -------
    src, dst : numpy.ndarray
        int64 ids, or, for a file of vertex names (see the module text), object arrays of the
        names (``str``).
    weight : numpy.ndarray of float64 or None

    Raises
    ------
    GraphFormatError, InvalidWeightError, GraphTooLargeError
    """
    scanner = _scanner(path, fmt, num_vertices, weighted)
    scanner.feed(data, len(data), 1, start=_bom(data, 1))
    return _named(*_finish(scanner, path, weighted))


def _named(src, dst, w, names):
    """``(src, dst, w)`` with the ids of a file of names as the names themselves."""
    if names is not None:
        src, dst = names[src], names[dst]
    return src, dst, w


def scan_file(path, fmt, num_vertices, weighted, chunk_bytes=CHUNK_BYTES, header=None):
    """``(src, dst, weight, names)`` of the edge list file ``path`` (:func:`_finish`), read
    ``chunk_bytes`` at a time; ``header`` as for :func:`read_edgelist`."""
    scanner = _scanner(path, fmt, num_vertices, weighted, header)
    for data, end, first_line, newlines in text_blocks(path, chunk_bytes):
        scanner.feed(data, end, first_line, newlines, start=_bom(data, first_line))
    return _finish(scanner, path, weighted)


def read_arcs(path, fmt, num_vertices, weighted, chunk_bytes=CHUNK_BYTES):
    """``(src, dst, weight)`` of the edge list file ``path`` as :func:`parse_edgelist` returns
    them, read ``chunk_bytes`` at a time."""
    return _named(*scan_file(path, fmt, num_vertices, weighted, chunk_bytes))


def read_edgelist(path, fmt="edgelist", *, num_vertices=None, weighted=None, directed=None,
                  name=None, header=None):
    """Read a text edge list file into a :class:`~digraph.Graph`.

    The file is read and parsed block by block (gunzipped on the fly): its text is never held
    whole, and the arcs read are checked against the memory available after every block.

    Parameters
    ----------
    path : str or os.PathLike
        The file, a regular file (or a link to one); gzip-compressed when its name ends with
        ``.gz`` (or its data starts with the gzip magic number).
    fmt : {"edgelist", "tsv", "csv"}
        See :func:`parse_edgelist`.
    num_vertices : int, optional
        Keep the vertices ``0..num_vertices-1``, isolated ones included.  Without it the ids
        that occur are renumbered densely in increasing order (``Graph.vertex_ids``).
    weighted : bool, optional
        See :func:`parse_edgelist`.
    directed : bool, optional
        Default True; pass False for a file that already lists both directions of every edge.
    name : str, optional
        Default: the file name without its extensions.
    header : bool, optional
        None: the format's rule (csv and tsv: the first data line is skipped when every field is
        a name; plain edge lists have no header).  True: the first data line is a header,
        skipped whatever it holds.  False: there is none, the first line is data (a csv of
        vertex names without a header line).

    Returns
    -------
    digraph.Graph
        For a file of vertex names (see the module text) ``vertex_ids`` is an object array of
        the names (``str``) in order of first appearance.

    Raises
    ------
    FileNotFoundError
        The file does not exist.
    GraphFormatError
        Not a regular file (a FIFO, a device, a directory), malformed line (file, line number,
        text), a line running on past :data:`~._files.MAX_LINE_BYTES`, truncated gzip,
        missing weight column, an id outside ``num_vertices``, a vertex name that is not UTF-8
        text or holds a control character.
    InvalidWeightError
        A NaN weight (file and line).
    GraphTooLargeError
        The arcs read so far need more memory to load than is available (file and line).
    """
    src, dst, w, names = scan_file(path, fmt, num_vertices, weighted, header=header)
    return Graph.from_arrays(src, dst, w, num_vertices=num_vertices, vertex_ids=names,
                             directed=True if directed is None else bool(directed),
                             name=default_name(path) if name is None else name)
