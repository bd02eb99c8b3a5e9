"""The engines' runners, by placement: what executes a :class:`~digraph.dispatch.route.plans.Plan`.

``digraph.run`` validates its parameters, asks the router for a plan
(:func:`digraph.dispatch.route.route`, then :func:`~digraph.dispatch.route.placing.place` for the
placement), and hands a :class:`~.common.Request` to :func:`execute`, which calls the runner of
the plan's placement:

========  ==========================================  ===========================================
kind      runner                                       engines
========  ==========================================  ===========================================
``cpu``   :func:`digraph.dispatch.engines.on_cpu.run`     every CPU mode (``cpu-<mode>``)
``gpu``   :func:`digraph.dispatch.engines.on_gpu.run`     ``gpu-power`` and the modes of
                                                       :mod:`digraph.dispatch.engines.one_gpu`
``gpus``  :func:`digraph.dispatch.engines.on_gpus.run`    ``multi-gpu-power``, ``-scc``, ``-bsp``,
                                                       ``-vertex-async``, ``-path``
========  ==========================================  ===========================================

A runner takes every decision from the plan: it tests no graph and counts no GPU.  It returns
``(x, converged, mode)``, the state for the algorithm's ``finalize``, whether the engine
certified it, and the mode that answered (an automatic power probe may hand over).
"""

from .common import Request

__all__ = ["Request", "execute", "RUNNERS"]


def _cpu(req):
    from . import on_cpu as cpu
    return cpu.run(req)


def _gpu(req):
    from . import on_gpu as gpu
    return gpu.run(req)


def _gpus(req):
    from . import on_gpus as gpus
    return gpus.run(req)


#: placement kind -> runner
RUNNERS = {"cpu": _cpu, "gpu": _gpu, "gpus": _gpus}


def execute(req):
    """Run ``req`` (a :class:`Request`) by its plan's placement; returns (x, converged, mode)."""
    return RUNNERS[req.plan.placement.kind](req)
