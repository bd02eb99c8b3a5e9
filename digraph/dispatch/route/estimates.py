"""The SCC engine, ``bsp`` or (normalised systems where no power probe runs) the power
iteration for a linear system on CPU threads: by the engines' estimates
(:attr:`~digraph.dispatch.engines.registry.Engine.estimate`), and, where others lie within
:attr:`~.settings.RouteSettings.measure_band` of the lowest (the power iteration's within
:attr:`~.settings.RouteSettings.power_band`: its estimate is the cruder), by the seconds
measured on the graph (:func:`record`, :func:`timed`: an engine's first run there is not
timed, and the least of its next :data:`TIMED_RUNS` counts): the model decides what it can, the
run time what it cannot."""

from dataclasses import dataclass

from ..engines.registry import find

__all__ = ["Choice", "choose", "record", "timed", "stopped", "explore_cap", "settle", "shape",
           "seconds_key", "TIMED_RUNS"]

_MODES = ("scc", "bsp")
_SECONDS = "cpu-linear-seconds"
"""Key of ``graph._cache``: ``(_SECONDS, threads, normalised) → {"runs": {mode: runs},
"seconds": {mode: seconds}}``, the runs of each engine a choice within the band made and the
fastest of them but its first (which pays what an engine builds on first use: its kernels'
compilation when Numba's cache lacks them, its split plans)."""


@dataclass(frozen=True)
class Choice:
    """``mode`` (``"scc"``, ``"bsp"`` or ``"power"``), ``code`` (``"estimated"``,
    ``"measuring"`` or ``"measured"``), ``reason`` (a clause), ``timing`` (the key under which
    the run records its seconds, or None when the estimates alone decide), the ``considered``
    candidates and ``model``, the candidate of the lowest estimate."""

    mode: str
    code: str
    reason: str
    timing: tuple = None
    considered: tuple = ()
    model: str = None


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


def choose(graph, system, threads, settings, scc_settings=None, power=False):
    """The :class:`Choice` between the SCC engine and ``bsp`` (and the power iteration when
    ``power``) for a linear ``system`` on ``threads`` CPU threads, under ``settings`` (a
    :class:`~.settings.RouteSettings`)."""
    modes = _MODES + (("power",) if power else ())
    key = ("estimates", int(threads), settings, scc_settings, modes)
    kept = graph._cache.get(key)  # the estimates read only the graph's shape and the settings
    if kept is None:
        s = shape(graph, threads, scc_settings)
        est = {m: find(m, "cpu").load("estimate")(s, settings) for m in modes}
        order = sorted(modes, key=lambda m: est[m].cost)  # stable: ties keep the modes' order
        kept = graph._cache[key] = (est, order, tuple(
            {"engine": f"cpu-{m}", "test": "estimated cost (one thread's passes over the arcs)",
             "value": float(est[m].cost),
             "threshold": float(min(est[o].cost for o in modes if o != m)),
             "held": m == order[0]} for m in modes))
    est, order, considered = kept[0], kept[1], [dict(c) for c in kept[2]]
    model = order[0]
    why = f"{model}'s estimate is the lowest (the SCC engine's: {est['scc'].reason})"

    def band(m):
        return settings.power_band if "power" in (m, model) else settings.measure_band
    close = [model] + [m for m in order[1:] if est[m].cost <= band(m) * est[model].cost]
    if len(close) == 1:
        return Choice(model, "estimated", why, None, tuple(considered), model)
    key = seconds_key(threads, getattr(system, "normalize", False))
    seen = timed(graph, key)
    considered += [{"engine": f"cpu-{m}", "test": "seconds measured on this graph",
                    "value": float(seen[m]), "threshold": None, "held": False}
                   for m in close if m in seen]
    within = (f"the estimates of {', '.join(close)} lie within "
              f"{max(band(m) for m in close[1:]):g}x of the lowest")
    mode, state, words = settle(seen, *close, cut=stopped(graph, key))
    if state == "measured":
        for c in considered[len(modes):]:
            c["held"] = c["engine"] == f"cpu-{mode}"
    if state is not None:
        return Choice(mode, state, f"{within}; {words}", key, tuple(considered), model)
    return Choice(model, "estimated", f"{why}; {within}, so the next runs time them on this "
                  "graph", key, tuple(considered), model)


def settle(seen, first, *others, cut=frozenset()):
    """Which of two engines or more runs, by the seconds ``seen`` measured on the graph
    (:func:`timed`; ``{mode: seconds}``; those in ``cut`` stopped there, :func:`stopped`, and
    slower than those timed to the end): ``(mode, state, words)``, the fastest once all are
    timed (state ``"measured"``), the first not yet timed once ``first`` is (``"measuring"``),
    else ``first`` (state and words None)."""
    modes = (first,) + others
    cut = frozenset(cut) & set(modes)
    if all(m in seen for m in modes):  # a stopped engine is slower than every one timed
        fast = min(modes, key=lambda m: (m in cut and len(cut) < len(modes), seen[m]))
        rest = ", ".join(f"{m}'s {'over ' if m in cut else ''}{seen[m] * 1e3:.3g}"
                         for m in modes if m != fast)
        return fast, "measured", (f"{fast} was the faster measured on this graph "
                                  f"({seen[fast] * 1e3:.3g} ms against {rest})")
    if first in seen:
        timed = [m for m in modes if m in seen]
        nxt = next(m for m in modes if m not in seen)
        return nxt, "measuring", (f"{' and '.join(timed)} {'was' if len(timed) == 1 else 'were'}"
                                  f" timed on this graph, so {nxt} runs until it is too")
    return first, None, None


def seconds_key(threads, normalised):
    """The ``graph._cache`` key under which runs on ``threads`` threads record their seconds
    (:func:`record`), per kind of system (normalised or not)."""
    return (_SECONDS, int(threads), bool(normalised))


TIMED_RUNS = 2
"""Runs of an engine on a graph, beyond its first, whose seconds (the least of them) make it
timed there (:func:`timed`).  One run can be slowed by what ran just before it (threads woken
after a one-thread task left them asleep, a collection), and a choice once measured is kept:
the least of two keeps one slow run from deciding."""


def record(graph, key, mode, seconds, stopped=False):
    """Count a run of ``mode`` under ``key`` (a :attr:`Choice.timing`), and keep its
    ``seconds`` when it is not the engine's first run there and the fastest yet.  A run
    ``stopped`` at the cap of :attr:`~.settings.RouteSettings.explore_cap` makes the engine
    timed at once, its ``seconds`` (those it ran, fewer than it needs) kept as its time."""
    seen = graph._cache.setdefault(key, {"runs": {}, "seconds": {}})
    if stopped:
        seen["runs"][mode] = max(seen["runs"].get(mode, 0), TIMED_RUNS) + 1
        seen["seconds"][mode] = seconds
        seen.setdefault("stopped", set()).add(mode)
        return
    runs = seen["runs"][mode] = seen["runs"].get(mode, 0) + 1
    if runs > 1:
        seen["seconds"][mode] = min(seconds, seen["seconds"].get(mode, seconds))


def stopped(graph, key):
    """The engines whose timing run under ``key`` was stopped at the cap (:func:`record`)."""
    return frozenset(graph._cache.get(key, {}).get("stopped", ()))


def explore_cap(graph, key, mode, settings):
    """``(seconds, fastest)``: how long a run of ``mode`` that the measured choice times under
    ``key`` may take before it stops (:attr:`~.settings.RouteSettings.explore_cap` times the
    fastest other engine timed there) and that engine; None when no other is timed."""
    others = {m: t for m, t in timed(graph, key).items() if m != mode}
    if not others:
        return None
    fast = min(others, key=others.get)
    return settings.explore_cap * others[fast], fast


def timed(graph, key):
    """``{mode: seconds}`` of the engines timed on ``graph`` under ``key``: those with
    :data:`TIMED_RUNS` runs beyond their first, each with the least of their seconds."""
    seen = graph._cache.get(key)
    if not seen:
        return {}
    return {m: t for m, t in seen["seconds"].items() if seen["runs"][m] > TIMED_RUNS}
