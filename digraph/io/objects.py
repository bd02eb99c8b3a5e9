"""In-memory inputs: networkx graphs, numpy arc arrays and scipy sparse adjacency matrices.

Each converter produces the arc arrays and hands them to :meth:`digraph.Graph.from_arrays`.
networkx nodes may be any hashables: they become ``Graph.vertex_ids`` in the graph's node order
(an int64 array when every node is an integer, else an object array), isolated nodes included.
Arc arrays of vertex names (``str``) are numbered in order of first appearance, as the edge list
reader numbers the names of a file.
"""

import numpy as np

from ..errors import InvalidParameterError, InvalidWeightError
from ..graph import Graph

__all__ = ["from_networkx", "from_edge_arrays", "from_scipy", "is_networkx", "is_scipy_sparse"]


def is_networkx(obj):
    """True when ``obj`` is a networkx graph (without importing networkx if nobody has)."""
    import sys
    nx = sys.modules.get("networkx")
    return nx is not None and isinstance(obj, nx.Graph)


def is_scipy_sparse(obj):
    """True when ``obj`` is a scipy sparse matrix or array (without importing scipy.sparse)."""
    import sys
    sp = sys.modules.get("scipy.sparse")
    return sp is not None and sp.issparse(obj)


def _node_array(nodes):
    """The nodes as an int64 array when they are all integers, else as a 1-d object array."""
    n = len(nodes)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    try:
        a = np.array(nodes)
    except (ValueError, TypeError, OverflowError):
        a = None
    if a is not None and a.ndim == 1 and a.shape[0] == n:
        if a.dtype.kind == "i" or (a.dtype.kind == "u" and int(a.max()) < 2**63):
            return a.astype(np.int64)
    return np.fromiter(nodes, dtype=object, count=n)


def _first_non_number(values):
    """Index of the first value ``float()`` refuses (error path only)."""
    for i, x in enumerate(values):
        try:
            float(x)
        except (TypeError, ValueError):
            return i
    return 0


def _check_num_vertices(num_vertices, n, what):
    if num_vertices is not None and int(num_vertices) != n:
        raise InvalidParameterError(f"num_vertices={num_vertices} but the {what} has {n} vertices")


def from_networkx(G, *, weight="weight", weighted=None, directed=None, num_vertices=None,
                  name=None):
    """Convert a networkx ``DiGraph``, ``MultiDiGraph``, ``Graph`` or ``MultiGraph``.

    Parameters
    ----------
    G : networkx.Graph
        Nodes may be any hashables; every node becomes a vertex (isolated ones too), internal
        vertex ``i`` being the ``i``-th node of ``G``.  Parallel edges of a multigraph become
        parallel arcs.  An undirected edge becomes two arcs (a self-loop one).
    weight : str or None
        Edge attribute holding the weight; a missing attribute counts as 1.0.  None: unweighted.
    weighted : bool, optional
        None: weighted when ``weight`` is not None and at least one edge has the attribute.
        False: unweighted.  True: weighted even when no edge has the attribute (all 1.0).
    directed : bool, optional
        Default ``G.is_directed()``.
    num_vertices : int, optional
        Must equal ``G.number_of_nodes()`` when given.
    name : str, optional
        Default ``G.name`` (None when empty).

    Returns
    -------
    digraph.Graph

    Raises
    ------
    InvalidWeightError
        A weight attribute that is not a number, or NaN (naming the edge).
    InvalidParameterError
        ``num_vertices`` differs from the node count; ``weighted=True`` with ``weight=None``.
    """
    nodes = list(G)
    n = len(nodes)
    _check_num_vertices(num_vertices, n, "networkx graph")
    if weighted is True and weight is None:
        raise InvalidParameterError("weighted=True needs weight= the name of an edge attribute")
    vertex_ids = _node_array(nodes)
    index = dict(zip(nodes, range(n)))
    use_w = weight is not None and weighted is not False
    edges = list(G.edges(data=weight, default=None)) if use_w else list(G.edges())
    m = len(edges)
    cols = list(zip(*edges)) if m else [(), (), ()]
    src = np.fromiter(map(index.__getitem__, cols[0]), dtype=np.int64, count=m)
    dst = np.fromiter(map(index.__getitem__, cols[1]), dtype=np.int64, count=m)
    w = None
    if use_w:
        raw = np.fromiter(cols[2], dtype=object, count=m)
        missing = raw == None  # noqa: E711 -- elementwise test on an object array
        if weighted is True or not missing.all():
            raw[missing] = 1.0
            try:
                w = raw.astype(np.float64)
            except (TypeError, ValueError):
                k = _first_non_number(raw.tolist())
                raise InvalidWeightError(
                    f"edge {cols[0][k]!r} -> {cols[1][k]!r}: attribute {weight!r} = {raw[k]!r} "
                    f"is not a number") from None
            bad = np.flatnonzero(np.isnan(w))
            if bad.size:
                k = int(bad[0])
                raise InvalidWeightError(
                    f"edge {cols[0][k]!r} -> {cols[1][k]!r} has a NaN {weight!r} attribute")
    if not G.is_directed():
        off = np.flatnonzero(src != dst)
        src, dst = np.concatenate([src, dst[off]]), np.concatenate([dst, src[off]])
        if w is not None:
            w = np.concatenate([w, w[off]])
    if name is None:
        name = G.name or None
    return Graph.from_arrays(src, dst, w, vertex_ids=vertex_ids,
                             directed=G.is_directed() if directed is None else bool(directed),
                             name=name)


def from_edge_arrays(source, *, weighted=None, directed=None, num_vertices=None, name=None):
    """Convert ``(src, dst)`` / ``(src, dst, w)`` column arrays or a 2-d array of 2 or 3 columns.

    Parameters
    ----------
    source : tuple, list or numpy.ndarray
        A tuple/list of two or three 1-d array-likes (the columns), or an ``(m, 2)`` / ``(m, 3)``
        array (one arc per row).
    weighted : bool, optional
        None: weighted when there is a third column.  False: ignore it.  True: require it.
    directed : bool, optional
        Default True.
    num_vertices : int, optional
        Keep ids ``0..num_vertices-1``; without it the ids that occur are renumbered densely.
        Columns of vertex names (``str``: a numpy str array, or lists of ``str``) are numbered in
        order of first appearance, the names kept as ``Graph.vertex_ids`` (an object array).
    name : str, optional

    Returns
    -------
    digraph.Graph

    Raises
    ------
    InvalidParameterError
        Wrong shape, non-integer ids (other than names), one column of names and one of
        integers, ids outside ``num_vertices`` (or names with it), ``weighted=True`` without
        weights.
    InvalidWeightError
        A NaN weight.
    """
    if isinstance(source, np.ndarray):
        if source.ndim != 2 or source.shape[1] not in (2, 3):
            raise InvalidParameterError(
                f"an arc array must have shape (m, 2) or (m, 3) (src, dst[, weight]), "
                f"got {source.shape}")
        cols = [source[:, k] for k in range(source.shape[1])]
    else:
        if len(source) not in (2, 3):
            raise InvalidParameterError(
                f"expected (src, dst) or (src, dst, weight) arrays, got a {type(source).__name__} "
                f"of length {len(source)}")
        cols = list(source)
    w = cols[2] if len(cols) == 3 else None
    if weighted is False:
        w = None
    elif weighted is True and w is None:
        raise InvalidParameterError("weighted=True, but no weight array was given")
    src, dst, vertex_ids = _names(cols[0], cols[1], num_vertices)
    return Graph.from_arrays(src, dst, w, num_vertices=num_vertices, vertex_ids=vertex_ids,
                             directed=True if directed is None else bool(directed), name=name)


def _is_text(col):
    """Whether a column holds vertex names: a numpy str array, or a list, tuple or object array
    whose every element is a ``str``."""
    if isinstance(col, np.ndarray):
        if col.dtype.kind == "U":
            return True
        if col.dtype != object:
            return False
        col = col.tolist()
    elif not isinstance(col, (list, tuple)):
        return False
    return len(col) > 0 and all(isinstance(x, str) for x in col)


def _names(src, dst, num_vertices):
    """``(src, dst, vertex_ids)``: columns of vertex names (``str``) as dense indices in order of
    first appearance, with the names as ``vertex_ids`` (an object array); other columns as they
    are, with None."""
    a, b = _is_text(src), _is_text(dst)
    if not (a or b):
        return src, dst, None
    if not (a and b) and (len(src) if a else len(dst)) and (len(dst) if a else len(src)):
        raise InvalidParameterError(
            "src and dst must both hold vertex names (str) or both integer ids, not one of each")
    if num_vertices is not None:
        raise InvalidParameterError("num_vertices= needs integer vertex ids, not vertex names")
    src, dst = np.asarray(src, dtype=str), np.asarray(dst, dtype=str)
    if src.ndim != 1 or dst.ndim != 1 or src.shape != dst.shape:
        raise InvalidParameterError(f"src and dst must be 1-d arrays of equal length (got shapes "
                                    f"{src.shape} and {dst.shape})")
    names, first, inverse = np.unique(np.concatenate([src, dst]), return_index=True,
                                      return_inverse=True)
    order = np.argsort(first, kind="stable")  # first appearance, as the edge list reader numbers
    rank = np.empty(order.size, dtype=np.int64)
    rank[order] = np.arange(order.size)
    ids = rank[inverse.reshape(-1)]
    return ids[:src.size], ids[src.size:], names[order].astype(object)


def from_scipy(A, *, weighted=None, directed=None, num_vertices=None, name=None):
    """Convert a square scipy sparse matrix or array: stored entry ``(i, j)`` is the arc
    ``i -> j`` with the stored value as weight.

    Parameters
    ----------
    A : scipy.sparse matrix or array
        Must be square; its order is the number of vertices.  Explicit zeros become weight-0 arcs
        and duplicate entries (COO) parallel arcs.
    weighted : bool, optional
        None: weighted unless the matrix is boolean.  False: drop the values.
    directed : bool, optional
        Default True.
    num_vertices : int, optional
        Must equal ``A.shape[0]`` when given.
    name : str, optional

    Returns
    -------
    digraph.Graph

    Raises
    ------
    InvalidParameterError
        A non-square matrix, a complex one, or ``num_vertices`` differing from its order.
    InvalidWeightError
        A NaN value.
    """
    if len(A.shape) != 2 or A.shape[0] != A.shape[1]:
        raise InvalidParameterError(f"an adjacency matrix must be square, got shape {A.shape}")
    n = int(A.shape[0])
    _check_num_vertices(num_vertices, n, "matrix")
    if np.issubdtype(A.dtype, np.complexfloating):
        raise InvalidParameterError(f"complex matrices cannot be graph weights (dtype {A.dtype})")
    coo = A.tocoo()
    src = np.asarray(coo.row, dtype=np.int64)
    dst = np.asarray(coo.col, dtype=np.int64)
    keep = weighted is True or (weighted is None and A.dtype != np.bool_)
    w = np.asarray(coo.data, dtype=np.float64) if keep else None
    return Graph.from_arrays(src, dst, w, num_vertices=n,
                             directed=True if directed is None else bool(directed), name=name)
