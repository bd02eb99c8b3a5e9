"""k-core decomposition by peeling on CPU cores: core numbers in one pass, no iteration to a fixed
point.

The core number of v is the largest k such that v lies in a subgraph whose vertices all have degree
≥ k.  Peeling finds it by removing a vertex of least remaining degree again and again:

    core(v) = max_{u removed no later than v} deg_rem(u),

where ``deg_rem(u)`` is u's degree among the vertices not yet removed when u is removed
(Batagelj & Zaversnik; Matula & Beck 1983).  Here the graph is the undirected multigraph of the
arcs with self-loops removed: deg(v) = in-degree + out-degree − 2·(self-loops at v), and each arc
u→v, u ≠ v, makes u a neighbour of v and v a neighbour of u once (a reciprocated pair counts twice,
parallel arcs once each), as in networkx's ``core_number`` on a ``DiGraph``.  Neighbours are read
straight from the out-CSR (``out_offsets``, ``out_targets``) and the in-CSR (``in_offsets``,
``in_sources``); no symmetric adjacency is built.

Two schedules of the same peeling, both O(n + m) work:

* :func:`bz_core` — Batagelj & Zaversnik, "An O(m) algorithm for cores decomposition of networks"
  (arXiv cs/0310049, 2003): the vertices kept sorted by remaining degree in an array with one bin
  per degree; removing v moves each neighbour u with deg(u) > deg(v) one bin down by a swap with
  the first vertex of its bin, O(1) per arc.  One thread.
* :func:`pkc_core` — PKC, Kabir & Madduri, "Parallel k-core decomposition on multicore platforms"
  (IEEE IPDPSW 2017): level-synchronous; at level k every thread scans its share of the remaining
  vertices for deg = k into a local buffer, then drains it, decrementing neighbours atomically
  (``deg(u) > k``: ``atomic_add(deg, u, −1)``; the one thread that takes u from k + 1 to k appends u
  to its own buffer, so a chain of vertices falling to level k is peeled without a barrier; a
  decrement that finds deg(u) ≤ k is undone).  At the end of the level every remaining vertex has
  deg > k.  The remaining-vertex list is compacted at every scan (Kabir & Madduri's optimisation for
  the many high levels with few vertices), and a scan that finds nothing jumps to the least
  remaining degree instead of k + 1.

Both return the core numbers of the multigraph as given; an undirected source stored as two arcs per
edge gets every core number doubled, which ``digraph.run`` halves.
"""


import numpy as np
from numba import njit, prange

from .atomics import atomic_add

__all__ = ["peel_degrees", "bz_core", "pkc_core"]


@njit(parallel=True, cache=True, nogil=True)
def peel_degrees(out_offsets, out_targets, in_offsets):
    """Degrees of the undirected multigraph of the arcs without self-loops.

    Parameters
    ----------
    out_offsets, out_targets : int arrays
        Out-CSR of the graph.
    in_offsets : int array
        In-CSR offsets.

    Returns
    -------
    deg : int64 array (n)
        ``deg[v] = out_degree(v) + in_degree(v) − 2·loops(v)``.
    """
    n = out_offsets.size - 1
    deg = np.empty(n, np.int64)
    for v in prange(n):
        loops = 0
        for e in range(out_offsets[v], out_offsets[v + 1]):
            if out_targets[e] == v:
                loops += 1
        deg[v] = ((out_offsets[v + 1] - out_offsets[v]) + (in_offsets[v + 1] - in_offsets[v])
                  - 2 * loops)
    return deg


@njit(cache=True, nogil=True)
def bz_core(out_offsets, out_targets, in_offsets, in_sources, deg):
    """Core numbers by Batagelj–Zaversnik bucket peeling (one thread).

    Parameters
    ----------
    out_offsets, out_targets, in_offsets, in_sources : int arrays
        Out-CSR and in-CSR of the graph (``in_sources``: source of each in-arc).
    deg : int64 array (n)
        :func:`peel_degrees`; overwritten with the core numbers.

    Returns
    -------
    levels : int
        Distinct core values met (the peeling's levels).
    arcs : int
        Neighbour entries read: 2m (self-loops are read and skipped).

    References
    ----------
    V. Batagelj, M. Zaversnik, "An O(m) algorithm for cores decomposition of networks",
    arXiv cs/0310049, 2003 (Algorithm "Cores").
    """
    n = deg.size
    md = 0
    for v in range(n):
        if deg[v] > md:
            md = deg[v]
    bins = np.zeros(md + 1, np.int64)
    for v in range(n):
        bins[deg[v]] += 1
    start = 0
    for d in range(md + 1):
        num = bins[d]
        bins[d] = start
        start += num
    pos = np.empty(n, out_targets.dtype)
    vert = np.empty(n, out_targets.dtype)
    for v in range(n):
        p = bins[deg[v]]
        pos[v] = p
        vert[p] = v
        bins[deg[v]] += 1
    for d in range(md, 0, -1):
        bins[d] = bins[d - 1]
    if md >= 0:
        bins[0] = 0
    levels = 0
    last = -1
    arcs = 0
    for i in range(n):
        v = vert[i]
        dv = deg[v]
        if dv != last:
            levels += 1
            last = dv
        for half in range(2):
            if half == 0:
                lo, hi, nb = out_offsets[v], out_offsets[v + 1], out_targets
            else:
                lo, hi, nb = in_offsets[v], in_offsets[v + 1], in_sources
            for e in range(lo, hi):
                u = nb[e]
                du = deg[u]
                if du > dv:  # false for u == v: self-loops are skipped
                    pu = pos[u]
                    pw = bins[du]
                    w = vert[pw]
                    if u != w:
                        pos[u] = pw
                        vert[pu] = w
                        pos[w] = pu
                        vert[pw] = u
                    bins[du] += 1
                    deg[u] = du - 1
        arcs += (out_offsets[v + 1] - out_offsets[v]) + (in_offsets[v + 1] - in_offsets[v])
    return levels, arcs


@njit(cache=True, nogil=True)
def _drain(found, lo, nf, level, deg, out_offsets, out_targets, in_offsets, in_sources):
    """One thread's part of a PKC level: peel the ``nf`` vertices of ``found[lo:]`` and every vertex
    this thread takes to ``level``.  Returns (vertices peeled, neighbour entries read)."""
    cap = max(2 * nf, 64)
    buf = np.empty(cap, found.dtype)
    for i in range(nf):
        buf[i] = found[lo + i]
    head = 0
    tail = nf
    arcs = 0
    while head < tail:
        v = buf[head]
        head += 1
        for half in range(2):
            if half == 0:
                a0, a1, nb = out_offsets[v], out_offsets[v + 1], out_targets
            else:
                a0, a1, nb = in_offsets[v], in_offsets[v + 1], in_sources
            arcs += a1 - a0
            for e in range(a0, a1):
                u = nb[e]
                if u != v and deg[u] > level:
                    old = atomic_add(deg, u, -1)
                    if old == level + 1:  # this thread took u to the level: it peels u
                        if tail == cap:
                            cap *= 2
                            grown = np.empty(cap, found.dtype)
                            grown[:tail] = buf[:tail]
                            buf = grown
                        buf[tail] = u
                        tail += 1
                    elif old <= level:  # u is peeled at this level already: undo
                        atomic_add(deg, u, 1)
    return tail, arcs


@njit(cache=True, nogil=True)
def _pkc_tail(alive, total, level, visited, found, deg, out_offsets, out_targets, in_offsets,
              in_sources):
    """PKC's levels on one thread, from ``level`` on, over the ``total`` candidates of ``alive``
    (no parallel region, so no barrier).  Returns (levels, scans, neighbour entries read)."""
    n = deg.size
    big = np.iinfo(np.int64).max
    levels = 0
    scans = 0
    arcs = 0
    while visited < n:
        s = 0
        f = 0
        mn = big
        for i in range(total):
            v = alive[i]
            d = deg[v]
            if d == level:
                found[f] = v
                f += 1
            elif d > level:
                alive[s] = v
                s += 1
                if d < mn:
                    mn = d
        total = s
        scans += 1
        if f:
            got, read = _drain(found, 0, f, level, deg, out_offsets, out_targets, in_offsets,
                               in_sources)
            visited += got
            arcs += read
            levels += 1
            level += 1
        else:
            level = mn
    return levels, scans, arcs


@njit(parallel=True, cache=True, nogil=True)
def pkc_core(out_offsets, out_targets, in_offsets, in_sources, deg, nthreads, serial_tail=0):
    """Core numbers by PKC parallel peeling (Kabir & Madduri 2017).

    Parameters
    ----------
    out_offsets, out_targets, in_offsets, in_sources : int arrays
        Out-CSR and in-CSR of the graph.
    deg : int64 array (n)
        :func:`peel_degrees`; overwritten with the core numbers.
    nthreads : int
        Shares of the vertex list (one per thread).
    serial_tail : int
        Once at most this many vertices remain, the last levels run on one thread (no barriers:
        the high levels peel few vertices each, and a level-synchronous barrier costs a time
        slice when another process holds a core).

    Returns
    -------
    levels : int
        Levels that peeled at least one vertex (the distinct core values).
    scans : int
        Level scans run (levels plus the scans that found nothing and jumped).
    arcs : int
        Neighbour entries read: 2m (self-loops are read and skipped).

    References
    ----------
    H. Kabir, K. Madduri, "Parallel k-core decomposition on multicore platforms", IEEE IPDPSW 2017.
    """
    n = deg.size
    T = max(1, nthreads)
    alive = np.arange(n).astype(out_targets.dtype)
    alive_next = np.empty(n, out_targets.dtype)
    found = np.empty(n, out_targets.dtype)
    surv = np.zeros(T, np.int64)
    nfound = np.zeros(T, np.int64)
    mins = np.zeros(T, np.int64)
    peeled = np.zeros(T, np.int64)
    read = np.zeros(T, np.int64)
    big = np.iinfo(np.int64).max
    total = n
    visited = 0
    level = 0
    levels = 0
    scans = 0
    arcs = 0
    while visited < n and total > serial_tail:
        chunk = (total + T - 1) // T
        for t in prange(T):  # scan: this level's vertices found, the rest compacted in place
            lo = min(t * chunk, total)
            hi = min(lo + chunk, total)
            s = lo
            f = lo
            mn = big
            for i in range(lo, hi):
                v = alive[i]
                d = deg[v]
                if d == level:
                    found[f] = v
                    f += 1
                elif d > level:
                    alive[s] = v
                    s += 1
                    if d < mn:
                        mn = d
            surv[t] = s - lo
            nfound[t] = f - lo
            mins[t] = mn
        scans += 1
        offs = np.zeros(T + 1, np.int64)
        for t in range(T):
            offs[t + 1] = offs[t] + surv[t]
        for t in prange(T):  # drain this thread's buffer; pack its survivors
            lo = min(t * chunk, total)
            for i in range(surv[t]):
                alive_next[offs[t] + i] = alive[lo + i]
            peeled[t], read[t] = _drain(found, lo, nfound[t], level, deg, out_offsets,
                                        out_targets, in_offsets, in_sources)
        alive, alive_next = alive_next, alive
        total = offs[T]
        got = 0
        for t in range(T):
            got += peeled[t]
            arcs += read[t]
        visited += got
        if got:
            levels += 1
            level += 1
        else:  # nothing at this level: the scan's minimum is the next one
            level = mins.min()
    if visited < n:
        more, tail_scans, tail_arcs = _pkc_tail(alive, total, level, visited, found, deg,
                                                out_offsets, out_targets, in_offsets, in_sources)
        levels += more
        scans += tail_scans
        arcs += tail_arcs
    return levels, scans, arcs
