"""The cluster engine on one GPU (``mode="cluster"``): min/max systems (SSSP, widest path,
reachability), a value crossing a whole cluster of nearby vertices per round.  The GPU default
for them on road-like graphs.

Why.  On a grid or a geometric graph (low degree, every arc local, thousands of hops across) the
frontier engines (``bsp``, ``vertex-async``) advance one hop a round, thousands of rounds for
SSSP.  DiGraph walks a path per thread so that a value crosses the whole path in one
round; on such graphs a path is one direction of many, so this engine takes a *region* instead:
the graph is cut into clusters of :attr:`ClusterSettings.size` vertices grown breadth-first
(:func:`digraph.preprocess.clusters.clusters_for`), and a round relaxes each queued cluster to its
local fixpoint in a thread block's shared memory (:func:`digraph.smx.cuda.clusters.cluster_round`).
A cluster whose inputs changed runs again next round; the rest never run.  For SSSP a priority
over clusters (Δ-stepping's buckets, :attr:`ClusterSettings.priority_hops`) keeps clusters from
running on values that are about to be beaten.

It pays on road-like graphs only: on graphs with hubs (a thread walks its vertex's in-arcs
alone) or without locality it is slower than ``vertex-async``, so the router sends road-like
graphs only (:attr:`digraph.dispatch.route.settings.RouteSettings.cluster_share`).  Measured:
docs/history/benchmarks-notebook.md, "SSSP on road-like graphs on one GPU"; current figures in
docs/benchmarks.md, "SSSP on one GPU: road-like graphs".

Rounds are queued back to back on the GPU (the kernel keeps its own queues); the host reads the
queue's length every :attr:`ClusterSettings.rounds_per_check` rounds, the one synchronisation.

The answer equals every other mode's (the fixpoint of Bellman–Ford's relaxation).  Counters:
``rounds`` (rounds that ran a cluster), ``clusters_run`` (cluster runs, summed over the rounds),
``cluster_sweeps`` (shared-memory sweeps, summed), ``arc_updates`` (arcs read: a run's arcs from
other clusters once, its local arcs once a sweep), ``clusters``, ``cluster_size``,
``cluster_internal_share``, ``cluster_delta``.
"""

from dataclasses import dataclass

import numpy as np

from ...settings import current, register
from ....errors import InvalidParameterError
from ....preprocess.clusters import cluster_layout, clusters_for
from ...systems import monotone_arrays, monotone_start
from ...runtime.cuda.residency import residency
from ...runtime.cuda.queued import Queues

__all__ = ["ClusterSettings", "DEFAULT", "solve"]


@dataclass(frozen=True)
class ClusterSettings:
    """How the cluster engine cuts and runs (``solve(..., settings=)``).

    Attributes
    ----------
    size : int
        Vertices a cluster (threads per block; a multiple of 32 up to 1,024; under the
        simulator at most :data:`digraph.smx.cuda.clusters.CT`, 64).  Measured:
        docs/history/benchmarks-notebook.md, "SSSP on road-like graphs on one GPU" (cluster
        size; ``bench_gpu_sssp_grid.py``).
    blocks_per_sm : int
        Blocks launched per multiprocessor (the grid; a block loops over the queue); 0: as many
        as fit, 2,048 threads' worth.
    rounds_per_check : int
        Rounds queued between two reads of the queue's length (the only synchronisation); the
        rounds queued after the queue emptied do nothing.  Not measured: chosen by hand.
    priority_hops : float
        SSSP (sums along paths, non-negative weights): a round runs only the queued clusters
        whose key (the least value that queued them) lies within ``Δ = priority_hops`` × the
        mean arc weight of the least key queued; the others wait (Δ-stepping over clusters,
        :func:`digraph.smx.cuda.clusters.cluster_round`).  0 runs every queued cluster.
        Measured: docs/history/benchmarks-notebook.md, "SSSP on road-like graphs on one GPU"
        (priority).
    """

    size: int = 512
    blocks_per_sm: int = 0
    rounds_per_check: int = 16
    priority_hops: float = 64.0


DEFAULT = register(ClusterSettings())


def _size(settings, ct):
    """The cluster size that runs: ``settings.size`` checked, at most ``ct`` (the simulator's
    blocks are smaller)."""
    if not 32 <= settings.size <= 1024 or settings.size % 32:
        raise InvalidParameterError(
            f"ClusterSettings.size must be a multiple of 32 from 32 to 1024, got {settings.size}")
    if (settings.rounds_per_check < 1 or settings.blocks_per_sm < 0
            or not settings.priority_hops >= 0):
        raise InvalidParameterError("ClusterSettings.rounds_per_check must be >= 1, blocks_per_sm "
                                    "and priority_hops >= 0")
    return min(settings.size, ct)


def _device_layout(be, graph, cl, has, value):
    """The cluster layout on the GPU (uploaded once per graph, device and size; kept in the
    graph's residency, kind ``"cuda-clusters"``)."""
    res = residency(graph)
    key = (be.device_id, be.sim, cl.size)
    d = res.peek("cuda-clusters", key)
    if d is None:
        lay = cluster_layout(graph, cl)
        d = {"starts": be.put(cl.starts, np.int64), "off": be.put(lay["off"], np.int64),
             "mid": be.put(lay["mid"], np.int64), "src": be.put(lay["src"]),
             "xo_off": be.put(lay["xo_off"], np.int64), "xo": be.put(lay["xo"], np.int32),
             "order": be.put(cl.order, np.int64)}
        res.put("cuda-clusters", key, d)
    else:
        be.keep_all(d)
    lay = cluster_layout(graph, cl)
    if not has:
        return d, lay, be.keep(be.xp.zeros(1, np.float64)), (1.0, 1.0)
    if d.get("val_of") is not value:  # the values in the layout's order, for this value array
        host = np.asarray(value, np.float64)
        d["val"] = be.put(host[lay["arc"]])
        d["val_of"] = value
        d["val_range"] = (float(host.min()), float(host.mean())) if host.size else (0.0, 0.0)
    else:
        be.keep(d["val"])
    return d, lay, d["val"], d["val_range"]


def _delta(settings, op, combine, weights):
    """Δ of the priority (:attr:`ClusterSettings.priority_hops`), or inf: sums along paths with
    non-negative weights only (a min of sums); ``weights``: (least, mean) arc value."""
    from ...systems import RELAX_CODES
    least, mean = weights
    if settings.priority_hops <= 0 or op != RELAX_CODES["plus"] or combine != 0:
        return np.inf
    if not least >= 0 or not mean > 0:
        return np.inf
    return settings.priority_hops * mean


def solve(be, graph, system, *, max_iter, stats, settings=None):
    """Run the min/max ``system`` on the GPU of backend ``be`` by clusters; returns (the state on
    the device in the graph's own vertex order, converged)."""
    from ....smx.cuda.clusters import CT, cluster_round
    settings = current(DEFAULT) if settings is None else settings
    size = _size(settings, CT)
    if system.family != "monotone":
        raise InvalidParameterError(f"mode='cluster' runs min/max systems (SSSP, ...), not the "
                                    f"{system.family} family")
    xp = be.xp
    n = graph.num_vertices
    cl = clusters_for(graph, size)
    op, combine, has, value = monotone_arrays(graph, system)
    d, lay, val, weights = _device_layout(be, graph, cl, has, value)
    x0, active0 = monotone_start(system, n)
    k = cl.num_clusters
    stats["clusters"] = k
    stats["cluster_size"] = size
    stats["cluster_internal_share"] = cl.internal_share(graph.num_arcs)
    stats.setdefault("clusters_run", 0)
    stats.setdefault("cluster_sweeps", 0)
    x = be.put(x0[cl.order])
    # the first round: the clusters of the active vertices and those their out-arcs reach (an
    # active vertex does not improve in its own run, so its run would not queue them)
    act = cl.new_id[np.flatnonzero(active0)]
    lo, hi = lay["xo_off"][act], lay["xo_off"][act + 1]
    lens = hi - lo
    at = np.repeat(lo - np.cumsum(lens) + lens, lens) + np.arange(int(lens.sum()))
    first = np.unique(np.concatenate([lay["label"][act], lay["xo"][at]])).astype(np.int32)
    if first.size == 0 or k == 0:
        return be.put(x0), True
    Q = Queues(be, k, first, max_iter, settings.rounds_per_check)
    delta = _delta(settings, op, combine, weights)
    stats["cluster_delta"] = None if delta == np.inf else delta
    keys0 = np.full((2, k), np.inf)
    keys0[0, first] = -np.inf  # the first round runs them all
    keys = be.put(keys0)
    minkey = be.put(np.array([-np.inf, np.inf, np.inf]))
    runs = be.keep(xp.zeros(k, np.int64))
    sweeps = be.keep(xp.zeros(k, np.int64))
    block = size
    per_sm = settings.blocks_per_sm or max(1, 2048 // block)
    grid = max(1, min(k, per_sm * be.sms))

    def launch(r, queue_in, queue_out):
        be.launch(cluster_round, grid, block, r, queue_in, Q.counts, queue_out, Q.mark, Q.hist,
                  keys, minkey, delta, d["starts"], d["off"], d["mid"], d["src"], val, has, op,
                  combine, x, d["xo_off"], d["xo"], runs, sweeps, tag=("cluster", r % 2))
    r, converged = Q.run(launch, max_iter)
    h = Q.counted(r)
    stats["rounds"] += int(np.count_nonzero(h))
    runs_h, sweeps_h = be.get(runs), be.get(sweeps)
    stats["clusters_run"] += int(runs_h.sum())
    stats["cluster_sweeps"] += int(sweeps_h.sum())
    arcs = int(sweeps_h @ lay["local_arcs"] + runs_h @ lay["external_arcs"])
    stats["arc_updates"] += arcs
    stats["vertex_updates"] += int(runs_h @ np.diff(cl.starts))
    out = xp.empty(n, np.float64)
    out[d["order"]] = x
    return out, converged


def run_on(be, graph, system, *, mode, tol, max_iter, stats, options):
    """:func:`solve` with the ``cluster_settings`` of
    :func:`digraph.dispatch.engines.one_gpu.solve`."""
    return solve(be, graph, system, max_iter=max_iter, stats=stats,
                 settings=options.get("cluster_settings"))
