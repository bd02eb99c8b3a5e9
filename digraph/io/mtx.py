"""Matrix Market coordinate files (``.mtx``, optionally ``.gz``).

Supported: ``%%MatrixMarket matrix coordinate <pattern|integer|real|double> <general|symmetric>``.
Entry ``(i, j)`` (1-based) is the arc ``i-1 -> j-1`` with the entry's value as its weight; the
matrix must be square and ``num_vertices`` is its order, so vertices without entries are kept.
A symmetric file lists one triangle: the mirrored arc of every off-diagonal entry is added and the
graph is marked undirected.  ``array`` (dense) files and ``complex``, ``hermitian`` and
``skew-symmetric`` matrices are refused.

The banner and the size line are read here; the entries go through the same Numba parser as text
edge lists (:func:`digraph.io.edgelist.scan_arcs`), which checks the indices against the order.
"""

import re

import numpy as np

from ..errors import GraphFormatError, InvalidParameterError
from ..graph import Graph
from ._files import default_name, line_number, line_text, read_bytes
from ._kernels import next_data_line
from .edgelist import scan_arcs

__all__ = ["read_mtx", "parse_mtx"]

_FIELDS = ("pattern", "integer", "real", "double")
_SYMMETRIES = ("general", "symmetric")
_SIZE = re.compile(r"[+-]?[0-9]+")  # ASCII digits: int() also takes 1_000 and other scripts' digits
_I64_MAX = 2**63 - 1


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


def parse_mtx(data, path="<bytes>", *, weighted=None):
    """Parse the text of a Matrix Market coordinate file.

    Parameters
    ----------
    data : bytes
        The (decompressed) file content.
    path : str or os.PathLike
        Named in error messages.
    weighted : bool, optional
        None: weighted unless the field is ``pattern``.  False: drop the values.  True: refuse a
        ``pattern`` file.

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
        integers in the int64 range), non-square matrix, more entries announced than the file has
        lines, a malformed entry line, an index out of range (with its line), an entry count that
        differs from the size line.
    GraphTooLargeError
        The order of the matrix needs more memory than is available (before it is allocated).
    InvalidWeightError
        A NaN value.
    """
    if not data.strip():  # an empty file is an empty graph, as for every format
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, None, None, False
    field, symmetry = _banner(data, path)
    arr = np.frombuffer(data, dtype=np.uint8)
    size_at = next_data_line(arr, 0)
    if size_at >= len(data):
        raise GraphFormatError("Matrix Market file has no size line 'rows columns entries'",
                               path=str(path))
    end = data.find(b"\n", size_at)
    end = len(data) if end < 0 else end
    size_line = data[size_at:end].decode("utf-8", errors="replace").split()
    size_no = line_number(data, size_at)
    if (len(size_line) != 3 or not all(_SIZE.fullmatch(x) for x in size_line)
            or any(x.startswith("-") and x.strip("-0") for x in size_line)):
        raise GraphFormatError(
            f"malformed Matrix Market size line {line_text(data, size_at)!r}: expected three "
            f"non-negative integers 'rows columns entries'", path=str(path), line=size_no)
    digits = [x.lstrip("+-0") or "0" for x in size_line]  # no int() of thousands of digits
    if any(len(x) > 19 or int(x) > _I64_MAX for x in digits):
        raise GraphFormatError(
            f"Matrix Market size line {line_text(data, size_at)!r}: a size outside the int64 "
            f"range", path=str(path), line=size_no)
    rows, cols, nnz = (int(x) for x in digits)
    if rows != cols:
        raise GraphFormatError(
            f"the matrix is {rows} x {cols}; an adjacency matrix must be square", path=str(path),
            line=size_no)
    room = 0 if end >= len(data) else data.count(b"\n", end + 1) + 1  # lines after the size line
    if nnz > room:
        raise GraphFormatError(
            f"the size line announces {nnz:,} entries, but only {room:,} lines follow it",
            path=str(path), line=size_no)
    from ..memory import check_vertices
    check_vertices(rows, f"{path}, line {size_no}: the size line")
    if weighted is True and field == "pattern":
        raise GraphFormatError("weighted=True, but the Matrix Market file is a 'pattern' "
                               "(no values)", path=str(path))
    expect = 2 if field == "pattern" else 3
    keep = expect == 3 and weighted is not False
    src, dst, w, _ = scan_arcs(data, arr, path, start=min(end + 1, len(data)), expect_cols=expect,
                               keep_weights=keep, base=1, limit=rows)
    if src.size != nnz:
        raise GraphFormatError(
            f"the size line (line {size_no}) announces {nnz} entries, the file has {src.size}",
            path=str(path))
    if keep and w is None:  # no entries at all
        w = np.zeros(0, dtype=np.float64)
    symmetric = symmetry == "symmetric"
    if symmetric:
        off = np.flatnonzero(src != dst)
        src, dst = np.concatenate([src, dst[off]]), np.concatenate([dst, src[off]])
        if w is not None:
            w = np.concatenate([w, w[off]])
    return src, dst, w, rows, symmetric


def read_mtx(path, *, num_vertices=None, weighted=None, directed=None, name=None):
    """Read a Matrix Market coordinate file into a :class:`~digraph.Graph`.

    Parameters
    ----------
    path : str or os.PathLike
        The file, gzip-compressed when its name ends with ``.gz``.
    num_vertices : int, optional
        Must equal the order of the matrix when given.
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
    FileNotFoundError, GraphFormatError, InvalidWeightError
        See :func:`parse_mtx`.
    InvalidParameterError
        ``num_vertices`` differs from the order of the matrix.
    """
    data, _ = read_bytes(path)
    src, dst, w, n, symmetric = parse_mtx(data, path, weighted=weighted)
    del data
    if n is None:
        n = 0 if num_vertices is None else int(num_vertices)
    elif num_vertices is not None and int(num_vertices) != n:
        raise InvalidParameterError(
            f"num_vertices={num_vertices} but {path} holds a {n} x {n} matrix")
    return Graph.from_arrays(src, dst, w, num_vertices=n,
                             directed=(not symmetric) if directed is None else bool(directed),
                             name=default_name(path) if name is None else name)
