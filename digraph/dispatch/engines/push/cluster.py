"""Bulk-synchronous min/max rounds on the workers of a Dask cluster (``mode="bsp"``,
``digraph.run(g, "sssp", source=s, cluster=client)``): the fixed point of a
:class:`~digraph.algorithms.base.MonotoneSystem`,

    x_v = combine(x_v, combine_{u→v, u active} relax(x_u, a_uv)),

relaxed in Jacobi rounds from ``init`` and its frontier until no value changes — for SSSP the
Bellman–Ford–Moore label correction (``relax = plus``, ``combine = min``) in the vertex-centric
BSP form of Pregel (Malewicz et al., SIGMOD 2010): a superstep relaxes the arcs of the vertices
that changed in the last one.  The answer is the exact fixed point the CPU engine's ``bsp``
(:mod:`.cpu_bsp`) reaches, round for round.

Layout.  The power iteration's (:mod:`digraph.dispatch.engines.power.cluster`): the vertices
cut into one range a worker of about equal in-arcs, each worker's shard (its range's in-arcs,
the entries of the other ranges it reads and which of its own each other worker reads) kept
under the graph's fingerprint — the same shards serve PageRank and SSSP runs on one graph.  A
run sends each worker its range of ``init``, of the initial frontier and of the arc values in
the order of its in-arcs (:mod:`.cluster_worker`, ``bsp_start``), and the workers exchange the
frontier's entries once.

A round (:mod:`.cluster_worker`; one call from the client to every worker runs a batch of them,
:attr:`~digraph.dispatch.engines.power.cluster.ClusterSettings.batch_s`, and the client replays
their answers through :func:`digraph.dispatch.driver.worklist`):

1. each worker pulls its range, reading its compact vector: row ``v`` takes the best of its
   value and ``relax(z_u, a_uv)`` over its in-arcs whose source ``u`` is active
   (:func:`digraph.smx.cpu.ranges.monotone_range_round`; a worker none of whose entries is
   active skips the pull);
2. it sends each other worker the entries that worker reads and that changed (12 bytes an
   entry: the value and its place in the reader's list), straight to it, and takes the changed
   entries it reads; every other entry of theirs becomes inactive;
3. it tells every other worker how many of its rows improved (and hears theirs): where none
   did anywhere, the batch ends; each round's rows improved and arcs relaxed go back to the
   client with the batch.

The run stops when no row improved anywhere (the frontier is empty), or at ``max_iter``
rounds.  Counters as the CPU ``bsp``'s push rounds: ``rounds``,
``vertex_updates`` (rows improved), ``arc_updates`` (arcs whose source was active),
``sparse_rounds``; the ``dask`` group as the power iteration's.  A round moves 12 bytes for each
(changed vertex, other worker reading it) pair: nothing where the frontier is local.

Faults and restarts as the power iteration's: every call has a timeout, a lost worker ends the
run with :class:`~digraph.errors.WorkerLostError` naming it; with ``checkpoint_every=k`` the
client gathers the values every ``k`` rounds, and after a loss the run cuts the graph again
among the workers left and resumes from the last checkpoint with every vertex whose value
differs from ``init`` active, besides the initial frontier: each of those relaxed its value
already or is in the frontier, and a relaxation applied twice changes nothing (min and max are
idempotent), so the answer is the same; only ``arc_updates`` counts the arcs relaxed again.
"""

import time
from collections import deque

import numpy as np

from ... import driver
from ...settings import current
from ...systems import monotone_arrays, monotone_start
from ....errors import InvalidParameterError, WorkerLostError
from ..power.cluster import DEFAULT, batch_size, begin, drop, gather, record, run_batch
from ..power.cluster import serialized
from ..power.cluster_checkpoint import Checkpoints, restart
from ..power.cluster_handle import refuse_restart

__all__ = ["solve", "prepare", "drive"]


def _plugin(client):
    """Register the workers' plugin of the rounds (the power iteration's, which holds the
    shards, is registered by :func:`~digraph.dispatch.engines.power.cluster.begin`)."""
    from .cluster_worker import BspRounds
    client.register_plugin(BspRounds())


class _Rounds:
    """The rounds of one run for :func:`digraph.dispatch.driver.worklist` (``active``,
    ``step``), its sessions (a restart makes a new one) and its checkpoints."""

    def __init__(self, client, graph, system, workers, settings, stats, checkpoint_every):
        self.client, self.graph, self.settings, self.stats = client, graph, settings, stats
        self.op, self.combine, self.has, value = monotone_arrays(graph, system)
        if getattr(system, "shard_weights", False):  # the arc values are the shards' weights
            self.has, self.coef = True, "shard"
        else:
            self.coef = np.ascontiguousarray(value[graph.in_arcs]) if self.has else None
        self.x0, self.act0 = monotone_start(system, graph.num_vertices)
        self.ckpt = None if checkpoint_every is None else Checkpoints(checkpoint_every, self.x0)
        self._counters()
        _plugin(client)
        self.s = self.begin(list(workers), None)

    def _counters(self):
        """The run's rounds, bytes and seconds so far (none), its batch's rounds not yet
        handed to the driver and its batches (``max_iter``: set by :func:`drive`)."""
        self.done, self.sent, self.wall = 0, 0, 0.0
        self.buf, self.batches, self.max_iter = deque(), 0, None

    def begin(self, workers, x):
        """A session on ``workers`` from the values ``x`` (None: ``init`` and its frontier;
        else a checkpoint, with every vertex whose value differs from ``init`` active too)."""
        act = self.act0 if x is None else self.act0 | (x != self.x0)
        x = self.x0 if x is None else x
        off, coef = self.graph.in_offsets, self.coef

        def start(i, bounds):
            v0, v1 = int(bounds[i]), int(bounds[i + 1])
            arcs = coef if coef is None or isinstance(coef, str) else \
                serialized(coef[int(off[v0]):int(off[v1])])
            return {"vectors": {"x": serialized(x[v0:v1]), "active": serialized(act[v0:v1]),
                                "coef": arcs, "op": self.op, "combine": self.combine}}
        s = begin(self.client, self.graph, workers, self.settings, self.stats, self.has, start,
                  op="bsp_start")
        self.frontier = sum(int(r["active"]) for r in s.got)
        return s

    def active(self):
        return self.frontier

    def step(self):
        while True:
            try:
                if not self.buf:
                    self._fetch()
                now = self.buf.popleft()
                self.frontier = sum(int(r["changed"]) for r in now)
                self._count(now)
                self.done += 1
                return
            except WorkerLostError as e:
                self.buf.clear()
                self.recover(e)

    rounds_op = "bsp_rounds"
    """The workers' handler of a batch of rounds."""

    def _fetch(self):
        """The next batch of rounds into ``buf``; its last round's values checkpointed when the
        batch ends at a checkpoint (batches do: :func:`~..power.cluster.batch_size`)."""
        n = batch_size(self.s, self.settings, self.max_iter - self.stats["rounds"], self.ckpt,
                       self.done)
        got = run_batch(self.client, self.s, self.rounds_op, {}, n, self.done, self.settings)
        self.batches += 1
        end = self.done + len(got)
        if self.ckpt is not None and got and self.ckpt.due(
                end, sum(int(r["changed"]) for r in got[-1]), 0):
            t0 = time.perf_counter()
            x = gather(self.client, self.s, "snapshot", self.settings, "taking a checkpoint")
            self.ckpt.keep([x], end, time.perf_counter() - t0)
        self.buf.extend(got)

    def _count(self, now):
        """The round's counters from the workers' answers ``now``."""
        self.stats["vertex_updates"] += self.frontier
        self.stats["arc_updates"] += sum(int(r["arcs"]) for r in now)
        self.stats["sparse_rounds"] += 1

    def recover(self, e):
        """After ``e`` (a lost worker): a new session from the last checkpoint, or ``e``."""
        s = self.s
        drop(self.client, s.workers, s.run, e.worker)
        if self.ckpt is None:
            raise e
        refuse_restart(self.graph, e)  # a graph loaded on the workers cannot be cut again
        self.sent += s.sent
        self.wall += s.wall
        self.s, self.done = restart(self.ckpt, e, s.workers, self.client, self.begin,
                                    self.settings.restart_wait_s, self.done)


def solve(graph, system, *, client, workers, max_iter, stats, settings=None,
          checkpoint_every=None):
    """Relax the min/max ``system`` on the cluster's ``workers`` through ``client`` until no
    value changes; returns (x on the client, converged: False at ``max_iter`` rounds).

    Counters as the CPU engine's push rounds (``rounds``, ``sparse_rounds``,
    ``vertex_updates``, ``arc_updates``; rounds redone after a restart count again);
    ``stats["dask"]`` as :func:`digraph.dispatch.engines.power.cluster.solve` fills it.

    Raises
    ------
    InvalidParameterError
        A worker whose ``memory_limit`` is below its shard's estimated bytes (before anything
        is sent).
    WorkerLostError
        A worker lost, or not answering within
        :attr:`~digraph.dispatch.engines.power.cluster.ClusterSettings.round_timeout_s`; with
        ``checkpoint_every``, only once no worker is left to restart on.
    """
    settings = current(DEFAULT) if settings is None else settings
    if system.family != "monotone":
        raise InvalidParameterError(f"mode='bsp' on a Dask cluster relaxes min/max systems "
                                    f"(SSSP and the like), not the {system.family} family")
    if graph.num_vertices == 0:
        return monotone_start(system, 0)[0], True
    t_setup = time.perf_counter()
    eng = _Rounds(client, graph, system, workers, settings, stats, checkpoint_every)
    stats["dask_time_setup"] = time.perf_counter() - t_setup
    return drive(eng, client, max_iter, stats, settings)


def drive(eng, client, max_iter, stats, settings):
    """Run the rounds of ``eng`` (a :class:`_Rounds`, started) by
    :func:`digraph.dispatch.driver.worklist`, gather the answer (restarting from the last
    checkpoint after a lost worker, when it has checkpoints) and record the ``dask`` keys;
    returns (x on the client, float64, converged)."""
    eng.max_iter = max_iter
    try:
        while True:
            converged = driver.worklist(eng, max_iter=max_iter, stats=stats)
            try:
                x = gather(client, eng.s, "answer", settings, "gathering the answer")
                break
            except WorkerLostError as e:  # restarted: the rounds since the checkpoint again
                eng.recover(e)
    except BaseException as e:
        if not isinstance(e, WorkerLostError):
            drop(client, eng.s.workers, eng.s.run)
        raise
    if eng.ckpt is not None:
        eng.ckpt.record(stats)
    record(stats, eng.s, stats["rounds"], eng.sent, eng.wall)
    stats["dask_batches"] = eng.batches
    return x, converged


def prepare(req):
    """The placement's entry for min/max systems (:mod:`.cluster_entry`, the registry's): a
    function of no argument that solves ``req`` on the plan's cluster."""
    p = req.plan.placement
    return lambda: solve(req.graph, req.system, client=p.client, workers=list(p.workers),
                         max_iter=req.max_iter, stats=req.stats,
                         checkpoint_every=req.option("checkpoint_every"))
