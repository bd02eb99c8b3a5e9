"""A batch of the power iteration's rounds on a Dask worker, run by the one-process driver
(:func:`digraph.dispatch.driver.power`): the worker plugin (:mod:`.cluster_worker`) hands it
:meth:`PowerBatch.step` on its kernel thread, so the stop rule, its floor test and the count of
rounds are the driver's, as on the client that replays the same sums.

A round (:meth:`PowerBatch.step`) runs on the kernel thread; only its mail goes to the worker's
event loop (:meth:`PowerBatch.mail`, which waits for it), so the kernels never block the loop
and the loop never waits on a kernel:

1. the teleport of the range with the round's ``c`` and ``σ`` (:meth:`~.cluster_maps.GoogleRule.
   coefficients` of every worker's last sums); in a round that records Anderson's differences
   (:mod:`.cluster_anderson`), the mix's coefficients from the pieces of its dots that came
   with those sums, then the mix;
2. the entries of ``z`` each other worker reads, sent straight to it, and those this one reads
   taken into the compact ``z``; then the pull of the range for the next round;
3. the all-gather of every worker's sums of the round (mail ``run:s<round>``; with Anderson's
   pieces of the next round's dots), from which the
   step returns the round's ``(bound, delta, diff)`` by the client's own rule: every worker's
   driver reaches the same verdict at the same round, the client's too.

The answer is the power step ``g_k`` of the round that stopped: where that round mixed (the
driver decides after the step), the iterate pulled is the mix, and ``g_k`` is kept as the run's
``answer`` (:meth:`~.cluster_anderson.WorkerAnderson.advance`).
"""

import asyncio
import time

from .cluster_maps import scalars

__all__ = ["PowerBatch"]


class PowerBatch:
    """The rounds ``k``, ``k + 1``, ... of run ``run`` on this worker, one a :meth:`step`.

    Parameters
    ----------
    plugin : cluster_worker.PowerShards
        The worker's plugin (its mail: ``allgather``, ``_send``, ``_collect``).
    r : cluster_state.RunState or cluster_gpu_worker.GpuRunState
        The run's state on this worker.
    run, k : str, int
        The run's id and the batch's first round.
    prev : list of dict
        Every worker's sums of round ``k − 1`` (or of the start), in shard order.
    rule : cluster_maps.GoogleRule or cluster_maps.AffineRule
        The round's coefficients and bound.
    timeout : float
        Seconds each wait for a peer's mail may take.
    loop : asyncio.AbstractEventLoop
        The worker's event loop, where the mail runs.

    Attributes
    ----------
    out : list of dict
        This worker's answer of each round run (its sums and counters).
    """

    def __init__(self, plugin, r, run, k, prev, rule, timeout, loop):
        self.plugin, self.r, self.run, self.k = plugin, r, run, int(k)
        self.prev, self.rule, self.timeout, self.loop = list(prev), rule, float(timeout), loop
        self.out = []

    def mail(self, coro):
        """Run ``coro`` (the plugin's mail) on the event loop and wait for it here."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def _timed(self, fn, *args):
        t = time.perf_counter()
        try:
            return fn(*args)
        finally:
            self.r.busy += time.perf_counter() - t

    def step(self):
        """One round (the module text); returns its ``(bound, delta, diff)``."""
        p, r, rule = self.plugin, self.r, self.rule
        shard, k = r.shard, self.k + len(self.out)
        tag = f"{self.run}:{k}"
        c, sd = rule.coefficients(self.prev)
        mixing = r.aa if r.aa is not None and r.aa.recording else None
        if mixing is not None:  # γ from every worker's pieces of this round's dots, then mix
            gamma = mixing.solve(self.prev, c + sd)
            sums = self._timed(mixing.record, r, c, sd)
            self._timed(mixing.advance, r, gamma)
            sums.update(recording=1.0, restarts=mixing.acc.restarts)
        else:
            sums = self._timed(r.teleport, c, sd)
        t0 = time.perf_counter()
        parts = r.parts()  # the GPU's gather and copy too: the exchange's time
        sent, got = self.mail(p.swap(tag, shard, parts, shard.reads, self.timeout))
        exchange = time.perf_counter() - t0
        self._timed(r.take, got)
        out = self._timed(r.pull)
        if mixing is not None:  # the next round's dots, in pieces: they ride on the all-gather
            out["aa"] = self._timed(mixing.partials, r)
        out.update(sums, sent=sent, exchange=exchange, busy=r.busy)
        self.out.append(out)
        now = self.mail(p.allgather(f"{self.run}:s{k}", shard, out, scalars(out),
                                    self.timeout))
        bound, delta, diff = rule.bound(self.prev, now)
        if r.aa is not None:
            r.aa.seen(k, diff, delta)
        self.prev = now
        return bound, delta, diff
