"""The Google-matrix power iteration on the workers of a Dask cluster (``mode="power"``,
``digraph.run(..., cluster=client)``): the CPU engine's round (:mod:`.cpu`), its sound stop and
its counters, with the graph cut into one vertex range a worker.

Layout.  The vertices are cut into ``k`` consecutive ranges of about equal in-arcs, one a
worker (:func:`~digraph.dispatch.runtime.cuda.ranges.shard_ranges`, the cut of the several-GPU
engines).  Each worker keeps its range's in-arcs (:class:`.cluster_worker.Shard`) under the
graph's fingerprint, with the exchange's lists (:mod:`.cluster_reads`: which entries of ``z``
each other worker reads, the layout of the several-GPU packed exchange), so that a later run on
the same graph and workers reuses them (``stats["dask"]["shards_reused"]``).  The vectors of a
run (the teleport vector ``v``, the scales, the arc factors, the dangling term) go to the
workers at its start.

A round ``k`` (the client runs :func:`digraph.dispatch.driver.power`; one call to every worker
at once a round, :mod:`.cluster_worker` ``round``):

1. the client sends every worker ``c = 1 − Σ_g s_g − σ`` and ``σ = Σ_g σ_g`` (the sums of the
   last pull and of the dangling mass);
2. each worker runs the teleport of its range, ``y += c·v + σ·d``, with ``Σ|y − x|`` and
   ``Σy``, then ``x ← y`` and ``z_own = src_scale ∘ x``;
3. each worker sends the entries of ``z_own`` that each other worker reads straight to it
   (Dask's comms, worker to worker) and waits for those it reads;
4. each worker pulls its range for the next round (the CPU engine's Numba kernel) and answers
   with its sums ``s_g``, ``σ_g``, ``Σx_g`` and the round's ``Σ|y − x|``, ``Σy``.

No vector passes through the client or the scheduler; the answer's ranges come to the client
once, at the end.  The bound is the CPU engine's, ``‖x_{k+1} − π‖₁ ≤ (γ1 ‖x_{k+1} − x_k‖₁ +
‖δ‖₁ + 2 |Σx_k − 1|) / (1 − γ1)``, its rounding term counting the ``k`` partial sums added on
the client.  Anderson acceleration (:class:`.cpu.PowerSettings`) does not run here: its mixes
need global dot products every round.

Faults.  Every call to the workers has a timeout (:attr:`ClusterSettings.round_timeout_s`); a
worker whose connection breaks, or that does not answer in time, or whose peers cannot reach
it, ends the run with :class:`~digraph.errors.WorkerLostError` naming it, never a hang.
"""

import asyncio
import hashlib
import time
import uuid
from dataclasses import dataclass

import numpy as np

from ...settings import current, register
from ....algorithms.base import SumNormalized
from ....errors import InvalidParameterError, WorkerLostError
from ... import driver
from ...convergence import ROUNDING_MARGIN
from ...runtime.cuda.ranges import shard_ranges
from ...systems import linear_factors
from .cpu import _dangling, power_gamma

__all__ = ["ClusterSettings", "DEFAULT", "solve", "prepare", "shard_key"]


@dataclass(frozen=True)
class ClusterSettings:
    """The cluster placement's settings (``digraph.run(..., settings=[...])``).

    Attributes
    ----------
    round_timeout_s : float
        Seconds a round (every worker's answer, and each worker's wait for its peers' entries)
        may take before the run ends with :class:`~digraph.errors.WorkerLostError`.
    setup_timeout_s : float
        Seconds the shards' loading and a run's start may take.
    keep_graphs : int
        Graphs whose shards a worker keeps for later runs (the least recently used beyond are
        dropped).
    vertex_cost : int
        Arcs a vertex counts as in the cut
        (:func:`~digraph.dispatch.runtime.cuda.ranges.shard_ranges`).
    """

    round_timeout_s: float = 30.0
    setup_timeout_s: float = 300.0
    keep_graphs: int = 4
    vertex_cost: int = 0


DEFAULT = register(ClusterSettings())

_U = np.finfo(np.float64).eps / 2


def _plugin(client):
    """Register the workers' plugin (idempotent: the scheduler sets it up once on each worker,
    and on the workers that join later)."""
    from .cluster_worker import PowerShards
    client.register_plugin(PowerShards())


async def _all(client, workers, op, kwargs, timeout, what):
    """Call ``digraph_power_<op>`` on every worker at once (``kwargs(i)``: shard ``i``'s
    arguments) and return their answers in order.  The first call that fails, or whose answer
    says a peer was lost (``{"lost": ...}``), or a call still unanswered after ``timeout`` s
    ends the run at once with :class:`WorkerLostError` naming the worker."""
    tasks = [asyncio.ensure_future(getattr(client.rpc(w), f"digraph_power_{op}")(**kwargs(i)))
             for i, w in enumerate(workers)]
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    pending = set(tasks)
    try:
        while pending:
            done, pending = await asyncio.wait(pending, timeout=max(deadline - loop.time(), 0),
                                               return_when=asyncio.FIRST_COMPLETED)
            if not done:
                late = [w for w, t in zip(workers, tasks) if t in pending]
                raise WorkerLostError(f"{what}: worker {', '.join(late)} did not answer within "
                                      f"{timeout:g} s (lost or stalled)", worker=late[0])
            for w, t in zip(workers, tasks):
                if t in done:
                    _check_answer(t, w, what)
    finally:
        for t in tasks:
            if not t.done():
                t.cancel()
            elif not t.cancelled():
                t.exception()  # read: asyncio logs nothing of a failure already reported
    return [t.result() for t in tasks]


def _check_answer(task, worker, what):
    """Raise :class:`WorkerLostError` when a worker's call failed for a lost connection or
    answered that a peer was lost; re-raise any other error of the call."""
    e = task.exception()
    if e is None:
        got = task.result()
        if isinstance(got, dict) and "lost" in got:
            raise WorkerLostError(f"{what}: {got['lost']}", worker=got["worker"])
        return
    if isinstance(e, WorkerLostError):
        raise WorkerLostError(f"{what}: {e}", worker=e.worker) from None
    if isinstance(e, (OSError, asyncio.TimeoutError)):
        raise WorkerLostError(f"{what}: worker {worker} was lost ({type(e).__name__}: {e})",
                              worker=worker) from None
    raise e


def _call(client, workers, op, kwargs, timeout, what):
    return client.sync(_all, client, workers, op, kwargs, timeout, what)


def _serial(a):
    from distributed.protocol import to_serialize
    return to_serialize(np.ascontiguousarray(a))


def _load(client, graph, workers, key, bounds, settings, stats):
    """Cut ``graph`` into the workers' shards and load them (their in-arcs, from the client)."""
    wire = f"{key}:wire:{uuid.uuid4().hex}"
    off, src = graph.in_offsets, graph.in_sources

    def args(i):
        v0, v1 = int(bounds[i]), int(bounds[i + 1])
        a0, a1 = int(off[v0]), int(off[v1])
        return {"key": key, "wire": wire, "index": i, "bounds": [int(b) for b in bounds],
                "peers": list(workers), "off": _serial(off[v0:v1 + 1] - off[v0]),
                "src": _serial(src[a0:a1]), "keep": settings.keep_graphs,
                "timeout": settings.setup_timeout_s}
    _call(client, workers, "load", args, settings.setup_timeout_s, "loading the shards")
    stats["dask_shard_loads"] = len(workers)


def shard_key(fingerprint, bounds, workers):
    """The key of a graph's shards on the workers: its fingerprint, the cut and the workers."""
    h = hashlib.blake2b(np.asarray(bounds, np.int64).tobytes(), digest_size=8)
    h.update("\n".join(workers).encode())
    return f"{fingerprint}:{len(workers)}:{h.hexdigest()}"


def _vectors(graph, bounds, i, v, src_scale, dst_scale, has, in_coef, dangling):
    """Shard ``i``'s range of a run's vectors, as the workers' start takes them (``in_coef``
    ``"shard"``: the arc factors are the weights the workers' shards hold)."""
    v0, v1 = int(bounds[i]), int(bounds[i + 1])
    off = graph.in_offsets
    coef = in_coef if isinstance(in_coef, str) else (
        _serial(in_coef[int(off[v0]):int(off[v1])]) if has else None)
    out = {"v": _serial(v[v0:v1]), "src_scale": _serial(src_scale[v0:v1]),
           "dst_scale": _serial(dst_scale[v0:v1]), "coef": coef,
           "d": None, "didx": _serial(np.empty(0, np.int64)),
           "dg": _serial(np.empty(0, np.float64))}
    if dangling is not None:
        idx, d, g = dangling
        lo, hi = np.searchsorted(idx, [v0, v1])
        out.update(d=_serial(d[v0:v1]), didx=_serial(idx[lo:hi] - v0), dg=_serial(g[lo:hi]))
    return out


def solve(graph, system, *, client, workers, tol, max_iter, stats, settings=None):
    """Run the power iteration on the cluster's ``workers`` through ``client``; returns (x on the
    client, summing to 1, converged).

    Counters as the CPU engine's (``rounds``, ``dense_rounds``, ``arc_updates``,
    ``vertex_updates``); ``stats["dask"]``: ``workers``, ``addresses``, ``arcs``, ``vertices``,
    ``shards_reused``, ``shard_loads``, ``shard_runs``, ``bytes_between_workers``,
    ``bytes_per_round``, ``exchange_s``, ``idle_share``, ``round_s``, ``time_setup``.

    Raises
    ------
    InvalidParameterError
        A system the power iteration cannot run.
    WorkerLostError
        A worker lost, or not answering within :attr:`ClusterSettings.round_timeout_s`.
    """
    settings = current(DEFAULT) if settings is None else settings
    g1, why = power_gamma(graph, system, dangling_ok=True)
    if why is not None:
        raise InvalidParameterError(f"mode='power' cannot run this system: {why}")
    n, m, k = graph.num_vertices, graph.num_arcs, len(workers)
    stats["gamma"] = float(g1)
    if n == 0:  # the empty answer, exact: no worker needed
        stats["error_bound"] = 0.0
        return np.empty(0, np.float64).view(SumNormalized), True
    t_setup = time.perf_counter()
    _plugin(client)
    # a graph loaded on the workers (digraph.load_distributed) names its own cut and shards
    held_by = getattr(graph, "cluster_shards", None)
    cut = ("dask-power-cut", k, settings.vertex_cost)
    bounds = held_by.bounds if held_by is not None else graph._cache.get(cut)
    if bounds is None:
        bounds = graph._cache[cut] = shard_ranges(graph.in_offsets, k, settings.vertex_cost)
    key = held_by.key if held_by is not None else shard_key(graph.fingerprint(), bounds, workers)
    src_scale, dst_scale, has, arc = linear_factors(graph, system)
    in_coef = np.ascontiguousarray(arc[graph.in_arcs]) if has else arc
    if getattr(system, "shard_weights", False):  # the arc factors are the shards' weights
        has, in_coef = True, "shard"
    b = np.asarray(system.b, np.float64)
    v = b / b.sum() if n else b
    dangling = None
    if getattr(system, "dangling", None) is not None:
        dangling = _dangling(graph, system)
        stats["dangling_vertices"] = int(dangling[0].size)
    run = uuid.uuid4().hex
    stats["dask_workers"] = k
    stats["dask_addresses"] = list(workers)
    stats["dask_arcs"] = [int(graph.in_offsets[bounds[i + 1]] - graph.in_offsets[bounds[i]])
                          for i in range(k)]
    stats["dask_vertices"] = [int(bounds[i + 1] - bounds[i]) for i in range(k)]
    stats["dask_shards_reused"] = True
    stats["dask_shard_loads"] = 0
    stats.setdefault("dense_rounds", 0)
    timeout = settings.round_timeout_s
    # the client waits a little longer than a worker waits for its peers, so that a worker
    # stuck without dying is named by the peers that waited for it
    wait = timeout + max(1.0, 0.1 * timeout)

    def start():
        return _call(client, workers, "start", lambda i: {
            "key": key, "run": run, "timeout": timeout,
            "vectors": _vectors(graph, bounds, i, v, src_scale, dst_scale, has, in_coef,
                                dangling)}, settings.setup_timeout_s, "starting the run")
    try:
        held = _call(client, workers, "has", lambda i: {"key": key}, timeout,
                     "looking for the shards")
        if not all(r["has"] for r in held):
            if held_by is not None:  # their arcs are nowhere else: load_distributed again
                held_by.lost([w for w, r in zip(workers, held) if not r["has"]])
            stats["dask_shards_reused"] = False
            _load(client, graph, workers, key, bounds, settings, stats)
        got = start()
        stats["dask_shard_runs"] = [int(r["runs"]) for r in got]
        stats["dask_time_setup"] = time.perf_counter() - t_setup
        busy0 = np.array([r["busy"] for r in got])
        last = {"got": got, "k": 0, "sent": sum(r["sent"] for r in got),
                "exchange": np.zeros(k), "wall": 0.0, "busy": busy0}

        def step():
            prev = last["got"]
            s = sum(r["s"] for r in prev)
            sd = sum(r["sd"] for r in prev)
            sx = sum(r["sx"] for r in prev)
            c = 1.0 - s - sd
            last["k"] += 1
            t0 = time.perf_counter()
            now = _call(client, workers, "round", lambda i: {
                "key": key, "run": run, "k": last["k"], "c": c, "sd": sd, "timeout": timeout},
                wait, f"round {last['k']}")
            last["wall"] += time.perf_counter() - t0
            last["got"] = now
            last["sent"] += sum(r["sent"] for r in now)
            last["exchange"] += [r["exchange"] for r in now]
            last["busy"] = np.array([r["busy"] for r in now])
            diff = sum(r["diff"] for r in now)
            sy = sum(r["sy"] for r in now)
            floor = 8 * _U * (s + abs(c) + sy) + 12 * _U * sd + k * _U * (s + sd + sx + sy)
            delta = floor + 2 * abs(sx - 1.0) + abs(sy - 1.0)
            return (g1 * diff * (1.0 + ROUNDING_MARGIN) + delta) / (1.0 - g1), delta, diff

        rounds, converged = driver.power(step, g1=g1, tol=tol, max_iter=max_iter, stats=stats)
        parts = _call(client, workers, "answer", lambda i: {"run": run}, wait,
                      "gathering the answer")
    except BaseException as e:
        lost = getattr(e, "worker", None)
        left = [w for w in workers if w != lost]
        try:  # the workers still reachable forget the run (none waits for the lost one)
            client.sync(_all, client, left, "drop", lambda i: {"run": run}, 1.0, "dropping")
        except Exception:
            pass
        raise
    x = np.concatenate([np.asarray(p, np.float64) for p in parts])
    stats["rounds"] += rounds
    stats["dense_rounds"] += rounds
    stats["arc_updates"] += rounds * m
    stats["vertex_updates"] += rounds * n
    r = max(rounds, 1)
    wall, busy = last["wall"], last["busy"] - busy0
    stats["dask_bytes_between_workers"] = int(last["sent"])
    stats["dask_bytes_per_round"] = int(last["sent"]) // (rounds + 1)
    stats["dask_exchange_s"] = [float(e) / r for e in last["exchange"]]
    stats["dask_round_s"] = wall / r
    stats["dask_idle_share"] = [max(0.0, 1.0 - float(bz) / wall) if wall > 0 else 0.0
                                for bz in busy]
    return x.view(SumNormalized), converged


def prepare(req):
    """The placement's entry (:mod:`digraph.dispatch.engines.registry`): a function of no
    argument that solves ``req`` on the plan's cluster."""
    p = req.plan.placement
    return lambda: solve(req.graph, req.system, client=p.client, workers=list(p.workers),
                         tol=req.tol, max_iter=req.max_iter, stats=req.stats)
