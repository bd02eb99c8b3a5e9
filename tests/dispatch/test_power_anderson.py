"""Anderson acceleration of the CPU power iteration (``mode="power"``,
:class:`digraph.dispatch.engines.power.cpu.PowerSettings`, kernels in :mod:`digraph.smx.cpu.anderson`):
the answer stays a power step within its sound bound, memory 0 is the plain iteration round for
round, and the router's probe judges plain rounds only."""

import networkx as nx
import numpy as np
import pytest

import digraph
from digraph.algorithms import PageRank
from digraph.dispatch import anderson
from digraph.dispatch.engines.power import cpu as power
from digraph.generators import rmat
from digraph.result import RunStats
from digraph.smx.cpu import anderson as cpu_anderson

from conftest import dataset_path, random_graph

PLAIN = power.PowerSettings(accelerator="none")
ANDERSON = power.PowerSettings(accelerator="anderson")
ALWAYS = power.PowerSettings(accelerator="anderson", anderson_from_ratio=0.0)  # from round 1


def system_of(g, **params):
    algo = PageRank()
    return algo.prepare(g, **algo.bind(g, params))


def solve(g, tol, settings=None, trip=None, **params):
    """``power.solve`` directly: (x, converged, stats)."""
    stats = RunStats.new()
    x, converged = power.solve(g, system_of(g, **params), tol=tol, max_iter=10_000, stats=stats,
                               settings=settings, trip=trip)
    return np.asarray(x), converged, stats


def rmat_graph(scale, edge_factor, seed):
    src, dst = rmat(scale, edge_factor, seed=seed)
    return digraph.load((src, dst), num_vertices=2 ** scale)


def check(x, converged, stats, exact, tol):
    assert converged is True
    assert stats["error_bound"] <= tol  # converged and not floor-limited: within tol
    assert "floor_limited" not in stats
    assert x.min() >= 0.0
    assert np.abs(x - exact).sum() <= stats["error_bound"]


# ------------------------------------------------------------------ answers within the bound


@pytest.mark.parametrize("tol", [1e-6, 1e-10, 1e-12])
@pytest.mark.parametrize("case", [(10, 4, 1), (12, 4, 3), (12, 2, 1)])
def test_rmat_matches_the_exact_solve_within_the_bound(case, tol):
    g = rmat_graph(*case)
    exact = PageRank().reference(g)
    x, converged, s = solve(g, tol, settings=ALWAYS)
    check(x, converged, s, exact, tol)
    assert s["power_anderson"] == ALWAYS.anderson_memory > 0
    assert s["anderson_mixes"] > 0


@pytest.mark.parametrize("seed", range(3))
def test_personalised_pagerank_within_the_bound(seed):
    g = rmat_graph(11, 4, seed)
    rng = np.random.default_rng(seed)
    # a sparse personalization: most of g(x) is 0, the mix's clip can act
    pers = {int(v): float(rng.random() + 0.1) for v in rng.choice(g.num_vertices, 7, replace=False)}
    exact = PageRank().reference(g, personalization=pers)
    x, converged, s = solve(g, 1e-10, settings=ALWAYS, personalization=pers)
    check(x, converged, s, exact, 1e-10)
    assert s["anderson_mixes"] > 0


def _nx_pagerank(g, **kw):
    G = nx.MultiDiGraph()
    G.add_nodes_from(range(g.num_vertices))
    G.add_edges_from(zip(g.arc_sources.tolist(), g.out_targets.tolist()))
    pr = nx.pagerank(G, tol=1e-15, max_iter=100_000, **kw)
    return np.array([pr[v] for v in range(g.num_vertices)])


def test_dangling_variant_matches_networkx_within_the_bound(engine_settings):
    engine_settings(ALWAYS)  # what digraph.run's engine reads
    g = random_graph(4, 400, 1200)  # about a third of the vertices dangling
    rng = np.random.default_rng(4)
    dangling = {int(v): float(rng.random()) for v in rng.choice(400, 40, replace=False)}
    pers = {int(v): float(rng.random() + 0.1) for v in rng.choice(400, 60, replace=False)}
    exact = _nx_pagerank(g, personalization=pers, dangling=dangling)
    r = digraph.run(g, "pagerank", mode="power", personalization=pers, dangling=dangling,
                    tol=1e-10)
    s = r.stats
    assert s["converged"] and s["error_bound"] <= 1e-10 and s["power"]["dangling_vertices"] > 0
    assert s["power"]["anderson"] > 0 and s["power"]["anderson_mixes"] > 0
    assert np.abs(r.values - exact).sum() <= s["error_bound"] + 1e-13  # networkx's own rounding


def test_the_mix_is_clipped_and_renormalised():
    n = 5
    gp = np.array([0.5, 0.3, 0.1, 0.1, 0.0])
    dG = np.array([[0.2, -0.1, 0.2, -0.3, 0.0]])  # sums to 0, as ΔG columns do
    x, z = np.empty(n), np.empty(n)
    parts = np.empty((cpu_anderson.chunks(n), 3))
    scale = np.full(n, 2.0)
    total, clipped = cpu_anderson.mix(gp, dG, np.array([1.0]), scale, x, z, parts)
    assert np.allclose(x, [0.3, 0.4, 0.0, 0.4, 0.0]) and clipped == pytest.approx(0.1)
    assert total == pytest.approx(1.1) and np.allclose(z, 2 * x)
    total = cpu_anderson.rescale(x, z, scale, total, parts)
    assert total == pytest.approx(1.0, abs=1e-15) and np.allclose(z, 2 * x)
    assert cpu_anderson.sum_rounding(total, n) < 1e-14


def test_the_record_pass_gives_the_dots_of_the_differences():
    rng = np.random.default_rng(0)
    n, m = 40_000, 3  # several chunks
    x, y, v, d, gp, fp = (rng.random(n) for _ in range(6))
    dF, dG = rng.random((m, n)), rng.random((m, n))
    c, sd = 0.3, 0.2
    parts = np.empty((cpu_anderson.chunks(n), 2 * m + 2))
    g = y + c * v + sd * d
    f = g - x
    old_f, old_dF = fp.copy(), dF.copy()
    diff, sy, a, b = cpu_anderson.record(x, y, v, c, d, sd, gp, fp, dF, dG, 1, 3, parts)
    assert np.allclose(y, g) and np.allclose(fp, f)
    assert np.allclose(dF[1], f - old_f) and np.allclose(dG[1], g - gp)
    assert np.allclose(dF[[0, 2]], old_dF[[0, 2]])
    assert diff == pytest.approx(np.abs(f).sum()) and sy == pytest.approx(g.sum())
    assert np.allclose(a, dF @ dF[1]) and np.allclose(b, dF @ f)


# ------------------------------------------------------------------ memory 0, fewer rounds


# rounds of the plain iteration before Anderson existed (measured); the last case stops near
# float64's floor, where the round depends on the order of the sums: these graphs are below
# digraph.smx.cpu.serial.SERIAL_ITEMS arcs, so their passes sum serially, in one order
@pytest.mark.parametrize("make, tol, rounds", [
    (lambda: random_graph(0, 300, 900), 1e-8, 33),
    (lambda: random_graph(0, 300, 900), 1e-12, 49),
    (lambda: random_graph(1, 300, 900), 1e-8, 37),
    (lambda: rmat_graph(12, 4, 3), 1e-8, 22),
    (lambda: rmat_graph(12, 2, 1), 1e-12, 48),
])
def test_memory_0_is_the_plain_iteration(make, tol, rounds):
    g = make()
    x, converged, s = solve(g, tol, settings=PLAIN)
    assert converged and s["rounds"] == rounds
    assert s["power_anderson"] == 0 and s["anderson_mixes"] == 0


@pytest.mark.parametrize("case", [(12, 4, 3), (12, 2, 1), (13, 16, 1)])
def test_anderson_takes_fewer_rounds_on_rmat(case):
    g = rmat_graph(*case)
    plain = solve(g, 1e-10, settings=PLAIN)[2]["rounds"]
    x, converged, s = solve(g, 1e-10, settings=ALWAYS)
    assert converged and s["rounds"] < plain
    assert 0 < s["anderson_mixes"] <= s["rounds"] - 2  # records from round 1, mixes from round 3


def test_by_default_anderson_waits_for_a_slow_rate():
    # R-MAT 2^13 x 16 contracts at about 0.18 alpha a round: never slow enough, so the run is
    # the plain iteration, value for value
    g = rmat_graph(13, 16, 1)
    x, converged, s = solve(g, 1e-10, settings=ANDERSON)
    x0, converged0, s0 = solve(g, 1e-10, settings=PLAIN)
    assert s["anderson_mixes"] == 0 and s["power_anderson"] == 0  # it never ran
    assert s["rounds"] == s0["rounds"] and np.array_equal(x, x0)
    # the two closed halves slow down to alpha a round: Anderson starts and cuts the rounds
    from test_power import _two_giants
    g = _two_giants(4000, 1)
    x, converged, s = solve(g, 1e-10, settings=ANDERSON)
    plain = solve(g, 1e-10, settings=PLAIN)[2]
    assert converged and s["anderson_mixes"] > 0 and s["rounds"] < plain["rounds"] / 2
    assert np.abs(x - PageRank().reference(g)).sum() <= s["error_bound"] <= 1e-10


def test_converged_means_within_tol():
    for seed in range(6):
        g = random_graph(seed, 500, 2500)
        for tol in (1e-5, 1e-9, 1e-13):
            for mem in (1, 2, 4, 8):
                x, converged, s = solve(g, tol, settings=power.PowerSettings(
                    accelerator="anderson", anderson_memory=mem, anderson_from_ratio=0.0))
                assert converged is True
                assert s["error_bound"] <= tol or s.get("floor_limited")


def test_a_tol_below_the_rounding_floor_runs_plain():
    g = random_graph(1, 300, 900)
    x, converged, s = solve(g, 1e-17)
    assert s["floor_limited"] and s["power_anderson"] == 0 and s["anderson_mixes"] == 0
    plain = solve(g, 1e-17, settings=PLAIN)[2]
    assert s["rounds"] == plain["rounds"] and s["error_bound"] == plain["error_bound"]


def test_the_anderson_host_restarts_when_a_difference_grows():
    acc = anderson.Anderson(2)
    assert acc.record_slot() is None and acc.solve(1.0, None, None) is None
    assert acc.record_slot() == (0, 1)
    assert acc.solve(0.5, [1.0], [0.5]) is not None
    assert acc.record_slot() == (1, 2)
    assert acc.solve(0.7, [0.1, 1.0], [0.1, 0.2]) is None and acc.restarts == 1  # 0.7 > 0.5


# ------------------------------------------------------------------ the probe


def test_a_probe_judges_plain_rounds_then_mixes():
    g = random_graph(3, 2000, 20000)  # one fast-mixing component: the probe never trips
    window = ALWAYS.probe_rounds
    x, converged, s = solve(g, 1e-12, trip=0.7, settings=ALWAYS)
    assert converged is True and "probe_rounds" not in s
    assert s["rounds"] > window + 1
    assert 0 < s["anderson_mixes"] <= s["rounds"] - window  # mixes from round window + 1 on
    exact = PageRank().reference(g)
    assert np.abs(x - exact).sum() <= s["error_bound"] <= 1e-12


def test_a_slow_probe_still_trips_with_anderson_on():
    from test_power import _two_giants
    g = _two_giants(4000, 1)
    x, converged, s = solve(g, 1e-8, trip=0.7)
    assert converged is None and 3 <= s["probe_rounds"] <= power.DEFAULT.probe_rounds
    assert s["anderson_mixes"] == 0


# ------------------------------------------------------------------ real graphs


@pytest.mark.datasets
@pytest.mark.parametrize("name, fewer", [("wiki-Vote.txt.gz", True), ("email-Eu-core.txt.gz", True),
                                         ("p2p-Gnutella04.txt.gz", False)])
def test_real_graphs_within_the_bound_in_fewer_rounds(name, fewer):
    # p2p-Gnutella04 contracts fast (its ratios stay near 0.3 alpha): Anderson does not start
    # (and when forced on, 16 rounds either way at 1e-8)
    g = digraph.load(dataset_path(name))
    exact = PageRank().reference(g)
    for tol in (1e-8, 1e-11):
        x, converged, s = solve(g, tol)
        check(x, converged, s, exact, tol)
        plain = solve(g, tol, settings=PLAIN)[2]["rounds"]
        if fewer:
            assert s["anderson_mixes"] > 0 and s["rounds"] < plain
        else:
            assert s["anderson_mixes"] == 0 and s["rounds"] == plain
        x, converged, s = solve(g, tol, settings=ALWAYS)
        check(x, converged, s, exact, tol)
        assert s["anderson_mixes"] > 0 and s["rounds"] <= plain


def test_too_many_restarts_switch_the_acceleration_off():
    """``max_restarts``: after more restarts than that, every solve is the plain step and
    ``gave_up`` says so (``PowerGpuSettings.anderson_restarts`` on one GPU)."""
    from digraph.dispatch.anderson import Anderson
    aa = Anderson(2, max_restarts=1)
    aa.record_slot()
    assert aa.solve(1.0, None, None) is None  # stored only
    diffs = [2.0, 3.0, 4.0]  # each round's difference grew: a restart each
    for d in diffs:
        aa.record_slot()
        assert aa.solve(d, [1.0, 0.0], [0.5, 0.0]) is None
    assert aa.restarts == 2 and aa.gave_up and aa.memory == 0
    assert aa.record_slot() is None and aa.solve(0.1, [1.0], [0.5]) is None
    never = Anderson(2)
    never.record_slot()
    never.solve(1.0, None, None)
    for d in diffs:
        never.record_slot()
        never.solve(d, [1.0, 0.0], [0.5, 0.0])
    assert never.restarts == 3 and not never.gave_up and never.memory == 2
