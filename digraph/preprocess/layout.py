"""Storage layout of the paths: the paths copied straight into the storage order of
:mod:`.partition` (by SCC-vertex, hot first, then by tail vertex) and their per-path labels, with
no permutation gathered by path.  The slots come from two stable counting sorts (by tail vertex,
then by bucket ``2 * scc + cold``: :func:`_counting_order`) or from an LSD radix sort of (key,
path) records (:func:`_radix_order`), the sorts split into chunks of consecutive paths; then
``jobs`` threads copy the paths to their slots (:func:`storage_layout`)."""

import numpy as np
from numba import njit

from ._parallel import workspace_or_numpy

__all__ = ["storage_layout"]


def _index_dtype(count):
    """int32 when every index below ``count`` fits, else int64 (halves the traffic of
    temporaries)."""
    return np.int32 if count < 2**31 - 1 else np.int64


@njit(cache=True, nogil=True)
def _tail_hist(path_offsets, path_vertices, lo, hi, cnt):
    """Histogram of the tail vertices of paths lo..hi-1 into ``cnt`` (n entries)."""
    for p in range(lo, hi):
        cnt[path_vertices[path_offsets[p + 1] - 1]] += 1


@njit(cache=True, nogil=True)
def _chunk_starts(cnt):
    """Counts ``cnt[c, k]`` of chunk ``c`` and key ``k`` become the first position of those items in
    a stable counting sort (keys ascending; for one key, the items of lower chunks first)."""
    T, K = cnt.shape
    pos = 0
    for k in range(K):
        for c in range(T):
            x = cnt[c, k]
            cnt[c, k] = pos
            pos += x


@njit(cache=True, nogil=True)
def _by_tail_scatter(path_offsets, path_vertices, path_scc, hot, lo, hi, start, o_p, o_b, o_l):
    """First counting sort (by tail vertex) of paths lo..hi-1: each path's id, bucket
    ``2 * scc + cold`` and vertex count travel together, so the second sort reads sequentially."""
    for p in range(lo, hi):
        s = path_offsets[p]
        e = path_offsets[p + 1]
        t = path_vertices[e - 1]
        k = start[t]
        start[t] = k + 1
        o_p[k] = p
        o_b[k] = 2 * path_scc[p] + (0 if hot[p] else 1)
        o_l[k] = e - s


@njit(cache=True, nogil=True)
def _bucket_hist(o_b, o_l, lo, hi, cnt, vcnt):
    for i in range(lo, hi):
        b = o_b[i]
        cnt[b] += 1
        vcnt[b] += o_l[i]


@njit(cache=True, nogil=True)
def _bucket_starts(cnt, vcnt, bucket_off):
    """:func:`_chunk_starts` for the buckets, for path slots and vertex offsets at once;
    ``bucket_off`` gets the first slot of every bucket (and P at the end)."""
    T, K = cnt.shape
    pos = 0
    vpos = 0
    for k in range(K):
        bucket_off[k] = pos
        for c in range(T):
            x = cnt[c, k]
            cnt[c, k] = pos
            pos += x
            y = vcnt[c, k]
            vcnt[c, k] = vpos
            vpos += y
    bucket_off[K] = pos


@njit(cache=True, nogil=True)
def _by_bucket_place(o_p, o_b, o_l, lo, hi, start, vstart, slot, voff, noff):
    """Second counting sort (by bucket) of positions lo..hi-1 of the first: slot and new vertex
    offset of every path (scattered by path id, read back sequentially by the copy)."""
    for i in range(lo, hi):
        p = o_p[i]
        b = o_b[i]
        k = start[b]
        start[b] = k + 1
        vp = vstart[b]
        vstart[b] = vp + o_l[i]
        slot[p] = k
        voff[p] = vp
        noff[k] = vp


@njit(cache=True, nogil=True)
def _layout_scatter(path_offsets, path_vertices, path_arc_ids, path_heat, slot, voff, nv, na, nheat,
                    lo, hi):
    """Copy paths lo..hi-1 to their storage positions (sequential reads, scattered writes)."""
    for p in range(lo, hi):
        a = path_offsets[p]
        ln = path_offsets[p + 1] - a
        k = slot[p]
        b = voff[p]
        for j in range(ln):
            nv[b + j] = path_vertices[a + j]
        aa = a - p
        bb = b - k
        for j in range(ln - 1):
            na[bb + j] = path_arc_ids[aa + j]
        nheat[k] = path_heat[p]


@njit(cache=True, nogil=True)
def _layout_fill(bucket_off, num_scc, scc_layer, path_scc, path_hot, path_layer):
    for s in range(num_scc):
        a = bucket_off[2 * s]
        m = bucket_off[2 * s + 1]
        e = bucket_off[2 * s + 2]
        ly = scc_layer[s]
        for i in range(a, e):
            path_scc[i] = s
            path_layer[i] = ly
        for i in range(a, m):
            path_hot[i] = True
        for i in range(m, e):
            path_hot[i] = False


@njit(cache=True, nogil=True)
def _layout_records(path_offsets, path_vertices, path_scc, hot, lo, hi, tbits, keys, vals):
    """Sort records of paths lo..hi-1: key = (2 * scc + cold) << tbits | tail vertex, value =
    path id << 32 | vertex count (so ties keep path order in a stable sort)."""
    for p in range(lo, hi):
        s = path_offsets[p]
        e = path_offsets[p + 1]
        b = 2 * np.int64(path_scc[p]) + (0 if hot[p] else 1)
        keys[p] = (b << tbits) | np.int64(path_vertices[e - 1])
        vals[p] = (np.int64(p) << 32) | (e - s)


@njit(cache=True, nogil=True)
def _digit_hist(keys, lo, hi, shift, cnt):
    for i in range(lo, hi):
        cnt[(keys[i] >> shift) & 2047] += 1


@njit(cache=True, nogil=True)
def _digit_scatter(keys, vals, lo, hi, shift, start, okeys, ovals):
    for i in range(lo, hi):
        k = keys[i]
        d = (k >> shift) & 2047
        j = start[d]
        start[d] = j + 1
        okeys[j] = k
        ovals[j] = vals[i]


@njit(cache=True, nogil=True)
def _len_sums(vals, lo, hi):
    s = 0
    for i in range(lo, hi):
        s += vals[i] & 0xFFFFFFFF
    return s


@njit(cache=True, nogil=True)
def _radix_place(keys, vals, tbits, lo, hi, v0, slot, voff, noff, bucket_of):
    """Slots lo..hi-1 of the sorted records: new offsets, and slot / vertex offset by path id."""
    vp = v0
    for i in range(lo, hi):
        x = vals[i]
        p = x >> 32
        noff[i] = vp
        slot[p] = i
        voff[p] = vp
        bucket_of[i] = keys[i] >> tbits
        vp += x & 0xFFFFFFFF


@njit(cache=True, nogil=True)
def _bucket_bounds(bucket_of, nb, bucket_off):
    """First slot of every bucket (buckets ascending along the slots), P at the end."""
    P = bucket_of.size
    b = 0
    for i in range(P):
        while b <= bucket_of[i]:
            bucket_off[b] = i
            b += 1
    while b <= nb:
        bucket_off[b] = P
        b += 1


def _radix_order(path_offsets, path_vertices, path_scc, num_scc, hot, num_vertices, jobs, ws,
                 chunks, idx):
    """Slots by an LSD radix sort of (key, path) records, key = (2 * scc + cold) << tbits | tail:
    11-bit digits, each pass a sequential read and 2,048 sequential write streams (cache and TLB
    friendly), where a counting sort over n tails or 2S buckets scatters at random.  Fills
    Returns (slot, voff, noff, bucket offsets); the slot arrays are taken from ``ws`` only once
    the sort's second pair of record buffers is released (a lower peak)."""
    from ._parallel import run_parallel
    P = path_offsets.size - 1
    nb = 2 * int(num_scc)
    tbits = max(1, int(num_vertices - 1).bit_length())
    kbits = tbits + max(1, int(nb).bit_length())
    T = len(chunks)
    keys = ws.empty(P, np.int64)
    vals = ws.empty(P, np.int64)
    run_parallel(_layout_records,
                 [(path_offsets, path_vertices, path_scc, hot, lo, hi, np.int64(tbits), keys, vals)
                  for lo, hi in chunks], jobs)
    k2 = ws.empty(P, np.int64)
    v2 = ws.empty(P, np.int64)
    for shift in range(0, kbits, 11):
        cnt = np.zeros((T, 2048), dtype=np.int64)
        run_parallel(_digit_hist,
                     [(keys, lo, hi, np.int64(shift), cnt[c]) for c, (lo, hi) in enumerate(chunks)],
                     jobs)
        if (cnt.sum(axis=0) == P).any():
            continue                                   # one digit value everywhere: nothing moves
        _chunk_starts(cnt)
        run_parallel(_digit_scatter, [(keys, vals, lo, hi, np.int64(shift), cnt[c], k2, v2)
                                      for c, (lo, hi) in enumerate(chunks)], jobs)
        keys, k2 = k2, keys
        vals, v2 = v2, vals
    ws.release(k2, v2)
    del k2, v2
    sums = run_parallel(_len_sums, [(vals, lo, hi) for lo, hi in chunks], jobs)
    v0 = np.concatenate([[0], np.cumsum(sums)[:-1]]).astype(np.int64)
    slot, voff, noff = _slot_arrays(ws, P, idx, path_offsets)
    bucket_of = keys          # in place: slot i's key is read just before it is overwritten
    run_parallel(_radix_place,
                 [(keys, vals, np.int64(tbits), lo, hi, np.int64(v0[c]), slot, voff, noff,
                   bucket_of)
                  for c, (lo, hi) in enumerate(chunks)], jobs)
    bucket_off = np.empty(nb + 1, dtype=np.int64)
    _bucket_bounds(bucket_of, np.int64(nb), bucket_off)
    ws.release(keys, vals)
    return slot, voff, noff, bucket_off


def _slot_arrays(ws, P, idx, path_offsets):
    slot = ws.empty(P, idx)
    voff = ws.empty(P, np.int64)
    noff = ws.empty(P + 1, np.int64, keep=True)
    noff[P] = path_offsets[P]
    return slot, voff, noff


def _counting_order(path_offsets, path_vertices, path_scc, num_scc, hot, num_vertices, jobs, ws,
                    chunks, idx):
    """Slots by two stable counting sorts, by tail vertex then by bucket 2 * scc + cold, each split
    into chunks of consecutive items (per-chunk histograms; for equal keys chunk c's items go after
    chunk c-1's), so the order is the same for any number of chunks.  Returns the bucket offsets."""
    from ._parallel import run_parallel
    P = path_offsets.size - 1
    nb = 2 * int(num_scc)
    T = len(chunks)
    cnt = ws.full((T, num_vertices), 0, np.int64)
    run_parallel(_tail_hist,
                 [(path_offsets, path_vertices, lo, hi, cnt[c])
                  for c, (lo, hi) in enumerate(chunks)], jobs)
    _chunk_starts(cnt)
    o_p, o_b, o_l = (ws.empty(P, idx) for _ in range(3))
    run_parallel(_by_tail_scatter,
                 [(path_offsets, path_vertices, path_scc, hot, lo, hi, cnt[c], o_p, o_b, o_l)
                  for c, (lo, hi) in enumerate(chunks)], jobs)
    ws.release(cnt)
    del cnt
    bcnt = ws.full((T, nb), 0, np.int64)
    vcnt = ws.full((T, nb), 0, np.int64)
    run_parallel(_bucket_hist,
                 [(o_b, o_l, lo, hi, bcnt[c], vcnt[c]) for c, (lo, hi) in enumerate(chunks)], jobs)
    bucket_off = np.empty(nb + 1, dtype=np.int64)
    _bucket_starts(bcnt, vcnt, bucket_off)
    slot, voff, noff = _slot_arrays(ws, P, idx, path_offsets)
    run_parallel(_by_bucket_place, [(o_p, o_b, o_l, lo, hi, bcnt[c], vcnt[c], slot, voff, noff)
                                    for c, (lo, hi) in enumerate(chunks)], jobs)
    ws.release(o_p, o_b, o_l, bcnt, vcnt)
    return slot, voff, noff, bucket_off


def storage_layout(path_offsets, path_vertices, path_arc_ids, path_heat, path_scc, num_scc, hot,
                   scc_layer, num_vertices, jobs=1, ws=None, method=None, consume=False,
                   sort_chunks=None):
    """Paths in storage order (the order of :func:`.partition.storage_order`) without gathering by
    path.

    ``method``: ``"radix"`` (:func:`_radix_order`, default from 2^22 to 2^31 paths) or
    ``"counting"`` (:func:`_counting_order`, default otherwise) to find the slots; the same arrays
    either way, for any ``jobs`` and ``sort_chunks`` (number of chunks the sorts are split into,
    each with its own histograms, run on ``jobs`` threads; default 1).  ``consume=True``: the input
    path arrays may be given back to ``ws`` once copied (the caller no longer uses them).

    Returns (path_offsets, path_vertices, path_arc_ids, path_heat, path_scc, path_hot, path_layer,
    scc_path_offsets), all in storage order.
    """
    from ._parallel import run_parallel
    P = path_offsets.size - 1
    ws = workspace_or_numpy(ws)
    if method is None:
        # the counting sorts scatter at random over P-entry arrays: fine while those stay in the
        # last-level cache, slow beyond (docs/history/benchmarks-lab-notebook.md, "Preprocessing")
        method = "radix" if (1 << 22) <= P < 2**31 - 1 else "counting"
    idx = _index_dtype(max(2 * P + 2, num_vertices + 1))
    if sort_chunks is None:
        # chunked sorts give the same order but were slower: one thread sorts, the copy of the
        # paths runs on ``jobs`` threads (docs/history/benchmarks-lab-notebook.md, "Preprocessing")
        sort_chunks = 1
    T = max(1, min(int(sort_chunks), P // 65536))
    cb = np.linspace(0, P, T + 1).astype(np.int64)
    chunks = [(np.int64(cb[c]), np.int64(cb[c + 1])) for c in range(T)]
    order = _radix_order if method == "radix" else _counting_order
    slot, voff, noff, bucket_off = order(path_offsets, path_vertices, path_scc, num_scc, hot,
                                         num_vertices, jobs, ws, chunks, idx)
    scc_off = bucket_off[0::2].copy()
    nv = ws.empty(path_vertices.size, path_vertices.dtype, keep=True)
    na = ws.empty(path_arc_ids.size, path_arc_ids.dtype, keep=True)
    nheat = ws.empty(P, np.float64, keep=True)
    parts = max(1, min(jobs * 4, P // 65536 + 1))
    bounds = np.linspace(0, P, parts + 1).astype(np.int64)
    tasks = [(path_offsets, path_vertices, path_arc_ids, path_heat, slot, voff, nv, na, nheat,
              np.int64(bounds[k]), np.int64(bounds[k + 1])) for k in range(parts)]
    run_parallel(_layout_scatter, tasks, jobs)
    ws.release(slot, voff)
    if consume:       # the caller's inputs are dead: the per-path fills below may reuse them
        ws.release(path_offsets, path_vertices, path_arc_ids, path_heat, path_scc)
    pscc = ws.empty(P, np.int64, keep=True)
    phot = ws.empty(P, np.bool_, keep=True)
    player = ws.empty(P, np.int64, keep=True)
    _layout_fill(bucket_off, np.int64(num_scc), scc_layer, pscc, phot, player)
    return noff, nv, na, nheat, pscc, phot, player, scc_off
