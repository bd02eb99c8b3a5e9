"""The asynchronous modes (path, path-nopriority, vertex-async): answers, lost updates, counters."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import digraph
from digraph.algorithms import REQUIRED, Algorithm, LinearSystem
from digraph.errors import InvalidParameterError
from digraph.graph import Graph

ASYNC_MODES = ["path", "path-nopriority", "vertex-async"]
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def graphs(draw):
    n = draw(st.integers(1, 30))
    m = draw(st.integers(0, 90))
    src = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    dst = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    w = draw(st.lists(st.integers(1, 9), min_size=m, max_size=m))
    return Graph.from_arrays(np.array(src, np.int64), np.array(dst, np.int64),
                             np.array(w, np.float64), num_vertices=n)


@pytest.mark.parametrize("threads", [1, 2, 4])
@pytest.mark.parametrize("mode", ASYNC_MODES)
@settings(max_examples=12, **SETTINGS)
@given(g=graphs(), data=st.data())
def test_every_algorithm_matches_its_reference(mode, threads, g, data):
    algos = digraph.algorithms
    src = data.draw(st.integers(0, g.num_vertices - 1))
    r = digraph.run(g, "pagerank", mode=mode, threads=threads, tol=1e-10)
    assert np.abs(r.values - algos.PageRank().reference(g)).sum() <= 1e-10
    r = digraph.run(g, "adsorption", seeds=[src], mode=mode, threads=threads, tol=1e-10)
    assert np.abs(r.values - algos.Adsorption().reference(g, seeds=[src])).sum() <= 1e-10
    r = digraph.run(g, "sssp", source=src, mode=mode, threads=threads)
    assert np.array_equal(r.values, algos.SSSP().reference(g, src))
    if mode.startswith("path"):  # k-core: no path mode (its dependencies are undirected)
        with pytest.raises(InvalidParameterError, match="k-core"):
            digraph.run(g, "kcore", mode=mode, threads=threads)
        return
    r = digraph.run(g, "kcore", mode=mode, threads=threads)
    assert np.array_equal(r.values, algos.KCore().reference(g))


class Gather(Algorithm):
    """x_v = b_v + Σ_{u→v} x_u · c: sources keep b_u, so the hub must receive exactly Σ c·b_u."""

    name = "gather"
    parameters = {"c": REQUIRED}

    def prepare(self, graph, c):
        b = np.arange(1, graph.num_vertices + 1, dtype=np.float64)
        return LinearSystem(b=b, src_scale=np.full(graph.num_vertices, c))


@pytest.mark.parametrize("threads", [2, 4])
@pytest.mark.parametrize("mode", ASYNC_MODES)
def test_no_lost_update_into_a_hub(mode, threads):
    # 20,000 one-arc paths into vertex 0, processed by several threads at once
    k = 20_000
    src = np.arange(1, k + 1)
    g = Graph.from_arrays(src, np.zeros(k, np.int64))
    c = 1e-5
    r = digraph.run(g, Gather(), c=c, mode=mode, threads=threads, tol=1e-9)
    expected = 1.0 + c * np.arange(2, k + 2, dtype=np.float64).sum()
    assert r.values[0] == pytest.approx(expected, rel=1e-12, abs=0)
    assert np.array_equal(r.values[1:], np.arange(2, k + 2, dtype=np.float64))


def test_priorities_agree_and_count_honestly():
    rng = np.random.default_rng(3)
    n = 2000
    g = Graph.from_arrays(rng.integers(0, n, 16000), rng.integers(0, n, 16000), num_vertices=n)
    exact = digraph.algorithms.PageRank().reference(g)
    for prio in ("pending", "paper", "none"):
        r = digraph.run(g, "pagerank", mode="path", priority=prio, tol=1e-9)
        st_ = r.stats
        assert np.abs(r.values - exact).sum() <= 1e-9
        assert st_["dag"]["priority"] == prio
        assert sum(st_["path"]["processed_path_lengths"].values()) == st_["paths_processed"]
        assert sum(st_["dag"]["layer_arc_updates"]) == st_["arc_updates"]
        assert sum(st_["dag"]["layer_rounds"]) == st_["rounds"]
        dag = st_["dag"]
        assert 0 <= dag["scc_ran_once"] <= dag["scc_ran"] <= dag["scc_vertices"]
        assert st_["dag"]["arcs_examined"] >= st_["arc_updates"]


def test_dag_order_runs_acyclic_graphs_once():
    # a chain of SCC-free layers: every SCC-vertex runs exactly once (Observation 2)
    n = 200
    g = Graph.from_arrays(np.arange(n - 1), np.arange(1, n))
    r = digraph.run(g, "sssp", source=0, mode="path-nopriority")
    assert np.array_equal(r.values, np.arange(n, dtype=float))
    assert r.stats["dag"]["scc_ran"] == r.stats["dag"]["scc_ran_once"]


def test_cache_and_preprocess_parameters(tmp_path):
    rng = np.random.default_rng(0)
    g = Graph.from_arrays(rng.integers(0, 300, 2000), rng.integers(0, 300, 2000))
    cache = tmp_path / "paths"
    a = digraph.run(g, "pagerank", mode="path", cache=cache, preprocess={"dmax": 8}, tol=1e-10)
    assert (cache / "manifest.json").exists()
    b = digraph.run(g, "pagerank", mode="path", cache=cache, preprocess={"dmax": 8}, tol=1e-10)
    assert np.abs(a.values - b.values).sum() <= 2e-10
    assert b.stats["time_preprocess"] >= 0


def test_the_path_set_is_built_once_per_graph_and_parameters(monkeypatch):
    import sys
    P = sys.modules["digraph.preprocess"]  # the package (digraph.preprocess is its function)
    built = []
    real = P.preprocess

    def counting(graph, **params):
        if graph is g:  # not the warm-up's tiny graph
            built.append(params)
        return real(graph, **params)
    monkeypatch.setattr(P, "preprocess", counting)
    rng = np.random.default_rng(1)
    g = Graph.from_arrays(rng.integers(0, 200, 1200), rng.integers(0, 200, 1200))
    a = digraph.run(g, "pagerank", mode="path", tol=1e-10)
    b = digraph.run(g, "pagerank", mode="path-nopriority", tol=1e-10)
    c = digraph.run(g, "sssp", source=g.vertex_ids[0], mode="path",
                    preprocess={"jobs": 1})  # jobs does not change the paths
    assert len(built) == 1
    assert np.abs(a.values - b.values).sum() <= 4e-10
    assert np.array_equal(c.values, digraph.run(g, "sssp", source=g.vertex_ids[0]).values)
    d = digraph.run(g, "pagerank", mode="path", tol=1e-10, preprocess={"dmax": 4})
    assert len(built) == 2 and built[1] == {"dmax": 4}
    assert np.abs(a.values - d.values).sum() <= 4e-10


@pytest.mark.parametrize("kw", [dict(mode="bsp", priority="pending"),
                                dict(mode="vertex-async", cache="x"),
                                dict(mode="path-nopriority", priority="pending"),
                                dict(mode="path", priority="fastest")])
def test_path_options_refused_where_they_do_not_apply(kw):
    g = Graph.from_arrays([0, 1], [1, 0])
    with pytest.raises(InvalidParameterError):
        digraph.run(g, "pagerank", **kw)


@pytest.mark.parametrize("dag,skip", [(False, True), (True, False), (False, False)])
def test_ablation_switches_keep_the_answer(dag, skip):
    from digraph.dispatch.engines.path import cpu as paths
    from digraph.result import RunStats
    rng = np.random.default_rng(5)
    g = Graph.from_arrays(rng.integers(0, 400, 3000), rng.integers(0, 400, 3000), num_vertices=400)
    algo = digraph.algorithms.PageRank()
    system = algo.prepare(g, alpha=0.85, personalization=None, weights=True)
    stats = RunStats.new()
    x, ok = paths.solve(g, system, tol=1e-10, max_iter=10_000, stats=stats,
                        pathset=digraph.preprocess(g), priority="none", dag=dag, skip=skip)
    assert ok and stats["ablation"] == {"dag": dag, "skip": skip}
    assert np.abs(algo.finalize(g, x) - algo.reference(g)).sum() <= 1e-10
