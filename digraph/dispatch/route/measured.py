"""The automatic choices that the times measured on a graph settle, where the estimates are
unsure (:mod:`digraph.dispatch.route`): a power probe's close verdict, and a system without the
rank-one term on a giant component.  Each engine's seconds are kept on the graph by
:func:`.estimates.record` and read by :func:`.estimates.timed` (the least of an engine's runs
after its first, once there are :data:`.estimates.TIMED_RUNS` of them)."""

from .probe import JUDGED, NOISE

__all__ = ["candidate", "share_words", "judged_close", "probe_measured", "giant_measured"]


def candidate(engine, test, value, threshold, held):
    """One engine the automatic choice considered: the test that decides it, the graph's value,
    the threshold (a :class:`RouteSettings` field), and whether the test held."""
    return {"engine": engine, "test": test, "value": value, "threshold": threshold,
            "held": bool(held)}


def share_words(share, bound=False):
    """The share of the arcs in the largest component (or its bound), in words."""
    if bound:
        return f"at most {share:.0%} of the arcs can lie in one component (one-pass bound)"
    return f"the largest component holds {share:.0%} of the arcs"


def judged_close(graph, settings):
    """Whether the probe's judge found the power iteration and the other engine within
    :attr:`RouteSettings.probe_measure_band` of each other (:data:`.probe.JUDGED`), the band
    widened by the spread of the probe's round times (:data:`.probe.NOISE`)."""
    ratio = graph._cache.get(JUDGED)
    band = settings.probe_measure_band * graph._cache.get(NOISE, 1.0)
    return ratio is not None and 1.0 / band <= ratio <= band


def probe_measured(graph, system, threads, chosen, code, reason, pick, settings, scc_settings,
                    considered):
    """(mode, code, reason, timing) of PageRank on a graph where a power probe's judge has
    decided (``chosen``, ``code``, ``reason``: what it decided) and found the two engines
    close (:func:`judged_close`).  The verdict rests on estimates (the rate of a few
    accelerated rounds, the other engine's modelled cost), so there the run time has the last
    word: the engine the probe chose runs until it is timed on the
    graph (:func:`.estimates.timed`: two runs after its first), then the other (the
    power iteration without a probe, or the engine :func:`.estimates.choose` picks), and later
    runs take the faster measured."""
    from .estimates import choose, seconds_key, settle, stopped, timed
    key = seconds_key(threads, True)
    seen = timed(graph, key)
    if pick is None:
        pick = choose(graph, system, threads, settings, scc_settings)
    other = pick.mode if chosen == "power" else "power"
    test = "seconds measured on this graph"
    considered += [candidate(f"cpu-{m}", test, float(seen[m]), None, False)
                   for m in ("power", pick.mode) if m in seen]
    mode, state, words = settle(seen, chosen, other, cut=stopped(graph, key))
    if state is None:
        return chosen, code, f"{reason}; the next runs time {other} too", key
    if state == "measured":
        for c in considered:
            if c["test"] == test:
                c["held"] = c["engine"] == f"cpu-{mode}"
        words = "then " + words
    return mode, state, f"{reason}; {words}", key


def giant_measured(graph, threads, giant, settings, first="bsp"):
    """(mode, code, reason, timing) of a system without the rank-one term on a giant component,
    where neither the SCC engine nor ``bsp`` wins on every class: ``first`` (the lower of
    their estimates for the thread count, :func:`.estimates.choose`) until it is timed on the
    graph, then the other, and later runs take the faster measured."""
    from .estimates import seconds_key, settle, stopped, timed
    key = seconds_key(threads, False)
    seen = timed(graph, key)
    head = f"{share_words(*giant)} (>= {settings.bsp_share:.0%})"
    other = "scc" if first == "bsp" else "bsp"
    mode, state, words = settle(seen, first, other, cut=stopped(graph, key))
    if state is not None:
        return mode, state, f"{head}: {words}", key
    return first, f"giant-component-{first}", (
        f"{head}: a system without the rank-one term, where the SCC engine and bsp each win on "
        f"some classes; {first} first, its estimate the lower on {threads} thread"
        f"{'s' * (threads != 1)}, and the next runs time {other} too"), key
