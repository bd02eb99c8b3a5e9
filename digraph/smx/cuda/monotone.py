"""The min/max (monotone) and h-index (k-core) families' CUDA kernels
(:mod:`digraph.smx.cuda.kernels` re-exports them): the push round from a frontier (BSP, on a
snapshot) and the vertex-async push (on the live state), and the h-index round (each frontier
vertex recomputes its h-index, a drop marks its neighbours), each with its ``*_heavy`` companion
that gives a vertex of degree >= HEAVY a whole block.  A vertex's arc loop is one device
function shared by both kernel shapes (:func:`relax_out`, :func:`count_at_least`,
:func:`mark_all`): one thread walks the arcs with step 1, a block's threads stride over them
with step ``HB`` (the block size of every ``*_heavy`` launch)."""


from numba import cuda, float64

from .common import HB, HEAVY, block_sum, improve, relax

__all__ = []


# ======================================================================= monotone (min/max) family

@cuda.jit(device=True, inline=True)
def relax_out(out_targets, arc_value, has_value, op, combine, x, xu, a, b, step, mark, marking):
    """Relax the out-arcs ``a, a + step, ... < b`` with the source value ``xu`` (atomic min/max
    into ``x``; a thread alone: step 1; a block's thread: its first arc and step ``HB``); with
    ``marking`` an improved target is marked in ``mark`` (left alone otherwise: the
    vertex-async kernels pass ``sent`` in its place)."""
    for e in range(a, b, step):
        v = out_targets[e]
        c = arc_value[e] if has_value else 1.0
        if improve(x, v, relax(op, xu, c), combine) and marking:
            mark[v] = 1


@cuda.jit(cache=True)
def monotone_push(front, xs, out_offsets, out_targets, arc_value, has_value, op, combine, x,
                  mark):
    """Push round from ``front``: each vertex relaxes its out-arcs with ``xs[u]`` (a snapshot for
    BSP's Jacobi rounds, the live state for vertex-async); an improved target is marked."""
    i = cuda.grid(1)
    if i < front.size:
        u = front[i]
        if out_offsets[u + 1] - out_offsets[u] >= HEAVY:
            return
        xu = xs[u]
        relax_out(out_targets, arc_value, has_value, op, combine, x, xu, out_offsets[u],
                   out_offsets[u + 1], 1, mark, True)


@cuda.jit(cache=True)
def monotone_push_heavy(heavy, active, xs, out_offsets, out_targets, arc_value, has_value, op,
                        combine, x, mark):
    """:func:`monotone_push` for the active vertices of out-degree >= HEAVY: a block each."""
    for i in range(cuda.blockIdx.x, heavy.size, cuda.gridDim.x):
        u = heavy[i]
        if active[u]:
            xu = xs[u]
            relax_out(out_targets, arc_value, has_value, op, combine, x, xu,
                       out_offsets[u] + cuda.threadIdx.x, out_offsets[u + 1], HB, mark, True)


@cuda.jit(cache=True)
def monotone_async_push(work, out_offsets, out_targets, arc_value, has_value, op, combine, x,
                        sent):
    """vertex-async pass: each worklist vertex relaxes its out-arcs with its current value and
    records it in ``sent`` (active again while ``x[u] != sent[u]``)."""
    i = cuda.grid(1)
    if i < work.size:
        u = work[i]
        if out_offsets[u + 1] - out_offsets[u] >= HEAVY:
            return
        xu = x[u]
        sent[u] = xu
        relax_out(out_targets, arc_value, has_value, op, combine, x, xu, out_offsets[u],
                   out_offsets[u + 1], 1, sent, False)


@cuda.jit(cache=True)
def monotone_async_push_heavy(heavy, out_offsets, out_targets, arc_value, has_value, op, combine,
                              x, sent):
    """:func:`monotone_async_push` for the vertices of out-degree >= HEAVY whose value changed
    since they last pushed: a block each."""
    sh = cuda.shared.array(2, float64)
    for i in range(cuda.blockIdx.x, heavy.size, cuda.gridDim.x):
        u = heavy[i]
        if cuda.threadIdx.x == 0:
            xu = x[u]
            sh[0] = xu
            sh[1] = 1.0 if xu != sent[u] else 0.0
            sent[u] = xu
        cuda.syncthreads()
        if sh[1] != 0.0:
            xu = sh[0]
            relax_out(out_targets, arc_value, has_value, op, combine, x, xu,
                       out_offsets[u] + cuda.threadIdx.x, out_offsets[u + 1], HB, sent, False)
        cuda.syncthreads()


# ======================================================================== h-index family (k-core)

@cuda.jit(device=True, inline=True)
def count_at_least(offsets, nbr, est, v, h, start, step):
    """How many of the neighbours ``start, start + step, ...`` of ``v`` have an estimate >= h,
    counted until h of them are found (the answer to "at least h?" is then known: alone, or in a
    block whose threads' counts are summed)."""
    cnt = 0
    for j in range(offsets[v] + start, offsets[v + 1], step):
        if est[nbr[j]] >= h:
            cnt += 1
            if cnt >= h:
                break
    return cnt


@cuda.jit(device=True, inline=True)
def mark_all(offsets, nbr, mark, v, start, step):
    """Mark the neighbours ``start, start + step, ...`` of ``v``."""
    for j in range(offsets[v] + start, offsets[v + 1], step):
        mark[nbr[j]] = 1


@cuda.jit(device=True)
def hindex(offsets, nbr, est, v, k):
    """Largest h ≤ k with at least h neighbours whose estimate is ≥ h (binary search)."""
    lo = 0
    hi = k
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count_at_least(offsets, nbr, est, v, mid, 0, 1) >= mid:
            lo = mid
        else:
            hi = mid - 1
    return lo


@cuda.jit(cache=True)
def hindex_round(front, offsets, nbr, est_read, est_write, mark):
    """Each frontier vertex recomputes its h-index from ``est_read`` into ``est_write``; a drop
    marks its neighbours (BSP: ``est_read`` is the previous round's copy; vertex-async: the same
    array)."""
    i = cuda.grid(1)
    if i < front.size:
        v = front[i]
        k = est_read[v]
        if k > 0 and offsets[v + 1] - offsets[v] < HEAVY:
            h = hindex(offsets, nbr, est_read, v, k)
            if h < k:
                est_write[v] = h
                mark_all(offsets, nbr, mark, v, 0, 1)


@cuda.jit(cache=True)
def hindex_round_heavy(heavy, infront, offsets, nbr, est_read, est_write, mark):
    """:func:`hindex_round` for the frontier vertices of degree >= HEAVY: a block each, every probe
    of the binary search counted by all of its threads (a thread's count stops at the probe: the
    block's sum is then >= it too, the same answer)."""
    buf = cuda.shared.array(HB, float64)
    for i in range(cuda.blockIdx.x, heavy.size, cuda.gridDim.x):
        v = heavy[i]
        k = est_read[v]
        if infront[v] and k > 0:  # uniform over the block: every thread reads the same values
            lo = 0
            hi = k
            while lo < hi:
                mid = (lo + hi + 1) // 2
                cnt = count_at_least(offsets, nbr, est_read, v, mid, cuda.threadIdx.x, HB)
                if block_sum(buf, cnt) >= mid:
                    lo = mid
                else:
                    hi = mid - 1
            if lo < k:
                if cuda.threadIdx.x == 0:
                    est_write[v] = lo
                mark_all(offsets, nbr, mark, v, cuda.threadIdx.x, HB)
        cuda.syncthreads()
