"""The Google-matrix power iteration on one GPU (``mode="power"``, ``device="cuda"``,
dispatch/engines/power/gpu.py): the same answers and bounds as the CPU twin, in Numba's CUDA simulator
when there is no GPU (``conftest.py``)."""

import numpy as np
import pytest

import digraph
from digraph.dispatch.engines.power import gpu as gpu_power
from digraph.dispatch.engines.power import gpu_settings as power_settings
from digraph.dispatch.engines.power import gpu_setup
from digraph.errors import InvalidParameterError
from digraph.graph import Graph
from digraph.result import RunStats

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("one_gpu")]


def _graph(seed, n=24, m=100, weighted=False):
    rng = np.random.default_rng(seed)
    src = np.concatenate([rng.integers(0, n, m), np.full(12, 1)])  # vertex 1: many out-arcs
    dst = np.concatenate([rng.integers(0, n, m), rng.integers(0, n, 12)])
    dst[:12] = 7  # vertex 7: an in-degree hub (the heavy kernel in the simulator)
    w = rng.uniform(0.5, 3.0, src.size) if weighted else None
    return Graph.from_arrays(src, dst, w, num_vertices=n + 5)  # 5 isolated, dangling


@pytest.mark.parametrize("seed, weighted", [(0, False), (1, True)])
def test_gpu_power_matches_the_exact_answer_within_its_bound(seed, weighted):
    g = _graph(seed, weighted=weighted)
    pers = {int(v): 1.0 + v % 3 for v in range(0, g.num_vertices, 4)}
    kw = dict(personalization=pers, weights=weighted)
    exact = digraph.algorithms.PageRank().reference(g, **kw)
    r = digraph.run(g, "pagerank", mode="power", device="cuda", tol=1e-9, **kw)
    s = r.stats
    assert s["converged"] and s["mode"] == "power" and s["engine"] == "gpu-power"
    assert s["error_bound"] <= 1e-9
    assert np.abs(r.values - exact).sum() <= s["error_bound"]
    assert s["power"]["anderson"] == 0  # below PowerGpuSettings.anderson_arcs: the plain iteration
    from digraph.dispatch.engines.power import cpu as power
    algo = digraph.algorithms.PageRank()
    cpu = RunStats.new()
    power.solve(g, algo.prepare(g, **algo.bind(g, kw)), tol=1e-9, max_iter=500, stats=cpu,
                settings=power.PowerSettings(accelerator="none"))
    assert s["rounds"] == cpu["rounds"]  # the same iteration, rounding apart


@pytest.mark.parametrize("group", [1, 4])
def test_every_group_size_gives_the_same_iterate(group):
    g = _graph(5)
    algo = digraph.algorithms.PageRank()
    system = algo.prepare(g, **algo.bind(g, {}))
    st = RunStats.new()
    x, ok = gpu_power.solve(g, system, tol=1e-9, max_iter=500, stats=st, group=group)
    assert ok and st["power_group"] == group
    assert np.abs(x - algo.reference(g)).sum() <= st["error_bound"] <= 1e-9
    with pytest.raises(InvalidParameterError, match="power of two"):
        gpu_power.solve(g, system, tol=1e-8, max_iter=10, stats=RunStats.new(), group=3)


def test_the_gpu_default_for_pagerank_is_the_google_matrix_power_iteration():
    g = _graph(1)
    r = digraph.run(g, "pagerank", device="cuda", tol=1e-8)
    assert r.stats["mode"] == "power" and r.stats["requested_mode"] is None
    assert r.stats["route"]["code"] == "power-on-gpus" and r.stats["power"]["map"] == "google"
    with pytest.raises(InvalidParameterError, match="dangling"):
        digraph.run(g, "pagerank", device="cuda", dangling={0: 1.0})


def test_below_the_rounding_floor_it_stops_floor_limited_not_at_once():
    g = _graph(2)
    exact = digraph.algorithms.PageRank().reference(g, alpha=0.9)
    r = digraph.run(g, "pagerank", mode="power", device="cuda", alpha=0.9, tol=1e-17)
    s = r.stats
    assert s["converged"] and s["floor_limited"] and s["rounds"] > 10
    assert s["error_bound"] <= 1e-11 and np.abs(r.values - exact).sum() <= s["error_bound"]


def test_group_size_follows_the_mean_in_degree():
    assert gpu_setup.group_size(Graph.from_arrays([0], [1], num_vertices=2)) == 1
    src = np.repeat(np.arange(10), 40)
    dst = np.tile(np.arange(10), 40)
    assert gpu_setup.group_size(Graph.from_arrays(src, dst, num_vertices=10)) == 16  # mean 40


def test_the_binned_pull_gives_the_same_answer(engine_settings):
    engine_settings(power_settings.PowerGpuSettings(
        bin_arcs=0, bins=((0, 2, 1), (2, 4, 2), (4, 8, 4))))  # hubs from 8
    g = _graph(4)
    assert (g.in_degree >= 8).any() and (g.in_degree < 2).any()
    algo = digraph.algorithms.PageRank()
    system = algo.prepare(g, **algo.bind(g, {}))
    st = RunStats.new()
    x, ok = gpu_power.solve(g, system, tol=1e-9, max_iter=500, stats=st)
    assert ok and st["power_pull"] == "binned"
    assert np.abs(x - algo.reference(g)).sum() <= st["error_bound"] <= 1e-9


def _slow_mode_graph(seed):
    """Arcs among 12 vertices and 18 isolated ones: the mass of the dangling vertices is a slow
    mode of the power iteration (rate α), which Anderson's mix removes."""
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, 12, 60), rng.integers(0, 12, 60)
    return Graph.from_arrays(src, dst, num_vertices=30)


@pytest.mark.parametrize("seed, weighted", [(0, False), (1, True)])
def test_anderson_matches_the_exact_answer_within_its_bound(seed, weighted):
    g = _slow_mode_graph(seed) if not weighted else _graph(seed, weighted=True)
    pers = {int(v): 1.0 + v % 3 for v in range(0, g.num_vertices, 4)}
    kw = dict(personalization=pers, weights=weighted)
    algo = digraph.algorithms.PageRank()
    system = algo.prepare(g, **algo.bind(g, kw))
    exact = algo.reference(g, **kw)
    on = power_settings.PowerGpuSettings(anderson=4, anderson_arcs=0)
    st = RunStats.new()
    x, ok = gpu_power.solve(g, system, tol=1e-8, max_iter=500, stats=st, settings=on)
    assert ok and st["power_anderson"] == 4 and st["anderson_mixes"] > 0
    assert st["error_bound"] <= 1e-8
    assert np.abs(x - exact).sum() <= st["error_bound"]
    assert x.min() >= 0


def test_anderson_takes_fewer_rounds_where_a_slow_mode_is():
    g = _slow_mode_graph(3)
    algo = digraph.algorithms.PageRank()
    system = algo.prepare(g, **algo.bind(g, {}))
    rounds = {}
    for mem in (0, 4):
        st = RunStats.new()
        x, ok = gpu_power.solve(g, system, tol=1e-6, max_iter=500, stats=st,
                                settings=power_settings.PowerGpuSettings(anderson=mem, anderson_arcs=0))
        assert ok and np.abs(x - algo.reference(g)).sum() <= st["error_bound"] <= 1e-6
        rounds[mem] = st["rounds"]
    assert rounds[4] < 0.75 * rounds[0]


def test_small_graphs_run_plain_and_keep_their_vectors_for_the_next_run():
    g = _graph(6)
    first = digraph.run(g, "pagerank", mode="power", device="cuda", tol=1e-9)
    again = digraph.run(g, "pagerank", mode="power", device="cuda", tol=1e-9)
    assert first.stats["power"]["anderson"] == 0  # below PowerGpuSettings.anderson_arcs
    assert not first.stats["gpu_work_kept"] and again.stats["gpu_work_kept"]
    assert np.array_equal(first.values, again.values)
    pers = digraph.run(g, "pagerank", mode="power", device="cuda", tol=1e-9,
                       personalization={0: 1.0})  # new vectors into the kept ones
    assert pers.stats["gpu_work_kept"]
    assert np.abs(pers.values - digraph.algorithms.PageRank().reference(
        g, personalization={0: 1.0})).sum() <= pers.stats["error_bound"]


def test_the_cusparse_pull_gives_the_same_answer():
    from digraph.dispatch.runtime.cuda.backend import backend
    if backend("cuda").sim:
        pytest.skip("cuSPARSE needs a real GPU (the simulator runs the Numba pull)")
    g = _graph(8, weighted=True)
    for weighted in (False, True, False):  # back to ones after a weighted run
        algo = digraph.algorithms.PageRank()
        system = algo.prepare(g, **algo.bind(g, {"weights": weighted}))
        st = RunStats.new()
        x, ok = gpu_power.solve(g, system, tol=1e-10, max_iter=500, stats=st,
                                settings=power_settings.PowerGpuSettings(cusparse_arcs=0))
        assert ok and st["power_pull"] == "cusparse"
        exact = algo.reference(g, weights=weighted)
        assert np.abs(x - exact).sum() <= st["error_bound"] <= 1e-10


def test_anderson_stays_off_where_the_plain_rounds_converge_fast():
    rng = np.random.default_rng(1)  # 15 random out-arcs a vertex: |λ2| small (ratio 0.18)
    src = np.repeat(np.arange(20), 15)
    g = Graph.from_arrays(src, rng.integers(0, 20, src.size), num_vertices=20)
    algo = digraph.algorithms.PageRank()
    system = algo.prepare(g, **algo.bind(g, {}))
    runs = {}
    for mem in (0, 4):
        st = RunStats.new()
        x, ok = gpu_power.solve(g, system, tol=1e-8, max_iter=500, stats=st,
                                settings=power_settings.PowerGpuSettings(anderson=mem, anderson_arcs=0))
        runs[mem] = (x, st)
    st = runs[4][1]
    assert st["power_anderson"] == 0 and st["anderson_mixes"] == 0
    assert st["anderson_probe_ratio"] < 0.3 * 0.85
    assert st["rounds"] == runs[0][1]["rounds"]
    assert np.abs(runs[4][0] - algo.reference(g)).sum() <= st["error_bound"] <= 1e-8


def test_cuda_graph_rounds_give_the_same_iterate():
    from digraph.dispatch.runtime.cuda.backend import backend
    if backend("cuda").sim:
        pytest.skip("CUDA graphs need a real GPU (the simulator launches each kernel)")
    g = _graph(12)
    algo = digraph.algorithms.PageRank()
    system = algo.prepare(g, **algo.bind(g, {}))
    out = {}
    for on in (False, True, True):  # the second run with graphs launches the kept graphs
        st = RunStats.new()
        x, ok = gpu_power.solve(g, system, tol=1e-10, max_iter=500, stats=st,
                                settings=power_settings.PowerGpuSettings(graph_rounds=on))
        assert ok and "power_graph_failed" not in st
        out.setdefault(on, []).append((x, st))
    (plain, sp), = out[False]
    for x, st in out[True]:
        assert st["rounds"] == sp["rounds"]
        assert np.abs(x - plain).sum() <= 1e-13  # block sums added atomically: any order
    assert 0 < out[True][0][1]["power_graph_launches"] < out[True][1][1]["power_graph_launches"]



def test_a_mix_losing_mass_widens_the_bound_but_is_no_rounding_floor():
    """The numbers of a real failure (cit22-0.001, 50 M arcs, H200, Anderson from round 3): the
    mix pulled in round 4 summed to 1 + 6.8e-5 (clipped at 0) and its difference rose from 0.31
    to 0.61.  The bound counts the defect; the stop rule must not read it as the rounding floor
    (it did, and the run ended "floor-limited" at a bound of 3.4)."""
    from digraph.dispatch.engines.power.gpu_setup import round_bound
    from digraph.dispatch.convergence import power_stop as stop
    g1, tol = 0.85, 1e-8
    args = dict(g1=g1, s=0.85, e=1e-9, diff=0.6128, sy=1.0, sx=1.0 + 6.75e-5, sx_err=1e-12,
                blocks=264)
    plain_bound, plain_delta = round_bound(**args)
    bound, delta = round_bound(**args, mixed=True)
    assert bound == plain_bound > (2 * 6.75e-5) / (1 - g1)  # the defect is in the bound
    assert delta < 1e-9 < plain_delta
    st = {}
    assert not stop(bound, delta, 0.6128, 0.3056, g1, tol, st) and "floor_limited" not in st
    assert stop(plain_bound, plain_delta, 0.6128, 0.3056, g1, tol, st)  # what the old rule did
