"""The runner of several GPUs (:class:`~digraph.dispatch.placement.Placement` of kind
``"gpus"``, narrowed by :func:`digraph.dispatch.route.place` to the GPUs a run uses): the plan's
engine (:mod:`.registry`) warms its kernels and builds its structures, then solves: the power
iteration sharded (:mod:`digraph.dispatch.engines.power.gpus`), the DAG dispatcher of ``scc``
(:mod:`digraph.dispatch.engines.scc.gpus`), the path dispatcher with a worker a GPU
(:mod:`digraph.dispatch.engines.path.gpus`), vertex shards for ``bsp`` and ``vertex-async``
(:mod:`digraph.dispatch.engines.push.gpus`)."""

import time

from ...errors import InvalidParameterError
from ..route.modes import PATH_MODES
from .registry import find

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
    if req.mode not in PATH_MODES and any(req.option(k) is not None
                                          for k in ("priority", "cache", "preprocess")):
        raise InvalidParameterError(
            f"priority=, cache= and preprocess= apply to the path modes, not mode={req.mode!r}")
    solve = find(req.mode, "gpus").load()(req, devices)  # kernels warm, structures built
    t0 = time.perf_counter()
    x, converged = solve()
    req.stats["time_compute"] = time.perf_counter() - t0 - req.stats["time_transfer"]
    return x, converged, req.mode
