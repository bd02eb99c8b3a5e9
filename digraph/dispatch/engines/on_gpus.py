"""The runner of several GPUs (:class:`~digraph.dispatch.placement.Placement` of kind
``"gpus"``, narrowed by :func:`digraph.dispatch.route.placing.place` to the GPUs a run uses): the power
iteration sharded (:mod:`digraph.dispatch.engines.power.gpus`), the DAG dispatcher of ``scc``
(:mod:`digraph.dispatch.engines.scc.gpus`), the path dispatcher with a worker per GPU
(:mod:`digraph.dispatch.engines.path.gpus`), and vertex shards for ``bsp`` and ``vertex-async``
(:mod:`digraph.dispatch.engines.push.gpus`)."""

import time

from ...errors import InvalidParameterError
from ...result import RunStats
from . import warm
from .common import pathset, solve_dual_or
from ..route.modes import PATH_MODES

__all__ = ["run"]


def run(req):
    """Run ``req`` on the plan's GPUs; returns (x, converged, mode)."""
    from ..runtime.cuda.backend import backend
    devices = list(req.plan.placement.devices)
    for d in devices:
        backend(d)  # NotAvailableError naming the missing GPU
    if req.option("batch_arcs") is not None:
        raise InvalidParameterError("batch_arcs= streams the arcs of one GPU; with several GPUs "
                                    "the arcs are sharded over them")
    req.stats["threads"] = 0
    path = req.mode in PATH_MODES and req.system.family != "hindex"
    if not path and any(req.option(k) is not None for k in ("priority", "cache", "preprocess")):
        raise InvalidParameterError(
            f"priority=, cache= and preprocess= apply to the path modes, not mode={req.mode!r}")
    prepare = _power if req.mode == "power" else _scc if req.mode == "scc" else \
        _paths if path else _shards
    solve = prepare(req, devices)  # its kernels warm (time_compile), its structures built
    t0 = time.perf_counter()
    x, converged = solve()
    req.stats["time_compute"] = time.perf_counter() - t0 - req.stats["time_transfer"]
    return x, converged, req.mode


def _compiling(stats, fn):
    """``fn()``, its time in ``time_compile``."""
    t0 = time.perf_counter()
    fn()
    stats["time_compile"] += time.perf_counter() - t0


def _power(req, devices):
    """The power iteration sharded over ``devices``: its solve, its kernels warm."""
    from .power import gpus as multi_gpu_power
    key = ("multi-gpu-power", req.plan.placement.device)

    def warm_up():
        import dataclasses
        tiny = warm.tiny_graph()
        warm.run_tiny("linear", lambda sys, _: multi_gpu_power.solve(
            tiny, dataclasses.replace(sys, normalize=True), devices=devices, tol=1e-3,
            max_iter=100, stats=RunStats.new()), divisors=(None,))
        warm.WARM.add(key)

    if key not in warm.WARM:
        _compiling(req.stats, warm_up)
    return lambda: multi_gpu_power.solve(req.graph, req.system, devices=devices, tol=req.tol,
                                         max_iter=req.max_iter, stats=req.stats)


def _scc(req, devices):
    """The DAG dispatcher, each unit's components dealt over ``devices``."""
    from ..runtime.cuda.backend import backend
    from .scc import gpus as dag_gpus

    def warm_up():
        for d in dict.fromkeys(devices):
            b = backend(d)
            with b.current():
                warm.gpu(b, "scc", req.system.family, d)

    def solve():
        with backend(devices[0]).current():
            return solve_dual_or(dag_gpus.solve_dag, req.graph, req.system, req.tol, req.max_iter,
                                 req.stats, dict(devices=devices))

    _compiling(req.stats, warm_up)
    return solve


def _warm_shards(req, devices, shard_mode):
    """The sharded engine's kernels of ``shard_mode`` (``time_compile``)."""
    from .push import gpus as multi_gpu
    key = ("multi-gpu", req.plan.placement.device, shard_mode, req.system.family)

    def warm_up():
        tiny = warm.tiny_graph()
        warm.run_tiny(req.system.family, lambda sys, _: multi_gpu.solve(
            tiny, sys, devices=devices, mode=shard_mode, tol=1e-3, max_iter=100,
            stats=RunStats.new(), min_arcs_per_gpu=0), divisors=(None,))
        warm.WARM.add(key)

    if key not in warm.WARM:
        _compiling(req.stats, warm_up)


def _paths(req, devices):
    """The path dispatcher with one worker per GPU."""
    from .path import gpus as multi
    from .path.gpus_worker import gpu_worker_factory
    _warm_shards(req, devices, "vertex-async")
    t0 = time.perf_counter()
    ps = pathset(req.graph, req.option("cache"), req.option("preprocess"))
    req.stats["time_preprocess"] += time.perf_counter() - t0
    req.stats["gpus"] = len(devices)
    return lambda: solve_dual_or(multi.solve, req.graph, req.system, req.tol, req.max_iter,
                                 req.stats, dict(pathset=ps, workers=len(devices),
                                                 make_worker=gpu_worker_factory(devices, req.stats)))


def _shards(req, devices):
    """Vertex shards, one per GPU (``bsp``, ``vertex-async``; k-core in every mode)."""
    from .push import gpus as multi_gpu
    _warm_shards(req, devices, req.mode)
    divide = getattr(req.algo, "divides_by_sum", False) and req.system.family == "linear"
    return lambda: solve_dual_or(multi_gpu.solve, req.graph, req.system, req.tol, req.max_iter,
                                 req.stats, dict(devices=devices, mode=req.mode, divide_by_sum=divide))
