"""Synthetic directed graphs for demos, tests and benchmarks.

``rmat`` is the recursive-matrix generator (Chakrabarti, Zhan & Faloutsos, "R-MAT: a recursive
model for graph mining", SDM 2004) with Graph500's parameters a=0.57, b=0.19, c=0.19 by default,
vectorised over arcs with numpy (one pass per bit of the vertex id), reproducible from ``seed``.

``grid`` and ``geometric`` make road-like graphs: nearly planar, low and even degree,
large diameter, every connection in both directions with its own random positive weight -- the
regime of the DIMACS road networks (9th DIMACS Implementation Challenge, "Shortest Paths", 2006),
where SSSP takes as many rounds as the graph has hops across, unlike the small-world R-MAT
graphs.  Both are vectorised with numpy (and scipy's k-d tree for ``geometric``), reproducible
from ``seed``, and return int64 ids like ``rmat`` (``digraph.load`` / ``Graph.from_arrays`` keep
int64 ids, so nothing is copied).

``citation`` makes citation-like graphs (where the GPU router must tell when the DAG
sketch pays): papers cite older papers, older ones more often (a vectorised stand-in for Price's
cumulative advantage, D. de S. Price, "A general theory of bibliometric and other cumulative
advantage processes", JASIS 27, 1976), so the graph is a deep DAG; a small share of citations
points forward in time (revised preprints citing later work, as in SNAP's cit-HepPh), which joins
the old core into one strongly connected component whose share of the arcs grows with that share.
"""

import math
import operator

import numpy as np

__all__ = ["rmat", "grid", "geometric", "citation"]


def rmat(scale, edge_factor=16, a=0.57, b=0.19, c=0.19, seed=0):
    """Arcs of an R-MAT graph with ``2**scale`` vertex ids and ``edge_factor * 2**scale`` arcs.

    Parameters
    ----------
    scale : int
        log2 of the number of vertex ids (0 <= scale <= 40).
    edge_factor : int
        Arcs per vertex id.
    a, b, c : float
        Quadrant probabilities (d = 1 - a - b - c); Graph500 defaults.
    seed : int
        Seed of numpy's default generator.

    Returns
    -------
    src, dst : numpy.ndarray of int64
        The arcs (self-loops and parallel arcs included, as R-MAT produces them).  Ids are
        scrambled by a fixed random permutation so that hubs are not all at small ids.
    """
    from .errors import InvalidParameterError
    if not (0 <= int(scale) <= 40) or int(edge_factor) < 0:
        raise InvalidParameterError(f"rmat: need 0 <= scale <= 40 and edge_factor >= 0, "
                                    f"got {scale}, {edge_factor}")
    if min(a, b, c) < 0 or a + b + c > 1:
        raise InvalidParameterError(f"rmat: a, b, c must be >= 0 with a + b + c <= 1, "
                                    f"got {a}, {b}, {c}")
    scale = int(scale)
    n = 1 << scale
    m = int(edge_factor) * n
    rng = np.random.default_rng(seed)
    src = np.zeros(m, np.int64)
    dst = np.zeros(m, np.int64)
    for bit in range(scale):
        r = rng.random(m)
        down = r >= a + b            # quadrants c, d: source bit set
        right = ((r >= a) & (r < a + b)) | (r >= a + b + c)   # quadrants b, d: target bit set
        src |= down.astype(np.int64) << bit
        dst |= right.astype(np.int64) << bit
    perm = rng.permutation(n)
    return perm[src], perm[dst]


def _count(func, name, value, low=1):
    """``value`` as a Python int >= ``low``, else InvalidParameterError naming it."""
    from .errors import InvalidParameterError
    try:
        if isinstance(value, (bool, np.bool_)):
            raise TypeError
        v = operator.index(value)
    except TypeError:
        raise InvalidParameterError(f"{func}: {name} must be an integer, got {value!r}") from None
    if v < low:
        raise InvalidParameterError(f"{func}: {name} must be >= {low}, got {v}")
    return v


def _weight_range(func, weights):
    """``None`` or ``(lo, hi)`` as Python ints with ``1 <= lo <= hi <= 2**53``."""
    from .errors import InvalidParameterError
    if weights is None:
        return None
    try:
        lo, hi = weights
        bounds = []
        for b in (lo, hi):
            if isinstance(b, (bool, np.bool_)):
                raise TypeError
            if isinstance(b, (float, np.floating)):
                if not (math.isfinite(b) and b == int(b)):
                    raise TypeError
                b = int(b)
            bounds.append(operator.index(b))
        lo, hi = bounds
    except (TypeError, ValueError):
        raise InvalidParameterError(
            f"{func}: weights must be None or a pair of integers (lo, hi), got {weights!r}"
        ) from None
    if not (1 <= lo <= hi <= 2 ** 53):
        raise InvalidParameterError(
            f"{func}: weights must be (lo, hi) with 1 <= lo <= hi <= 2**53, got {weights!r}")
    return lo, hi


def _random_weights(rng, lohi, m):
    """``m`` integers uniform in ``lo..hi`` inclusive, as float64 (drawn in the narrowest type)."""
    lo, hi = lohi
    span = hi - lo
    dtype = next(t for t in (np.uint8, np.uint16, np.uint32, np.uint64) if span <= np.iinfo(t).max)
    w = rng.integers(0, span, size=m, dtype=dtype, endpoint=True).astype(np.float64)
    w += lo
    return w


def grid(rows, cols, *, weights=(1, 100), seed=0, diagonal=False):
    """Arcs of a ``rows`` x ``cols`` grid, each neighbouring pair joined in both directions.

    The simplest road-like graph: planar (without ``diagonal``), every degree at most 4 (8 with
    ``diagonal``), diameter ``rows + cols - 2`` hops (``max(rows, cols) - 1`` with ``diagonal``),
    so SSSP needs many rounds, as on the DIMACS road networks (9th DIMACS Implementation
    Challenge, "Shortest Paths", 2006) that it stands in for.

    Parameters
    ----------
    rows, cols : int
        Size of the grid (>= 1 each).  Vertex ``r * cols + c`` is at row ``r``, column ``c``.
    weights : (int, int) or None
        Each arc (each direction separately) gets an integer drawn uniformly from ``lo..hi``
        inclusive (``1 <= lo <= hi``), as float64.  None: unweighted.
    seed : int or numpy.random.Generator
        Seed of numpy's default generator (only the weights are random).
    diagonal : bool
        Also join the diagonal neighbours ``(r, c)-(r+1, c+1)`` and ``(r, c+1)-(r+1, c)``.

    Returns
    -------
    src, dst : numpy.ndarray of int64
        The ``2 * (rows * (cols - 1) + cols * (rows - 1))`` arcs (plus
        ``4 * (rows - 1) * (cols - 1)`` with ``diagonal``): first each edge from its smaller id,
        then the same edges reversed.  No self-loops, no parallel arcs.
    w : numpy.ndarray of float64
        Only when ``weights`` is not None: the weight of each arc.

    Raises
    ------
    InvalidParameterError
        ``rows`` or ``cols`` not a positive integer, ``weights`` not a valid ``(lo, hi)``.

    Examples
    --------
    >>> import digraph
    >>> src, dst, w = grid(3, 4, seed=1)        # 12 vertices, 34 arcs
    >>> g = digraph.Graph.from_arrays(src, dst, w, num_vertices=3 * 4)
    """
    rows = _count("grid", "rows", rows)
    cols = _count("grid", "cols", cols)
    lohi = _weight_range("grid", weights)
    ids = np.arange(rows * cols, dtype=np.int64).reshape(rows, cols)
    u = [ids[:, :-1].ravel(), ids[:-1, :].ravel()]          # right, down
    v = [ids[:, 1:].ravel(), ids[1:, :].ravel()]
    if diagonal:
        u += [ids[:-1, :-1].ravel(), ids[:-1, 1:].ravel()]   # down-right, down-left
        v += [ids[1:, 1:].ravel(), ids[1:, :-1].ravel()]
    u = np.concatenate(u)
    v = np.concatenate(v)
    src = np.concatenate((u, v))
    dst = np.concatenate((v, u))
    del u, v, ids
    if lohi is None:
        return src, dst
    return src, dst, _random_weights(np.random.default_rng(seed), lohi, src.size)


def geometric(n, *, degree=6, weights=(1, 100), seed=0, by_distance=False, positions=False):
    """Arcs of a random geometric graph: ``n`` points in the unit square, each joined to its
    ``degree`` nearest neighbours, in both directions.

    The model is the symmetric k-nearest-neighbour graph on a uniform random point set, a local
    variant of the random geometric graph (Penrose, "Random Geometric Graphs", Oxford University
    Press, 2003; Balister, Bollobas, Sarkar & Walters, "Connectivity of random k-nearest-neighbour
    graphs", Adv. Appl. Prob. 37, 2005): the points are uniform in ``[0, 1)^2``, and ``u`` and
    ``v`` are joined when ``v`` is among the ``degree`` nearest points to ``u`` or ``u`` among
    those of ``v``.  Unlike a fixed-radius RGG it has no isolated vertex; with ``degree=6`` it
    is connected (or nearly: the connectivity threshold of ``degree`` grows as ``c ln n`` with
    ``0.30 < c < 0.52``, Balister et al.) -- with seed 0, one component at ``n = 10**4`` and
    ``4 * 10**6``, two at ``10**6``.  Every vertex has at least ``degree`` out-arcs; the mean
    out-degree is about ``1.18 * degree``.  The arcs join points at most a few times
    ``sqrt(degree / (pi n))`` apart, so the graph is nearly planar with a diameter of order
    ``sqrt(n / degree)`` hops -- a stand-in for the DIMACS road networks (9th DIMACS
    Implementation Challenge, "Shortest Paths", 2006).

    Vertex ids follow the points sorted by cells (row-major, about 4 points a cell), so that
    neighbours in the plane have nearby ids, as in road-network files.

    Parameters
    ----------
    n : int
        Number of points (vertices), >= 2.
    degree : int
        Nearest neighbours of each point, ``1 <= degree <= n - 1``.
    weights : (int, int) or None
        Integer weights in ``lo..hi`` inclusive (``1 <= lo <= hi``), as float64.  By default each
        arc (each direction separately) draws its weight uniformly at random.  None: unweighted.
    seed : int or numpy.random.Generator
        Seed of numpy's default generator (points, then weights).
    by_distance : bool
        Instead of random weights, make the weight of an edge (the same in both directions)
        proportional to its Euclidean length: ``round(hi * length / longest)``, clipped to
        ``lo..hi`` -- a distance graph, as the DIMACS ``-d`` files.
    positions : bool
        Also return the points.

    Returns
    -------
    src, dst : numpy.ndarray of int64
        The arcs: first each edge once, from the point that chose it as a neighbour (sources in
        increasing order), then the same edges reversed.  No self-loops, no parallel arcs.
    w : numpy.ndarray of float64
        Only when ``weights`` is not None: the weight of each arc.
    xy : numpy.ndarray of float64, shape (n, 2)
        Only with ``positions=True``: the point of each vertex id.

    Raises
    ------
    InvalidParameterError
        ``n`` or ``degree`` out of range, ``weights`` not a valid ``(lo, hi)``.

    Notes
    -----
    The neighbours come from ``scipy.spatial.cKDTree.query(k=degree + 1, workers=-1)`` on the
    cell-sorted points (sorted queries run faster: neighbouring ones walk the same nodes of the
    tree); an edge chosen by both of its ends is kept once by looking its source up in its
    target's list, block by block.  Memory peaks at about ``n * (degree + 1) * 16`` bytes (the
    k-d tree's neighbour ids and distances) plus the output, about ``n * degree * 1.18 * 24``
    bytes.

    Examples
    --------
    >>> import digraph
    >>> src, dst, w = geometric(1000, degree=6, seed=1)
    >>> g = digraph.Graph.from_arrays(src, dst, w, num_vertices=1000)
    """
    from .errors import InvalidParameterError
    n = _count("geometric", "n", n, low=2)
    degree = _count("geometric", "degree", degree)
    if degree > n - 1:
        raise InvalidParameterError(f"geometric: degree must be <= n - 1 = {n - 1}, got {degree}")
    lohi = _weight_range("geometric", weights)
    from scipy.spatial import cKDTree

    rng = np.random.default_rng(seed)
    xy = rng.random((n, 2))
    m = max(1, int(math.sqrt(n / 4)))                       # cells per side, ~4 points a cell
    cell = np.minimum((xy * m).astype(np.int64), m - 1)
    xy = xy[np.argsort(cell[:, 1] * m + cell[:, 0], kind="stable")]
    del cell
    tree = cKDTree(xy, balanced_tree=False, compact_nodes=False)
    _, nbr = tree.query(xy, k=degree + 1, workers=-1)
    del tree
    idt = np.int32 if n < 2 ** 31 else np.int64
    ids = np.arange(n, dtype=idt)
    if np.array_equal(nbr[:, 0], ids):                      # each point first in its own list
        nbr = nbr[:, 1:].astype(idt)
    else:                                                   # coinciding points: drop the self
        other = nbr != ids[:, None]
        nbr = nbr[other & (np.cumsum(other, axis=1) <= degree)].reshape(n, degree).astype(idt)
        del other
    # Keep u -> v (v in u's list) unless v < u and u is in v's list too: each edge once.
    twice = np.empty(nbr.shape, bool)
    block = 1 << 18
    for s in range(0, n, block):
        mine = nbr[s:s + block]
        me = ids[s:s + block, None]
        np.logical_and((nbr[mine] == me[:, :, None]).any(axis=2), mine < me, out=twice[s:s + block])
    once = ~twice
    del twice
    u = np.broadcast_to(ids[:, None], nbr.shape)[once].astype(np.int64)
    v = nbr[once].astype(np.int64)
    del nbr, once
    src = np.concatenate((u, v))
    dst = np.concatenate((v, u))
    out = [src, dst]
    if lohi is not None:
        if by_distance:
            lo, hi = lohi
            length = np.hypot(*(xy[u] - xy[v]).T)
            w = np.clip(np.rint(hi * length / length.max()), lo, hi)
            out.append(np.concatenate((w, w)))
        else:
            out.append(_random_weights(rng, lohi, src.size))
    if positions:
        out.append(xy)
    return tuple(out)


def citation(n, *, degree=12, back=0.0005, skew=2.0, seed=0):
    """Arcs of a citation-like graph: ``n`` papers, each citing ``degree`` older ones, a share
    ``back`` of the citations reversed.

    Paper ``i`` (in publication order; ids are then scrambled) cites ``⌊i · u^skew⌋`` for ``u``
    uniform in ``[0, 1)``, so old papers are cited most (the in-degree falls with the age rank,
    as Price's cumulative advantage makes it) and every citation path runs back in time: with
    ``back=0`` the graph is a DAG whose depth grows as ``log n`` (116 levels of components at
    ``n = 2**15``, 133 at ``2**17``, 164 at ``2**20``).  A share ``back`` of the arcs is reversed
    (a paper citing a later one), which closes cycles through the heavily cited old core.  With
    seed 0 and ``n`` from ``2**15`` to ``2**20``, the largest strongly connected component holds
    no arc at ``back=0``, 33–37% of them at ``back=0.0001`` (SNAP's cit-HepPh: 33%), 44–46% at
    ``0.0005``, 50–51% at ``0.001``, 60% at ``0.003`` and 89% at ``0.05``; the other arcs lie
    between components.

    Parameters
    ----------
    n : int
        Number of papers (vertices), >= 2.
    degree : int
        Citations per paper (>= 0); paper 0 cites itself (``⌊0 · u⌋ = 0``): those few self-loops
        stay, as in R-MAT.
    back : float
        Share of the arcs reversed, in ``[0, 1]``.
    skew : float
        Exponent of the age bias (> 0; 1: uniform over older papers).
    seed : int
        Seed of numpy's default generator.

    Returns
    -------
    src, dst : numpy.ndarray of int64
        The ``n * degree`` arcs, citing paper to cited paper (parallel arcs kept).

    Raises
    ------
    InvalidParameterError
        ``n`` < 2, ``degree`` < 0, ``back`` outside ``[0, 1]`` or ``skew`` <= 0.

    Examples
    --------
    >>> import digraph
    >>> src, dst = citation(1000, degree=5, back=0.0)
    >>> g = digraph.Graph.from_arrays(src, dst, num_vertices=1000)   # a DAG but for self-loops
    """
    from .errors import InvalidParameterError
    n = _count("citation", "n", n, low=2)
    degree = _count("citation", "degree", degree, low=0)
    if not (isinstance(back, (int, float, np.integer, np.floating)) and 0.0 <= float(back) <= 1.0):
        raise InvalidParameterError(f"citation: back must be a share in [0, 1], got {back!r}")
    if not (isinstance(skew, (int, float, np.integer, np.floating)) and math.isfinite(skew)
            and float(skew) > 0):
        raise InvalidParameterError(f"citation: skew must be a finite number > 0, got {skew!r}")
    rng = np.random.default_rng(seed)
    m = n * degree
    src = rng.integers(0, n, m, dtype=np.int64)
    dst = np.floor(src * rng.random(m) ** float(skew)).astype(np.int64)
    flip = np.flatnonzero(rng.random(m) < float(back))
    src[flip], dst[flip] = dst[flip], src[flip]  # both sides copied before either is written
    perm = rng.permutation(n)
    return perm[src], perm[dst]
