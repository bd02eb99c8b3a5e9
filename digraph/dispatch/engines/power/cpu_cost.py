"""What the power iteration costs on CPU threads, for the router
(:attr:`~digraph.dispatch.engines.registry.Engine.estimate`), in the unit of ``bsp``'s estimate
(:mod:`digraph.dispatch.engines.push.cpu_cost`).

Its rounds pull over every arc, arc-balanced over the threads, and scale with the threads as
``bsp``'s do; it needs fewer of them than ``bsp`` (the rank-one term, Anderson's mixing) and
each costs more.  Neither factor is known before a run, so the estimate is ``bsp``'s times one
fitted ratio, :attr:`~digraph.dispatch.route.settings.RouteSettings.power_ratio`, with its
spread, ``power_band``, for the router to measure within.  Used where no power probe runs
(:mod:`digraph.dispatch.route.estimates`).
"""

from ..push.cpu_cost import estimate as bsp_estimate
from ..registry import Estimate

__all__ = ["estimate"]


def estimate(shape, settings):
    """The :class:`~digraph.dispatch.engines.registry.Estimate` of the power iteration for a
    graph's ``shape`` (see :func:`digraph.dispatch.engines.push.cpu_cost.estimate`)."""
    r = settings.power_ratio
    return Estimate(bsp_estimate(shape, settings).cost * r,
                    f"{r:g}x bsp's: fewer rounds than bsp's, each dearer")
