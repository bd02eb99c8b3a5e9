"""Numba CPU kernels of the SCC engine (:mod:`digraph.dispatch.engines.scc.cpu`) for a component
split over the threads (one with at least
:attr:`~digraph.dispatch.engines.scc.cpu.DagPushSettings.split_arcs` inside arcs): its pull over
every thread (:func:`pull_range`), then sweeps of its chunks, one chunk a thread, exchanging the
pushes that cross chunks either through per-thread accumulators that each owner drains at once
(:func:`sweep_chunks`, :func:`chunk_pending`: Gauss–Seidel order kept where most arcs cross) or
through per-pair outboxes added one sweep late (:func:`sweep_boxes`, sized by :func:`box_capacity`:
cheaper where few arcs cross).  Positions, counters and the soft priority are those of :mod:`~.scc`.
"""

import numba
import numpy as np
from numba import njit, prange

from .scc import MAX_SWEEPS, PUSHES, SWEEPS, VERTEX_PUSHES, pull, pushable

__all__ = ["pull_range", "sweep_chunks", "chunk_pending", "box_capacity", "sweep_boxes"]


@njit(parallel=True, cache=True, nogil=True)
def pull_range(a, z, ein_offsets, ein_sources, ecoef, has_coef, vscale, b, x, r):
    """The pull of a component split over threads (positions ``a:z``)."""
    for j in prange(a, z):
        r[j] = pull(j, ein_offsets, ein_sources, ecoef, has_coef, vscale, b, x)


@njit(cache=True, nogil=True, inline="always")
def _chunk_pending(rl, acc, seen, t, lo, hi, a, iout_offsets, vmax, linf):
    """(pending mass, largest pending residual, mass and out-arcs of the pending residuals above
    ``vmax``: see :func:`pushable`; L∞ route only) of chunk ``lo:hi`` owned by thread ``t``: its
    own residuals plus what the other threads accumulated for it and it has not taken yet."""
    mass = 0.0
    top = 0.0
    pmass = 0.0
    parcs = 0
    for j in range(lo, hi):
        v = abs(rl[j])
        for q in range(acc.shape[0]):
            if q != t:
                v += abs(acc[q, j - a] - seen[q, j - a])
        mass += v
        top = max(top, v)
        if linf and v > vmax:
            pmass += v
            parcs += iout_offsets[j + 1] - iout_offsets[j]
    return mass, top, pmass, parcs


@njit(parallel=True, cache=True, nogil=True)
def sweep_chunks(bounds, iout_offsets, iout_targets, icoef, has_coef, vscale, x, rl, acc, seen,
                 inner, budget, vmax, linf, prio, omega, cnt):
    """Up to ``inner`` sweeps of each chunk ``bounds[t]:bounds[t+1]`` of one large component, a
    thread per chunk.  A push into the thread's own chunk adds to ``rl``; into another thread's
    chunk, to the pusher's own accumulator ``acc[t, w - a]``, which only it writes and which only
    grows by what was pushed during this call (:func:`chunk_pending` folds and zeroes it between
    calls).  The owner of ``w`` takes ``acc[s, w - a] − seen[s, w - a]`` from
    each other thread ``s`` and records what it took in ``seen`` (which only it writes): a value
    read while the pusher adds is either before or after the add, never torn (8-byte aligned), so
    no contribution is lost and no atomic instruction is needed.  A chunk stops early when its own
    pending mass is within its share of the budget (by inside arcs)."""
    T = bounds.size - 1
    a = bounds[0]
    arcs = iout_offsets[bounds[T]] - iout_offsets[a]
    for t in prange(T):
        c = cnt[numba.get_thread_id()]
        lo = bounds[t]
        hi = bounds[t + 1]
        mine = iout_offsets[hi] - iout_offsets[lo]
        share = budget * mine / arcs
        base = budget / arcs
        mass, top, pmass, parcs = _chunk_pending(rl, acc, seen, t, lo, hi, a, iout_offsets, vmax,
                                                    linf)
        sweeps = 0
        for s in range(inner):
            if (top <= vmax) if linf else (mass <= share):
                break
            sweeps += 1
            if linf:
                theta = prio * pmass / max(parcs, 1)
            else:
                theta = max(prio * mass / max(mine, 1), base)
            for j in range(lo, hi):
                d = rl[j]
                for q in range(T):
                    if q != t:
                        cur = acc[q, j - a]
                        old = seen[q, j - a]
                        if cur != old:
                            d += cur - old
                            seen[q, j - a] = cur
                e0 = iout_offsets[j]
                e1 = iout_offsets[j + 1]
                ad = abs(d)
                if ad > theta * (e1 - e0) and ad > vmax:
                    dd = omega * d  # over-relaxed: (1 - omega) d stays (:mod:`.relaxation`)
                    x[j] += dd
                    rl[j] = d - dd
                    vd = 0.0 if has_coef else vscale[j] * dd  # every push without arc factors
                    for e in range(e0, e1):
                        w = iout_targets[e]
                        v = icoef[e] * dd if has_coef else vd
                        if w >= lo and w < hi:
                            rl[w] += v
                        else:
                            acc[t, w - a] += v
                    c[PUSHES] += e1 - e0
                    c[VERTEX_PUSHES] += 1
                else:
                    rl[j] = d
            mass, top, pmass, parcs = _chunk_pending(rl, acc, seen, t, lo, hi, a, iout_offsets,
                                                     vmax, linf)
        c[SWEEPS] += sweeps
        c[MAX_SWEEPS] = max(c[MAX_SWEEPS], sweeps)


@njit(parallel=True, cache=True, nogil=True)
def chunk_pending(bounds, rl, acc, seen, out):
    """Fold what the other threads pushed into each chunk into ``rl`` and set the accumulators
    back to zero; ``out[t]`` = (pending mass, largest pending residual) of chunk ``t`` (called
    between sweeps, threads at rest).

    The reset keeps each accumulator as small as what was pushed during one call of
    :func:`sweep_chunks`.  An accumulator that kept growing would reach the size of the
    solution itself (a hub's share of the rank), and every small push into it would then be
    rounded to a multiple of that size's ulp: mass made or lost by rounding each sweep, which
    at tight tolerances keeps the residual from ever falling below the budget."""
    T = bounds.size - 1
    a = bounds[0]
    for t in prange(T):
        mass = 0.0
        top = 0.0
        for j in range(bounds[t], bounds[t + 1]):
            d = rl[j]
            for q in range(T):
                if q != t:
                    d += acc[q, j - a] - seen[q, j - a]
                    acc[q, j - a] = 0.0
                    seen[q, j - a] = 0.0
            rl[j] = d
            mass += abs(d)
            top = max(top, abs(d))
        out[t, 0] = mass
        out[t, 1] = top


@njit(cache=True, nogil=True, inline="always")
def _owner(bounds, w):
    lo = 0
    hi = bounds.size - 2
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if bounds[mid] <= w:
            lo = mid
        else:
            hi = mid - 1
    return lo


@njit(parallel=True, cache=True, nogil=True)
def box_capacity(bounds, iout_offsets, iout_targets, cap):
    """``cap[t, q]``: inside arcs from chunk ``t`` into chunk ``q != t`` (a sweep pushes each at
    most once)."""
    T = bounds.size - 1
    for t in prange(T):
        for j in range(bounds[t], bounds[t + 1]):
            for e in range(iout_offsets[j], iout_offsets[j + 1]):
                q = _owner(bounds, iout_targets[e])
                if q != t:
                    cap[t, q] += 1


@njit(parallel=True, cache=True, nogil=True)
def sweep_boxes(bounds, iout_offsets, iout_targets, icoef, has_coef, vscale, x, rl, box_off,
                box_tgt, box_val, box_len, parity, theta, vmax, omega, cnt, out):
    """One sweep of each chunk of a split component, a thread per chunk, without atomics: a push
    into another chunk is written to the pusher's outbox for that chunk (half ``parity`` of a
    double buffer), which its owner adds in at the start of the next sweep (one sweep late; the
    call boundary is the barrier).  ``out[t]`` = (pending mass left in chunk ``t`` plus the mass
    it sent, largest pending residual, mass and out-arcs of its residuals above ``vmax``: see
    :func:`pushable`; 0 when ``vmax`` is 0, the L1 route).  ``theta = inf`` only drains the
    inboxes."""
    T = bounds.size - 1
    half = box_off[T * T]
    for t in prange(T):
        c = cnt[numba.get_thread_id()]
        lo = bounds[t]
        hi = bounds[t + 1]
        prev = 1 - parity
        for q in range(T):
            if q != t:
                k = q * T + t
                base = box_off[k] + prev * half
                for i in range(box_len[prev, k]):
                    rl[box_tgt[base + i]] += box_val[base + i]
                box_len[prev, k] = 0
        fill = np.zeros(T, np.int64)
        sent = 0.0
        swept = 0
        if theta < np.inf:
            swept = 1
            for j in range(lo, hi):
                d = rl[j]
                e0 = iout_offsets[j]
                e1 = iout_offsets[j + 1]
                ad = abs(d)
                if ad > theta * (e1 - e0) and ad > vmax:
                    dd = omega * d  # over-relaxed: (1 - omega) d stays (:mod:`.relaxation`)
                    x[j] += dd
                    rl[j] = d - dd
                    vd = 0.0 if has_coef else vscale[j] * dd  # every push without arc factors
                    for e in range(e0, e1):
                        w = iout_targets[e]
                        v = icoef[e] * dd if has_coef else vd
                        if w >= lo and w < hi:
                            rl[w] += v
                        else:
                            q = _owner(bounds, w)
                            p = box_off[t * T + q] + parity * half + fill[q]
                            box_tgt[p] = w
                            box_val[p] = v
                            fill[q] += 1
                            sent += abs(v)
                    c[PUSHES] += e1 - e0
                    c[VERTEX_PUSHES] += 1
        for q in range(T):
            if q != t:
                box_len[parity, t * T + q] = fill[q]
        mass = 0.0
        top = 0.0
        for j in range(lo, hi):
            mass += abs(rl[j])
            top = max(top, abs(rl[j]))
        out[t, 0] = mass + sent
        out[t, 1] = max(top, sent)
        pmass, parcs = pushable(rl, iout_offsets, lo, hi, vmax) if vmax > 0.0 else (0.0, 0)
        out[t, 2] = pmass
        out[t, 3] = parcs
        c[SWEEPS] += swept
