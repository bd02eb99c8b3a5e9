"""Numba CPU kernels of the vertex-centric asynchronous engine (``mode="vertex-async"``, DiGraph-t,
Groute-like).

One call = one pass over a worklist of active vertices, spread over threads in dynamic chunks.
Unlike BSP, a value written during a pass is read by every later step of the same pass (there is
no second buffer), and concurrent writers to one master never lose a contribution: pushes use the
atomic add / min / max of :mod:`digraph.smx.cpu.atomics`.
"""

import numba
import numpy as np
from numba import njit, prange

from .atomics import atomic_add, atomic_improve, atomic_xchg
from .bsp import BLOCK_SHIFT, better, h_index, relax
from .serial import serial_twin

__all__ = []


# a call, not inline="always": Numba 0.68 on Python 3.12 then failed to compile linear_push_pass
# ("unexpected cycle in lookup()" among its reductions)
@njit(cache=True, nogil=True)
def _push_residual(u, out_offsets, out_targets, arc_coef, has_coef, src_scale, dst_scale, delta,
                   x, mark, block, listing):
    """Vertex ``u`` takes its whole residual and pushes it along its out-arcs (atomic adds);
    with ``listing``, every target is flagged in the residual set (``mark``, ``block``: plain
    stores of 1).  Returns (arcs, δ absorbed, targets newly flagged: two threads that flag one
    vertex at once may both count it, so this may overcount, never undercount)."""
    d = atomic_xchg(delta, u, 0.0)
    if d == 0.0:
        return 0, 0.0, 0
    x[u] += d  # u occurs once in the worklist: a single writer
    s = d * src_scale[u]
    lo = out_offsets[u]
    hi = out_offsets[u + 1]
    flagged = 0
    for e in range(lo, hi):
        v = out_targets[e]
        c = arc_coef[e] if has_coef else 1.0
        atomic_add(delta, v, dst_scale[v] * c * s)
        if listing and mark[v] == 0:
            mark[v] = 1
            block[v >> BLOCK_SHIFT] = 1
            flagged += 1
    return hi - lo, d, flagged


@njit(parallel=True, cache=True, nogil=True)
def linear_push_pass(worklist, out_offsets, out_targets, arc_coef, has_coef, src_scale,
                     dst_scale, delta, x, mark, block, serial):
    """Each worklist vertex takes its whole pending residual and pushes it along its out-arcs.

    ``block`` not empty: every target is flagged in the residual set (``mark``, ``block``).
    ``serial``: the pass runs on the calling thread (a small worklist does not pay for waking
    the others).

    Returns (arcs processed, sum of the δ absorbed into x, vertices newly flagged, at most
    overcounted).
    """
    listing = block.size > 0
    arcs = 0
    absorbed = 0.0
    added = 0
    if serial:
        for i in range(worklist.size):
            a, d, f = _push_residual(worklist[i], out_offsets, out_targets, arc_coef, has_coef,
                                     src_scale, dst_scale, delta, x, mark, block, listing)
            arcs += a
            absorbed += d
            added += f
        return arcs, absorbed, added
    for i in prange(worklist.size):
        a, d, f = _push_residual(worklist[i], out_offsets, out_targets, arc_coef, has_coef,
                                 src_scale, dst_scale, delta, x, mark, block, listing)
        arcs += a
        absorbed += d
        added += f
    return arcs, absorbed, added


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


monotone_push_pass_serial = serial_twin(monotone_push_pass)


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
        lo = offsets[v]
        hi = offsets[v + 1]
        h = h_index(count[numba.get_thread_id()], nbr, lo, hi, est, k)
        arcs += hi - lo
        if h < k:
            est[v] = h  # v occurs once in the worklist: a single writer
            dropped += 1
            for j in range(lo, hi):
                dirty[nbr[j]] = True
    return dropped, arcs


@njit(cache=True, nogil=True)
def monotone_queue(worklist, out_offsets, out_targets, arc_value, has_value, op, combine, x, sent,
                   inq, queue, limit, max_arcs):
    """A first-in first-out label-correcting phase on one thread (Bellman–Ford–Moore: D'Esopo and
    Pape's queue, Bertsekas, *Network Optimization*, 1998, §2.3): every improved vertex joins the
    queue once, and a vertex leaves it by pushing its current value.  It costs the work it does
    (no pass over every vertex), which is what a small frontier needs: on a chain of n vertices
    the parallel passes do one vertex each, n passes of O(n).

    Stops when the queue is empty, holds more than ``limit`` vertices, or after ``max_arcs`` arcs
    (then the queued vertices stay active, ``x != sent``, for the parallel passes).  ``inq`` (all
    False) and ``queue`` (length n) are scratch.  Returns (vertices processed, arcs processed,
    vertices left in the queue)."""
    n = x.size
    head = 0
    count = 0
    for i in range(worklist.size):
        u = worklist[i]
        if not inq[u]:
            inq[u] = True
            queue[(head + count) % n] = u
            count += 1
    done = 0
    arcs = 0
    while count > 0 and count <= limit and arcs <= max_arcs:
        u = queue[head]
        head = (head + 1) % n
        count -= 1
        inq[u] = False
        xu = x[u]
        if xu == sent[u]:
            continue
        sent[u] = xu
        done += 1
        lo = out_offsets[u]
        hi = out_offsets[u + 1]
        for e in range(lo, hi):
            v = out_targets[e]
            a = arc_value[e] if has_value else 1.0
            c = relax(op, xu, a)
            if better(combine, c, x[v]):
                x[v] = c
                if not inq[v]:
                    inq[v] = True
                    queue[(head + count) % n] = v
                    count += 1
        arcs += hi - lo
    left = count
    while count > 0:  # hand the rest back: clear their flags (they stay active: x != sent)
        inq[queue[head]] = False
        head = (head + 1) % n
        count -= 1
    return done, arcs, left


@njit(cache=True, nogil=True)
def _sift_up(key, val, pos, j, k, v):
    """Place vertex ``v`` with key ``k`` at slot ``j`` of the 4-ary heap or above it (the slots
    it passes move down one level); ``pos`` follows every vertex moved."""
    while j > 0:
        p = (j - 1) >> 2
        if key[p] <= k:
            break
        key[j] = key[p]
        val[j] = val[p]
        pos[val[j]] = j
        j = p
    key[j] = k
    val[j] = v
    pos[v] = j


@njit(cache=True, nogil=True)
def monotone_heap(worklist, out_offsets, out_targets, arc_value, has_value, op, combine, x, sent,
                  limit, max_arcs, pos):
    """:func:`monotone_queue` in order of value: a 4-ary heap of vertices, best value first, a
    vertex improved while in it moved up in place (``pos``: each vertex's slot, -1 when out;
    all -1 on entry, and left so).  Dijkstra's order: with ``plus`` and non-negative arc values
    every vertex is settled by its first push, each arc relaxed once.  The order only changes
    the work, not the answer: a vertex improved after its push is pushed again.  Stops when the
    heap is empty, holds more than ``limit`` vertices, or after ``max_arcs`` arcs (the vertices
    not yet pushed stay active).  Returns (vertices processed, arcs processed, vertices left)."""
    sign = 1.0 if combine == 0 else -1.0
    # a vertex is in the heap once at most: n slots (uninitialised, touched as they fill)
    key = np.empty(x.size, np.float64)
    val = np.empty(x.size, np.int64)
    size = 0
    for i in range(worklist.size):
        u = worklist[i]
        if pos[u] < 0:
            size += 1
            _sift_up(key, val, pos, size - 1, sign * x[u], u)
    done = 0
    arcs = 0
    while size > 0 and size <= limit and arcs <= max_arcs:
        u = val[0]  # the best: out, the last slot's vertex sifted down from the top
        pos[u] = -1
        size -= 1
        if size > 0:
            lk = key[size]
            lv = val[size]
            j = 0
            while True:
                c = 4 * j + 1
                if c >= size:
                    break
                m = c
                mk = key[c]
                for q in range(c + 1, min(c + 4, size)):
                    if key[q] < mk:
                        mk = key[q]
                        m = q
                if lk <= mk:
                    break
                key[j] = mk
                val[j] = val[m]
                pos[val[j]] = j
                j = m
            key[j] = lk
            val[j] = lv
            pos[lv] = j
        xu = x[u]
        if xu == sent[u]:
            continue  # pushed with this value already
        sent[u] = xu
        done += 1
        lo = out_offsets[u]
        hi = out_offsets[u + 1]
        for e in range(lo, hi):
            v = out_targets[e]
            a = arc_value[e] if has_value else 1.0
            c = relax(op, xu, a)
            if better(combine, c, x[v]):
                x[v] = c
                j = pos[v]
                if j < 0:
                    j = size
                    size += 1
                _sift_up(key, val, pos, j, sign * c, v)
        arcs += hi - lo
    for i in range(size):  # hand the rest back (they stay active: x != sent)
        pos[val[i]] = -1
    return done, arcs, size
