"""Numba CPU kernels that prepare the path engine's rounds (beside :mod:`~.paths`):
the short-arc groups of the vertex-level push (:func:`short_arc_groups`), the coefficients
``c_j`` of the path arcs and ``c_e`` of the group arcs, and the first mirrors of a monotone
system's walked arcs."""

import numpy as np
from numba import njit, prange

__all__ = []


@njit(cache=True, nogil=True)
def short_arc_groups(path_offsets, path_vertices, partition_offsets, path_scc, pushed, n,
                     num_scc):
    """Group the arcs of the ``pushed`` paths by (partition, source vertex) for vertex-level push.

    Within one SCC-vertex the pushed arcs are reordered by source vertex (a stable two-pass
    counting sort: by source, then by SCC-vertex) and keep the partition slots the SCC-vertex's
    pushed arcs had in storage order, so each partition keeps its arc count (balance) and its
    SCC-vertices (layers, local convergence).  A group is a run of equal (partition, source).
    Returns (path-order arc ids in group order, group offsets into them (G+1), group source (G),
    group partition (G), arc targets in group order, group SCC-vertex (G)).
    """
    P = path_offsets.size - 1
    K = partition_offsets.size - 1
    ms = 0
    for p in range(P):
        if pushed[p]:
            ms += path_offsets[p + 1] - path_offsets[p] - 1
    arc = np.empty(ms, np.int64)
    src = np.empty(ms, np.int64)
    scc = np.empty(ms, np.int64)
    slot = np.empty(ms, np.int64)
    k = 0
    for q in range(K):
        for p in range(partition_offsets[q], partition_offsets[q + 1]):
            if not pushed[p]:
                continue
            a = path_offsets[p]
            b = path_offsets[p + 1] - 1
            for i in range(b - a):
                arc[k] = a - p + i
                src[k] = path_vertices[a + i]
                scc[k] = path_scc[p]
                slot[k] = q
                k += 1
    # stable counting sort by source, then by SCC-vertex: order by (SCC-vertex, source)
    cnt = np.zeros(n + 1, np.int64)
    for i in range(ms):
        cnt[src[i] + 1] += 1
    for v in range(n):
        cnt[v + 1] += cnt[v]
    by_src = np.empty(ms, np.int64)
    for i in range(ms):
        by_src[cnt[src[i]]] = i
        cnt[src[i]] += 1
    cs = np.zeros(num_scc + 1, np.int64)
    for i in range(ms):
        cs[scc[i] + 1] += 1
    for c in range(num_scc):
        cs[c + 1] += cs[c]
    order = np.empty(ms, np.int64)
    for t in range(ms):
        i = by_src[t]
        order[cs[scc[i]]] = i
        cs[scc[i]] += 1
    # path_scc is non-decreasing in storage order: an SCC-vertex's pushed arcs occupy the same
    # range of positions before and after the sort, so position t keeps partition slot[t]
    G = 0
    for t in range(ms):
        if t == 0 or src[order[t]] != src[order[t - 1]] or slot[t] != slot[t - 1]:
            G += 1
    goff = np.empty(G + 1, np.int64)
    gsrc = np.empty(G, np.int64)
    gpart = np.empty(G, np.int64)
    gscc = np.empty(G, np.int64)
    garc_ids = np.empty(ms, np.int64)
    gdst = np.empty(ms, np.int64)
    g = -1
    for t in range(ms):
        i = order[t]
        if t == 0 or src[i] != src[order[t - 1]] or slot[t] != slot[t - 1]:
            g += 1
            goff[g] = t
            gsrc[g] = src[i]
            gpart[g] = slot[t]
            gscc[g] = scc[i]
        garc_ids[t] = arc[i]
    goff[G] = ms
    # targets: the vertex after the arc's source on its path
    tgt = np.empty(ms, np.int64)
    k = 0
    for q in range(K):
        for p in range(partition_offsets[q], partition_offsets[q + 1]):
            if not pushed[p]:
                continue
            a = path_offsets[p]
            b = path_offsets[p + 1] - 1
            for i in range(b - a):
                tgt[k] = path_vertices[a + i + 1]
                k += 1
    for t in range(ms):
        gdst[t] = tgt[order[t]]
    return garc_ids, goff, gsrc, gpart, gdst, gscc


@njit(cache=True, nogil=True)
def path_arc_coefficients(path_offsets, path_vertices, path_arc_ids, src_scale, arc_scale,
                          has_arc, dst_scale):
    """``c_j`` of every arc in path order."""
    P = path_offsets.size - 1
    out = np.empty(path_arc_ids.size, dtype=np.float64)
    for p in range(P):
        a = path_offsets[p]
        b = path_offsets[p + 1] - 1
        base = a - p
        for i in range(b - a):
            j = base + i
            e = path_arc_ids[j]
            c = src_scale[path_vertices[a + i]] * dst_scale[path_vertices[a + i + 1]]
            if has_arc:
                c *= arc_scale[e]
            out[j] = c
    return out


@njit(parallel=True, cache=True, nogil=True)
def walked_arc_coefficients(walk_paths, path_offsets, path_vertices, path_arc_ids, src_scale,
                            arc_scale, has_arc, dst_scale, out):
    """``c_j`` of the arcs of the walked paths into ``out`` (path order; other entries
    untouched)."""
    for w in prange(walk_paths.size):
        p = walk_paths[w]
        a = path_offsets[p]
        b = path_offsets[p + 1] - 1
        base = a - p
        for i in range(b - a):
            c = src_scale[path_vertices[a + i]] * dst_scale[path_vertices[a + i + 1]]
            if has_arc:
                c *= arc_scale[path_arc_ids[base + i]]
            out[base + i] = c


@njit(parallel=True, cache=True, nogil=True)
def group_coefficients(garc, gsrc, gdst, arc_ids, path_arc_ids, src_scale, arc_scale, has_arc,
                       dst_scale, gcoef, gsum, gmax):
    """``c_e`` of every short-arc group arc (group order), and their sum and maximum per group."""
    for g in prange(gsrc.size):
        su = src_scale[gsrc[g]]
        tot = 0.0
        big = 0.0
        for e in range(garc[g], garc[g + 1]):
            c = su * dst_scale[gdst[e]]
            if has_arc:
                c *= arc_scale[path_arc_ids[arc_ids[e]]]
            gcoef[e] = c
            tot += c
            big = max(big, c)
        gsum[g] = tot
        gmax[g] = big


@njit(parallel=True, cache=True, nogil=True)
def walked_monotone_mirrors(walk_paths, path_offsets, path_vertices, active, x, identity, s):
    """Initial mirrors of the walked paths' arcs: ``identity`` where the source starts active
    (it must transmit), else its value (nothing to send)."""
    for w in prange(walk_paths.size):
        p = walk_paths[w]
        a = path_offsets[p]
        b = path_offsets[p + 1] - 1
        base = a - p
        for i in range(b - a):
            u = path_vertices[a + i]
            s[base + i] = identity if active[u] else x[u]
