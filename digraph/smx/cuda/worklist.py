"""GPU kernels of ``vertex-async`` on min/max systems with the worklist kept on the GPU
(:mod:`digraph.dispatch.engines.push.gpu_worklist`): a round pops every vertex of its queue, relaxes
its out-arcs with atomic min/max, and appends each target it improved to the next round's queue,
once (an atomic stamp), so rounds are launched back to back without the host.

Queues rotate as in :mod:`digraph.smx.cuda.clusters`: round ``r`` reads ``counts[r % 3]``
entries of ``queue_in``, appends to ``queue_out`` at ``counts[(r + 1) % 3]``, and zeroes
``counts[(r + 2) % 3]``.  A vertex of out-degree ``>= HEAVY`` is left by :func:`queue_push` to
:func:`queue_push_heavy` (a block each, its arcs strided over the block), through a small queue
of its own (``hq`` with ``hcount[r % 2]``); the arc loop is one device function
(:func:`_relax_queue`) shared by both kernels.  ``work[0]`` adds up the arcs read.
"""

from numba import cuda, float64

from .common import HB, HEAVY, improve, relax

__all__ = ["queue_push", "queue_push_heavy"]


@cuda.jit(device=True, inline=True)
def _relax_queue(out_targets, arc_value, has_value, op, combine, x, xu, mark, nxt, queue_out,
                 counts, a, b, step):
    """Relax the out-arcs ``a, a + step, ... < b`` of a vertex whose value is ``xu``; a target
    improved for the first time in round ``nxt`` is appended to ``queue_out`` (the arc loop of
    both :func:`queue_push`, a thread per vertex, step 1, and :func:`queue_push_heavy`, a block's
    threads, step ``HB``)."""
    for e in range(a, b, step):
        v = out_targets[e]
        c = arc_value[e] if has_value else 1.0
        if improve(x, v, relax(op, xu, c), combine):
            if cuda.atomic.max(mark, v, nxt) < nxt:
                queue_out[cuda.atomic.add(counts, nxt % 3, 1)] = v


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
        arcs += hi - lo
        _relax_queue(out_targets, arc_value, has_value, op, combine, x, x[u], mark, nxt,
                     queue_out, counts, lo, hi, 1)
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
        _relax_queue(out_targets, arc_value, has_value, op, combine, x, sh[0], mark, nxt,
                     queue_out, counts, lo + tid, hi, HB)
        cuda.syncthreads()
