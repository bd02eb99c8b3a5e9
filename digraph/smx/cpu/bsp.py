"""Numba CPU kernels of the bulk-synchronous (``mode="bsp"``, Gunrock-like) engine.

One call = one round over the current frontier, Jacobi semantics (every read sees the previous
round's state).  Each family has a *dense* kernel (pull over in-arcs, parallel over targets with
``prange``: no write conflicts, so no atomics are needed) and a *sparse* kernel (push from the
frontier's out-arcs, serial: chosen by the dispatcher when the frontier's out-arcs are a small
share of the graph, as in Ligra's direction-optimising traversal).
"""

import numpy as np
from numba import njit, prange

from ..relax_codes import MAX as _MAX, MIN as _MIN, PLUS as _PLUS, TIMES as _TIMES

__all__ = []



# ============================================================================ linear (sum) family

BLOCK_SHIFT = 6
"""A residual set (``mark``, ``block``) flags every vertex ``u`` whose δ may be non-zero in
``mark[u]`` and every block of ``2**BLOCK_SHIFT`` consecutive vertices holding a flagged one in
``block[u >> BLOCK_SHIFT]`` (uint8 arrays, plain stores of 1: threads that flag the same vertex
at once write the same value; ``mark`` has a whole number of blocks, its tail never flagged).
A pass over the set reads the block flags (n / 64 bytes), the marks of each live block as
eight 64-bit words (one cache line), and the flagged vertices only, in vertex order."""


def new_set(n):
    """An empty residual set for ``n`` vertices: (mark, block)."""
    nb = (n >> BLOCK_SHIFT) + 1
    return np.zeros(nb << BLOCK_SHIFT, np.uint8), np.zeros(nb, np.uint8)


@njit(cache=True, nogil=True)
def set_scan(delta, theta, out_degree, mark, block, out):
    """One pass over a residual set: vertices whose δ is 0 again are unflagged (and blocks left
    empty), the others summed; those with ``|δ| > θ`` go to ``out`` in vertex order.

    Returns (frontier size, frontier out-arcs, sum |δ|, max |δ|, vertices still flagged)."""
    words = mark.view(np.uint64)
    per = (1 << BLOCK_SHIFT) >> 3  # 64-bit words of marks per block
    nf = 0
    vol = 0
    r1 = 0.0
    rmax = 0.0
    kept = 0
    for b in range(block.size):
        if block[b] == 0:
            continue
        live = 0
        for w in range(b * per, (b + 1) * per):
            if words[w] == 0:
                continue
            for u in range(w << 3, (w + 1) << 3):
                if mark[u] == 0:
                    continue
                d = abs(delta[u])
                if d == 0.0:
                    mark[u] = 0
                    continue
                live += 1
                r1 += d
                rmax = max(rmax, d)
                if d > theta:
                    out[nf] = u
                    nf += 1
                    vol += out_degree[u]
        if live == 0:
            block[b] = 0
        kept += live
    return nf, vol, r1, rmax, kept


@njit(parallel=True, cache=True, nogil=True)
def linear_scan(delta, theta, out_degree, x, mark, block, front):
    """Frontier size, its out-arc volume and the residual/answer reductions.

    ``block`` empty: a parallel pass over every vertex.  Otherwise (``mark``, ``block``) is a
    residual set holding every vertex whose δ is non-zero, and only it is read (serially,
    :func:`set_scan`): the frontier goes to ``front`` in vertex order for
    :func:`linear_sparse_round`, and ``sum x`` is not computed (0: the caller tracks it).

    Returns (frontier size, frontier out-arcs, sum |δ|, max |δ|, sum x, vertices with δ != 0).
    """
    if block.size > 0:
        nf, vol, r1, rmax, kept = set_scan(delta, theta, out_degree, mark, block, front)
        return nf, vol, r1, rmax, 0.0, kept
    nf = 0
    vol = 0
    r1 = 0.0
    rmax = 0.0
    sx = 0.0
    nnz = 0
    for u in prange(delta.size):
        d = abs(delta[u])
        r1 += d
        rmax = max(rmax, d)
        sx += x[u]
        if d != 0.0:
            nnz += 1
        if d > theta:
            nf += 1
            vol += out_degree[u]
    return nf, vol, r1, rmax, sx, nnz


@njit(cache=True, nogil=True)
def set_build(delta, mark, block):
    """Flag every vertex whose δ is non-zero in an empty residual set; returns their count."""
    count = 0
    for u in range(delta.size):
        if delta[u] != 0.0:
            mark[u] = 1
            block[u >> BLOCK_SHIFT] = 1
            count += 1
    return count


@njit(cache=True, nogil=True)
def set_clear(mark, block):
    """Empty a residual set (reads the block flags and the marks of live blocks only)."""
    words = mark.view(np.uint64)
    per = (1 << BLOCK_SHIFT) >> 3
    for b in range(block.size):
        if block[b] != 0:
            for w in range(b * per, (b + 1) * per):
                words[w] = 0
            block[b] = 0


@njit(parallel=True, cache=True, nogil=True)
def linear_dense_round(cuts, in_offsets, in_sources, in_coef, has_coef, src_scale, dst_scale,
                       delta, x, theta, send, new_delta):
    """Pull round: frontier vertices (|δ| > θ) absorb δ into x and send it along every arc.
    ``cuts``: the pull's vertex ranges of about equal in-arcs, one a task
    (:func:`digraph.dispatch.runtime.cpu_tasks.arc_tasks`)."""
    n = x.size
    for u in prange(n):
        d = delta[u]
        if abs(d) > theta:
            x[u] += d
            send[u] = d * src_scale[u]
        else:
            send[u] = 0.0
    for t in prange(cuts.size - 1):
        for v in range(cuts[t], cuts[t + 1]):
            acc = 0.0
            if has_coef:
                for k in range(in_offsets[v], in_offsets[v + 1]):
                    acc += in_coef[k] * send[in_sources[k]]
            else:
                for k in range(in_offsets[v], in_offsets[v + 1]):
                    acc += send[in_sources[k]]
            d = delta[v]
            keep = d if abs(d) <= theta else 0.0
            new_delta[v] = keep + dst_scale[v] * acc


@njit(cache=True, nogil=True)
def frontier_of(delta, theta):
    """The vertices with ``|δ| > θ``, in vertex order (two serial passes over every vertex,
    the second stopping at the last one)."""
    n = delta.size
    nf = 0
    for u in range(n):
        nf += abs(delta[u]) > theta
    front = np.empty(nf + 1, dtype=np.int64)
    j = 0
    for u in range(n):  # branch-free: a vertex is written, kept if it passes
        front[j] = u
        j += abs(delta[u]) > theta
        if j == nf:
            break
    return front[:nf]


@njit(cache=True, nogil=True)
def linear_sparse_round(out_offsets, out_targets, arc_coef, has_coef, src_scale, dst_scale,
                        delta, x, theta, front, nf, mark, block):
    """Push round from the frontier (serial), in place; Jacobi: frontier deltas are read first.

    ``block`` empty: the frontier (``|δ| > θ``) is found among every vertex.  Otherwise it is
    ``front[:nf]``, as :func:`linear_scan` found it in the residual set (``mark``, ``block``) for
    this θ, and every target is flagged in the set, which so keeps every vertex whose δ is
    non-zero.  Either way the frontier is taken in vertex order.

    Returns (arcs processed, vertices newly flagged, sum of the δ absorbed into x).
    """
    listing = block.size > 0
    if not listing:
        front = frontier_of(delta, theta)
        nf = front.size
    sent = np.empty(nf, dtype=np.float64)
    absorbed = 0.0
    for i in range(nf):
        u = front[i]
        d = delta[u]
        sent[i] = d * src_scale[u]
        x[u] += d
        absorbed += d
        delta[u] = 0.0
    arcs = 0
    added = 0
    for i in range(nf):
        u = front[i]
        s = sent[i]
        for e in range(out_offsets[u], out_offsets[u + 1]):
            v = out_targets[e]
            c = arc_coef[e] if has_coef else 1.0
            delta[v] += dst_scale[v] * c * s
            if listing and mark[v] == 0:
                mark[v] = 1
                block[v >> BLOCK_SHIFT] = 1
                added += 1
        arcs += out_offsets[u + 1] - out_offsets[u]
    return arcs, added, absorbed


# ===================================================================== monotone (min/max) family

@njit(inline="always")
def relax(op, xu, a):
    if op == _PLUS:
        return xu + a
    if op == _MIN:
        return min(xu, a)
    if op == _MAX:
        return max(xu, a)
    if op == _TIMES:
        return xu * a
    return xu


@njit(inline="always")
def better(combine, cand, cur):
    if combine == 0:
        return cand < cur
    return cand > cur


@njit(parallel=True, cache=True, nogil=True)
def monotone_scan(active, out_degree):
    """Frontier size and its out-arc volume."""
    nf = 0
    vol = 0
    for u in prange(active.size):
        if active[u]:
            nf += 1
            vol += out_degree[u]
    return nf, vol


@njit(parallel=True, cache=True, nogil=True)
def monotone_dense_round(cuts, in_offsets, in_sources, in_value, has_value, op, combine,
                         x, active, new_x, new_active):
    """Pull round: every vertex takes the best candidate from its active in-neighbours, the
    vertex ranges ``cuts`` (of about equal in-arcs) one a task.

    Returns the number of vertices whose value improved.
    """
    got = np.zeros(cuts.size - 1, np.int64)
    for t in prange(cuts.size - 1):
        for v in range(cuts[t], cuts[t + 1]):
            best = x[v]
            for k in range(in_offsets[v], in_offsets[v + 1]):
                u = in_sources[k]
                if active[u]:
                    a = in_value[k] if has_value else 1.0
                    c = relax(op, x[u], a)
                    if better(combine, c, best):
                        best = c
            new_x[v] = best
            if best != x[v]:
                new_active[v] = True
                got[t] += 1
            else:
                new_active[v] = False
    return got.sum()


@njit(cache=True, nogil=True)
def monotone_sparse_round(out_offsets, out_targets, arc_value, has_value, op, combine, x, active):
    """Push round from the active vertices (serial, in place, Jacobi reads of the frontier).

    Returns (arcs processed, vertices improved); ``active`` becomes the next frontier.
    """
    n = x.size
    nf = 0
    for u in range(n):
        if active[u]:
            nf += 1
    front = np.empty(nf, dtype=np.int64)
    sent = np.empty(nf, dtype=np.float64)
    j = 0
    for u in range(n):
        if active[u]:
            front[j] = u
            sent[j] = x[u]
            active[u] = False
            j += 1
    arcs = 0
    improved = 0
    for i in range(nf):
        u = front[i]
        xu = sent[i]
        for e in range(out_offsets[u], out_offsets[u + 1]):
            v = out_targets[e]
            a = arc_value[e] if has_value else 1.0
            c = relax(op, xu, a)
            if better(combine, c, x[v]):
                x[v] = c
                if not active[v]:
                    active[v] = True
                    improved += 1
        arcs += out_offsets[u + 1] - out_offsets[u]
    return arcs, improved


# ====================================================================== h-index (k-core) family

@njit(cache=True, nogil=True)
def undirected_neighbours(out_offsets, out_targets, in_offsets, in_sources):
    """Neighbour lists of the undirected multigraph of the arcs, self-loops removed (CSR)."""
    n = out_offsets.size - 1
    deg = np.zeros(n + 1, dtype=np.int64)
    for v in range(n):
        c = 0
        for e in range(out_offsets[v], out_offsets[v + 1]):
            if out_targets[e] != v:
                c += 1
        for k in range(in_offsets[v], in_offsets[v + 1]):
            if in_sources[k] != v:
                c += 1
        deg[v + 1] = c
    for v in range(n):
        deg[v + 1] += deg[v]
    nbr = np.empty(deg[n], dtype=out_targets.dtype)
    for v in range(n):
        j = deg[v]
        for k in range(in_offsets[v], in_offsets[v + 1]):
            u = in_sources[k]
            if u != v:
                nbr[j] = u
                j += 1
        for e in range(out_offsets[v], out_offsets[v + 1]):
            u = out_targets[e]
            if u != v:
                nbr[j] = u
                j += 1
    return deg, nbr


@njit(cache=True, nogil=True)
def h_index(count, nbr, lo, hi, est, k):
    """The largest ``h <= k`` such that at least ``h`` of ``est[nbr[lo:hi]]`` are ``>= h`` (the
    h-index of a vertex's neighbours capped at its estimate ``k``, with multiplicity);
    ``count`` is scratch of at least ``k + 1`` entries."""
    for j in range(k + 1):
        count[j] = 0
    for j in range(lo, hi):
        count[min(est[nbr[j]], k)] += 1
    acc = 0
    h = k
    while h > 0:
        acc += count[h]
        if acc >= h:
            break
        h -= 1
    return h


@njit(parallel=True, cache=True, nogil=True)
def hindex_round(offsets, nbr, est, frontier, new_est, chunks):
    """Recompute the h-index of every frontier vertex from its neighbours' estimates (Jacobi).

    ``new_est`` must equal ``est`` on entry.  Returns the number of estimates that dropped.
    """
    nf = frontier.size
    dropped = 0
    maxdeg = 0
    for i in range(nf):
        v = frontier[i]
        maxdeg = max(maxdeg, est[v])
    for c in prange(chunks):
        count = np.zeros(maxdeg + 2, dtype=np.int64)
        lo = nf * c // chunks
        hi = nf * (c + 1) // chunks
        for i in range(lo, hi):
            v = frontier[i]
            k = est[v]
            if k == 0:
                continue
            h = h_index(count, nbr, offsets[v], offsets[v + 1], est, k)
            if h < k:
                new_est[v] = h
                dropped += 1
    return dropped


@njit(cache=True, nogil=True)
def hindex_next_frontier(offsets, nbr, est, new_est, frontier, mark, buf):
    """Neighbours of the vertices whose estimate dropped (deduplicated); copies new_est into est.

    ``mark`` (bool, n) must be all False on entry and is left so; ``buf`` (int64, n) is scratch.
    """
    count = 0
    for i in range(frontier.size):
        v = frontier[i]
        if new_est[v] != est[v]:
            for j in range(offsets[v], offsets[v + 1]):
                u = nbr[j]
                if not mark[u]:
                    mark[u] = True
                    buf[count] = u
                    count += 1
    out = buf[:count].copy()
    for i in range(count):
        mark[out[i]] = False
    for i in range(frontier.size):
        v = frontier[i]
        est[v] = new_est[v]
    return out
