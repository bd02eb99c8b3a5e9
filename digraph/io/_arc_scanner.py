"""The arc scanner of the text readers (:class:`ArcScanner`): it feeds blocks of whole lines to
the Numba parsers (:mod:`digraph.io._kernels`), keeps the arcs parsed so far and checks them
against the memory available, interns vertex names (:mod:`digraph.io._names`), and turns the
kernels' error codes into messages with the file name, line number and offending text.  Shared by
the edge-list reader (:mod:`digraph.io.edgelist`, whose text gives the header and id rules) and
the Matrix Market reader (integer ids only).
"""

import os
import re

import numpy as np

from ..errors import GraphFormatError, InvalidWeightError
from ..interrupts import check as check_interrupt
from ..memory import BYTES_PER_VERTEX, available_bytes, check_arcs
from . import _kernels as K
from ._files import line_text, token_text
from ._header import header_fields, names_line, raw_line, split_fields, is_header
from ._kernels import next_data_line, parse_arcs, parse_named_arcs
from ._names import intern_names, new_name_table

_MM_BANNER = re.compile(rb"[ \t]*%%matrixmarket", re.IGNORECASE)
#: bytes a distinct vertex name is counted for in the memory check, besides its text: its slot
#: in the hash table, its str object and its entry in ``Graph.vertex_ids``
_BYTES_PER_NAME = 128


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
        every id of the file is read as a name (see :mod:`digraph.io.edgelist`).  False: integer
        ids only.

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
        # a Ctrl-C is raised between blocks, never inside the parser (digraph.interrupts)
        check_interrupt()
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
                if header == "always" or is_header(split_fields(raw_line(data, first), self.comma)):
                    nl = data.find(b"\n", first, end)
                    start = end if nl < 0 else nl + 1
        if self.names is None:
            first = next_data_line(arr, start)
            if first < end:
                raw = raw_line(data, first)
                name = names_line(raw, self.comma)
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
            integer (see :mod:`digraph.io.edgelist`).
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
        col = 1 + header_fields(raw, self.comma)[:2].index(name)
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
            if not comma and b"," in raw_line(data, eline):
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
            found = len(header_fields(raw_line(data, eline), comma))
            want = (f"{self.expect_cols}" if self.expect_cols
                    else "2 (src dst) or 3 (src dst weight)")
            hint = ""
            if not comma and found < 2 and b"," in raw_line(data, eline):
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
