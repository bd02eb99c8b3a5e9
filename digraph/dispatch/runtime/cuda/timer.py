"""The sharded engine's clocks: :class:`Timer`, each GPU's kernel time (CUDA events around
its stretches of kernels) against the rounds' wall time, reported as ``gpu_busy_s`` and
``gpu_idle_share`` (the arc share stands in under the simulator, which has no clocks)."""

import time

import numpy as np

__all__ = []


class Timer:
    """Per-GPU kernel time of a round (CUDA events) and the rounds' wall time."""

    def __init__(self, shards, arcs):
        self.shards = shards
        self.arcs = np.asarray(arcs, dtype=np.float64)
        self.wall = 0.0
        self.events = None

    def _record(self):
        """A CUDA event recorded on every GPU's stream now."""
        events = []
        for s in self.shards:
            with s.on():
                e = s.be.xp.cuda.Event()
                e.record()
                events.append(e)
        return events

    def start(self):
        self.t0 = time.perf_counter()
        self.marks = []
        if not self.shards[0].be.sim:
            self.events = True
            self.marks.append(self._record())

    def pause(self):
        """Record the end of a stretch of kernels (an exchange follows)."""
        if self.events is not None:
            self.marks.append(self._record())

    def resume(self):
        """Record the start of the next stretch of kernels."""
        if self.events is not None:
            self.marks.append(self._record())

    def stop_kernels(self):
        """Record the end of each GPU's kernels (before the exchange)."""
        self.pause()

    def finish(self):
        """The round's wall time, and each GPU's time in kernels: the stretches between
        ``start``/``resume`` and the next ``pause``/``stop_kernels``."""
        self.wall += time.perf_counter() - self.t0
        if self.events is not None:
            import cupy
            m = self.marks
            for i, s in enumerate(self.shards):
                with s.on():
                    m[-1][i].synchronize()
                    for a, b in zip(m[0::2], m[1::2]):
                        s.busy += cupy.cuda.get_elapsed_time(a[i], b[i]) / 1e3

    def report(self, stats):
        stats["time_rounds"] = self.wall
        sh = self.shards
        if sh[0].be.sim:  # no clocks in the simulator: the arc share stands in
            share = self.arcs / max(self.arcs.max(), 1.0)
            busy = share * self.wall
        else:
            busy = np.array([s.busy for s in sh])
        stats["gpu_busy_s"] = [float(b) for b in busy]
        if not sh[0].be.sim and any(s.waited for s in sh):
            stats["gpu_exchange_wait_s"] = [float(s.waited) for s in sh]
        stats["gpu_idle_share"] = [float(max(0.0, 1.0 - b / self.wall)) if self.wall else 0.0
                                   for b in busy]
