"""The engines, one package a mode, and the runners that execute a
:class:`~digraph.dispatch.route.Plan` on its placement.

``digraph.run`` validates its parameters, asks the router for a plan
(:func:`digraph.dispatch.route.route`, then :func:`~digraph.dispatch.route.place` for the
placement), and hands a :class:`~.common.Request` to :func:`execute`, which calls the runner of
the plan's placement:

===========  ==============================================  ==================================
kind         runner                                          what it owns
===========  ==============================================  ==================================
``cpu``      :func:`digraph.dispatch.engines.on_cpu.run`     Numba's threads, warm-up, the
                                                             mode's preparation, the automatic
                                                             power probe
``gpu``      :func:`digraph.dispatch.engines.on_gpu.run`     the GPU's backend, warm-up, the
                                                             PathSet, ``bsp`` as one shard
``gpus``     :func:`digraph.dispatch.engines.on_gpus.run`    the GPUs' backends, the engine's
                                                             warm-up and structures
``cluster``  :func:`digraph.dispatch.engines.on_cluster.run` the Dask cluster's workers, on
                                                             which the engine keeps its shards
===========  ==============================================  ==================================

A runner finds the plan's engine in :mod:`.registry` (which mode runs which families where, and
the function to call) and takes every decision from the plan: it tests no graph and counts no
GPU.  It returns ``(x, converged, mode)``, the state for the algorithm's ``finalize``, whether the
engine certified it, and the mode that answered (an automatic power probe may hand over).
"""

__all__ = ["execute", "RUNNERS"]


def _cpu(req):
    from . import on_cpu
    return on_cpu.run(req)


def _gpu(req):
    from . import on_gpu
    return on_gpu.run(req)


def _gpus(req):
    from . import on_gpus
    return on_gpus.run(req)


def _cluster(req):
    from . import on_cluster
    return on_cluster.run(req)


#: placement kind -> runner
RUNNERS = {"cpu": _cpu, "gpu": _gpu, "gpus": _gpus, "cluster": _cluster}


def execute(req):
    """Run ``req`` (a :class:`~.common.Request`) by its plan's placement; returns (x, converged,
    mode)."""
    return RUNNERS[req.plan.placement.kind](req)
