"""The CPU power probe of automatic PageRank: whether to start it (:func:`power_decision`), its
judge once it trips (:func:`probe_judge`), and the plan after a hand-over (:func:`after_probe`).
The rules are in the text of :mod:`digraph.dispatch.route`."""

from ..settings import current
from .estimates import choose
from .plans import Plan
from .settings import DEFAULT

__all__ = ["power_decision", "probe_judge", "after_probe", "TRIPPED", "CONTINUED", "JUDGED",
           "NOISE"]


def power_decision(graph, system, settings):
    """(decision, share, is_bound): ``"probe"`` when the power iteration should start as a probe
    (the largest component may hold ``settings.power_share`` of the arcs), ``"small"`` below
    ``settings.probe_min_arcs`` arcs (no probe), else None; the largest
    component's share of the arcs or its one-pass bound (None when not looked at); whether it is
    the bound."""
    if system is None or not graph.num_arcs:
        return None, None, False
    from ..engines.power.cpu import applies
    if applies(graph, system):
        return None, None, False
    if TRIPPED in graph._cache:
        return "tripped", None, False
    if CONTINUED in graph._cache:
        return "continued", None, False
    if graph.num_arcs < settings.probe_min_arcs:
        return "small", None, False
    from ...paths.condensation import cached_condensation, largest_share_bound
    cond = cached_condensation(graph)
    if cond is None:
        share, is_bound = largest_share_bound(graph), True
    else:
        kept = graph._cache.get(_SHARE)
        if kept is None or kept[0] is not cond:
            kept = graph._cache[_SHARE] = (cond, float(cond.comp_arcs.max()) / graph.num_arcs
                                           if cond.num_components else 0.0)
        share, is_bound = kept[1], False
    return ("probe" if share >= settings.power_share else None), share, is_bound


_SHARE = ("largest_component_share",)
"""Key of ``graph._cache``: (condensation, the share of the arcs its largest component holds)."""


TRIPPED = ("power_probe_tripped",)
"""Key of ``graph._cache``: (ratio, round) of a probe that tripped on the graph.  Kept per graph,
not per system: |λ2| = α whenever the graph has two or more closed components, whatever the
teleport vector or the arc weights (Haveliwala and Kamvar, "The second eigenvalue of the Google
matrix", 2003)."""


NOISE = ("power_probe_noise",)
"""Key of ``graph._cache``: the spread of the judged probe's round times, capped
(:attr:`RouteSettings.probe_noise_cap`), by which :func:`.measured.judged_close` widens its
band."""


CONTINUED = ("power_probe_continued",)
"""Key of ``graph._cache``: the words of a probe whose judge let the power iteration go on
(:func:`probe_judge`); later runs on the graph run it without a probe."""


JUDGED = ("power_probe_judged",)
"""Key of ``graph._cache``: the judge's last ratio of the power iteration's estimated time left
(times :attr:`RouteSettings.probe_margin`) to the other engine's (:func:`probe_judge`); within
:attr:`RouteSettings.probe_measure_band` of 1, later runs time the two engines on the graph."""


def probe_judge(graph, system, threads, tol, settings=None, scc_settings=None):
    """The :class:`~digraph.dispatch.driver.Judge` of an automatic power probe on the CPU, or
    None when :attr:`RouteSettings.probe_judge_rounds` is 0 (hand over as soon as it trips).

    Its verdict, from the probe's :class:`~digraph.dispatch.driver.Measure`: the rounds left
    ``log(bound / tol) / log(1 / rate)`` at the judged rounds' seconds, against the faster of
    the SCC engine and ``bsp`` by their estimates (:mod:`.estimates`): the rounds of the linear
    system without the rank-one term, ``log(tol (1 − γ1) / 2) / log(γ1)`` (its error falls by
    about γ1 a round), each :attr:`RouteSettings.bsp_round_cost` plain power rounds, times that
    engine's estimate over ``bsp``'s.  Power goes on when its time left, times
    :attr:`RouteSettings.probe_margin`, is the lower; a verdict to go on is kept on the graph."""
    settings = current(DEFAULT) if settings is None else settings
    if settings.probe_judge_rounds <= 0:
        return None
    return _CostJudge(graph, system, threads, tol, settings, scc_settings)


class _CostJudge:
    """See :func:`probe_judge`; ``words`` says what it weighed, ``go`` what it decided."""

    def __init__(self, graph, system, threads, tol, settings, scc_settings):
        self.graph, self.system, self.threads, self.tol = graph, system, threads, tol
        self.settings, self.scc_settings = settings, scc_settings
        self.rounds = int(settings.probe_judge_rounds)
        self.words, self.go = None, None

    def begin(self, round):
        pass

    def verdict(self, m):
        import math
        from ..engines.power.cpu import power_gamma
        from ..engines.registry import find
        from .estimates import shape
        st = self.settings
        g1 = power_gamma(self.graph, self.system, dangling_ok=True)[0]
        lin = math.log(self.tol * (1.0 - g1) / 2.0) / math.log(g1)
        s = shape(self.graph, self.threads, self.scc_settings)
        cost = {mode: find(mode, "cpu").load("estimate")(s, st).cost for mode in ("scc", "bsp")}
        other = min(cost, key=cost.get)
        share = cost[other] / cost["bsp"]
        alt = m.plain_s * st.bsp_round_cost * lin * share
        if m.bound <= self.tol:
            left = 0.0
        elif 0.0 < m.rate < 1.0:
            left = math.log(m.bound / self.tol) / math.log(1.0 / m.rate)
        else:
            left = math.inf
        mine = left * m.judged_s
        self.go = mine * st.probe_margin <= alt
        self.graph._cache[JUDGED] = mine * st.probe_margin / alt if alt > 0 else math.inf
        self.graph._cache[NOISE] = min(max(m.spread, 1.0), max(st.probe_noise_cap, 1.0))
        self.words = (f"{self.rounds} accelerated rounds fell by {m.rate:.2f} a round: about "
                      f"{left:.0f} rounds of {m.judged_s * 1e3:.3g} ms left "
                      f"({mine * 1e3:.3g} ms), against {other}'s estimated "
                      f"{alt * 1e3:.3g} ms ({lin:.0f} rounds of {m.plain_s * 1e3:.3g} ms x "
                      f"{st.bsp_round_cost:g} x {share:.2f}; margin {st.probe_margin:g}; "
                      f"rounds' times spread {m.spread:.2f}x)")
        if self.go:
            self.graph._cache[CONTINUED] = self.words
        return self.go


def after_probe(plan, graph, system, threads, stats, settings=None, scc_settings=None,
                judged=None):
    """The plan once a power probe has tripped (a round's ratio of differences above
    ``plan.probe`` × γ, ``stats["probe_ratio"]``): the SCC engine or ``bsp`` from the start, as
    :func:`.estimates.choose` says for ``threads``.  ``settings`` (a :class:`RouteSettings`,
    default :data:`DEFAULT`) and ``scc_settings`` as for :func:`route`."""
    settings = current(DEFAULT) if settings is None else settings
    seen = (f"the power probe's differences fell by {stats['probe_ratio']:.2f} at round "
            f"{stats['probe_rounds']} (> {plan.probe}*gamma: |lambda2| near 1, where the rank-one "
            "term buys nothing)")
    if judged is not None:
        seen += f"; then {judged}"
    graph._cache[TRIPPED] = (stats["probe_ratio"], stats["probe_rounds"])
    pick = choose(graph, system, threads, settings, scc_settings)
    return Plan(pick.mode, f"cpu-{pick.mode}", f"automatic: {seen}; {pick.reason}: {pick.mode} "
                "from the start", code="probe-tripped", placement=plan.placement,
                considered=pick.considered, timing=pick.timing)
