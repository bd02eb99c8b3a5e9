"""The Google-matrix power iteration on one GPU (``mode="power"``, ``device="cuda"``,
dispatch/gpu_power.py): the same answers and bounds as the CPU twin, in Numba's CUDA simulator
when there is no GPU (``conftest.py``)."""

import numpy as np
import pytest

import digraph
from digraph.dispatch import gpu_power
from digraph.errors import InvalidParameterError, NotAvailableError
from digraph.graph import Graph
from digraph.result import RunStats

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module", autouse=True)
def _gpu():
    from digraph.dispatch import gpu
    try:
        gpu.backend("cuda")
    except NotAvailableError as e:
        pytest.skip(str(e))


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
    cpu = digraph.run(g, "pagerank", mode="power", tol=1e-9, **kw)
    assert s["rounds"] == cpu.stats["rounds"]  # the same iteration, rounding apart


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


def test_the_gpu_default_for_pagerank_is_power_and_not_for_adsorption():
    g = _graph(1)
    r = digraph.run(g, "pagerank", device="cuda", tol=1e-8)
    assert r.stats["mode"] == "power" and r.stats["requested_mode"] is None
    assert "fastest measured for PageRank on one GPU" in r.stats["route"]
    from digraph.dispatch.route import route  # adsorption stays with bsp (the plan alone)
    algo = digraph.algorithms.Adsorption()
    system = algo.prepare(g, **algo.bind(g, {"seeds": [0]}))
    assert route("linear", None, "cuda", graph=g, system=system).mode == "bsp"
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
    assert gpu_power.group_size(Graph.from_arrays([0], [1], num_vertices=2)) == 1
    src = np.repeat(np.arange(10), 40)
    dst = np.tile(np.arange(10), 40)
    assert gpu_power.group_size(Graph.from_arrays(src, dst, num_vertices=10)) == 16  # mean 40


def test_the_binned_pull_gives_the_same_answer(monkeypatch):
    monkeypatch.setattr(gpu_power, "DEFAULT", gpu_power.PowerGpuSettings(
        bin_arcs=0, bins=((0, 2, 1), (2, 4, 2), (4, 8, 4))))  # hubs from 8
    g = _graph(4)
    assert (g.in_degree >= 8).any() and (g.in_degree < 2).any()
    algo = digraph.algorithms.PageRank()
    system = algo.prepare(g, **algo.bind(g, {}))
    st = RunStats.new()
    x, ok = gpu_power.solve(g, system, tol=1e-9, max_iter=500, stats=st)
    assert ok and st["power_pull"] == "binned"
    assert np.abs(x - algo.reference(g)).sum() <= st["error_bound"] <= 1e-9
