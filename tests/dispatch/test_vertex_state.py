"""The SCC engine (``mode="scc"``, dispatch/engines/scc/cpu.py): linear systems
SCC by SCC of the vertex condensation, one residual per vertex."""

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import connected_components

import digraph
from digraph.algorithms import REQUIRED, Algorithm, LinearSystem
from digraph.dispatch.engines.scc import cpu as dag_push
from digraph.dispatch import route
from digraph.errors import ConvergenceError, InvalidParameterError
from digraph.graph import Graph
from digraph.paths.condensation import Condensation, condensation_for

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                      HealthCheck.function_scoped_fixture])


@st.composite
def graphs(draw):
    n = draw(st.integers(1, 40))
    m = draw(st.integers(0, 160))
    src = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    dst = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    w = draw(st.lists(st.integers(1, 9), min_size=m, max_size=m))
    return Graph.from_arrays(np.array(src, np.int64), np.array(dst, np.int64),
                             np.array(w, np.float64), num_vertices=n)


class Scaled(Algorithm):
    """x_v = b_v + Σ_{u→v} s_u · w_uv · t_v · x_u, every factor non-trivial (coefficient arrays)."""

    name = "scaled"
    parameters = {"c": REQUIRED}

    def prepare(self, graph, c):
        n = graph.num_vertices
        deg = np.maximum(graph.out_degree, 1).astype(np.float64)
        w = graph.arc_weights()
        wmax = float(w.max()) if w.size else 1.0
        return LinearSystem(b=np.linspace(1.0, 2.0, n), src_scale=c / deg,
                            arc_scale=w / wmax, dst_scale=np.linspace(0.5, 1.0, n))

    def reference(self, graph, c):
        from digraph.algorithms._reference import solve_linear_system
        return solve_linear_system(graph, self.prepare(graph, c))


@pytest.fixture(params=["serial", "serial-sweeps", "level", "level-sweeps", "accumulate", "outbox"])
def split(request, engine_settings):
    """How the components run: thin levels one after another on one thread (small graphs), every
    level's components in parallel, or every component with an arc split over the threads (each
    exchange between the chunks).  ``-sweeps``: the small components swept too, not solved
    exactly (``direct_vertices=0``: the test graphs' components are all small)."""
    if not request.param.startswith("serial"):
        _scc_settings(engine_settings, thin_arcs=0)
    if request.param.endswith("-sweeps"):
        _scc_settings(engine_settings, direct_vertices=0)
    if request.param in ("accumulate", "outbox"):
        _scc_settings(engine_settings, split_arcs=1, split_kind=request.param, split_cross_cost=0.0)
    return request.param


def _scc_settings(engine_settings, **fields):
    """The SCC engine's default settings with ``fields`` changed, for this test."""
    engine_settings(dag_push.DEFAULT, **fields)


@pytest.mark.parametrize("threads", [1, 2, 4])
@settings(max_examples=15, **SETTINGS)
@given(g=graphs(), data=st.data())
def test_linear_algorithms_match_their_references(threads, split, g, data):
    algos = digraph.algorithms
    seed = data.draw(st.integers(0, g.num_vertices - 1))
    for prio in ("pending", "none"):
        r = digraph.run(g, "pagerank", mode="scc", priority=prio, threads=threads, tol=1e-10)
        assert r.stats["dag"]["state"] == "vertex" and r.stats["converged"]
        assert np.abs(r.values - algos.PageRank().reference(g)).sum() <= 1e-10
        r = digraph.run(g, "adsorption", seeds=[seed], mode="scc", priority=prio, threads=threads,
                        tol=1e-10)
        assert r.stats["dag"]["state"] == "vertex"
        assert np.abs(r.values - algos.Adsorption().reference(g, seeds=[seed])).sum() <= 1e-10
    r = digraph.run(g, Scaled(), c=0.9, mode="scc", threads=threads, tol=1e-9)
    ref = Scaled().reference(g, c=0.9)
    assert np.abs(r.values - ref).sum() <= 1e-9


@pytest.mark.parametrize("kind", ["accumulate", "outbox"])
@pytest.mark.parametrize("threads", [2, 4])
def test_no_lost_update_across_chunks(threads, kind, engine_settings):
    # one SCC: a hub and 20,000 leaves in both directions, split over the threads; every leaf
    # pushes into the hub, most of them from another thread's chunk
    _scc_settings(engine_settings, split_arcs=1, split_kind=kind, split_cross_cost=0.0)
    g, exact = _hub_and_leaves(20_000)
    r = digraph.run(g, "pagerank", mode="scc", threads=threads, tol=1e-12)
    assert r.stats["scc"]["split"] == 1
    assert np.abs(r.values - exact).sum() <= 1e-12
    assert r.values[0] == pytest.approx(exact[0], rel=1e-11)


def _hub_and_leaves(k):
    """A hub and ``k`` leaves, arcs both ways, and its exact PageRank: by symmetry every leaf
    holds the same value; x_0 = (1-α)/n + α Σ x_leaf, x_leaf = (1-α)/n + α x_0 / k."""
    leaves = np.arange(1, k + 1)
    g = Graph.from_arrays(np.concatenate([leaves, np.zeros(k, np.int64)]),
                          np.concatenate([np.zeros(k, np.int64), leaves]))
    a, n = 0.85, k + 1
    t = (1 - a) / n
    x0 = (t + a * k * t) / (1 - a * a)
    exact = np.concatenate([[x0], np.full(k, t + a * x0 / k)])
    return g, exact / exact.sum()


def test_accumulators_stay_small_at_tight_tolerance(engine_settings):
    # the hub's accumulator used to grow to the hub's whole rank (~0.46); the leaves' tiny pushes
    # into it were then rounded to its ulp, which made mass each sweep: at tol 1e-13 the run was
    # stopped by max_iter in most tries (2000 rounds, residual ~6e-10). Reset between calls it
    # converges in ~110 rounds.
    _scc_settings(engine_settings, split_arcs=1, split_kind="accumulate", split_cross_cost=0.0)
    g, exact = _hub_and_leaves(20_000)
    for _ in range(3):
        r = digraph.run(g, "pagerank", mode="scc", threads=2, tol=1e-13, max_iter=1000)
        assert r.stats["scc"]["split"] == 1
        assert np.abs(r.values - exact).sum() <= 1e-13


@pytest.mark.parametrize("threads", [1, 2])
def test_linf_route_pushes_every_sweep(threads, split):
    # adsorption (column sums up to ~89) on R-MAT, on the L∞ route itself (the engine called
    # directly: digraph.run would rescale the system by its dual weights first): the giant
    # component's many residuals at or below vmax, which may never push, used to set the soft
    # priority's threshold above every residual that may (the largest on a hub of out-degree
    # 379): 1,921 of 2,000 sweeps pushed nothing and the run hit max_iter at every tol.
    import numba

    from digraph.result import RunStats
    from digraph.generators import rmat
    src, dst = rmat(12, 8, seed=1)
    g = digraph.load((src, dst))
    seeds = g.vertex_ids[np.argsort(-g.out_degree, kind="stable")[:10]]
    algo = digraph.algorithms.Adsorption()
    system = algo.prepare(g, **algo.bind(g, {"seeds": seeds, "beta": 0.8}))
    exact = algo.reference(g, seeds=seeds)
    old = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        for tol in (1e-4, 1e-8):
            stats = RunStats.new()
            x, converged = dag_push.solve(g, system, tol=tol, max_iter=1000, stats=stats)
            assert converged and stats["state"] == "vertex" and "finished_by" not in stats
            assert stats["error_bound"] <= tol
            assert np.abs(x - exact).sum() <= tol
    finally:
        numba.set_num_threads(old)


def test_chunk_pending_folds_and_resets_the_accumulators():
    from digraph.smx.cpu import scc_split as K
    rng = np.random.default_rng(0)
    bounds = np.array([5, 9, 12, 20], np.int64)  # three chunks of positions 5:20
    rl = rng.random(25)
    acc = rng.random((3, 15))
    seen = acc * rng.random((3, 15))
    want = rl.copy()
    for t in range(3):
        for j in range(bounds[t], bounds[t + 1]):
            want[j] += sum(acc[q, j - 5] - seen[q, j - 5] for q in range(3) if q != t)
    own = np.zeros((3, 15), bool)
    for t in range(3):
        own[t, bounds[t] - 5:bounds[t + 1] - 5] = True
    acc_own, seen_own = acc[own].copy(), seen[own].copy()  # a thread's entries for its own chunk
    out = np.zeros((3, 2))
    K.chunk_pending(bounds, rl, acc, seen, out)
    np.testing.assert_allclose(rl, want, rtol=1e-15)
    assert not acc[~own].any() and not seen[~own].any()
    np.testing.assert_array_equal(acc[own], acc_own)  # never pushed into, left as they were
    np.testing.assert_array_equal(seen[own], seen_own)
    for t in range(3):
        part = np.abs(want[bounds[t]:bounds[t + 1]])
        assert out[t, 0] == pytest.approx(part.sum()) and out[t, 1] == pytest.approx(part.max())


def test_acyclic_graph_runs_every_vertex_once():
    # a binary tree into a chain: no cycle, so every component is one vertex, evaluated once
    n = 500
    src = np.concatenate([np.arange(1, n) // 2, np.arange(n - 1)])
    dst = np.concatenate([np.arange(1, n), np.arange(1, n)])
    g = Graph.from_arrays(src, dst)
    r = digraph.run(g, "pagerank", mode="scc", tol=1e-12)
    s = r.stats
    assert s["dag"]["scc_vertices"] == s["dag"]["scc_ran"] == s["dag"]["scc_ran_once"] == n
    assert s["scc"]["sweeps"] == 0 == s["rounds"] == sum(s["dag"]["layer_rounds"])
    # the chain: one level per vertex
    assert s["dag"]["layers"] == len(s["dag"]["layer_rounds"]) == n
    assert s["arc_updates"] == g.num_arcs  # every arc pulled once, nothing pushed
    assert np.abs(r.values - digraph.algorithms.PageRank().reference(g)).sum() <= 1e-12


def test_counters_add_up_and_priority_sends_less():
    rng = np.random.default_rng(3)
    n = 3000
    g = Graph.from_arrays(rng.integers(0, n, 24000), rng.integers(0, n, 24000), num_vertices=n)
    exact = digraph.algorithms.PageRank().reference(g)
    runs = {}
    for prio in ("pending", "none"):
        r = digraph.run(g, "pagerank", mode="scc", priority=prio, tol=1e-9)
        s = runs[prio] = r.stats
        assert np.abs(r.values - exact).sum() <= 1e-9
        assert s["error_bound"] <= 1e-9 and "finished_by" not in s
        dag = s["dag"]
        assert sum(dag["layer_rounds"]) == s["rounds"] and len(dag["layer_rounds"]) == dag["layers"]
        assert sum(s["dag"]["layer_arc_updates"]) == s["arc_updates"] == s["dag"]["arcs_examined"]
        assert 0 <= s["dag"]["scc_ran_once"] <= s["dag"]["scc_ran"] == s["dag"]["scc_vertices"]
        assert s["time_preprocess"] >= 0 and s["scc"]["vertex_order"] == "vertex"
    assert runs["pending"]["dag"]["priority"] == "pending"
    assert runs["none"]["dag"]["priority"] == "none"
    assert runs["pending"]["arc_updates"] < runs["none"]["arc_updates"]


def test_path_order_gives_the_same_answer():
    rng = np.random.default_rng(7)
    n = 800
    g = Graph.from_arrays(rng.integers(0, n, 6000), rng.integers(0, n, 6000), num_vertices=n)
    system = digraph.algorithms.PageRank().prepare(g, alpha=0.85, personalization=None,
                                                   weights=True)
    ps = digraph.preprocess(g)
    exact = digraph.algorithms.PageRank().reference(g)
    for order in ("vertex", "path"):
        stats = digraph.result.RunStats.new()
        x, ok = dag_push.solve(g, system, tol=1e-10, max_iter=10**5, stats=stats, order=order,
                               pathset=ps)
        assert ok and stats["vertex_order"] == order
        assert np.abs(x / x.sum() - exact).sum() <= 1e-10
    with pytest.raises(InvalidParameterError):
        dag_push.solve(g, system, tol=1e-10, max_iter=10, stats=digraph.result.RunStats.new(),
                       order="random")


def test_out_of_rounds_is_reported():
    rng = np.random.default_rng(1)
    n = 500
    g = Graph.from_arrays(rng.integers(0, n, 5000), rng.integers(0, n, 5000), num_vertices=n)
    with pytest.raises(ConvergenceError) as ei:
        digraph.run(g, "pagerank", mode="scc", tol=1e-12, max_iter=3)
    s = ei.value.result.stats
    assert not s["converged"] and s["error_bound"] > 1e-12
    assert max(s["dag"]["layer_rounds"]) <= 3  # every component stopped after max_iter sweeps
    # and every component ran: a whole partial answer
    assert s["dag"]["scc_ran"] == s["dag"]["scc_vertices"]


@settings(max_examples=25, **SETTINGS)
@given(g=graphs())
def test_condensation_structure(g):
    c = Condensation(g)
    n = g.num_vertices
    order = c.order
    assert np.array_equal(np.sort(order), np.arange(n))
    pos = np.empty(n, np.int64)
    pos[order] = np.arange(n)
    comp = np.repeat(np.arange(c.num_components), np.diff(c.comp_offsets))[pos]
    # the components are the strongly connected components
    a = sp.csr_matrix((np.ones(g.num_arcs), (g.arc_sources, g.out_targets)), shape=(n, n))
    k, lab = connected_components(a, directed=True, connection="strong")
    assert k == c.num_components
    pairs = set(zip(comp.tolist(), lab.tolist()))
    assert len(pairs) == k
    # levels: every arc between components goes to a strictly higher level
    level = np.repeat(np.arange(c.num_levels), np.diff(c.level_offsets))
    s, t = g.arc_sources, g.out_targets
    between = comp[s] != comp[t]
    assert np.all(level[comp[s][between]] < level[comp[t][between]])
    # the arcs are split exactly: inside arcs pushed, the others pulled once
    assert c.iout_targets.size == int((~between).sum())
    assert c.ein_sources.size == int(between.sum())
    assert c.comp_arcs.sum() == c.iout_targets.size
    assert np.array_equal(np.sort(np.concatenate([c.iout_arcs, c.ein_arcs])), np.arange(g.num_arcs))


def test_condensation_is_cached_on_the_graph():
    g = Graph.from_arrays([0, 1, 2], [1, 2, 0])
    c1, t1 = condensation_for(g)
    c2, t2 = condensation_for(g)
    assert c1 is c2 and t2 == 0.0 and c1.num_components == 1


def test_scc_mode_errors():
    g = Graph.from_arrays([0, 1, 2], [1, 2, 0])
    assert digraph.run(g, "pagerank", mode="path").stats["dag"]["state"] == "arc"  # walks paths
    assert digraph.run(g, "sssp", source=0, mode="path").stats["dag"]["state"] == "arc"
    bad = [dict(mode="scc", layer_window=2), dict(mode="scc", priority="paper"),
           dict(mode="scc", cache="x"), dict(mode="scc", short_path_push=1),
           dict(mode="path", state="vertex")]  # several GPUs: test_gpu_scc.py
    for kw in bad:
        with pytest.raises(InvalidParameterError):
            digraph.run(g, "pagerank", **kw)
    with pytest.raises(InvalidParameterError, match="linear"):
        digraph.run(g, "sssp", source=0, mode="scc")


@pytest.mark.datasets
def test_cnr2000_pagerank(datasets):
    from conftest import dataset_path
    from digraph.dispatch.route import RouteSettings
    from digraph.dispatch.settings import using
    g = digraph.load(dataset_path("cnr-2000.txt.gz"))
    # the probe hands over as soon as it trips: its judge weighs measured seconds, which no
    # test can pin (tests/dispatch/test_power.py tests the judge itself)
    with using(RouteSettings(probe_judge_rounds=0)):
        r = digraph.run(g, "pagerank", tol=1e-8)
    assert r.stats["mode"] == "scc" and r.stats["dag"]["state"] == "vertex" and r.stats["converged"]
    ref = digraph.run(g, "pagerank", mode="bsp", tol=1e-10)
    assert np.abs(r.values - ref.values).sum() <= 1e-8 + 1e-10
    # the arc-update goal of issue 4: at most 0.30x bsp's
    b = digraph.run(g, "pagerank", mode="bsp", tol=1e-8)
    assert r.stats["arc_updates"] <= 0.30 * b.stats["arc_updates"]


@settings(max_examples=25, **SETTINGS)
@given(g=graphs())
def test_quick_contraction_is_the_column_bound(g):
    from digraph.dispatch.convergence import linear_contraction, quick_contraction
    pr = digraph.algorithms.PageRank()
    system = pr.prepare(g, alpha=0.85, personalization=None, weights=False)
    g1, ginf = quick_contraction(g, system)
    e1, einf = linear_contraction(g, system)
    assert g1 == pytest.approx(e1, rel=1e-12, abs=0)
    assert ginf == np.inf or ginf == pytest.approx(einf)
    weighted = pr.prepare(g, alpha=0.85, personalization=None, weights=True)
    if g.num_arcs:  # arc factors: the full pass
        assert quick_contraction(g, weighted) == linear_contraction(g, weighted)


def test_auto_split_kind_and_the_estimates(engine_settings):
    from digraph.dispatch.engines.scc.cpu import split_plan
    rng = np.random.default_rng(11)
    n = 4000
    g = Graph.from_arrays(rng.integers(0, n, 40000), rng.integers(0, n, 40000), num_vertices=n)
    exact = digraph.algorithms.PageRank().reference(g)
    _scc_settings(engine_settings, split_arcs=1000, split_cross_cost=0.0)
    r = digraph.run(g, "pagerank", mode="scc", threads=2, tol=1e-10)
    assert r.stats["scc"]["split"] == 1 and r.stats["mode"] == "scc"
    cond = condensation_for(g)[0]
    c = int(np.argmax(cond.comp_arcs))
    bounds, cap, cross = split_plan(cond, c, 2)
    assert cap.sum() == cap[0, 1] + cap[1, 0] and 0.3 < cross < 0.7  # a random graph: about half
    assert np.abs(r.values - exact).sum() <= 1e-10
    # one giant component: PageRank goes to the Google-matrix power iteration
    r = digraph.run(g, "pagerank", threads=2, tol=1e-10)
    assert r.stats["mode"] == "power" and "largest component holds" in r.stats["route"]["reason"]
    assert np.abs(r.values - exact).sum() <= 1e-10
    # where the estimates make bsp the cheaper, a linear system that is no PageRank runs bsp's
    # dense rounds (the estimate reads the share of the arcs in split components)
    engine_settings(route.DEFAULT, scc_ratio_base=2.0, bsp_share=1.01)
    seeds = [int(g.vertex_ids[0])]
    exact = digraph.algorithms.Adsorption().reference(g, seeds=seeds)
    r = digraph.run(g, "adsorption", seeds=seeds, threads=2, tol=1e-10)
    route_ = r.stats["route"]
    assert r.stats["mode"] == "bsp" and route_["code"] == "estimated"
    assert "split over 2 threads" in route_["reason"]
    assert r.stats["dense_rounds"] > 0 and np.abs(r.values - exact).sum() <= 1e-10


@pytest.mark.parametrize("route", ["pagerank", "weighted", "adsorption"])
def test_small_components_are_solved_exactly(route, engine_settings):
    """Components of at most ``direct_vertices`` vertices (here 2-cycles, 3-cycles with a chord
    and vertices with a loop, in a chain of components) are solved by elimination in one pass:
    no sweep, the answer within tol of the reference, as the sweeps' (L1 route: PageRank, with
    and without arc weights, i.e. per-arc factors; L∞ route: adsorption)."""
    rng = np.random.default_rng(4)
    src, dst, base = [], [], 0
    for k in range(300):
        size = (1, 2, 3)[k % 3]
        ids = base + np.arange(size)
        src += list(ids)
        dst += list(np.roll(ids, -1))  # a loop, a 2-cycle or a 3-cycle
        if size == 3:
            src.append(ids[0])
            dst.append(ids[2])
        if base:  # from a random earlier component: a chain of components
            src.append(int(rng.integers(0, base)))
            dst.append(int(ids[0]))
        base += size
    weight = rng.uniform(0.5, 3.0, len(src)) if route == "weighted" else None
    g = Graph.from_arrays(np.array(src), np.array(dst), weight, num_vertices=base)
    algos = digraph.algorithms
    if route in ("pagerank", "weighted"):
        ref = algos.PageRank().reference(g)
        run = lambda: digraph.run(g, "pagerank", mode="scc", tol=1e-12)  # noqa: E731
    else:
        ref = algos.Adsorption().reference(g, seeds=[0, 5])
        run = lambda: digraph.run(g, "adsorption", seeds=[0, 5], mode="scc", tol=1e-12)  # noqa: E731
    r = run()
    assert r.stats["scc"]["direct"] == 300 and r.stats["scc"]["sweeps"] == 0
    assert r.stats["converged"] and np.abs(r.values - ref).sum() <= 1e-12
    _scc_settings(engine_settings, direct_vertices=0)
    swept = run()
    assert swept.stats["scc"]["direct"] == 0 and swept.stats["scc"]["sweeps"] > 300
    assert np.abs(swept.values - ref).sum() <= 1e-12
