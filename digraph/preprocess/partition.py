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
:func:`storage_order` gives this order as a permutation (applied by :func:`permute_paths`);
:func:`~.layout.storage_layout` (:mod:`.layout`, re-exported here) lays the paths
out in it directly, by sorts, without gathering by path.

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

from ._parallel import workspace_or_numpy
from .layout import storage_layout

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


def path_heat(path_offsets, path_vertices, degree, jobs=1, ws=None):
    """Mean degree over the vertex entries of each path (float64), on ``jobs`` threads."""
    from ._parallel import run_parallel
    P = path_offsets.size - 1
    out = workspace_or_numpy(ws).empty(P, np.float64)
    parts = max(1, min(jobs * 4, P // 65536 + 1))
    bounds = np.linspace(0, P, parts + 1).astype(np.int64)
    run_parallel(_heat_range, [(path_offsets, path_vertices, degree, out, np.int64(bounds[k]),
                                np.int64(bounds[k + 1])) for k in range(parts)], jobs)
    return out


@njit(cache=True, nogil=True)
def _order_keys(heat, keys):
    """int64 keys in the order of the float64 values (-0.0 as 0.0), into ``keys``."""
    bits = heat.view(np.int64)
    for i in range(heat.size):
        b = bits[i]
        if b < 0:
            b = 0 if b == -9223372036854775808 else b ^ 9223372036854775807
        keys[i] = b
    return keys


@njit(cache=True, nogil=True)
def _hot_select(heat, k, hot, keys):
    """``hot`` = the k highest values (ties: lower index), 0 < k < len(heat), by a radix select
    (histograms of the top 16 bits, then of the next 16 bits inside the chosen bucket, then a sort
    of the few values left) instead of a full partition."""
    P = heat.size
    _order_keys(heat, keys)
    cnt = np.zeros(65536, dtype=np.int64)
    for i in range(P):
        cnt[(keys[i] >> 48) + 32768] += 1
    rem = k
    b1 = 65535
    while cnt[b1] < rem:
        rem -= cnt[b1]
        b1 -= 1
    t1 = b1 - 32768
    cnt[:] = 0
    for i in range(P):
        x = keys[i]
        if (x >> 48) == t1:
            cnt[(x >> 32) & 0xFFFF] += 1
    b2 = 65535
    while cnt[b2] < rem:
        rem -= cnt[b2]
        b2 -= 1
    cand = np.empty(cnt[b2], dtype=np.int64)
    c = 0
    for i in range(P):
        x = keys[i]
        if (x >> 48) == t1 and ((x >> 32) & 0xFFFF) == b2:
            cand[c] = x
            c += 1
    cand.sort()
    thr = cand[c - rem]
    above = 0
    for i in range(P):
        if keys[i] > thr:
            above += 1
    need = k - above
    for i in range(P):
        x = keys[i]
        if x > thr:
            hot[i] = True
        elif x == thr and need > 0:
            hot[i] = True
            need -= 1
        else:
            hot[i] = False


def hot_labels(heat, hot_ratio, ws=None):
    """Boolean hot flag: the ``ceil(hot_ratio * len(heat))`` highest ``heat`` values (ties: lower
    index)."""
    heat = np.ascontiguousarray(heat, dtype=np.float64)
    P = heat.size
    k = int(np.ceil(hot_ratio * P - 1e-9)) if P else 0
    k = min(max(k, 0), P)
    hot = np.zeros(P, dtype=bool)
    if k == 0:
        return hot
    if k == P:
        hot[:] = True
        return hot
    if not np.isfinite(heat).all():      # NaN has no rank: numpy's partition decides
        thr = np.partition(heat, P - k)[P - k]
        above = heat > thr
        hot |= above
        need = k - int(above.sum())
        ties = np.flatnonzero(heat == thr)[:need]
        hot[ties] = True
        return hot
    ws = workspace_or_numpy(ws)
    keys = ws.empty(P, np.int64)
    _hot_select(heat, np.int64(k), hot, keys)
    ws.release(keys)
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
    """Paths rearranged in ``order``: new (offsets, vertices, arc_ids), filled by ``jobs``
    threads."""
    from ._parallel import run_parallel
    noff = _permuted_offsets(path_offsets, order)
    nv = np.empty(path_vertices.size, dtype=path_vertices.dtype)
    na = np.empty(path_arc_ids.size, dtype=path_arc_ids.dtype)
    P = order.size
    parts = max(1, min(jobs * 4, P // 65536 + 1))
    bounds = np.linspace(0, P, parts + 1).astype(np.int64)
    run_parallel(_permute_fill, [(path_offsets, path_vertices, path_arc_ids, order, noff, nv, na,
                                  np.int64(bounds[k]), np.int64(bounds[k + 1]))
                                 for k in range(parts)], jobs)
    return noff, nv, na


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
