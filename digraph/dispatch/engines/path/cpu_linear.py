"""The CPU path engine's driver for linear systems: :func:`solve_linear` sweeps the layers
(separate check and walk passes, or the check fused into the walk layer by layer,
:func:`_fused_layer`, or running ahead into the next layers, :func:`_fused_window`), certifies the
result from the recomputed residual, lowers the budget and sweeps again, or hands the run to
vertex-level push when the mirrors reach their rounding floor."""

import numba
import numpy as np

from ....smx.cpu import paths as P
from ....smx.cpu import paths_setup
from ... import driver
from ..push.cpu import finish_linear
from ..registry import find
from ...convergence import certified, certified_bound, linear_contraction, pending_budget
from ...systems import linear_factors
from .cpu_schedule import aging_due, chunks, count, count_check, _min_score, walk_arrays
from ....interrupts import check as _check_interrupt

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
    factor = 1.0
    converged = False
    out_of_rounds = False
    stalled = False
    while True:
        _check_interrupt()  # a Ctrl-C is raised between rounds (digraph.interrupts)
        for L in range(sched.num_layers):
            parts = sched.layer(L)
            share = sched.part_arcs[parts].sum() / max(m, 1)  # the layer's share of the budget
            best, since_best = np.inf, 0
            if fuse and skip and window != 1 and not want_residual:
                if L == 0:
                    out_l, stalled_l = _fused_window(
                        window, ahead_local, factor, stats, sched, rep, groups, x, s, coef, heat,
                        m, n, tol, gammas, sys, max_iter, rule, gt, ps, score, nact, gscore, gact,
                        settings)
                    out_of_rounds = out_of_rounds or out_l
                    stalled = stalled or stalled_l
                continue
            if fuse and skip:
                parts, out_l, stalled_l = _fused_layer(
                    L, parts, share, factor, stats, sched, rep, groups, x, s, coef, heat, hist,
                    residual, want_residual, max_in_degree, m, n, tol, gammas, sys, max_iter,
                    rule, gt, ps, score, nact, gscore, gact, settings)
                out_of_rounds = out_of_rounds or out_l
                stalled = stalled or stalled_l
                continue
            while parts.size and not out_of_rounds:
                budget = factor * pending_budget(tol, float(x.sum()), n, gammas, sys.normalize)
                part_active = np.zeros(parts.size, np.int64)
                hist[:] = 0
                if want_residual:
                    # L∞ route: the budget bounds every vertex's residual, not their sum (a sum
                    # that small would sit below the rounding floor of the mirrors)
                    th = budget / (2.0 * max_in_degree)
                    residual[:] = 0.0
                    P.linear_pending(parts, *arrays, coef, s, x, th, score, nact, part_active,
                                     rule, heat, hist, residual, True, *groups, rep.gheat, gt,
                                     gscore, gact)
                    done = residual.max() <= budget / 2.0
                else:
                    th = budget / max(m, 1)
                    total = P.linear_pending(parts, *arrays, coef, s, x, th, score, nact,
                                             part_active, rule, heat, hist, residual, False,
                                             *groups, rep.gheat, gt, gscore, gact)
                    done = total <= budget * share
                count_check(stats, rep, parts)
                if done or not part_active.any():
                    break
                if stats["rounds"] >= max_iter:
                    out_of_rounds = True
                    break
                level = residual.max() if want_residual else total
                if level < 0.999 * best:
                    best, since_best = level, 0
                else:
                    since_best += 1
                    if since_best >= settings.stall_rounds:  # the mirrors' rounding floor: below
                        stalled = True
                        break
                min_score = 0.0
                aging = aging_due(rule, sched.layer_rounds[L], settings)
                counts = hist.sum(axis=0)
                if rule and counts.sum() >= settings.min_priority_paths and not aging:
                    min_score = _min_score(counts, settings.select_share)
                if skip:
                    parts = sched.still_active(parts, part_active)
                    walk_nact, walk_gact, walk_th = nact, gact, th
                else:  # ablation: walk everything, transmit every change
                    walk_nact, walk_gact, walk_th, min_score = all_paths, all_groups, 0.0, 0.0
                local_budget = budget * sched.part_arcs / max(m, 1)
                res = P.linear_walk(parts, *arrays, coef, s, x, walk_th, walk_nact, score, min_score,
                                    sched.local, local_budget, settings.max_local_sweeps,
                                    ps.path_scc,
                                    sched.scc_last, sched.scc_runs, stats["rounds"],
                                    sched.length_hist, *groups, gt, gscore, walk_gact, rep.gscc,
                                    want_residual)
                count(stats, sched, L, res, parts)
        # final check: the sound bound, from the residual recomputed from the state
        with chunks(0):
            bound, r1, floor = certified_bound(graph, sys, x, gammas, rvec)
        capped = out_of_rounds or stats["rounds"] >= max_iter
        tracked = np.inf
        if not capped and not certified(bound, r1, floor, tol, stats):
            allp = np.arange(sched.num_parts, dtype=np.int64)
            tracked = P.linear_pending(allp, *arrays, coef, s, x, 0.0, score, nact,
                                       np.zeros(allp.size, np.int64), 0, heat, hist, residual,
                                       False, *groups, rep.gheat, gt, gscore, gact)
        floored = stalled or r1 > 2.0 * tracked
        # The mirrors hit their rounding floor: a pending change is a difference of two close
        # values, and at a damping near 1 the decay of one sweep drowns in the rounding of the
        # atomic adds.  Finish with vertex-level push, whose residual δ is stored exactly.
        end = driver.ending(stats, (bound, r1, floor), tol, capped=capped,
                            then=find("path", "cpu").after_stall,
                            why="the walk's mirrors reached their rounding floor" if floored
                            else "the sweeps ran out",
                            retry=not floored
                            and stats.get("path_sweeps", 1) < settings.max_sweeps)
        if end == "converged":
            converged = True
            break
        if end == "capped":
            break
        if end == "hand-over":
            return finish_linear(graph, sys, tol, max_iter, stats, x0=x, delta0=rvec)
        factor /= 4.0
        stats["path_sweeps"] = stats.get("path_sweeps", 1) + 1
    return _linear_done(stats, bound, r1, x, converged)


def _fused_layer(L, parts, share, factor, stats, sched, rep, groups, x, s, coef, heat, hist,
                 residual, want_residual, max_in_degree, m, n, tol, gammas, sys, max_iter, rule,
                 gt, ps, score, nact, gscore, gact, settings):
    """Rounds of layer ``L`` with the check fused into the walk (:func:`cpu_paths.linear_round`);
    returns (partitions still scheduled, out of rounds, stalled)."""
    best, since_best = np.inf, 0
    min_score = 0.0  # the first round of a layer walks every active path
    part_counts = np.zeros(7 * parts.size, np.int64)
    part_mass = np.zeros(parts.size, np.float64)
    sum_x, age = 0.0, settings.sum_refresh
    while parts.size:
        if sys.normalize and age >= settings.sum_refresh:
            # Σx only grows (b ≥ 0, A ≥ 0, x from b upwards): a stale sum gives a smaller, still
            # sound budget, and one numpy sum per round cost 0.1 ms on cnr-2000
            sum_x, age = float(x.sum()), 0
        age += 1
        budget = factor * pending_budget(tol, sum_x, n, gammas, sys.normalize)
        if want_residual:
            th = budget / (2.0 * max_in_degree)
            residual[:] = 0.0
        else:
            th = budget / max(m, 1)
        part_active = np.zeros(parts.size, np.int64)
        hist[:] = 0
        if stats["rounds"] >= max_iter:  # out of rounds, unless a plain check finds it done
            total = P.linear_pending(parts, *walk_arrays(ps, rep), coef, s, x, th, score, nact,
                                     part_active, rule, heat, hist, residual, want_residual,
                                     *groups, rep.gheat, gt, gscore, gact)
            count_check(stats, rep, parts)
            done = (residual.max() <= budget / 2.0) if want_residual else total <= budget * share
            return parts, not (done or not part_active.any()), False
        local_budget = budget * sched.part_arcs / max(m, 1)
        res = P.linear_round(parts, *walk_arrays(ps, rep), coef, s, x, th,
                             np.full(parts.size, min_score), np.zeros(parts.size, np.int64), rule,
                             heat, hist[:, None, :], residual, want_residual, part_active,
                             sched.local,
                             local_budget, settings.max_local_sweeps, ps.path_scc, sched.scc_last,
                             sched.scc_runs, stats["rounds"], sched.length_hist, *groups,
                             rep.gheat, gt, rep.gscc, part_counts, part_mass)
        res = part_counts[:7 * parts.size].reshape(parts.size, 7).sum(axis=0)
        total = float(part_mass[:parts.size].sum())
        sent, seen, walked, extra, pushed, scanned, gscanned = (int(v) for v in res)
        stats["arcs_examined"] += int(scanned)
        stats["groups_examined"] += int(gscanned)
        if walked or pushed:
            count(stats, sched, L, res[:5], parts)
        if want_residual:
            level = residual.max()
            done = level <= budget / 2.0
        else:
            level = total
            done = total <= budget * share
        if done or not part_active.any():
            return parts, False, False
        if level < 0.999 * best:
            best, since_best = level, 0
        else:
            since_best += 1
            if since_best >= settings.stall_rounds:
                return parts, False, True
        min_score = 0.0
        aging = aging_due(rule, sched.layer_rounds[L], settings)
        counts = hist.sum(axis=0)
        if rule and counts.sum() >= settings.min_priority_paths and not aging:
            min_score = _min_score(counts, settings.select_share)
        parts = sched.still_active(parts, part_active)
    return parts, False, False


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
    L_n = sched.num_layers
    if W <= 0 or W > L_n:  # 0: every higher layer; a window never needs more slots than layers
        W = max(L_n, 1)
    T = numba.config.NUMBA_NUM_THREADS
    hist3 = np.zeros((T, W, 128), np.int64)
    min_sc = np.zeros(W, np.float64)
    upper = {}
    # partitions that converge locally: only those of the lowest layer (inputs final)
    local = np.zeros_like(sched.local)
    if L_n:
        local[sched.layer(0)] = sched.local[sched.layer(0)]
    rep_arrays = walk_arrays(ps, rep)
    lo = 0
    lo_parts = sched.layer(0) if L_n else np.zeros(0, np.int64)
    best, since_best = np.inf, 0
    stalled = False
    sum_x, age = 0.0, settings.sum_refresh
    cap = sched.num_parts
    part_counts = np.zeros(7 * max(cap, 1), np.int64)
    part_mass = np.zeros(max(cap, 1), np.float64)
    dummy_res = np.zeros(0, np.float64)
    while lo < L_n:
        if not lo_parts.size:
            lo += 1
            if lo < L_n:
                lo_parts = sched.layer(lo)
                local[lo_parts] = sched.local[lo_parts]
                upper.pop(lo, None)
                min_sc[lo % W] = 0.0
                best, since_best = np.inf, 0
            continue
        segs = [(lo, lo_parts)]
        for L in range(lo + 1, min(lo + W, L_n)):
            if L not in upper:
                lp = sched.layer(L)
                upper[L] = lp if ahead_local else lp[~sched.local[lp]]
                min_sc[L % W] = 0.0
            if upper[L].size:
                segs.append((L, upper[L]))
        parts = np.concatenate([q for _, q in segs]) if len(segs) > 1 else lo_parts
        slots = np.concatenate([np.full(q.size, L % W, np.int64) for L, q in segs])
        mins = min_sc[slots]
        if sys.normalize and age >= settings.sum_refresh:
            sum_x, age = float(x.sum()), 0
        age += 1
        budget = factor * pending_budget(tol, sum_x, n, gammas, sys.normalize)
        th = budget / max(m, 1)
        share = sched.part_arcs[sched.layer(lo)].sum() / max(m, 1)
        part_active = np.zeros(parts.size, np.int64)
        if stats["rounds"] >= max_iter:  # out of rounds, unless a plain check finds it done
            pa = np.zeros(lo_parts.size, np.int64)
            total = P.linear_pending(lo_parts, *rep_arrays, coef, s, x, th, score, nact, pa, rule,
                                     heat, hist3[:, 0, :], dummy_res, False, *groups, rep.gheat,
                                     gt, gscore, gact)
            count_check(stats, rep, lo_parts)
            if total <= budget * share or not pa.any():
                lo_parts = np.zeros(0, np.int64)
                continue
            return True, False
        hist3[:] = 0
        local_budget = budget * sched.part_arcs / max(m, 1)
        P.linear_round(parts, *rep_arrays, coef, s, x, th, mins, slots, rule, heat, hist3,
                       dummy_res, False, part_active, local, local_budget,
                       settings.max_local_sweeps,
                       ps.path_scc, sched.scc_last, sched.scc_runs, stats["rounds"],
                       sched.length_hist, *groups, rep.gheat, gt, rep.gscc, part_counts, part_mass)
        counts = part_counts[:7 * parts.size].reshape(parts.size, 7)
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
            h = hist3[:, L % W, :].sum(axis=0)
            aging = aging_due(rule, sched.layer_rounds[L], settings)
            min_sc[L % W] = (_min_score(h, settings.select_share)
                             if rule and h.sum() >= settings.min_priority_paths and not aging
                             else 0.0)
            if L != lo:
                upper[L] = sched.still_active(q, part_active[a:a + q.size])
            a += q.size
        n_lo = lo_parts.size
        level = float(part_mass[:n_lo].sum())
        if level <= budget * share or not part_active[:n_lo].any():
            lo_parts = np.zeros(0, np.int64)  # the lowest layer is finished
            continue
        if level < 0.999 * best:
            best, since_best = level, 0
        else:
            since_best += 1
            if since_best >= settings.stall_rounds:  # the mirrors' rounding floor: as _fused_layer
                stalled = True
                lo_parts = np.zeros(0, np.int64)
                continue
        lo_parts = sched.still_active(lo_parts, part_active[:n_lo])
    return False, stalled


def _linear_done(stats, bound, r1, x, converged):
    stats["error_bound"] = float(bound)
    stats["residual_l1"] = float(r1)
    return x, converged
