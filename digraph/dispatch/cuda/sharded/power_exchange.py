"""The sharded power iteration's packed exchange and the gather of its answer
(:mod:`digraph.dispatch.multi_gpu_power` runs the rounds).

A GPU's pull reads ``z`` only at the sources of its in-arcs.  When the pairs (vertex of range
``g``, another GPU ``h`` whose in-arcs read it) are few enough
(:attr:`~digraph.dispatch.gpu_power.PowerGpuSettings.pack_share`), a round copies to each GPU
only the entries of the other ranges it reads: :func:`_pack` makes the lists (on each GPU ``h``,
from its in-arcs' sources, the local indices of each other range it reads, copied once to the
range's GPU and concatenated into its send list) and keeps them with the work;
:func:`_packed_into` queues the copies into one GPU and their scatter on its copy streams, with
no host wait.  The other entries of a replica of ``z`` are never read.  :func:`_gather` copies
the answer's ranges into one host array, every GPU's copy queued before any is waited for.
"""

import time

import numpy as np

__all__ = []


def _pack(shards, ex, settings):
    """The packed exchange's lists and buffers: on each GPU ``h``, ``idx_of[g]`` (the local
    indices of range ``g`` its in-arcs read) and a receive buffer ``recv[g]`` for each other
    range; on each GPU ``g``, ``send_idx`` (its lists for every other GPU, concatenated, at
    ``send_off[h]``) and ``send``.  Made once for the shards' ranges and kept with the work;
    returns the entries a round copies (the pairs)."""
    made_for = tuple((s.v0, s.v1) for s in shards)
    if all(t.w.get("packed_for") == made_for for t in shards):
        for t in shards:
            t.idx_of, t.recv = t.w["idx_of"], t.w["recv"]
            t.send_idx, t.send, t.send_off = t.w["send_idx"], t.w["send"], t.w["send_off"]
            t.grid_pack = t.w["grid_pack"]
        return shards[0].w["pairs"]
    k = len(shards)
    n = shards[-1].v1
    for t in shards:
        t.w["packed_for"] = None  # until every list is in place
    for h, t in enumerate(shards):
        with t.on():
            be, xp = t.be, t.be.xp
            mark = xp.zeros(n, np.bool_)
            mark[t.d["src"]] = True  # the sources of its in-arcs, in global numbering
            t.idx_of, t.recv = t.w["idx_of"], t.w["recv"] = {}, {}
            for g, s in enumerate(shards):
                if g != h:
                    idx = xp.flatnonzero(mark[s.v0:s.v1]).astype(np.int32)
                    t.idx_of[g] = be.keep(idx)
                    t.recv[g] = be.keep(xp.empty(max(int(idx.size), 1), np.float64))
            del mark
    pairs = 0
    for g, s in enumerate(shards):
        with s.on():
            be, xp = s.be, s.be.xp
            sizes = [0 if h == g else int(t.idx_of[g].size) for h, t in enumerate(shards)]
            off = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
            pairs += int(off[-1])
            s.send_idx = be.keep(xp.empty(int(off[-1]), np.int32))
            s.send = be.keep(xp.empty(max(int(off[-1]), 1), np.float64))
            s.send_off = [int(o) for o in off]
            s.grid_pack = max(1, min(be.grid_hb(int(off[-1])), settings.blocks_per_sm * be.sms))
            for h, t in enumerate(shards):
                if h == g or not sizes[h]:
                    continue
                if be.sim:
                    s.send_idx[off[h]:off[h + 1]] = t.idx_of[g]
                else:
                    t.be.sync()
                    ex.rt.memcpyPeer(s.send_idx.data.ptr + 4 * int(off[h]), be.device_id,
                                     t.idx_of[g].data.ptr, t.be.device_id, 4 * sizes[h])
    for t in shards:
        t.w.update(idx_of=t.idx_of, recv=t.recv, send_idx=t.send_idx, send=t.send,
                   send_off=t.send_off, grid_pack=t.grid_pack, pairs=pairs)
    for t in shards:
        t.w["packed_for"] = made_for
    return pairs


def _packed_into(h, shards, ex, K, HB, ready):
    """The packed exchange into shard ``h`` (its GPU current), queued without a host wait: each
    other shard's entries of ``z`` that ``h`` reads (its send buffer's part for ``h``) copied
    into a buffer on stream ``lanes[g]`` once ``ready[g]`` and ``ready[h]`` have happened, then
    put in place there; ``done[g]`` after."""
    t = shards[h]
    for g, s in enumerate(shards):
        if g == h:
            continue
        lane = t.lanes[g]
        lane.wait_event(ready[g])
        lane.wait_event(ready[h])
        cnt = int(t.idx_of[g].size)
        if cnt:
            ex.rt.memcpyPeerAsync(t.recv[g].data.ptr, t.be.device_id,
                                  s.send.data.ptr + 8 * s.send_off[h], s.be.device_id, cnt * 8,
                                  lane.ptr)
            grid = max(1, min(t.be.grid_hb(cnt), 16 * t.be.sms))
            t.be.launch(K.scatter_at, grid, HB, t.recv[g], t.idx_of[g], s.v0, t.z, stream=lane,
                        tag=(t.tag, 6, g))
        t.done[g].record(lane)


def _gather(shards, n, after, streams):
    """The shards' ranges of ``x`` copied into one host array: every GPU's copy queued first,
    from this one thread, on ``streams`` (one a shard) after its event in ``after`` (None: at
    once), then waited for, so the copies run at once, each over its own link, while the round
    queued past the stop runs; page-locked memory from CuPy's pool on GPUs, as one GPU's answer
    (:attr:`~digraph.dispatch.cuda.runtime.backend.BackendSettings.pinned_copy_bytes`).  A host
    thread a GPU, each copying synchronously, moved R-MAT 2^25's 256 MiB from four H200s in
    4.3–4.6 ms, the time of one GPU's copy of it all (5.0 ms).

    With dealt blocks (:mod:`.power_layout`) a GPU's range is spread over the answer: each GPU
    writes its entries where they belong in the graph's numbering straight into the page-locked
    answer (which every GPU can address), one scatter a GPU over its own link."""
    dealt = shards[0].layout.kind != "ranges"
    if shards[0].be.sim:
        out = np.empty(n, np.float64)
        for s in shards:
            if dealt:
                out[s.d["rows"]] = s.x
            else:
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
            if after is not None:
                streams[i].wait_event(after[i])
            if dealt:
                _scatter_to_host(s, out, streams[i])
            else:
                s.x.get(out=out[s.v0:s.v1], blocking=False, stream=streams[i])
    for i in busy:
        streams[i].synchronize()
        shards[i].be.stats["bytes_d2h"] += int(shards[i].x.nbytes)
    shards[0].be.stats["time_transfer"] += time.perf_counter() - t0
    return out


def _scatter_to_host(s, out, stream):
    """``out[rows] = x`` of shard ``s`` by its GPU (its device current), ``out`` page-locked host
    memory addressed from the GPU (unified addressing), on ``stream``."""
    xp = s.be.xp
    mem = xp.cuda.UnownedMemory(out.ctypes.data, out.nbytes, out, s.be.device_id)
    dst = xp.ndarray(out.shape, out.dtype, xp.cuda.MemoryPointer(mem, 0))
    with stream:
        dst[s.d["rows"]] = s.x
