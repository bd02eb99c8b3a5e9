"""The SCC engine or ``bsp`` for a linear system on CPU threads: by the engines' estimates
(:attr:`~digraph.dispatch.engines.registry.Engine.estimate`), and, where the two lie within
:attr:`~.settings.RouteSettings.measure_band` of each other, by the seconds measured on the
graph (:func:`record`; an engine's first run there is not timed): the model decides what it
can, the run time what it cannot."""

from dataclasses import dataclass

from ..engines.registry import find

__all__ = ["Choice", "choose", "record", "settle", "shape", "seconds_key"]

_MODES = ("scc", "bsp")
_SECONDS = "cpu-linear-seconds"
"""Key of ``graph._cache``: ``(_SECONDS, threads, normalised) → {"runs": {mode: runs},
"seconds": {mode: seconds}}``, the runs of each engine a choice within the band made and the
fastest of them but its first (which pays what an engine builds on first use: its kernels'
compilation when Numba's cache lacks them, its split plans)."""


@dataclass(frozen=True)
class Choice:
    """``mode`` (``"scc"`` or ``"bsp"``), ``code`` (``"estimated"``, ``"measuring"`` or
    ``"measured"``), ``reason`` (a clause), ``timing`` (the key under which the run records its
    seconds, or None when the estimates alone decide) and the ``considered`` candidates."""

    mode: str
    code: str
    reason: str
    timing: tuple = None
    considered: tuple = ()


def shape(graph, threads, scc_settings=None):
    """What the CPU estimates read of ``graph`` on ``threads`` threads: ``arcs``, ``threads``
    and ``split_share``, the share of the arcs in the components the SCC engine splits over the
    threads (:func:`~digraph.dispatch.engines.scc.cpu.splits`, under
    :class:`~digraph.dispatch.engines.scc.cpu.DagPushSettings`, default its ``DEFAULT``).
    The condensation is built (and kept for the SCC engine) only when a component can be split:
    two threads or more, and at least ``split_arcs`` arcs."""
    from ..settings import current
    from ..engines.scc import cpu as scc_cpu
    scc_settings = current(scc_cpu.DEFAULT) if scc_settings is None else scc_settings
    m = graph.num_arcs
    if threads <= 1 or m < scc_settings.split_arcs:
        return {"arcs": m, "threads": int(threads), "split_share": 0.0}
    key = ("split-share", scc_settings.split_arcs, int(threads), scc_settings.split_thread_cost,
           scc_settings.split_cross_cost)
    share = graph._cache.get(key)
    if share is None:
        from ...paths.condensation import condensation_for
        cond = condensation_for(graph)[0]
        split = scc_cpu.splits(cond, int(threads), scc_settings)
        share = graph._cache[key] = float(cond.comp_arcs[split].sum()) / m
    return {"arcs": m, "threads": int(threads), "split_share": share}


def choose(graph, system, threads, settings, scc_settings=None):
    """The :class:`Choice` between the SCC engine and ``bsp`` for a linear ``system`` on
    ``threads`` CPU threads, under ``settings`` (a :class:`~.settings.RouteSettings`)."""
    s = shape(graph, threads, scc_settings)
    est = {m: find(m, "cpu").load("estimate")(s, settings) for m in _MODES}
    model = min(_MODES, key=lambda m: est[m].cost)
    other = _MODES[1 - _MODES.index(model)]
    considered = [{"engine": f"cpu-{m}", "test": "estimated cost (one thread's passes over the "
                   "arcs)", "value": float(est[m].cost),
                   "threshold": float(est[_MODES[1 - i]].cost), "held": m == model}
                  for i, m in enumerate(_MODES)]
    why = f"{model}'s estimate is the lower (the SCC engine's: {est['scc'].reason})"
    if est[other].cost > settings.measure_band * est[model].cost:
        return Choice(model, "estimated", why, None, tuple(considered))
    key = seconds_key(threads, getattr(system, "normalize", False))
    seen = graph._cache.get(key, {}).get("seconds", {})
    considered += [{"engine": f"cpu-{m}", "test": "seconds measured on this graph",
                    "value": float(seen[m]), "threshold": None, "held": False}
                   for m in _MODES if m in seen]
    within = f"the estimates lie within {settings.measure_band:g}x of each other"
    mode, state, words = settle(seen, model, other)
    if state == "measured":
        for c in considered[2:]:
            c["held"] = c["engine"] == f"cpu-{mode}"
    if state is not None:
        return Choice(mode, state, f"{within}; {words}", key, tuple(considered))
    return Choice(model, "estimated", f"{why}; {within}, so the next runs time the two on "
                  "this graph", key, tuple(considered))


def settle(seen, first, second):
    """Which of two engines runs, by the seconds ``seen`` measured on the graph (:func:`record`;
    ``{mode: seconds}``): ``(mode, state, words)``, the faster once both are timed (state
    ``"measured"``), ``second`` once ``first`` is (``"measuring"``), else ``first`` (state and
    words None)."""
    if first in seen and second in seen:
        fast, slow = (first, second) if seen[first] <= seen[second] else (second, first)
        return fast, "measured", (f"{fast} was the faster measured on this graph "
                                  f"({seen[fast] * 1e3:.3g} ms against "
                                  f"{seen[slow] * 1e3:.3g})")
    if first in seen:
        return second, "measuring", (f"{first} was timed on this graph, so {second} runs until "
                                     "it is too")
    return first, None, None


def seconds_key(threads, normalised):
    """The ``graph._cache`` key under which runs on ``threads`` threads record their seconds
    (:func:`record`), per kind of system (normalised or not)."""
    return (_SECONDS, int(threads), bool(normalised))


def record(graph, key, mode, seconds):
    """Count a run of ``mode`` under ``key`` (a :attr:`Choice.timing`), and keep its
    ``seconds`` when it is not the engine's first run there and the fastest yet."""
    seen = graph._cache.setdefault(key, {"runs": {}, "seconds": {}})
    runs = seen["runs"][mode] = seen["runs"].get(mode, 0) + 1
    if runs > 1:
        seen["seconds"][mode] = min(seconds, seen["seconds"].get(mode, seconds))
