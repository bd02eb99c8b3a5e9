"""Hot/cold labels, storage order of the paths and partitions for processors.

Hot rule
--------
The *heat* of a path is the mean degree (in + out, of the graph) over its vertex entries, the
``D̄(p)`` of the paper's ``Pri(p)``.  The ``ceil(hot_ratio * num_paths)`` paths of highest heat are
hot (ties broken by lower path index before reordering); the rest are cold.  ``hot_ratio=0``: none
hot, ``1``: all hot.

Storage order
-------------
Paths are stored by SCC-vertex (in the DAG order of :mod:`.dag`: layer ascending, then descending
successor paths), inside an SCC-vertex hot paths first, and inside each of those groups by tail
vertex, so that short paths writing the same (high in-degree) vertex sit next to each other and land
in the same partition (one proxy accumulator per partition instead of one atomic per path).

Partitions
----------
A partition is a contiguous range of paths in storage order, cut greedily:

* a partition never spans two layers;
* a new SCC-vertex starts a new partition when it does not fit whole in the current one (small
  SCC-vertices are packed together, an SCC-vertex is split only when it alone exceeds the budget);
* inside an SCC-vertex, a partition closes when the next path would exceed ``partition_arcs``
  arcs, and at the hot/cold boundary of an SCC-vertex larger than the budget (hot paths together).

A path longer than ``partition_arcs`` is a partition of its own.
"""

import numpy as np
from numba import njit

__all__ = ["path_heat", "hot_labels", "storage_order", "storage_layout", "partitions"]


@njit(cache=True, nogil=True)
def _heat_range(path_offsets, path_vertices, degree, out, lo, hi):
    for p in range(lo, hi):
        a = path_offsets[p]
        b = path_offsets[p + 1]
        s = 0
        for i in range(a, b):
            s += degree[path_vertices[i]]
        out[p] = s / (b - a)


def path_heat(path_offsets, path_vertices, degree, jobs=1):
    """Mean degree over the vertex entries of each path (float64), on ``jobs`` threads."""
    from ._parallel import run_parallel
    P = path_offsets.size - 1
    out = np.empty(P, dtype=np.float64)
    parts = max(1, min(jobs * 4, P // 65536 + 1))
    bounds = np.linspace(0, P, parts + 1).astype(np.int64)
    run_parallel(_heat_range, [(path_offsets, path_vertices, degree, out, np.int64(bounds[k]),
                                np.int64(bounds[k + 1])) for k in range(parts)], jobs)
    return out


def hot_labels(heat, hot_ratio):
    """Boolean hot flag: the ``ceil(hot_ratio * len(heat))`` highest ``heat`` values (ties: lower index)."""
    P = heat.size
    k = int(np.ceil(hot_ratio * P - 1e-9)) if P else 0
    k = min(max(k, 0), P)
    hot = np.zeros(P, dtype=bool)
    if k == 0:
        return hot
    if k == P:
        hot[:] = True
        return hot
    thr = np.partition(heat, P - k)[P - k]
    above = heat > thr
    hot |= above
    need = k - int(above.sum())
    ties = np.flatnonzero(heat == thr)[:need]
    hot[ties] = True
    return hot


@njit(cache=True, nogil=True)
def storage_order(path_offsets, path_vertices, path_scc, num_scc, hot, num_vertices):
    """Permutation of the paths: by SCC-vertex, hot first, then by tail vertex (two stable counting
    sorts: by tail vertex, then by ``2 * scc + cold``).  Returns (order, scc_path_offsets)."""
    P = path_offsets.size - 1
    cnt = np.zeros(num_vertices + 1, dtype=np.int64)
    for p in range(P):
        cnt[path_vertices[path_offsets[p + 1] - 1] + 1] += 1
    for v in range(num_vertices):
        cnt[v + 1] += cnt[v]
    o1 = np.empty(P, dtype=np.int64)
    for p in range(P):
        t = path_vertices[path_offsets[p + 1] - 1]
        o1[cnt[t]] = p
        cnt[t] += 1
    nb = 2 * num_scc
    c2 = np.zeros(nb + 1, dtype=np.int64)
    for p in range(P):
        c2[2 * path_scc[p] + (0 if hot[p] else 1) + 1] += 1
    for b in range(nb):
        c2[b + 1] += c2[b]
    scc_off = np.empty(num_scc + 1, dtype=np.int64)
    for s in range(num_scc + 1):
        scc_off[s] = c2[2 * s]
    o2 = np.empty(P, dtype=np.int64)
    for i in range(P):
        p = o1[i]
        b = 2 * path_scc[p] + (0 if hot[p] else 1)
        o2[c2[b]] = p
        c2[b] += 1
    return o2, scc_off


@njit(cache=True, nogil=True)
def _permuted_offsets(path_offsets, order):
    P = order.size
    noff = np.empty(P + 1, dtype=np.int64)
    noff[0] = 0
    for i in range(P):
        p = order[i]
        noff[i + 1] = noff[i] + path_offsets[p + 1] - path_offsets[p]
    return noff


@njit(cache=True, nogil=True)
def _permute_fill(path_offsets, path_vertices, path_arc_ids, order, noff, nv, na, lo, hi):
    for i in range(lo, hi):
        p = order[i]
        a = path_offsets[p]
        ln = path_offsets[p + 1] - a
        b = noff[i]
        for k in range(ln):
            nv[b + k] = path_vertices[a + k]
        aa = a - p
        bb = b - i
        for k in range(ln - 1):
            na[bb + k] = path_arc_ids[aa + k]


def permute_paths(path_offsets, path_vertices, path_arc_ids, order, jobs=1):
    """Paths rearranged in ``order``: new (offsets, vertices, arc_ids), filled by ``jobs`` threads."""
    from ._parallel import run_parallel
    noff = _permuted_offsets(path_offsets, order)
    nv = np.empty(path_vertices.size, dtype=path_vertices.dtype)
    na = np.empty(path_arc_ids.size, dtype=path_arc_ids.dtype)
    P = order.size
    parts = max(1, min(jobs * 4, P // 65536 + 1))
    bounds = np.linspace(0, P, parts + 1).astype(np.int64)
    run_parallel(_permute_fill, [(path_offsets, path_vertices, path_arc_ids, order, noff, nv, na,
                                  np.int64(bounds[k]), np.int64(bounds[k + 1])) for k in range(parts)], jobs)
    return noff, nv, na


def _index_dtype(count):
    """int32 when every index below ``count`` fits, else int64 (halves the traffic of temporaries)."""
    return np.int32 if count < 2**31 - 1 else np.int64


@njit(cache=True, nogil=True)
def _layout_sort(path_offsets, path_vertices, path_scc, num_scc, hot, num_vertices, o_p, o_b, o_l, slot, voff, noff):
    """Slot (storage position) and new vertex offset of every path, by two stable counting sorts
    (by tail vertex, then by ``2 * scc + cold``) that read every path array sequentially: the first
    scatter carries each path's bucket and length with it, so the second never reads by path.

    Fills ``slot`` (storage position by path), ``voff`` (new vertex offset by path) and ``noff``
    (new path_offsets); ``o_p``, ``o_b``, ``o_l`` are scratch (P entries each; big arrays come
    from numpy, whose allocations use huge pages, where Numba's own take a page fault every 4 KiB).
    Returns (scc_path_offsets, bucket offsets of the ``2 * num_scc`` (scc, hot/cold) buckets).
    """
    P = path_offsets.size - 1
    nb = 2 * num_scc
    cnt = np.zeros(num_vertices + 1, dtype=o_p.dtype)
    c2 = np.zeros(nb + 1, dtype=np.int64)
    v2 = np.zeros(nb + 1, dtype=np.int64)
    for p in range(P):
        e = path_offsets[p + 1]
        cnt[path_vertices[e - 1] + 1] += 1
        b = 2 * path_scc[p] + (0 if hot[p] else 1)
        c2[b + 1] += 1
        v2[b + 1] += e - path_offsets[p]
    for v in range(num_vertices):
        cnt[v + 1] += cnt[v]
    for b in range(nb):
        c2[b + 1] += c2[b]
        v2[b + 1] += v2[b]
    for p in range(P):
        s = path_offsets[p]
        e = path_offsets[p + 1]
        t = path_vertices[e - 1]
        k = cnt[t]
        cnt[t] = k + 1
        o_p[k] = p
        o_b[k] = 2 * path_scc[p] + (0 if hot[p] else 1)
        o_l[k] = e - s
    scc_off = np.empty(num_scc + 1, dtype=np.int64)
    for s in range(num_scc + 1):
        scc_off[s] = c2[2 * s]
    bucket_off = c2.copy()
    for i in range(P):
        p = o_p[i]
        b = o_b[i]
        k = c2[b]
        c2[b] = k + 1
        vp = v2[b]
        v2[b] = vp + o_l[i]
        slot[p] = k
        voff[p] = vp
        noff[k] = vp
    noff[P] = path_offsets[P]
    return scc_off, bucket_off


@njit(cache=True, nogil=True)
def _layout_scatter(path_offsets, path_vertices, path_arc_ids, path_heat, slot, voff, nv, na, nheat, lo, hi):
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


def storage_layout(path_offsets, path_vertices, path_arc_ids, path_heat, path_scc, num_scc, hot, scc_layer,
                   num_vertices, jobs=1):
    """Paths in storage order (the order of :func:`storage_order`) without gathering by path.

    Returns (path_offsets, path_vertices, path_arc_ids, path_heat, path_scc, path_hot, path_layer,
    scc_path_offsets), all in storage order.
    """
    from ._parallel import run_parallel
    P = path_offsets.size - 1
    idx = _index_dtype(max(2 * P + 2, num_vertices + 1))
    o_p, o_b, o_l, slot = (np.empty(P, dtype=idx) for _ in range(4))
    voff = np.empty(P, dtype=np.int64)
    noff = np.empty(P + 1, dtype=np.int64)
    scc_off, bucket_off = _layout_sort(path_offsets, path_vertices, path_scc, np.int64(num_scc), hot,
                                       np.int64(num_vertices), o_p, o_b, o_l, slot, voff, noff)
    del o_p, o_b, o_l
    nv = np.empty(path_vertices.size, dtype=path_vertices.dtype)
    na = np.empty(path_arc_ids.size, dtype=path_arc_ids.dtype)
    nheat = np.empty(P, dtype=np.float64)
    pscc = np.empty(P, dtype=np.int64)
    phot = np.empty(P, dtype=np.bool_)
    player = np.empty(P, dtype=np.int64)
    parts = max(1, min(jobs * 4, P // 65536 + 1))
    bounds = np.linspace(0, P, parts + 1).astype(np.int64)
    tasks = [(path_offsets, path_vertices, path_arc_ids, path_heat, slot, voff, nv, na, nheat,
              np.int64(bounds[k]), np.int64(bounds[k + 1])) for k in range(parts)]
    fill = (_layout_fill, (bucket_off, np.int64(num_scc), scc_layer, pscc, phot, player))
    run_parallel(lambda f, a: f(*a), [(_layout_scatter, t) for t in tasks] + [fill], jobs)
    return noff, nv, na, nheat, pscc, phot, player, scc_off


@njit(cache=True, nogil=True)
def partitions(path_offsets, path_scc, path_hot, scc_layer, scc_path_offsets, partition_arcs):
    """Partition offsets (into paths, storage order) following the rules of the module doc."""
    P = path_offsets.size - 1
    out = np.empty(P + 1, dtype=np.int64)
    npart = 0
    out[0] = 0
    cur = 0
    for i in range(P):
        s = path_scc[i]
        ln = path_offsets[i + 1] - path_offsets[i] - 1
        new = False
        if i > 0 and cur > 0:
            ps = path_scc[i - 1]
            if s != ps:
                if scc_layer[s] != scc_layer[ps]:
                    new = True
                else:
                    a = scc_path_offsets[s]
                    b = scc_path_offsets[s + 1]
                    scc_arcs = (path_offsets[b] - b) - (path_offsets[a] - a)
                    if cur + scc_arcs > partition_arcs:
                        new = True
            else:
                if cur + ln > partition_arcs:
                    new = True
                elif path_hot[i] != path_hot[i - 1]:
                    a = scc_path_offsets[s]
                    b = scc_path_offsets[s + 1]
                    scc_arcs = (path_offsets[b] - b) - (path_offsets[a] - a)
                    if scc_arcs > partition_arcs:
                        new = True
        if new:
            npart += 1
            out[npart] = i
            cur = 0
        cur += ln
    if P > 0:
        npart += 1
        out[npart] = P
    return out[:npart + 1].copy()
