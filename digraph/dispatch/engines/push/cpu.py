"""The push modes on CPU threads, and the hand-over between them.

:func:`solve_bsp` and :func:`solve_vertex_async` run ``bsp`` (:mod:`~.cpu_bsp`) and ``vertex-async``
(:mod:`~.cpu_vertex_async`) on every family.  On a linear system a run whose bound stops falling
goes on, once, in the mode its engine's
:attr:`~digraph.dispatch.engines.registry.Engine.after_stall` names, from the state it reached
(:func:`digraph.dispatch.driver.hand_over` records it in ``stats``): Jacobi rounds that stall are
finished by in-place pushes, and pushes that stall by Jacobi rounds.  :func:`finish_linear` is
that ending for the engines that hand a linear run over to ``vertex-async`` (``scc``, the path
modes).
"""

from ... import driver
from ..registry import find
from . import cpu_bsp, cpu_vertex_async

__all__ = ["solve_bsp", "solve_vertex_async", "finish_linear"]

_SOLVERS = {"bsp": cpu_bsp.solve, "vertex-async": cpu_vertex_async.solve}


def _solve(mode, graph, system, tol, max_iter, stats, settings=None, x0=None, delta0=None):
    """``mode`` from ``x0``/``delta0`` (None: from the start); a stalled linear run goes on, once,
    in its engine's ``after_stall`` mode from the state it reached."""
    then = find(mode, "cpu").after_stall

    def stalled(x, delta):
        driver.hand_over(stats, then, f"{mode}'s bound stopped falling")
        return _SOLVERS[then](graph, system, tol=tol, max_iter=max_iter, stats=stats, x0=x,
                              delta0=delta)
    return _SOLVERS[mode](graph, system, tol=tol, max_iter=max_iter, stats=stats,
                          settings=settings, x0=x0, delta0=delta0, on_stall=stalled)


def solve_bsp(graph, system, *, tol, max_iter, stats, settings=None):
    """``bsp`` (:func:`~.cpu_bsp.solve`), a stalled linear run finished by ``vertex-async``;
    returns (state, converged)."""
    return _solve("bsp", graph, system, tol, max_iter, stats, settings)


def solve_vertex_async(graph, system, *, tol, max_iter, stats, settings=None):
    """``vertex-async`` (:func:`~.cpu_vertex_async.solve`), a stalled linear run finished by
    ``bsp``; returns (state, converged)."""
    return _solve("vertex-async", graph, system, tol, max_iter, stats, settings)


def finish_linear(graph, system, tol, max_iter, stats, *, x0, delta0):
    """Finish a linear run another engine handed over (``scc``, the path modes): push passes from
    the state ``x0`` with residual ``delta0``, a stall there finished by ``bsp``; returns
    (state, converged)."""
    return _solve("vertex-async", graph, system, tol, max_iter, stats, x0=x0, delta0=delta0)
