"""What ``bsp``'s dense rounds cost on CPU threads, for the router
(:attr:`~digraph.dispatch.engines.registry.Engine.estimate`).

A round reads every arc, split evenly over the threads; the rounds are memory-bound, so ``T``
threads take ``T**-a`` of one thread's time, ``a`` =
:attr:`~digraph.dispatch.route.settings.RouteSettings.bsp_thread_exponent`.  The unit of every
CPU estimate is one thread's pass over the arcs (the rounds a system needs are the same factor
for both engines the router weighs, so they are left out).
"""

from ..registry import Estimate

__all__ = ["estimate"]


def estimate(shape, settings):
    """The :class:`~digraph.dispatch.engines.registry.Estimate` of ``bsp`` for a graph's
    ``shape`` (a dict of ``arcs``, ``threads`` and ``split_share``, the share of the arcs in
    components the SCC engine splits over the threads) under ``settings`` (a
    :class:`~digraph.dispatch.route.settings.RouteSettings`)."""
    a = settings.bsp_thread_exponent
    threads = max(int(shape["threads"]), 1)
    return Estimate(shape["arcs"] / threads ** a,
                    f"dense rounds over every arc, {threads} threads at T^-{a:g}")
