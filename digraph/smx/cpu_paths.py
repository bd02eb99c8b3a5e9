"""Numba CPU kernels of the path engine (``mode="path"`` and ``"path-nopriority"``, DiGraph §3.1).

A CPU thread takes a partition (a contiguous range of paths of one layer) and walks each selected
path arc by arc: arc ``j = (u → v)`` reads the newest ``x_u`` and, when its pending change is above
the threshold, transmits it to the master ``x_v`` at once (atomic add / min / max: several threads
may write one master), so a change at a path's head reaches its tail in the same round.  Partitions
are spread over threads in dynamic chunks (idle threads take the next partition).

Per-arc mirror state (DESIGN.md §3): ``s_j`` is the value of the arc's source last transmitted.

* linear systems: ``d = c_j (x_u − s_j)``; ``x_v += d``; ``s_j = x_u``.  The invariant
  ``x_v = b_v + Σ_j c_j s_j`` holds at every instant and the pending mass ``Σ_j c_j (x_u − s_j)``
  is exactly the L1 norm of the residual.
* monotone systems: an arc is pending while ``x_u ≠ s_j``; ``x_v = combine(x_v, relax(x_u, a_j))``.

Arcs are numbered in path order: arc ``i`` of path ``p`` is ``j = path_offsets[p] − p + i``.
"""

import math

import numba
import numpy as np
from numba import njit, prange

from .atomics import atomic_add, atomic_improve, atomic_xchg
from .cpu_bsp import relax

__all__ = []


@njit(inline="always")
def _bucket(score):
    """log2 bucket of a positive score (0..127): its binary exponent, from frexp (no logarithm)."""
    e = math.frexp(score)[1] - 1 + 64
    return min(max(e, 0), 127)


@njit(parallel=True, cache=True, nogil=True)
def linear_pending(parts, partition_offsets, path_offsets, path_vertices, coef, s, x, theta,
                   score, nact, part_active, rule, heat, hist, residual, want_residual):
    """Pending mass of every path of ``parts``, its active arcs (pending > θ) and its priority score.

    ``score[p]``: the pending mass (``rule`` 1, and 0), or ``D̄(p)·N(p)`` (``rule`` 2, the paper's
    ``Pri`` inside one layer); ``hist[t]`` counts thread ``t``'s active paths per log2 bucket of the
    score (one row per thread: no atomics);
    ``part_active[k]`` counts the active paths of partition ``parts[k]``.  With ``want_residual``
    the pending mass is also scattered to its target vertices (``residual``, zero on entry).
    Returns the total pending mass (an upper bound of the residual's L1 norm).
    """
    total = 0.0
    for k in prange(parts.size):
        q = parts[k]
        active = 0
        for p in range(partition_offsets[q], partition_offsets[q + 1]):
            a = path_offsets[p]
            b = path_offsets[p + 1] - 1
            base = a - p
            mass = 0.0
            cnt = 0
            for i in range(b - a):
                u = path_vertices[a + i]
                j = base + i
                d = abs(coef[j] * (x[u] - s[j]))
                mass += d
                if d > theta:
                    cnt += 1
                if want_residual and d != 0.0:
                    atomic_add(residual, path_vertices[a + i + 1], d)
            sc = heat[p] * cnt if rule == 2 else mass
            score[p] = sc
            nact[p] = cnt
            total += mass
            if cnt > 0:
                active += 1
                hist[numba.get_thread_id(), _bucket(sc)] += 1
        part_active[k] = active
    return total


@njit(parallel=True, cache=True, nogil=True)
def linear_walk(parts, partition_offsets, path_offsets, path_vertices, coef, s, x, theta,
                nact, score, min_score, local, local_budget, max_sweeps, path_scc, scc_last,
                scc_runs, stamp, length_hist):
    """Walk the active paths of ``parts`` whose score is at least ``min_score`` (the others are
    deferred); returns (arcs transmitted, arcs examined, paths walked, extra local sweeps).

    A partition ``q`` with ``local[q]`` holds whole SCC-vertices whose inputs are final: its thread
    sweeps it again and again (up to ``max_sweeps``, or until 64 sweeps bring no progress: the
    rounding floor) until its pending mass is at most ``local_budget[q]``, so small cyclic SCC-vertices converge inside one task instead of one
    global round per sweep.  Book-keeping: ``scc_runs[s]`` counts the rounds (``stamp``) in which
    SCC-vertex ``s`` ran and ``length_hist[t]`` the lengths of the paths thread ``t`` walked (last
    bin: that length or more).
    """
    sent = 0
    seen = 0
    walked = 0
    extra = 0
    for k in prange(parts.size):
        q = parts[k]
        lo = partition_offsets[q]
        hi = partition_offsets[q + 1]
        sweep = 0
        best = np.inf
        since_best = 0
        while True:
            mass = 0.0
            moved = 0
            for p in range(lo, hi):
                if sweep == 0 and (nact[p] == 0 or score[p] < min_score):
                    continue
                a = path_offsets[p]
                b = path_offsets[p + 1] - 1
                base = a - p
                for i in range(b - a):
                    u = path_vertices[a + i]
                    j = base + i
                    xu = x[u]
                    d = coef[j] * (xu - s[j])
                    mass += abs(d)
                    if abs(d) > theta:
                        atomic_add(x, path_vertices[a + i + 1], d)
                        s[j] = xu
                        moved += 1
                seen += b - a
                walked += 1
                _book(p, b - a, path_scc, scc_last, scc_runs, stamp, length_hist)
            sent += moved
            sweep += 1
            if mass < 0.999 * best:
                best = mass
                since_best = 0
            else:
                since_best += 1  # stalled on the rounding floor of the mirrors
            if (not local[q] or moved == 0 or mass <= local_budget[q] or sweep >= max_sweeps
                    or since_best >= 64):
                break
        extra += sweep - 1
    return sent, seen, walked, extra


@njit(parallel=True, cache=True, nogil=True)
def monotone_pending(parts, partition_offsets, path_offsets, path_vertices, s, x, nact,
                     part_active):
    """Arcs whose source changed since it last transmitted (``x_u ≠ s_j``), per path and partition."""
    total = 0
    for k in prange(parts.size):
        q = parts[k]
        active = 0
        for p in range(partition_offsets[q], partition_offsets[q + 1]):
            a = path_offsets[p]
            b = path_offsets[p + 1] - 1
            base = a - p
            cnt = 0
            for i in range(b - a):
                if x[path_vertices[a + i]] != s[base + i]:
                    cnt += 1
            nact[p] = cnt
            total += cnt
            if cnt > 0:
                active += 1
        part_active[k] = active
    return total


@njit(parallel=True, cache=True, nogil=True)
def monotone_walk(parts, partition_offsets, path_offsets, path_vertices, value, has_value, op,
                  combine, s, x, nact, local, max_sweeps, path_scc, scc_last, scc_runs, stamp,
                  length_hist):
    """Walk the active paths relaxing pending arcs (``local`` partitions: until none is pending);
    returns (arcs transmitted, examined, paths walked, extra local sweeps)."""
    sent = 0
    seen = 0
    walked = 0
    extra = 0
    for k in prange(parts.size):
        q = parts[k]
        lo = partition_offsets[q]
        hi = partition_offsets[q + 1]
        sweep = 0
        while True:
            moved = 0
            for p in range(lo, hi):
                if sweep == 0 and nact[p] == 0:
                    continue
                a = path_offsets[p]
                b = path_offsets[p + 1] - 1
                base = a - p
                for i in range(b - a):
                    u = path_vertices[a + i]
                    j = base + i
                    xu = x[u]
                    if xu != s[j]:
                        s[j] = xu
                        v = path_vertices[a + i + 1]
                        c = relax(op, xu, value[j] if has_value else 1.0)
                        atomic_improve(x, v, c, combine)
                        moved += 1
                seen += b - a
                walked += 1
                _book(p, b - a, path_scc, scc_last, scc_runs, stamp, length_hist)
            sent += moved
            sweep += 1
            if not local[q] or moved == 0 or sweep >= max_sweeps:
                break
        extra += sweep - 1
    return sent, seen, walked, extra


@njit(inline="always")
def _book(p, length, path_scc, scc_last, scc_runs, stamp, length_hist):
    sc = path_scc[p]
    if scc_last[sc] != stamp:
        if atomic_xchg(scc_last, sc, stamp) != stamp:
            atomic_add(scc_runs, sc, 1)
    row = length_hist[numba.get_thread_id()]
    row[min(length, row.size - 1)] += 1


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

