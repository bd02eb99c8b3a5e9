"""What the SCC engine costs on CPU threads, for the router
(:attr:`~digraph.dispatch.engines.registry.Engine.estimate`), in the unit of ``bsp``'s estimate
(:mod:`digraph.dispatch.engines.push.cpu_cost`).

The SCC engine's time over ``bsp``'s, on the same threads, is modelled as

    r(s, T) = r0 / (1 − c·s) · (T / 2)**β

with ``s`` the share of the arcs in components split over the threads (at least
:attr:`~digraph.dispatch.engines.scc.cpu.DagPushSettings.split_arcs` inside arcs): the rest
converges component by component in DAG order, a few sweeps each where ``bsp`` runs every round
over every arc (``r0`` on a graph with no split component), while a split component is swept
much as ``bsp`` sweeps it, with an exchange between the chunks (``c``); the levels and the
chunks' exchanges synchronise the threads more often than ``bsp``'s rounds, so the ratio grows
with the threads (``β``).  ``r0``, ``c`` and ``β`` are the
:class:`~digraph.dispatch.route.settings.RouteSettings` fields ``scc_ratio_base``,
``scc_ratio_split`` and ``scc_thread_exponent``, fitted on the measurements of
``benchmarks/results/cpu_threads_h100_host.json``.
"""

from ..push.cpu_cost import estimate as bsp_estimate
from ..registry import Estimate

__all__ = ["estimate", "ratio"]


def ratio(shape, settings):
    """r(s, T) above: the SCC engine's modelled time over ``bsp``'s."""
    s = min(max(float(shape["split_share"]), 0.0), 1.0)
    threads = max(int(shape["threads"]), 1)
    return (settings.scc_ratio_base / (1.0 - settings.scc_ratio_split * s)
            * (threads / 2.0) ** settings.scc_thread_exponent)


def estimate(shape, settings):
    """The :class:`~digraph.dispatch.engines.registry.Estimate` of the SCC engine for a graph's
    ``shape`` (see :func:`digraph.dispatch.engines.push.cpu_cost.estimate`)."""
    r = ratio(shape, settings)
    return Estimate(bsp_estimate(shape, settings).cost * r,
                    f"{r:.2f}x bsp's: {shape['split_share']:.0%} of the arcs in components split "
                    f"over {shape['threads']} threads")
