"""The router: which engine runs a request, and why (issue 17, item 1).

:func:`route` takes the algorithm's family, the mode asked for (``None``: automatic), the device
and the options given, and returns a :class:`Plan` naming the mode that will run, the engine that
runs it and the reason.  ``digraph.run`` follows the plan and records it in ``stats``
(``mode``, ``engine``, ``route``, ``requested_mode``).  A named mode runs that mode or raises
:class:`~digraph.errors.InvalidParameterError` naming what does not fit; only ``mode=None`` lets
the router choose.  No engine calls the router back.

Modes
-----
``"scc"``
    Linear systems, CPU: the graph's strongly connected components solved one after another in
    the order of their DAG, one residual per vertex (:mod:`digraph.dispatch.dag_push`); no paths
    are built.  The CPU default for linear algorithms.
``"power"``
    Normalised linear systems (PageRank), CPU: the Google-matrix power iteration, with the
    rank-one dangling/teleport term (:mod:`digraph.dispatch.power`).
``"path"``, ``"path-nopriority"``
    DiGraph: paths walked one per thread, SCC-vertices of the DAG sketch in layer order, with or
    without priority (:mod:`digraph.dispatch.paths`, :mod:`digraph.dispatch.gpu`); they need the
    PathSet (``cache=``, ``preprocess=``).  Directed dependencies only: not k-core.
``"vertex-async"``, ``"bsp"``
    Vertex worklists with atomic pushes (DiGraph-t, Groute-like), and bulk-synchronous rounds over
    a frontier (Gunrock-like).

Automatic choice (``mode=None``), each from a measurement in ``docs/benchmarks.md``:

* CPU, normalised linear (PageRank): ``"power"`` when the largest component holds at least
  :data:`POWER_SHARE` of the arcs, else as below.
* CPU, linear: ``"scc"``, except with at least :data:`~digraph.dispatch.dag_push.DELEGATE_THREADS`
  threads on a graph whose components too large for one thread hold more than
  :data:`~digraph.dispatch.dag_push.DELEGATE_SHARE` of the arcs (one giant component: nothing for
  the DAG to order), where ``"bsp"``'s dense rounds scale better.
* CPU, min/max (SSSP) and k-core: ``"vertex-async"``.
* GPU, linear: ``"bsp"``; min/max and k-core: ``"vertex-async"``.
"""

from dataclasses import dataclass

from ..errors import InvalidParameterError

__all__ = ["Plan", "route", "MODES", "PATH_MODES", "POWER_SHARE"]

MODES = ("scc", "power", "path", "path-nopriority", "vertex-async", "bsp")

POWER_SHARE = 0.85
"""Automatic choice for normalised linear systems (PageRank) on the CPU: the mass-preserving power
iteration (``"power"``) when the largest strongly connected component holds at least this share of
the arcs (nothing much for the DAG to order, and the rank-one term makes the error fall at
α·|λ2| a round).  Measured at tol 1e-8 on 2 quiet cores (docs/benchmarks.md, "PageRank: two
formulations"): R-MAT 2^18 and 2^20 (98% of the arcs in the largest component) 12 power rounds,
165 and 713 ms, against the SCC engine's 1,216 and 5,725 ms; dblp-2010 (89%) 609 ms against 666
(on the shared 2-core machine 299 against 273: the crossover lies near 89%); cnr-2000 (51%)
and wiki-Vote (38%) stay with the SCC engine (cnr-2000: 309 ms against 852)."""
PATH_MODES = ("path", "path-nopriority")

_CPU_DEFAULT = {"linear": "scc", "monotone": "vertex-async", "hindex": "vertex-async"}
_GPU_DEFAULT = {"linear": "bsp", "monotone": "vertex-async", "hindex": "vertex-async"}
_WHY_DEFAULT = {
    ("cpu", "linear"): "the SCC engine is the fastest measured for sums on the CPU "
                       "(cnr-2000: 0.21x bsp's arc updates)",
    ("cpu", "monotone"): "vertex-async is the fastest measured for min/max systems (2-3x bsp)",
    ("cpu", "hindex"): "vertex-async is the fastest measured for k-core",
    ("gpu", "linear"): "dense bsp rounds are the fastest measured for sums on GPUs",
    ("gpu", "monotone"): "vertex-async is the fastest measured for min/max systems on GPUs",
    ("gpu", "hindex"): "vertex-async is the fastest measured for k-core on GPUs",
}


@dataclass(frozen=True)
class Plan:
    """What will run: ``mode`` (one of :data:`MODES`), ``engine`` (``"<where>-<mode>"``, e.g.
    ``"cpu-scc"``, ``"gpu-bsp"``, ``"multi-gpu-path"``), ``reason`` (one sentence) and the mode
    asked for (``requested``; None when automatic)."""

    mode: str
    engine: str
    reason: str
    requested: str = None

    def record(self, stats):
        """Write the plan into a run's ``stats``."""
        stats["mode"] = self.mode
        stats["engine"] = self.engine
        stats["route"] = self.reason
        stats["requested_mode"] = self.requested


def check_mode(mode):
    """``mode`` checked (None stays None: automatic)."""
    if mode is None:
        return None
    if mode not in MODES:
        raise InvalidParameterError(f"unknown mode {mode!r}; modes: {', '.join(MODES)} (or None: automatic)")
    return mode


def route(family, mode, device, *, threads=1, graph=None, path_options=(), system=None):
    """The :class:`Plan` for a run.

    Parameters
    ----------
    family : {"linear", "monotone", "hindex"}
    mode : str or None
        The mode asked for (checked), or None for the automatic choice.
    device : str
        ``"cpu"``, ``"cuda[:N]"`` or ``"cuda:0,1,..."``.
    threads : int
        CPU threads the run will use.
    graph : digraph.Graph, optional
        Needed for the automatic choice of a linear CPU run with many threads (its condensation).
    path_options : iterable of str
        Names of the options given that only the path modes take (``cache``, ``preprocess``,
        ``priority``, ...): with ``mode=None`` they are refused, not taken as a hint.
    system : LinearSystem, optional
        The system (the automatic choice of ``"power"`` needs it, with ``graph``).

    Raises
    ------
    InvalidParameterError
        A mode that does not apply to the family or the device, or path options without a path mode.
    """
    mode = check_mode(mode)
    where = "cpu" if device == "cpu" else ("multi-gpu" if "," in device else "gpu")
    path_options = sorted(path_options)
    if mode is None:
        if path_options:
            raise InvalidParameterError(
                f"{_apply(path_options)} to the path modes, which walk the PathSet; pass mode='path' to "
                "run one (the automatic choice does not change engine because of an option)")
        chosen = (_CPU_DEFAULT if where == "cpu" else _GPU_DEFAULT)[family]
        reason = _WHY_DEFAULT[("cpu" if where == "cpu" else "gpu", family)]
        if chosen == "scc" and graph is not None:
            power, share = _power(graph, system)
            delegate = None if power else _delegation(graph, threads)
            if power:
                chosen, reason = "power", power
            elif delegate:
                chosen, reason = "bsp", delegate
            elif share is not None:
                reason += (f"; the largest component holds {share:.0%} of the arcs (< {POWER_SHARE:.0%}: "
                           "the DAG orders the rest)")
        return Plan(chosen, f"{where}-{chosen}", f"automatic: {reason}", None)
    if mode == "scc":
        if family != "linear":
            raise InvalidParameterError(
                f"mode='scc' solves linear systems (PageRank, adsorption, a LinearSystem), not the "
                f"{family} family; use 'vertex-async', 'bsp' or a path mode")
        if where != "cpu":
            raise InvalidParameterError("mode='scc' runs on the CPU; on GPUs use 'bsp', 'vertex-async' "
                                        "or a path mode")
    if mode == "power":
        if where != "cpu":
            raise InvalidParameterError("mode='power' runs on the CPU (the GPU twin is not built yet); on "
                                        "GPUs use 'bsp'")
        if system is not None:
            from .power import applies
            why = applies(graph, system) if graph is not None else None
            if why:
                raise InvalidParameterError(f"mode='power' cannot run this system: {why}")
        elif family != "linear":
            raise InvalidParameterError(f"mode='power' answers normalised linear systems, not the {family} family")
    if mode in PATH_MODES and family == "hindex":
        raise InvalidParameterError(
            f"mode={mode!r} walks directed paths, but k-core depends on in- and out-neighbours alike: "
            "no DAG orders it; use 'vertex-async' (the default) or 'bsp'")
    if path_options and mode not in PATH_MODES:
        raise InvalidParameterError(f"{_apply(path_options)} to the path modes, not mode={mode!r}")
    return Plan(mode, f"{where}-{mode}", "asked for", mode)


def _apply(options):
    """``"cache= applies"`` / ``"cache=, layer_window= apply"``."""
    return f"{', '.join(o + '=' for o in options)} appl{'ies' if len(options) == 1 else 'y'}"


def _power(graph, system):
    """(reason, share): the reason to run the power iteration instead of ``scc`` (a giant
    component) or None, and the largest component's share of the arcs (None when not looked at)."""
    if system is None or not graph.num_arcs:
        return None, None
    from .power import applies
    if applies(graph, system):
        return None, None
    from ..paths.condensation import condensation_for
    cond = condensation_for(graph)[0]
    share = float(cond.comp_arcs.max()) / graph.num_arcs if cond.num_components else 0.0
    if share < POWER_SHARE:
        return None, share
    return (f"the largest component holds {share:.0%} of the arcs (>= {POWER_SHARE:.0%}): nothing much "
            "for the DAG to order, and the Google-matrix iteration's error falls at alpha*|lambda2| a round"), share


def _delegation(graph, threads):
    """The reason to run ``bsp`` instead of ``scc`` (many threads, one giant component), or None."""
    from . import dag_push
    if threads < dag_push.DELEGATE_THREADS or not graph.num_arcs:
        return None
    from ..paths.condensation import condensation_for
    cond = condensation_for(graph)[0]
    split = cond.comp_arcs >= dag_push.SPLIT_ARCS
    giant = int(cond.comp_arcs[split].sum())
    if giant <= dag_push.DELEGATE_SHARE * graph.num_arcs:
        return None
    return (f"{giant / graph.num_arcs:.0%} of the arcs lie in components split over {threads} threads "
            "(one giant component: nothing for the DAG to order), where bsp's dense rounds scale better")
