"""Numba CPU kernels of the vertex-centric asynchronous engine (``mode="vertex-async"``, DiGraph-t,
Groute-like).

One call = one pass over a worklist of active vertices, spread over threads in dynamic chunks.
Unlike BSP, a value written during a pass is read by every later step of the same pass (there is
no second buffer), and concurrent writers to one master never lose a contribution: pushes use the
atomic add / min / max of :mod:`digraph.smx.atomics`.
"""

import numba
from numba import njit, prange

from .atomics import atomic_add, atomic_improve, atomic_xchg
from .cpu_bsp import relax

__all__ = []


@njit(parallel=True, cache=True, nogil=True)
def linear_push_pass(worklist, out_offsets, out_targets, arc_coef, has_coef, src_scale,
                     dst_scale, delta, x):
    """Each worklist vertex takes its whole pending residual and pushes it along its out-arcs.

    Returns the number of arcs processed.
    """
    arcs = 0
    for i in prange(worklist.size):
        u = worklist[i]
        d = atomic_xchg(delta, u, 0.0)
        if d == 0.0:
            continue
        x[u] += d  # u occurs once in the worklist: a single writer
        s = d * src_scale[u]
        lo = out_offsets[u]
        hi = out_offsets[u + 1]
        for e in range(lo, hi):
            v = out_targets[e]
            c = arc_coef[e] if has_coef else 1.0
            atomic_add(delta, v, dst_scale[v] * c * s)
        arcs += hi - lo
    return arcs


@njit(parallel=True, cache=True, nogil=True)
def monotone_push_pass(worklist, out_offsets, out_targets, arc_value, has_value, op, combine,
                       x, sent):
    """Each worklist vertex relaxes its out-arcs with its current value (atomic min/max).

    ``sent[u]`` records the value u last pushed; u is active again while ``x[u] != sent[u]``.
    Returns the number of arcs processed.
    """
    arcs = 0
    for i in prange(worklist.size):
        u = worklist[i]
        xu = x[u]
        sent[u] = xu
        lo = out_offsets[u]
        hi = out_offsets[u + 1]
        for e in range(lo, hi):
            v = out_targets[e]
            a = arc_value[e] if has_value else 1.0
            c = relax(op, xu, a)
            atomic_improve(x, v, c, combine)
        arcs += hi - lo
    return arcs


@njit(parallel=True, cache=True, nogil=True)
def hindex_pass(worklist, offsets, nbr, est, dirty, count):
    """Asynchronous h-index updates; a drop marks the neighbours dirty.

    ``count`` is a (threads, max degree + 2) scratch array.  Returns (estimates dropped, arcs read).
    """
    dropped = 0
    arcs = 0
    for i in prange(worklist.size):
        v = worklist[i]
        k = est[v]
        if k == 0:
            continue
        buf = count[numba.get_thread_id()]
        for j in range(k + 1):
            buf[j] = 0
        lo = offsets[v]
        hi = offsets[v + 1]
        for j in range(lo, hi):
            buf[min(est[nbr[j]], k)] += 1
        arcs += hi - lo
        acc = 0
        h = k
        while h > 0:
            acc += buf[h]
            if acc >= h:
                break
            h -= 1
        if h < k:
            est[v] = h  # v occurs once in the worklist: a single writer
            dropped += 1
            for j in range(lo, hi):
                dirty[nbr[j]] = True
    return dropped, arcs
