"""What the SCC engine costs on CPU threads, for the router
(:attr:`~digraph.dispatch.engines.registry.Engine.estimate`), in the unit of ``bsp``'s estimate
(:mod:`digraph.dispatch.engines.push.cpu_cost`).

The SCC engine's time over ``bsp``'s, on the same threads, is modelled as

    r(s, u, T) = max(r0 / (1 − c·s) · (T / 2)**β,  k · u · T**a)

with ``s`` the share of the arcs in components split over the threads (at least
:attr:`~digraph.dispatch.engines.scc.cpu.DagPushSettings.split_arcs` inside arcs): the rest
converges component by component in DAG order, a few sweeps each where ``bsp`` runs every round
over every arc (``r0`` on a graph with no split component), while a split component is swept
much as ``bsp`` sweeps it, with an exchange between the chunks (``c``); the levels and the
chunks' exchanges synchronise the threads more often than ``bsp``'s rounds, so the ratio grows
with the threads (``β``).  The second term is the component no thread shares: ``u``, the
share of the arcs in the largest component the engine does not split, is swept by one thread
while ``bsp``'s rounds over those arcs go ``T**a`` times faster (``a`` its thread exponent,
:mod:`digraph.dispatch.engines.push.cpu_cost`), ``k`` its sweeps over ``bsp``'s rounds.
``r0``, ``c``, ``β`` and ``k`` are the :class:`~digraph.dispatch.route.settings.RouteSettings`
fields ``scc_ratio_base``, ``scc_ratio_split``, ``scc_thread_exponent`` and
``scc_serial_ratio``, fitted on the measurements of
``benchmarks/results/cpu_threads_h100_host.json``.
"""

from ..push.cpu_cost import estimate as bsp_estimate
from ..registry import Estimate

__all__ = ["estimate", "ratio"]


def ratio(shape, settings):
    """r(s, u, T) above: the SCC engine's modelled time over ``bsp``'s."""
    s = min(max(float(shape["split_share"]), 0.0), 1.0)
    u = min(max(float(shape.get("serial_share", 0.0)), 0.0), 1.0)
    threads = max(int(shape["threads"]), 1)
    shared = (settings.scc_ratio_base / (1.0 - settings.scc_ratio_split * s)
              * (threads / 2.0) ** settings.scc_thread_exponent)
    return max(shared, settings.scc_serial_ratio * u * threads ** settings.bsp_thread_exponent)


def estimate(shape, settings):
    """The :class:`~digraph.dispatch.engines.registry.Estimate` of the SCC engine for a graph's
    ``shape`` (see :func:`digraph.dispatch.engines.push.cpu_cost.estimate`)."""
    r = ratio(shape, settings)
    return Estimate(bsp_estimate(shape, settings).cost * r,
                    f"{r:.2f}x bsp's: {shape['split_share']:.0%} of the arcs in components split "
                    f"over {shape['threads']} threads, {shape.get('serial_share', 0.0):.0%} in "
                    "the largest one not split")
