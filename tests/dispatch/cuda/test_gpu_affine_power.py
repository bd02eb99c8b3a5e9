"""The power iteration of the affine map ``x ↦ b + A x`` on one GPU (``mode="power"`` on linear
systems that are not normalised, dispatch/engines/power/gpu_affine.py): adsorption and users'
systems against exact solves, within the certified bound, its routes, the router's choice and the
refusals; in Numba's CUDA simulator when there is no GPU (``conftest.py``)."""

import numpy as np
import pytest

import digraph
from digraph.algorithms.base import Algorithm, DegreeScaledSystem, LinearSystem
from digraph.dispatch import dual_bound
from digraph.dispatch.engines.power import gpu as gpu_power
from digraph.dispatch.engines.power import gpu_settings as power_settings
from digraph.dispatch.route import route
from digraph.dispatch.systems import linear_factors
from digraph.errors import InvalidParameterError
from digraph.result import RunStats
from references import Arcs, adsorption_exact, l1, within

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("one_gpu")]


def _arcs(seed, n=30, m=110, weighted=False):
    """Random arcs among the first ``n − 4`` vertices (self-loops and parallel arcs among them),
    vertex 2 with many out-arcs, vertex 5 an in-degree hub (the heavy pull in the simulator);
    the last 4 vertices have no out-arc."""
    rng = np.random.default_rng(seed)
    src = np.concatenate([rng.integers(0, n - 4, m), np.full(10, 2)])
    dst = np.concatenate([rng.integers(0, n - 4, m), rng.integers(0, n, 10)])
    dst[:9] = 5
    w = rng.uniform(0.2, 4.0, src.size).round(3) if weighted else None
    return Arcs(n, src, dst, w)


def _matrix(g, system):
    """``A`` dense, from the system's factors and the graph's arcs (parallel arcs added)."""
    src, dst, has, arc = linear_factors(g, system)
    n = g.num_vertices
    A = np.zeros((n, n))
    u, v = g.arc_sources, g.out_targets
    np.add.at(A, (v, u), src[u] * (arc if has else 1.0) * dst[v])
    return A


def _exact(g, system):
    A = _matrix(g, system)
    return np.linalg.solve(np.eye(g.num_vertices) - A, np.asarray(system.b, np.float64))


@pytest.mark.parametrize("seed, seeds, beta, weighted", [
    (0, [0], 0.8, False), (1, [0, 3, 7], 0.5, True), (2, [2], 0.95, True),
    (3, [1, 5, 9, 29], 0.8, False)])
def test_adsorption_is_within_its_bound_of_the_exact_answer(seed, seeds, beta, weighted):
    arcs = _arcs(seed, weighted=weighted)
    g = arcs.graph()
    exact = adsorption_exact(arcs, seeds, beta, weighted)
    r = digraph.run(g, "adsorption", mode="power", device="cuda", seeds=seeds, beta=beta,
                    weights=weighted, tol=1e-10)
    s = r.stats
    assert s["converged"] and s["mode"] == "power" and s["engine"] == "gpu-power"
    assert s["power"]["map"] == "affine" and s["error_route"] == "dual"
    assert s["error_bound"] <= 1e-10
    assert within(l1(r.values, exact), s["error_bound"])
    assert s["dense_rounds"] == s["rounds"] > 10
    assert s["arc_updates"] == s["rounds"] * g.num_arcs
    assert s["vertex_updates"] == s["rounds"] * g.num_vertices


def test_the_rounds_are_jacobis_from_b():
    arcs = _arcs(5, weighted=True)
    g = arcs.graph()
    algo = digraph.algorithms.Adsorption()
    system = algo.prepare(g, **algo.bind(g, {"seeds": [0, 4], "beta": 0.7}))
    r = digraph.run(g, "adsorption", mode="power", device="cuda", seeds=[0, 4], beta=0.7,
                    tol=1e-6)
    A, b = _matrix(g, system), system.b
    x = b.copy()
    for _ in range(r.stats["rounds"]):
        x = b + A @ x
    assert np.abs(r.values - x).max() <= 1e-14 * max(1.0, x.max())


class _TargetScaled(Algorithm):
    """A user's sum, not normalised: ``x = b + A x``, ``A[v, u] = s_u · a_e · c / W_in(v)``:
    its rows sum to at most ``c`` and its columns to more than 1 (the dual route)."""

    name = "target-scaled"
    parameters = {"c": 0.7, "source_factors": True}

    def prepare(self, graph, c, source_factors):
        rng = np.random.default_rng(11)
        n, m = graph.num_vertices, graph.num_arcs
        arc = rng.uniform(0.5, 1.5, m)
        w_in = np.bincount(graph.out_targets, weights=arc, minlength=n)
        dst = np.where(w_in > 0, c / np.where(w_in > 0, w_in, 1.0), 0.0)
        src = rng.uniform(0.5, 1.0, n) if source_factors else None
        return LinearSystem(b=rng.uniform(0.0, 2.0, n), src_scale=src, arc_scale=arc,
                            dst_scale=dst)


class _SourceScaled(Algorithm):
    """A user's sum, not normalised, whose columns sum to less than 1 (the L1 route)."""

    name = "source-scaled"
    parameters = {"c": 0.3}

    def prepare(self, graph, c):
        rng = np.random.default_rng(12)
        n = graph.num_vertices
        out = np.maximum(graph.out_degree, 1)
        return LinearSystem(b=rng.uniform(0.0, 1.0, n), src_scale=c / out * rng.uniform(0.5, 1, n),
                            arc_scale=rng.uniform(0.5, 1.5, graph.num_arcs),
                            dst_scale=rng.uniform(0.5, 1.5, n))


@pytest.mark.parametrize("algo, route_", [(_TargetScaled(), "dual"), (_SourceScaled(), None)])
def test_a_users_linear_system_is_within_its_bound(algo, route_):
    g = _arcs(6).graph()
    system = algo.prepare(g, **algo.bind(g, {}))
    r = digraph.run(g, algo, mode="power", device="cuda", tol=1e-11)
    s = r.stats
    assert s["converged"] and s["power"]["map"] == "affine" and s.get("error_route") == route_
    assert s["error_bound"] <= 1e-11
    assert within(l1(r.values, _exact(g, system)), s["error_bound"])
    if route_ is None:  # the classic bound falls by γ1 a round
        assert s["power"]["gamma"] < 1


def test_a_degree_scaled_system_makes_its_vectors_on_the_device():
    g = _arcs(7).graph()
    system = DegreeScaledSystem(g.out_degree, 0.15, 0.85)  # PageRank's sum, not normalised
    st = RunStats.new()
    x, ok = gpu_power.solve(g, system, tol=1e-10, max_iter=1000, stats=st)
    assert ok and st["power_map"] == "affine" and st["gamma"] == pytest.approx(0.85)
    exact = _exact(g, LinearSystem(b=np.full(g.num_vertices, 0.15), src_scale=system.src_scale))
    assert within(l1(x, exact), st["error_bound"]) and st["error_bound"] <= 1e-10


def test_other_seeds_reuse_the_route_and_other_factors_make_a_new_one():
    arcs = _arcs(8, weighted=True)
    g = arcs.graph()
    runs = []
    for seeds, beta, weighted in (([0], 0.8, True), ([3, 4], 0.8, True), ([0], 0.5, True),
                                  ([0], 0.8, False), ([3], 0.8, True)):
        r = digraph.run(g, "adsorption", mode="power", device="cuda", seeds=seeds, beta=beta,
                        weights=weighted, tol=1e-9)
        assert within(l1(r.values, adsorption_exact(arcs, seeds, beta, weighted)),
                      r.stats["error_bound"])
        runs.append(r.stats)
    assert not runs[0]["gpu_work_kept"] and all(s["gpu_work_kept"] for s in runs[1:])
    assert runs[0]["dual_sweeps"] > 0 and runs[1]["dual_sweeps"] == 0  # the same A
    assert runs[1]["dual_max"] == runs[0]["dual_max"] == runs[4]["dual_max"]
    assert len({s["dual_max"] for s in runs[:4]}) == 3  # β and the weights change A


def test_without_dual_weights_the_linf_route_still_bounds_the_error(engine_settings):
    engine_settings(dual_bound.DEFAULT, max_sweeps=1)  # none found in one sweep
    arcs = _arcs(9)
    r = digraph.run(arcs.graph(), "adsorption", mode="power", device="cuda", seeds=[0, 2],
                    tol=1e-7)
    s = r.stats
    assert s["converged"] and s["error_route"] == "linf" and s["power"]["gamma"] <= 0.8 + 1e-12
    assert s["error_bound"] <= 1e-7
    assert within(l1(r.values, adsorption_exact(arcs, [0, 2], 0.8)), s["error_bound"])


def test_below_the_rounding_floor_it_stops_floor_limited():
    arcs = _arcs(10)
    r = digraph.run(arcs.graph(), "adsorption", mode="power", device="cuda", seeds=[2],
                    beta=0.9, tol=1e-19)
    s = r.stats
    assert s["converged"] and s["floor_limited"] and s["rounds"] > 50
    assert s["error_floor"] < s["error_bound"] <= 4 * s["error_floor"] < 1e-12
    assert l1(r.values, adsorption_exact(arcs, [2], 0.9)) <= s["error_bound"]


def test_the_binned_pull_and_every_group_size_give_the_same_iterate(engine_settings):
    g = _arcs(11, weighted=True).graph()
    algo = digraph.algorithms.Adsorption()
    system = algo.prepare(g, **algo.bind(g, {"seeds": [1, 2]}))
    exact = algo.reference(g, seeds=[1, 2])
    out = []
    for group in (1, 4):
        st = RunStats.new()
        out.append((gpu_power.solve(g, system, tol=1e-10, max_iter=1000, stats=st, group=group),
                    st))
        assert st["power_group"] == group and st["power_pull"] == "grouped"
    engine_settings(power_settings.POWER_DEFAULT, bin_arcs=0,
                    bins=((0, 2, 1), (2, 4, 2), (4, 8, 4)))  # hubs from 8
    st = RunStats.new()
    out.append((gpu_power.solve(g, system, tol=1e-10, max_iter=1000, stats=st), st))
    assert st["power_pull"] == "binned"
    for (x, ok), st in out:
        assert ok and st["rounds"] == out[0][1]["rounds"]
        assert np.abs(x - exact).sum() <= st["error_bound"] <= 1e-10
        assert np.abs(x - out[0][0][0]).max() <= 1e-15


def test_the_gpu_default_for_sums_not_normalised_is_the_affine_iteration():
    arcs = _arcs(12)
    g = arcs.graph()
    r = digraph.run(g, "adsorption", device="cuda", seeds=[0], tol=1e-9)
    assert r.stats["mode"] == "power" and r.stats["requested_mode"] is None
    assert r.stats["route"]["code"] == "affine-power-on-gpu"
    assert within(l1(r.values, adsorption_exact(arcs, [0], 0.8)), r.stats["error_bound"])
    n = g.num_vertices
    signed = LinearSystem(b=np.r_[-1.0, np.ones(n - 1)], src_scale=np.full(n, 0.05))
    assert route("linear", None, "cuda", graph=g, system=signed).mode == "bsp"  # b < 0
    algo = digraph.algorithms.Adsorption()
    system = algo.prepare(g, **algo.bind(g, {"seeds": [0]}))
    assert route("linear", None, "cuda:0,1", graph=g, system=system).mode == "bsp"


def test_a_small_reach_is_solved_alone_by_the_affine_iteration():
    rng = np.random.default_rng(13)
    src = np.r_[rng.integers(0, 200, 800), 200, 201, 202, 203, 201]
    dst = np.r_[rng.integers(0, 200, 800), 201, 202, 203, 200, 203]
    arcs = Arcs(210, src, dst)  # 200..203 closed under out-arcs; 204..209 isolated
    r = digraph.run(arcs.graph(), "adsorption", device="cuda", seeds=[200], tol=1e-10)
    s = r.stats
    assert s["reach_vertices"] == 4 and s["reach_arcs"] == 5 and s["route"]["restricted"]
    assert s["mode"] == "power" and s["power"]["map"] == "affine"
    exact = adsorption_exact(arcs, [200], 0.8)
    assert within(l1(r.values, exact), s["error_bound"]) and s["error_bound"] <= 1e-10
    assert not r.values[:200].any()


def test_refusals_name_the_mode_and_the_problem():
    g = _arcs(14).graph()
    n = g.num_vertices
    cases = [(LinearSystem(b=np.r_[-1.0, np.ones(n - 1)], src_scale=np.full(n, 0.05)),
              r"b finite and >= 0.*mode='bsp' runs any b"),
             (LinearSystem(b=np.r_[np.nan, np.ones(n - 1)]), "b finite"),
             (LinearSystem(b=np.ones(n), src_scale=np.full(n, 2.0)), "not a contraction"),
             (LinearSystem(b=np.ones(n), src_scale=np.full(n, 0.1), dangling=np.ones(n),
                           dangling_scale=np.full(n, 0.1)), "dangling")]
    for system, why in cases:
        with pytest.raises(InvalidParameterError, match=rf"mode='power' cannot run.*{why}"):
            gpu_power.solve(g, system, tol=1e-8, max_iter=100, stats=RunStats.new())
    algo = digraph.algorithms.Adsorption()
    ads = algo.prepare(g, **algo.bind(g, {"seeds": [0]}))
    with pytest.raises(InvalidParameterError, match="b finite and >= 0"):
        route("linear", "power", "cuda", graph=g, system=cases[0][0])
    for device in ("cpu", "cuda:0,1"):  # the affine iteration runs on one GPU only
        with pytest.raises(InvalidParameterError, match="normalised.*on one GPU"):
            route("linear", "power", device, graph=g, system=ads)
    with pytest.raises(InvalidParameterError, match="power of two"):
        gpu_power.solve(g, ads, tol=1e-8, max_iter=10, stats=RunStats.new(), group=3)


def test_cuda_graph_rounds_give_the_same_iterate():
    from digraph.dispatch.runtime.cuda.backend import backend
    if backend("cuda").sim:
        pytest.skip("CUDA graphs need a real GPU (the simulator launches each kernel)")
    g = _arcs(15).graph()
    algo = digraph.algorithms.Adsorption()
    system = algo.prepare(g, **algo.bind(g, {"seeds": [0, 1]}))
    out = {}
    for on in (False, True, True):  # the second run with graphs launches the kept graphs
        st = RunStats.new()
        x, ok = gpu_power.solve(g, system, tol=1e-10, max_iter=1000, stats=st,
                                settings=power_settings.PowerGpuSettings(graph_rounds=on))
        assert ok and "power_graph_failed" not in st
        out.setdefault(on, []).append((x, st))
    (plain, sp), = out[False]
    for x, st in out[True]:
        assert st["rounds"] == sp["rounds"]
        assert np.abs(x - plain).sum() <= 1e-13
    assert 0 < out[True][0][1]["power_graph_launches"] < out[True][1][1]["power_graph_launches"]


def test_the_cusparse_pull_gives_the_same_answer():
    from digraph.dispatch.runtime.cuda.backend import backend
    if backend("cuda").sim:
        pytest.skip("cuSPARSE needs a real GPU (the simulator runs the Numba pull)")
    arcs = _arcs(16, weighted=True)
    g = arcs.graph()
    for weighted in (False, True, False):  # back to ones after a weighted run
        algo = digraph.algorithms.Adsorption()
        system = algo.prepare(g, **algo.bind(g, {"seeds": [3], "weights": weighted}))
        st = RunStats.new()
        x, ok = gpu_power.solve(g, system, tol=1e-10, max_iter=1000, stats=st,
                                settings=power_settings.PowerGpuSettings(cusparse_arcs=0))
        assert ok and st["power_pull"] == "cusparse"
        assert l1(x, adsorption_exact(arcs, [3], 0.8, weighted)) <= st["error_bound"] <= 1e-10


def test_a_graph_that_does_not_fit_streams_in_bsp(monkeypatch):
    """The automatic choice keeps ``bsp`` where its arcs must stream from the host: a graph
    larger than the GPU's free memory (its size faked: the simulator has none) or
    ``batch_arcs=``; a named ``power`` is not changed."""
    from digraph.dispatch.placement import of as placement_of
    from digraph.dispatch.route import place
    from digraph.dispatch.runtime.cuda import device_graph
    arcs = _arcs(17)
    g = arcs.graph()
    r = digraph.run(g, "adsorption", device="cuda", seeds=[0], tol=1e-9, batch_arcs=8)
    assert r.stats["mode"] == "bsp" and r.stats["route"]["code"] == "streamed"
    assert r.stats["push"]["streamed_batches"] > 1
    assert within(l1(r.values, adsorption_exact(arcs, [0], 0.8)), r.stats["error_bound"])
    algo = digraph.algorithms.Adsorption()
    system = algo.prepare(g, **algo.bind(g, {"seeds": [0]}))
    monkeypatch.setattr(device_graph, "too_big", lambda be, graph: True)
    for mode, want in ((None, "bsp"), ("power", "power")):
        plan = place(route("linear", mode, "cuda", graph=g, system=system), g, system,
                     placement_of("cuda", 1))
        assert plan.mode == want and plan.engine == f"gpu-{want}"
