"""The workers' side of ``bsp`` rounds on a Dask cluster (:mod:`.cluster` drives them from the
client): min/max systems (SSSP) relaxed over the vertex ranges of the power iteration's shards.

:class:`BspRounds` is a ``distributed`` worker plugin beside the power iteration's
(:class:`~digraph.dispatch.engines.power.cluster_worker.PowerShards`), whose shards, runs, mail
and kernel thread it uses: a graph's shard (its range's in-arcs, the entries of the other ranges
it reads and which of its own each other worker reads) serves both engines, and the power
plugin's ``has``, ``load``, ``answer``, ``snapshot``, ``drop``, ``mail`` and ``release`` serve a
``bsp`` run as they serve a power run.  It adds two handlers to the worker's server
(``digraph_power_<op>``, the cluster protocol's names):

* ``bsp_start``: the run's state on the shard (:class:`MonotoneRun`: its range of the values
  and of the initial frontier, the arc values in the order of its in-arcs), then the first
  exchange;
* ``bsp_rounds``: a batch of rounds, each one pull of its range
  (:func:`digraph.smx.cpu.ranges.monotone_range_round`), then the exchange, whose mail also
  tells every worker how many rows changed on each: the batch ends after a round where none
  did; answers each round's rows improved and arcs relaxed.

**The exchange** sends to each other worker only the entries it reads that changed in the last
pull (the frontier's part it reads): their values and their positions in its read list, 12 bytes
an entry (:func:`pack`); a receiver marks those entries of its compact vector active with their
new values and every other entry of that worker's part inactive (:func:`unpack`).  Every worker
gets one message a round from every other: the entries it reads (none when nothing it reads
changed) and the sender's count of changed rows, so a round is a barrier and every worker knows
when no row changed anywhere.  An inactive entry is never read by the pull, so entries that did
not change need not be sent.

k-core's h-index rounds (:mod:`.cluster_hindex_worker`) are a subclass of :class:`BspRounds`:
its start (``_start_run``) and exchange with another run state and handlers of their own
(:attr:`BspRounds.ops`).
"""

import asyncio
import time

import numpy as np
from distributed.diagnostics.plugin import WorkerPlugin

from ....smx.cpu.ranges import monotone_range_round, monotone_range_round_serial
from ....smx.cpu.serial import pick
from ...runtime.cpu_tasks import task_cuts
from ... import driver
from ..power.cluster_worker import MAX_RUNS, PowerShards, lost_as_answer

__all__ = ["BspRounds", "MonotoneRun", "pack", "unpack", "OPS"]

#: the handlers :class:`BspRounds` adds to a worker (``digraph_power_<op>``)
OPS = ("bsp_start", "bsp_rounds")


def pack(idx, x, changed):
    """The entries ``x[idx]`` whose row changed (``changed[idx]``), as one byte array: their
    values (float64), then their positions in ``idx`` (int32)."""
    pos = np.flatnonzero(changed[idx])
    return np.concatenate([np.ascontiguousarray(x[idx[pos]], np.float64).view(np.uint8),
                           pos.astype(np.int32).view(np.uint8)])


def unpack(packed, z, active, lo, hi):
    """Take :func:`pack`'s array into the part ``[lo, hi)`` of the compact vector ``z``: the
    entries it names are active with their new values, the others of the part inactive."""
    packed = np.asarray(getattr(packed, "data", packed), np.uint8)
    count = packed.size // 12
    vals = packed[:8 * count].view(np.float64)
    pos = lo + packed[8 * count:].view(np.int32).astype(np.int64)
    active[lo:hi] = False
    z[pos] = vals
    active[pos] = True


class MonotoneRun:
    """One min/max run's state on one shard: the compact vector ``z`` (its range whole, the
    entries it reads of the others) with its activity flags ``act``; ``x`` is its range's part.

    Parameters
    ----------
    shard : digraph.dispatch.engines.power.cluster_state.Shard
    x, active : numpy.ndarray
        The range's initial values and initial frontier.
    coef : numpy.ndarray, ``"shard"`` or None
        The arc values in the order of the range's in-arcs (``"shard"``: the weights the shard
        was built with; None: 1 for every arc).
    op, combine : int
        The relax and combine codes (:func:`digraph.dispatch.systems.monotone_arrays`).
    """

    def __init__(self, shard, x, active, coef, op, combine):
        self.shard = shard  # kept for the run, even if a newer graph evicts it from the worker
        n = shard.v1 - shard.v0
        if isinstance(coef, str) and coef == "shard":
            coef = shard.weights
        self.has = coef is not None
        self.coef = np.ascontiguousarray(coef, np.float64) if self.has else np.empty(0)
        self.op, self.combine = int(op), int(combine)
        size = max(int(shard.base[-1]), 1)
        self.z = np.empty(size, np.float64)
        self.act = np.zeros(size, np.bool_)
        self.lo, self.hi = int(shard.base[shard.index]), int(shard.base[shard.index]) + n
        self.x = self.z[self.lo:self.hi]
        self.x[:] = np.asarray(getattr(x, "data", x), np.float64)
        self.act[self.lo:self.hi] = np.asarray(getattr(active, "data", active), np.bool_)
        self.new_x = np.empty(n, np.float64)
        self.new_act = np.empty(n, np.bool_)
        self.pull = pick(monotone_range_round, monotone_range_round_serial, shard.arcs)
        self.cuts = task_cuts(shard.off)
        self.busy = 0.0

    def changed(self):
        """The range's activity flags (the rows that changed in the last pull)."""
        return self.act[self.lo:self.hi]

    def step(self):
        """One pull of the range (nothing to do when no entry it reads is active); returns
        ``{"changed": rows improved, "arcs": arcs relaxed}``."""
        t = time.perf_counter()
        improved = arcs = 0
        if self.act.any():
            s = self.shard
            improved, arcs = self.pull(self.cuts, s.off, s.src, self.coef, self.has, self.op,
                                       self.combine, self.z, self.act, self.lo, self.new_x,
                                       self.new_act)
            self.x[:] = self.new_x
            self.act[self.lo:self.hi] = self.new_act
        self.busy += time.perf_counter() - t
        return {"changed": int(improved), "arcs": int(arcs)}


class BspRounds(WorkerPlugin):
    """The worker plugin of the cluster placement's ``bsp`` rounds (module docstring)."""

    name = "digraph-bsp-rounds"
    idempotent = True
    #: the handlers it adds (a subclass's own: :mod:`.cluster_hindex_worker`)
    ops = OPS

    def setup(self, worker):
        self.worker = worker
        for op in self.ops:
            worker.handlers[f"digraph_power_{op}"] = getattr(self, f"_{op}")

    def teardown(self, worker):
        for op in self.ops:
            worker.handlers.pop(f"digraph_power_{op}", None)

    def _shards(self):
        """The power plugin of this worker, which holds the shards, the runs and the mail."""
        p = self.worker.plugins.get(PowerShards.name)
        if p is None:
            raise KeyError(f"worker {self.worker.address} has no {PowerShards.name} plugin")
        return p

    async def _exchange(self, p, r, tag, timeout, changed=0):
        """Send the changed entries each other worker reads, take those this one reads; with
        them, every worker's count of rows ``changed`` (one mail to every other worker: the
        entries and the count, or the count alone to a worker that reads none).  The answer's
        ``total``: the rows changed on every worker."""
        t0 = time.perf_counter()
        parts, peers = _parts(r, changed)
        sent, got = await p.swap(tag, r.shard, parts, peers, timeout)
        return {"sent": sent, "exchange": time.perf_counter() - t0, "busy": r.busy,
                "total": _take(r, got, peers, changed)}

    async def _bsp_start(self, key=None, run=None, vectors=None, timeout=60.0):
        """Start run ``run`` on graph ``key``'s shard from ``vectors`` (:class:`MonotoneRun`'s
        arguments), then the first exchange; answers the range's frontier size."""
        return await self._start_run(key, run, lambda shard: MonotoneRun(shard, **vectors),
                                     timeout)

    async def _start_run(self, key, run, make, timeout):
        """Start run ``run`` on graph ``key``'s shard with the state ``make(shard)`` (a
        :class:`MonotoneRun` or alike: ``x``, ``z``, ``act``, ``changed``, ``step``, ``busy``),
        then the first exchange; answers the range's frontier size."""
        p = self._shards()
        shard = p.shards.get(key)
        if shard is None:
            raise KeyError(f"worker {self.worker.address} holds no shard {key!r} (dropped, or "
                           "the worker restarted)")
        p.shards.move_to_end(key)
        r = await p._compute(lambda: make(shard))
        while len(p.runs) >= MAX_RUNS:  # runs whose client left without a word
            p.runs.pop(next(iter(p.runs)))
        p.runs[run] = r
        shard.runs += 1
        return await lost_as_answer(self._exchange(p, r, f"{run}:0", timeout),
                                     active=int(np.count_nonzero(r.changed())), runs=shard.runs,
                                     loads=p.loads)

    async def _bsp_rounds(self, key=None, run=None, k=None, n=None, timeout=60.0):
        """Rounds ``k`` to ``k + n − 1`` (:meth:`rounds`): each the pull of the range, then the
        exchange; answers each round's rows improved (``changed``) and arcs relaxed (``arcs``)."""
        return await self.rounds(run, k, n, timeout)

    async def rounds(self, run, k, n, timeout):
        """Rounds ``k`` to ``k + n − 1`` of run ``run`` among the workers, without the client:
        the driver's (:func:`~digraph.dispatch.driver.worklist`, on the kernel thread; the mail
        on the event loop), each round the run state's ``step`` (its answer's ``changed``: the
        rows that changed), then the exchange, whose mail carries every worker's count; the
        driver's ``active`` is the rows changed on every worker in the last round, so the rounds
        end after one where none changed anywhere, as the client's driver does.  Returns
        ``{"rounds": [...]}``, this worker's answer of each round run."""
        p = self._shards()
        r = p._run(run)
        loop = asyncio.get_running_loop()
        st = {"total": 1, "out": []}  # a batch is asked for only while some row changes

        def step():
            got = r.step()
            tag = f"{run}:{int(k) + len(st['out'])}"
            t0 = time.perf_counter()
            parts, peers = _parts(r, got["changed"])
            sent, came = asyncio.run_coroutine_threadsafe(
                p.swap(tag, r.shard, parts, peers, timeout), loop).result()
            st["total"] = _take(r, came, peers, got["changed"])
            got.update(sent=sent, exchange=time.perf_counter() - t0, busy=r.busy)
            st["out"].append(got)

        def batch():
            driver.worklist(driver.Rounds(lambda: st["total"], step), max_iter=int(n),
                            stats={"rounds": 0})
            return {"rounds": st["out"]}
        return await lost_as_answer(p._compute(batch))


def _parts(r, changed):
    """The mail of a round's exchange from run state ``r`` (shard index -> the entries each
    other worker reads that changed, and this worker's count ``changed``), and the peers."""
    shard = r.shard
    flags = r.changed()
    peers = [g for g in range(len(shard.peers)) if g != shard.index]
    parts = {}
    for h in peers:
        parts[h] = {"changed": int(changed)}
        if h in shard.send_idx:
            parts[h]["z"] = pack(shard.send_idx[h], r.x, flags)
    return parts, peers


def _take(r, got, peers, changed):
    """The entries the exchange brought into ``r``'s compact vector; the rows changed on
    every worker (``changed`` this one's)."""
    shard = r.shard
    for g in shard.reads:
        unpack(got[g]["z"], r.z, r.act, int(shard.base[g]), int(shard.base[g + 1]))
    return int(changed) + sum(int(got[g]["changed"]) for g in peers)
