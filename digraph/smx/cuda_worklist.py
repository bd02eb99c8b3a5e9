"""GPU kernels of ``vertex-async`` on min/max systems with the worklist kept on the GPU
(:mod:`digraph.dispatch.cuda.one_gpu.worklist`): a round pops every vertex of its queue, relaxes
its out-arcs with atomic min/max, and appends each target it improved to the next round's queue,
once (an atomic stamp), so rounds are launched back to back without the host.

Queues rotate as in :mod:`digraph.smx.cuda_clusters`: round ``r`` reads ``counts[r % 3]``
entries of ``queue_in``, appends to ``queue_out`` at ``counts[(r + 1) % 3]``, and zeroes
``counts[(r + 2) % 3]``.  A vertex of out-degree ``>= HEAVY`` is left by :func:`queue_push` to
:func:`queue_push_heavy` (a block each, its arcs strided over the block), through a small queue
of its own (``hq`` with ``hcount[r % 2]``).  ``work[0]`` adds up the arcs read.
"""

from numba import cuda, float64

from .cuda_kernels import HB, HEAVY, improve, relax

__all__ = ["queue_push", "queue_push_heavy"]


@cuda.jit(cache=True)
def queue_push(r, queue_in, counts, queue_out, mark, hist, hq, hcount, out_offsets, out_targets,
               arc_value, has_value, op, combine, x, work):
    """Round ``r``, the vertices of out-degree below HEAVY: a thread each (grid stride)."""
    n_in = counts[r % 3]
    nxt = r + 1
    if cuda.grid(1) == 0:
        counts[(r + 2) % 3] = 0
        hist[r] = n_in
    arcs = 0
    for i in range(cuda.grid(1), n_in, cuda.gridsize(1)):
        u = queue_in[i]
        lo = out_offsets[u]
        hi = out_offsets[u + 1]
        if hi - lo >= HEAVY:
            hq[cuda.atomic.add(hcount, r % 2, 1)] = u
            continue
        xu = x[u]
        arcs += hi - lo
        for e in range(lo, hi):
            v = out_targets[e]
            a = arc_value[e] if has_value else 1.0
            if improve(x, v, relax(op, xu, a), combine):
                if cuda.atomic.max(mark, v, nxt) < nxt:
                    queue_out[cuda.atomic.add(counts, nxt % 3, 1)] = v
    if arcs:
        cuda.atomic.add(work, 0, arcs)


@cuda.jit(cache=True)
def queue_push_heavy(r, counts, queue_out, mark, hq, hcount, out_offsets, out_targets, arc_value,
                     has_value, op, combine, x, work):
    """Round ``r``, the heavy vertices :func:`queue_push` set aside: a block each."""
    sh = cuda.shared.array(1, float64)
    nxt = r + 1
    nh = hcount[r % 2]
    tid = cuda.threadIdx.x
    if cuda.blockIdx.x == 0 and tid == 0:
        hcount[nxt % 2] = 0  # read by round r - 1, filled by round r + 1
    for i in range(cuda.blockIdx.x, nh, cuda.gridDim.x):
        u = hq[i]
        lo = out_offsets[u]
        hi = out_offsets[u + 1]
        if tid == 0:
            sh[0] = x[u]
            cuda.atomic.add(work, 0, hi - lo)
        cuda.syncthreads()
        xu = sh[0]
        for e in range(lo + tid, hi, HB):
            v = out_targets[e]
            a = arc_value[e] if has_value else 1.0
            if improve(x, v, relax(op, xu, a), combine):
                if cuda.atomic.max(mark, v, nxt) < nxt:
                    queue_out[cuda.atomic.add(counts, nxt % 3, 1)] = v
        cuda.syncthreads()
