"""The sharded power iteration's work kept between runs
(:mod:`digraph.dispatch.engines.power.gpus` runs the rounds).

A run's device vectors on each GPU (``x``, ``y``, the replica of ``z``, the teleport vector and the
scales, the accumulators, Anderson's rings), the packed exchange's lists (which entries of ``z``
each GPU reads from each other range) and buffers, and the rounds' streams, events and page-locked
buffers are kept on the graph for the next run on the same GPUs, ranges and settings
(:func:`kept_work`; one entry of kind ``"multi-gpu-power-work"`` in the graph's
:class:`~digraph.dispatch.runtime.cuda.residency.Residency`), when they take at most
:attr:`~.gpu_settings.PowerGpuSettings.shard_keep_work_bytes` a GPU.  The teleport vector and the
scales are made again only when the system's vectors are not those of the last run
(:func:`~digraph.dispatch.runtime.cuda.common._vector_key`).
"""

import atexit
import weakref

import numpy as np

from .gpu_work import Work
from ...runtime.cuda.residency import residency

__all__ = []


def allocate(be, w, n, v0, v1, mem):
    """A shard's run vectors into ``w``: ``x``, ``y``, the vertex factors and Anderson's rings of
    its range and the accumulators (``z``: :func:`~.gpus_exchange._z_vectors`)."""
    xp = be.xp
    nl = v1 - v0
    for name in ("x", "y", "tele", "src_scale", "dst_scale"):
        w[name] = xp.empty(nl, np.float64)
    width = 5 + 2 * mem  # the pull's and teleport's sums, Anderson's dots, Σ of a mix
    w["accbuf"] = xp.zeros(2 * width, np.float64)
    w["acc"] = [w["accbuf"][0:width], w["accbuf"][width:2 * width]]
    w["no_coef"] = xp.zeros(1, np.float64)
    if mem:
        w["dF"] = xp.zeros((mem, nl), np.float64)
        w["dG"] = xp.zeros((mem, nl), np.float64)
        w["fprev"] = xp.empty(nl, np.float64)
        w["gprev"] = xp.empty(nl, np.float64)


def _work_bytes(n, nl, mem, k):
    """An upper bound of the bytes :func:`allocate`, the packed exchange
    (:func:`~.gpus_exchange._pack`) and the queued rounds (:mod:`~.gpus_queued`) take for a
    shard of ``nl`` of the ``n`` vertices among ``k``: ``z``; six vectors of the range (five,
    the queued rounds' second ``y``); Anderson's ``2m + 2``; the lists and buffers of the entries
    it reads from the other ranges (12 bytes a vertex at most) and of those it sends (12 bytes a
    vertex and destination at most)."""
    return (8 * n + 12 * (n - nl) + 8 * nl * (6 + (2 * mem + 2 if mem else 0))
            + 12 * (k - 1) * nl + 8192)


_KIND = "multi-gpu-power-work"  # in the graph's residency, key None: {"sig": ..., "works": [...]}

_KEPT = []
"""Weak references to the kept per-shard work that holds CUDA streams, events and page-locked
buffers: dropped at exit before CUDA's own teardown (as :data:`~digraph.dispatch.engines.power.gpu.
_KEPT_GRAPHS`)."""


@atexit.register
def _drop_kept_cuda():
    for ref in _KEPT:
        w = ref()
        if w is not None:
            _drop_cuda(w)
    _KEPT.clear()
    import gc
    gc.collect()


def _drop_cuda(w):
    q = w.pop("queued", None)  # the queued rounds' arrays, streams and events (power_queued)
    cu = None if q is None else q.get("cuda")
    if cu is not None:
        try:
            for lane in cu.get("lanes", ()):
                lane.synchronize()
        except Exception:  # pragma: no cover - at interpreter exit
            pass
        cu.clear()


def kept_work(graph, shards, sig, settings, mem):
    """(a :class:`~.gpu_work.Work` per shard, kept, reused): the work the last
    run on ``graph`` kept when it ran with the same signature ``sig`` (GPUs, ranges, settings,
    Anderson's memory), else new ones, kept on the graph for the next run when every GPU's share
    takes at most :attr:`PowerGpuSettings.shard_keep_work_bytes` (what was kept before is dropped
    either way)."""
    res = residency(graph)
    rec = res.peek(_KIND, None)
    if rec is not None and rec["sig"] == sig:
        return rec["works"], True, True
    if rec is not None:
        res.forget(_KIND)
        for w in rec["works"]:
            _drop_cuda(w)
    n = graph.num_vertices
    per_gpu = {}
    for s in shards:
        key = (s.be.device_id, s.be.sim)
        per_gpu[key] = per_gpu.get(key, 0) + _work_bytes(n, s.v1 - s.v0, mem, len(shards))
    kept = max(per_gpu.values()) <= settings.shard_keep_work_bytes
    works = [Work() for _ in shards]
    if kept:
        res.put(_KIND, None, {"sig": sig, "works": works})
        _KEPT[:] = [r for r in _KEPT if r() is not None]
        _KEPT.extend(weakref.ref(w) for w in works)
    return works, kept, False


def forget_work(graph, works):
    """Drop the kept work ``works`` from the graph (a run that failed part-way)."""
    res = residency(graph, create=False)
    rec = None if res is None else res.peek(_KIND, None)
    if rec is not None and rec["works"] is works:
        res.forget(_KIND)
    for w in works:
        _drop_cuda(w)


def device_arrays(obj):
    """The device arrays among a work dict's values, in lists and dicts too (none under the
    simulator, whose arrays need no registering)."""
    out = []
    if isinstance(obj, dict):
        obj = obj.values()
    for v in obj:
        if isinstance(v, (list, tuple, dict)):
            out += device_arrays(v)
        elif hasattr(v, "__cuda_array_interface__"):
            out.append(v)
    return out


def work_arrays(w):
    """:func:`device_arrays` of the work ``w``, kept in ``w`` (entry ``"_arrays"``) while its
    entries are the same objects: a run asks for them twice (registering them at the start,
    retaining them at the end), and the work's nested entries are walked once.  Measured:
    docs/history/docstring-measurements.md,
    "digraph.dispatch.engines.power.gpus_work.work_arrays"."""
    vals = tuple(v for k, v in w.items() if k != "_arrays")
    got = w.get("_arrays")
    if got is None or len(got[0]) != len(vals) or any(a is not b for a, b in zip(got[0], vals)):
        got = w["_arrays"] = (vals, device_arrays(vals))  # holds the entries: no id reused
    return got[1]
