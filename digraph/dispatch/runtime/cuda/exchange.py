"""Transport between the shards' GPUs: :class:`Exchange` (all-gathers, all-reduces and whole
copies between the shards' full-length arrays, by peer-to-peer copies or NCCL, counting
``bytes_between_gpus``; a host copy under the simulator), the NCCL communicators created once per
set of GPUs (``_NCCL``) and the streams an overlapped exchange runs on (:func:`comm_stream`)."""

import numpy as np

from ....errors import InvalidParameterError, NotAvailableError
from ...settings import current
from .shard_settings import DEFAULT as MULTI_GPU
from .shards import sync_all

__all__ = ["EXCHANGES"]

EXCHANGES = ("p2p", "nccl")


_NCCL = {}
_PEERS = {}
"""(device, peer) pairs whose peer access was asked for in this process, and whether the device
can address the peer's memory: asked once a process, as asking costs a device switch and an
error raised a pair in every run's set-up."""


class Exchange:
    """All-gather (each shard's range into every other replica) and all-reduce (min/max of the
    replicas) between the shards' full-length arrays; counts ``bytes_between_gpus``."""

    def __init__(self, shards, kind, stats):
        self.shards = shards
        self.kind = kind
        self.stats = stats
        self.sim = shards[0].be.sim
        self.comms = None
        if self.sim:
            return
        import cupy
        self.rt = cupy.cuda.runtime
        ids = [s.be.device_id for s in shards]
        if kind == "p2p":
            for s in shards:
                todo = [t for t in shards if t is not s and
                        (s.be.device_id, t.be.device_id) not in _PEERS]
                if not todo:
                    continue
                with s.on():
                    for t in todo:
                        a, b = s.be.device_id, t.be.device_id
                        ok = a == b or bool(self.rt.deviceCanAccessPeer(a, b))
                        if ok and a != b:
                            try:
                                self.rt.deviceEnablePeerAccess(b)
                            except cupy.cuda.runtime.CUDARuntimeError:
                                pass  # already enabled
                        _PEERS[(a, b)] = ok
        elif kind == "nccl":
            try:
                from cupy.cuda import nccl
            except ImportError:
                raise NotAvailableError("exchange='nccl' needs CuPy built with NCCL") from None
            if not getattr(nccl, "available", True):
                raise NotAvailableError("exchange='nccl': CuPy's NCCL is not available here")
            self.nccl = nccl
            key = tuple(ids)
            if key not in _NCCL:  # a clique per set of devices, created once per process
                _NCCL[key] = nccl.NcclCommunicator.initAll(ids)
            self.comms = _NCCL[key]
        else:
            raise InvalidParameterError(f"exchange must be one of {EXCHANGES}, got {kind!r}")

    @property
    def peers(self):
        """Every shard's GPU can address every other one's memory (peer access enabled): kernels
        may write into another GPU's arrays.  False under the simulator and with NCCL."""
        if self.sim or self.kind != "p2p":
            return False
        return all(_PEERS.get((s.be.device_id, t.be.device_id), False)
                   for s in self.shards for t in self.shards if s is not t)

    def _count(self, arrs, slices):
        item = arrs[0].itemsize
        k = len(self.shards)
        self.stats["bytes_between_gpus"] += int(sum(sl * item for sl in slices) * (k - 1))

    def allgather(self, arrs, counts=None, streams=None):
        """Shard g's range of ``arrs[g]`` copied into every other ``arrs[h]``: the whole range,
        or its first ``counts[g]`` entries.  ``streams`` (NCCL only): one CuPy stream per GPU
        to run the exchange on instead of the default stream; the caller orders it."""
        sh = self.shards
        counts = [s.v1 - s.v0 for s in sh] if counts is None else [int(c) for c in counts]
        if len(sh) == 1:
            return
        self._count(arrs, counts)
        if self.sim:
            for g, s in enumerate(sh):
                for h in range(len(sh)):
                    if h != g:
                        arrs[h][s.v0:s.v0 + counts[g]] = arrs[g][s.v0:s.v0 + counts[g]]
            return
        item = arrs[0].itemsize
        if self.kind == "p2p":
            # a copy runs on its source's stream: every GPU must be done reading the
            # destinations (a pipelined round may still run on them)
            sync_all(sh)
            for g, s in enumerate(sh):
                nbytes = counts[g] * item
                if nbytes == 0:
                    continue
                with s.on():
                    for h, t in enumerate(sh):
                        if h != g:
                            off = s.v0 * item
                            self.rt.memcpyPeerAsync(arrs[h].data.ptr + off, t.be.device_id,
                                                    arrs[g].data.ptr + off, s.be.device_id,
                                                    nbytes, 0)
            # the copies run on the sources' streams: the destinations' next kernels wait here
            sync_all(sh)
        else:
            nc = self.nccl
            dt = _nccl_type(nc, arrs[0].dtype)
            # every rank takes the broadcasts in the same order (root 0, 1, ...), each GPU made
            # current once; NCCL's kernels run on the GPUs' streams after their earlier work
            nc.groupStart()
            for h, t in enumerate(sh):
                with t.on():
                    for g, s in enumerate(sh):
                        cnt = counts[g]
                        if cnt:
                            p = arrs[h].data.ptr + s.v0 * item
                            self.comms[h].broadcast(p, p, cnt, dt, g,
                                                    0 if streams is None else streams[h].ptr)
            nc.groupEnd()

    def lanes_into(self, h, arrs, counts, ready, lanes, done):
        """The part of an :meth:`allgather` by peer copies that lands on shard ``h`` (its GPU
        current), queued without a host wait: shard g's first ``counts[g]`` entries are copied
        into ``arrs[h]`` on stream ``lanes[g]`` (on GPU h) once events ``ready[g]`` (the source
        written) and ``ready[h]`` (the destination no longer read) have happened; ``done[g]`` is
        recorded after each copy.  The caller counts the bytes (:meth:`_count`)."""
        sh = self.shards
        t = sh[h]
        item = arrs[0].itemsize
        dst = arrs[h].data.ptr
        for g, s in enumerate(sh):
            if g == h:
                continue
            lane = lanes[g]
            lane.wait_event(ready[g])
            lane.wait_event(ready[h])
            if counts[g]:
                off = s.v0 * item
                self.rt.memcpyPeerAsync(dst + off, t.be.device_id, arrs[g].data.ptr + off,
                                        s.be.device_id, int(counts[g]) * item, lane.ptr)
            done[g].record(lane)

    def replicate(self, arrs):
        """``arrs[0]`` (on the first GPU) copied whole into every other ``arrs[h]``."""
        sh = self.shards
        self.stats["bytes_between_gpus"] += int(arrs[0].nbytes * (len(sh) - 1))
        if self.sim:
            for a in arrs[1:]:
                a[...] = arrs[0]
            return
        with sh[0].on():
            for h, t in enumerate(sh[1:], 1):
                self.rt.memcpyPeerAsync(arrs[h].data.ptr, t.be.device_id, arrs[0].data.ptr,
                                        sh[0].be.device_id, arrs[0].nbytes, 0)
        sync_all(sh)

    def allreduce(self, arrs, op, count=True):
        """Every ``arrs[h]`` replaced by the elementwise ``op`` ("min", "max" or "sum") of all
        (``count``: add the bytes to ``bytes_between_gpus``; set-up exchanges are not)."""
        sh = self.shards
        n = arrs[0].size
        k = len(sh)
        before = self.stats["bytes_between_gpus"]
        try:
            self._allreduce(arrs, op, sh, n, k)
        finally:
            if not count:
                self.stats["bytes_between_gpus"] = before

    def _allreduce(self, arrs, op, sh, n, k):
        self.stats["bytes_between_gpus"] += int(2 * n * arrs[0].itemsize * (k - 1))
        if self.sim:
            f = {"min": np.minimum, "max": np.maximum, "sum": np.add}[op]
            red = f.reduce(np.stack(arrs), axis=0)
            for a in arrs:
                a[...] = red
            return
        if self.kind == "nccl":
            nc = self.nccl
            dt = _nccl_type(nc, arrs[0].dtype)
            o = {"min": nc.NCCL_MIN, "max": nc.NCCL_MAX, "sum": nc.NCCL_SUM}[op]
            nc.groupStart()
            for h, t in enumerate(sh):
                with t.on():
                    p = arrs[h].data.ptr
                    self.comms[h].allReduce(p, p, n, dt, o, 0)
            nc.groupEnd()
            return
        # p2p: the other replicas' slices of a range gathered on its owner (on the owner's
        # stream, after every GPU's kernels), reduced there, and gathered back
        item = arrs[0].itemsize
        sync_all(sh)
        for h, t in enumerate(sh):
            cnt = t.v1 - t.v0
            if cnt == 0:
                continue
            with t.on():
                xp = t.be.xp
                stage = xp.empty((k, cnt), arrs[h].dtype)
                for g, s in enumerate(sh):
                    if g != h:
                        self.rt.memcpyPeerAsync(stage[g].data.ptr, t.be.device_id,
                                                arrs[g].data.ptr + t.v0 * item, s.be.device_id,
                                                cnt * item, 0)
                stage[h] = arrs[h][t.v0:t.v1]
                arrs[h][t.v0:t.v1] = (stage.min(axis=0) if op == "min" else
                                      stage.max(axis=0) if op == "max" else stage.sum(axis=0))
        self.stats["bytes_between_gpus"] -= int(n * item * (k - 1))  # counted again below
        self.allgather(arrs)

    def close(self):
        self.comms = None


def _nccl_type(nc, dtype):
    dtype = np.dtype(dtype)
    table = {np.dtype(np.float64): nc.NCCL_FLOAT64, np.dtype(np.int64): nc.NCCL_INT64,
             np.dtype(np.uint8): nc.NCCL_UINT8, np.dtype(np.int32): nc.NCCL_INT32}
    return table[dtype]


def comm_stream(xp, priority=None):
    """A non-blocking CuPy stream for the exchange, of ``priority`` (default
    :attr:`~.shard_settings.MultiGpuSettings.comm_priority` of
    :data:`~.shard_settings.DEFAULT`)."""
    priority = current(MULTI_GPU).comm_priority if priority is None else priority
    try:
        return xp.cuda.Stream(non_blocking=True, priority=priority)
    except TypeError:  # a CuPy without stream priorities
        return xp.cuda.Stream(non_blocking=True)
