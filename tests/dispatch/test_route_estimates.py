"""The router's CPU cost model for linear systems (the SCC engine against bsp) and the
measurement at run time where the model is unsure (digraph.dispatch.route.estimates)."""

import numpy as np
import pytest

import digraph
from digraph.dispatch import route
from digraph.dispatch.engines.registry import find
from digraph.dispatch.engines.scc import cpu as scc_cpu
from digraph.dispatch.route import estimates
from digraph.graph import Graph
from digraph.paths.condensation import condensation_for


def _cost(mode, **shape):
    return find(mode, "cpu").load("estimate")(shape, route.DEFAULT)


def test_the_scc_engine_grows_dearer_against_bsp_with_threads_and_split_share():
    r = {(s, t): _cost("scc", arcs=1000, threads=t, split_share=s).cost
         / _cost("bsp", arcs=1000, threads=t, split_share=s).cost
         for s in (0.0, 0.5, 1.0) for t in (2, 4, 16)}
    assert r[0.0, 2] == pytest.approx(route.DEFAULT.scc_ratio_base)
    for s in (0.0, 0.5, 1.0):
        assert r[s, 2] < r[s, 4] < r[s, 16]
    for t in (2, 4, 16):
        assert r[0.0, t] < r[0.5, t] < r[1.0, t]
    # the fitted model: the SCC engine on two threads whatever the split share; bsp on 16
    # threads for one giant component split over them
    assert r[1.0, 2] < 1 < r[1.0, 16]
    more = _cost("bsp", arcs=1000, threads=16, split_share=0).cost
    assert more < _cost("bsp", arcs=1000, threads=2, split_share=0).cost


def _two_blobs(n=3000, arcs=30000, seed=5):
    """Two random strongly connected blobs, one feeding the other: about half the arcs each."""
    rng = np.random.default_rng(seed)
    h = n // 2
    src = np.concatenate([rng.integers(0, h, arcs // 2), rng.integers(h, n, arcs // 2), [0]])
    dst = np.concatenate([rng.integers(0, h, arcs // 2), rng.integers(h, n, arcs // 2), [h]])
    return Graph.from_arrays(src, dst, num_vertices=n)


def test_the_shape_builds_no_condensation_where_nothing_can_split():
    g = _two_blobs()
    assert estimates.shape(g, 1)["split_share"] == 0.0
    assert estimates.shape(g, 4)["split_share"] == 0.0  # 30,000 arcs < split_arcs
    assert not any(isinstance(k, tuple) and "condensation" in str(k[0]) for k in g._cache)
    s = estimates.shape(g, 4, scc_cpu.DagPushSettings(split_arcs=1000, split_cross_cost=0.0))
    assert s["split_share"] == pytest.approx(1.0, abs=1e-3)  # both blobs split


def test_close_estimates_are_settled_by_the_seconds_measured(engine_settings):
    """Within the band: the model's engine first, then the other, then the faster measured
    (no cap on the timing runs: a loaded machine must not stop one)."""
    g = _two_blobs()
    engine_settings(scc_cpu.DEFAULT, split_arcs=1000, split_cross_cost=0.0)
    # estimates equal at 2 threads with every arc split: the model is unsure
    engine_settings(route.DEFAULT, scc_ratio_base=0.9, scc_ratio_split=0.1,
                    scc_thread_exponent=0.0, bsp_share=1.01, explore_cap=1e9)
    seeds = [int(g.vertex_ids[5])]
    exact = digraph.algorithms.Adsorption().reference(g, seeds=seeds)
    k = 1 + estimates.TIMED_RUNS  # an engine's runs until it is timed
    runs = [digraph.run(g, "adsorption", seeds=seeds, threads=2, tol=1e-9)
            for _ in range(2 * k + 2)]
    codes = [r.stats["route"]["code"] for r in runs]
    modes = [r.stats["mode"] for r in runs]
    # an engine's first run on the graph is not timed: k of each, then the faster
    assert codes == ["estimated"] * k + ["measuring"] * k + ["measured"] * 2
    assert [r.stats["route"]["exploring"] for r in runs] == [True] * 2 * k + [False] * 2
    assert len(set(modes[:k])) == len(set(modes[k:2 * k])) == 1
    assert {modes[0], modes[k]} == {"scc", "bsp"}
    key = next(c for c in g._cache if isinstance(c, tuple) and c[0] == "cpu-linear-seconds")
    seen = g._cache[key]
    later = modes[2 * k:]
    assert seen["runs"] == {"scc": k + later.count("scc"), "bsp": k + later.count("bsp")}
    assert later[0] == later[1] == min(seen["seconds"], key=seen["seconds"].get)
    measured = [c for c in runs[2 * k].stats["route"]["considered"]
                if c["test"] == "seconds measured on this graph"]
    assert {c["engine"] for c in measured} == {"cpu-scc", "cpu-bsp"}
    for r in runs:
        assert r.stats["error_bound"] <= 1e-9 and np.abs(r.values - exact).max() <= 1e-8


def test_a_timing_run_past_its_cap_stops_and_the_faster_answers(engine_settings):
    """explore_cap: the engine timed second stops at a safe point once it has run that many
    times the first's measured seconds; the first answers, and the choice is measured."""
    g = _two_blobs()
    engine_settings(scc_cpu.DEFAULT, split_arcs=1000, split_cross_cost=0.0)
    engine_settings(route.DEFAULT, scc_ratio_base=0.9, scc_ratio_split=0.1,
                    scc_thread_exponent=0.0, bsp_share=1.01, explore_cap=1e-6)
    seeds = [int(g.vertex_ids[5])]
    exact = digraph.algorithms.Adsorption().reference(g, seeds=seeds)
    k = 1 + estimates.TIMED_RUNS
    runs = [digraph.run(g, "adsorption", seeds=seeds, threads=2, tol=1e-9)
            for _ in range(k + 2)]
    codes = [r.stats["route"]["code"] for r in runs]
    assert codes == ["estimated"] * k + ["measuring", "measured"]
    assert [r.stats["route"]["exploring"] for r in runs] == [True] * (k + 1) + [False]
    first = runs[0].stats["mode"]
    other = ({"scc", "bsp"} - {first}).pop()
    stop = runs[k].stats
    assert stop["route"]["mode"] == other and stop["mode"] == first
    assert [s["code"] for s in stop["route"]["steps"]] == ["over-time"]
    assert stop["route"]["steps"][0]["to"] == first
    key = estimates.seconds_key(2, False)
    assert estimates.stopped(g, key) == {other}
    assert set(estimates.timed(g, key)) == {"scc", "bsp"}
    # the stopped engine ran less than the first's time here, but counts as the slower
    later = runs[k + 1].stats
    assert later["mode"] == first and f"{other}'s over " in later["route"]["reason"]
    for r in runs:
        assert r.stats["error_bound"] <= 1e-9 and np.abs(r.values - exact).max() <= 1e-8


def test_clear_estimates_decide_alone(engine_settings):
    g = _two_blobs()
    engine_settings(scc_cpu.DEFAULT, split_arcs=1000, split_cross_cost=0.0)
    engine_settings(route.DEFAULT, bsp_share=1.01)
    seeds = [int(g.vertex_ids[5])]
    ads = digraph.algorithms.Adsorption()
    system = ads.prepare(g, **ads.bind(g, {"seeds": seeds}))
    for _ in range(2):  # 16 threads, one split component: bsp by far, nothing measured
        plan = route.route("linear", None, "cpu", threads=16, graph=g, system=system)
        assert plan.mode == "bsp" and plan.code == "estimated" and plan.timing is None
        held = [c for c in plan.considered if c["test"].startswith("estimated cost")]
        assert {c["engine"] for c in held if c["held"]} == {"cpu-bsp"}
    r = digraph.run(g, "adsorption", seeds=seeds, threads=1)
    assert r.stats["mode"] == "scc"
    assert not any(isinstance(k, tuple) and k[0] == "cpu-linear-seconds" for k in g._cache)


def _no_giant():
    """A DAG of 60 small cycles (no component holds 85% of the arcs): PageRank runs no probe."""
    rng = np.random.default_rng(7)
    src, dst = [], []
    for c in range(60):
        v = np.arange(c * 20, c * 20 + 20)
        src += list(v)
        dst += list(np.roll(v, 1))
        if c:  # arcs into earlier cycles only: the cycles form a DAG
            a = rng.integers(0, c * 20, 15)
            src += list(rng.choice(v, 15))
            dst += list(a)
    return Graph.from_arrays(np.array(src), np.array(dst))


def test_the_power_estimate_is_bsps_times_its_ratio():
    shape = dict(arcs=5000, threads=8, split_share=0.0)
    assert _cost("power", **shape).cost == pytest.approx(
        route.DEFAULT.power_ratio * _cost("bsp", **shape).cost)


@pytest.mark.parametrize("threads, measured", [(1, False), (16, True)])
def test_pagerank_without_a_giant_component_measures_power_where_it_may_win(threads, measured):
    """The SCC engine's estimate grows with the threads; power's, bsp's times power_ratio, comes
    within power_band of it on many threads only, and then the run time decides."""
    g = _no_giant()
    condensation_for(g)  # as a first run keeps it: the share is read, not bounded
    pr = digraph.algorithms.PageRank()
    system = pr.prepare(g, **pr.bind(g, {}))
    for _ in range(2):
        plan = route.route("linear", None, "cpu", threads=threads, graph=g, system=system)
        assert plan.mode == "scc"
        est = {c["engine"]: c["value"] for c in plan.considered
               if c["test"].startswith("estimated cost")}
        assert set(est) == {"cpu-scc", "cpu-bsp", "cpu-power"}
        within = est["cpu-power"] <= route.DEFAULT.power_band * est["cpu-scc"]
        assert within == measured and (plan.timing is not None) == measured
        assert ("cpu-linear-seconds", threads, True) not in g._cache  # routes record nothing
    if not measured:
        return
    # the seconds measured settle it: scc timed, then power timed, then the faster
    for t in (1.0, 0.004, 0.009):  # its first run is not timed, then the least counts
        estimates.record(g, plan.timing, "scc", t)
    plan = route.route("linear", None, "cpu", threads=threads, graph=g, system=system)
    assert (plan.mode, plan.code) == ("power", "measuring")
    for t in (1.0, 0.008, 0.003):
        estimates.record(g, plan.timing, "power", t)
    plan = route.route("linear", None, "cpu", threads=threads, graph=g, system=system)
    assert (plan.mode, plan.code) == ("power", "measured")
    assert "power was the faster measured" in plan.reason


def test_power_is_no_candidate_for_systems_it_cannot_run():
    g = _no_giant()
    condensation_for(g)
    ads = digraph.algorithms.Adsorption()
    system = ads.prepare(g, **ads.bind(g, {"seeds": [int(g.vertex_ids[3])]}))
    plan = route.route("linear", None, "cpu", threads=16, graph=g, system=system)
    assert not any(c["engine"] == "cpu-power" for c in plan.considered)


def test_an_engine_is_timed_by_the_least_of_its_runs_after_the_first():
    g = _two_blobs()
    key = estimates.seconds_key(2, False)
    for t in [5.0] + [3.0, 1.0, 2.0][:estimates.TIMED_RUNS]:
        assert "scc" not in estimates.timed(g, key)
        estimates.record(g, key, "scc", t)
    assert estimates.timed(g, key) == {"scc": min([3.0, 1.0, 2.0][:estimates.TIMED_RUNS])}


def test_settle_takes_each_engine_in_turn_then_the_fastest():
    assert estimates.settle({}, "scc", "bsp", "power") == ("scc", None, None)
    mode, state, _ = estimates.settle({"scc": 2.0}, "scc", "bsp", "power")
    assert (mode, state) == ("bsp", "measuring")
    mode, state, _ = estimates.settle({"scc": 2.0, "bsp": 3.0}, "scc", "bsp", "power")
    assert (mode, state) == ("power", "measuring")
    mode, state, words = estimates.settle({"scc": 2.0, "bsp": 3.0, "power": 1.0},
                                          "scc", "bsp", "power")
    assert (mode, state) == ("power", "measured") and "scc's 2e+03" in words
