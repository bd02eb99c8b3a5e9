"""The one-GPU runner (:class:`~digraph.dispatch.placement.Placement` of kind ``"gpu"``): the
power iteration (:mod:`digraph.dispatch.engines.power.gpu`), the other modes of
:mod:`digraph.dispatch.engines.one_gpu`, or ``bsp`` by the sharded engine as one shard where the
plan says so (:attr:`~digraph.dispatch.route.plans.Plan.as_shard`)."""

import time

from ...errors import InvalidParameterError
from ..runtime.cuda.backend import backend
from . import one_gpu, warm
from .common import pathset, priority, solve_dual_or
from .registry import find

__all__ = ["run"]


def run(req):
    """Run ``req`` on its GPU; returns (x, converged, mode)."""
    device = req.plan.placement.device
    be = backend(device)  # NotAvailableError with the reason when there is no GPU
    with be.current():  # its device current for the run, whichever a run before left current
        return _run(be, req, device)


def prepare_paths(req, extra):
    """The path modes' preparation: the PathSet (from the cache folder, or built and kept with
    the graph) and the priority."""
    extra["pathset"] = pathset(req.graph, req.option("cache"), req.option("preprocess"))
    extra["priority"] = priority(req.mode, req.option("priority"))


def _run(be, req, device):
    graph, system, stats, mode, algo = req.graph, req.system, req.stats, req.mode, req.algo
    engine = find(mode, "gpu")
    stats["threads"] = 0
    warm.timed(stats, lambda: warm.gpu(be, mode, system.family, device))
    extra = {}
    if engine.prepare is None:
        if any(req.option(k) is not None for k in ("priority", "cache", "preprocess")):
            raise InvalidParameterError(
                f"priority=, cache= and preprocess= apply to the path modes, not mode={mode!r}")
    elif system.family in engine.families:
        t0 = time.perf_counter()
        engine.load("prepare")(req, extra)
        stats["time_preprocess"] += time.perf_counter() - t0
    t0 = time.perf_counter()
    batch_arcs = req.option("batch_arcs")
    if batch_arcs is not None:
        if "batch_arcs" not in engine.takes or system.family != "linear":
            raise InvalidParameterError("batch_arcs= streams the arcs of mode='bsp' on "
                                        "PageRank-like (linear) algorithms, "
                                        f"not mode={mode!r} on {algo.name}")
        from ...checks import check_positive
        extra["batch_arcs"] = check_positive("batch_arcs", batch_arcs, int)
    if req.plan.as_shard:  # a leaner set-up and fused dense rounds (the plan's reason)
        from .push import gpus as sharded
        x, converged = solve_dual_or(sharded.solve, graph, system, req.tol, req.max_iter, stats,
                                     dict(devices=[device], mode=mode, min_arcs_per_gpu=0,
                                          divide_by_sum=getattr(algo, "divides_by_sum", False)))
    elif not engine.resident:  # the power iteration: its own set-up
        x, converged = engine.load()(graph, system, tol=req.tol, max_iter=req.max_iter,
                                     stats=stats, device=device)
    else:
        from ..runtime.cuda import shards
        shards.drop_work()  # another engine runs: free what the sharded one kept
        x, converged = solve_dual_or(one_gpu.solve, graph, system, req.tol, req.max_iter, stats,
                                     dict(extra, mode=mode, device=device))
    stats["time_compute"] = time.perf_counter() - t0 - stats["time_transfer"]
    return x, converged, mode
