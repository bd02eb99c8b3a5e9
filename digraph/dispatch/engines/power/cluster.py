"""The power iteration on the workers of a Dask cluster (``mode="power"``,
``digraph.run(..., cluster=client)``): the CPU engine's round (:mod:`.cpu`), its sound stop and
its counters, with the graph cut into one vertex range a worker; the Google matrix's for
normalised systems, the affine map ``x ← b + A x`` for the others (:mod:`.cluster_maps`).

Layout.  The vertices are cut into ``k`` consecutive ranges of about equal in-arcs, one a
worker (:func:`~digraph.dispatch.runtime.cuda.ranges.shard_ranges`, the cut of the several-GPU
engines).  Each worker keeps its range's in-arcs (:class:`.cluster_state.Shard`) under the
graph's fingerprint, with the exchange's lists (:mod:`.cluster_reads`: which entries of ``z``
each other worker reads, the layout of the several-GPU packed exchange), so that a later run on
the same graph and workers reuses them (``stats["dask"]["shards_reused"]``).  The vectors of a
run (the teleport vector ``v``, the scales, the arc factors, the dangling term) go to the
workers at its start.

A round ``k`` (:mod:`.cluster_worker` ``rounds``):

1. every worker sends every other its sums of round ``k − 1`` (of its last pull ``s_g``,
   ``σ_g``, ``Σx_g`` and of its teleport ``Σ|y − x|``, ``Σy``: a few scalars), and from all of
   them each finds, as the client would, round ``k − 1``'s bound and the stop rule's verdict,
   then ``c = 1 − Σ_g s_g − σ`` and ``σ = Σ_g σ_g``;
2. each worker runs the teleport of its range, ``y += c·v + σ·d``, with ``Σ|y − x|`` and
   ``Σy``, then ``x ← y`` and ``z_own = src_scale ∘ x``;
3. each worker sends the entries of ``z_own`` that each other worker reads straight to it
   (Dask's comms, worker to worker) and waits for those it reads;
4. each worker pulls its range for the next round (the CPU engine's Numba kernel; with
   ``device="cuda"`` the one-GPU CUDA kernels, :mod:`.cluster_gpu_worker`).

The client is not in the rounds' path: one call to every worker runs a batch of rounds
(:attr:`ClusterSettings.batch_s`), and the workers answer with each round's sums, which the
client replays through :func:`digraph.dispatch.driver.power` with the same rule (the same
verdicts, the driver's counters and progress); ``stats["dask"]["batches"]`` counts the calls.
No vector passes through the client or the scheduler; the answer's ranges come to the client
once, at the end (and every ``checkpoint_every`` rounds, when asked).  The affine map's round is
the same with ``v = b``, ``c = 1`` and ``σ = 0``.  The Google matrix's bound is the CPU
engine's, ``‖x_{k+1} − π‖₁ ≤ (γ1 ‖x_{k+1} − x_k‖₁ +
‖δ‖₁ + 2 |Σx_k − 1|) / (1 − γ1)``, its rounding term counting the ``k`` partial sums added on
the client.  Where the plain rate slows, CPU workers mix their ranges by Anderson's
acceleration (:mod:`.cluster_anderson`, the run's :class:`.cpu.PowerSettings`: the pieces of
its dot products ride on each round's all-gather of sums).

Faults.  Every call to the workers has a timeout (:attr:`ClusterSettings.round_timeout_s`); a
worker whose connection breaks, or that does not answer in time, or whose peers cannot reach
it, ends the run with :class:`~digraph.errors.WorkerLostError` naming it, never a hang; with
``checkpoint_every=k`` the run instead restarts on the workers left from the last of the
iterates the client keeps every ``k`` rounds (:mod:`.cluster_checkpoint`). A graph loaded on the
workers (:func:`digraph.load_distributed`) brings its own cut and shards, and is not restarted:
its arcs are nowhere else (:mod:`.cluster_handle`).  Before anything is
sent, each worker's ``memory_limit`` is checked against its shard (:mod:`.cluster_checks`).

The maps (the Google matrix's coefficients and bound) are in :mod:`.cluster_maps`; this module
is the protocol: the cut, the shards, the rounds' calls, the answer.
"""

import time
import uuid
from collections import deque
from dataclasses import dataclass

import numpy as np

from ...settings import current, register
from ....errors import WorkerLostError
from ... import driver
from . import cluster_dual
from .cluster_checkpoint import Checkpoints, restart
from .cluster_calls import batch_size, call, drop, gather, serialized
from .cluster_checks import check_memory
from .cluster_handle import check_map, cut, factors as run_factors, held_by, refuse_restart
from .cluster_handle import shard_key
from .cluster_anderson import anderson_settings, ring_vectors
from .cluster_maps import iteration, scalars

__all__ = ["ClusterSettings", "DEFAULT", "solve", "prepare", "shard_key", "call", "begin",
           "serialized", "drop", "gather", "Session", "record", "run_batch", "batch_size"]


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
    restart_wait_s : float
        With ``checkpoint_every``: seconds a restart waits at most for a lost worker to leave
        the scheduler's list before cutting the graph among the workers left
        (:mod:`.cluster_checkpoint`).
    batch_s : float
        Seconds of rounds the workers run among themselves per call from the client (by the
        rounds' time so far; the first call runs one round): how often the client hears of
        the run (progress, a Ctrl-C, the deadline).  The rounds a run takes do not depend on
        it: the workers stop where the client's driver would.
    """

    round_timeout_s: float = 30.0
    setup_timeout_s: float = 300.0
    keep_graphs: int = 4
    vertex_cost: int = 0
    restart_wait_s: float = 2.0
    batch_s: float = 0.5


DEFAULT = register(ClusterSettings())


def _plugin(client):
    """Register the workers' plugin (idempotent: the scheduler sets it up once on each worker,
    and on the workers that join later)."""
    from .cluster_worker import PowerShards
    client.register_plugin(PowerShards())


def _load(client, graph, workers, key, bounds, settings, stats, lists=None):
    """Cut ``graph`` into the workers' shards and load them (their in-arcs, or the ``lists``
    ``(name, offsets, entries)`` of :func:`begin`, from the client)."""
    wire = f"{key}:wire:{uuid.uuid4().hex}"
    off, src = (graph.in_offsets, graph.in_sources) if lists is None else lists[1:]

    def args(i):
        v0, v1 = int(bounds[i]), int(bounds[i + 1])
        a0, a1 = int(off[v0]), int(off[v1])
        return {"key": key, "wire": wire, "index": i, "bounds": [int(b) for b in bounds],
                "peers": list(workers), "off": serialized(off[v0:v1 + 1] - off[v0]),
                "src": serialized(src[a0:a1]), "keep": settings.keep_graphs,
                "timeout": settings.setup_timeout_s}
    call(client, workers, "load", args, settings.setup_timeout_s, "loading the shards")
    stats["dask_shard_loads"] = stats.get("dask_shard_loads", 0) + len(workers)


def _vectors(graph, bounds, i, it, factors, x0, gpu=False, anderson=None):
    """Shard ``i``'s range of a run's vectors, as the workers' start takes them: the map's own
    (:mod:`.cluster_maps`), the scales, the arc factors (``"shard"``: the weights the workers'
    shards hold) and the start ``x0`` (None: the map's ``x_0``); with ``gpu``, the map's name
    for the run on the worker's GPU (:mod:`.cluster_gpu_worker`); ``anderson``: the mixes'
    settings (:mod:`.cluster_anderson`)."""
    v0, v1 = int(bounds[i]), int(bounds[i + 1])
    off = graph.in_offsets
    src_scale, dst_scale, has, in_coef = factors
    out = {k: None if a is None else serialized(a) for k, a in it.vectors(v0, v1).items()}
    out.update(src_scale=serialized(src_scale[v0:v1]), dst_scale=serialized(dst_scale[v0:v1]),
               coef=in_coef if isinstance(in_coef, str) else (
                   serialized(in_coef[int(off[v0]):int(off[v1])]) if has else None),
               x0=None if x0 is None else serialized(x0[v0:v1]))
    if gpu:
        from .cluster_gpu_worker import pull_settings
        out["gpu"] = pull_settings(it)
    if anderson:
        out["anderson"] = anderson
    return out


class Session:
    """A run started on a set of workers (one cut): the shards' key, the run's id, the workers'
    last answers and what its rounds measured; a restart (:mod:`.cluster_checkpoint`) makes a
    new one."""

    def __init__(self, workers, bounds, key, run, got):
        self.workers, self.bounds, self.key, self.run, self.got = workers, bounds, key, run, got
        self.k = 0
        self.sent = sum(r["sent"] for r in got)
        self.exchange = np.zeros(len(workers))
        self.busy0 = self.busy = np.array([r["busy"] for r in got])
        self.wall = 0.0

    def took(self, now, seconds):
        """Record a round's answers ``now`` (each with ``sent``, ``exchange``, ``busy``) and
        its wall ``seconds`` on the client."""
        self.got = now
        self.wall += seconds
        self.sent += sum(r["sent"] for r in now)
        self.exchange += [r["exchange"] for r in now]
        self.busy = np.array([r["busy"] for r in now])


def begin(client, graph, workers, settings, stats, has_coef, start, op="start", lists=None,
          gpu=False, extra_vectors=0):
    """Cut ``graph`` among ``workers``, check their memory (``has_coef``: the run sends arc
    factors; ``gpu``: their GPUs' too), find or load the shards and start a run: one call ``op`` to every worker with
    ``start(i, bounds)``'s arguments besides the shards' key, the run's id and the timeout.
    Returns a :class:`Session`; the workers' answers to the start (``sent``, ``busy``, ``runs``
    and the engine's own) are its ``got``.  ``lists``: ``(name, offsets, entries)``, per-vertex
    lists the shards hold instead of the in-arcs (k-core's undirected neighbours), cut, keyed
    and counted (``stats["dask"]["arcs"]``) apart (:func:`.cluster_handle.cut`)."""
    k = len(workers)
    # the graph, the cut, the workers; a graph loaded on the workers (load_distributed): its own
    bounds, key = cut(graph, workers, settings.vertex_cost, lists)
    off = graph.in_offsets if lists is None else lists[1]
    # before anything is sent: every worker's memory_limit against its shard's estimate
    stats["dask_shard_bytes"] = check_memory(client, workers, off, bounds, has_coef, gpu,
                                             extra_vectors)
    _plugin(client)
    run = uuid.uuid4().hex
    stats["dask_workers"] = k
    stats["dask_addresses"] = list(workers)
    stats["dask_arcs"] = [int(off[bounds[i + 1]] - off[bounds[i]]) for i in range(k)]
    stats["dask_vertices"] = [int(bounds[i + 1] - bounds[i]) for i in range(k)]
    stats.setdefault("dask_shards_reused", True)
    stats.setdefault("dask_shard_loads", 0)
    try:
        held = call(client, workers, "has", lambda i: {"key": key}, settings.round_timeout_s,
                    "looking for the shards")
        if not all(r["has"] for r in held):
            if held_by(graph) is not None:  # their arcs are nowhere else: load_distributed again
                held_by(graph).lost([w for w, r in zip(workers, held) if not r["has"]])
            stats["dask_shards_reused"] = False
            _load(client, graph, workers, key, bounds, settings, stats, lists)
        got = call(client, workers, op, lambda i: {
            "key": key, "run": run, "timeout": settings.round_timeout_s, **start(i, bounds)},
            settings.setup_timeout_s, "starting the run")
    except BaseException as e:
        drop(client, workers, run, getattr(e, "worker", None))
        raise
    stats["dask_shard_runs"] = [int(r["runs"]) for r in got]
    return Session(list(workers), bounds, key, run, got)


def _begin(client, graph, it, factors, workers, x0, settings, stats, gpu=False, anderson=None):
    """:func:`begin` of the power iteration from ``x0`` (None: the map's ``x_0``)."""
    return begin(client, graph, workers, settings, stats, factors[2], lambda i, bounds: {
        "vectors": _vectors(graph, bounds, i, it, factors, x0, gpu, anderson)}, gpu=gpu,
        extra_vectors=ring_vectors(anderson))


def run_batch(client, s, op, args, n, done, settings):
    """Rounds ``done + 1`` to ``done + n`` of session ``s``: one call ``op`` to every worker
    (``args``: the call's own arguments besides the shards' key, the run, the first round and
    ``n``), which runs the rounds among the workers and answers each round's sums (fewer rounds
    where the workers' stop rule ends the run first).  Returns the rounds' answers (each a list
    in shard order), recorded in ``s``."""
    timeout = settings.round_timeout_s
    # the client waits a little longer than a worker waits for its peers, so that a worker
    # stuck without dying is named by the peers that waited for it; and n rounds at a hundred
    # times the rounds so far (about 100 batch_s: a busy machine's slow rounds are not taken
    # for a loss; a worker lost mid-batch is named by its peers within the timeout)
    est = s.wall / s.k if s.k else 0.0
    wait = timeout + max(1.0, 0.1 * timeout) + 100.0 * n * est
    t0 = time.perf_counter()
    got = call(client, s.workers, op, lambda i: {
        "key": s.key, "run": s.run, "k": s.k + 1, "n": n, "timeout": timeout, **args},
        wait, f"rounds {done + 1}-{done + n}")
    ran = {len(g["rounds"]) for g in got}
    if len(ran) != 1:  # the workers read the same sums with the same rule: never
        raise RuntimeError(f"the workers ran {sorted(ran)} rounds of one batch")
    m = ran.pop()
    seconds = (time.perf_counter() - t0) / max(m, 1)
    out = []
    for i in range(m):
        now = [g["rounds"][i] for g in got]
        s.k += 1
        s.took(now, seconds)
        out.append(now)
    return out


def _batch(client, it, s, done, n, last, tol, settings, mixes):
    """The power iteration's :func:`run_batch` (``last``: the bound, rounding floor and
    difference of round ``done``); returns each round's ``(bound, delta, diff)``, found from the
    workers' sums by the rule they used (so the driver stops where they stopped).  ``mixes``
    (a dict) gets Anderson's counts from the first worker's answers."""
    prev, rule = s.got, it.rule()
    rounds = run_batch(client, s, "rounds", {
        "prev": [scalars(r) for r in prev], "last_diff": float(last[2]),
        "last_delta": float(last[1]), "rule": rule.as_dict(), "tol": float(tol)}, n, done,
        settings)
    out = []
    for now in rounds:
        out.append(rule.bound(prev, now))
        prev = now
        first = now[0]
        mixes["mixes"] += bool(first.get("mixed"))
        mixes["on"] = mixes["on"] or bool(first.get("recording"))
        mixes["restarts"] = first.get("restarts", mixes["restarts"])
    return out


def solve(graph, system, *, client, workers, tol, max_iter, stats, settings=None,
          checkpoint_every=None, device="cpu"):
    """Run the power iteration on the cluster's ``workers`` through ``client``; returns (x on the
    client, converged): for a normalised system ``x`` sums to 1 up to the bound's terms.
    ``device="cuda"``: each worker runs its rounds on its GPU (:mod:`.cluster_gpu_worker`).

    Counters as the CPU engine's (``rounds``, ``dense_rounds``, ``arc_updates``,
    ``vertex_updates``; rounds redone after a restart count again); ``stats["dask"]``:
    ``workers``, ``addresses``, ``arcs``, ``vertices`` (of the last cut, after a restart),
    ``shards_reused``, ``shard_loads``, ``shard_runs``, ``shard_bytes`` (each shard's estimated
    bytes, :func:`.cluster_checks.shard_bytes`), ``bytes_between_workers``,
    ``bytes_per_round``, ``exchange_s``, ``idle_share``, ``round_s``, ``batches``,
    ``time_setup``; with ``checkpoint_every`` (:mod:`.cluster_checkpoint`) ``checkpoint_every``,
    ``checkpoints``, ``checkpoint_bytes``, ``checkpoint_s``, ``restarts``, ``lost_workers``,
    ``rounds_redone``.

    Raises
    ------
    InvalidParameterError
        A system the power iteration cannot run; a worker whose ``memory_limit`` is below its
        shard's estimated bytes (:func:`.cluster_checks.check_memory`, before anything is sent).
    WorkerLostError
        A worker lost, or not answering within :attr:`ClusterSettings.round_timeout_s`; with
        ``checkpoint_every``, only once no worker is left to restart on, or at once for a graph
        loaded on the workers (:func:`.cluster_handle.refuse_restart`).
    """
    settings = current(DEFAULT) if settings is None else settings
    check_map(graph, system)
    it = iteration(graph, system, stats)
    n, m = graph.num_vertices, graph.num_arcs
    if n == 0:  # the empty answer, exact: no worker needed
        return it.empty(stats), True
    t_setup = time.perf_counter()
    factors = run_factors(graph, system)
    stats.setdefault("dense_rounds", 0)
    ckpt = None if checkpoint_every is None else Checkpoints(checkpoint_every, it.start)
    aa = anderson_settings(it, device, tol)
    mixes = {"mixes": 0, "on": False, "restarts": 0}

    def begin(live, x0):
        return _begin(client, graph, it, factors, live, x0, settings, stats, device != "cpu",
                      aa)
    st = {"s": begin(list(workers), None), "done": 0, "sent": 0, "wall": 0.0,
          "last": (np.inf, 0.0, np.inf), "left": max_iter, "batches": 0}
    stats["dask_time_setup"] = time.perf_counter() - t_setup

    def recover(e):
        """After ``e`` (a lost worker): a new session from the last checkpoint, or ``e``."""
        s = st["s"]
        drop(client, s.workers, s.run, e.worker)
        if ckpt is None:
            raise e
        refuse_restart(graph, e)  # a graph loaded on the workers cannot be cut again
        st["sent"] += s.sent
        st["wall"] += s.wall
        st["s"], st["done"] = restart(ckpt, e, s.workers, client,
                                      lambda live, x0: begin(live, it.resume(x0)),
                                      settings.restart_wait_s, st["done"])

    buf = deque()  # rounds of the last batch not yet handed to the driver

    def step():
        while True:
            try:
                if not buf:
                    n = batch_size(st["s"], settings, st["left"], ckpt, st["done"])
                    got = _batch(client, it, st["s"], st["done"], n, st["last"], tol,
                                 settings, mixes)
                    st["batches"] += 1
                    end = st["done"] + len(got)  # batches end at checkpoints
                    if ckpt is not None and got and ckpt.due(end, got[-1][0], tol):
                        t0 = time.perf_counter()
                        x = gather(client, st["s"], "snapshot", settings, "taking a checkpoint")
                        ckpt.keep([x], end, time.perf_counter() - t0)
                    buf.extend(got)
                out = buf.popleft()
                st["done"] += 1
                st["left"] -= 1
                st["last"] = out
                return out
            except WorkerLostError as e:
                buf.clear()
                recover(e)

    rounds = 0
    try:
        if it.on_workers is not None:  # a handle: the affine map's dual weights found there
            try:
                zmax = cluster_dual.find(client, graph, st["s"], it.on_workers, factors[2],
                                         settings.round_timeout_s, stats, call,
                                         ring_vectors(aa))
            except WorkerLostError as e:  # no restart on a handle: the others forget the run
                drop(client, st["s"].workers, st["s"].run, e.worker)
                raise
            if zmax is not None:
                it.take_dual(zmax, stats)
        while True:
            st["left"] = max_iter - rounds
            done, converged = driver.power(step, g1=it.g1, tol=tol, max_iter=max_iter - rounds,
                                           stats=stats)
            rounds += done
            if buf:  # the workers stop where the driver does (one rule, one set of sums)
                raise RuntimeError(f"the workers ran {len(buf)} rounds past the driver's stop: "
                                   "their iterate is not the one the bound is of")
            try:
                x = gather(client, st["s"], "answer", settings, "gathering the answer")
                break
            except WorkerLostError as e:  # restarted: the rounds since the checkpoint again
                recover(e)
    except BaseException as e:
        if not isinstance(e, WorkerLostError):
            drop(client, st["s"].workers, st["s"].run)
        raise
    s = st["s"]
    stats["rounds"] += rounds
    stats["dense_rounds"] += rounds
    stats["arc_updates"] += rounds * m
    stats["vertex_updates"] += rounds * n
    stats["power_anderson"] = aa["memory"] if aa and mixes["on"] else 0
    stats["anderson_mixes"], stats["anderson_restarts"] = mixes["mixes"], mixes["restarts"]
    if ckpt is not None:
        ckpt.record(stats)
    record(stats, s, rounds, st["sent"], st["wall"])
    stats["dask_batches"] = st["batches"]
    return it.answer(x), converged


def record(stats, s, rounds, sent=0, wall=0.0):
    """The exchange's keys of ``stats`` (``stats["dask"]`` once grouped) after ``rounds``
    rounds ending in session ``s`` (``sent`` bytes and ``wall`` seconds of earlier sessions,
    lost to restarts, added)."""
    sent, wall, busy = sent + s.sent, wall + s.wall, s.busy - s.busy0
    stats["dask_bytes_between_workers"] = int(sent)
    stats["dask_bytes_per_round"] = int(sent) // (rounds + 1)
    stats["dask_exchange_s"] = [float(e) / max(s.k, 1) for e in s.exchange]
    stats["dask_round_s"] = wall / max(rounds, 1)
    stats["dask_idle_share"] = [max(0.0, 1.0 - float(bz) / s.wall) if s.wall > 0 else 0.0
                                for bz in busy]


def prepare(req):
    """The placement's entry (:mod:`digraph.dispatch.engines.registry`): a function of no
    argument that solves ``req`` on the plan's cluster."""
    p = req.plan.placement
    return lambda: solve(req.graph, req.system, client=p.client, workers=list(p.workers),
                         tol=req.tol, max_iter=req.max_iter, stats=req.stats,
                         checkpoint_every=req.option("checkpoint_every"), device=p.device)
