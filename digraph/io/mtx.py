"""Matrix Market coordinate files (``.mtx``, optionally ``.gz``).

Supported: ``%%MatrixMarket matrix coordinate <pattern|integer|real|double> <general|symmetric>``.
Entry ``(i, j)`` (1-based) is the arc ``i-1 -> j-1`` with the entry's value as its weight; the
matrix must be square and ``num_vertices`` is its order, so vertices without entries are kept.
A symmetric file lists one triangle: the mirrored arc of every off-diagonal entry is added and the
graph is marked undirected.  ``array`` (dense) files and ``complex``, ``hermitian`` and
``skew-symmetric`` matrices are refused.

The banner and the size line are read here; the entries go through the same Numba parser as text
edge lists (:class:`digraph.io.edgelist.ArcScanner`, block by block), which checks the indices
against the order and the entry count against the size line.

The size line's claims are checked against what the file holds, before anything of their size is
allocated:

* the order ``n`` must fit in memory (:func:`digraph.memory.check_vertices`, at the size line);
* ``n`` may exceed ``max(2**20, 16 * entries)`` only when ``num_vertices=n`` confirms it: a
  header announcing 2*10**8 vertices for one entry is refused at the size line (a matrix whose
  rows are nearly all empty is unusual enough to be named explicitly), so that no small file
  makes the load allocate O(n) arrays it did not ask for;
* the arrays grow with the entries actually read, never with the announced count: a data line
  beyond the announced count is an error at that line, fewer entries an error at the size line;
  and the entries read are checked against memory after every block
  (:func:`digraph.memory.check_arcs`).
"""

import re

import numpy as np

from ..errors import GraphFormatError, InvalidParameterError
from ..graph import Graph
from ..memory import check_vertices
from ._files import default_name, line_text, text_blocks
from ._kernels import next_data_line
from .edgelist import ArcScanner

__all__ = ["read_mtx", "parse_mtx", "SPARSE_ORDER_FLOOR", "ORDER_PER_ENTRY"]

_FIELDS = ("pattern", "integer", "real", "double")
_SYMMETRIES = ("general", "symmetric")
_SIZE = re.compile(r"[+-]?[0-9]+")  # ASCII digits: int() also takes 1_000 and other scripts' digits
_I64_MAX = 2**63 - 1
_NON_BLANK = re.compile(rb"\S")

#: an order up to this many vertices is always accepted, whatever the entry count ...
SPARSE_ORDER_FLOOR = 2**20
#: ... and beyond it, up to this many vertices per entry (more needs ``num_vertices``)
ORDER_PER_ENTRY = 16


def _banner(data, path):
    """(field, symmetry) from the ``%%MatrixMarket`` first line."""
    end = data.find(b"\n")
    first = data[:end if end >= 0 else len(data)].decode("utf-8", errors="replace").strip()
    words = first.lower().split()
    if not words or words[0] != "%%matrixmarket":
        raise GraphFormatError(
            f"not a Matrix Market file: the first line must be '%%MatrixMarket matrix coordinate "
            f"<field> <symmetry>', found {line_text(data, 0)!r}", path=str(path), line=1)
    if len(words) != 5:
        raise GraphFormatError(
            f"malformed Matrix Market banner {first!r}: expected '%%MatrixMarket matrix "
            f"coordinate <field> <symmetry>'", path=str(path), line=1)
    _, obj, layout, field, symmetry = words
    if obj != "matrix":
        raise GraphFormatError(f"Matrix Market object {obj!r} is not supported (only 'matrix')",
                               path=str(path), line=1)
    if layout != "coordinate":
        raise GraphFormatError(
            f"Matrix Market format {layout!r} is not supported: a graph needs a sparse "
            f"'coordinate' file, not a dense 'array'", path=str(path), line=1)
    if field not in _FIELDS:
        raise GraphFormatError(
            f"Matrix Market field {field!r} is not supported (use one of {', '.join(_FIELDS[:3])})",
            path=str(path), line=1)
    if symmetry not in _SYMMETRIES:
        raise GraphFormatError(
            f"Matrix Market symmetry {symmetry!r} is not supported (use general or symmetric)",
            path=str(path), line=1)
    return field, symmetry


def _size_line(data, at, line, path):
    """(rows, entries) of the size line starting at ``data[at]``, line number ``line``."""
    end = data.find(b"\n", at)
    end = len(data) if end < 0 else end
    size_line = data[at:end].decode("utf-8", errors="replace").split()
    if (len(size_line) != 3 or not all(_SIZE.fullmatch(x) for x in size_line)
            or any(x.startswith("-") and x.strip("-0") for x in size_line)):
        raise GraphFormatError(
            f"malformed Matrix Market size line {line_text(data, at)!r}: expected three "
            f"non-negative integers 'rows columns entries'", path=str(path), line=line)
    digits = [x.lstrip("+-0") or "0" for x in size_line]  # no int() of thousands of digits
    if any(len(x) > 19 or int(x) > _I64_MAX for x in digits):
        raise GraphFormatError(
            f"Matrix Market size line {line_text(data, at)!r}: a size outside the int64 "
            f"range", path=str(path), line=line)
    rows, cols, nnz = (int(x) for x in digits)
    if rows != cols:
        raise GraphFormatError(
            f"the matrix is {rows} x {cols}; an adjacency matrix must be square", path=str(path),
            line=line)
    return rows, nnz


def parse_blocks(blocks, path, weighted, num_vertices):
    """:func:`parse_mtx` on the blocks of whole lines of :func:`digraph.io._files.text_blocks`."""
    blocks = iter(blocks)
    empty = np.zeros(0, dtype=np.int64)
    head = next(blocks, None)
    if head is None:
        return empty, empty, None, None, False
    data, end, _, _ = head
    if not _NON_BLANK.search(data, 0, end):  # blank so far: an all-blank file is an empty graph
        if not any(_NON_BLANK.search(d, 0, e) for d, e, _, _ in blocks):
            return empty, empty, None, None, False
    field, symmetry = _banner(data, path)
    # the size line: the first line after the banner that is neither blank nor a comment
    while True:
        data, end, first_line, newlines = head
        size_at = next_data_line(np.frombuffer(data, dtype=np.uint8, count=end), 0)
        if size_at < end:
            break
        head = next(blocks, None)
        if head is None:
            raise GraphFormatError("Matrix Market file has no size line 'rows columns entries'",
                                   path=str(path))
    size_no = first_line + data.count(b"\n", 0, size_at)
    rows, nnz = _size_line(data, size_at, size_no, path)
    check_vertices(rows, f"{path}, line {size_no}: the size line")
    if rows > max(SPARSE_ORDER_FLOOR, ORDER_PER_ENTRY * nnz) and num_vertices != rows:
        raise GraphFormatError(
            f"the size line declares {rows:,} vertices for {nnz:,} "
            f"{'entry' if nnz == 1 else 'entries'}: an order above max({SPARSE_ORDER_FLOOR:,}, "
            f"{ORDER_PER_ENTRY} x entries) is taken for a damaged header; pass "
            f"num_vertices={rows} (--num-vertices {rows}) to load it as declared",
            path=str(path), line=size_no)
    if weighted is True and field == "pattern":
        raise GraphFormatError("weighted=True, but the Matrix Market file is a 'pattern' "
                               "(no values)", path=str(path))
    expect = 2 if field == "pattern" else 3
    keep = expect == 3 and weighted is not False
    symmetric = symmetry == "symmetric"
    scanner = ArcScanner(path, expect_cols=expect, keep_weights=keep, base=1, limit=rows,
                         max_arcs=nnz, max_arcs_line=size_no, vertices=rows,
                         arcs_per_line=2 if symmetric else 1)
    after = data.find(b"\n", size_at, end)
    scanner.feed(data, end, first_line, newlines, start=end if after < 0 else after + 1)
    del data, head
    for data, end, first_line, newlines in blocks:
        scanner.feed(data, end, first_line, newlines)
    src, dst, w, _ = scanner.result()
    if src.size != nnz:
        raise GraphFormatError(f"the size line announces {nnz} entries, the file has {src.size}",
                               path=str(path), line=size_no)
    if keep and w is None:  # no entries at all
        w = np.zeros(0, dtype=np.float64)
    if symmetric:
        off = np.flatnonzero(src != dst)
        src, dst = np.concatenate([src, dst[off]]), np.concatenate([dst, src[off]])
        if w is not None:
            w = np.concatenate([w, w[off]])
    return src, dst, w, rows, symmetric


def parse_mtx(data, path="<bytes>", *, weighted=None, num_vertices=None):
    """Parse the text of a Matrix Market coordinate file held in memory.

    Parameters
    ----------
    data : bytes
        The (decompressed) file content.
    path : str or os.PathLike
        Named in error messages.
    weighted : bool, optional
        None: weighted unless the field is ``pattern``.  False: drop the values.  True: refuse a
        ``pattern`` file.
    num_vertices : int, optional
        The order the caller expects; equal to the size line's, it confirms an order beyond
        ``max(SPARSE_ORDER_FLOOR, ORDER_PER_ENTRY * entries)`` (see the module text).

    Returns
    -------
    src, dst : numpy.ndarray of int64
        0-based, with the mirrored arcs of a symmetric file added.
    weight : numpy.ndarray of float64 or None
    num_vertices : int or None
        The order of the matrix (None for an empty file).
    symmetric : bool

    Raises
    ------
    GraphFormatError
        Bad or unsupported banner, missing or malformed size line (sizes must be ASCII decimal
        integers in the int64 range), non-square matrix, an order beyond
        ``max(SPARSE_ORDER_FLOOR, ORDER_PER_ENTRY * entries)`` not confirmed by
        ``num_vertices`` (at the size line), a malformed entry line, an index out of range (with
        its line), an entry beyond the announced count (with its line), fewer entries than
        announced (with the size line).
    GraphTooLargeError
        The order of the matrix needs more memory than is available (before it is allocated),
        or the entries read so far do (with the line reached).
    InvalidWeightError
        A NaN value.
    """
    return parse_blocks([(data, len(data), 1, data.count(b"\n"))], path, weighted,
                         num_vertices)


def read_mtx(path, *, num_vertices=None, weighted=None, directed=None, name=None):
    """Read a Matrix Market coordinate file into a :class:`~digraph.Graph`.

    The file is read and parsed block by block (gunzipped on the fly); see :func:`parse_mtx`
    for what is checked.

    Parameters
    ----------
    path : str or os.PathLike
        The file, a regular file (or a link to one), gzip-compressed when its name ends with
        ``.gz``.
    num_vertices : int, optional
        Must equal the order of the matrix when given; it also confirms an order beyond
        ``max(SPARSE_ORDER_FLOOR, ORDER_PER_ENTRY * entries)``.
    weighted : bool, optional
        See :func:`parse_mtx`.
    directed : bool, optional
        Default: False for a symmetric file, True otherwise.
    name : str, optional
        Default: the file name without its extensions.

    Returns
    -------
    digraph.Graph

    Raises
    ------
    FileNotFoundError, GraphFormatError, GraphTooLargeError, InvalidWeightError
        See :func:`parse_mtx`; also a file that is not a regular file (a FIFO, a device), a line
        running on past :data:`~._files.MAX_LINE_BYTES`, truncated or corrupt gzip data.
    InvalidParameterError
        ``num_vertices`` differs from the order of the matrix.
    """
    src, dst, w, n, symmetric = parse_blocks(
        text_blocks(path), path, weighted, None if num_vertices is None else int(num_vertices))
    if n is None:
        n = 0 if num_vertices is None else int(num_vertices)
    elif num_vertices is not None and int(num_vertices) != n:
        raise InvalidParameterError(
            f"num_vertices={num_vertices} but {path} holds a {n} x {n} matrix")
    return Graph.from_arrays(src, dst, w, num_vertices=n,
                             directed=(not symmetric) if directed is None else bool(directed),
                             name=default_name(path) if name is None else name)
