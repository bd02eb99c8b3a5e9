"""Text edge lists: ``src dst [weight]`` per line (``.el``, ``.txt``, ``.edges``, ``.tsv``,
``.csv``, each optionally ``.gz``).

The file is read as blocks of whole lines (:func:`digraph.io._files.text_blocks`, gunzipped on the
fly) and each block is parsed by one Numba pass (:mod:`digraph.io._kernels`), so that the text is
never held whole: what the reader keeps is the arcs parsed so far, checked against the memory
available after every block (:func:`digraph.memory.check_arcs`).  This module holds the Python
side: header recognition for csv/tsv, turning the kernel's error codes into messages with the
file name, line number and offending text, converting the few weights the kernel leaves to
``float()``, and building the :class:`~digraph.Graph`.

Header rule (csv and tsv only): the first line that is neither blank nor a comment is a header
when every one of its fields is a name -- not empty, not starting like a number (an optional
sign, an optional ``.``, then a digit) and not a number for ``float()`` (``inf``, ``nan``) --
as in ``src,dst,weight``.  Any other first line is data, and a field of it that does not parse
is an error naming the file, the line and the field (``0,1,2.5x``; ``0,,1``).

:class:`ArcScanner` is shared with the Matrix Market reader.
"""

import re

import numpy as np

from ..errors import GraphFormatError, InvalidWeightError
from ..graph import Graph
from ..interrupts import check as check_interrupt
from ..memory import available_bytes, check_arcs
from . import _kernels as K
from ._files import CHUNK_BYTES, default_name, line_text, text_blocks, token_text
from ._kernels import next_data_line, parse_arcs

__all__ = ["read_edgelist", "parse_edgelist", "ArcScanner", "scan_arcs", "is_header"]

#: format -> (comma separated, may start with a header line)
_DIALECTS = {"edgelist": (False, False), "tsv": (False, True), "csv": (True, True)}
_BOM = b"\xef\xbb\xbf"
_NUMERIC_START = re.compile(r"[+-]?\.?[0-9]")


def _is_number(field):
    try:
        float(field)
    except ValueError:
        return False
    return True


def _raw_line(data, offset):
    end = data.find(b"\n", offset)
    return data[offset:end if end >= 0 else len(data)].rstrip(b"\r")


def _split(raw, comma):
    text = raw.decode("utf-8", errors="replace")
    return [f.strip() for f in text.split(",")] if comma else text.split()


def is_header(fields):
    """True when the fields of a csv/tsv first data line are all names (see the module text):
    ``["src", "dst"]`` is a header; ``["0", "1", "2.5x"]``, ``["0", "", "1"]``, ``["nan", "x"]``
    are data."""
    return bool(fields) and all(f and not _NUMERIC_START.match(f) and not _is_number(f)
                                for f in fields)


class ArcScanner:
    """Parse the arc lines of a text file block by block, keeping the arcs read so far.

    Parameters
    ----------
    path : str or os.PathLike
        Named in error messages.
    comma : bool
        Comma-separated fields (csv) instead of runs of blanks.
    header : bool
        The first data line may be a header (csv, tsv: see :func:`is_header`); it is skipped.
    expect_cols : int
        0 to accept 2 or 3 fields (the first data line decides), or exactly 2 or 3.
    keep_weights : bool
        Return the third column as weights (NaN refused); False ignores it.
    base : int
        Subtracted from every id (1 for Matrix Market, with a ``limit``).
    limit : int
        When >= 0, ids (after ``base``) must lie in ``0..limit-1``.
    max_arcs : int
        When >= 0, a data line beyond the first ``max_arcs`` is an error (Matrix Market: more
        entries than the size line announces, ``max_arcs_line`` being that line's number).
    vertices : int
        Vertices declared for the graph (``num_vertices``, a Matrix Market order), counted in
        the memory check.
    arcs_per_line : int
        Arcs the graph will hold per line parsed, for the memory check (2 for a symmetric
        Matrix Market file, whose off-diagonal entries are mirrored).
    available : int, optional
        Bytes the load may use (default: :func:`digraph.memory.available_bytes` now).

    Notes
    -----
    Every :meth:`feed` ends with :func:`digraph.memory.check_arcs`: once the arcs read so far need
    more memory to load than is available, a GraphTooLargeError names the file and the line
    reached.  The memory held while reading is the arcs parsed (24 bytes each with a weight) plus
    one block of text and its arrays.
    """

    def __init__(self, path, *, comma=False, header=False, expect_cols=0, keep_weights=True,
                 base=0, limit=-1, max_arcs=-1, max_arcs_line=None, vertices=0, arcs_per_line=1,
                 available=None):
        self.path = path
        self.comma = comma
        self.header = header
        self.expect_cols = expect_cols
        self.keep = keep_weights
        self.base = base
        self.limit = limit
        self.max_arcs = max_arcs
        self.max_arcs_line = max_arcs_line
        self.vertices = vertices
        self.arcs_per_line = arcs_per_line
        self.available = available_bytes() if available is None else available
        self.ncols = 0
        self.first_data_line = None  # 1-based number of the first data line
        self.count = 0
        self._src, self._dst, self._w = [], [], []

    def feed(self, data, end, first_line, newlines=None, start=0):
        """Parse the lines of ``data[start:end]``.

        Parameters
        ----------
        data : bytes
        end : int
            ``data[:end]`` ends at a line end (or at the end of the file).
        first_line : int
            1-based number in the file of the line starting at ``data[0]``.
        newlines : int, optional
            ``data.count(b"\\n", 0, end)`` when known.
        start : int
            Offset of the first line to parse.

        Raises
        ------
        GraphFormatError
            A malformed line, with the file, the 1-based line number and the line's text.
        InvalidWeightError
            A NaN weight, with the file and line.
        GraphTooLargeError
            The arcs read so far need more memory to load than is available.
        """
        check_interrupt()  # a Ctrl-C is raised between blocks, never inside the parser (digraph.interrupts)
        arr = np.frombuffer(data, dtype=np.uint8, count=end)
        if self.header:
            first = next_data_line(arr, start)
            if first < end:
                self.header = False
                if is_header(_split(_raw_line(data, first), self.comma)):
                    nl = data.find(b"\n", first, end)
                    start = end if nl < 0 else nl + 1
        if start >= end:
            return
        if newlines is None:
            newlines = data.count(b"\n", 0, end)
        lines = newlines - (data.count(b"\n", 0, start) if start else 0)
        # at most one arc a line, and a line holding one has 3 bytes or more ("0 1") and a newline
        capacity = min(lines + 1, (end - start + 1) // 4 + 1)
        if self.max_arcs >= 0:
            capacity = min(capacity, self.max_arcs - self.count)
        result = parse_arcs(arr, start, capacity, self.comma, self.expect_cols, self.ncols,
                            self.keep, self.base, self.limit)
        src, dst, w, count, ncols, first_at, err, _, _, _, slow, nslow = result
        if self.ncols == 0 and first_at >= 0:
            self.first_data_line = first_line + data.count(b"\n", 0, first_at)
        if err != K.OK:
            self._fail(data, first_line, result)
        self.ncols = ncols
        if count:
            compact = count < capacity // 2  # let go of a mostly unused capacity
            src, dst = src[:count], dst[:count]
            if compact:
                src, dst = src.copy(), dst.copy()
            self._src.append(src)
            self._dst.append(dst)
            if ncols == 3 and self.keep:
                w = w[:count].copy() if compact else w[:count]
                for k, s, e in slow[:3 * nslow].reshape(nslow, 3).tolist():  # few tokens
                    w[k] = float(data[s:e])
                self._w.append(w)
            self.count += count
        last_line = first_line + newlines - (1 if data[end - 1] == 10 else 0)
        check_arcs(self.count * self.arcs_per_line, self.vertices, f"{self.path}, line {last_line}",
                   self.available)

    def result(self):
        """``(src, dst, weight, ncols)``: int64 arrays, float64 weights or None (two fields, or
        ``keep_weights`` False), the fields per line (0 when there was no data line)."""
        def join(parts, dtype):
            if not parts:
                return np.zeros(0, dtype=dtype)
            return parts[0] if len(parts) == 1 else np.concatenate(parts)
        src, dst = join(self._src, np.int64), join(self._dst, np.int64)
        self._src = self._dst = None
        w = None
        if self.ncols == 3 and self.keep:
            w = join(self._w, np.float64)
        self._w = None
        return src, dst, w, self.ncols

    def _fail(self, data, first_line, result):
        """Raise the error the kernel reported."""
        ncols, _, err, eline, etok, ecol = result[4:10]
        comma, path = self.comma, self.path
        line = first_line + data.count(b"\n", 0, eline)
        quoted = f"{line_text(data, eline)!r}"
        if err == K.E_TOKEN:
            tok = token_text(data, etok, comma)
            what = "a number (the weight)" if ecol == 3 else "an integer vertex id"
            tokq = f"{tok!r}" if tok else "an empty field"
            hint = ""
            if not comma and b"," in _raw_line(data, eline):
                hint = " (for comma-separated values use a .csv name or format='csv')"
            msg = f"malformed line {quoted}: column {ecol}: {tokq} is not {what}{hint}"
        elif err == K.E_OVERFLOW:
            tok = token_text(data, etok, comma)
            msg = (f"malformed line {quoted}: column {ecol}: vertex id {tok!r} is outside the "
                   f"int64 range")
        elif err == K.E_COLUMNS:
            found = len(_split(_raw_line(data, eline), comma))
            want = (f"{self.expect_cols}" if self.expect_cols
                    else "2 (src dst) or 3 (src dst weight)")
            msg = f"malformed line {quoted}: expected {want} fields, found {found}"
        elif err == K.E_MISMATCH:
            msg = (f"malformed line {quoted}: {ecol} fields, but the first data line (line "
                   f"{self.first_data_line}) has {ncols}; every line must have the same number "
                   f"of fields")
        elif err == K.E_RANGE:
            tok = token_text(data, etok, comma)
            if self.base:
                msg = f"index {tok} in column {ecol} is outside 1..{self.limit} (line {quoted})"
            else:
                msg = (f"vertex id {tok} in column {ecol} is outside 0..{self.limit - 1} given by "
                       f"num_vertices={self.limit} (line {quoted})")
        elif err == K.E_NAN:
            raise InvalidWeightError(f"{path}, line {line}: NaN weight in {quoted}")
        elif err == K.E_CAPACITY and self.max_arcs >= 0:
            msg = (f"entry {self.max_arcs + 1} ({quoted}), but the size line (line "
                   f"{self.max_arcs_line}) announces {self.max_arcs} entries")
        else:  # E_CAPACITY without max_arcs: cannot happen, the capacity is the newline count + 1
            msg = f"internal error {err} while parsing {quoted}"
        raise GraphFormatError(msg, path=str(path), line=line)


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


def _scanner(path, fmt, num_vertices, weighted):
    comma, header = _DIALECTS[fmt]
    return ArcScanner(path, comma=comma, header=header, keep_weights=weighted is not False,
                      limit=-1 if num_vertices is None else int(num_vertices),
                      vertices=0 if num_vertices is None else int(num_vertices))


def _finish(scanner, path, weighted):
    src, dst, w, ncols = scanner.result()
    if weighted is True:
        if ncols == 2:
            raise GraphFormatError("weighted=True, but the lines have no weight column "
                                   "(2 fields: src dst)", path=str(path))
        if w is None:
            w = np.zeros(0, dtype=np.float64)
    return src, dst, w


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
    src, dst : numpy.ndarray of int64
    weight : numpy.ndarray of float64 or None

    Raises
    ------
    GraphFormatError, InvalidWeightError, GraphTooLargeError
    """
    scanner = _scanner(path, fmt, num_vertices, weighted)
    scanner.feed(data, len(data), 1, start=_bom(data, 1))
    return _finish(scanner, path, weighted)


def _read_arcs(path, fmt, num_vertices, weighted, chunk_bytes=CHUNK_BYTES):
    """``(src, dst, weight)`` of the edge list file ``path``, read ``chunk_bytes`` at a time."""
    scanner = _scanner(path, fmt, num_vertices, weighted)
    for data, end, first_line, newlines in text_blocks(path, chunk_bytes):
        scanner.feed(data, end, first_line, newlines, start=_bom(data, first_line))
    return _finish(scanner, path, weighted)


def read_edgelist(path, fmt="edgelist", *, num_vertices=None, weighted=None, directed=None,
                  name=None):
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

    Returns
    -------
    digraph.Graph

    Raises
    ------
    FileNotFoundError
        The file does not exist.
    GraphFormatError
        Not a regular file (a FIFO, a device, a directory), malformed line (file, line number,
        text), a line running on past :data:`~digraph.io._files.MAX_LINE_BYTES`, truncated gzip,
        missing weight column, an id outside ``num_vertices``.
    InvalidWeightError
        A NaN weight (file and line).
    GraphTooLargeError
        The arcs read so far need more memory to load than is available (file and line).
    """
    src, dst, w = _read_arcs(path, fmt, num_vertices, weighted)
    return Graph.from_arrays(src, dst, w, num_vertices=num_vertices,
                             directed=True if directed is None else bool(directed),
                             name=default_name(path) if name is None else name)
