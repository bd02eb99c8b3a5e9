"""The mass-preserving (Google-matrix) power iteration, ``mode="power"`` (dispatch/engines/power/cpu.py), and
the router's choice between it and the SCC engine."""

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import digraph
from digraph.algorithms import REQUIRED, Algorithm, LinearSystem
from digraph.dispatch import route
from digraph.errors import ConvergenceError, InvalidParameterError
from digraph.graph import Graph
from digraph.paths.condensation import cached_condensation, condensation_for

from conftest import random_graph


def nx_pagerank(g, alpha=0.85, personalization=None, weight=None):
    G = nx.MultiDiGraph()
    G.add_nodes_from(range(g.num_vertices))
    w = g.weights if weight else None
    for k, (u, v) in enumerate(zip(g.arc_sources.tolist(), g.out_targets.tolist())):
        G.add_edge(u, v, weight=1.0 if w is None else float(w[k]))
    pr = nx.pagerank(G, alpha=alpha, personalization=personalization, weight="weight" if weight else None,
                     tol=1e-15, max_iter=10_000)
    return np.array([pr[v] for v in range(g.num_vertices)])


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("tol", [1e-4, 1e-8, 1e-12])
def test_pagerank_matches_the_reference(seed, tol):
    g = random_graph(seed, 300, 900)  # about a third of the vertices dangling
    ref = digraph.algorithms.PageRank().reference(g)
    r = digraph.run(g, "pagerank", mode="power", tol=tol)
    s = r.stats
    assert s["converged"] and s["mode"] == "power"
    assert s["error_bound"] <= tol or s.get("floor_limited")
    assert np.abs(r.values - ref).sum() <= max(tol, s["error_bound"])
    assert s["arc_updates"] == (s["rounds"] + s["power"].get("checks", 0)) * g.num_arcs


def test_personalised_and_weighted_pagerank_match_networkx():
    rng = np.random.default_rng(5)
    n = 200
    src, dst = rng.integers(0, n, 800), rng.integers(0, n, 800)
    g = digraph.load((src, dst, rng.random(800) + 0.1), num_vertices=n)
    pers = {int(v): float(rng.random()) for v in rng.choice(n, 20, replace=False)}
    r = digraph.run(g, "pagerank", mode="power", personalization=pers, tol=1e-12)
    ref = nx_pagerank(g, personalization=pers, weight=True)
    assert np.abs(r.values - ref).sum() <= 1e-11


class Tilted(Algorithm):
    """A normalised system whose columns sum to different values (not PageRank's α or 0)."""

    name = "tilted"
    parameters = {"c": REQUIRED}

    def prepare(self, graph, c):
        n = graph.num_vertices
        out = np.maximum(graph.out_degree, 1).astype(float)
        # column u sums to c · (0.3 … 1.0), dangling columns to 0
        return LinearSystem(b=np.linspace(1.0, 2.0, n), src_scale=(c / out) * np.linspace(0.3, 1.0, n),
                            normalize=True)


def test_a_user_system_with_uneven_columns():
    g = random_graph(2, 400, 2500)
    sys_ = Tilted().prepare(g, c=0.9)
    from digraph.algorithms._reference import solve_linear_system
    x = solve_linear_system(g, sys_)
    ref = x / x.sum()
    r = digraph.run(g, Tilted(), c=0.9, mode="power", tol=1e-10)
    assert r.stats["power"]["gamma"] <= 0.9 + 1e-12
    assert np.abs(r.values - ref).sum() <= 1e-10
    assert r.values.sum() == pytest.approx(1.0, abs=1e-12)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(1, 40), m=st.integers(0, 120), seed=st.integers(0, 2**16),
       alpha=st.sampled_from([0.5, 0.85, 0.99]))
def test_hypothesis_graphs(n, m, seed, alpha):
    rng = np.random.default_rng(seed)
    g = Graph.from_arrays(rng.integers(0, n, m), rng.integers(0, n, m), num_vertices=n)
    ref = digraph.algorithms.PageRank().reference(g, alpha=alpha)
    r = digraph.run(g, "pagerank", mode="power", alpha=alpha, tol=1e-10)
    assert r.stats["converged"]
    assert np.abs(r.values - ref).sum() <= max(1e-10, r.stats["error_bound"])


def test_tol_below_the_rounding_floor_is_floor_limited():
    g = random_graph(1, 500, 3000)
    r = digraph.run(g, "pagerank", mode="power", tol=1e-18)
    assert r.stats["converged"] and r.stats["floor_limited"]
    assert r.stats["error_floor"] > 0.5e-18
    ref = digraph.algorithms.PageRank().reference(g)
    assert np.abs(r.values - ref).sum() <= r.stats["error_bound"]


@pytest.mark.parametrize("margin", [64.0, np.inf])
@pytest.mark.parametrize("weighted", [False, True])
def test_plain_and_compensated_pulls_are_both_within_their_bounds(margin, weighted):
    from digraph.dispatch.engines.power.cpu import PowerSettings
    from digraph.dispatch.settings import using
    rng = np.random.default_rng(11)
    n, m = 400, 6000
    src, dst = rng.integers(0, n, m), rng.integers(0, n // 8, m)  # in-degrees up to ~100
    g = digraph.load((src, dst, rng.random(m) + 0.1) if weighted else (src, dst), num_vertices=n)
    ref = nx_pagerank(g, weight=weighted)
    with using(PowerSettings(plain_sum_margin=margin)):
        r = digraph.run(g, "pagerank", mode="power", tol=1e-10)
    s = r.stats
    assert s["power"]["sum"] == ("plain" if margin < np.inf else "compensated")
    assert s["converged"] and np.abs(r.values - ref).sum() <= max(1e-10, s["error_bound"]) + 1e-13
    # a tolerance the plain sum's rounding could reach: the compensated sum, whatever the margin
    with using(PowerSettings(plain_sum_margin=margin)):
        tight = digraph.run(g, "pagerank", mode="power", tol=1e-16)
    assert tight.stats["power"]["sum"] == "compensated"


def test_the_router_picks_power_for_a_giant_component_and_scc_for_a_dag():
    giant = random_graph(3, 2000, 20000)  # one strongly connected component, fast mixing
    r = digraph.run(giant, "pagerank", tol=1e-8)
    # first run: no condensation is built to decide; the power probe never trips
    assert r.stats["mode"] == "power" and r.stats["requested_mode"] is None
    assert "one-pass bound" in r.stats["route"]["reason"] and "probe_rounds" not in r.stats
    assert cached_condensation(giant) is None
    assert r.stats["rounds"] < 40
    # once the condensation is kept on the graph, it gives the share
    condensation_for(giant)
    r = digraph.run(giant, "pagerank", tol=1e-8)
    assert r.stats["mode"] == "power" and "largest component holds" in r.stats["route"]["reason"]
    assert "probe_rounds" not in r.stats
    # a DAG (arcs from lower to higher ids): every component is one vertex
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 2000, (2, 20000))
    dag = Graph.from_arrays(np.minimum(a, b), np.maximum(a, b) + 1, num_vertices=2001)
    r = digraph.run(dag, "pagerank", tol=1e-8)
    assert r.stats["mode"] == "scc" and "one-pass bound" in r.stats["route"]["reason"]
    # not PageRank-like: the SCC engine (or bsp), never power
    r = digraph.run(giant, "adsorption", seeds=[0], tol=1e-8)
    assert r.stats["mode"] != "power"


def _two_giants(n, seed):
    """Two strongly connected halves with arcs from the first to the second: the one-pass bound
    says 100%, the largest component holds about half, and |lambda2| = 1 (the second half is closed)."""
    rng = np.random.default_rng(seed)
    h = n // 2
    ring = np.arange(h)
    src = [ring, rng.integers(0, h, 4 * h), ring + h, rng.integers(h, n, 4 * h), rng.integers(0, h, 20)]
    dst = [(ring + 1) % h, rng.integers(0, h, 4 * h), (ring + 1) % h + h, rng.integers(h, n, 4 * h),
           rng.integers(h, n, 20)]
    return Graph.from_arrays(np.concatenate(src), np.concatenate(dst), num_vertices=n)


NEVER_GO_ON = route.RouteSettings(probe_margin=np.inf)
"""The router's settings under which a probe's judge never lets the power iteration go on: a
probe that trips hands over (as with ``probe_judge_rounds=0``, after the judged rounds)."""


@pytest.fixture
def never_go_on():
    from digraph.dispatch.settings import using
    with using(NEVER_GO_ON):
        yield


@pytest.mark.parametrize("tol", [1e-6, 1e-10])
def test_a_slow_probe_hands_over_to_the_scc_engine(tol, never_go_on):
    g = _two_giants(4000, 1)
    exact = digraph.algorithms.PageRank().reference(g)
    r = digraph.run(g, "pagerank", tol=tol)
    s = r.stats
    assert s["mode"] == "scc" and s["engine"] == "cpu-scc" and s["converged"]
    assert s["probe_rounds"] >= 3 and s["probe_ratio"] > route.DEFAULT.probe_share * 0.85
    assert s["route"]["code"] == "giant-component-probe"
    assert [(t["to"], t["code"]) for t in s["route"]["steps"]] == [("scc", "probe-tripped")]
    assert "power probe" in s["route"]["steps"][0]["why"] and "scc from the start" in s["route"]["steps"][0]["why"]
    assert s["rounds"] > s["probe_rounds"]  # the probe's rounds are counted, and more were run
    assert cached_condensation(g) is not None and s["time_route"] > 0
    assert np.abs(r.values - exact).sum() <= tol
    # the next run remembers the probe, and does not probe again
    r = digraph.run(g, "pagerank", tol=tol)
    assert r.stats["mode"] == "scc" and "probe_rounds" not in r.stats
    assert r.stats["route"]["code"] == "probe-tripped"
    assert "an earlier power probe on this graph tripped" in r.stats["route"]["reason"]


def test_a_slow_probe_on_one_giant_component_hands_over_too(never_go_on):
    # one directed ring with a few chords: one component, but |lambda2| near 1 (slow mixing)
    n = 3000
    rng = np.random.default_rng(5)
    ring = np.arange(n)
    src = np.concatenate([ring, rng.integers(0, n, 30)])
    dst = np.concatenate([(ring + 1) % n, rng.integers(0, n, 30)])
    g = Graph.from_arrays(src, dst, num_vertices=n)
    exact = digraph.algorithms.PageRank().reference(g)
    condensation_for(g)  # kept: the share rule (one component) says probe, the probe says scc
    # Anderson's mixes after the trip: Gauss-Seidel sweeps in vertex order solve this ring
    # within the judged rounds (test_power_sweeps.py), so no hand-over would be left to test
    from digraph.dispatch.engines.power.cpu import PowerSettings
    from digraph.dispatch.settings import using
    with using(PowerSettings(accelerator="anderson")):
        r = digraph.run(g, "pagerank", tol=1e-9)
    s = r.stats
    assert s["mode"] == "scc" and s["probe_rounds"] >= 3
    assert [t["code"] for t in s["route"]["steps"]] == ["probe-tripped"]
    assert "largest component" not in s["route"]["steps"][0]["why"]
    assert s["probe_ratio"] > route.DEFAULT.probe_share * 0.85
    assert s["converged"] and np.abs(r.values - exact).sum() <= 1e-9


@pytest.mark.parametrize("judge_rounds", [0, 8])
def test_a_probe_that_trips_hands_over_at_once_without_a_judge(judge_rounds):
    from digraph.dispatch.settings import using
    g = _two_giants(4000, 1)
    with using(route.RouteSettings(probe_judge_rounds=judge_rounds, probe_margin=np.inf)):
        r = digraph.run(g, "pagerank", tol=1e-8)
    s = r.stats
    assert s["mode"] == "scc" and s["converged"]
    assert ("probe_rate" in s) == (judge_rounds > 0)
    why = s["route"]["steps"][0]["why"]
    assert ("accelerated rounds fell by" in why) == (judge_rounds > 0)


def test_a_probe_whose_judge_says_go_on_runs_power_to_the_end():
    from digraph.dispatch.settings import using
    g = _two_giants(4000, 1)
    exact = digraph.algorithms.PageRank().reference(g)
    with using(route.RouteSettings(probe_margin=0.0)):  # any finite time left is the lower
        r = digraph.run(g, "pagerank", tol=1e-9)
        s = r.stats
        assert s["mode"] == "power" and s["engine"] == "cpu-power" and s["converged"]
        assert s["probe_rounds"] >= 3 and 0 < s["probe_rate"] < 1
        assert s["rounds"] >= s["probe_rounds"] + route.DEFAULT.probe_judge_rounds
        # the acceleration started at the trip (sweeps on one thread, Anderson on more)
        assert s["power"]["anderson_mixes"] > 0 or s["power"]["sweeps"] > 0
        assert [t["code"] for t in s["route"]["steps"]] == ["probe-continued"]
        assert "accelerated rounds fell by" in s["route"]["steps"][0]["why"]
        assert np.abs(r.values - exact).sum() <= 1e-9
        # the next run remembers the verdict: power from the start, no probe
        r = digraph.run(g, "pagerank", tol=1e-9)
    assert r.stats["mode"] == "power" and r.stats["route"]["code"] == "probe-continued"
    assert "probe_rounds" not in r.stats and r.stats["route"]["steps"] == []
    assert np.abs(r.values - exact).sum() <= 1e-9


@pytest.mark.parametrize("rate, left_ms, go", [(0.5, 1.0, True), (0.9, 1.0, False),
                                               (1.2, 1.0, False), (0.5, 100.0, False)])
def test_the_probe_judge_weighs_the_time_left_against_the_estimate(rate, left_ms, go):
    from digraph.dispatch.driver import Measure
    g = random_graph(3, 2000, 20000)
    system = digraph.algorithms.PageRank().prepare(g, 0.85, None, True)
    judge = route.probe_judge(g, system, 1, 1e-8)
    assert judge.rounds == route.DEFAULT.probe_judge_rounds
    # the linear system's 129 rounds at 1 ms each, times the SCC engine's estimate over bsp's
    # on one thread (0.25): about 32 ms; the power iteration's rounds left from 1e-4 at rate
    # 0.5: 14 (x 1.5 margin: 20 ms at 1 ms a round), at 0.9: 88
    m = Measure(plain_s=1e-3, judged_s=left_ms * 1e-3, rate=rate, bound=1e-4, rounds=12)
    assert judge.verdict(m) is go and judge.go is go
    assert ("power_probe_continued",) in g._cache if go else True
    assert f"fell by {rate:.2f}" in judge.words


@pytest.mark.parametrize("verdict", ["tripped", "continued"])
def test_a_close_verdict_is_settled_by_the_times_measured_on_the_graph(verdict,
                                                                       engine_settings):
    from digraph.dispatch.route.estimates import TIMED_RUNS, seconds_key, timed
    from digraph.dispatch.route.probe import CONTINUED, JUDGED, TRIPPED
    engine_settings(route.DEFAULT, explore_cap=1e9)  # no timing run stopped on a loaded machine
    k = 1 + TIMED_RUNS  # an engine's runs until it is timed on the graph
    g = _two_giants(3000, 1)
    exact = digraph.algorithms.PageRank().reference(g)
    if verdict == "tripped":
        g._cache[TRIPPED] = (0.65, 4)
    else:
        g._cache[CONTINUED] = "8 accelerated rounds fell by 0.60 a round"
    g._cache[JUDGED] = 1.2  # within probe_measure_band: the run time decides
    codes, modes, exploring = [], [], []
    for _ in range(2 * k + 1):
        r = digraph.run(g, "pagerank", tol=1e-9, threads=1)
        assert r.stats["converged"] and np.abs(r.values - exact).sum() <= 1e-9
        assert "probe_rounds" not in r.stats  # the verdict is remembered: no probe
        codes.append(r.stats["route"]["code"])
        exploring.append(r.stats["route"]["exploring"])
        modes.append(r.stats["mode"])
    first = modes[0]
    assert (first == "power") is (verdict == "continued")
    # the verdict's engine until it is timed (its first run is not), then the other, then the
    # faster of the two as measured
    assert codes[:k] == [f"probe-{verdict}"] * k and modes[:k] == [first] * k
    assert codes[k:2 * k] == ["measuring"] * k and first not in modes[k:2 * k]
    assert exploring == [True] * 2 * k + [False]
    seen = timed(g, seconds_key(1, True))
    assert set(seen) == {"power", modes[0] if first != "power" else modes[k]}
    assert codes[2 * k] == "measured" and modes[2 * k] == min(seen, key=seen.get)
    assert "the faster measured on this graph" in r.stats["route"]["reason"]


def test_a_clear_verdict_is_kept():
    from digraph.dispatch.route.probe import JUDGED, TRIPPED
    g = _two_giants(3000, 1)
    g._cache[TRIPPED] = (0.65, 4)
    g._cache[JUDGED] = 2.0 * route.DEFAULT.probe_measure_band
    for _ in range(4):
        r = digraph.run(g, "pagerank", tol=1e-9, threads=1)
        assert r.stats["route"]["code"] == "probe-tripped" and r.stats["mode"] != "power"


def test_a_noisy_verdict_is_settled_by_the_times_measured_on_the_graph():
    from digraph.dispatch.driver import Measure
    from digraph.dispatch.route.measured import judged_close
    from digraph.dispatch.settings import using
    # a verdict outside the band from steady rounds is kept; the same verdict from rounds whose
    # times spread 3x (a host whose runs fall in two modes) is the first runs' only
    from digraph.dispatch.route.probe import JUDGED, NOISE, TRIPPED
    g = random_graph(3, 2000, 20000)
    system = digraph.algorithms.PageRank().prepare(g, 0.85, None, True)
    judge = route.probe_judge(g, system, 1, 1e-8)
    for spread, close in ((1.0, False), (3.0, True), (100.0, True)):
        judge.verdict(Measure(plain_s=1e-3, judged_s=20e-3, rate=0.9, bound=1e-4, rounds=12,
                              spread=spread))
        assert g._cache[NOISE] == min(spread, route.DEFAULT.probe_noise_cap)
        assert f"spread {spread:.2f}x" in judge.words
        g._cache[JUDGED] = 2.5 * route.DEFAULT.probe_measure_band  # outside the plain band
        g._cache[TRIPPED] = (0.65, 4)
        assert judged_close(g, route.DEFAULT) is close
    g._cache[NOISE] = route.DEFAULT.probe_noise_cap
    g._cache[JUDGED] = 1.01 * route.DEFAULT.probe_measure_band * route.DEFAULT.probe_noise_cap
    assert not judged_close(g, route.DEFAULT)  # the widening is capped
    with using(route.RouteSettings(probe_noise_cap=1.0)):
        judge = route.probe_judge(g, system, 1, 1e-8)
        judge.verdict(Measure(plain_s=1e-3, judged_s=20e-3, rate=0.9, bound=1e-4, rounds=12,
                              spread=3.0))
        assert g._cache[NOISE] == 1.0


def test_the_judges_spread_is_its_rounds_quartiles():
    from digraph.dispatch.driver import _spread
    steady = [1.0, 1.02, 0.98, 1.01, 0.99, 1.0]
    assert _spread(steady) == pytest.approx(1.0, abs=0.03)
    assert _spread(steady + [9.0]) < 1.05  # one slow round moves no median: nor the spread
    assert _spread([1.0, 3.0] * 4) == pytest.approx(3.0)  # two modes: it does
    assert _spread([2.0]) == 1.0 and _spread([]) == 1.0


def test_a_probe_respects_max_iter():
    g = _two_giants(2000, 2)
    with pytest.raises(ConvergenceError):
        digraph.run(g, "pagerank", tol=1e-12, max_iter=2)
    r = digraph.run(_two_giants(2000, 2), "pagerank", tol=1e-12, max_iter=10_000)
    assert r.stats["converged"]


def test_power_refuses_what_it_cannot_run():
    g = random_graph(0, 50, 200)
    with pytest.raises(InvalidParameterError, match="normalised linear systems"):
        digraph.run(g, "adsorption", seeds=[0], mode="power")
    with pytest.raises(InvalidParameterError, match="mode='power'"):
        digraph.run(g, "sssp", source=0, mode="power")
    with pytest.raises(InvalidParameterError, match="path modes"):
        digraph.run(g, "pagerank", mode="power", priority="none")


@pytest.mark.parametrize("threads, first", [(1, "scc"), (2, "scc"), (16, "bsp")])
def test_adsorption_on_one_giant_component_starts_with_the_lower_estimate(threads, first,
                                                                         engine_settings):
    """Few threads: the SCC engine first; many (its giant component split over them): bsp."""
    from digraph.dispatch.engines.scc import cpu as scc_cpu
    engine_settings(scc_cpu.DEFAULT, split_arcs=1000, split_cross_cost=0.0)
    giant = random_graph(3, 2000, 20000)
    ads = digraph.algorithms.Adsorption()
    system = ads.prepare(giant, **ads.bind(giant, {"seeds": [0, 1]}))
    plan = route.route("linear", None, "cpu", threads=threads, graph=giant, system=system)
    assert (plan.mode, plan.code) == (first, f"giant-component-{first}")
    assert "largest component holds" in plan.reason and plan.timing is not None


def test_adsorption_goes_to_the_measured_choice_on_one_giant_component_only():
    giant = random_graph(3, 2000, 20000)
    r = digraph.run(giant, "adsorption", seeds=[0, 1], tol=1e-8, threads=2)
    assert r.stats["mode"] == "scc" and "largest component holds" in r.stats["route"]["reason"]
    assert r.stats["converged"]
    halves = _two_giants(2000, 3)  # the one-pass bound says 100%: the condensation is looked at
    r = digraph.run(halves, "adsorption", seeds=[0, 1500], tol=1e-8)
    assert r.stats["mode"] == "scc" and cached_condensation(halves) is not None
    exact = digraph.algorithms.Adsorption().reference(halves, seeds=[0, 1500])
    assert np.abs(r.values - exact).sum() <= 1e-8


def test_adsorption_on_a_giant_component_times_both_engines_then_keeps_the_faster(
        engine_settings):
    giant = random_graph(4, 2000, 20000)
    exact = digraph.algorithms.Adsorption().reference(giant, seeds=[0, 1])
    from digraph.dispatch.route.estimates import TIMED_RUNS
    engine_settings(route.DEFAULT, explore_cap=1e9)  # no timing run stopped on a loaded machine
    k = 1 + TIMED_RUNS
    seen = []
    for _ in range(2 * k + 2):
        r = digraph.run(giant, "adsorption", seeds=[0, 1], tol=1e-8, threads=2)
        seen.append((r.stats["mode"], r.stats["route"]["code"]))
        assert r.stats["converged"] and np.abs(r.values - exact).sum() <= 1e-8
    # each engine's first run pays its set-up and is not kept: k runs of each, then the faster
    assert seen[:2 * k] == [("scc", "giant-component-scc")] * k + [("bsp", "measuring")] * k
    assert seen[2 * k] == seen[2 * k + 1] and seen[2 * k][1] == "measured"
    assert "faster measured on this graph" in r.stats["route"]["reason"]
