"""The runner of a Dask cluster (:class:`~digraph.dispatch.placement.Placement` of kind
``"cluster"``, ``digraph.run(..., cluster=client)``): the plan's engine (:mod:`.registry`: the
power iteration, :mod:`digraph.dispatch.engines.power.cluster`, the min/max ``bsp`` rounds,
:mod:`digraph.dispatch.engines.push.cluster`, on the same shards, or k-core's h-index ``bsp``
rounds, :mod:`digraph.dispatch.engines.push.cluster_hindex`, on shards of their own) loads or finds its shards on
the workers (``time_preprocess``), then runs its rounds (``time_compute``).  The
kernels compile, or load from Numba's cache, in the worker processes: their time is the
workers', counted in the set-up."""

import time

from ...errors import InvalidParameterError
from .registry import find

__all__ = ["run"]


def run(req):
    """Run ``req`` on the plan's cluster; returns (x, converged, mode)."""
    if req.option("batch_arcs") is not None:
        raise InvalidParameterError("batch_arcs= applies to device='cuda' only, not to a "
                                    "cluster run")
    stats = req.stats
    stats["threads"] = req.plan.placement.threads
    solve = find(req.mode, "cluster").load()(req)
    t0 = time.perf_counter()
    x, converged = solve()
    setup = stats.get("dask_time_setup", 0.0)
    stats["time_preprocess"] += setup
    stats["time_compute"] = time.perf_counter() - t0 - setup
    return x, converged, req.mode
