"""Several workers over one PathSet: the dispatcher of the multi-GPU engine, run here
with simulated CPU workers.

DiGraph §3.2.2: SCC-vertices are dispatched layer by layer; the giant SCC-vertex's partitions are
spread over every processor; masters live with one owner and mirrors elsewhere send their
accumulated updates to the owner in batches.  This module holds the parts that do not depend on
what a worker is (a GPU, a CPU thread, a process of a distributed engine):

* :func:`plan` — which worker runs each partition, and which worker owns each vertex's master;
* :class:`Exchange` — replica exchange: per round, each worker's changes to vertices it does not
  own, batched by owner and sorted by vertex id, then the owners' fresh values pulled back;
* :func:`rebalance` — stealing: a worker walking much more than the mean hands a partition of a
  split SCC-vertex to the least loaded one;
* :func:`solve` — the round loop (DAG layers from the lowest unfinished one; a layer finishes
  when a round that walked it after every lower layer had finished sent nothing) with simulated
  workers.

A worker is anything with ``walk(parts, x, threshold) -> (arcs sent, arcs read)`` over its own
copy ``x`` of the state; :class:`CpuWorker` walks its paths with a Numba kernel.  A GPU worker
(one CUDA context per device, a host thread each) or a Dask actor has the same two calls, so the
dispatcher does not change when the workers do.

Counters: the usual ones, plus ``bytes_between_gpus`` (12 bytes per (vertex, value) message, 8 per
value pulled back, and the mirrors of stolen partitions), ``exchange_messages``, ``steals``,
``path_sweeps``, per-worker ``worker_arcs`` and ``worker_idle_share`` (1 − a worker's arcs / the
busiest worker's, averaged over rounds).
"""

import math
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
from numba import njit

from ...settings import current, executor, register
from ....errors import InvalidParameterError
from ....smx.cpu.bsp import relax
from ....smx.cpu.paths_setup import path_arc_coefficients
from ... import driver
from ...convergence import certified_bound, linear_contraction, pending_budget
from .cpu_schedule import Schedule
from ...systems import linear_factors, monotone_arrays, monotone_start

__all__ = ["plan", "Exchange", "rebalance", "solve", "CpuWorker", "MultiSettings", "DEFAULT",
           "prepare"]


@dataclass(frozen=True)
class MultiSettings:
    """How the multi-worker dispatcher balances its workers (``solve(..., settings=)``).

    Attributes
    ----------
    steal_ratio : float
        A worker walking more than this times the mean arcs of a round gives a partition of a
        split SCC-vertex away (:func:`rebalance`).  Not measured: chosen by hand, and no
        benchmark varies it (``solve(steal=False)`` turns stealing off; tests/dispatch/test_multi.py
        checks that stealing does not change the answer).
    """

    steal_ratio: float = 1.5


DEFAULT = register(MultiSettings())


# ---------------------------------------------------------------------------- planning


def plan(ps, workers):
    """(owner of each partition, owner of each vertex's master, split flag of each partition).

    Layers in order.  A partition that is one piece of a split SCC-vertex (the giant) is spread:
    longest first onto the least loaded worker.  A partition that holds whole SCC-vertices goes to
    the worker that writes most of the vertices its arcs read (its direct predecessors, fewer
    transfers), the least loaded one on a tie or when none does.  A vertex's master lives with the
    worker whose partitions hold most of its in-arcs (its writers).
    """
    if workers < 1:
        raise InvalidParameterError(f"workers must be >= 1, got {workers}")
    off = np.asarray(ps.partition_offsets)
    K = off.size - 1
    po = np.asarray(ps.path_offsets)
    n = ps.num_vertices
    owner = np.zeros(K, np.int64)
    if K == 0:
        return owner, np.zeros(n, np.int64), np.zeros(0, bool)
    split = ~Schedule(ps).local  # pieces of an SCC-vertex spread over several partitions
    layer = np.asarray(ps.path_layer)[off[:-1]]
    arc_lo, arc_hi = po[off[:-1]] - off[:-1], po[off[1:]] - off[1:]  # arcs of each partition
    arcs = arc_hi - arc_lo
    src, dst = ps.arc_ends()
    writer = np.full(n, -1, np.int64)
    load = np.zeros(workers, np.int64)
    for L in np.unique(layer):
        ks = np.flatnonzero(layer == L)
        load_layer = np.zeros(workers, np.int64)
        for k in sorted(ks, key=lambda k: (not split[k], -arcs[k])):
            wr = writer[src[arc_lo[k]:arc_hi[k]]] if not split[k] else writer[:0]
            wr = wr[wr >= 0]
            if wr.size:  # the worker writing most of what the partition reads
                votes = np.bincount(wr, minlength=workers)
                best = np.flatnonzero(votes == votes.max())
                w = int(best[np.argmin(load_layer[best])])
            else:  # a piece of a split SCC-vertex, or nothing written yet: least loaded
                w = int(np.argmin(load_layer * workers + load))
            owner[k] = w
            load_layer[w] += arcs[k]
            load[w] += arcs[k]
            writer[dst[arc_lo[k]:arc_hi[k]]] = w
    # master: the worker holding most in-arcs of the vertex
    counts = np.zeros((n, workers), np.int64)
    np.add.at(counts, (dst, np.repeat(owner, arcs)), 1)
    vowner = np.argmax(counts, axis=1)
    return owner, vowner, split


class Exchange:
    """Replica exchange between workers that each keep a full copy of the state.

    After a round, :meth:`push` gathers every worker's changes to vertices it does not own
    (``x_w − base``, or the improved values for min/max systems), batched per owner and sorted by
    vertex id, and applies them to the masters; :meth:`pull` then refreshes each worker's mirrors
    (the vertices its partitions read) from the masters.
    """

    def __init__(self, vowner, reads, workers, combine):
        self.vowner = vowner
        self.reads = reads  # per worker: vertex ids its partitions read
        self.workers = workers
        self.combine = combine  # None (sum), 0 (min) or 1 (max)
        self.bytes = 0
        self.messages = 0
        self.batches = []

    def push(self, master, copies, base):
        """Apply the workers' changes to the masters; returns the batches sent (for tests)."""
        self.batches = []
        for w, xw in enumerate(copies):
            changed = np.flatnonzero(xw != base)
            for o in range(self.workers):
                vs = changed[self.vowner[changed] == o]  # sorted: flatnonzero is ascending
                if vs.size == 0:
                    continue
                if self.combine is None:
                    vals = xw[vs] - base[vs]
                    np.add.at(master, vs, vals)
                elif self.combine == 0:
                    vals = xw[vs]
                    np.minimum.at(master, vs, vals)
                else:
                    vals = xw[vs]
                    np.maximum.at(master, vs, vals)
                self.batches.append((w, o, vs))
                if o != w:  # a worker's own masters cost no transfer
                    self.bytes += 12 * vs.size
                    self.messages += 1

    def pull(self, master, copies):
        """Every worker takes the masters' values (the mirrors it reads cost 8 bytes each)."""
        for w, xw in enumerate(copies):
            xw[:] = master
            r = self.reads[w]
            self.bytes += 8 * int(np.count_nonzero(self.vowner[r] != w))


def rebalance(owner, split, walked, stats, steal_ratio=None):
    """Stealing: when the busiest worker walked more than ``steal_ratio`` (default
    ``DEFAULT.steal_ratio``) × the mean arcs, its last partition of a split SCC-vertex moves to
    the least loaded worker.  Returns (partition, from, to), or None when nothing moved."""
    steal_ratio = current(DEFAULT).steal_ratio if steal_ratio is None else steal_ratio
    W = walked.size
    if W < 2 or walked.max() <= steal_ratio * max(walked.mean(), 1.0):
        return None
    src, dst = int(np.argmax(walked)), int(np.argmin(walked))
    cand = np.flatnonzero((owner == src) & split)
    if cand.size == 0:
        return None
    owner[cand[-1]] = dst
    stats["steals"] = stats.get("steals", 0) + 1
    return int(cand[-1]), src, dst


# ---------------------------------------------------------------------------- workers


@njit(cache=True, nogil=True)
def _walk_linear(parts, partition_offsets, path_offsets, path_vertices, coef, s, x, theta):
    sent = 0
    seen = 0
    for q in parts:
        for p in range(partition_offsets[q], partition_offsets[q + 1]):
            a = path_offsets[p]
            base = a - p
            for i in range(path_offsets[p + 1] - 1 - a):
                u = path_vertices[a + i]
                j = base + i
                xu = x[u]  # read once: a self-loop's target is its source
                d = coef[j] * (xu - s[j])
                seen += 1
                if abs(d) > theta:
                    x[path_vertices[a + i + 1]] += d
                    s[j] = xu
                    sent += 1
    return sent, seen


@njit(cache=True, nogil=True)
def _walk_monotone(parts, partition_offsets, path_offsets, path_vertices, value, has_value, op,
                   combine, s, x):
    sent = 0
    seen = 0
    for q in parts:
        for p in range(partition_offsets[q], partition_offsets[q + 1]):
            a = path_offsets[p]
            base = a - p
            for i in range(path_offsets[p + 1] - 1 - a):
                u = path_vertices[a + i]
                j = base + i
                seen += 1
                xu = x[u]
                if xu != s[j]:
                    s[j] = xu
                    sent += 1
                    v = path_vertices[a + i + 1]
                    c = relax(op, xu, value[j] if has_value else 1.0)
                    if (combine == 0 and c < x[v]) or (combine == 1 and c > x[v]):
                        x[v] = c
    return sent, seen


class CpuWorker:
    """A simulated worker: walks its partitions on its own copy of the state (Numba)."""

    def __init__(self, ps, family, arrays):
        self.ps = ps
        self.family = family
        self.arrays = arrays

    def adopt(self, part, other):
        """Take over partition ``part`` from worker ``other`` (the CPU workers share the mirrors:
        nothing moves)."""
        return 0

    def walk(self, parts, x, theta):
        ps = self.ps
        a = (parts, ps.partition_offsets, ps.path_offsets, ps.path_vertices)
        if self.family == "linear":
            coef, s = self.arrays
            return _walk_linear(*a, coef, s, x, theta)
        value, has, op, combine, s = self.arrays
        return _walk_monotone(*a, value, has, op, combine, s, x)


# ---------------------------------------------------------------------------- solve


def solve(graph, system, *, pathset, workers=2, tol=1e-6, max_iter=10_000, stats, steal=True,
          make_worker=None, concurrent=True, settings=None):
    """Run ``system`` on ``workers`` simulated workers; returns (state, converged).

    Linear and monotone systems (k-core's dependencies are undirected: run it on one worker).
    The answer equals the single-worker one: exactly for min/max systems, within ``tol`` (both
    certified) for sums.  ``make_worker(w, pathset, family, arrays)`` builds worker ``w``
    (default: :class:`CpuWorker`; :class:`digraph.dispatch.engines.path.gpus_worker.GpuWorker`
    puts one on a GPU).
    With ``concurrent`` the workers of a round run in host threads, one each (the walks release
    the GIL; a GPU worker enters its own device's context).  ``steal``: move partitions of an
    overloaded worker (:func:`rebalance`); ``settings``: a :class:`MultiSettings` (default
    :data:`DEFAULT`).
    """
    settings = current(DEFAULT) if settings is None else settings
    ps = pathset
    if ps.num_arcs != graph.num_arcs or ps.num_vertices != graph.num_vertices:
        raise InvalidParameterError("the PathSet was built from another graph")
    fam = system.family
    if fam not in ("linear", "monotone"):
        raise InvalidParameterError(f"the multi-worker dispatcher runs linear and monotone "
                                    f"systems, not {fam!r}")
    n, m = graph.num_vertices, graph.num_arcs
    owner, vowner, split = plan(ps, workers)
    if fam == "linear":
        gammas = linear_contraction(graph, system)
        src, dst, has, arc = linear_factors(graph, system)
        coef = path_arc_coefficients(ps.path_offsets, ps.path_vertices, ps.path_arc_ids, src, arc,
                                     has, dst)
        s = np.zeros(m, np.float64)
        master = np.ascontiguousarray(system.b, dtype=np.float64).copy()
        arrays = (coef, s)
        combine = None
    else:
        op, combine, has, value = monotone_arrays(graph, system)
        master, active = monotone_start(system, n)
        identity = np.inf if combine == 0 else -np.inf
        src_of_arc = ps.arc_ends()[0]
        s = np.where(active[src_of_arc], identity, master[src_of_arc])
        arrays = (value[ps.path_arc_ids] if has else value, has, op, combine, s)
    if make_worker is None:
        def make_worker(w, ps, fam, arrays):
            return CpuWorker(ps, fam, arrays)
    pool = [make_worker(w, ps, fam, arrays) for w in range(workers)]
    # the CUDA simulator's kernels cannot be launched from several host threads at once
    safe = all(getattr(w, "threadsafe", True) for w in pool)
    threads = executor(workers) if concurrent and workers > 1 and safe \
        else None
    try:
        return _rounds(graph, system, ps, fam, workers, pool, threads, owner, vowner, split,
                       arrays, combine, master, gammas if fam == "linear" else None, tol,
                       max_iter, stats, settings.steal_ratio if steal else None, n, m)
    finally:
        if threads:
            threads.shutdown()


def _rounds(graph, system, ps, fam, workers, pool, threads, owner, vowner, split, arrays,
            combine, master, gammas, tol, max_iter, stats, steal_ratio, n, m):
    """The round loop of :func:`solve` (``steal_ratio`` None: no stealing)."""
    off = np.asarray(ps.partition_offsets)
    po = np.asarray(ps.path_offsets)
    K = off.size - 1
    part_layer = np.asarray(ps.path_layer)[off[:-1]] if K else np.zeros(0, np.int64)
    num_layers = int(part_layer.max()) + 1 if K else 0
    arc_lo, arc_hi = po[off[:-1]] - off[:-1], po[off[1:]] - off[1:]
    src = ps.arc_ends()[0]

    def reads_of(w):
        """The vertices worker w's partitions read: the sources of their arcs."""
        ks = np.flatnonzero(owner == w)
        if ks.size == 0:
            return np.zeros(0, np.int64)
        return np.unique(np.concatenate([src[arc_lo[k]:arc_hi[k]] for k in ks]))

    exchange = Exchange(vowner, [reads_of(w) for w in range(workers)], workers, combine)
    copies = [master.copy() for _ in range(workers)]
    idle = np.zeros(workers)
    worker_arcs = np.zeros(workers, np.int64)
    stats.setdefault("arcs_examined", 0)
    rvec = np.empty(n, np.float64)
    st = SimpleNamespace(lo=0, th=0.0)

    def run_worker(w):
        """Worker w's round: its partitions of the unfinished layers, layer by layer, on its own
        copy (workers touch disjoint arcs and their own copies: no race)."""
        sent_w = np.zeros(num_layers, np.int64)
        seen_w = 0
        parts = np.flatnonzero((owner == w) & (part_layer >= st.lo))
        for L in np.unique(part_layer[parts]):
            sent, seen = pool[w].walk(parts[part_layer[parts] == L], copies[w], st.th)
            sent_w[L] += sent
            seen_w += seen
        return sent_w, seen_w

    def step():
        """One round of every worker, then the exchange; the layers that sent nothing are done."""
        nonlocal worker_arcs, idle
        base = master.copy()
        if threads and workers > 1:
            results = list(threads.map(run_worker, range(workers)))
        else:
            results = [run_worker(w) for w in range(workers)]
        sent_layer = np.sum([r[0] for r in results], axis=0)
        walked = np.array([r[1] for r in results], np.int64)
        exchange.push(master, copies, base)
        exchange.pull(master, copies)
        total = int(sent_layer.sum())
        stats["arc_updates"] += total
        stats["vertex_updates"] += total
        stats["arcs_examined"] += int(walked.sum())
        worker_arcs += walked
        if walked.max() > 0:
            idle += 1.0 - walked / walked.max()
        while st.lo < num_layers and sent_layer[st.lo] == 0:
            st.lo += 1
        moved = (rebalance(owner, split & (part_layer >= st.lo), walked, stats, steal_ratio)
                 if steal_ratio is not None else None)
        if moved is not None:
            k, a, b = moved
            exchange.bytes += pool[b].adopt(k, pool[a])  # the partition's mirrors move along
            exchange.reads = [reads_of(w) for w in range(workers)]

    rounds = driver.Rounds(lambda: num_layers - st.lo, step)

    def sweep(factor):
        """Rounds from the first layer until every layer sent nothing or the rounds ran out."""
        st.lo = 0
        if fam == "linear":
            st.th = factor * pending_budget(tol, float(master.sum()), n, gammas,
                                            system.normalize) / max(m, 1)
        return not driver.worklist(rounds, max_iter=max_iter, stats=stats)

    if fam == "monotone":
        converged = not sweep(1.0)
    else:
        end, (bound, r1, _) = driver.budget_sweeps(
            SimpleNamespace(sweep=sweep, floored=lambda certificate: False,
                            certify=lambda: certified_bound(graph, system, master, gammas, rvec)),
            tol=tol, max_iter=max_iter, max_sweeps=math.inf, then=None, stats=stats)
        converged = end == "converged"
    if fam == "linear":
        stats["error_bound"] = float(bound)
        stats["residual_l1"] = float(r1)
    stats["workers"] = workers
    stats["bytes_between_gpus"] = stats.get("bytes_between_gpus", 0) + int(exchange.bytes)
    stats["exchange_messages"] = int(exchange.messages)
    stats["worker_arcs"] = worker_arcs.tolist()
    stats["worker_idle_share"] = (idle / max(stats["rounds"], 1)).tolist()
    return master, converged


def prepare(req, devices):
    """The placement's entry (:mod:`digraph.dispatch.engines.registry`): the sharded engine's
    ``vertex-async`` kernels warm (the workers' finishing pushes), the PathSet
    (``time_preprocess``), then a function that solves ``req`` with one worker a GPU."""
    import time
    from ..common import pathset, solve_dual_or
    from ..push.gpus import warm_up
    from .gpus_worker import gpu_worker_factory
    warm_up(req, devices, "vertex-async")
    t0 = time.perf_counter()
    ps = pathset(req.graph, req.option("cache"), req.option("preprocess"))
    req.stats["time_preprocess"] += time.perf_counter() - t0
    req.stats["gpus"] = len(devices)
    return lambda: solve_dual_or(solve, req.graph, req.system, req.tol, req.max_iter, req.stats,
                                 dict(pathset=ps, workers=len(devices),
                                      make_worker=gpu_worker_factory(devices, req.stats)))
