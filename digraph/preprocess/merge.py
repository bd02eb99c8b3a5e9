"""Head-to-tail merging of short paths (DiGraph section 3.2.1, after Algorithm 1).

Every path is a *tail end* at its last vertex and a *head end* at its first.  At each vertex ``x``
the paths ending at ``x`` are paired with paths starting at ``x`` (the k-th ending path, in path
order, with the k-th starting path; a path is never paired with itself), each pair is a link
``p -> q`` and the links form chains, cut into merged paths of at most ``max_path_length`` arcs.

Modes
-----
``"constrained"`` (the paper's rule)
    at most one link per vertex, and none through a *junction* vertex (in-degree > 1 and
    out-degree > 1) that is an inner vertex of some path: merging there would let two paths
    intersect at a vertex that is not an end of both.  After one merge at ``x``, ``x`` is itself
    inner, so a second merge at ``x`` would break the rule too.
``"trails"``
    no constraint, Euler-style: every arc becomes a unit piece pre-linked to the next arc of its
    decomposed path; at every vertex the free ending pieces are paired with the free starting
    pieces, then cycles of links are spliced into other structures through a shared vertex
    (Hierholzer: swapping two links at one vertex joins a cycle into the other structure).  This
    reaches the fewest paths an arc-disjoint decomposition can have up to closed trails
    (``Σ_v max(0, outdeg − indeg)`` plus one per closed trail left), e.g. one trail per connected
    component on a symmetric graph such as dblp-2010, before the length cap.
``"none"``
    no merging.

Links that still close a cycle are cut once (the cycle becomes one closed trail).  Chains are
then walked from their first path and cut greedily: a path is appended while the merged length
stays within ``max_path_length`` arcs (paths longer than the cap on their own are kept whole).
Everything is linear time in Numba: counting sorts of the path ends by vertex (trails; the
constrained mode only needs the two lowest path ends of each kind per vertex, found in one pass),
one pass per vertex, one pass per chain.
"""

import numpy as np
from numba import njit

from ._parallel import workspace_or_numpy

__all__ = ["merge_paths", "MERGE_MODES"]

MERGE_MODES = {"none": 0, "constrained": 1, "trails": 2}


@njit(cache=True, nogil=True)
def _bucket(keys, n):
    """Stable counting sort of 0..len(keys)-1 by key: (offsets n+1, items)."""
    cnt = np.zeros(n + 1, dtype=np.int64)
    for i in range(keys.size):
        cnt[keys[i] + 1] += 1
    for k in range(n):
        cnt[k + 1] += cnt[k]
    offs = cnt.copy()
    items = np.empty(keys.size, dtype=np.int64)
    for i in range(keys.size):
        k = keys[i]
        items[cnt[k]] = i
        cnt[k] += 1
    return offs, items


@njit(cache=True, nogil=True)
def _find(parent, a):
    r = a
    while parent[r] != r:
        r = parent[r]
    while parent[a] != r:
        nx = parent[a]
        parent[a] = r
        a = nx
    return r


@njit(cache=True, nogil=True)
def _splice_cycles(nxt, prv, toff, tlist, n):
    """Hierholzer-style splicing: at a vertex with two links ``p -> q`` and ``r -> s`` in different
    structures, one of them a cycle of links, swap to ``p -> s``, ``r -> q``; that joins the cycle
    into the other structure (a chain stays one chain, two cycles become one)."""
    P = nxt.size
    struct = np.full(P, -1, dtype=np.int64)
    ns = 0
    is_cyc = np.zeros(P, dtype=np.bool_)
    for p in range(P):
        if prv[p] == -1:
            q = p
            while q != -1:
                struct[q] = ns
                q = nxt[q]
            ns += 1
    for p in range(P):
        if struct[p] == -1:
            is_cyc[ns] = True
            q = p
            while struct[q] == -1:
                struct[q] = ns
                q = nxt[q]
            ns += 1
    parent = np.arange(ns)
    for x in range(n):
        first = -1
        for k in range(toff[x], toff[x + 1]):
            p = tlist[k]
            if nxt[p] == -1:
                continue
            if first == -1:
                first = p
                continue
            a = _find(parent, struct[first])
            b = _find(parent, struct[p])
            if a != b and (is_cyc[a] or is_cyc[b]):
                q1 = nxt[first]
                q2 = nxt[p]
                nxt[first] = q2
                prv[q2] = first
                nxt[p] = q1
                prv[q1] = p
                parent[b] = a
                is_cyc[a] = is_cyc[a] and is_cyc[b]


@njit(cache=True, nogil=True)
def _pair(nxt, prv, toff, tlist, hoff, hlist, n, in_deg, out_deg, inner, mode):
    """Link free path ends at every vertex (see module doc); returns nothing, fills nxt/prv."""
    tb = np.empty(0, dtype=np.int64)
    hb = np.empty(0, dtype=np.int64)
    for x in range(n):
        t0 = toff[x]
        h0 = hoff[x]
        nt = toff[x + 1] - t0
        nh = hoff[x + 1] - h0
        if nt == 0 or nh == 0:
            continue
        if mode == 1 and in_deg[x] > 1 and out_deg[x] > 1 and inner[x]:
            continue
        if tb.size < nt:
            tb = np.empty(2 * nt, dtype=np.int64)
        if hb.size < nh:
            hb = np.empty(2 * nh, dtype=np.int64)
        ft = 0
        for k in range(t0, t0 + nt):
            if nxt[tlist[k]] == -1:
                tb[ft] = tlist[k]
                ft += 1
        fh = 0
        for k in range(h0, h0 + nh):
            if prv[hlist[k]] == -1:
                hb[fh] = hlist[k]
                fh += 1
        k = min(ft, fh)
        if mode == 1:
            k = min(k, 1)
        for i in range(k):
            p = tb[i]
            q = hb[i]
            if p == q:
                if i + 1 < fh:
                    hb[i] = hb[i + 1]
                    hb[i + 1] = q
                    q = hb[i]
                elif i + 1 < ft:
                    tb[i] = tb[i + 1]
                    tb[i + 1] = p
                    p = tb[i]
                elif mode == 2:
                    q = p             # a closed path alone at x: a cycle of one, spliced later
                else:
                    continue
            nxt[p] = q
            prv[q] = p


@njit(cache=True, nogil=True)
def _break_cycles(nxt, prv):
    """Cut every remaining cycle of links once (at its lowest path)."""
    P = nxt.size
    seen = np.zeros(P, dtype=np.bool_)
    for p in range(P):
        if prv[p] == -1:
            q = p
            while q != -1:
                seen[q] = True
                q = nxt[q]
    for p in range(P):
        if not seen[p]:
            last = prv[p]
            nxt[last] = -1
            prv[p] = -1
            q = p
            while q != -1:
                seen[q] = True
                q = nxt[q]


@njit(cache=True, nogil=True)
def _emit(off, verts, arcs, nxt, prv, cap, noff, nverts, narcs):
    """Walk the chains from their first path (in path order), cutting at ``cap`` arcs, into
    ``noff`` (P+1), ``nverts``, ``narcs`` (preallocated by numpy: huge pages, see
    :func:`digraph.preprocess.partition.storage_layout`); returns the used parts."""
    P = off.size - 1
    np_ = 0
    nv = 0
    na = 0
    for p in range(P):
        if prv[p] != -1:
            continue
        q = p
        cur = 0
        while q != -1:
            ln = off[q + 1] - off[q] - 1
            a_src = off[q] - q
            if cur == 0 or cur + ln > cap:
                if cur > 0:
                    np_ += 1
                noff[np_] = nv
                nverts[nv] = verts[off[q]]
                nv += 1
                cur = 0
            for i in range(off[q] + 1, off[q + 1]):
                nverts[nv] = verts[i]
                nv += 1
            for i in range(ln):
                narcs[na] = arcs[a_src + i]
                na += 1
            cur += ln
            q = nxt[q]
        np_ += 1
    noff[np_] = nv
    return noff[:np_ + 1], nverts[:nv], narcs[:na]


@njit(cache=True, nogil=True)
def _constrained_links(off, verts, n, in_deg, out_deg, nxt, prv):
    """The constrained mode's links without sorting the path ends.

    At most one link is made at a vertex ``x`` and only paths ending (starting) at ``x`` can be
    linked there, so every path end at ``x`` is still free when ``x`` is reached and the link is
    the one :func:`_pair` makes from the two lowest paths ending at ``x`` and the two lowest paths
    starting at ``x``; those four per vertex are found in one pass over the paths.
    """
    P = off.size - 1
    t1 = np.full(n, -1, dtype=nxt.dtype)
    t2 = np.full(n, -1, dtype=nxt.dtype)
    h1 = np.full(n, -1, dtype=nxt.dtype)
    h2 = np.full(n, -1, dtype=nxt.dtype)
    inner = np.zeros(n, dtype=np.bool_)
    for p in range(P):
        a = off[p]
        b = off[p + 1]
        x = verts[a]
        if h1[x] == -1:
            h1[x] = p
        elif h2[x] == -1:
            h2[x] = p
        x = verts[b - 1]
        if t1[x] == -1:
            t1[x] = p
        elif t2[x] == -1:
            t2[x] = p
        for i in range(a + 1, b - 1):
            inner[verts[i]] = True
    for x in range(n):
        p = t1[x]
        q = h1[x]
        if p == -1 or q == -1:
            continue
        if in_deg[x] > 1 and out_deg[x] > 1 and inner[x]:
            continue
        if p == q:
            if h2[x] != -1:
                q = h2[x]
            elif t2[x] != -1:
                p = t2[x]
            else:
                continue
        nxt[p] = q
        prv[q] = p


@njit(cache=True, nogil=True)
def _constrained_kernel(off, verts, arcs, n, in_deg, out_deg, cap, nxt, prv, noff, nverts, narcs):
    _constrained_links(off, verts, n, in_deg, out_deg, nxt, prv)
    _break_cycles(nxt, prv)
    return _emit(off, verts, arcs, nxt, prv, cap, noff, nverts, narcs)


@njit(cache=True, nogil=True)
def _trails_kernel(off, verts, arcs, n, in_deg, out_deg, cap):
    """Euler-style trails: every arc is a unit piece, pre-linked along its decomposed path; free
    ends are paired at every vertex, cycles spliced (Hierholzer), then chains cut at ``cap``."""
    P = off.size - 1
    m = arcs.size
    uoff = np.empty(m + 1, dtype=np.int64)
    uverts = np.empty(2 * m, dtype=verts.dtype)
    nxt = np.full(m, -1, dtype=np.int64)
    prv = np.full(m, -1, dtype=np.int64)
    heads = np.empty(m, dtype=np.int64)
    tails = np.empty(m, dtype=np.int64)
    for p in range(P):
        a = off[p]
        b = off[p + 1]
        for i in range(a, b - 1):
            j = i - p
            uoff[j] = 2 * j
            uverts[2 * j] = verts[i]
            uverts[2 * j + 1] = verts[i + 1]
            heads[j] = verts[i]
            tails[j] = verts[i + 1]
            if i + 1 < b - 1:
                nxt[j] = j + 1
                prv[j + 1] = j
    uoff[m] = 2 * m
    toff, tlist = _bucket(tails, n)
    hoff, hlist = _bucket(heads, n)
    inner = np.zeros(1, dtype=np.bool_)
    _pair(nxt, prv, toff, tlist, hoff, hlist, n, in_deg, out_deg, inner, 2)
    _splice_cycles(nxt, prv, toff, tlist, n)
    _break_cycles(nxt, prv)
    return _emit(uoff, uverts, arcs, nxt, prv, cap, np.empty(m + 1, dtype=np.int64),
                 np.empty(uverts.size, dtype=uverts.dtype), np.empty(m, dtype=np.int64))


def merge_paths(path_offsets, path_vertices, path_arc_ids, num_vertices, in_degree, out_degree, *,
                mode="constrained", max_path_length=16, ws=None):
    """Merge paths head to tail; returns new (path_offsets, path_vertices, path_arc_ids).

    Parameters
    ----------
    path_offsets, path_vertices, path_arc_ids : arrays
        Paths in the :class:`~digraph.paths.PathSet` layout.
    num_vertices : int
    in_degree, out_degree : int64 arrays
        Vertex degrees of the graph (for the junction test of the constrained mode).
    mode : {"constrained", "trails", "none"}
    max_path_length : int
        Cap on the arcs of a merged path (>= 1).  ``0`` or ``None``: no cap.
    """
    code = MERGE_MODES[mode]
    if code == 0 or path_offsets.size <= 2:
        return path_offsets, path_vertices, path_arc_ids
    cap = np.int64(max_path_length) if max_path_length else np.int64(np.iinfo(np.int64).max // 4)
    if code == 1:
        P = path_offsets.size - 1
        idx = np.int32 if P < 2**31 - 1 else np.int64
        ws = workspace_or_numpy(ws)
        nxt = ws.full(P, -1, idx)
        prv = ws.full(P, -1, idx)
        out = _constrained_kernel(path_offsets, path_vertices, path_arc_ids, np.int64(num_vertices),
                                  in_degree, out_degree, cap, nxt, prv, ws.empty(P + 1, np.int64),
                                  ws.empty(path_vertices.size, path_vertices.dtype),
                                  ws.empty(path_arc_ids.size, np.int64))
        ws.release(nxt, prv)
        return out
    return _trails_kernel(path_offsets, path_vertices, path_arc_ids, np.int64(num_vertices),
                          in_degree, out_degree, cap)
