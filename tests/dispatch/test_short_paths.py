"""Short cold paths pushed at vertex level (``short_path_push``) and the check fused into the walk
(``fuse_check``) in the CPU path modes: answers against the references for every algorithm and a
user-defined one, threads 1 and 2, the structure of the short-arc groups, lost updates, counters.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import digraph
from digraph.algorithms import REQUIRED, Algorithm, LinearSystem, MonotoneSystem
from digraph.dispatch.engines.path import cpu as paths
from digraph.dispatch.engines.path import cpu_schedule
from digraph.errors import InvalidParameterError
from digraph.graph import Graph
from digraph.result import RunStats
from digraph.smx.cpu import paths_setup

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])
# small partitions: SCC-vertices split over several partitions, groups cut at their borders
SMALL_PARTS = {"partition_arcs": 4, "hot_ratio": 0.2}
VARIANTS = [(0, True), (1, True), (2, False), (16, True), (16, False)]  # (short_path_push, fuse)

# A graph after the DiGraph paper's Figure 3 (as in tests/dispatch/cuda/test_gpu.py): 13 vertices on six paths,
# p1 = v0..v5, a hot vertex v6 on three paths, p6 closing a cycle back to v1.
FIG3 = [[0, 1, 2, 3, 4, 5], [5, 6, 7, 8], [8, 9, 10, 11, 12], [1, 6, 3], [2, 6, 9], [12, 1]]
FIG3_SRC = np.array([a for p in FIG3 for a in p[:-1]])
FIG3_DST = np.array([b for p in FIG3 for b in p[1:]])
FIG3_W = np.linspace(0.5, 3.0, FIG3_SRC.size)


class WidestPath(Algorithm):
    """Largest bottleneck weight from ``source`` (a user-defined monotone system)."""

    name = "widest_path"
    parameters = {"source": REQUIRED}

    def prepare(self, graph, source):
        s = graph.index_of(source, "source")
        init = np.full(graph.num_vertices, -np.inf)
        init[s] = np.inf
        return MonotoneSystem(init=init, relax="min", combine="max", arc_value=graph.arc_weights())


class Katz(Algorithm):
    """x_v = 1 + beta · Σ_{u→v} w_uv · x_u (a user-defined linear system)."""

    name = "katz"
    parameters = {"beta": 0.05}

    def prepare(self, graph, beta):
        n = graph.num_vertices
        return LinearSystem(b=np.ones(n), src_scale=np.full(n, float(beta)),
                            arc_scale=graph.weights)


def widest_reference(g, s):
    """Bellman-Ford style fixed point of the widest path (tiny graphs)."""
    n = g.num_vertices
    src, dst, w = g.arc_sources, g.out_targets, g.arc_weights()
    x = np.full(n, -np.inf)
    x[s] = np.inf
    for _ in range(n + 1):
        cand = np.minimum(x[src], w)
        new = x.copy()
        np.maximum.at(new, dst, cand)
        if np.array_equal(new, x):
            break
        x = new
    return x


def katz_reference(g, beta):
    n = g.num_vertices
    A = np.zeros((n, n))
    np.add.at(A, (g.out_targets, g.arc_sources), g.arc_weights())
    return np.linalg.solve(np.eye(n) - beta * A, np.ones(n))


def solve(g, ps, algo, params, k, fuse, threads, tol=1e-11):
    """``paths.solve`` with a given representation; returns (finalized values, stats)."""
    import numba
    system = algo.prepare(g, **algo.bind(g, params))
    stats = RunStats.new()
    old = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        x, ok = paths.solve(g, system, tol=tol, max_iter=100_000, stats=stats, pathset=ps,
                            short_path_push=k, fuse_check=fuse)
    finally:
        numba.set_num_threads(old)
    assert ok
    if system.family == "hindex" and system.halve:
        x = x // 2
    return algo.finalize(g, x, **algo.bind(g, params)), stats


def check_all(g, ps, threads, src, k, fuse):
    algos = digraph.algorithms
    n = g.num_vertices
    x, st_ = solve(g, ps, algos.PageRank(), {}, k, fuse, threads)
    assert np.abs(x - algos.PageRank().reference(g)).sum() <= 1e-10
    check_counters(g, st_, k)
    x, st_ = solve(g, ps, algos.Adsorption(), {"seeds": [src]}, k, fuse, threads)
    assert np.abs(x - algos.Adsorption().reference(g, seeds=[src])).sum() <= 1e-10
    check_counters(g, st_, k)
    x, st_ = solve(g, ps, algos.SSSP(), {"source": src}, k, fuse, threads)
    assert np.array_equal(x, algos.SSSP().reference(g, src))
    check_counters(g, st_, k)
    x, _ = solve(g, ps, algos.KCore(), {}, k, fuse, threads)
    assert np.array_equal(x, algos.KCore().reference(g))
    x, st_ = solve(g, ps, WidestPath(), {"source": src}, k, fuse, threads)
    assert np.array_equal(x, widest_reference(g, src))
    check_counters(g, st_, k)
    beta = 0.5 / max(1.0, float(np.bincount(g.out_targets, g.arc_weights(), minlength=n).max()),
                     float(np.bincount(g.arc_sources, g.arc_weights(), minlength=n).max()))
    x, st_ = solve(g, ps, Katz(), {"beta": beta}, k, fuse, threads)
    exact = katz_reference(g, beta)
    assert np.abs(x - exact).sum() <= 1e-10 + 1e-12 * np.abs(exact).sum()
    check_counters(g, st_, k)


def check_counters(g, s, k):
    assert s["short_path_push"] == k
    assert sum(s["layer_arc_updates"]) == s["arc_updates"]
    assert s["vertex_updates"] == s["arc_updates"]
    assert sum(s["processed_path_lengths"].values()) == s["paths_processed"]
    assert s["arcs_examined"] >= s["arc_updates"] or s.get("finished_by")
    assert 0 <= s["pushed_arcs"] <= g.num_arcs
    assert s["vertex_pushes"] <= s["arc_updates"] or s.get("finished_by")
    if k == 0:
        assert s["pushed_arcs"] == 0 and s["push_groups"] == 0 and s["vertex_pushes"] == 0
    assert 0 <= s["scc_ran_once"] <= s["scc_ran"] <= s["scc_vertices"]


@st.composite
def graphs(draw):
    n = draw(st.integers(1, 24))
    m = draw(st.integers(0, 70))
    src = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    dst = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    w = draw(st.lists(st.integers(1, 9), min_size=m, max_size=m))
    return Graph.from_arrays(np.array(src, np.int64), np.array(dst, np.int64),
                             np.array(w, np.float64), num_vertices=n)


@pytest.mark.parametrize("threads", [1, 2])
@settings(max_examples=10, **SETTINGS)
@given(g=graphs(), data=st.data(), small_parts=st.booleans())
def test_representations_match_the_references(threads, g, data, small_parts):
    src = data.draw(st.integers(0, g.num_vertices - 1))
    ps = digraph.preprocess(g, **(SMALL_PARTS if small_parts else {}))
    k, fuse = data.draw(st.sampled_from(VARIANTS))
    check_all(g, ps, threads, src, k, fuse)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("k,fuse", VARIANTS)
@pytest.mark.parametrize("prep", [{}, SMALL_PARTS, {"partition_arcs": 2, "hot_ratio": 0.0}])
def test_figure3_graph(threads, k, fuse, prep):
    g = digraph.load((FIG3_SRC, FIG3_DST, FIG3_W))
    ps = digraph.preprocess(g, **prep)
    check_all(g, ps, threads, 0, k, fuse)
    if k >= 5:  # every path of the figure is at most 5 arcs long: only hot multi-arc ones walked
        rep = cpu_schedule.representation(ps, k, {})
        walked = ps.path_lengths[rep.walk_paths]
        assert np.all(np.asarray(ps.path_hot)[rep.walk_paths] & (walked > 1))


def check_path_parameter(g, name, values, default):
    """A CPU path-mode parameter of ``digraph.run``: each of ``values`` gives the exact PageRank
    and is reported in ``stats["path"]``; ``default`` when absent; bad values and other modes and
    devices refused."""
    exact = digraph.algorithms.PageRank().reference(g)
    for v in values:
        r = digraph.run(g, "pagerank", mode="path", tol=1e-10, **{name: v})
        assert np.abs(r.values - exact).sum() <= 1e-10
        assert r.stats["path"][name] == v
    r = digraph.run(g, "pagerank", mode="path-nopriority", tol=1e-10)
    assert r.stats["path"][name] == default and r.stats["dag"]["state"] == "arc"
    with pytest.raises(InvalidParameterError, match="path modes"):  # not an option of the SCC engine
        digraph.run(g, "pagerank", mode="scc", **{name: values[0]})
    with pytest.raises(InvalidParameterError, match="pass mode='path'"):  # nor of the automatic choice
        digraph.run(g, "pagerank", **{name: values[0]})
    for bad in (-1, 1.5, True, "2"):
        with pytest.raises(InvalidParameterError):
            digraph.run(g, "pagerank", mode="path", **{name: bad})
    for mode in ("bsp", "vertex-async"):
        with pytest.raises(InvalidParameterError):
            digraph.run(g, "pagerank", mode=mode, **{name: 1})
    with pytest.raises(InvalidParameterError):
        digraph.run(g, "pagerank", mode="path", device="cuda", **{name: 1})


def test_run_api_parameter_and_errors():
    check_path_parameter(digraph.load((FIG3_SRC, FIG3_DST, FIG3_W)), "short_path_push",
                         (0, 1, 3), paths.DEFAULT.short_path_push)


@pytest.mark.parametrize("k", [1, 2, 8])
def test_short_arc_groups_structure(k):
    rng = np.random.default_rng(k)
    n = 300
    g = Graph.from_arrays(rng.integers(0, n, 3000), rng.integers(0, n, 3000), num_vertices=n)
    ps = digraph.preprocess(g, partition_arcs=64)
    rep = cpu_schedule._Representation(ps, k)
    lengths = ps.path_lengths
    hot = np.asarray(ps.path_hot)
    pushed = np.ones(ps.num_paths, bool)
    pushed[rep.walk_paths] = False
    assert np.array_equal(pushed, (lengths <= k) & ~(hot & (lengths > 1)))
    # every arc is either on a walked path or in exactly one group
    src, dst = ps.arc_ends()
    walked_arcs = np.concatenate([np.arange(ps.path_offsets[p] - p, ps.path_offsets[p + 1] - p - 1)
                                  for p in rep.walk_paths] or [np.zeros(0, np.int64)])
    both = np.concatenate([walked_arcs, rep.arc_ids])
    assert np.array_equal(np.sort(both), np.arange(g.num_arcs))
    # groups: one source each, their targets as on the paths, partitions keep their arc counts
    sizes = np.diff(rep.garc)
    assert np.all(sizes >= 1)
    assert np.array_equal(np.repeat(rep.gsrc, sizes), src[rep.arc_ids])
    assert np.array_equal(rep.gdst, dst[rep.arc_ids])
    part_of_path = np.repeat(np.arange(ps.num_partitions), np.diff(ps.partition_offsets))
    arc_path = np.repeat(np.arange(ps.num_paths), lengths)
    gpart = np.repeat(np.arange(ps.num_partitions), np.diff(rep.group_offsets))
    per_part = np.bincount(np.repeat(gpart, sizes), minlength=ps.num_partitions)
    expected = np.bincount(part_of_path[arc_path[rep.arc_ids]], minlength=ps.num_partitions)
    assert np.array_equal(per_part, expected)
    # an arc stays in its SCC-vertex (hence its layer)
    assert np.array_equal(np.repeat(rep.gscc, sizes), ps.path_scc[arc_path[rep.arc_ids]])
    # inside a partition, one group per source vertex
    key = gpart.astype(np.int64) * n + rep.gsrc
    assert np.unique(key).size == key.size


class Gather(Algorithm):
    """x_v = b_v + Σ_{u→v} x_u · c: sources keep b_u, so the hub must receive exactly Σ c·b_u."""

    name = "gather"
    parameters = {"c": REQUIRED}

    def prepare(self, graph, c):
        b = np.arange(1, graph.num_vertices + 1, dtype=np.float64)
        return LinearSystem(b=b, src_scale=np.full(graph.num_vertices, c))


@pytest.mark.parametrize("k,fuse", VARIANTS)
def test_no_lost_update_from_groups(k, fuse):
    # 20,000 two-arc paths 1 → v → 0 (merged from one-arc pieces): out of hub 1 and into hub 0,
    # pushed (k ≥ 2) or walked by two threads at once; every contribution into 0 must arrive
    kk = 20_000
    src = np.concatenate([np.arange(2, kk + 2), np.ones(kk, np.int64)])
    dst = np.concatenate([np.zeros(kk, np.int64), np.arange(2, kk + 2)])
    g = Graph.from_arrays(src, dst)
    ps = digraph.preprocess(g, partition_arcs=256, hot_ratio=0.0)
    c = 1e-5
    x, st_ = solve(g, ps, Gather(), {"c": c}, k, fuse, 2, tol=1e-9)
    b = np.arange(1, kk + 3, dtype=np.float64)
    expected0 = 1.0 + c * (b[2:] + c * 2.0).sum()  # v ≥ 2 holds b_v + c·x_1, x_1 = 2
    assert x[0] == pytest.approx(expected0, rel=1e-12, abs=0)
    assert x[1] == 2.0
    np.testing.assert_allclose(x[2:], b[2:] + c * 2.0, rtol=1e-14)
    if k >= 2:
        assert st_["pushed_arcs"] == g.num_arcs and st_["push_groups"] >= 2


@pytest.mark.parametrize("fuse", [True, False])
def test_no_lost_update_one_arc_paths_into_a_hub(fuse):
    kk = 20_000
    g = Graph.from_arrays(np.arange(1, kk + 1), np.zeros(kk, np.int64))
    ps = digraph.preprocess(g, partition_arcs=128)
    c = 1e-5
    x, st_ = solve(g, ps, Gather(), {"c": c}, 1, fuse, 2, tol=1e-9)
    assert st_["pushed_arcs"] == g.num_arcs and st_["push_groups"] == g.num_arcs
    assert x[0] == pytest.approx(1.0 + c * np.arange(2, kk + 2, dtype=np.float64).sum(),
                                 rel=1e-12, abs=0)


def test_thread_count_independence():
    rng = np.random.default_rng(11)
    n = 3000
    g = Graph.from_arrays(rng.integers(0, n, 24000), rng.integers(0, n, 24000), num_vertices=n)
    ps = digraph.preprocess(g, partition_arcs=256)
    algo = digraph.algorithms.PageRank()
    for k, fuse in VARIANTS:
        a, _ = solve(g, ps, algo, {}, k, fuse, 1, tol=1e-10)
        b, _ = solve(g, ps, algo, {}, k, fuse, 2, tol=1e-10)
        assert np.abs(a - b).sum() <= 2e-10
        s1, _ = solve(g, ps, digraph.algorithms.SSSP(), {"source": 0}, k, fuse, 1)
        s2, _ = solve(g, ps, digraph.algorithms.SSSP(), {"source": 0}, k, fuse, 2)
        assert np.array_equal(s1, s2)


def test_pushing_reads_fewer_arcs_than_mirrors():
    # many one-arc paths: the check reads two values per group instead of one arc per path
    rng = np.random.default_rng(2)
    n = 2000
    g = Graph.from_arrays(rng.integers(0, n, 20000), rng.integers(0, n, 20000), num_vertices=n)
    ps = digraph.preprocess(g)
    algo = digraph.algorithms.PageRank()
    _, mirrors = solve(g, ps, algo, {}, 0, False, 1, tol=1e-9)
    _, pushed = solve(g, ps, algo, {}, 1, False, 1, tol=1e-9)
    assert pushed["push_groups"] < pushed["pushed_arcs"]
    assert pushed["arcs_examined"] < mirrors["arcs_examined"]
    assert paths_setup.short_arc_groups is not None
