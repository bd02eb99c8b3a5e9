"""The shards of the sharded engine: :class:`_Shard` (one GPU's vertex range, its backend and
device arrays), :func:`make_shards`, the helpers that run over every shard (:func:`parallel`,
:func:`gather_host`, :func:`sync_all`), and the work a sharded linear run keeps for the next
one on the same graph and GPUs (``_WORK``, :func:`drop_work`,
:attr:`~.shard_settings.MultiGpuSettings.keep_work`)."""

import time
import weakref

import numpy as np

from ...settings import executor
from .backend import backend
from .residency import residency
from .ranges import shard_ranges

__all__ = ["make_shards", "drop_work"]


class _Shard:
    """One GPU's range ``[v0, v1)`` (arcs ``[a0, a1)``) and its device arrays."""

    def __init__(self, device, v0, v1, stats):
        self.be = backend(device)
        self.be.stats = stats
        self.v0, self.v1 = int(v0), int(v1)
        self.busy = 0.0
        self.waited = 0.0  # kernel time lost waiting for exchanges (linear rounds)
        self.work = {}  # per-run device vectors, kept for the next run (keep_work)

    def vector(self, name, size, dtype=np.float64):
        """The shard's work vector ``name`` of ``size`` entries: the one kept from the last run
        when it has that size (its values left as they were), else a new one."""
        a = self.work.get(name)
        if a is None or a.size != size or a.dtype != dtype:
            a = self.work[name] = self.be.keep(self.be.xp.empty(size, dtype))
        return self.be.keep(a)

    def switch(self):
        """:meth:`on` for the rounds' queueing: only CuPy's device is made current, which makes
        its primary context the driver's current one, where Numba's launches and its dispatcher
        then go; Numba's own context stack is left alone.  A switch through Numba's context
        stack as well costs host time, and a round at four GPUs makes eight (``ab_multi_gpu.py``;
        measured: docs/history/benchmarks-notebook.md, "Measurements behind the GPU engines'
        settings")."""
        be = self.be
        if be.sim:
            return self.on()
        return be.xp.cuda.Device(be.device_id)

    def on(self):
        """The shard's device made current (CuPy and Numba); nothing under the simulator."""
        return self.be.current()

    def resident(self, graph, family, build):
        """The shard's graph arrays (a dict built by ``build()`` on first use), kept on the graph
        for later runs as one GPU keeps its CSR/CSC (the graph's
        :class:`~.residency.Residency`, kind ``"multi-gpu"``, key
        ``(family, device, sim, v0, v1)``)."""
        be = self.be
        d = residency(graph).get("multi-gpu", (family, be.device_id, be.sim, self.v0, self.v1),
                                 build)
        return be.keep_all(d)

    def rebased(self, offsets, a0, a1, dtype=np.int64):
        """Full-length offsets of this shard's arcs ``[a0, a1)``: rebased to the shard's arc
        arrays and clipped, so a vertex outside the range has no arcs."""
        return self.be.put(np.clip(np.asarray(offsets, np.int64) - a0, 0, a1 - a0), dtype)


def make_shards(devices, offsets, stats, vertex_cost=0, bounds=None):
    """One :class:`_Shard` per device over ranges of equal arc counts of CSR ``offsets`` (a vertex
    counting as ``vertex_cost`` arcs besides its own), or over the boundaries ``bounds``."""
    if bounds is None:
        bounds = shard_ranges(offsets, len(devices), vertex_cost)
    return [_Shard(d, bounds[i], bounds[i + 1], stats) for i, d in enumerate(devices)]


def parallel(shards, fn):
    """``fn(shard)`` for every shard, one host thread per GPU (in turn under the simulator)."""
    def run(s):
        with s.on():
            return fn(s)
    if shards[0].be.sim or len(shards) == 1:
        return [run(s) for s in shards]
    with executor(len(shards)) as pool:
        return list(pool.map(run, shards))


def gather_host(shards, arrs):
    """The shards' ranges of ``arrs`` copied into one host array (``bytes_d2h`` counted)."""
    out = np.empty(arrs[0].size, dtype=arrs[0].dtype)
    for s, a in zip(shards, arrs):
        if s.v1 == s.v0:
            continue
        with s.on():
            be = s.be
            if be.sim:
                out[s.v0:s.v1] = a[s.v0:s.v1]
            else:
                be.sync()
                t0 = time.perf_counter()
                a[s.v0:s.v1].get(out=out[s.v0:s.v1])
                be.stats["time_transfer"] += time.perf_counter() - t0
            be.stats["bytes_d2h"] += int((s.v1 - s.v0) * out.itemsize)
    return out


def heavy_host(graph, kind, offsets):
    """Vertices of degree >= HEAVY in CSR ``offsets`` (cached on the graph)."""
    from ....smx.cuda.common import HEAVY
    key = ("multi-gpu-heavy", kind, HEAVY)
    if key not in graph._cache:
        graph._cache[key] = np.flatnonzero(np.diff(offsets) >= HEAVY)
    return graph._cache[key]


def sync_all(shards):
    for s in shards:
        with s.on():
            s.be.sync()


_WORK = {}  # the kept work: {"graph": weakref, "devices": tuple, "shards": [dict per shard]}


def kept_work(graph, devices, keep=True):
    """(the per-shard work dicts kept by the last sharded linear run on ``graph`` and
    ``devices``, True), or (new ones, False); what was kept for another graph or GPUs is dropped
    first.  ``keep`` (:attr:`~.shard_settings.MultiGpuSettings.keep_work`): the new
    ones are kept for the next run; False drops what was kept and keeps nothing."""
    devices = tuple(devices)
    ref = _WORK.get("graph")
    if keep and ref is not None and ref() is graph and _WORK["devices"] == devices:
        return _WORK["shards"], True
    drop_work()
    shards = [{} for _ in devices]
    if keep:
        def collected(r):
            if _WORK.get("graph") is r:
                drop_work()
        _WORK.update(graph=weakref.ref(graph, collected), devices=devices, shards=shards)
    return shards, False


def drop_work():
    """Free the device vectors kept by the last sharded linear run
    (:attr:`~.shard_settings.MultiGpuSettings.keep_work`) and forget the prepared
    launches of its GPUs."""
    devices = _WORK.get("devices", ())
    _WORK.clear()
    for d in dict.fromkeys(devices):
        try:
            backend(d).release("sharded-linear")
        except Exception:  # pragma: no cover - at interpreter exit
            pass


def _arrays(d):
    """The device arrays among a dict's values (lists of them included)."""
    out = []
    for v in d.values():
        for a in (v if isinstance(v, (list, tuple)) else (v,)):
            if hasattr(a, "__cuda_array_interface__"):
                out.append(a)
    return out


def retain_shards(shards, keep):
    """End of a run: each GPU keeps the shards' work vectors and layouts registered, with the
    launches prepared for them (``keep``), or forgets them (and what no engine keeps)."""
    by = {}
    for s in shards:
        arrs = by.setdefault(id(s.be), (s.be, []))[1]
        if keep:
            arrs += _arrays(s.work) + _arrays(getattr(s, "lay", None) or {})
    for be, arrs in by.values():
        if keep:
            be.retain(arrs, "sharded-linear")
        else:
            be.release("sharded-linear")
