"""The workers' side of the power iteration on a Dask cluster
(:mod:`digraph.dispatch.engines.power.cluster` drives it from the client).

:class:`PowerShards` is a ``distributed`` worker plugin: registered once by the client
(``client.register_plugin``, again on workers that join later), it adds the handlers below to
the worker's server, so that the client and the other workers call them over Dask's own comms
(``rpc(address).digraph_power_<op>(...)``).  A worker keeps

* its **shards** (:class:`~.cluster_state.Shard`), keyed by the graph's fingerprint and the cut: the in-arcs of
  its vertex range (row offsets rebased, sources renumbered into its compact vector,
  :mod:`.cluster_reads`), which entries of each other range it reads and which of its own each
  other worker reads.  A later run on the same graph and workers finds them there (the graph's
  handle on the cluster); the least recently used beyond ``keep`` are dropped, except the
  *pinned* ones of a graph loaded on the workers (:func:`digraph.load_distributed`: their arcs
  are nowhere else), kept until ``release``;
* the state of each **run** (:class:`~.cluster_state.RunState`): its range of ``x``, ``y``, the teleport and
  dangling vectors and the scales, and the compact ``z`` its pull reads.

The rounds (``rounds``: a batch of them per call from the client) are the driver's
(:func:`digraph.dispatch.driver.power`, on the plugin's kernel thread, :mod:`.cluster_batch`).
Round ``k`` on a worker: the teleport of its range, ``y += c·v + σ·d``, with ``Σ|y − x|`` and
``Σy`` (the existing kernels of :mod:`digraph.dispatch.engines.power.cpu`), ``z_own = src_scale
∘ y``; its entries of ``z`` that each other worker reads are sent straight to that worker
(``mail``), and it waits for the entries it reads from the others; then the pull of its range
for the next round (the CPU engine's Numba kernel on the shard); then every worker's sums of the
round (its pull's ``s``, ``σ``, ``Σx`` and its teleport's ``Σ|y − x|``, ``Σy``) come from the
other workers themselves (mail of a few scalars, worker to worker), from which each worker alike
finds the round's bound, the driver's verdict and the next round's ``c`` and ``σ`` (the rule of
:mod:`.cluster_maps`, the client's own).  The client hears at the batch's end: each round's
sums, which it replays through the driver, reaching the same verdicts.  Only scalars go to the
client; the vectors stay on the workers and move worker to worker.

The ``bsp`` rounds of min/max systems (:mod:`digraph.dispatch.engines.push.cluster_worker`)
run on the same shards: their plugin adds its own handlers and keeps its runs, mail and kernel
work in this plugin's (``has``, ``load``, ``answer``, ``snapshot``, ``drop`` serve both).  So do
k-core's h-index rounds (:mod:`digraph.dispatch.engines.push.cluster_hindex_worker`), on shards
this plugin builds the same way from a range's undirected neighbour lists instead of its
in-arcs, kept under a key of their own.

Nothing here may block the worker's event loop: the kernels run on one thread of the plugin's
own (Numba's threads set to the worker's ``nthreads``).  A peer that does not take or send its
entries within the run's timeout ends the round with :class:`~digraph.errors.WorkerLostError`
naming it.
"""

import asyncio
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from distributed.diagnostics.plugin import WorkerPlugin
from distributed.protocol import to_serialize

from ....errors import WorkerLostError
from ... import driver
from .cluster_batch import PowerBatch
from .cluster_maps import rule_of
from .cluster_state import RunState, Shard

__all__ = ["PowerShards", "Shard", "RunState", "OPS", "MAX_RUNS", "lost_as_answer"]

#: the most runs a worker keeps the state of at once (the oldest dropped beyond)
MAX_RUNS = 16

#: the handlers :class:`PowerShards` adds to a worker (``digraph_power_<op>``)
OPS = ("has", "load", "start", "rounds", "answer", "snapshot", "drop", "mail", "release")


async def lost_as_answer(exchange, **more):
    """The answer of a round (``exchange``'s, with ``more``), or, when a peer was lost,
    ``{"lost": message, "worker": its address}``: an answer, not an exception, so that the
    client reads it as soon as it comes and nothing is left to log once the client has gone."""
    try:
        out = await exchange
    except WorkerLostError as e:
        return {"lost": str(e), "worker": e.worker}
    out.update(more)
    return out


def _answer_of(r):
    """A run's range of its answer: ``x``, or the power step ``g`` where the last round mixed
    (:mod:`.cluster_anderson`; the bsp and h-index runs: ``x``)."""
    got = getattr(r, "answer", None)
    return r.x if got is None else got


def _nbytes(a):
    """The bytes of values in mail ``a``: an array's, or a dict's arrays' and 8 a scalar."""
    if isinstance(a, dict):
        return sum(int(v.nbytes) if isinstance(v, np.ndarray) else 8 for v in a.values())
    return int(a.nbytes)


def _set_threads(n):
    import numba
    numba.set_num_threads(max(1, min(int(n), numba.config.NUMBA_NUM_THREADS)))


class PowerShards(WorkerPlugin):
    """The worker plugin of the cluster placement's power iteration (module docstring)."""

    name = "digraph-power-shards"
    idempotent = True

    def setup(self, worker):
        self.worker = worker
        self.shards = OrderedDict()
        self.runs = {}
        self.box = {}
        self.events = {}
        self.loads = 0
        self.pool = ThreadPoolExecutor(1, thread_name_prefix="digraph-power")
        self.pool.submit(_set_threads, worker.state.nthreads).result()
        for op in OPS:
            worker.handlers[f"digraph_power_{op}"] = getattr(self, f"_{op}")

    def teardown(self, worker):
        for op in OPS:
            worker.handlers.pop(f"digraph_power_{op}", None)
        self.pool.shutdown(wait=False)

    # ------------------------------------------------------------------ helpers
    async def _compute(self, fn, *args):
        """``fn(*args)`` on the plugin's kernel thread (the event loop stays free)."""
        return await asyncio.get_running_loop().run_in_executor(self.pool, fn, *args)

    async def _send(self, tag, shard, parts, timeout):
        """Send ``parts`` (shard index -> array, or a dict of scalars and arrays) to those
        shards' workers as mail ``tag``; returns the bytes of values sent (8 a scalar)."""
        me = self.worker.address

        async def one(h, a):
            peer = shard.peers[h]
            data = ({k: to_serialize(v) if isinstance(v, np.ndarray) else v
                     for k, v in a.items()} if isinstance(a, dict) else to_serialize(a))
            try:
                await asyncio.wait_for(self.worker.rpc(peer).digraph_power_mail(
                    tag=tag, frm=shard.index, data=data, reply=False), timeout)
            except (OSError, asyncio.TimeoutError) as e:
                why = type(e).__name__ + (f": {e}" if str(e) else f" after {timeout:g} s")
                raise WorkerLostError(f"worker {me} could not send its entries to worker {peer} "
                                      f"({why}); that worker was lost or stopped answering",
                                      worker=peer) from None
        await asyncio.gather(*(one(h, a) for h, a in parts.items()))
        return sum(_nbytes(a) for a in parts.values())

    async def _collect(self, tag, shard, expect, timeout):
        """The mail ``tag`` from every shard in ``expect``, waited for at most ``timeout`` s."""
        loop = asyncio.get_running_loop()
        box = self.box.setdefault(tag, {})
        ev = self.events.setdefault(tag, asyncio.Event())
        deadline = loop.time() + timeout
        while not set(expect) <= box.keys():
            ev.clear()
            left = deadline - loop.time()
            if left <= 0:
                missing = [shard.peers[g] for g in sorted(set(expect) - box.keys())]
                self.box.pop(tag, None)
                self.events.pop(tag, None)
                raise WorkerLostError(
                    f"worker {self.worker.address} waited {timeout:g} s for the entries of "
                    f"worker {', '.join(missing)}, which was lost or stopped answering",
                    worker=missing[0])
            try:
                await asyncio.wait_for(ev.wait(), left)
            except asyncio.TimeoutError:
                pass
        self.events.pop(tag, None)
        return self.box.pop(tag)

    async def swap(self, tag, shard, parts, expect, timeout):
        """Send ``parts`` as mail ``tag`` (:meth:`_send`) and take the mail ``tag`` of the
        shards in ``expect`` (:meth:`_collect`): ``(bytes sent, what came)``."""
        sent = await self._send(tag, shard, parts, timeout)
        return sent, await self._collect(tag, shard, expect, timeout)

    async def allgather(self, tag, shard, answer, mine, timeout):
        """Every shard's ``mine`` (a dict of scalars; this one's sent to every other worker as
        mail ``tag``, the bytes counted in ``answer["sent"]``), in shard order."""
        others = [g for g in range(len(shard.peers)) if g != shard.index]
        answer["sent"] += await self._send(tag, shard, {g: mine for g in others}, timeout)
        got = await self._collect(tag, shard, others, timeout)
        return [mine if g == shard.index else got[g] for g in range(len(shard.peers))]

    def _run(self, run):
        r = self.runs.get(run)
        if r is None:
            raise KeyError(f"worker {self.worker.address} holds no run {run!r} (dropped, or the "
                           "worker restarted)")
        return r

    async def _exchange_and_pull(self, shard, r, tag, timeout):
        """Send this shard's entries of ``z``, take the others', then pull: the round's sums."""
        t0 = time.perf_counter()
        parts = await self._busy(r, r.parts) if r.gpu else r.parts()
        sent, got = await self.swap(tag, shard, parts, shard.reads, timeout)
        t_ex = time.perf_counter() - t0

        def take_and_pull():  # one hop to the kernel thread
            r.take(got)
            return r.pull()
        out = await self._busy(r, take_and_pull)
        out.update(sent=sent, exchange=t_ex, busy=r.busy)
        return out

    async def _busy(self, r, fn, *args):
        """``fn(*args)`` on the kernel thread, its seconds counted in ``r.busy``."""
        def timed():
            t = time.perf_counter()
            try:
                return fn(*args)
            finally:
                r.busy += time.perf_counter() - t
        return await self._compute(timed)

    # ------------------------------------------------------------------ handlers
    async def _mail(self, tag=None, frm=None, data=None):
        """Take another worker's entries (or lists) sent as mail ``tag``."""
        self.box.setdefault(tag, {})[int(frm)] = data
        ev = self.events.get(tag)
        if ev is not None:
            ev.set()

    async def _has(self, key=None):
        """Whether this worker holds graph ``key``'s shard, and its counters."""
        shard = self.shards.get(key)
        return {"has": shard is not None, "loads": self.loads,
                "runs": 0 if shard is None else shard.runs}

    async def _load(self, key=None, wire=None, index=None, bounds=None, peers=None, off=None,
                    src=None, keep=4, timeout=60.0, local=None):
        """Build and keep shard ``index`` of graph ``key``; the workers then tell one another
        what each reads (mail ``wire``).  Returns the worker's counters.

        ``local``: the key of a task result held by this worker, ``(off, src, weights, ...)``
        (:func:`digraph.io.distributed_parts.build`), instead of ``off`` and ``src`` sent by the
        client; the shard is then pinned (kept until ``release``)."""
        weights = None
        if local is not None:
            if local not in self.worker.data:
                raise KeyError(f"worker {self.worker.address} holds no task result {local!r}")
            off, src, weights = self.worker.data[local][:3]
        shard = await self._compute(Shard, index, bounds, peers, off, src, weights)
        shard.pinned = local is not None
        others = [g for g in range(len(peers)) if g != shard.index]
        await self._send(wire, shard, {g: shard.idx_of[g] for g in others}, timeout)
        got = await self._collect(wire, shard, others, timeout)
        shard.send_idx = {h: np.asarray(a, np.int64) for h, a in got.items() if len(a)}
        del shard.idx_of
        self.shards[key] = shard
        self.shards.move_to_end(key)
        loose = [k for k, s in self.shards.items() if not s.pinned]  # oldest first
        for k in loose[:max(0, len(loose) - max(1, int(keep)))]:
            self.shards.pop(k)
        self.loads += 1
        return {"loads": self.loads, "arcs": shard.arcs, "vertices": shard.v1 - shard.v0}

    async def _start(self, key=None, run=None, vectors=None, timeout=60.0):
        """Start run ``run`` on graph ``key``'s shard: ``x = v`` (or the checkpoint
        ``vectors["x0"]``), the first exchange and pull."""
        shard = self.shards.get(key)
        if shard is None:
            raise KeyError(f"worker {self.worker.address} holds no shard {key!r} (dropped, or "
                           "the worker restarted)")
        self.shards.move_to_end(key)
        vectors = dict(vectors)
        gpu = vectors.pop("gpu", None)  # the run on this worker's GPU (cluster_gpu_worker)

        def state():
            if gpu is None:
                return RunState(shard, **vectors)
            from .cluster_gpu_worker import GpuRunState
            return GpuRunState(shard, gpu, **vectors)
        r = await self._compute(state)
        while len(self.runs) >= MAX_RUNS:  # runs whose client left without a word
            await self._close(self.runs.pop(next(iter(self.runs))))
        self.runs[run] = r
        shard.runs += 1
        return await lost_as_answer(self._exchange_and_pull(shard, r, f"{run}:0", timeout),
                                     runs=shard.runs, loads=self.loads)

    async def _rounds(self, key=None, run=None, k=None, n=None, prev=None, last_diff=None,
                      rule=None, tol=None, timeout=60.0, last_delta=0.0):
        """Rounds ``k`` to ``k + n − 1`` among the workers, without the client: the driver's
        (:func:`~digraph.dispatch.driver.power` with ``tol`` and ``last_diff``, the difference
        of round ``k − 1``) on :class:`.cluster_batch.PowerBatch`'s rounds, each ending with
        every worker's sums of it (mail ``run:s<round>``, to every other worker), from which
        each worker alike finds its bound (``rule``, :func:`.cluster_maps.rule_of`) and the
        next round's ``c`` and ``σ``; the rounds end early where the driver's stop rule ends the
        run.  ``prev``: every worker's sums of round ``k − 1`` (or of the start),
        ``last_delta`` its rounding floor (Anderson's start rule reads the first round's).
        Returns this worker's answer of each round run (``{"rounds": [...]}``)."""
        r = self._run(run)
        rule = rule_of(rule)
        if r.aa is not None:
            r.aa.g1 = rule.g1
            if k > 1:
                r.aa.seen(int(k) - 1, float(last_diff), float(last_delta))
        b = PowerBatch(self, r, run, k, prev, rule, timeout, asyncio.get_running_loop())

        def batch():  # the driver's rounds on the kernel thread, the mail on the event loop
            driver.power(b.step, g1=rule.g1, tol=float(tol), max_iter=int(n),
                         stats={"rounds": 0}, last_diff=float(last_diff))
            return {"rounds": b.out}
        return await lost_as_answer(self._compute(batch))

    async def _answer(self, run=None):
        """The run's range of ``x`` (the answer); the run's state is dropped."""
        r = self._run(run)
        self.runs.pop(run, None)
        x = await self._compute(r.host_x) if getattr(r, "gpu", False) else _answer_of(r)
        await self._close(r)
        return to_serialize(x)

    async def _snapshot(self, run=None):
        """A copy of the run's range of ``x`` (a checkpoint); the run goes on."""
        r = self._run(run)
        return to_serialize(await self._compute(r.host_x) if getattr(r, "gpu", False) else
                            _answer_of(r).copy())

    async def _close(self, r):
        """A run dropped: a GPU run's arrays let go (any run of this plugin's or the bsp and
        h-index plugins', which keep theirs in :attr:`runs` too)."""
        if getattr(r, "gpu", False):
            await self._compute(r.close)

    async def _release(self, key=None):
        """Forget graph ``key``'s shard, pinned or not; whether it was held."""
        return self.shards.pop(key, None) is not None

    async def _drop(self, run=None):
        """Forget run ``run`` (its state and any mail of its rounds)."""
        r = self.runs.pop(run, None)
        if r is not None:
            await self._close(r)
        for tag in [t for t in self.box if t.startswith(f"{run}:")]:
            self.box.pop(tag, None)
            self.events.pop(tag, None)
