"""The CPU path engine's driver for min/max (monotone) systems: :func:`solve_monotone` walks the
layers in order (the check fused into the walk, or a separate check pass) until no path or
short-arc group is pending."""

import math

import numpy as np

from ....smx.cpu import paths_monotone
from ....smx.cpu import paths_setup
from ... import driver
from ...systems import monotone_arrays, monotone_start
from .cpu_schedule import chunks, count, count_check, walk_arrays

__all__ = []


def solve_monotone(graph, sys, max_iter, stats, ps, sched, rep, settings, fuse=True):
    n = graph.num_vertices
    op, combine, has_value, value = monotone_arrays(graph, sys)
    x, active = monotone_start(sys, n)
    identity = np.inf if combine == 0 else -np.inf
    s = np.zeros(graph.num_arcs, np.float64)  # mirrors of the walked arcs (pushed: per group)
    with chunks(0):
        paths_setup.walked_monotone_mirrors(rep.walk_paths, ps.path_offsets, ps.path_vertices,
                                            active, x, identity, s)
    if has_value:
        value = value[ps.path_arc_ids]  # path order
    nact = np.zeros(ps.num_paths, np.int64)
    arrays = walk_arrays(ps, rep)
    gsrc = rep.gsrc
    gt = np.where(active[gsrc], identity, x[gsrc])
    gact = np.zeros(rep.num_groups, np.int64)
    gvalue = value[rep.arc_ids] if has_value else value

    def sweep():
        for L in range(sched.num_layers):
            parts = sched.layer(L)
            if not parts.size:
                continue
            layer = _Layer(L, parts, fuse, stats, sched, rep, ps, settings, arrays, value,
                           has_value, op, combine, s, x, nact, gt, gact, gvalue)
            if driver.layer(layer, max_iter=max_iter, stats=stats, stall=math.inf) == "capped":
                return False
        return True

    def settled():
        allp = np.arange(sched.num_parts, dtype=np.int64)
        return paths_monotone.monotone_pending(allp, *arrays, s, x, nact,
                                               np.zeros(allp.size, np.int64), rep.group_offsets,
                                               gsrc, rep.garc, gt, gact) == 0

    return x, driver.settle(sweep, settled, max_iter=max_iter, stats=stats)


class _Layer:
    """One layer's rounds (:func:`digraph.dispatch.driver.layer`): with ``fuse``, each a walk
    that checks what it reads; else a check pass, then a walk of what it found pending."""

    def __init__(self, L, parts, fuse, stats, sched, rep, ps, settings, arrays, value, has_value,
                 op, combine, s, x, nact, gt, gact, gvalue):
        self.__dict__.update(locals())
        del self.__dict__["self"]

    def settled(self):
        """A plain check pass: True when nothing is pending (else the active partitions kept)."""
        parts, rep = self.parts, self.rep
        if not parts.size:
            return True
        part_active = np.zeros(parts.size, np.int64)
        paths_monotone.monotone_pending(parts, *self.arrays, self.s, self.x, self.nact,
                                        part_active, rep.group_offsets, rep.gsrc, rep.garc,
                                        self.gt, self.gact)
        count_check(self.stats, rep, parts)
        if not part_active.any():
            return True
        self.parts = self.sched.still_active(parts, part_active)
        return False

    def _walk(self, part_active):
        parts, rep, sched, stats = self.parts, self.rep, self.sched, self.stats
        return paths_monotone.monotone_walk(
            parts, *self.arrays, self.value, self.has_value, self.op, self.combine, self.s,
            self.x, self.nact, sched.local, self.settings.max_local_sweeps, self.ps.path_scc,
            sched.scc_last, sched.scc_runs, stats["rounds"], sched.length_hist,
            rep.group_offsets, rep.gsrc, rep.garc, rep.gdst, self.gvalue, self.gt, self.gact,
            rep.gscc, self.fuse, part_active)

    def check(self):
        """(partitions pending, done)."""
        if not self.fuse:
            return float(self.parts.size), self.settled()
        parts, stats = self.parts, self.stats
        if not parts.size:
            return 0.0, True
        part_active = np.zeros(parts.size, np.int64)
        res = self._walk(part_active)
        # the walk scanned every path and group: what it read is this round's check
        stats["groups_examined"] += int(self.rep.part_groups[parts].sum())
        if not part_active.any():  # nothing was pending: the layer is done
            stats["arcs_examined"] += int(res[1])
            return 0.0, True
        count(stats, self.sched, self.L, res, parts)
        self.parts = self.sched.still_active(parts, part_active)
        return float(self.parts.size), False

    def walk(self):
        """A walk of the partitions the check pass kept (with ``fuse``: the check walked)."""
        if not self.fuse:
            res = self._walk(np.zeros(self.parts.size, np.int64))
            count(self.stats, self.sched, self.L, res, self.parts)
