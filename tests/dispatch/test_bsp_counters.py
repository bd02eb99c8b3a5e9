"""The counters of ``mode="bsp"`` are honest (docs/design.md §5), and the push (sparse) and pull (dense)
directions give the same answers.

BSP semantics: a round reads the previous round's state (Jacobi).  So on an unweighted graph SSSP
is a breadth-first search: round r takes the vertices at distance r−1 as its frontier, every
reachable vertex improves exactly once, and one last round runs over the farthest layer (which
improves nothing) before the frontier is empty.
"""

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import digraph
from digraph.dispatch.engines.push import cpu_bsp as bsp
from digraph.dispatch.settings import current, using
from digraph.graph import Graph
from digraph.smx.cpu import bsp as cpu_bsp

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                       HealthCheck.function_scoped_fixture])
def forced(divisor):
    """Settings that send every round, sums and min/max alike, one way (``None``: the defaults)."""
    if divisor is None:
        return bsp.DEFAULT
    return bsp.BspSettings(dense_divisor=divisor, monotone_dense_divisor=divisor)


DIRECTIONS = {"dense": forced(10**9), "sparse": forced(0), "auto": bsp.DEFAULT}


@pytest.fixture(params=["dense", "sparse"])
def direction(request, engine_settings):
    """Force every round into one direction: dense_divisor = 0 never pulls, 10**9 always pulls
    (except a frontier without out-arcs, which has nothing to pull and takes the push path)."""
    engine_settings(DIRECTIONS[request.param])
    return request.param


def run_bsp(g, name, **kw):
    """One thread unless told otherwise (see tests/algorithms/test_algorithms.py::run1)."""
    kw.setdefault("threads", 1)
    return digraph.run(g, name, mode="bsp", **kw)


def path_graph(k):
    return Graph.from_arrays(np.arange(k), np.arange(1, k + 1))


@st.composite
def graphs(draw, max_n=40, weighted=False):
    n = draw(st.integers(1, max_n))
    v = st.integers(0, n - 1)
    m = draw(st.integers(0, 3 * n))
    arcs = draw(st.lists(st.tuples(v, v), min_size=m, max_size=m))
    arcs += draw(st.lists(st.sampled_from(arcs), max_size=5)) if arcs else []
    src = np.array([a for a, _ in arcs], dtype=np.int64)
    dst = np.array([b for _, b in arcs], dtype=np.int64)
    w = None
    if weighted:
        w = np.array(draw(st.lists(st.integers(0, 9), min_size=len(arcs), max_size=len(arcs))), float)
    return Graph.from_arrays(src, dst, w, num_vertices=n)


def check_directions_sum(s):
    assert s["dense_rounds"] + s["sparse_rounds"] == s["rounds"]


# ============================================================================ SSSP

@pytest.mark.parametrize("k", [1, 2, 5, 19, 20, 21, 64])
def test_sssp_on_a_path_graph(k, direction):
    g = path_graph(k)
    r = run_bsp(g, "sssp", source=0)
    assert r.values.tolist() == list(map(float, range(k + 1)))
    s = r.stats
    assert s["rounds"] == k + 1  # one frontier vertex per round, then the last (sterile) round
    assert s["vertex_updates"] == k  # each vertex but the source improves once
    check_directions_sum(s)
    if direction == "sparse":
        assert (s["dense_rounds"], s["sparse_rounds"]) == (0, k + 1)
        assert s["arc_updates"] == k  # each arc relaxed once
    else:
        # the last frontier {k} has no out-arcs: pushed (zero arcs); every other round pulls all m = k arcs
        assert (s["dense_rounds"], s["sparse_rounds"]) == (k, 1)
        assert s["arc_updates"] == k * k


def test_sssp_path_graph_default_direction():
    # frontier volume 1 against m = k: pull while 1 * monotone_dense_divisor > k, else push (by
    # default never: docs/history/benchmarks-notebook.md, "bsp: the direction switch")
    div = current(bsp.DEFAULT).monotone_dense_divisor
    for k in (5, div + 5):
        s = run_bsp(path_graph(k), "sssp", source=0).stats
        dense = k if div > k else 0
        assert (s["rounds"], s["dense_rounds"], s["sparse_rounds"]) == (k + 1, dense, k + 1 - dense)
        assert s["arc_updates"] == dense * k + (k - dense)


@settings(max_examples=100, **SETTINGS)
@given(g=graphs(), data=st.data())
def test_sssp_unweighted_counters_are_bfs(direction, g, data):
    s_id = data.draw(st.integers(0, g.num_vertices - 1))
    r = run_bsp(g, "sssp", source=s_id)
    G = nx.DiGraph()
    G.add_nodes_from(range(g.num_vertices))
    G.add_edges_from(zip(g.arc_sources.tolist(), g.out_targets.tolist()))
    dist = nx.single_source_shortest_path_length(G, s_id)
    expect = np.full(g.num_vertices, np.inf)
    expect[list(dist)] = list(dist.values())
    assert np.array_equal(r.values, expect)
    s = r.stats
    ecc = max(dist.values())
    assert s["rounds"] == ecc + 1
    assert s["vertex_updates"] == len(dist) - 1
    check_directions_sum(s)
    m = g.num_arcs
    outdeg = g.out_degree
    if direction == "sparse":
        assert s["dense_rounds"] == 0
        assert s["arc_updates"] == sum(int(outdeg[v]) for v in dist)  # each reachable vertex pushes once
    else:
        # a round pulls unless its frontier (one BFS layer) has no out-arcs at all
        layers = [[v for v, d in dist.items() if d == lvl] for lvl in range(ecc + 1)]
        pulls = sum(1 for layer in layers if outdeg[layer].sum() > 0)
        assert s["dense_rounds"] == pulls
        assert s["arc_updates"] == pulls * m


@settings(max_examples=100, **SETTINGS)
@given(g=graphs(weighted=True), data=st.data())
def test_sssp_weighted_directions_agree_exactly(g, data):
    src = data.draw(st.integers(0, g.num_vertices - 1))
    out = {}
    for name, div in DIRECTIONS.items():
        with using([div]):
            out[name] = run_bsp(g, "sssp", source=src)
    ref = out["auto"]
    reachable = int(np.isfinite(ref.values).sum())
    for r in out.values():
        assert np.array_equal(r.values, ref.values)
        # Jacobi rounds: the same improvements in the same rounds, whichever the direction
        assert r.stats["rounds"] == ref.stats["rounds"]
        assert r.stats["vertex_updates"] == ref.stats["vertex_updates"]
        assert r.stats["vertex_updates"] >= reachable - 1
        assert r.stats["rounds"] <= g.num_vertices + 1
        check_directions_sum(r.stats)
    assert out["sparse"].stats["dense_rounds"] == 0
    assert out["dense"].stats["arc_updates"] == out["dense"].stats["dense_rounds"] * g.num_arcs


# ============================================================================ linear (PageRank, adsorption)

class ScanRecorder:
    """Wraps the linear scan kernel to record (frontier size, frontier out-arcs) of every scan."""

    def __init__(self, monkeypatch):
        self.scans = []
        real = cpu_bsp.linear_scan

        def scan(*args):
            out = real(*args)
            self.scans.append((int(out[0]), int(out[1])))
            return out
        monkeypatch.setattr(cpu_bsp, "linear_scan", scan)


def test_pagerank_without_arcs_takes_one_round():
    g = Graph.from_arrays([], [], num_vertices=7)
    s = run_bsp(g, "pagerank").stats
    assert (s["rounds"], s["vertex_updates"], s["arc_updates"]) == (1, 7, 0)
    assert s["error_bound"] <= 1e-13 and s["residual_l1"] == 0.0  # the bound counts rounding


@pytest.mark.parametrize("divisor", [None, 0, 10**9])
@pytest.mark.parametrize("name, params", [("pagerank", {"tol": 1e-9}),
                                          ("pagerank", {"tol": 1e-3, "alpha": 0.95}),
                                          ("adsorption", {"seeds": [0, 5], "tol": 1e-9})])
def test_linear_counters_match_the_rounds_run(engine_settings, monkeypatch, divisor, name,
                                              params):
    if divisor is not None:
        engine_settings(forced(divisor))
    rng = np.random.default_rng(11)
    n, m = 400, 2400
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n // 2, m)  # half the vertices have no in-arcs, many no out-arcs
    g = Graph.from_arrays(src, dst, num_vertices=n)
    run_bsp(g, name, **params)  # compile / warm up outside the recorder
    rec = ScanRecorder(monkeypatch)
    r = run_bsp(g, name, **params)
    s = r.stats
    scans = rec.scans
    assert s["converged"]
    assert len(scans) == s["rounds"] + 1  # one scan before every round and the final one
    rounds = scans[:-1]
    assert s["vertex_updates"] == sum(nf for nf, _ in rounds)
    div = current(bsp.DEFAULT).dense_divisor
    dense = [vol * div > m for _, vol in rounds]
    assert s["dense_rounds"] == sum(dense)
    check_directions_sum(s)
    # a pull round reads every arc; a push round the frontier's out-arcs
    assert s["arc_updates"] == sum(m if d else vol for d, (_, vol) in zip(dense, rounds))
    if divisor == 0:
        assert s["dense_rounds"] == 0
    if divisor == 10**9:
        assert s["sparse_rounds"] == sum(1 for _, vol in rounds if vol == 0)


@settings(max_examples=40, **SETTINGS)
@given(g=graphs(weighted=True), data=st.data(), alpha=st.floats(0.1, 0.95))
def test_linear_directions_agree(g, data, alpha):
    seeds = data.draw(st.lists(st.integers(0, g.num_vertices - 1), min_size=1, max_size=4, unique=True))
    exact_pr = digraph.algorithms.PageRank().reference(g, alpha=alpha)
    exact_ad = digraph.algorithms.Adsorption().reference(g, seeds=seeds)
    res = {}
    for name, div in DIRECTIONS.items():
        with using([div]):
            res[name] = (run_bsp(g, "pagerank", alpha=alpha, tol=1e-10),
                         run_bsp(g, "adsorption", seeds=seeds, tol=1e-10))
    for pr, ad in res.values():
        assert np.abs(pr.values - exact_pr).sum() <= 1e-10 * (1 + 1e-9)
        assert np.abs(ad.values - exact_ad).sum() <= 1e-10 * (1 + 1e-9) + 1e-15
        for r in (pr, ad):
            check_directions_sum(r.stats)
            assert r.stats["arc_updates"] <= r.stats["rounds"] * g.num_arcs
            assert r.stats["vertex_updates"] <= r.stats["rounds"] * g.num_vertices
    assert res["sparse"][0].stats["dense_rounds"] == 0
    assert abs(res["dense"][0].values - res["sparse"][0].values).sum() <= 2e-10


# ============================================================================ k-core

def test_kcore_cycle_converges_in_one_round():
    n = 12
    g = Graph.from_arrays(np.arange(n), (np.arange(n) + 1) % n)
    s = run_bsp(g, "kcore").stats
    assert run_bsp(g, "kcore").values.tolist() == [2] * n
    assert (s["rounds"], s["vertex_updates"], s["arc_updates"]) == (1, n, 2 * n)
    check_directions_sum(s)


@pytest.mark.parametrize("k", [2, 5, 30])
def test_kcore_star_counters(k):
    # centre 0 with k leaves: round 1 recomputes all k+1 (centre drops k -> 1), round 2 its k
    # neighbours (nothing drops), then the frontier is empty
    g = Graph.from_arrays(np.zeros(k, np.int64), np.arange(1, k + 1))
    r = run_bsp(g, "kcore")
    assert r.values.tolist() == [1] * (k + 1)
    s = r.stats
    assert s["rounds"] == 2
    assert s["vertex_updates"] == (k + 1) + k
    assert s["arc_updates"] == 2 * k + k
    check_directions_sum(s)


@settings(max_examples=60, **SETTINGS)
@given(g=graphs())
def test_kcore_counters_first_round_reads_everything(g):
    r = run_bsp(g, "kcore")
    s = r.stats
    loops = int((g.arc_sources == g.out_targets).sum())
    undirected_arcs = 2 * (g.num_arcs - loops)
    assert s["rounds"] >= 1
    assert s["vertex_updates"] >= g.num_vertices
    assert s["arc_updates"] >= undirected_arcs
    assert s["arc_updates"] <= s["rounds"] * undirected_arcs
    assert s["vertex_updates"] <= s["rounds"] * g.num_vertices
    check_directions_sum(s)


# ============================================================================ threads

@settings(max_examples=40, **SETTINGS)
@given(g=graphs(weighted=True), data=st.data())
def test_exact_counters_do_not_depend_on_threads(g, data):
    import numba
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("Numba started with one thread")
    src = data.draw(st.integers(0, g.num_vertices - 1))
    for name, params in (("sssp", {"source": src}), ("kcore", {})):
        a = run_bsp(g, name, threads=1, **params)
        b = run_bsp(g, name, threads=2, **params)
        assert np.array_equal(a.values, b.values)
        for k in ("rounds", "vertex_updates", "arc_updates", "dense_rounds", "sparse_rounds"):
            assert a.stats[k] == b.stats[k], (name, k)
