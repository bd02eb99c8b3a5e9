"""The push modes on one GPU: ``bsp`` and ``vertex-async`` by family, their state resident.

Linear systems run :func:`~.gpu_linear.solve_linear` (or, for
``bsp`` when the arcs do not fit in free GPU memory or ``batch_arcs`` is given,
:func:`~.gpu_streamed.linear_streamed`); min/max systems
``vertex-async``'s worklist kept on the GPU (:mod:`~.gpu_worklist`)
or ``bsp``'s rounds (:mod:`~.gpu_monotone`); h-index systems
(k-core) :func:`~.gpu_monotone.hindex`.
"""

from ...runtime.cuda.device_graph import auto_batch, resident_graph, too_big
from .gpu_linear import solve_linear
from .gpu_monotone import hindex, monotone_bsp
from .gpu_streamed import linear_streamed

__all__ = ["run_on"]


def run_on(be, graph, system, *, mode, tol, max_iter, stats, options):
    """Run ``system`` in ``mode`` (``"bsp"`` or ``"vertex-async"``) on the GPU of ``be``;
    returns (device state, converged).  ``options``: ``batch_arcs`` and ``settings`` (a
    :class:`~.cpu_bsp.BspSettings` for ``bsp``'s direction switch)
    of :func:`digraph.dispatch.engines.one_gpu.solve`."""
    fam = system.family
    if fam == "hindex":
        return hindex(be, graph, mode == "bsp", max_iter, stats)
    if fam == "linear":
        batch_arcs = options.get("batch_arcs")
        if mode == "bsp" and (batch_arcs or too_big(be, graph)):
            return linear_streamed(be, graph, system, tol, max_iter, stats,
                                   int(batch_arcs or auto_batch(be, graph)))
        return solve_linear(be, graph, system, tol, max_iter, stats, mode == "bsp",
                            settings=options.get("settings"))
    if mode == "vertex-async":  # the worklist kept on the GPU
        from .gpu_worklist import solve as worklist
        return worklist(be, graph, system, resident_graph(be, graph), max_iter=max_iter,
                        stats=stats)
    return monotone_bsp(be, graph, system, max_iter, stats)
