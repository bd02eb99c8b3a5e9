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

Id rule: the first data line (after a header) decides whether the file's vertex ids are integers
or names.  When its two id fields are decimal integers (an optional sign and digits), every id
of the file must be an int64 integer: the Numba parser of :func:`digraph.io._kernels.parse_arcs`,
unchanged, and a field that is not one is an error at its line.  Otherwise every id is a name,
its text kept as written (``1`` and ``01`` are then two vertices): the texts are interned by
:func:`digraph.io._kernels.intern_names` in order of first appearance and ``Graph.vertex_ids``
holds them as ``str`` objects.  A file whose first data line is the only one, among the lines
read, with an id that is not an integer is refused at that line: a header in a plain edge list,
or a typo, rather than a file of names.  With ``num_vertices`` ids must be integers.

:class:`ArcScanner` is shared with the Matrix Market reader (integer ids only).
"""

import os
import re

import numpy as np

from ..errors import GraphFormatError, InvalidWeightError
from ..graph import Graph
from ..interrupts import check as check_interrupt
from ..memory import BYTES_PER_VERTEX, available_bytes, check_arcs
from . import _kernels as K
from ._files import CHUNK_BYTES, default_name, line_text, text_blocks, token_text
from ._kernels import intern_names, new_name_table, next_data_line, parse_arcs, parse_named_arcs

__all__ = ["read_edgelist", "parse_edgelist", "ArcScanner", "scan_arcs", "is_header"]

#: format -> (comma separated, may start with a header line)
_DIALECTS = {"edgelist": (False, False), "tsv": (False, True), "csv": (True, True)}
_BOM = b"\xef\xbb\xbf"
_MM_BANNER = re.compile(rb"[ \t]*%%matrixmarket", re.IGNORECASE)
_NUMERIC_START = re.compile(r"[+-]?\.?[0-9]")
_DECIMAL = re.compile(rb"[+-]?[0-9]+")
_BLANKS = re.compile(rb"[ \t\r]+")
#: bytes a distinct vertex name is counted for in the memory check, besides its text: its slot
#: in the hash table, its str object and its entry in ``Graph.vertex_ids``
_BYTES_PER_NAME = 128


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


def _fields(raw, comma):
    """The fields of a line as the parsers split it (bytes): at commas, blanks around them
    removed, or at runs of blanks (space, tab, CR)."""
    raw = raw.strip(b" \t\r")
    if comma:
        return [f.strip(b" \t\r") for f in raw.split(b",")]
    return _BLANKS.split(raw) if raw else []


def _names_line(raw, comma):
    """The first of the two id fields of a line that is not a decimal integer, or None."""
    for f in _fields(raw, comma)[:2]:
        if not _DECIMAL.fullmatch(f):
            return f
    return None


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
    header : bool or "always"
        True: the first data line may be a header (csv, tsv: see :func:`is_header`), skipped
        when it is one; ``"always"``: the first data line is a header, skipped whatever it holds.
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
    names : bool
        Vertex names allowed: when the first data line has an id that is not a decimal integer,
        every id of the file is read as a name (see the module text).  False: integer ids only.

    Attributes
    ----------
    vertex_names : numpy.ndarray of object or None
        After :meth:`result`, for a file of names: the distinct names (``str``) in order of first
        appearance, which :meth:`result`'s ids index; None for integer ids.

    Notes
    -----
    Every :meth:`feed` ends with :func:`digraph.memory.check_arcs`: once the arcs read so far need
    more memory to load than is available, a GraphTooLargeError names the file and the line
    reached.  The memory held while reading is the arcs parsed (24 bytes each with a weight) plus
    one block of text and its arrays, and for a file of names the distinct names (their text and
    :data:`_BYTES_PER_NAME` bytes each, counted in the check).
    """

    def __init__(self, path, *, comma=False, header=False, expect_cols=0, keep_weights=True,
                 base=0, limit=-1, max_arcs=-1, max_arcs_line=None, vertices=0, arcs_per_line=1,
                 available=None, names=False):
        self.path = path
        self.comma = comma
        self.header = header
        self.headed = bool(header)  # the format may have a header line (csv, tsv)
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
        self.names = None if names else False  # None: not decided yet (no data line seen)
        self.named = 0  # arcs with an id that is not a decimal integer (files of names)
        self.first_name = None  # (line number, line bytes, field): the first data line's name
        self.vertex_names = None
        self._table = None
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
        if first_line == 1 and self.base == 0 and _MM_BANNER.match(data, start):
            raise GraphFormatError(  # a comment line to an edge list, which would read on
                "a Matrix Market banner, not an edge list: read the file as Matrix Market (a "
                ".mtx name, or format='mtx')", path=str(self.path), line=1)
        if self.header:
            header = self.header
            first = next_data_line(arr, start)
            if first < end:
                self.header = False
                if header == "always" or is_header(_split(_raw_line(data, first), self.comma)):
                    nl = data.find(b"\n", first, end)
                    start = end if nl < 0 else nl + 1
        if self.names is None:
            first = next_data_line(arr, start)
            if first < end:
                raw = _raw_line(data, first)
                name = _names_line(raw, self.comma)
                self.names = name is not None
                if self.names:
                    self.first_name = (first_line + data.count(b"\n", 0, first), raw, name)
                    self._table = new_name_table(int.from_bytes(os.urandom(8), "little") | 1)
        if start >= end:
            return
        if newlines is None:
            newlines = data.count(b"\n", 0, end)
        lines = newlines - (data.count(b"\n", 0, start) if start else 0)
        # at most one arc a line, and a line holding one has 3 bytes or more ("0 1") and a newline
        capacity = min(lines + 1, (end - start + 1) // 4 + 1)
        if self.max_arcs >= 0:
            capacity = min(capacity, self.max_arcs - self.count)
        if self.names:
            result = parse_named_arcs(arr, start, capacity, self.comma, self.ncols, self.keep)
            toks, w, count, ncols, first_at, err, _, _, _, slow, nslow, named = result
        else:
            result = parse_arcs(arr, start, capacity, self.comma, self.expect_cols, self.ncols,
                                self.keep, self.base, self.limit)
            src, dst, w, count, ncols, first_at, err, _, _, _, slow, nslow = result
            named = 0
        if self.ncols == 0 and first_at >= 0:
            self.first_data_line = first_line + data.count(b"\n", 0, first_at)
        self.named += named
        if err != K.OK:
            self.count += count  # the lines read before the error, for the rule on names
            self._fail(data, first_line, result)
        self.ncols = ncols
        if count:
            compact = count < capacity // 2  # let go of a mostly unused capacity
            if self.names:
                ids, *table = intern_names(arr, toks, count, *self._table)
                self._table = table + [self._table[-1]]
                src, dst = ids[0::2], ids[1::2]
            else:
                src, dst = src[:count], dst[:count]
            if compact or self.names:
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
        check_arcs(self.count * self.arcs_per_line, self.vertices + self._name_vertices(),
                   f"{self.path}, line {last_line}", self.available)

    def _name_vertices(self):
        """The memory of the names read so far, in vertices (``BYTES_PER_VERTEX`` each)."""
        if not self._table:
            return 0
        nuniq, used = self._table[4], self._table[5]
        return -(-(2 * used + _BYTES_PER_NAME * nuniq) // BYTES_PER_VERTEX)

    def result(self):
        """``(src, dst, weight, ncols)``: int64 arrays, float64 weights or None (two fields, or
        ``keep_weights`` False), the fields per line (0 when there was no data line).

        For a file of names ``src`` and ``dst`` index :attr:`vertex_names`, set here.

        Raises
        ------
        GraphFormatError
            A file of names whose first data line is its only line with an id that is not an
            integer (see the module text).
        """
        self._check_names(None)

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
        if self._table is not None:
            _, _, bounds, arena, nuniq, used, _ = self._table
            raw = arena[:used].tobytes()
            cut = bounds[:nuniq + 1].tolist()
            names = np.empty(nuniq, dtype=object)
            # one str per distinct name (the kernel checked that each is UTF-8 text)
            names[:] = [raw[a:b].decode("utf-8") for a, b in zip(cut[:-1], cut[1:])]
            self.vertex_names = names
            self._table = None
        return src, dst, w, self.ncols

    def _check_names(self, error_line):
        """Refuse a file of names whose first data line is the only line with a name, among
        the lines read before ``error_line`` (None: every line)."""
        if not self.names or self.named != 1 or self.count < 2:
            return
        line, raw, name = self.first_name
        if error_line is not None and error_line <= line:
            return
        quoted = f"{line_text(raw, 0)!r}"
        tok = name.decode("utf-8", errors="backslashreplace")
        what = f"{tok!r}" if tok else "an empty field"
        col = 1 + _fields(raw, self.comma)[:2].index(name)
        if self.headed:
            hint = ("a header needs a name in every field, as in 'src,dst'" if self.comma
                    else "a header needs a name in every field, as in 'src dst'")
        else:
            hint = ("plain edge lists (.txt, .el, .edges) have no header; a .tsv or .csv file's "
                    "first line is one when every field is a name")
        raise GraphFormatError(
            f"malformed line {quoted}: column {col}: {what} is not an integer vertex id, and every "
            f"other line has integer ids: a typo, or a header? ({hint}; a file of vertex names "
            f"needs names on more than its first line)", path=str(self.path), line=line)

    def _fail(self, data, first_line, result):
        """Raise the error the kernel reported."""
        ncols, _, err, eline, etok, ecol = result[3:9] if self.names else result[4:10]
        comma, path = self.comma, self.path
        line = first_line + data.count(b"\n", 0, eline)
        self._check_names(line)
        quoted = f"{line_text(data, eline)!r}"
        if err == K.E_TOKEN:
            tok = token_text(data, etok, comma)
            if ecol == 3:
                what = "a number (the weight)"
            else:
                what = "a vertex id" if self.names else "an integer vertex id"
            tokq = f"{tok!r}" if tok else "an empty field"
            hint = ""
            if not comma and b"," in _raw_line(data, eline):
                hint = " (for comma-separated values use a .csv name or format='csv')"
            elif ecol < 3 and tok and self.names is False and self.limit < 0 and self.base == 0:
                hint = (f" (the first data line, line {self.first_data_line}, has integer ids, and "
                        f"it decides: a file of vertex names needs a name on its first data line)")
            elif ecol < 3 and tok and self.limit >= 0 and self.base == 0:
                hint = f" (num_vertices={self.limit} needs integer ids)"
            msg = f"malformed line {quoted}: column {ecol}: {tokq} is not {what}{hint}"
        elif err in (K.E_TEXT, K.E_CONTROL):
            end = etok
            while end < len(data) and data[end] not in b" \t\r\n" + (b"," if comma else b""):
                end += 1
            raw = data[etok:min(end, etok + 40)]
            if err == K.E_TEXT:  # its bytes, as Python writes bytes (without the b)
                msg = f"vertex name {repr(raw)[1:]} is not UTF-8 text (vertex names are UTF-8)"
            else:
                text = raw.decode("utf-8", errors="replace")
                msg = f"vertex name {text!r} holds a control character"
            msg = f"malformed line {quoted}: column {ecol}: {msg}"
        elif err == K.E_OVERFLOW:
            tok = token_text(data, etok, comma)
            msg = (f"malformed line {quoted}: column {ecol}: vertex id {tok!r} is outside the "
                   f"int64 range")
        elif err == K.E_COLUMNS:
            found = len(_fields(_raw_line(data, eline), comma))
            want = (f"{self.expect_cols}" if self.expect_cols
                    else "2 (src dst) or 3 (src dst weight)")
            hint = ""
            if not comma and found < 2 and b"," in _raw_line(data, eline):
                hint = " (for comma-separated values use a .csv name or format='csv')"
            msg = f"malformed line {quoted}: expected {want} fields, found {found}{hint}"
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


def _scan_file(path, fmt, num_vertices, weighted, chunk_bytes=CHUNK_BYTES, header=None):
    """``(src, dst, weight, names)`` of the edge list file ``path`` (:func:`_finish`), read
    ``chunk_bytes`` at a time; ``header`` as for :func:`read_edgelist`."""
    scanner = _scanner(path, fmt, num_vertices, weighted, header)
    for data, end, first_line, newlines in text_blocks(path, chunk_bytes):
        scanner.feed(data, end, first_line, newlines, start=_bom(data, first_line))
    return _finish(scanner, path, weighted)


def _read_arcs(path, fmt, num_vertices, weighted, chunk_bytes=CHUNK_BYTES):
    """``(src, dst, weight)`` of the edge list file ``path`` as :func:`parse_edgelist` returns
    them, read ``chunk_bytes`` at a time."""
    return _named(*_scan_file(path, fmt, num_vertices, weighted, chunk_bytes))


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
        text), a line running on past :data:`~digraph.io._files.MAX_LINE_BYTES`, truncated gzip,
        missing weight column, an id outside ``num_vertices``, a vertex name that is not UTF-8
        text or holds a control character.
    InvalidWeightError
        A NaN weight (file and line).
    GraphTooLargeError
        The arcs read so far need more memory to load than is available (file and line).
    """
    src, dst, w, names = _scan_file(path, fmt, num_vertices, weighted, header=header)
    return Graph.from_arrays(src, dst, w, num_vertices=num_vertices, vertex_ids=names,
                             directed=True if directed is None else bool(directed),
                             name=default_name(path) if name is None else name)
