"""The sharded power iteration's packed exchange and the gather of its answer
(:mod:`digraph.dispatch.multi_gpu_power` runs the rounds).

When the shards' lists of ``z``'s non-zero entries are short enough
(:attr:`~digraph.dispatch.gpu_power.PowerGpuSettings.pack_share`), a round copies only those
entries of each range to the other GPUs: :func:`_pack` sets up the send buffers and each GPU's
copy of the other ranges' lists (kept with the work,
:mod:`digraph.dispatch.cuda.sharded.power_work`), :func:`_packed_into` queues the copies into
one GPU and their scatter on its copy streams, with no host wait.  :func:`_gather` copies the
answer's ranges into one host array, every GPU's copy queued before any is waited for.
"""

import time

import numpy as np

__all__ = []


def _pack(shards, ex, settings):
    """Set up the packed exchange: each GPU's send buffer, and on every GPU the other ranges'
    lists of non-zero entries (copied once) with a buffer for each; kept with the work while the
    lists are those they were made for (``nz_version``,
    :func:`~digraph.dispatch.cuda.sharded.power_arrays._shard_arrays`)."""
    made_for = tuple(s.w["nz_version"] for s in shards)
    for s in shards:
        be = s.be
        s.grid_pack = max(1, min(be.grid_hb(s.nz.size), settings.blocks_per_sm * be.sms))
    if all(t.w.get("packed_for") == made_for for t in shards):
        for t in shards:
            t.send, t.nz_of, t.recv = t.w["send"], t.w["nz_of"], t.w["recv"]
        return
    for s in shards:
        s.w["packed_for"] = None  # until every list is in place
        with s.on():
            be = s.be
            s.send = s.w["send"] = be.keep(be.xp.empty(max(int(s.nz.size), 1), np.float64))
    for h, t in enumerate(shards):
        with t.on():
            be, xp = t.be, t.be.xp
            t.nz_of, t.recv = t.w["nz_of"], t.w["recv"] = {}, {}
            for g, s in enumerate(shards):
                if g == h:
                    continue
                size = max(int(s.nz.size), 1)
                t.nz_of[g] = be.keep(xp.empty(size, np.int32))
                t.recv[g] = be.keep(xp.empty(size, np.float64))
                if be.sim:
                    t.nz_of[g][:s.nz.size] = s.nz
                elif s.nz.size:
                    s.be.sync()
                    ex.rt.memcpyPeer(t.nz_of[g].data.ptr, be.device_id, s.nz.data.ptr,
                                     s.be.device_id, int(s.nz.nbytes))
    for t in shards:
        t.w["packed_for"] = made_for


def _packed_into(h, shards, ex, K, HB, ready):
    """The packed exchange into shard ``h`` (its GPU current), queued without a host wait: each
    other shard's non-zero entries of ``z`` copied into a buffer on stream ``lanes[g]`` once
    ``ready[g]`` and ``ready[h]`` have happened, then put in place there; ``done[g]`` after."""
    t = shards[h]
    for g, s in enumerate(shards):
        if g == h:
            continue
        lane = t.lanes[g]
        lane.wait_event(ready[g])
        lane.wait_event(ready[h])
        cnt = int(s.nz.size)
        if cnt:
            ex.rt.memcpyPeerAsync(t.recv[g].data.ptr, t.be.device_id, s.send.data.ptr,
                                  s.be.device_id, cnt * 8, lane.ptr)
            grid = max(1, min(t.be.grid_hb(cnt), 16 * t.be.sms))
            t.be.launch(K.scatter_at, grid, HB, t.recv[g], t.nz_of[g], s.v0, t.z, stream=lane,
                        tag=(t.tag, 6, g))
        t.done[g].record(lane)


def _gather(shards, n, after=None, streams=None):
    """The shards' ranges of ``x`` copied into one host array: every GPU's copy queued first,
    from this one thread, then waited for, so the copies run at once, each over its own link;
    page-locked memory from CuPy's pool on GPUs, as one GPU's answer
    (:attr:`~digraph.dispatch.cuda.runtime.backend.BackendSettings.pinned_copy_bytes`).  A host
    thread a GPU, each copying synchronously, moved R-MAT 2^25's 256 MiB from four H200s in
    4.3–4.6 ms, the time of one GPU's copy of it all (5.0 ms).  ``streams`` (one a shard): the
    copies go there, each after its shard's event in ``after`` (the queued rounds: the answer
    leaves while the round queued past the stop runs); else on the rounds' stream."""
    if shards[0].be.sim:
        out = np.empty(n, np.float64)
        for s in shards:
            out[s.v0:s.v1] = s.x
            s.be.stats["bytes_d2h"] += int(s.x.nbytes)
        return out
    import cupyx
    out = cupyx.empty_pinned(n, np.float64)
    t0 = time.perf_counter()
    busy = [i for i, s in enumerate(shards) if s.v1 > s.v0]
    for i in busy:
        s = shards[i]
        with s.switch():
            stream = None if streams is None else streams[i]
            if stream is not None and after is not None:
                stream.wait_event(after[i])
            s.x.get(out=out[s.v0:s.v1], blocking=False, stream=stream)
    for i in busy:
        s = shards[i]
        with s.switch():
            (s.be.xp.cuda.get_current_stream() if streams is None else streams[i]).synchronize()
        s.be.stats["bytes_d2h"] += int(s.x.nbytes)
    shards[0].be.stats["time_transfer"] += time.perf_counter() - t0
    return out
