"""The CPU path engine's driver for min/max (monotone) systems: :func:`solve_monotone` walks the
layers in order (the check fused into the walk, or a separate check pass) until no path or
short-arc group is pending."""

import numpy as np

from ....smx.cpu import paths_monotone
from ....smx.cpu import paths_setup
from ...systems import monotone_arrays, monotone_start
from .cpu_schedule import chunks, count, count_check, walk_arrays
from ....interrupts import check as _check_interrupt

__all__ = []


def solve_monotone(graph, sys, max_iter, stats, ps, sched, rep, settings, fuse=True):
    n = graph.num_vertices
    op, combine, has_value, value = monotone_arrays(graph, sys)
    x, active = monotone_start(sys, n)
    identity = np.inf if combine == 0 else -np.inf
    s = np.zeros(graph.num_arcs, np.float64)  # mirrors of the walked arcs (pushed: per group)
    with chunks(0):
        paths_setup.walked_monotone_mirrors(rep.walk_paths, ps.path_offsets, ps.path_vertices, active, x,
                                  identity, s)
    if has_value:
        value = value[ps.path_arc_ids]  # path order
    nact = np.zeros(ps.num_paths, np.int64)
    arrays = walk_arrays(ps, rep)
    gsrc = rep.gsrc
    gt = np.where(active[gsrc], identity, x[gsrc])
    gact = np.zeros(rep.num_groups, np.int64)
    gvalue = value[rep.arc_ids] if has_value else value
    converged = False
    while True:
        _check_interrupt()  # a Ctrl-C is raised between rounds (digraph.interrupts)
        for L in range(sched.num_layers):
            parts = sched.layer(L)
            while parts.size:
                part_active = np.zeros(parts.size, np.int64)
                if not fuse or stats["rounds"] >= max_iter:  # out of rounds: done if idle
                    paths_monotone.monotone_pending(parts, *arrays, s, x, nact, part_active, rep.group_offsets,
                                       gsrc, rep.garc, gt, gact)
                    count_check(stats, rep, parts)
                    if not part_active.any():
                        break
                    parts = sched.still_active(parts, part_active)
                    part_active = np.zeros(parts.size, np.int64)
                if stats["rounds"] >= max_iter:
                    return x, False
                res = paths_monotone.monotone_walk(parts, *arrays, value, has_value, op, combine, s, x, nact,
                                      sched.local, settings.max_local_sweeps, ps.path_scc,
                                      sched.scc_last,
                                      sched.scc_runs, stats["rounds"], sched.length_hist,
                                      rep.group_offsets, gsrc, rep.garc, rep.gdst, gvalue, gt,
                                      gact, rep.gscc, fuse, part_active)
                if fuse:
                    # the walk scanned every path and group: what it read is this round's check
                    stats["groups_examined"] += int(rep.part_groups[parts].sum())
                    if not part_active.any():  # nothing was pending: the layer is done
                        stats["arcs_examined"] += int(res[1])
                        break
                count(stats, sched, L, res, parts)
                if fuse:
                    parts = sched.still_active(parts, part_active)
        allp = np.arange(sched.num_parts, dtype=np.int64)
        if paths_monotone.monotone_pending(allp, *arrays, s, x, nact, np.zeros(allp.size, np.int64),
                              rep.group_offsets, gsrc, rep.garc, gt, gact) == 0:
            converged = True
            break
        if stats["rounds"] >= max_iter:
            break
    return x, converged
