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
        No ``cluster=``, another cluster's client, an algorithm other than PageRank, SSSP and
        k-core, or a worker of the handle gone from the cluster.
    """
    if on is None:
        raise InvalidParameterError(f"{handle!r} runs on its cluster: pass cluster=client")
    client = on[0]
    if algo.name not in ("pagerank", "sssp", "kcore"):
        raise InvalidParameterError(
            f"a DistributedGraph runs 'pagerank' (mode='power'), 'sssp' (mode='bsp') and "
            f"'kcore' (mode='bsp') only, on its cluster, not {algo.name!r}; load the graph in "
            "this process for the others (digraph.load), then digraph.run(graph, ..., "
            "cluster=client)")
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
    return graph, (client, list(handle.workers), sum(int(nthreads[w]) for w in handle.workers))


def prepare(algo, graph, bound):
    """``algo``'s system on ``graph`` (a :class:`VertexView`: PageRank or SSSP from the
    vertex-sized arrays; a weighted handle's arc factors or arc values stay the shards'
    weights)."""
    if not isinstance(graph, VertexView) or not (graph.weighted and bound.get("weights", True)):
        return algo.prepare(graph, **bound)
    if algo.name == "sssp":
        return _sssp(algo, graph, bound)
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
