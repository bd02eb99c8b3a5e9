"""The sharded power iteration's packed exchange and the gather of its answer
(:mod:`digraph.dispatch.engines.power.gpus` runs the rounds).

A GPU's pull reads ``z`` only at the sources of its in-arcs.  When the pairs (vertex of range
``g``, another GPU ``h`` whose in-arcs read it) are few enough
(:attr:`~.gpu_settings.PowerGpuSettings.pack_share`), a round copies to each GPU
only the entries of the other ranges it reads: :func:`pack` makes the lists (on each GPU ``h``,
from its in-arcs' sources, the local indices of each other range it reads, copied once to the
range's GPU and concatenated into its send list) and keeps them with the work.  The GPU then
reads ``z`` in a compact vector, not a replica of all ``n`` entries (:func:`_compact`): the
entries it reads from range 0, from range 1, …, its own range among them in its place, so that
:func:`packed_into` copies each other GPU's entries straight into their place, with no scatter
and no host wait, and the pull reads its in-arcs' sources renumbered into that vector (kept with
the graph's arrays): the scatter into a replica is saved, and the SpMV takes the same time
with either numbering (``benchmarks/ab_compact_columns.py``; measured:
docs/history/benchmarks-notebook.md, "Several GPUs: the power iteration sharded").  Otherwise
(:func:`z_vectors`) each GPU holds a whole replica and the other ranges are copied whole.
:func:`gather` copies the answer's ranges into one host array, every GPU's copy queued before
any is waited for.
"""

import time

import numpy as np

__all__ = []


def pack(shards, ex, settings):
    """The packed exchange's lists and buffers: on each GPU ``h``, ``idx_of[g]`` (the local
    indices of range ``g`` its in-arcs read; their place in its ``z``: :func:`_compact`); on
    each GPU ``g``, ``send_idx`` (its lists for every other GPU, concatenated, at
    ``send_off[h]``) and ``send``.  Made once for the shards' ranges and kept with the work;
    returns the entries a round copies (the pairs)."""
    made_for = tuple((s.v0, s.v1) for s in shards)
    if all(t.w.get("packed_for") == made_for for t in shards):
        for t in shards:
            t.idx_of = t.w["idx_of"]
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
            t.idx_of = t.w["idx_of"] = {}
            for g, s in enumerate(shards):
                if g != h:
                    t.idx_of[g] = be.keep(xp.flatnonzero(mark[s.v0:s.v1]).astype(np.int32))
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
        t.w.update(idx_of=t.idx_of, send_idx=t.send_idx, send=t.send,
                   send_off=t.send_off, grid_pack=t.grid_pack, pairs=pairs)
    for t in shards:
        t.w["packed_for"] = made_for
    return pairs


def _compact(shards):
    """The compact ``z`` of each GPU ``h`` (the packed exchange's, module docstring): in the
    graph's arrays ``d["compact"]`` (made once for the shards' ranges), its in-arcs' sources
    renumbered into it (``src``, int32), a cuSPARSE matrix over them when the pull has one
    (sharing its row offsets and values), each range's ``base`` in it and its ``size``; in the
    work, the vector ``zc`` and its views: ``z_own`` (the GPU's range) and ``recv[g]`` (the
    entries of range ``g``, in the order of ``idx_of[g]``)."""
    made_for = tuple((s.v0, s.v1) for s in shards)
    for h, t in enumerate(shards):
        d, w = t.d, t.w
        c = d.get("compact")
        if c is None or c["for"] != made_for:
            with t.on():
                be, xp = t.be, t.be.xp
                parts = [xp.arange(t.v0, t.v1, dtype=np.int64) if g == h else
                         t.idx_of[g].astype(np.int64) + s.v0 for g, s in enumerate(shards)]
                sizes = [int(p.size) for p in parts]
                base = [int(b) for b in np.concatenate([[0], np.cumsum(sizes)])]
                kept = xp.concatenate(parts)  # increasing: the ranges are in order
                src = be.keep(xp.searchsorted(kept, d["src"]).astype(np.int32))
                del kept, parts
                c = {"for": made_for, "src": src, "base": base, "size": base[-1], "sparse": None}
                g_sparse = d.get("sparse")
                if g_sparse is not None:
                    import cupyx.scipy.sparse as csp
                    from ...runtime.cuda.spmv import SpMV
                    mat = csp.csr_matrix((g_sparse["coef"], src, d["off"]),
                                         shape=(t.v1 - t.v0, max(base[-1], 1)), copy=False)
                    mat.has_canonical_format = True  # the sources' order is kept
                    c["sparse"] = {"spmv": SpMV(mat), "mat": mat}
                d["compact"] = c
        if w.get("zc_for") != made_for:
            with t.on():
                zc = t.be.xp.empty(max(c["size"], 1), np.float64)
                b = c["base"]
                w.update(zc=zc, z_own=zc[b[h]:b[h + 1]], zc_for=made_for,
                         recv={g: zc[b[g]:b[g + 1]] for g in range(len(shards)) if g != h})
        t.z, t.z_own, t.recv = w["zc"], w["z_own"], w["recv"]
        t.pull_src = t.be.keep(c["src"])
        t.pull_sparse = None if d.get("sparse") is None else c["sparse"]


def z_vectors(shards, packed):
    """Each shard's ``z`` for the run, ``z_own = src_scale ∘ x`` (the start) in it, and what its
    pull reads: the compact vector (:func:`_compact`) when ``packed``, else a whole replica of
    ``n`` entries with the in-arcs' sources in the engine's numbering."""
    if packed:
        _compact(shards)
    n = shards[-1].v1
    for t in shards:
        if not packed:
            w = t.w
            if w.get("z") is None or w.get("zc_for") is not None:
                with t.on():
                    w["z"] = t.be.xp.empty(n, np.float64)
                w.update(z_own=w["z"][t.v0:t.v1], zc_for=None, zc=None, recv=None)
            t.z, t.z_own = w["z"], w["z_own"]
            t.pull_src, t.pull_sparse = t.d["src"], t.d.get("sparse")
        t.be.keep(t.z)
        t.be.keep(t.z_own)
        with t.switch():
            t.be.xp.multiply(t.src_scale, t.x, out=t.z_own)


def push_lists(shards):
    """For the packed exchange by peer writes (:func:`packed_push`): on each shard ``g``,
    ``push`` = [(h, its send list's part for ``h``, ``h``'s compact ``z`` at range ``g`` as an
    array of ``g``'s device, grid)], made once for the shards' compact vectors and kept with the
    work (registered with ``g``'s backend, so the launches are prepared)."""
    key = tuple((t.v0, t.v1, id(t.w["zc"])) for t in shards)
    for g, s in enumerate(shards):
        got = s.w.get("push")
        if got is None or got[0] != key:
            out = []
            with s.on():
                be, xp = s.be, s.be.xp
                for h, t in enumerate(shards):
                    cnt = int(t.idx_of[g].size) if h != g else 0
                    if not cnt:
                        continue
                    dst = t.recv[g]  # on GPU h, written by GPU g's kernel (peer access)
                    mem = xp.cuda.UnownedMemory(dst.data.ptr, 8 * cnt, dst, be.device_id)
                    view = xp.ndarray((cnt,), np.float64, xp.cuda.MemoryPointer(mem, 0))
                    idx = s.send_idx[s.send_off[h]:s.send_off[h + 1]]
                    out.append((h, be.keep(idx), be.keep(view),
                                max(1, min(be.grid_hb(cnt), 16 * be.sms))))
            s.w["push"] = got = (key, out)
        else:
            for _, idx, view, _ in got[1]:
                s.be.keep(idx)
                s.be.keep(view)
        s.push = got[1]


def packed_push(g, shards, K, HB):
    """The packed exchange out of shard ``g`` (its GPU current), queued on its stream after the
    round's ``z``: its entries each other GPU reads written by its own kernel straight into that
    GPU's compact ``z`` (peer access over NVLink), with no copy and no buffer; the receivers'
    pulls wait for ``g``'s event recorded after.  A GPU writes into another's ``z`` only after
    every GPU's pull of the round (a GPU's ``z`` of the next round follows every GPU's teleport,
    which follows every pull).  Against the packing into a buffer and the copies:
    docs/history/benchmarks-notebook.md, "Several GPUs: the power iteration sharded"."""
    s = shards[g]
    for h, idx, view, grid in s.push:
        s.be.launch(K.gather_at, grid, HB, s.z_own, idx, view, tag=(s.tag, 7, h))


def packed_into(h, shards, ex, ready):
    """The packed exchange into shard ``h`` (its GPU current), queued without a host wait: each
    other shard's entries of ``z`` that ``h`` reads (its send buffer's part for ``h``) copied
    straight into their place in ``h``'s compact ``z`` on stream ``lanes[g]`` once ``ready[g]``
    and ``ready[h]`` have happened; ``done[g]`` after."""
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
        t.done[g].record(lane)


def gather(shards, n, after, streams):
    """The shards' ranges of ``x`` copied into one host array: every GPU's copy queued first,
    from this one thread, on ``streams`` (one a shard) after its event in ``after`` (None: at
    once), then waited for, so the copies run at once, each over its own link, while the round
    queued past the stop runs; page-locked memory from CuPy's pool on GPUs, as one GPU's answer
    (:attr:`~digraph.dispatch.runtime.cuda.backend.BackendSettings.pinned_copy_bytes`).  A host
    thread a GPU, each copying synchronously, takes as long as one GPU's copy of the whole
    answer (docs/history/benchmarks-notebook.md, "Several GPUs: the power iteration sharded").

    With dealt blocks (:mod:`~.gpus_layout`) a GPU's range is spread over the answer: each GPU
    writes its entries where they belong in the graph's numbering straight into the page-locked
    answer (which every GPU can address), one scatter a GPU over its own link."""
    return gather_wait(shards, *gather_queue(shards, n, after, streams), streams)


def gather_queue(shards, n, after, streams):
    """The first half of :func:`gather`: every GPU's copy queued; returns (the host array, the
    shards that copy, the time queued).  Under the simulator the copies are done."""
    dealt = shards[0].layout.kind != "ranges"
    if shards[0].be.sim:
        out = np.empty(n, np.float64)
        for s in shards:
            if dealt:
                out[s.d["rows"]] = s.x
            else:
                out[s.v0:s.v1] = s.x
            s.be.stats["bytes_d2h"] += int(s.x.nbytes)
        return out, [], 0.0
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
    return out, busy, t0


def gather_wait(shards, out, busy, t0, streams):
    """The second half of :func:`gather`: the copies queued by :func:`gather_queue` waited
    for; returns the host array."""
    for i in busy:
        streams[i].synchronize()
        shards[i].be.stats["bytes_d2h"] += int(shards[i].x.nbytes)
    if busy:
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
