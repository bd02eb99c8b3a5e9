"""A worker of the multi-worker dispatcher (:mod:`digraph.dispatch.engines.path.gpus`) on one GPU.

The PathSet's walk arrays (arc sources and targets in path order, the arcs' coefficients or
values, the mirrors ``s``) live on the worker's device; its partitions are cut into units that
never cross a partition, so any set of partitions is a set of units, walked by the path kernels
of :mod:`digraph.smx.cuda.kernels` (persistent blocks, an atomic cursor).  The worker's copy of
the state crosses the bus once each way per walk (``bytes_h2d``/``bytes_d2h``); the exchange of
:mod:`digraph.dispatch.engines.path.gpus` batches what crosses between workers.

Tested with Numba's CUDA simulator (several workers on the simulated device); on a machine with
several GPUs each worker takes its own ``device="cuda:N"``.
"""

import numpy as np

from ...settings import current
from . import gpu_settings
from . import gpu as path_gpu
from ...runtime.cuda.common import index_dtype
from ...runtime.cuda.backend import backend

__all__ = ["GpuWorker", "gpu_worker_factory"]


class GpuWorker:
    """Walks its partitions on one GPU; see the module docstring."""

    def __init__(self, device, ps, family, arrays, stats):
        self.be = backend(device)
        self.be.stats = stats
        self.threadsafe = not self.be.sim  # the simulator is not: its workers run in turn
        be, xp = self.be, self.be.xp
        self.family = family
        self.ps = ps
        off = np.asarray(ps.partition_offsets)
        part_of_path = np.repeat(np.arange(off.size - 1), np.diff(off))
        self.unit_offsets_h, starts = path_gpu._units(ps, current(gpu_settings.DEFAULT).unit_arcs,
                                                      part_of_path)
        self.part_units = np.searchsorted(starts, off)  # units of partition k: [k], [k+1]
        src, dst = ps.arc_ends()
        it = index_dtype(max(ps.num_vertices, ps.num_arcs))
        self.src = be.put(src, it)
        self.dst = be.put(dst, it)
        self.unit_offsets = be.put(self.unit_offsets_h, np.int64)
        nunits = starts.size
        self.unit_sent = be.keep(xp.zeros(max(nunits, 1), np.int32))
        self.unit_pend = be.keep(xp.zeros(max(nunits, 1), np.float64))
        self.cursor = be.keep(xp.zeros(1, np.int64))
        self.hub_slot = be.put(np.full(ps.num_vertices, -1, np.int32))
        self.hubs = be.put(np.zeros(1, np.int32))
        if family == "linear":
            coef, s = arrays
            self.coef = be.put(coef)
            self.s = be.put(s)  # this worker's mirrors (only its own arcs are meaningful)
        else:
            value, has, op, combine, s = arrays
            self.value = be.put(value if has else np.zeros(1))
            self.has, self.op, self.combine = has, op, combine
            self.s = be.put(s)

    def _arcs_of(self, part):
        a = int(self.unit_offsets_h[self.part_units[part]])
        b = int(self.unit_offsets_h[self.part_units[part + 1]])
        return a, b

    def adopt(self, part, other):
        """Take over partition ``part`` from ``other``: its arcs' mirrors come along (bytes)."""
        a, b = self._arcs_of(part)
        if b > a:
            self.s[a:b] = self.be.put(other.be.get(other.s[a:b]))
        return 16 * (b - a)

    def walk(self, parts, x, theta):
        """Walk ``parts`` on this worker's device (its context entered: workers run in threads)."""
        be = self.be
        if be.sim:
            return self._walk(parts, x, theta)
        with be.cuda.gpus[be.device_id], be.xp.cuda.Device(be.device_id):
            return self._walk(parts, x, theta)

    def _walk(self, parts, x, theta):
        from ....smx.cuda import walks
        be = self.be
        units = [np.arange(self.part_units[k], self.part_units[k + 1]) for k in parts]
        order_h = np.concatenate(units) if units else np.zeros(0, np.int64)
        if order_h.size == 0:
            return 0, 0
        order = be.put(order_h, np.int64)
        dx = be.put(x)
        self.unit_sent[...] = 0
        self.cursor[...] = 0
        if self.family == "linear":
            be.launch(walks.path_linear_walk, be.walk_blocks, be.walk_block,
                      order, order.size, self.unit_offsets, self.src, self.dst, self.coef, self.s,
                      dx, theta, self.hub_slot, self.hubs, False, self.unit_sent, self.unit_pend,
                      self.cursor)
        else:
            be.launch(walks.path_monotone_walk, be.walk_blocks, be.walk_block,
                      order, order.size, self.unit_offsets, self.src, self.dst, self.value,
                      self.has, self.op, self.combine, self.s, dx, self.unit_sent, self.cursor)
        x[:] = be.get(dx)
        sent = int(be.scalars(self.unit_sent[order].sum())[0])
        seen = int((self.unit_offsets_h[order_h + 1] - self.unit_offsets_h[order_h]).sum())
        for a in (order, dx):  # per-walk arrays: drop their cached views
            be._views.pop(id(a), None)
        return sent, seen


def gpu_worker_factory(devices, stats):
    """``make_worker`` for :func:`digraph.dispatch.engines.path.gpus.solve`: worker ``w`` on
    ``devices[w % len(devices)]`` (e.g. ``["cuda:0", "cuda:1"]``)."""
    def make(w, ps, family, arrays):
        return GpuWorker(devices[w % len(devices)], ps, family, arrays, stats)
    return make
