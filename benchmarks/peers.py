"""Peers: what a user would run instead of digraph, each with its own sound stop.

Every function here takes the loaded :class:`digraph.Graph` (and the case's parameters) and
returns a callable of no argument, built outside the timing, that computes the answer and
returns ``(values, counters)``: ``values`` aligned with ``graph.vertex_ids`` (the graph's dense
order), ``counters`` a dict (``rounds`` where the peer iterates). The harness times the callable
and verifies ``values`` like a digraph answer.

===================  =========================================================================
peer                 what, and its stop
===================  =========================================================================
``scipy-power``      PageRank: ``x ← α Pᵀ x + (1 − Σ α Pᵀ x) v`` with scipy's SpMV (one
                     thread), stopped when ``α/(1 − α)·‖x_(k+1) − x_k‖₁ ≤ tol`` (a sound bound
                     of the L1 error)
``igraph-prpack``    PageRank: igraph's PRPACK, a direct solver (its own accuracy, ~1e-12), on
                     igraph's OpenMP threads (its wheel bundles a libgomp: one thread per core
                     the process may use, unless ``OMP_NUM_THREADS`` says otherwise)
``scipy-dijkstra``   SSSP: ``scipy.sparse.csgraph.dijkstra`` (parallel arcs: the lightest); on an
                     unweighted graph ``unweighted=True``, a breadth-first search (exact)
``igraph-coreness``  k-core: ``Graph.coreness(mode="all")`` on the multigraph without self-loops
``networkx-core``    k-core: ``networkx.core_number`` (exact; refused on multigraphs)
``cupy-power``       PageRank on the GPU: the ``scipy-power`` iteration with CuPy's float64 CSR
                     SpMV, the stop's sum read back each round, the answer left on the GPU
===================  =========================================================================
"""

import numpy as np

ALPHA = 0.85


def _pagerank_alpha(params):
    return float(params.get("alpha", ALPHA))


def google_matrix_t(graph, alpha=ALPHA):
    """``α Pᵀ`` as a scipy CSR matrix (row = target), arc weights used, parallel arcs summed."""
    import scipy.sparse as sp
    a = graph.to_scipy()
    outw = np.asarray(a.sum(axis=1)).ravel()
    inv = np.divide(1.0, outw, out=np.zeros_like(outw), where=outw > 0)
    return (sp.diags(alpha * inv) @ a).T.tocsr()


def power_iteration(apt, alpha, tol, xp=np, max_iter=100_000, floor=False):
    """PageRank by the Google-matrix power iteration with a sound stop.

    Parameters
    ----------
    apt : sparse matrix
        ``α Pᵀ`` (:func:`google_matrix_t`), scipy or CuPy.
    alpha : float
        The damping factor.
    tol : float
        Stop when ``α/(1 − α)·‖x_(k+1) − x_k‖₁ ≤ tol``, which bounds the L1 error of ``x_(k+1)``.
    xp : module
        ``numpy`` or ``cupy``.
    floor : bool
        For a reference: when the differences stop falling (no new low in 50 rounds: float64's
        rounding floor on this graph, above ``tol``), stop there and say so in the bound.

    Returns
    -------
    (array, int) or, with ``floor``, (array, int, float)
        The answer (sum 1), the number of rounds and, with ``floor``, the L1 bound it reached
        (``tol`` or less, unless the floor was hit).
    """
    n = apt.shape[0]
    v = xp.full(n, 1.0 / n)
    x = v.copy()
    low, since = float("inf"), 0
    for k in range(1, max_iter + 1):
        y = apt @ x
        y += (1.0 - y.sum()) * v
        d = float(xp.abs(y - x).sum())
        x = y
        bound = alpha / (1 - alpha) * d
        if bound <= tol:
            return (x, k, bound) if floor else (x, k)
        low, since = (d, 0) if d < low else (low, since + 1)
        if floor and since >= 50:
            return x, k, bound
    raise RuntimeError(f"power iteration: no convergence to {tol:g} in {max_iter} rounds")


def scipy_power(graph, params, tol):
    """The ``scipy-power`` peer (see the module's table)."""
    alpha = _pagerank_alpha(params)
    apt = google_matrix_t(graph, alpha)

    def go():
        x, k = power_iteration(apt, alpha, tol)
        return x, {"rounds": k}
    return go


def igraph_prpack(graph, params, tol):
    """The ``igraph-prpack`` peer (needs ``python-igraph``)."""
    import igraph
    g = igraph.Graph(n=graph.num_vertices, directed=True,
                     edges=np.column_stack([graph.arc_sources, graph.out_targets]))
    weights = None
    if graph.weighted:  # igraph 1.0 takes an attribute name (or a list), not an array
        g.es["weight"] = np.asarray(graph.arc_weights(), np.float64).tolist()
        weights = "weight"
    alpha = _pagerank_alpha(params)
    return lambda: (np.asarray(g.pagerank(damping=alpha, weights=weights,
                                          implementation="prpack")), {})


def _lightest_csr(graph):
    import scipy.sparse as sp
    u, v = graph.arc_sources.astype(np.int64), graph.out_targets.astype(np.int64)
    w = graph.arc_weights() if graph.weighted else np.ones(u.size)
    first = np.lexsort((w, v, u))  # parallel arcs: the lightest (csr_matrix would add them)
    keep = first[np.r_[True, (np.diff(u[first]) != 0) | (np.diff(v[first]) != 0)]] if u.size else first
    n = graph.num_vertices
    return sp.csr_matrix((w[keep], (u[keep], v[keep])), shape=(n, n))


def scipy_dijkstra(graph, params, tol):
    """The ``scipy-dijkstra`` peer (BFS on an unweighted graph)."""
    import scipy.sparse.csgraph as cg
    a = _lightest_csr(graph)
    s = int(graph.index_of(params["source"], "source"))
    unweighted = not graph.weighted
    return lambda: (cg.dijkstra(a, directed=True, indices=s, unweighted=unweighted), {})


def _simple_arcs(graph):
    src, dst = graph.arc_sources.astype(np.int64), graph.out_targets.astype(np.int64)
    keep = src != dst
    return src[keep], dst[keep]


def igraph_coreness(graph, params, tol):
    """The ``igraph-coreness`` peer (needs ``python-igraph``)."""
    import igraph
    src, dst = _simple_arcs(graph)
    g = igraph.Graph(n=graph.num_vertices, edges=np.column_stack([src, dst]), directed=True)
    return lambda: (np.asarray(g.coreness(mode="all"), np.int64), {})


def networkx_core(graph, params, tol):
    """The ``networkx-core`` peer; a graph with parallel arcs is refused (networkx would merge
    them, and its core numbers would differ from the multigraph's)."""
    import networkx as nx
    src, dst = _simple_arcs(graph)
    pairs = np.unique(np.stack([src, dst], 1), axis=0)
    if len(pairs) != src.size:
        raise ValueError("networkx-core: the graph has parallel arcs")
    G = nx.DiGraph()
    G.add_nodes_from(range(graph.num_vertices))
    G.add_edges_from(pairs.tolist())

    def go():
        core = nx.core_number(G)
        return np.fromiter((core[v] for v in range(graph.num_vertices)), np.int64,
                           graph.num_vertices), {}
    return go


def cupy_power(graph, params, tol):
    """The ``cupy-power`` peer (needs CuPy and a GPU)."""
    import cupy as cp
    import cupyx.scipy.sparse as csp
    alpha = _pagerank_alpha(params)
    apt = csp.csr_matrix(google_matrix_t(graph, alpha))

    def go():
        x, k = power_iteration(apt, alpha, tol, xp=cp)
        cp.cuda.Device().synchronize()
        return x, {"rounds": k, "answer_on": "gpu"}
    return go


PEERS = {
    "scipy-power": ("pagerank", scipy_power),
    "igraph-prpack": ("pagerank", igraph_prpack),
    "scipy-dijkstra": ("sssp", scipy_dijkstra),
    "igraph-coreness": ("kcore", igraph_coreness),
    "networkx-core": ("kcore", networkx_core),
    "cupy-power": ("pagerank", cupy_power),
}
"""peer name -> (algorithm it answers, builder ``(graph, params, tol) -> callable``)."""


def available(name):
    """Whether the peer ``name``'s package is importable here."""
    module = {"igraph-prpack": "igraph", "igraph-coreness": "igraph", "networkx-core": "networkx",
              "cupy-power": "cupy"}.get(name)
    if module is None:
        return True
    import importlib.util
    return importlib.util.find_spec(module) is not None
