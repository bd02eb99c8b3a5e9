"""Numba CPU kernels of the path engine (``mode="path"`` and ``"path-nopriority"``, DiGraph §3.1).

A CPU thread takes a partition (a contiguous range of paths of one layer) and walks each selected
path arc by arc: arc ``j = (u → v)`` reads the newest ``x_u`` and, when its pending change is above
the threshold, transmits it to the master ``x_v`` at once (atomic add / min / max: several threads
may write one master), so a change at a path's head reaches its tail in the same round.  Partitions
are spread over threads in dynamic chunks (idle threads take the next partition).

Per-arc mirror state (docs/design.md §3): ``s_j`` is the value of the arc's source last transmitted.

* linear systems: ``d = c_j (x_u − s_j)``; ``x_v += d``; ``s_j = x_u``.  The invariant
  ``x_v = b_v + Σ_j c_j s_j`` holds at every instant and the pending mass ``Σ_j c_j (x_u − s_j)``
  is exactly the L1 norm of the residual.
* monotone systems: an arc is pending while ``x_u ≠ s_j``; ``x_v = combine(x_v, relax(x_u, a_j))``.

Arcs are numbered in path order: arc ``i`` of path ``p`` is ``j = path_offsets[p] − p + i``.

Short cold paths may instead be handled at vertex level (``short_path_push``, see
:mod:`digraph.dispatch.engines.path.cpu`): their arcs are grouped by (partition, source vertex) by
:func:`short_arc_groups`, and a group keeps one mirror ``gt[g]`` for all its arcs — the value of
its source last pushed along them.  Pushing a group does ``d = x_u − gt[g]``; ``x_v += c_e·d`` for
each of its arcs; ``gt[g] = x_u`` (the vertex-async delta push, and the same invariant
``x_v = b_v + Σ_j c_j s_j + Σ_g Σ_{e∈g} c_e gt[g]``), so checking a group costs two reads instead
of one per arc.  The walked paths of partition ``q`` are ``walk_paths[walk_offsets[q]:
walk_offsets[q + 1]]`` (all its paths when nothing is pushed).

The kernels live in modules by part; this module holds the linear rounds, the others are
beside it:

* :mod:`~.paths_monotone` — the monotone rounds (``monotone_pending``, ``monotone_walk``);
* :mod:`~.paths_setup` — what runs before the rounds: the short-arc groups
  (``short_arc_groups``), the coefficients ``c_j`` / ``c_e`` and the monotone mirrors' first values;
* :mod:`~.paths_book` — the walks' book-keeping (SCC-vertex runs, path-length histogram).
"""

import math

import numba
import numpy as np
from numba import njit, prange

from .atomics import atomic_add
from .paths_book import book, book_scc

__all__ = []


@njit(inline="always")
def _bucket(score):
    """log2 bucket of a positive score (0..127): its binary exponent, from frexp (no logarithm)."""
    e = math.frexp(score)[1] - 1 + 64
    return min(max(e, 0), 127)


@njit(parallel=True, cache=True, nogil=True)
def linear_pending(parts, walk_offsets, walk_paths, path_offsets, path_vertices, coef, s, x, theta,
                   score, nact, part_active, rule, heat, hist, residual, want_residual,
                   group_offsets, gsrc, garc, gdst, gcoef, gsum, gmax, gheat, gt, gscore, gact):
    """Pending mass of every walked path and short-arc group of ``parts``, its active arcs
    (pending > θ) and its priority score.

    Walked paths of partition ``q``: ``walk_paths[walk_offsets[q]:walk_offsets[q + 1]]``.
    ``score[p]``: the pending mass (``rule`` 1, and 0), or ``D̄(p)·N(p)`` (``rule`` 2, the paper's
    ``Pri`` inside one layer); ``hist[t]`` counts thread ``t``'s active paths and groups per log2
    bucket of the score (one row per thread: no atomics);
    ``part_active[k]`` counts the active paths and groups of partition ``parts[k]``.  With
    ``want_residual`` the pending mass is also scattered to its target vertices (``residual``,
    zero on entry).

    Short-arc groups (vertex-level push, :func:`short_arc_groups`): group ``g`` of partition
    ``q`` (``group_offsets[q] ≤ g < group_offsets[q + 1]``) holds arcs ``garc[g]:garc[g + 1]`` out
    of ``gsrc[g]`` that share one mirror ``gt[g]``, so its pending mass ``gsum[g]·|x_u − gt[g]|``
    costs two reads, whatever its size.  It is active when its mean pending change per arc exceeds θ
    (its largest one, ``gmax[g]·|x_u − gt[g]|``, with ``want_residual``); ``gact[g]`` is then
    its size, else 0.
    Returns the total pending mass (an upper bound of the residual's L1 norm).
    """
    total = 0.0
    for k in prange(parts.size):
        q = parts[k]
        active = 0
        for w in range(walk_offsets[q], walk_offsets[q + 1]):
            p = walk_paths[w]
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
        for g in range(group_offsets[q], group_offsets[q + 1]):
            d = abs(x[gsrc[g]] - gt[g])
            mass = gsum[g] * d
            size = garc[g + 1] - garc[g]
            on = gmax[g] * d > theta if want_residual else mass > theta * size
            cnt = size if on else 0
            sc = gheat[g] * cnt if rule == 2 else mass
            gscore[g] = sc
            gact[g] = cnt
            total += mass
            if on:
                active += 1
                hist[numba.get_thread_id(), _bucket(sc)] += 1
            if want_residual and d != 0.0:
                for e in range(garc[g], garc[g + 1]):
                    atomic_add(residual, gdst[e], gcoef[e] * d)
        part_active[k] = active
    return total


# one partition of linear_walk, a call from its prange loop (Numba 0.68 on Python 3.12 failed to
# compile the body inline: RecursionError in the reductions' analysis)
@njit(cache=True, nogil=True)
def _linear_walk_part(q, walk_offsets, walk_paths, path_offsets, path_vertices, coef, s, x, theta,
                      nact, score, min_score, local, local_budget, max_sweeps, path_scc,
                      scc_last, scc_runs, stamp, length_hist, group_offsets, gsrc, garc, gdst,
                      gcoef, gsum, gmax, gt, gscore, gact, gscc, group_max):
    sent = 0
    seen = 0
    walked = 0
    pushed = 0
    sweep = 0
    best = np.inf
    since_best = 0
    while True:
        mass = 0.0
        moved = 0
        for w in range(walk_offsets[q], walk_offsets[q + 1]):
            p = walk_paths[w]
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
            book(p, b - a, path_scc, scc_last, scc_runs, stamp, length_hist)
        for g in range(group_offsets[q], group_offsets[q + 1]):
            if sweep == 0 and (gact[g] == 0 or gscore[g] < min_score):
                continue
            xu = x[gsrc[g]]
            d = xu - gt[g]
            m_g = gsum[g] * abs(d)
            mass += m_g
            lo = garc[g]
            hi = garc[g + 1]
            if gmax[g] * abs(d) > theta if group_max else m_g > theta * (hi - lo):
                for e in range(lo, hi):
                    atomic_add(x, gdst[e], gcoef[e] * d)
                gt[g] = xu
                moved += hi - lo
                seen += hi - lo
                pushed += 1
                book_scc(gscc[g], scc_last, scc_runs, stamp)
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
    return sent, seen, walked, sweep - 1, pushed


@njit(parallel=True, cache=True, nogil=True)
def linear_walk(parts, walk_offsets, walk_paths, path_offsets, path_vertices, coef, s, x, theta,
                nact, score, min_score, local, local_budget, max_sweeps, path_scc, scc_last,
                scc_runs, stamp, length_hist, group_offsets, gsrc, garc, gdst, gcoef, gsum, gmax,
                gt, gscore, gact, gscc, group_max):
    """Walk the active paths of ``parts`` whose score is at least ``min_score`` (the others are
    deferred), then push their active short-arc groups likewise; returns (arcs transmitted, arcs
    examined, paths walked, extra local sweeps, groups pushed).

    A group pushes ``d = x_u − gt[g]`` along all its arcs (``x_v += c_e·d``, atomic) and sets
    ``gt[g] = x_u`` when its mean pending change per arc exceeds θ (its largest, with
    ``group_max``): the vertex-async mechanism, with a mirror per group instead of per arc.
    A partition ``q`` with ``local[q]`` holds whole SCC-vertices whose inputs are final: its thread
    sweeps it again and again (up to ``max_sweeps``, or until 64 sweeps bring no progress: the
    rounding floor) until its pending mass is at most ``local_budget[q]``, so small cyclic
    SCC-vertices converge inside one task instead of one global round per sweep.  Book-keeping:
    ``scc_runs[s]`` counts the rounds (``stamp``) in which SCC-vertex ``s`` ran and
    ``length_hist[t]`` the lengths of the paths thread ``t`` walked (last bin: that length or more).
    """
    sent = 0
    seen = 0
    walked = 0
    extra = 0
    pushed = 0
    for k in prange(parts.size):
        t_sent, t_seen, t_walked, t_extra, t_pushed = _linear_walk_part(
            parts[k], walk_offsets, walk_paths, path_offsets, path_vertices, coef, s, x, theta,
            nact, score, min_score, local, local_budget, max_sweeps, path_scc, scc_last,
            scc_runs, stamp, length_hist, group_offsets, gsrc, garc, gdst, gcoef, gsum, gmax,
            gt, gscore, gact, gscc, group_max)
        sent += t_sent
        seen += t_seen
        walked += t_walked
        extra += t_extra
        pushed += t_pushed
    return sent, seen, walked, extra, pushed


@njit(parallel=True, cache=True, nogil=True)
def linear_round(parts, walk_offsets, walk_paths, path_offsets, path_vertices, coef, s, x, theta,
                 min_scores, slots, rule, heat, hist, residual, want_residual, part_active, local,
                 local_budget, max_sweeps, path_scc, scc_last, scc_runs, stamp, length_hist,
                 group_offsets, gsrc, garc, gdst, gcoef, gsum, gmax, gheat, gt, gscc, out_counts,
                 out_mass):
    """One round with the check fused into the walk: each path (group) of ``parts`` is scored
    on the newest state just before it would be walked (pushed), and walked at once when it is
    active and its score reaches ``min_scores[k]`` — the threshold the dispatcher took from the
    previous round's histogram (a one-round lag), instead of a separate check pass.

    ``hist[t, slots[k]]`` counts thread ``t``'s active paths and groups of ``parts[k]`` per log2
    bucket of their score (for the next round's threshold; one slot per layer of a
    ``layer_window``), ``part_active[k]`` those of ``parts[k]``; with
    ``want_residual`` their pending mass is scattered to the target vertices.  Local partitions
    then sweep as in :func:`linear_walk`.  Returns (arcs transmitted, arcs examined, paths walked,
    extra local sweeps, groups pushed, arcs scored, groups scored) of ``parts[k]`` in
    ``out_counts[7k:7k + 7]`` (flat) and the pending mass scored before its walk in ``out_mass[k]``
    (no reduction variables).
    """
    for k in prange(parts.size):
        q = parts[k]
        tid = numba.get_thread_id()
        min_score = min_scores[k]
        slot = slots[k]
        sweep = 0
        best = np.inf
        since_best = 0
        active = 0
        t_sent = 0
        t_seen = 0
        t_walked = 0
        t_pushed = 0
        t_scanned = 0
        t_gscanned = 0
        t_total = 0.0
        while True:
            mass = 0.0
            moved = 0
            for w in range(walk_offsets[q], walk_offsets[q + 1]):
                p = walk_paths[w]
                a = path_offsets[p]
                b = path_offsets[p + 1] - 1
                base = a - p
                if sweep == 0:
                    pm = 0.0
                    cnt = 0
                    for i in range(b - a):
                        u = path_vertices[a + i]
                        d = abs(coef[base + i] * (x[u] - s[base + i]))
                        pm += d
                        if d > theta:
                            cnt += 1
                        if want_residual and d != 0.0:
                            atomic_add(residual, path_vertices[a + i + 1], d)
                    t_scanned += b - a
                    mass += pm
                    if cnt == 0:
                        continue
                    sc = heat[p] * cnt if rule == 2 else pm
                    active += 1
                    hist[tid, slot, _bucket(sc)] += 1
                    if sc < min_score:
                        continue
                for i in range(b - a):
                    u = path_vertices[a + i]
                    j = base + i
                    xu = x[u]
                    d = coef[j] * (xu - s[j])
                    if sweep > 0:
                        mass += abs(d)
                    if abs(d) > theta:
                        atomic_add(x, path_vertices[a + i + 1], d)
                        s[j] = xu
                        moved += 1
                t_seen += b - a
                t_walked += 1
                book(p, b - a, path_scc, scc_last, scc_runs, stamp, length_hist)
            for g in range(group_offsets[q], group_offsets[q + 1]):
                xu = x[gsrc[g]]
                d = xu - gt[g]
                ad = abs(d)
                m_g = gsum[g] * ad
                mass += m_g
                lo = garc[g]
                hi = garc[g + 1]
                on = gmax[g] * ad > theta if want_residual else m_g > theta * (hi - lo)
                if sweep == 0:
                    t_gscanned += 1
                    if want_residual and d != 0.0:
                        for e in range(lo, hi):
                            atomic_add(residual, gdst[e], gcoef[e] * ad)
                    if not on:
                        continue
                    sc = gheat[g] * (hi - lo) if rule == 2 else m_g
                    active += 1
                    hist[tid, slot, _bucket(sc)] += 1
                    if sc < min_score:
                        continue
                elif not on:
                    continue
                for e in range(lo, hi):
                    atomic_add(x, gdst[e], gcoef[e] * d)
                gt[g] = xu
                moved += hi - lo
                t_seen += hi - lo
                t_pushed += 1
                book_scc(gscc[g], scc_last, scc_runs, stamp)
            if sweep == 0:
                t_total = mass
            t_sent += moved
            sweep += 1
            if mass < 0.999 * best:
                best = mass
                since_best = 0
            else:
                since_best += 1
            if (not local[q] or moved == 0 or mass <= local_budget[q] or sweep >= max_sweeps
                    or since_best >= 64):
                break
        part_active[k] = active
        out_counts[7 * k + 0] = t_sent
        out_counts[7 * k + 1] = t_seen
        out_counts[7 * k + 2] = t_walked
        out_counts[7 * k + 3] = sweep - 1
        out_counts[7 * k + 4] = t_pushed
        out_counts[7 * k + 5] = t_scanned
        out_counts[7 * k + 6] = t_gscanned
        out_mass[k] = t_total
