"""The CPU runner: every mode on CPU threads (:class:`~digraph.dispatch.placement.Placement` of
kind ``"cpu"``).

The run is warm-up (``time_compile``) → the mode's preparation (the condensation of ``scc``, the
PathSet of the path modes: ``time_preprocess``) → the engine (``time_compute``).  An automatic
``power`` run starts as a probe, and hands over to the plan
:func:`~digraph.dispatch.route.after_probe` makes when the probe trips.  A plan that asks for it
(:attr:`~digraph.dispatch.route.plans.Plan.timing`: the router's estimates were close) records
the engine's seconds on the graph for the next runs' choice
(:func:`digraph.dispatch.route.estimates.record`); a run that times an engine after another
(code ``"measuring"``) stops at the cap of
:attr:`~digraph.dispatch.route.settings.RouteSettings.explore_cap` and the engine measured
faster answers (:func:`_over_time`).
"""

import time

from ... import compiling
from ...errors import InvalidParameterError
from . import warm
from .common import move_compile, pathset, priority, solve_dual_or
from .registry import find
from .. import driver
from ..route.estimates import explore_cap, record

__all__ = ["run"]


def prepare_scc(req, extra):
    """``scc``'s preparation: the graph's condensation, the priority."""
    from ...paths.condensation import condensation_for
    condensation_for(req.graph)
    extra["priority"] = priority("scc", req.option("priority"))


def prepare_paths(req, extra):
    """The path modes' preparation: the PathSet (from the cache folder, or built and kept with
    the graph) and the options only they take."""
    from .path.settings import check_layer_window, check_short_path_push
    extra["priority"] = priority(req.mode, req.option("priority"))
    extra["state"] = "arc"
    extra["pathset"] = pathset(req.graph, req.option("cache"), req.option("preprocess"))
    extra["short_path_push"] = check_short_path_push(req.option("short_path_push"))
    extra["layer_window"] = check_layer_window(req.option("layer_window"))


def run(req):
    """Run ``req`` on the CPU; returns (x, converged, mode that answered)."""
    if req.option("batch_arcs") is not None:
        raise InvalidParameterError("batch_arcs= applies to device='cuda' only")
    graph, system, stats, mode = req.graph, req.system, req.stats, req.mode
    with warm.numba_threads(req.option("threads")):
        warm.timed(stats, lambda: warm.cpu(mode, system.family, graph, system))
        extra = {}
        engine = find(mode, "cpu")
        if engine.prepare is not None:
            t0 = time.perf_counter()
            c0 = compiling.seconds()
            engine.load("prepare")(req, extra)
            stats["time_preprocess"] += time.perf_counter() - t0
            move_compile(stats, c0, "time_preprocess")  # the condensation's or PathSet's kernels
        t0 = time.perf_counter()
        c0 = compiling.seconds()
        timing, seconds = req.plan.timing, None
        cap = _cap(req)
        aside = c_aside = 0.0
        if req.plan.probe is not None:
            x, converged, mode, aside, c_aside, timing, seconds = _probe_then(req)
        else:
            try:
                with driver.deadline(None if cap is None else compiling.work_clock() + cap[0]):
                    x, converged = solve_dual_or(engine.load(), graph, system, req.tol,
                                                 req.max_iter, stats, extra)
            except driver.OverTime:
                x, converged, mode, aside, c_aside, seconds = _over_time(req, cap, t0, c0)
        stats["time_compute"] = time.perf_counter() - t0 - aside
        move_compile(stats, c0 + c_aside, "time_compute")  # kernels first called mid-run
    if timing is not None and converged and "finished_by" not in stats:
        record(graph, timing, mode, stats["time_compute"] if seconds is None else seconds)
    return x, converged, mode


def _probe_then(req):
    """The automatic power probe
    (:attr:`digraph.dispatch.route.settings.RouteSettings.probe_share`): (x, converged, mode that
    answered, seconds spent routing and compiling, Numba's compile seconds among them, and, when
    the probe tripped, the plan's :attr:`~digraph.dispatch.route.plans.Plan.timing` and the
    seconds of the engine that finished, for :func:`~digraph.dispatch.route.estimates.record`).
    A probe that trips hands over to :func:`~digraph.dispatch.route.after_probe`, whose plan is
    recorded in ``stats``; its compilation counts in ``time_compile``, the condensation the SCC
    engine builds in ``time_preprocess``, the probe's rounds in the counters (and
    ``probe_rounds``)."""
    from .power import cpu as power
    from ..route import after_probe, probe_judge
    graph, system, stats, plan = req.graph, req.system, req.stats, req.plan
    judge = probe_judge(graph, system, plan.placement.threads, req.tol)
    x, converged = power.solve(graph, system, tol=req.tol, max_iter=req.max_iter, stats=stats,
                               trip=plan.probe, judge=judge)
    if converged is not None:
        if judge is not None and judge.go:
            stats["route"]["steps"].append({"to": "power", "code": "probe-continued",
                                            "why": f"the power probe's differences fell by "
                                                   f"{stats['probe_ratio']:.2f} at round "
                                                   f"{stats['probe_rounds']}; then "
                                                   f"{judge.words}: power to the end",
                                            "round": int(stats["probe_rounds"])})
        return x, converged, plan.mode, 0.0, 0.0, None, None
    t0 = time.perf_counter()
    c0 = compiling.seconds()
    new = after_probe(plan, graph, system, plan.placement.threads, stats,
                      judged=None if judge is None else judge.words)
    stats["mode"], stats["engine"] = new.mode, new.engine
    stats["route"]["steps"].append({"to": new.mode, "code": new.code, "why": new.reason,
                                    "round": int(stats["probe_rounds"])})
    x, converged, aside, c_aside, seconds = _run_instead(req, new.mode, t0, c0)
    return x, converged, new.mode, aside, c_aside, new.timing, seconds


def _run_instead(req, mode, t0, c0):
    """Engine ``mode`` answers from the start in place of the plan's: the seconds since ``t0``
    (the switch's routing) and its warm-up count in ``time_compile``, its preparation (the
    condensation of ``scc``) in ``time_preprocess``.  Returns (x, converged, the seconds spent
    on those, Numba's compile seconds among them since ``c0``, the engine's own seconds)."""
    graph, system, stats = req.graph, req.system, req.stats
    warm.cpu(mode, system.family, graph, system)
    aside = time.perf_counter() - t0
    stats["time_compile"] += aside
    extra = {}
    engine = find(mode, "cpu")
    if engine.prepare is not None:
        t1, c1 = time.perf_counter(), compiling.seconds()
        engine.load("prepare")(req, extra)
        took = time.perf_counter() - t1
        aside += took
        stats["time_preprocess"] += took
        move_compile(stats, c1, "time_preprocess")
    c_aside = compiling.seconds() - c0
    t1, c1 = time.perf_counter(), compiling.seconds()
    x, converged = solve_dual_or(engine.load(), graph, system, req.tol, req.max_iter, stats,
                                 extra)
    seconds = time.perf_counter() - t1 - (compiling.seconds() - c1)  # the engine's own solve
    return x, converged, aside, c_aside, seconds


def _cap(req):
    """``(seconds, fastest)`` for a run that times an engine after another was timed on the
    graph (:func:`digraph.dispatch.route.estimates.explore_cap`), else None."""
    plan = req.plan
    if plan.timing is None or plan.code != "measuring" or plan.probe is not None:
        return None
    from ..route.settings import DEFAULT
    from ..settings import current
    return explore_cap(req.graph, plan.timing, plan.mode, current(DEFAULT))


def _over_time(req, cap, t0, c0):
    """The timing run passed its cap (:func:`_cap`): the engine counts as timed, slower, and
    the fastest timed engine answers from the start (:func:`_run_instead`), its step in the
    route (code ``"over-time"``).  Returns (x, converged, mode that answered, seconds aside
    from the engines' work, Numba's compile seconds among them, the answering engine's own
    seconds)."""
    graph, stats, plan = req.graph, req.stats, req.plan
    limit, fast = cap
    ran = time.perf_counter() - t0 - (compiling.seconds() - c0)
    t1, c1 = time.perf_counter(), compiling.seconds()
    record(graph, plan.timing, plan.mode, ran, stopped=True)
    stats["mode"], stats["engine"] = fast, find(fast, "cpu").name
    stats["route"]["steps"].append({
        "to": fast, "code": "over-time", "round": int(stats["rounds"]),
        "why": f"{plan.mode} ran {ran * 1e3:.3g} ms without finishing, past the cap of "
               f"{limit * 1e3:.3g} ms (explore_cap times {fast}'s time measured on this "
               f"graph): {fast} answers"})
    x, converged, aside, c_aside, seconds = _run_instead(req, fast, t1, c1)
    return x, converged, fast, aside, c_aside, seconds
