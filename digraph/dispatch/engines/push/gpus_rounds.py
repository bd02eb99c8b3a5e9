"""The sharded linear round pipeline: :func:`linear_round` queues one stage of a dense round
on a shard, and :class:`Rounds` queues whole rounds on every GPU (sends, exchange, own-range
sums, pull), one round ahead of the host, and reads their statistics and kernel times."""

import time

import numpy as np

from ...runtime.cuda.common import hb, kernels
from ...settings import current
from ...runtime.cuda.shard_settings import DEFAULT as MULTI_GPU
from ...runtime.cuda.exchange import comm_stream

__all__ = ["linear_round"]


def linear_round(s, has, theta, stage, scan=None, settings=None):
    """Queue one dense round's ``stage`` on shard ``s`` (its device current): ``"send"`` the
    frontier's sends of its range (to be all-gathered); ``"local"`` (split layouts only) sum
    each target's arcs from its own range, which read no exchanged send; ``"pull"`` absorb and
    pull its range (the arcs from other ranges only, when split), statistics into ``scan``
    (five float64 on the shard's GPU).  The sums' grid: ``settings.pull_blocks_per_sm``
    (:class:`~digraph.dispatch.runtime.cuda.shard_settings.MultiGpuSettings`, default
    :data:`~digraph.dispatch.runtime.cuda.shard_settings.DEFAULT`)."""
    K = kernels()
    be = s.be
    tag = id(s.work)  # a tag per shard and stage: the launches find their prepared selves
    if stage == "send" and s.n_read:
        be.launch(K.linear_frontier, be.grid(s.n_read), be.block, s.v0, s.v0 + s.n_read, s.delta,
                  s.src_scale, theta, s.send, tag=(tag, 0))
        return
    per_sm = (current(MULTI_GPU) if settings is None else settings).pull_blocks_per_sm
    blocks = be.grid_hb(s.v1 - s.v0)
    if per_sm:
        blocks = min(blocks, per_sm * be.sms)
    if stage == "local" and s.split:
        args = (s.off, s.mid, s.src, s.coef, has, s.send, s.part)
        be.launch(K.linear_pull_local, blocks, hb(), s.v0, s.v1, *args, tag=(tag, 1))
        be.heavy(K.linear_pull_local_heavy, s.heavy_local, s.v0, *args, tag=(tag, 2))
    if stage == "pull":
        scan.fill(0.0)
        rest = (s.off, s.mid, s.part, s.split, s.src, s.coef, has, s.send, s.dst_scale, s.delta,
                s.x, theta, s.out_degree, scan)
        tag = (tag, 3, id(scan))
        be.launch(K.linear_pull, blocks, hb(), s.v0, s.v1, *rest, tag=tag)
        be.heavy(K.linear_pull_heavy, s.heavy_rest if s.split else s.heavy, s.v0, *rest,
                 tag=tag + (1,))


class Rounds:
    """Dense rounds on every shard, queued one ahead of the host with ``settings.pipeline``
    (:class:`~digraph.dispatch.runtime.cuda.shard_settings.MultiGpuSettings`, default
    :data:`~digraph.dispatch.runtime.cuda.shard_settings.DEFAULT`).

    A round launches each shard's sends, the all-gather and each shard's sums of its own-range
    arcs (split layouts: at the same time with ``settings.overlap``, the all-gather on a stream
    of its own, of ``settings.comm_priority``), then each shard's pull with its statistics
    written to one of two scan slots, copied to pinned host memory and followed by an event.
    :meth:`launch` queues a round; :meth:`read` waits for the oldest round in flight and returns
    its summed statistics.  Round t+1 therefore uses the threshold θ computed from round t − 1's
    Σx (never larger than the current one for a non-negative answer, so the unsent mass only gets
    smaller), and a run stops one round after the bound is met, with the extra round's
    absorption kept.  Per-GPU kernel time comes from events around each GPU's kernels (the time
    its pull waited for the exchange is counted apart); the wall time runs from the first launch
    to the last read of a stretch."""

    EVENTS = 7  # send start, send end, local end, pull start, pull end, copy end, exchange end

    def __init__(self, shards, ex, has, timer, settings=None):
        self.shards, self.ex, self.has, self.timer = shards, ex, has, timer
        self.settings = settings = current(MULTI_GPU) if settings is None else settings
        self.sim = shards[0].be.sim
        self.overlap = (settings.overlap and not self.sim and len(shards) > 1 and
                        all(s.split for s in shards))
        self.lanes = self.overlap and ex.kind == "p2p"
        self.flight = []  # rounds queued and not read: (slot, per-shard events)
        self.slot = 0
        self.t_open = None
        self.host = 0.0  # host time spent queueing rounds
        for s in shards:
            with s.on():
                xp = s.be.xp
                s.scans = [s.vector(f"scan{i}", 5) for i in range(2)]
                for a in s.scans:
                    a.fill(0.0)
                if self.sim:
                    s.pinned = [None, None]
                    s.events = [[None] * self.EVENTS for _ in range(2)]
                else:
                    import cupyx
                    s.pinned = [cupyx.empty_pinned(5, np.float64) for _ in range(2)]
                    # reused: a slot's round has been read before the slot is queued again
                    s.events = [[xp.cuda.Event() for _ in range(self.EVENTS)] for _ in range(2)]
                    prio = settings.comm_priority
                    s.comm = comm_stream(xp, prio) if self.overlap else None
                    if self.lanes:  # a stream per source GPU; done[slot][g]: its copy ended
                        s.lanes = [comm_stream(xp, prio) for _ in shards]
                        s.done = [[xp.cuda.Event(disable_timing=True) for _ in shards]
                                  for _ in range(2)]

    def launch(self, theta, wide):
        t0 = time.perf_counter()
        if not self.flight:
            self.t_open = t0
        sh, slot, sim, has, cfg = self.shards, self.slot, self.sim, self.has, self.settings
        marks = [s.events[slot] for s in sh]
        lanes = self.lanes
        for h, (s, ev) in enumerate(zip(sh, marks)):
            with s.switch():
                if lanes and self.flight:  # the last round's copies out of this range are done
                    null = s.be.xp.cuda.Stream.null
                    for g, t in enumerate(sh):
                        if g != h:
                            null.wait_event(t.done[slot ^ 1][h])
                sim or ev[0].record()
                linear_round(s, has, theta, "send", settings=cfg)
                if not sim:
                    ev[1].record()
                    if self.overlap and not lanes:
                        s.comm.wait_event(ev[1])
                if not self.overlap:
                    linear_round(s, has, theta, "local", settings=cfg)
                    sim or ev[2].record()
        counts = [s.n_send_first if wide else s.n_send for s in sh]
        sends = [s.send for s in sh]
        if lanes:  # the copies into each GPU are queued below, with its sums
            self.ex._count(sends, counts)
            ready = [ev[1] for ev in marks]
        else:
            self.ex.allgather(sends, counts, [s.comm for s in sh] if self.overlap else None)
        for h, (s, ev) in enumerate(zip(sh, marks)):
            with s.switch():
                if self.overlap:
                    if not lanes:
                        ev[6].record(s.comm)
                    linear_round(s, has, theta, "local", settings=cfg)
                    ev[2].record()
                    if lanes:
                        self.ex.lanes_into(h, sends, counts, ready, s.lanes, s.done[slot])
                    null = s.be.xp.cuda.Stream.null
                    for g in range(len(sh)) if lanes else ():
                        if g != h:
                            null.wait_event(s.done[slot][g])
                    if not lanes:
                        null.wait_event(ev[6])
                sim or ev[3].record()
                linear_round(s, has, theta, "pull", s.scans[slot], cfg)
                if sim:
                    s.pinned[slot] = np.array(s.scans[slot])
                else:
                    ev[4].record()
                    s.scans[slot].get(out=s.pinned[slot], blocking=False)
                    ev[5].record()
        self.flight.append((slot, marks))
        self.slot ^= 1
        self.host += time.perf_counter() - t0
        if not self.settings.pipeline:
            return self.read()
        return None

    def read(self):
        """Statistics (‖δ‖₁, ‖δ‖∞, Σx, absorbed arcs) of the oldest round in flight, its kernel
        times added to each shard's busy time; None when no round is in flight."""
        if not self.flight:
            return None
        slot, marks = self.flight.pop(0)
        rows = []
        for s, ev in zip(self.shards, marks):
            if not self.sim:
                import cupy
                ms = cupy.cuda.get_elapsed_time
                ev[5].synchronize()
                s.busy += (ms(ev[0], ev[2]) + ms(ev[3], ev[4])) / 1e3
                s.waited += ms(ev[2], ev[3]) / 1e3
            rows.append(np.array(s.pinned[slot]))
        if not self.flight:
            self.timer.wall += time.perf_counter() - self.t_open
        sc = np.array(rows)
        return float(sc[:, 0].sum()), float(sc[:, 1].max()), float(sc[:, 2].sum()), \
            float(sc[:, 3].sum())

    def drain(self):
        """Read every round in flight; the statistics of the last (None if none)."""
        got = None
        while self.flight:
            got = self.read()
        return got
