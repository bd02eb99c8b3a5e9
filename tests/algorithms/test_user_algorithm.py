"""User-defined algorithms through the public interface (``digraph.algorithms.Algorithm``).

* widest path (maximum bottleneck): a MonotoneSystem with relax="min", combine="max";
* Katz centrality and personalised PageRank: LinearSystems, against numpy.linalg.solve;
* a LinearSystem that is not a contraction is refused with a clear error.
"""

import heapq
import itertools

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import digraph
from digraph.algorithms import REQUIRED, Algorithm, HIndexSystem, LinearSystem, MonotoneSystem
from digraph.errors import InvalidParameterError, VertexNotFoundError
from digraph.graph import Graph

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])


def run1(g, algorithm, **kw):
    """``digraph.run`` on one thread unless told otherwise: the answers do not depend on the
    thread count (tested on its own below), and one thread keeps these many tiny runs fast even
    when other processes load the cores (OpenMP barriers spin badly when oversubscribed)."""
    kw.setdefault("threads", 1)
    return digraph.run(g, algorithm, **kw)


# ============================================================================ the user's code

class WidestPath(Algorithm):
    """Width of the widest path from ``source`` (the largest bottleneck weight).

    The source has width +inf (the empty path has no bottleneck), unreachable vertices -inf (the
    identity of max, so "no path" can never be confused with a path of width 0).
    """

    name = "widest_path"
    parameters = {"source": REQUIRED, "explicit_frontier": True}

    def prepare(self, graph, source, explicit_frontier):
        s = graph.index_of(source, "source")
        init = np.full(graph.num_vertices, -np.inf)
        init[s] = np.inf
        return MonotoneSystem(init=init, relax="min", combine="max", arc_value=graph.arc_weights(),
                              frontier=np.array([s]) if explicit_frontier else None)


class Katz(Algorithm):
    """x_v = 1 + beta · Σ_{u→v} w_uv · x_u."""

    name = "katz"
    parameters = {"beta": 0.1}
    default_tol = 1e-9

    def prepare(self, graph, beta):
        n = graph.num_vertices
        return LinearSystem(b=np.ones(n), src_scale=np.full(n, float(beta)),
                            arc_scale=graph.weights)


class PersonalisedPageRank(Algorithm):
    """Random walk with restart at ``source``: x = (1−α) e_s + α Pᵀ x, normalised."""

    name = "ppr"
    parameters = {"source": REQUIRED, "alpha": 0.85}

    def prepare(self, graph, source, alpha):
        n = graph.num_vertices
        s = graph.index_of(source, "source")
        out = graph.out_degree.astype(float)
        src_scale = np.divide(alpha, out, out=np.zeros(n), where=out > 0)
        b = np.zeros(n)
        b[s] = 1.0 - alpha
        return LinearSystem(b=b, src_scale=src_scale, normalize=True)

    def finalize(self, graph, x, **params):
        return x / x.sum()


# ============================================================================ references

def widest_dijkstra(n, src, dst, w, s):
    """Modified Dijkstra: pop the largest bottleneck first."""
    adj = [[] for _ in range(n)]
    for u, v, c in zip(src, dst, w):
        adj[u].append((v, c))
    width = [-np.inf] * n
    width[s] = np.inf
    heap = [(-np.inf, s)]
    done = [False] * n
    while heap:
        negw, u = heapq.heappop(heap)
        if done[u]:
            continue
        done[u] = True
        for v, c in adj[u]:
            cand = min(-negw, c)
            if cand > width[v]:
                width[v] = cand
                heapq.heappush(heap, (-cand, v))
    return np.array(width)


def widest_brute_force(n, src, dst, w, s):
    """max over simple paths of the min weight along the path (parallel arcs: the widest)."""
    best = {}
    for u, v, c in zip(src, dst, w):
        if u != v:
            best[(u, v)] = max(best.get((u, v), -np.inf), c)
    G = nx.DiGraph()
    G.add_nodes_from(range(n))
    G.add_edges_from(best)
    out = np.full(n, -np.inf)
    out[s] = np.inf
    for t in range(n):
        if t == s:
            continue
        for path in nx.all_simple_paths(G, s, t):
            out[t] = max(out[t], min(best[e] for e in zip(path[:-1], path[1:])))
    return out


@st.composite
def weighted_multigraphs(draw, max_n=12, max_m=30):
    n = draw(st.integers(1, max_n))
    v = st.integers(0, n - 1)
    m = draw(st.integers(0, max_m))
    arcs = draw(st.lists(st.tuples(v, v, st.integers(0, 9)), min_size=m, max_size=m))
    return n, [a for a, _, _ in arcs], [b for _, b, _ in arcs], [float(c) for _, _, c in arcs]


# ============================================================================ widest path

@settings(max_examples=150, **SETTINGS)
@given(graph=weighted_multigraphs(max_n=40, max_m=120), data=st.data(), explicit=st.booleans())
def test_widest_path_vs_modified_dijkstra(graph, data, explicit):
    n, src, dst, w = graph
    s = data.draw(st.integers(0, n - 1))
    g = Graph.from_arrays(src, dst, w, num_vertices=n)
    r = run1(g, WidestPath(), source=s, explicit_frontier=explicit)
    assert r.algorithm == "widest_path" and r.stats["converged"]
    assert np.array_equal(r.values, widest_dijkstra(n, src, dst, w, s))


@settings(max_examples=80, **SETTINGS)
@given(graph=weighted_multigraphs(max_n=7, max_m=14), data=st.data())
def test_widest_path_vs_brute_force(graph, data):
    n, src, dst, w = graph
    s = data.draw(st.integers(0, n - 1))
    g = Graph.from_arrays(src, dst, w, num_vertices=n)
    r = run1(g, WidestPath, source=s)
    assert np.array_equal(r.values, widest_brute_force(n, src, dst, w, s))


def test_widest_path_by_hand_and_errors():
    # 0 -> 1 (5), 1 -> 3 (2), 0 -> 2 (3), 2 -> 3 (3), 0 -> 3 (1), 3 -> 0 (9); 4 unreachable
    g = Graph.from_arrays([0, 1, 0, 2, 0, 3], [1, 3, 2, 3, 3, 0], [5, 2, 3, 3, 1, 9], num_vertices=5)
    r = run1(g, WidestPath(), source=0)
    assert r.values.tolist() == [np.inf, 5.0, 3.0, 3.0, -np.inf]
    assert r.params["source"] == 0
    with pytest.raises(VertexNotFoundError, match="source 7"):
        run1(g, WidestPath(), source=7)
    with pytest.raises(InvalidParameterError, match="widest_path.*width"):
        run1(g, WidestPath(), source=0, width=3)
    with pytest.raises(InvalidParameterError, match="source"):
        run1(g, WidestPath())


def test_monotone_system_refuses_unknown_operators():
    with pytest.raises(InvalidParameterError, match="relax"):
        MonotoneSystem(init=np.zeros(2), relax="avg", combine="max")
    with pytest.raises(InvalidParameterError, match="combine"):
        MonotoneSystem(init=np.zeros(2), relax="min", combine="sum")


def test_monotone_init_of_wrong_length_is_refused():
    class Bad(Algorithm):
        name = "bad"

        def prepare(self, graph):
            return MonotoneSystem(init=np.zeros(graph.num_vertices + 1), relax="plus", combine="min")

    with pytest.raises(InvalidParameterError, match="init"):
        digraph.run(Graph.from_arrays([0], [1]), Bad())


# ============================================================================ linear user algorithms

@settings(max_examples=100, **SETTINGS)
@given(graph=weighted_multigraphs(max_n=30, max_m=90), beta_frac=st.floats(0.05, 0.95),
       weighted=st.booleans(), tol=st.sampled_from([1e-4, 1e-9, 1e-12]))
def test_katz_vs_numpy_solve(graph, beta_frac, weighted, tol):
    n, src, dst, w = graph
    g = Graph.from_arrays(src, dst, w if weighted else None, num_vertices=n)
    c = np.asarray(w if weighted else np.ones(len(src)), float)
    A = np.zeros((n, n))
    np.add.at(A, (np.asarray(dst, int), np.asarray(src, int)), c)
    # a contraction in the 1-norm or the ∞-norm: beta below 1 / the smaller of the two norms
    norm = min(A.sum(axis=0).max(), A.sum(axis=1).max()) if len(src) else 0.0
    beta = beta_frac / norm if norm > 0 else 0.5
    r = run1(g, Katz(), beta=beta, tol=tol)
    exact = np.linalg.solve(np.eye(n) - beta * A, np.ones(n))
    err = np.abs(r.values - exact).sum()
    slack = 1e-12 * np.abs(exact).sum()  # the dense solve's own rounding
    if r.stats.get("floor_limited"):
        # tol below what float64 can certify here: the run reports the bound it could certify
        assert tol < r.stats["error_bound"] and err <= r.stats["error_bound"] + slack
    else:
        assert err <= tol * (1 + 1e-9) + slack
        assert r.stats["error_bound"] <= tol
    assert r.params["tol"] == tol


def test_katz_contraction_in_the_infinity_norm_only():
    # a hub 0 with 10 out-arcs: column sum of A = 10·beta ≥ 1, every row sum = beta < 1
    n = 11
    src = [0] * 10 + [5]
    dst = list(range(1, 11)) + [0]
    g = Graph.from_arrays(src, dst)
    beta = 0.5
    r = run1(g, Katz(), beta=beta)
    assert r.params["tol"] == 1e-9  # the algorithm's default_tol
    A = np.zeros((n, n))
    A[dst, src] = 1.0
    exact = np.linalg.solve(np.eye(n) - beta * A, np.ones(n))
    assert np.abs(r.values - exact).sum() <= 1e-9


@settings(max_examples=80, **SETTINGS)
@given(graph=weighted_multigraphs(max_n=30, max_m=90), data=st.data(),
       alpha=st.floats(0.05, 0.95))
def test_personalised_pagerank_vs_numpy_solve(graph, data, alpha):
    n, src, dst, _ = graph
    s = data.draw(st.integers(0, n - 1))
    g = Graph.from_arrays(src, dst, num_vertices=n)
    r = run1(g, PersonalisedPageRank(), source=s, alpha=alpha, tol=1e-10)
    out = np.bincount(src, minlength=n).astype(float)
    P = np.zeros((n, n))
    for u, v in zip(src, dst):
        P[u, v] += 1.0 / out[u]
    e = np.zeros(n)
    e[s] = 1.0
    exact = np.linalg.solve(np.eye(n) - alpha * P.T, e)
    exact /= exact.sum()
    assert np.abs(r.values - exact).sum() <= 1e-10 * (1 + 1e-9)
    # the same as the built-in PageRank with a one-vertex personalization
    b = run1(g, "pagerank", alpha=alpha, personalization={s: 1.0}, tol=1e-10).values
    assert np.abs(r.values - b).sum() <= 2e-10


@pytest.mark.parametrize("src, dst, beta", [
    ([0, 1], [1, 0], 1.0),          # a 2-cycle with coefficient 1: both norms = 1
    ([0, 1, 1], [1, 0, 0], 0.8),    # column sum 1.6 and row sum 1.6
    ([0], [0], 2.0),                # a self-loop with coefficient 2
])
def test_non_contraction_is_refused(src, dst, beta):
    g = Graph.from_arrays(src, dst)
    with pytest.raises(InvalidParameterError, match="not a contraction") as ei:
        run1(g, Katz(), beta=beta)
    assert "column sum" in str(ei.value) and "row sum" in str(ei.value)


def test_negative_coefficients_are_refused():
    class Signed(Algorithm):
        name = "signed"

        def prepare(self, graph):
            return LinearSystem(b=np.ones(graph.num_vertices), src_scale=np.full(graph.num_vertices, -0.1))

    with pytest.raises(InvalidParameterError, match="non-negative"):
        digraph.run(Graph.from_arrays([0, 1], [1, 0]), Signed())


def test_user_algorithm_threads_agree():
    import numba
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("Numba started with one thread")
    rng = np.random.default_rng(3)
    n, m = 2000, 12000
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    w = rng.integers(0, 20, m).astype(float)
    g = Graph.from_arrays(src, dst, w, num_vertices=n)
    a = digraph.run(g, WidestPath(), source=0, threads=1).values
    b = digraph.run(g, WidestPath(), source=0, threads=2).values
    assert np.array_equal(a, b)
    assert np.array_equal(a, widest_dijkstra(n, src.tolist(), dst.tolist(), w.tolist(), 0))
    k1 = digraph.run(g, Katz(), beta=0.004, threads=1).values
    k2 = digraph.run(g, Katz(), beta=0.004, threads=2).values
    assert np.abs(k1 - k2).sum() <= 1e-12 * np.abs(k1).sum()


# ============================================================================ h-index user algorithms

class CoreOfUndirected(Algorithm):
    """Core numbers of an undirected graph given as both directions of every edge, through
    HIndexSystem(halve=True) and the default finalize."""

    name = "core_undirected"

    def prepare(self, graph):
        return HIndexSystem(halve=True)


def test_hindex_system_halve_is_honoured():
    edges = [(0, 1), (1, 2), (2, 0), (2, 3)]
    src = [a for a, b in edges] + [b for a, b in edges]
    dst = [b for a, b in edges] + [a for a, b in edges]
    g = Graph.from_arrays(src, dst)
    G = nx.Graph(edges)
    core = nx.core_number(G)
    assert run1(g, CoreOfUndirected()).values.tolist() == [core[i] for i in range(4)]


def test_hindex_system_user_algorithm_without_halving():
    g = Graph.from_arrays([0, 1, 2, 2], [1, 2, 0, 3])

    class Core(Algorithm):
        name = "core"

        def prepare(self, graph):
            return HIndexSystem()

    assert run1(g, Core()).values.tolist() == run1(g, "kcore").values.tolist() == [2, 2, 2, 1]


@pytest.mark.parametrize("mode", [None, "scc", "bsp", "vertex-async", "path", "path-nopriority"])
def test_katz_exact_residual_above_tol_is_floor_limited(mode):
    # hypothesis's example for test_katz_vs_numpy_solve: 18 vertices, one arc 0→1 (weight 0,
    # unweighted run), beta_frac 0.9375, tol 1e-12.  The recomputed residual is exactly 0 but the
    # rounding floor amplified by 1/(1 − 0.9375) certifies only ~1.05e-12 > tol: the run must say
    # floor_limited, not plain converged.
    n = 18
    g = Graph.from_arrays([0], [1], None, num_vertices=n)
    beta, tol = 0.9375, 1e-12
    kw = {} if mode is None else {"mode": mode}
    r = run1(g, Katz(), beta=beta, tol=tol, **kw)
    s = r.stats
    assert s["converged"]
    assert s["error_bound"] <= tol or s.get("floor_limited")
    A = np.zeros((n, n))
    A[1, 0] = 1.0
    exact = np.linalg.solve(np.eye(n) - beta * A, np.ones(n))
    err = np.abs(r.values - exact).sum()
    if s.get("floor_limited"):
        assert tol < s["error_bound"] and tol / 2 < s["error_floor"] <= s["error_bound"]
        assert err <= s["error_bound"]
    else:
        assert err <= tol


class UndividedPPR(PersonalisedPageRank):
    """The same system, with no finalize of its own: ``normalize=True`` alone must divide."""

    name = "ppr-undivided"

    def finalize(self, graph, x, **params):
        return x


@pytest.mark.parametrize("mode", [None, "bsp", "vertex-async", "path", "path-nopriority"])
def test_normalize_true_divides_by_the_sum_in_every_mode(mode):
    # docs/interface.md: normalize=True returns x / Σx; a user's personalised PageRank without a
    # finalize of its own summed to 0.911 (issue 17)
    rng = np.random.default_rng(4)
    n = 300
    g = Graph.from_arrays(rng.integers(0, n, 2000), rng.integers(0, n, 2000), num_vertices=n)
    r = digraph.run(g, UndividedPPR(), source=0, mode=mode, tol=1e-10)
    ref = digraph.run(g, PersonalisedPageRank(), source=0, mode="bsp", tol=1e-12)
    assert r.values.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.abs(r.values - ref.values).sum() <= 1e-10 + 1e-12
