"""The CPU path engine's driver for linear systems: :func:`solve_linear` sweeps the layers
(separate check and walk passes, or the check fused into the walk layer by layer,
:func:`_fused_layer`, or running ahead into the next layers, :func:`_fused_window`), certifies the
result from the recomputed residual, lowers the budget and sweeps again, or hands the run to
vertex-level push when the mirrors reach their rounding floor."""

from types import SimpleNamespace

import numba
import numpy as np

from ....smx.cpu import paths as P
from ....smx.cpu import paths_setup
from ... import driver
from ..push.cpu import finish_linear
from ..registry import find
from ...convergence import certified_bound, linear_contraction, pending_budget
from ...systems import linear_factors
from .cpu_schedule import aging_due, chunks, count, count_check, _min_score, walk_arrays

__all__ = []


def solve_linear(graph, sys, tol, max_iter, stats, ps, sched, rep, rule, settings, skip=True,
                  fuse=True, window=1, ahead_local=False):
    n, m = graph.num_vertices, graph.num_arcs
    with chunks(0):
        gammas = linear_contraction(graph, sys)
    want_residual = gammas[0] >= 1.0  # only the L∞ route bounds the error: need residual per vertex
    src_scale, dst_scale, has_arc, arc_scale = linear_factors(graph, sys)
    coef = np.zeros(m, np.float64)  # c_j of the walked arcs (pushed arcs: in their groups)
    with chunks(0):
        paths_setup.walked_arc_coefficients(rep.walk_paths, ps.path_offsets, ps.path_vertices,
                                  ps.path_arc_ids, src_scale, arc_scale, has_arc, dst_scale, coef)
        gcoef, gsum, gmax = rep.group_coefficients(ps, src_scale, arc_scale, has_arc, dst_scale)
    b = np.ascontiguousarray(sys.b, dtype=np.float64)
    x = b.copy()
    rvec = np.empty(n, np.float64)
    all_paths = np.ones(0 if skip else ps.num_paths, np.int64)
    s = np.zeros(m, np.float64)
    npaths = ps.num_paths
    score = np.zeros(npaths, np.float64)
    nact = np.zeros(npaths, np.int64)
    heat = np.ascontiguousarray(ps.path_heat, dtype=np.float64)
    residual = np.zeros(n if want_residual else 0, np.float64)
    max_in_degree = max(int(graph.in_degree.max()) if n else 1, 1)
    hist = np.zeros((numba.config.NUMBA_NUM_THREADS, 128), np.int64)
    arrays = walk_arrays(ps, rep)
    G = rep.num_groups
    gt = np.zeros(G, np.float64)  # x = b, every mirror 0
    gscore = np.zeros(G, np.float64)
    gact = np.zeros(G, np.int64)
    all_groups = np.ones(0 if skip else G, np.int64)
    groups = (rep.group_offsets, rep.gsrc, rep.garc, rep.gdst, gcoef, gsum, gmax)
    stalled = False  # the last sweep's: a layer's level stopped falling (the mirrors' floor)

    def sweep(factor):
        """The layers in order at ``factor`` times the budget; True when the rounds ran out."""
        nonlocal stalled
        if fuse and skip and window != 1 and not want_residual:  # run-ahead over the layers
            out_of_rounds, stalled = _fused_window(
                window, ahead_local, factor, stats, sched, rep, groups, x, s, coef, heat, m, n,
                tol, gammas, sys, max_iter, rule, gt, ps, score, nact, gscore, gact, settings)
            return out_of_rounds
        out_of_rounds = stalled = False
        for L in range(sched.num_layers):
            parts = sched.layer(L)
            share = sched.part_arcs[parts].sum() / max(m, 1)  # the layer's share of the budget
            if fuse and skip:
                out_l, stalled_l = _fused_layer(
                    L, parts, share, factor, stats, sched, rep, groups, x, s, coef, heat, hist,
                    residual, want_residual, max_in_degree, m, n, tol, gammas, sys, max_iter,
                    rule, gt, ps, score, nact, gscore, gact, settings)
                out_of_rounds = out_of_rounds or out_l
                stalled = stalled or stalled_l
                continue
            if out_of_rounds or not parts.size:
                continue
            end = driver.layer(_Layer(L, parts, share, factor, stats, sched, rep, groups, x, s,
                                      coef, heat, hist, residual, want_residual, max_in_degree, m,
                                      n, tol, gammas, sys, rule, gt, ps, score, nact, gscore,
                                      gact, settings, skip, arrays, all_paths, all_groups),
                               max_iter=max_iter, stats=stats, stall=settings.stall_rounds)
            out_of_rounds = end == "capped"
            stalled = stalled or end == "stalled"
        return out_of_rounds

    def certify():
        """The sound bound, from the residual recomputed from the state."""
        with chunks(0):
            return certified_bound(graph, sys, x, gammas, rvec)

    def floored(certificate):
        """The mirrors hit their rounding floor: a pending change is a difference of two close
        values, and at a damping near 1 the decay of one sweep drowns in the rounding of the
        atomic adds (the run finishes by vertex-level push, whose residual is stored exactly)."""
        if stalled:
            return True
        allp = np.arange(sched.num_parts, dtype=np.int64)
        tracked = P.linear_pending(allp, *arrays, coef, s, x, 0.0, score, nact,
                                   np.zeros(allp.size, np.int64), 0, heat, hist, residual,
                                   False, *groups, rep.gheat, gt, gscore, gact)
        return certificate[1] > 2.0 * tracked

    end, (bound, r1, _) = driver.budget_sweeps(
        SimpleNamespace(sweep=sweep, certify=certify, floored=floored), tol=tol,
        max_iter=max_iter, max_sweeps=settings.max_sweeps, then=find("path", "cpu").after_stall,
        stats=stats)
    if end == "hand-over":
        return finish_linear(graph, sys, tol, max_iter, stats, x0=x, delta0=rvec)
    return _linear_done(stats, bound, r1, x, end == "converged")


class _Layer:
    """One layer's rounds with separate check and walk passes
    (:func:`digraph.dispatch.driver.layer`)."""

    def __init__(self, L, parts, share, factor, stats, sched, rep, groups, x, s, coef, heat, hist,
                 residual, want_residual, max_in_degree, m, n, tol, gammas, sys, rule, gt, ps,
                 score, nact, gscore, gact, settings, skip, arrays, all_paths, all_groups):
        self.__dict__.update(locals())
        del self.__dict__["self"]

    def settled(self):
        return self.check()[1]

    def check(self):
        """The check pass: (pending level, done)."""
        parts, x, hist, residual = self.parts, self.x, self.hist, self.residual
        if not parts.size:
            return 0.0, True
        budget = self.factor * pending_budget(self.tol, float(x.sum()), self.n, self.gammas,
                                              self.sys.normalize)
        part_active = np.zeros(parts.size, np.int64)
        hist[:] = 0
        args = (self.coef, self.s, x)
        tail = (*self.groups, self.rep.gheat, self.gt, self.gscore, self.gact)
        if self.want_residual:
            # L∞ route: the budget bounds every vertex's residual, not their sum (a sum that
            # small would sit below the rounding floor of the mirrors)
            th = budget / (2.0 * self.max_in_degree)
            residual[:] = 0.0
            P.linear_pending(parts, *self.arrays, *args, th, self.score, self.nact, part_active,
                             self.rule, self.heat, hist, residual, True, *tail)
            level = residual.max()
            done = level <= budget / 2.0
        else:
            th = budget / max(self.m, 1)
            level = P.linear_pending(parts, *self.arrays, *args, th, self.score, self.nact,
                                     part_active, self.rule, self.heat, hist, residual, False,
                                     *tail)
            done = level <= budget * self.share
        count_check(self.stats, self.rep, parts)
        self.budget, self.th, self.part_active = budget, th, part_active
        return level, done or not part_active.any()

    def walk(self):
        """One walk of the paths the check found pending."""
        sched, settings, rule, stats, parts = self.sched, self.settings, self.rule, self.stats, \
            self.parts
        min_score = 0.0
        aging = aging_due(rule, sched.layer_rounds[self.L], settings)
        counts = self.hist.sum(axis=0)
        if rule and counts.sum() >= settings.min_priority_paths and not aging:
            min_score = _min_score(counts, settings.select_share)
        if self.skip:
            parts = self.parts = sched.still_active(parts, self.part_active)
            walk_nact, walk_gact, walk_th = self.nact, self.gact, self.th
        else:  # ablation: walk everything, transmit every change
            walk_nact, walk_gact, walk_th, min_score = self.all_paths, self.all_groups, 0.0, 0.0
        local_budget = self.budget * sched.part_arcs / max(self.m, 1)
        res = P.linear_walk(parts, *self.arrays, self.coef, self.s, self.x, walk_th, walk_nact,
                            self.score, min_score, sched.local, local_budget,
                            settings.max_local_sweeps, self.ps.path_scc, sched.scc_last,
                            sched.scc_runs, stats["rounds"], sched.length_hist, *self.groups,
                            self.gt, self.gscore, walk_gact, self.rep.gscc, self.want_residual)
        count(stats, sched, self.L, res, parts)


def _fused_layer(L, parts, share, factor, stats, sched, rep, groups, x, s, coef, heat, hist,
                 residual, want_residual, max_in_degree, m, n, tol, gammas, sys, max_iter, rule,
                 gt, ps, score, nact, gscore, gact, settings):
    """Rounds of layer ``L`` with the check fused into the walk (:func:`cpu_paths.linear_round`),
    by :func:`digraph.dispatch.driver.layer`; returns (out of rounds, stalled)."""
    if not parts.size:
        return False, False
    layer = _FusedLayer(L, parts, share, factor, stats, sched, rep, groups, x, s, coef, heat,
                        hist, residual, want_residual, max_in_degree, m, n, tol, gammas, sys,
                        rule, gt, ps, score, nact, gscore, gact, settings)
    end = driver.layer(layer, max_iter=max_iter, stats=stats, stall=settings.stall_rounds)
    return end == "capped", end == "stalled"


class _FusedLayer:
    """One layer's rounds, each a walk that scores what it reads (its check)."""

    def __init__(self, L, parts, share, factor, stats, sched, rep, groups, x, s, coef, heat, hist,
                 residual, want_residual, max_in_degree, m, n, tol, gammas, sys, rule, gt, ps,
                 score, nact, gscore, gact, settings):
        self.__dict__.update(locals())
        del self.__dict__["self"]
        self.min_score = 0.0  # the first round of a layer walks every active path
        self.arrays = walk_arrays(ps, rep)
        self.part_counts = np.zeros(7 * parts.size, np.int64)
        self.part_mass = np.zeros(parts.size, np.float64)
        self.sum_x, self.age = 0.0, settings.sum_refresh

    def _threshold(self):
        """(budget, send threshold) of this round."""
        if self.sys.normalize and self.age >= self.settings.sum_refresh:
            # Σx only grows (b ≥ 0, A ≥ 0, x from b upwards): a stale sum gives a smaller,
            # still sound budget, for one numpy sum every few rounds
            self.sum_x, self.age = float(self.x.sum()), 0
        self.age += 1
        budget = self.factor * pending_budget(self.tol, self.sum_x, self.n, self.gammas,
                                              self.sys.normalize)
        if self.want_residual:
            self.residual[:] = 0.0
            return budget, budget / (2.0 * self.max_in_degree)
        return budget, budget / max(self.m, 1)

    def _done(self, level, budget):
        return level <= budget / 2.0 if self.want_residual else level <= budget * self.share

    def settled(self):
        """A plain check, once the rounds have run out."""
        parts = self.parts
        if not parts.size:
            return True
        budget, th = self._threshold()
        part_active = np.zeros(parts.size, np.int64)
        self.hist[:] = 0
        total = P.linear_pending(parts, *self.arrays, self.coef, self.s,
                                 self.x, th, self.score, self.nact, part_active, self.rule,
                                 self.heat, self.hist, self.residual, self.want_residual,
                                 *self.groups, self.rep.gheat, self.gt, self.gscore, self.gact)
        count_check(self.stats, self.rep, parts)
        level = self.residual.max() if self.want_residual else total
        return self._done(level, budget) or not part_active.any()

    def check(self):
        """A walk of the active paths that scores them: (pending level, done)."""
        parts, stats, sched, rep = self.parts, self.stats, self.sched, self.rep
        if not parts.size:
            return 0.0, True
        budget, th = self._threshold()
        part_active = self.part_active = np.zeros(parts.size, np.int64)
        self.hist[:] = 0
        local_budget = budget * sched.part_arcs / max(self.m, 1)
        P.linear_round(parts, *self.arrays, self.coef, self.s, self.x, th,
                       np.full(parts.size, self.min_score), np.zeros(parts.size, np.int64),
                       self.rule, self.heat, self.hist[:, None, :], self.residual,
                       self.want_residual, part_active, sched.local, local_budget,
                       self.settings.max_local_sweeps, self.ps.path_scc, sched.scc_last,
                       sched.scc_runs, stats["rounds"], sched.length_hist, *self.groups,
                       rep.gheat, self.gt, rep.gscc, self.part_counts, self.part_mass)
        res = self.part_counts[:7 * parts.size].reshape(parts.size, 7).sum(axis=0)
        total = float(self.part_mass[:parts.size].sum())
        sent, seen, walked, extra, pushed, scanned, gscanned = (int(v) for v in res)
        stats["arcs_examined"] += int(scanned)
        stats["groups_examined"] += int(gscanned)
        if walked or pushed:
            count(stats, sched, self.L, res[:5], parts)
        level = self.residual.max() if self.want_residual else total
        return level, self._done(level, budget) or not part_active.any()

    def walk(self):
        """The walk was the check's: the next round's priority threshold, and the partitions
        still active."""
        settings, sched = self.settings, self.sched
        self.min_score = 0.0
        aging = aging_due(self.rule, sched.layer_rounds[self.L], settings)
        counts = self.hist.sum(axis=0)
        if self.rule and counts.sum() >= settings.min_priority_paths and not aging:
            self.min_score = _min_score(counts, settings.select_share)
        self.parts = sched.still_active(self.parts, self.part_active)


def _fused_window(W, ahead_local, factor, stats, sched, rep, groups, x, s, coef, heat, m, n, tol,
                  gammas, sys, max_iter, rule, gt, ps, score, nact, gscore, gact, settings):
    """All layers with the check fused into the walk, running ahead (``layer_window=W``): each
    round walks the lowest unfinished layer ``lo`` and the split SCC-vertices (non-local
    partitions) of layers ``lo+1 … lo+W−1`` (``W = 0``: of every higher layer) in one kernel pass;
    returns (out of rounds, stalled).

    Finishing rule (Observation 2 kept): only the lowest unfinished layer can finish, by a round
    that started after every lower layer had finished and scored its pending mass within its
    share of the budget (or found nothing active) — the same test, on the same state, as the
    layer-by-layer dispatch.  When a layer becomes the lowest, all its partitions are scheduled
    again, so what was pruned while it ran ahead is checked anew.  Run-ahead is extra work on
    inputs that are not yet final: by default it leaves the whole-SCC (local) partitions alone —
    they run, and converge locally, once, when their layer is the lowest; ``ahead_local`` runs
    them ahead too, one sweep a round, without local convergence (the small SCC-vertices then
    run many times).  Each layer of the window has its own priority threshold (histogram slot),
    so run-ahead mass never starves the lowest layer.  A stalled lowest layer (the mirrors'
    rounding floor) is left as :func:`_fused_layer` leaves it, and the run finishes by vertex push.
    """
    window = _Window(W, ahead_local, factor, stats, sched, rep, groups, x, s, coef, heat, m, n,
                     tol, gammas, sys, rule, gt, ps, score, nact, gscore, gact, settings)
    stalled = False
    for lo in range(sched.num_layers):
        window.lowest(lo)
        end = driver.layer(window, max_iter=max_iter, stats=stats, stall=settings.stall_rounds)
        if end == "capped":
            return True, False
        stalled = stalled or end == "stalled"  # the mirrors' rounding floor: as _fused_layer
    return False, stalled


class _Window:
    """The rounds of :func:`_fused_window` while layer ``lo`` is the lowest unfinished one."""

    def __init__(self, W, ahead_local, factor, stats, sched, rep, groups, x, s, coef, heat, m, n,
                 tol, gammas, sys, rule, gt, ps, score, nact, gscore, gact, settings):
        self.__dict__.update(locals())
        del self.__dict__["self"]
        L_n = sched.num_layers
        if W <= 0 or W > L_n:  # 0: every higher layer; never more slots than layers
            self.W = W = max(L_n, 1)
        T = numba.config.NUMBA_NUM_THREADS
        self.hist3 = np.zeros((T, W, 128), np.int64)
        self.min_sc = np.zeros(W, np.float64)
        self.upper = {}
        # partitions that converge locally: only those of the lowest layer (inputs final)
        self.local = np.zeros_like(sched.local)
        self.arrays = walk_arrays(ps, rep)
        self.sum_x, self.age = 0.0, settings.sum_refresh
        cap = sched.num_parts
        self.part_counts = np.zeros(7 * max(cap, 1), np.int64)
        self.part_mass = np.zeros(max(cap, 1), np.float64)
        self.dummy_res = np.zeros(0, np.float64)

    def lowest(self, lo):
        """Layer ``lo`` becomes the lowest unfinished one: all its partitions scheduled again."""
        self.lo = lo
        self.lo_parts = self.sched.layer(lo)
        self.local[self.lo_parts] = self.sched.local[self.lo_parts]
        self.upper.pop(lo, None)
        self.min_sc[lo % self.W] = 0.0

    def _round_set(self):
        """(partitions, their priority slots, the budget, the send threshold, the lowest layer's
        share of the budget) of this round."""
        sched, lo, W, upper = self.sched, self.lo, self.W, self.upper
        segs = [(lo, self.lo_parts)]
        for L in range(lo + 1, min(lo + W, sched.num_layers)):
            if L not in upper:
                lp = sched.layer(L)
                upper[L] = lp if self.ahead_local else lp[~sched.local[lp]]
                self.min_sc[L % W] = 0.0
            if upper[L].size:
                segs.append((L, upper[L]))
        self.segs = segs
        if self.sys.normalize and self.age >= self.settings.sum_refresh:
            self.sum_x, self.age = float(self.x.sum()), 0
        self.age += 1
        budget = self.factor * pending_budget(self.tol, self.sum_x, self.n, self.gammas,
                                              self.sys.normalize)
        share = sched.part_arcs[sched.layer(lo)].sum() / max(self.m, 1)
        return budget, budget / max(self.m, 1), share

    def settled(self):
        """A plain check of the lowest layer, once the rounds have run out."""
        if not self.lo_parts.size:
            return True
        budget, th, share = self._round_set()
        lo_parts = self.lo_parts
        pa = np.zeros(lo_parts.size, np.int64)
        total = P.linear_pending(lo_parts, *self.arrays, self.coef, self.s, self.x, th,
                                 self.score, self.nact, pa, self.rule, self.heat,
                                 self.hist3[:, 0, :], self.dummy_res, False, *self.groups,
                                 self.rep.gheat, self.gt, self.gscore, self.gact)
        count_check(self.stats, self.rep, lo_parts)
        return total <= budget * share or not pa.any()

    def check(self):
        """One round over the window: (the lowest layer's pending mass, whether it finished)."""
        if not self.lo_parts.size:
            return 0.0, True
        budget, th, share = self._round_set()
        segs, sched, stats, W, rule, settings = (self.segs, self.sched, self.stats, self.W,
                                                 self.rule, self.settings)
        lo_parts = self.lo_parts
        parts = np.concatenate([q for _, q in segs]) if len(segs) > 1 else lo_parts
        slots = np.concatenate([np.full(q.size, L % W, np.int64) for L, q in segs])
        mins = self.min_sc[slots]
        part_active = self.part_active = np.zeros(parts.size, np.int64)
        self.hist3[:] = 0
        local_budget = budget * sched.part_arcs / max(self.m, 1)
        P.linear_round(parts, *self.arrays, self.coef, self.s, self.x, th, mins, slots, rule,
                       self.heat, self.hist3, self.dummy_res, False, part_active, self.local,
                       local_budget, settings.max_local_sweeps, self.ps.path_scc,
                       sched.scc_last, sched.scc_runs, stats["rounds"], sched.length_hist,
                       *self.groups, self.rep.gheat, self.gt, self.rep.gscc, self.part_counts,
                       self.part_mass)
        counts = self.part_counts[:7 * parts.size].reshape(parts.size, 7)
        tot = counts.sum(axis=0)
        stats["arcs_examined"] += int(tot[5])
        stats["groups_examined"] += int(tot[6])
        if tot[2] or tot[4]:  # a round walked something
            sent, seen, walked, extra, pushed = (int(v) for v in tot[:5])
            stats["vertex_pushes"] += pushed
            stats["local_sweeps"] = stats.get("local_sweeps", 0) + extra
            stats["arc_updates"] += sent
            stats["vertex_updates"] += sent
            stats["arcs_examined"] += seen
            stats["paths_processed"] += walked
            stats["partitions_processed"] += int(parts.size)
            stats["rounds"] += 1
            stats["run_ahead_arc_updates"] = stats.get("run_ahead_arc_updates", 0) + int(
                counts[lo_parts.size:, 0].sum())
            a = 0
            for L, q in segs:
                c = counts[a:a + q.size]
                if c[:, 2].any() or c[:, 4].any():
                    sched.layer_rounds[L] += 1
                    sched.layer_arcs[L] += int(c[:, 0].sum())
                a += q.size
        # next round's priority threshold per layer of the window
        a = 0
        for L, q in segs:
            h = self.hist3[:, L % W, :].sum(axis=0)
            aging = aging_due(rule, sched.layer_rounds[L], settings)
            self.min_sc[L % W] = (_min_score(h, settings.select_share)
                                  if rule and h.sum() >= settings.min_priority_paths and not aging
                                  else 0.0)
            if L != self.lo:
                self.upper[L] = sched.still_active(q, part_active[a:a + q.size])
            a += q.size
        n_lo = lo_parts.size
        level = float(self.part_mass[:n_lo].sum())
        return level, level <= budget * share or not part_active[:n_lo].any()

    def walk(self):
        """The walk was the check's: the lowest layer's partitions still active."""
        lo_parts = self.lo_parts
        self.lo_parts = self.sched.still_active(lo_parts, self.part_active[:lo_parts.size])


def _linear_done(stats, bound, r1, x, converged):
    stats["error_bound"] = float(bound)
    stats["residual_l1"] = float(r1)
    return x, converged
