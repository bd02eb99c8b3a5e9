"""Text edge lists: ``src dst [weight]`` per line (``.el``, ``.txt``, ``.edges``, ``.tsv``,
``.csv``, each optionally ``.gz``).

The file is read whole into memory and parsed by one Numba pass (:mod:`digraph.io._kernels`);
this module holds the Python side: header detection for csv/tsv, turning the kernel's error codes
into messages with the file name, line number and offending text, converting the few weights the
kernel leaves to ``float()``, and building the :class:`~digraph.Graph`.

:func:`scan_arcs` is shared with the Matrix Market reader.
"""

import numpy as np

from ..errors import GraphFormatError, InvalidWeightError
from ..graph import Graph
from . import _kernels as K
from ._files import default_name, line_number, line_text, read_bytes, token_text
from ._kernels import next_data_line, parse_arcs

__all__ = ["read_edgelist", "parse_edgelist", "scan_arcs"]

#: format -> (comma separated, may start with a header line)
_DIALECTS = {"edgelist": (False, False), "tsv": (False, True), "csv": (True, True)}
_BOM = b"\xef\xbb\xbf"


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


def _skip_header(data, arr, comma, start):
    """Offset to start parsing at: past the first data line when it is not all numbers."""
    first = next_data_line(arr, start)
    if first >= len(data):
        return start
    fields = _split(_raw_line(data, first), comma)
    if fields and all(_is_number(f) for f in fields):
        return start
    end = data.find(b"\n", first)
    return len(data) if end < 0 else end + 1


def _fail(data, path, result, comma, expect_cols, base, limit):
    """Raise the error the kernel reported."""
    ncols, first_line, err, eline, etok, ecol = result[4:10]
    line = line_number(data, eline)
    text = line_text(data, eline)
    quoted = f"{text!r}"
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
        msg = (f"malformed line {quoted}: column {ecol}: vertex id {tok!r} is outside the int64 "
               f"range")
    elif err == K.E_COLUMNS:
        found = len(_split(_raw_line(data, eline), comma))
        want = f"{expect_cols}" if expect_cols else "2 (src dst) or 3 (src dst weight)"
        msg = f"malformed line {quoted}: expected {want} fields, found {found}"
    elif err == K.E_MISMATCH:
        first = line_number(data, first_line)
        msg = (f"malformed line {quoted}: {ecol} fields, but the first data line (line {first}) "
               f"has {ncols}; every line must have the same number of fields")
    elif err == K.E_RANGE:
        tok = token_text(data, etok, comma)
        if base:
            msg = f"index {tok} in column {ecol} is outside 1..{limit} (line {quoted})"
        else:
            msg = (f"vertex id {tok} in column {ecol} is outside 0..{limit - 1} given by "
                   f"num_vertices={limit} (line {quoted})")
    elif err == K.E_NAN:
        raise InvalidWeightError(f"{path}, line {line}: NaN weight in {quoted}")
    else:  # E_CAPACITY: cannot happen, the capacity is the newline count + 1
        msg = f"internal error {err} while parsing {quoted}"
    raise GraphFormatError(msg, path=str(path), line=line)


def scan_arcs(data, arr, path, *, start=0, comma=False, expect_cols=0, keep_weights=True, base=0,
              limit=-1):
    """Parse the arc lines of an in-memory text file.

    Parameters
    ----------
    data : bytes
        The file content (decompressed).
    arr : numpy.ndarray of uint8
        ``data`` viewed as bytes (``numpy.frombuffer``).
    path : str or os.PathLike
        Used in error messages only.
    start : int
        Byte offset where the arc lines begin.
    comma : bool
        Comma-separated fields (csv) instead of runs of blanks.
    expect_cols : int
        0 to accept 2 or 3 fields (the first data line decides), or exactly 2 or 3.
    keep_weights : bool
        Return the third column as weights (NaN refused); False ignores it.
    base : int
        Subtracted from every id (1 for Matrix Market).
    limit : int
        When >= 0, ids (after ``base``) must lie in ``0..limit-1``.

    Returns
    -------
    src, dst : numpy.ndarray of int64
    weight : numpy.ndarray of float64 or None
        None when the lines have two fields or ``keep_weights`` is False.
    ncols : int
        Fields per line (0 when there was no data line).

    Raises
    ------
    GraphFormatError
        A malformed line, with the file, the 1-based line number and the line's text.
    InvalidWeightError
        A NaN weight, with the file and line.
    """
    # at most one arc a line, and a line holding one has 3 bytes or more ("0 1") and a newline
    capacity = min(data.count(b"\n", start) + 1, (len(data) - start + 1) // 4 + 1)
    result = parse_arcs(arr, start, capacity, comma, expect_cols, keep_weights, base, limit)
    src, dst, w, count, ncols, _, err, _, _, _, slow, nslow = result
    if err != K.OK:
        _fail(data, path, result, comma, expect_cols, base, limit)
    src = src[:count]
    dst = dst[:count]
    if ncols == 3 and keep_weights:
        w = w[:count]
        for k, s, e in slow[:3 * nslow].reshape(nslow, 3).tolist():  # few tokens off the fast path
            w[k] = float(data[s:e])
    else:
        w = None
    return src, dst, w, ncols


def parse_edgelist(data, path="<bytes>", fmt="edgelist", *, num_vertices=None, weighted=None):
    """Parse the text of an edge list.

    Parameters
    ----------
    data : bytes
        The (decompressed) file content.
    path : str or os.PathLike
        Named in error messages.
    fmt : {"edgelist", "tsv", "csv"}
        Blank-separated without header, blank-separated with an optional header line, or
        comma-separated with an optional header line.
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
    GraphFormatError, InvalidWeightError
    """
    comma, header = _DIALECTS[fmt]
    arr = np.frombuffer(data, dtype=np.uint8)
    start = len(_BOM) if data.startswith(_BOM) else 0  # e.g. a csv saved by a spreadsheet
    if header:
        start = _skip_header(data, arr, comma, start)
    src, dst, w, ncols = scan_arcs(data, arr, path, start=start, comma=comma,
                                   keep_weights=weighted is not False,
                                   limit=-1 if num_vertices is None else int(num_vertices))
    if weighted is True:
        if ncols == 2:
            raise GraphFormatError("weighted=True, but the lines have no weight column "
                                   "(2 fields: src dst)", path=str(path))
        if w is None:
            w = np.zeros(0, dtype=np.float64)
    return src, dst, w


def read_edgelist(path, fmt="edgelist", *, num_vertices=None, weighted=None, directed=None,
                  name=None):
    """Read a text edge list file into a :class:`~digraph.Graph`.

    Parameters
    ----------
    path : str or os.PathLike
        The file; gzip-compressed when its name ends with ``.gz`` (or its data starts with the
        gzip magic number).
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
        Malformed line (file, line number, text), truncated gzip, missing weight column,
        an id outside ``num_vertices``.
    InvalidWeightError
        A NaN weight (file and line).
    """
    data, _ = read_bytes(path)
    src, dst, w = parse_edgelist(data, path, fmt, num_vertices=num_vertices, weighted=weighted)
    del data
    return Graph.from_arrays(src, dst, w, num_vertices=num_vertices,
                             directed=True if directed is None else bool(directed),
                             name=default_name(path) if name is None else name)
