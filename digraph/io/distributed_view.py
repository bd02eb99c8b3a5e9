"""A run on a :class:`~digraph.io.distributed.DistributedGraph` (``digraph.run(handle,
"pagerank", cluster=client)``, ``"sssp"``): the graph of the run is :class:`VertexView`, which holds the
vertex-sized arrays of the handle on the client (the in-degrees' running sum, the out-degrees,
the out-weight sums; the labels when an answer needs them) and no arc.  The algorithm's system
is built from those (:func:`prepare`); the cluster engine
(:mod:`digraph.dispatch.engines.power.cluster`) finds the handle's cut and shards through
:attr:`VertexView.cluster_shards` and takes the arc weights from the shards.

A scattered graph of this process (``load_distributed(graph, client)``) runs as that graph, on
the handle's workers: the same code path as ``digraph.run(graph, ..., cluster=client)``.
"""

import numpy as np

from ..errors import InvalidParameterError, InvalidWeightError, NotAvailableError
from ..graph import Graph

__all__ = ["VertexView", "for_run", "prepare"]


class VertexView(Graph):
    """The vertices of a :class:`~digraph.io.distributed.DistributedGraph` as a
    :class:`~digraph.Graph` without arcs: what an algorithm's system, the router and a
    :class:`~digraph.Result` read (``num_vertices``, ``num_arcs``, ``out_degree``,
    ``in_offsets``, ``vertex_ids``, ``index_of``).  Reading an arc array raises
    :class:`~digraph.errors.NotAvailableError`: the arcs are on the workers."""

    def __init__(self, handle):  # noqa: D107 - no Graph.__init__: no arc array to hold
        self.handle = handle
        self.num_vertices = handle.num_vertices
        out = np.zeros(handle.num_vertices + 1, np.int64)
        np.cumsum(handle.out_degree, out=out[1:])
        self.out_offsets = out
        self.in_offsets = handle.in_offsets
        self.weights = None
        self.directed = True
        self.name = handle.source
        self._cache = {}

    num_arcs = property(lambda self: self.handle.num_arcs)
    weighted = property(lambda self: self.handle.weighted)
    vertex_ids = property(lambda self: self.handle.vertex_ids)
    cluster_shards = property(lambda self: self.handle)

    def fingerprint(self):
        return self.handle.fingerprint

    def _arcs(self, *_):
        raise NotAvailableError("the arcs of a DistributedGraph are on the workers; this needs "
                                "the graph in this process (digraph.load)")

    out_targets = in_arcs = arc_sources = in_sources = property(_arcs)
    arc_weights = to_networkx = to_scipy = _arcs

    def __repr__(self):
        return repr(self.handle)


def for_run(handle, algo, on):
    """The graph a run on ``handle`` uses and its placement's ``(client, workers, threads)``:
    the handle's workers, in the order of its shards.

    Raises
    ------
    InvalidParameterError
        No ``cluster=``, another cluster's client, or a worker of the handle gone from the
        cluster.

    Every algorithm runs: the four built-in ones, and a user algorithm whose system is made
    from the vertex-sized arrays (an arc array it reads raises
    :class:`~digraph.errors.NotAvailableError`, naming ``digraph.load``).
    """
    if on is None:
        raise InvalidParameterError(f"{handle!r} runs on its cluster: pass cluster=client")
    client = on[0]
    here = getattr(client.scheduler, "address", None)
    there = getattr(handle.client.scheduler, "address", None)
    if here != there:
        raise InvalidParameterError(f"{handle!r} lives on the cluster at {there}, not on this "
                                    f"client's ({here})")
    nthreads = client.nthreads()
    gone = [w for w in handle.workers if w not in nthreads]
    if gone:
        handle.lost(gone)
    graph = handle.graph if handle.graph is not None else VertexView(handle)
    return graph, (client, list(handle.workers), sum(int(nthreads[w]) for w in handle.workers),
                   *on[3:])


def prepare(algo, graph, bound):
    """``algo``'s system on ``graph`` (a :class:`VertexView`: PageRank, adsorption or SSSP from
    the vertex-sized arrays; a weighted handle's arc factors or arc values stay the shards'
    weights)."""
    if isinstance(graph, VertexView) and algo.name == "adsorption":
        return _adsorption(algo, graph, bound)
    if not isinstance(graph, VertexView) or not (graph.weighted and bound.get("weights", True)):
        return algo.prepare(graph, **bound)
    if algo.name == "sssp":
        return _sssp(algo, graph, bound)
    if algo.name != "pagerank":
        return algo.prepare(graph, **bound)  # a user algorithm: the arrays it reads, or a refusal
    from ..algorithms.base import LinearSystem, check_bool, check_probability, scaled_inverse
    from ..algorithms.pagerank import personalization_vector
    h, name = graph.handle, algo.name
    alpha = check_probability("alpha", bound["alpha"], name)
    check_bool("weights", bound["weights"], name)
    if h.weight_min < 0 or not h.weight_finite:
        raise InvalidWeightError(f"{name}: an arc has weight {h.weight_min!r} or an infinite "
                                 f"one; {name} needs non-negative, finite weights")
    w_out = h.out_weight
    over = np.flatnonzero(np.isinf(w_out))
    if over.size:
        raise InvalidWeightError(f"{name}: the out-arc weights of vertex "
                                 f"{graph.vertex_ids[over[0]]!r} sum to more than float64 holds")
    n, pers, dangling = graph.num_vertices, bound.get("personalization"), bound.get("dangling")
    src_scale = scaled_inverse(w_out, alpha)
    p = (np.full(n, 1.0 / n) if pers is None else personalization_vector(graph, pers, name))
    p = p / p.sum()
    system = LinearSystem(b=p * (1.0 - alpha), src_scale=src_scale, normalize=True)
    system.shard_weights = True  # arc factor = the arc's weight, held by the shards
    system.error_gammas = (float((src_scale * w_out).max(initial=0.0)), np.inf)
    if dangling is not None:
        d = personalization_vector(graph, dangling, name, what="dangling")
        d /= d.sum()
        lost = w_out == 0
        if lost.any() and not np.array_equal(d, p):
            system.dangling = d
            system.dangling_scale = np.where(lost, alpha, 0.0)
    return system


def _adsorption(algo, graph, bound):
    """Adsorption on a handle, as :meth:`digraph.algorithms.Adsorption.prepare` makes it from the
    arcs: ``dst_scale = β / (in-weight sum)`` from the handle's sums (in-degrees unweighted), the
    arc factors the shards' weights (``system.shard_weights``).  Its ``error_gammas``: every row of
    ``A`` sums to β (a vertex with in-arcs) or 0, so ``γ∞ = β`` up to the sums' rounding; the
    column sums need the arcs, so ``γ1`` is left unknown (∞) and the bound takes the L∞ route
    (:class:`digraph.dispatch.engines.power.cluster_maps.Affine`)."""
    from ..algorithms.adsorption import _seed_list
    from ..algorithms.base import LinearSystem, check_bool, check_probability, scaled_inverse
    h, name = graph.handle, algo.name
    beta = check_probability("beta", bound["beta"], name)
    weighted = check_bool("weights", bound["weights"], name) and graph.weighted
    if weighted:
        if h.weight_min < 0 or not h.weight_finite:
            raise InvalidWeightError(f"{name}: an arc has weight {h.weight_min!r} or an infinite "
                                     f"one; {name} needs non-negative, finite weights")
        over = np.flatnonzero(np.isinf(h.in_weight))
        if over.size:
            raise InvalidWeightError(f"{name}: the in-arc weights of vertex "
                                     f"{graph.vertex_ids[over[0]]!r} sum to more than float64 "
                                     "holds")
    idx = graph.index_of(_seed_list(bound["seeds"]), "seed")
    b = np.zeros(graph.num_vertices, np.float64)
    b[idx] = 1.0 - beta
    indeg = graph.in_degree
    system = LinearSystem(b=b, dst_scale=scaled_inverse(h.in_weight if weighted else indeg, beta))
    system.shard_weights = weighted  # arc factor = the arc's weight, held by the shards
    system.b_support = np.unique(np.asarray(idx, np.int64))
    # a row's sum, k terms each rounded, is within (k + 2) units of the last place of β
    rows = float(indeg.max(initial=0)) + 2.0
    system.error_gammas = (np.inf, beta * (1.0 + rows * np.finfo(np.float64).eps)
                           if indeg.any() else 0.0)
    return system


def _sssp(algo, graph, bound):
    """SSSP on a weighted handle: the arc values are the shards' weights
    (``system.shard_weights``), checked from the handle's smallest weight (NaN is refused by
    the load)."""
    from ..algorithms.base import MonotoneSystem, check_bool
    from ..algorithms.sssp import _one_source
    h, name = graph.handle, algo.name
    check_bool("weights", bound["weights"], name)
    s = _one_source(graph, bound["source"])
    if h.weight_min < 0:
        raise InvalidWeightError(f"{name}: an arc has weight {h.weight_min!r}; {name} needs "
                                 "non-negative weights")
    init = np.full(graph.num_vertices, np.inf)
    init[s] = 0.0
    system = MonotoneSystem(init=init, relax="plus", combine="min", frontier=np.array([s]))
    system.shard_weights = True  # arc value = the arc's weight, held by the shards
    return system
