"""Numba CPU kernels of the path engine's monotone rounds (min / max systems;
:mod:`~.paths` gives the mirrors and the arc numbering): an arc is pending
while its source differs from its mirror (``x_u ≠ s_j``, ``x_u ≠ gt[g]`` for a short-arc group),
and a walk relaxes it into its target, ``x_v = combine(x_v, relax(x_u, a_j))``."""

from numba import njit, prange

from .atomics import atomic_improve
from .bsp import relax
from .paths_book import book, book_scc

__all__ = []


# one partition of monotone_pending, a call from its prange loop (Numba 0.68 on Python 3.12
# failed to compile the body inline: "unexpected cycle in lookup()" among the reductions)
@njit(cache=True, nogil=True)
def _monotone_pending_part(q, walk_offsets, walk_paths, path_offsets, path_vertices, s, x, nact,
                           group_offsets, gsrc, garc, gt, gact):
    total = 0
    active = 0
    for w in range(walk_offsets[q], walk_offsets[q + 1]):
        p = walk_paths[w]
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
    for g in range(group_offsets[q], group_offsets[q + 1]):
        cnt = garc[g + 1] - garc[g] if x[gsrc[g]] != gt[g] else 0
        gact[g] = cnt
        total += cnt
        if cnt > 0:
            active += 1
    return total, active


@njit(parallel=True, cache=True, nogil=True)
def monotone_pending(parts, walk_offsets, walk_paths, path_offsets, path_vertices, s, x, nact,
                     part_active, group_offsets, gsrc, garc, gt, gact):
    """Arcs whose source changed since it last transmitted (``x_u ≠ s_j``, ``x_u ≠ gt[g]`` for a
    short-arc group), per path, group and partition."""
    total = 0
    for k in prange(parts.size):
        t, active = _monotone_pending_part(parts[k], walk_offsets, walk_paths, path_offsets,
                                           path_vertices, s, x, nact, group_offsets, gsrc, garc,
                                           gt, gact)
        part_active[k] = active
        total += t
    return total


# one partition of monotone_walk, a call from its prange loop: with this body inline in the loop,
# Numba 0.68 on Python 3.12 failed to compile it (RecursionError in the reductions' analysis)
@njit(cache=True, nogil=True)
def _monotone_walk_part(q, walk_offsets, walk_paths, path_offsets, path_vertices, value,
                        has_value, op, combine, s, x, nact, local, max_sweeps, path_scc, scc_last,
                        scc_runs, stamp, length_hist, group_offsets, gsrc, garc, gdst, gvalue, gt,
                        gact, gscc, scan_all):
    sent = 0
    seen = 0
    walked = 0
    pushed = 0
    first = 0
    sweep = 0
    while True:
        moved = 0
        for w in range(walk_offsets[q], walk_offsets[q + 1]):
            p = walk_paths[w]
            if sweep == 0 and not scan_all and nact[p] == 0:
                continue
            a = path_offsets[p]
            b = path_offsets[p + 1] - 1
            base = a - p
            before = moved
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
            if moved > before or sweep > 0 or not scan_all:  # a scanned idle path: not walked
                walked += 1
                book(p, b - a, path_scc, scc_last, scc_runs, stamp, length_hist)
        for g in range(group_offsets[q], group_offsets[q + 1]):
            if sweep == 0 and not scan_all and gact[g] == 0:
                continue
            xu = x[gsrc[g]]
            if xu != gt[g]:
                gt[g] = xu
                lo = garc[g]
                hi = garc[g + 1]
                for e in range(lo, hi):
                    c = relax(op, xu, gvalue[e] if has_value else 1.0)
                    atomic_improve(x, gdst[e], c, combine)
                moved += hi - lo
                seen += hi - lo
                pushed += 1
                book_scc(gscc[g], scc_last, scc_runs, stamp)
        sent += moved
        if sweep == 0:
            first = moved
        sweep += 1
        if not local[q] or moved == 0 or sweep >= max_sweeps:
            break
    return sent, seen, walked, sweep - 1, pushed, first


@njit(parallel=True, cache=True, nogil=True)
def monotone_walk(parts, walk_offsets, walk_paths, path_offsets, path_vertices, value, has_value,
                  op, combine, s, x, nact, local, max_sweeps, path_scc, scc_last, scc_runs, stamp,
                  length_hist, group_offsets, gsrc, garc, gdst, gvalue, gt, gact, gscc, scan_all,
                  part_moved):
    """Walk the active paths relaxing pending arcs, then push the active short-arc groups (every
    arc of a group whose source changed; ``local`` partitions: until none is pending); returns
    (arcs transmitted, examined, paths walked, extra local sweeps, groups pushed).

    ``scan_all`` fuses the check into the walk: every path and group of ``parts`` is visited
    (a pending arc is one whose source differs from its mirror, exactly the walk's own test), and
    ``part_moved[k]`` receives the arcs ``parts[k]`` transmitted; a round that transmits nothing
    ends the layer."""
    sent = 0
    seen = 0
    walked = 0
    extra = 0
    pushed = 0
    for k in prange(parts.size):
        t_sent, t_seen, t_walked, t_extra, t_pushed, first = _monotone_walk_part(
            parts[k], walk_offsets, walk_paths, path_offsets, path_vertices, value, has_value,
            op, combine, s, x, nact, local, max_sweeps, path_scc, scc_last, scc_runs, stamp,
            length_hist, group_offsets, gsrc, garc, gdst, gvalue, gt, gact, gscc, scan_all)
        part_moved[k] = first
        sent += t_sent
        seen += t_seen
        walked += t_walked
        extra += t_extra
        pushed += t_pushed
    return sent, seen, walked, extra, pushed
