"""What every placement's runner shares: the :class:`Request` it receives, the CPU engines by
mode, and the steps around a solve (the dual rescaling, compile time moved apart, the PathSet,
the priority)."""

from dataclasses import dataclass, field

from ... import compiling
from ...errors import InvalidParameterError
from ..route.modes import pathset_key

__all__ = ["Request", "cpu_solver", "solve_dual_or", "move_compile", "pathset", "priority"]


@dataclass
class Request:
    """One run as the router planned it, handed to a placement's runner.

    Attributes
    ----------
    graph : digraph.Graph
        The graph the engine solves (the part the constant term reaches, when restricted).
    algo : digraph.algorithms.Algorithm
    system : LinearSystem, MonotoneSystem or HIndexSystem
    plan : digraph.dispatch.route.plans.Plan
        Mode, engine and placement (:attr:`~digraph.dispatch.route.plans.Plan.placement`).
    tol, max_iter : float, int
    stats : digraph.RunStats
        Filled by the runner: the engine's counters, ``time_compile``, ``time_preprocess``,
        ``time_compute``.
    options : dict
        The options of :func:`digraph.run` that only some engines take (``priority``,
        ``cache``, ``preprocess``, ``short_path_push``, ``layer_window``, ``batch_arcs``), None
        when not given.
    """

    graph: object
    algo: object
    system: object
    plan: object
    tol: float
    max_iter: int
    stats: object
    options: dict = field(default_factory=dict)

    @property
    def mode(self):
        return self.plan.mode

    def option(self, name):
        return self.options.get(name)


def cpu_solver(mode):
    """The CPU engine of ``mode``: its ``solve(graph, system, *, tol, max_iter, stats, ...)``
    (:mod:`digraph.dispatch.engines.registry`)."""
    from .registry import find
    return find(mode, "cpu").load()


def move_compile(stats, c0, key):
    """Move the seconds Numba compiled since ``c0`` (:func:`digraph.compiling.seconds`) from
    ``stats[key]`` to ``time_compile``: a kernel first called mid-phase is compilation, not work."""
    c = compiling.seconds() - c0
    if c > 0.0:
        c = min(c, stats[key])
        stats[key] -= c
        stats["time_compile"] += c


def solve_dual_or(solve, graph, system, tol, max_iter, stats, extra):
    """``solve``, on the system rescaled by its dual weights when its columns may sum to 1 or more
    (adsorption: :mod:`digraph.dispatch.dual_bound`; the weights and the final certificate are
    computed on the host)."""
    if system.family == "linear" and not system.normalize:
        from ..convergence import quick_contraction
        from ..dual_bound import solve_scaled
        gammas = quick_contraction(graph, system)
        out = solve_scaled(solve, graph, system, gammas, tol=tol, max_iter=max_iter, stats=stats,
                           **extra)
        if out is not None:
            return out
        import copy
        system = copy.copy(system)  # the caller's system stays as it was
        system.error_gammas = gammas  # summed once: the engine need not pass over the arcs again
    return solve(graph, system, tol=tol, max_iter=max_iter, stats=stats, **extra)


def priority(mode, given):
    """The priority a path mode (or ``scc``) runs with: ``given``, checked, or the mode's
    default."""
    from .path.settings import PRIORITIES
    if mode == "path-nopriority":
        if given not in (None, "none"):
            raise InvalidParameterError(f"mode='path-nopriority' runs without priority, "
                                        f"got priority={given!r}")
        return "none"
    if given is None:
        return "pending"
    allowed = ("pending", "none") if mode == "scc" else PRIORITIES
    if given not in allowed:
        raise InvalidParameterError(f"mode={mode!r} takes priority {', '.join(allowed)}, "
                                    f"got {given!r}")
    return given


def pathset(graph, cache, params):
    """The PathSet of a path-mode run: from the cache folder ``cache``, else built once per graph
    and ``preprocess=`` parameters and kept with the graph (``jobs`` does not change it), so that
    a later run neither builds it nor uploads its device arrays again."""
    from ...preprocess import load_or_build, preprocess
    params = dict(params or {})
    if cache is not None:
        return load_or_build(graph, cache, **params)
    key = pathset_key(params)
    ps = graph._cache.get(key)
    if ps is None:
        ps = graph._cache[key] = preprocess(graph, **params)
    return ps
