"""Running ahead into the next DAG layers (``layer_window``) in the CPU path modes: answers
against the references for every algorithm and a user-defined one, threads 1 and 2, the
finishing rule (a layer finishes only as the lowest unfinished one), counters, thread-count
independence and the run() parameter.
"""

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import digraph
from digraph.dispatch.engines.path import cpu as paths
from digraph.graph import Graph
from digraph.result import RunStats
from test_short_paths import (FIG3_DST, FIG3_SRC, FIG3_W, SETTINGS, SMALL_PARTS, Katz, WidestPath,
                              graphs, katz_reference, widest_reference)

# (layer_window, run_ahead_local)
WINDOWS = [(1, False), (2, False), (0, False), (2, True), (3, True), (0, True)]


def solve(g, ps, algo, params, window, ahead_local, threads, tol=1e-11, **kw):
    system = algo.prepare(g, **algo.bind(g, params))
    stats = RunStats.new()
    old = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        x, ok = paths.solve(g, system, tol=tol, max_iter=100_000, stats=stats, pathset=ps,
                            layer_window=window, run_ahead_local=ahead_local, **kw)
    finally:
        numba.set_num_threads(old)
    assert ok
    if system.family == "hindex" and system.halve:
        x = x // 2
    return algo.finalize(g, x, **algo.bind(g, params)), stats


def check_counters(s, window, tol=1e-11):
    assert s["layer_window"] == window
    # certified on the residual recomputed from the state (convergence.certified)
    assert s["error_bound"] <= tol or s.get("floor_limited")
    assert sum(s["layer_arc_updates"]) == s["arc_updates"]
    assert s["vertex_updates"] == s["arc_updates"]
    assert sum(s["processed_path_lengths"].values()) == s["paths_processed"]
    assert 0 <= s.get("run_ahead_arc_updates", 0) <= s["arc_updates"]
    if window == 1:
        assert "run_ahead_arc_updates" not in s
    # a round walks at least one layer; a layer counts the rounds that walked it
    if not s.get("finished_by"):
        assert max(s["layer_rounds"], default=0) <= s["rounds"] <= sum(s["layer_rounds"])
    assert 0 <= s["scc_ran_once"] <= s["scc_ran"] <= s["scc_vertices"]


def check_all(g, ps, threads, src, window, ahead_local, priority="pending"):
    algos = digraph.algorithms
    n = g.num_vertices
    kw = dict(priority=priority)
    x, s = solve(g, ps, algos.PageRank(), {}, window, ahead_local, threads, **kw)
    assert np.abs(x - algos.PageRank().reference(g)).sum() <= 1e-10
    check_counters(s, window)
    x, s = solve(g, ps, algos.Adsorption(), {"seeds": [src]}, window, ahead_local, threads, **kw)
    assert np.abs(x - algos.Adsorption().reference(g, seeds=[src])).sum() <= 1e-10
    check_counters(s, window)
    x, s = solve(g, ps, algos.SSSP(), {"source": src}, window, ahead_local, threads, **kw)
    assert np.array_equal(x, algos.SSSP().reference(g, src))
    x, _ = solve(g, ps, algos.KCore(), {}, window, ahead_local, threads, **kw)
    assert np.array_equal(x, algos.KCore().reference(g))
    x, s = solve(g, ps, WidestPath(), {"source": src}, window, ahead_local, threads, **kw)
    assert np.array_equal(x, widest_reference(g, src))
    beta = 0.5 / max(1.0, float(np.bincount(g.out_targets, g.arc_weights(), minlength=n).max()),
                     float(np.bincount(g.arc_sources, g.arc_weights(), minlength=n).max()))
    x, s = solve(g, ps, Katz(), {"beta": beta}, window, ahead_local, threads, **kw)
    exact = katz_reference(g, beta)
    assert np.abs(x - exact).sum() <= 1e-10 + 1e-12 * np.abs(exact).sum()
    check_counters(s, window)


@pytest.mark.parametrize("threads", [1, 2])
@settings(max_examples=10, **SETTINGS)
@given(g=graphs(), data=st.data(), small_parts=st.booleans())
def test_windows_match_the_references(threads, g, data, small_parts):
    src = data.draw(st.integers(0, g.num_vertices - 1))
    ps = digraph.preprocess(g, **(SMALL_PARTS if small_parts else {}))
    window, ahead_local = data.draw(st.sampled_from(WINDOWS))
    priority = data.draw(st.sampled_from(["pending", "paper", "none"]))
    check_all(g, ps, threads, src, window, ahead_local, priority)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("window,ahead_local", WINDOWS)
@pytest.mark.parametrize("prep", [{}, SMALL_PARTS, {"partition_arcs": 2, "hot_ratio": 0.0}])
def test_figure3_graph(threads, window, ahead_local, prep):
    g = digraph.load((FIG3_SRC, FIG3_DST, FIG3_W))
    check_all(g, digraph.preprocess(g, **prep), threads, 0, window, ahead_local)


def chain_of_cycles(k=6, size=400, seed=3):
    """``k`` random strongly connected blocks, block i feeding block i+1: k cyclic layers."""
    rng = np.random.default_rng(seed)
    src, dst = [], []
    for b in range(k):
        base = b * size
        ring = np.arange(size)
        src += [base + ring, base + rng.integers(0, size, 4 * size)]
        dst += [base + (ring + 1) % size, base + rng.integers(0, size, 4 * size)]
        if b:
            src.append(base - size + rng.integers(0, size, size))
            dst.append(base + rng.integers(0, size, size))
    return Graph.from_arrays(np.concatenate(src), np.concatenate(dst), num_vertices=k * size)


@pytest.mark.parametrize("threads", [1, 2])
def test_running_ahead_overlaps_the_layers(threads):
    g = chain_of_cycles()
    ps = digraph.preprocess(g, partition_arcs=256)
    algo = digraph.algorithms.PageRank()
    exact = algo.reference(g)
    x1, s1 = solve(g, ps, algo, {}, 1, False, threads, tol=1e-9)
    assert np.abs(x1 - exact).sum() <= 1e-9
    for window, ahead_local in WINDOWS[1:]:
        x, s = solve(g, ps, algo, {}, window, ahead_local, threads, tol=1e-9)
        assert np.abs(x - exact).sum() <= 1e-9
        assert s.get("path_sweeps", 1) == 1 and not s.get("finished_by")
        check_counters(s, window, 1e-9)
        assert s["run_ahead_arc_updates"] > 0
        if ahead_local and window != 2 and threads == 1:  # the whole chain overlaps
            # (with 2 threads the overlap depends on how the threads interleave: a loaded CI
            # machine gave 181 rounds against 199, so only one thread is held to it)
            assert s["rounds"] < 0.8 * s1["rounds"]
        # every cyclic layer still ran, and the last one for at least as long as layer by layer
        assert all(r > 0 for r in s["layer_rounds"][:6])


def test_acyclic_graph_still_runs_each_vertex_once():
    # without run-ahead of whole-SCC partitions, the DAG sketch's one run per SCC-vertex holds
    rng = np.random.default_rng(5)
    n = 2000
    a, b = rng.integers(0, n, 8000), rng.integers(0, n, 8000)
    g = Graph.from_arrays(np.minimum(a, b), np.maximum(a, b), num_vertices=n)
    ps = digraph.preprocess(g)
    algo = digraph.algorithms.PageRank()
    _, s1 = solve(g, ps, algo, {}, 1, False, 2, tol=1e-9)
    assert s1["scc_ran_once"] >= 0.99 * s1["scc_ran"]
    for window in (2, 0):
        x, s = solve(g, ps, algo, {}, window, False, 2, tol=1e-9)
        assert np.abs(x - algo.reference(g)).sum() <= 1e-9
        # every partition holds whole SCC-vertices: nothing runs ahead, the same schedule
        assert s["scc_ran_once"] == s1["scc_ran_once"] and s["scc_ran"] == s1["scc_ran"]
        assert s["layer_rounds"] == s1["layer_rounds"] and s.get("run_ahead_arc_updates", 0) == 0


def test_thread_count_independence():
    g = chain_of_cycles(k=4, size=300, seed=8)
    ps = digraph.preprocess(g, partition_arcs=128)
    algo = digraph.algorithms.PageRank()
    for window, ahead_local in WINDOWS:
        a, _ = solve(g, ps, algo, {}, window, ahead_local, 1, tol=1e-10)
        b, _ = solve(g, ps, algo, {}, window, ahead_local, 2, tol=1e-10)
        assert np.abs(a - b).sum() <= 2e-10
        s1, _ = solve(g, ps, digraph.algorithms.SSSP(), {"source": 0}, window, ahead_local, 1)
        s2, _ = solve(g, ps, digraph.algorithms.SSSP(), {"source": 0}, window, ahead_local, 2)
        assert np.array_equal(s1, s2)


def test_run_api_parameter_and_errors():
    from test_short_paths import check_path_parameter
    check_path_parameter(chain_of_cycles(k=3, size=50), "layer_window", (0, 1, 2),
                         paths.DEFAULT.layer_window)


@pytest.mark.parametrize("window,ahead_local", WINDOWS)
def test_out_of_rounds_is_reported(window, ahead_local):
    g = chain_of_cycles()
    ps = digraph.preprocess(g, partition_arcs=256)
    system = digraph.algorithms.PageRank().prepare(g, alpha=0.85, personalization=None,
                                                   weights=True)
    stats = RunStats.new()
    x, ok = paths.solve(g, system, tol=1e-9, max_iter=50, stats=stats, pathset=ps,
                        layer_window=window, run_ahead_local=ahead_local)
    assert not ok and stats["rounds"] == 50
    assert sum(stats["layer_arc_updates"]) == stats["arc_updates"]
    assert np.all(np.isfinite(x))
