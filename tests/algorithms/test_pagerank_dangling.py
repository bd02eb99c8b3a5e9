"""PageRank's ``dangling=`` (networkx's semantics): the mass of the vertices without out-weight
follows ``d`` instead of the personalization.  Only the Google-matrix power iteration runs it
(``mode="power"``, dispatch/engines/power/cpu.py); the router refuses every other mode and the GPUs."""

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import digraph
from digraph.algorithms import LinearSystem, PageRank
from digraph.errors import InvalidParameterError, VertexNotFoundError
from digraph.graph import Graph
from digraph.nx_backend import interface as B


def multigraph(seed, n, m, dangling_share=0.4, weighted=False):
    """Random multigraph (loops, parallel arcs) whose first ``dangling_share·n`` vertices (after a
    shuffle) have no out-arcs; with ``weighted``, some arcs weigh 0 (a vertex whose out-arcs all
    weigh 0 is dangling too, as in networkx)."""
    rng = np.random.default_rng(seed)
    perm = rng.permutation(n)
    keep = perm[int(dangling_share * n):] if n > 1 else perm
    src = keep[rng.integers(0, keep.size, m)] if keep.size else np.zeros(0, np.int64)
    dst = rng.integers(0, n, m)
    w = None
    if weighted:
        w = rng.random(m) * 3
        w[rng.random(m) < 0.15] = 0.0
    return src, dst, w


def as_nx(n, src, dst, w):
    G = nx.MultiDiGraph()
    G.add_nodes_from(range(n))
    for k, (u, v) in enumerate(zip(src.tolist(), dst.tolist())):
        G.add_edge(u, v, weight=1.0 if w is None else float(w[k]))
    return G


def exact_networkx(n, src, dst, w, alpha, pers, dangling):
    """Dense solve of networkx's Google matrix (scipy's ``google_matrix`` rule: a dangling row
    follows ``dangling``, missing keys 0), normalised."""
    A = np.zeros((n, n))
    np.add.at(A, (src, dst), 1.0 if w is None else w)
    s = A.sum(axis=1)
    P = np.divide(A, s[:, None], out=np.zeros_like(A), where=s[:, None] > 0)
    p = np.full(n, 1.0 / n) if pers is None else np.array([pers.get(v, 0) for v in range(n)], float)
    p /= p.sum()
    d = np.array([dangling.get(v, 0) for v in range(n)], float)
    d /= d.sum()
    P[s == 0] = d
    x = np.linalg.solve(np.eye(n) - alpha * P.T, (1 - alpha) * p)
    return x / x.sum()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(2, 40), m=st.integers(0, 150), seed=st.integers(0, 2**16),
       alpha=st.sampled_from([0.5, 0.85, 0.99]), share=st.sampled_from([0.1, 0.4, 0.8]),
       weighted=st.booleans(), personalised=st.booleans(), tol=st.sampled_from([1e-6, 1e-10]))
def test_matches_networkx_google_matrix(n, m, seed, alpha, share, weighted, personalised, tol):
    src, dst, w = multigraph(seed, n, m, share, weighted)
    g = digraph.load((src, dst) if w is None else (src, dst, w), num_vertices=n)
    rng = np.random.default_rng(seed + 1)
    dangling = {int(v): float(rng.integers(0, 4)) for v in rng.choice(n, max(1, n // 3), replace=False)}
    dangling[int(rng.integers(0, n))] = 1.0  # a positive sum; keys left out count 0
    pers = {int(v): float(rng.random()) + 0.01 for v in rng.choice(n, max(1, n // 4), replace=False)} \
        if personalised else None
    r = digraph.run(g, "pagerank", alpha=alpha, personalization=pers, dangling=dangling, tol=tol)
    s = r.stats
    system = PageRank().prepare(g, **PageRank().bind(g, dict(alpha=alpha, personalization=pers,
                                                             dangling=dangling)))
    # the term is dropped when it changes nothing (no dangling vertex, or d equal to p)
    assert s["converged"] and (s["mode"] == "power" or system.dangling is None)
    exact = exact_networkx(n, src, dst, w, alpha, pers, dangling)
    err = np.abs(r.values - exact).sum()
    assert err <= s["error_bound"] * (1 + 1e-9) + 1e-14  # the bound is sound
    assert s["error_bound"] <= tol or s.get("floor_limited")
    ref = PageRank().reference(g, alpha=alpha, personalization=pers, dangling=dangling)
    assert np.abs(ref - exact).sum() <= 1e-9


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("personalised", [False, True])
def test_matches_networkx_pagerank(weighted, personalised):
    n = 150
    src, dst, w = multigraph(7, n, 500, 0.45, weighted)
    g = digraph.load((src, dst) if w is None else (src, dst, w), num_vertices=n)
    rng = np.random.default_rng(3)
    dangling = {int(v): float(rng.random()) for v in rng.choice(n, 10, replace=False)}
    pers = {int(v): float(rng.random()) for v in rng.choice(n, 30, replace=False)} if personalised else None
    r = digraph.run(g, "pagerank", personalization=pers, dangling=dangling, tol=1e-12)
    assert r.stats["mode"] == "power" and r.stats["requested_mode"] is None
    assert r.stats["route"]["code"] == "dangling"
    assert "dangling= is answered by the Google-matrix power iteration only" in r.stats["route"]["reason"]
    assert "probe_rounds" not in r.stats  # plain power, no hand-over to the SCC engine
    assert r.stats["power"]["dangling_vertices"] > 0.4 * n
    G = as_nx(n, src, dst, w)
    ref = nx.pagerank(G, personalization=pers, dangling=dangling, tol=1e-15, max_iter=10_000,
                      weight="weight" if weighted else None)
    ref = np.array([ref[v] for v in range(n)])
    assert np.abs(r.values - ref).sum() <= 1e-11
    # the term matters here: without it the answer is far off
    plain = digraph.run(g, "pagerank", personalization=pers, tol=1e-12).values
    assert np.abs(plain - ref).sum() > 1e-3
    # mode="power" named: the same run
    again = digraph.run(g, "pagerank", personalization=pers, dangling=dangling, tol=1e-12,
                        mode="power")
    assert again.stats["route"]["code"] == "asked"
    assert np.array_equal(again.values, r.values)


@pytest.mark.parametrize("dangling", [None, {0: 1.0, 5: 3.0}])
def test_tol_below_the_rounding_floor(dangling):
    """Below the floor the run goes on until its differences reach the rounding, then reports
    the bound it can certify (not the first round's, which once stopped runs with α near 1)."""
    n = 400
    src, dst, _ = multigraph(4, n, 1600, 0.5)
    g = digraph.load((src, dst), num_vertices=n)
    ref = PageRank().reference(g, alpha=0.99, dangling=dangling)
    for tol in (1e-13, 1e-18):
        r = digraph.run(g, "pagerank", mode="power", alpha=0.99, dangling=dangling, tol=tol)
        s = r.stats
        assert s["converged"] and s["floor_limited"] and s["rounds"] > 5
        assert s["error_bound"] <= 3 * s["error_floor"] < 1e-11
        assert np.abs(r.values - ref).sum() <= s["error_bound"]


def test_array_form_and_missing_keys():
    n = 60
    src, dst, _ = multigraph(11, n, 200, 0.5)
    g = digraph.load((src, dst), num_vertices=n)
    d = {3: 2.0, 17: 1.0}
    arr = np.zeros(n)
    arr[3], arr[17] = 2.0, 1.0
    a = digraph.run(g, "pagerank", dangling=d, tol=1e-12).values
    b = digraph.run(g, "pagerank", dangling=arr * 5, tol=1e-12).values  # scale does not matter
    assert np.abs(a - b).sum() <= 2e-12
    assert np.abs(a - exact_networkx(n, src, dst, None, 0.85, None, d)).sum() <= 1e-12


def test_vertex_ids_are_the_callers():
    g = digraph.load(([10, 20, 20], [20, 30, 40]))  # 30 and 40 dangling
    r = digraph.run(g, "pagerank", dangling={30: 1}, tol=1e-13)
    G = nx.DiGraph([(10, 20), (20, 30), (20, 40)])
    ref = nx.pagerank(G, dangling={30: 1}, tol=1e-15, max_iter=1000)
    assert max(abs(r.to_dict()[k] - ref[k]) for k in ref) <= 1e-12


def test_no_dangling_vertex_or_d_equal_to_p_changes_nothing():
    cycle = digraph.load(([0, 1, 2, 2], [1, 2, 0, 1]))  # no dangling vertex
    for mode in ("scc", "bsp", None):
        r = digraph.run(cycle, "pagerank", dangling={0: 1}, mode=mode, tol=1e-12)
        base = digraph.run(cycle, "pagerank", mode=mode, tol=1e-12)
        assert np.array_equal(r.values, base.values)
    with pytest.raises(InvalidParameterError, match="dangling"):  # still validated
        digraph.run(cycle, "pagerank", dangling={0: -1})
    g = digraph.load(([0, 1, 1], [1, 2, 3]), num_vertices=5)
    pers = {0: 1.0, 2: 3.0}
    r = digraph.run(g, "pagerank", personalization=pers, dangling=dict(pers), mode="scc", tol=1e-12)
    assert r.stats["mode"] == "scc"
    r = digraph.run(g, "pagerank", dangling={v: 1 for v in range(5)}, mode="scc", tol=1e-12)
    assert r.stats["mode"] == "scc"  # uniform d = the default teleport


@pytest.mark.parametrize("bad, exc, match", [
    ({0: 0.0, 1: 0.0}, InvalidParameterError, "dangling sums to 0"),
    ({}, InvalidParameterError, "dangling sums to 0"),
    ({0: -1.0, 1: 3.0}, InvalidParameterError, "dangling values must be finite and non-negative"),
    ({0: float("nan")}, InvalidParameterError, "dangling values must be finite"),
    ({99: 1.0}, VertexNotFoundError, "dangling key"),
    (np.ones(3), InvalidParameterError, "dangling must be a dict or an array"),
])
def test_refused_dangling_vectors(bad, exc, match):
    g = digraph.load(([0, 1], [1, 2]), num_vertices=4)
    with pytest.raises(exc, match=match):
        digraph.run(g, "pagerank", dangling=bad)


@pytest.mark.parametrize("kw", [{"mode": "scc"}, {"mode": "bsp"}, {"mode": "vertex-async"},
                                {"mode": "path"}, {"device": "cuda"}, {"mode": "bsp", "device": "cuda"},
                                {"device": "cuda:0,1"}])
def test_other_modes_and_gpus_refuse_dangling(kw):
    g = digraph.load(([0, 1, 1], [1, 2, 3]), num_vertices=5)
    with pytest.raises(InvalidParameterError, match=r"dangling=.*mode='power'"):
        digraph.run(g, "pagerank", dangling={0: 1}, **kw)


def test_path_options_refused_with_dangling():
    g = digraph.load(([0, 1, 1], [1, 2, 3]), num_vertices=5)
    with pytest.raises(InvalidParameterError, match="path modes"):
        digraph.run(g, "pagerank", dangling={0: 1}, layer_window=2)


def test_a_linear_system_with_a_dangling_vector():
    """A user system: uneven columns, a dangling term on some vertices; power's answer is the
    normalised solution of x = b + (A + d gᵀ) x."""
    from digraph.algorithms import Algorithm
    from digraph.algorithms._reference import solve_linear_system

    class Tilted(Algorithm):
        name = "tilted-dangling"
        parameters = {}

        def prepare(self, graph):
            n = graph.num_vertices
            out = graph.out_degree.astype(float)
            src_scale = np.where(out > 0, 0.8 / np.maximum(out, 1) * np.linspace(0.3, 1.0, n), 0.0)
            d = np.linspace(2.0, 0.0, n)
            return LinearSystem(b=np.linspace(1.0, 2.0, n), src_scale=src_scale, normalize=True,
                                dangling=d, dangling_scale=np.where(out == 0, 0.7 / d.sum(), 0.0))

    src, dst, _ = multigraph(5, 300, 1200, 0.3)
    g = Graph.from_arrays(src, dst, num_vertices=300)
    x = solve_linear_system(g, Tilted().prepare(g))
    ref = x / x.sum()
    r = digraph.run(g, Tilted(), tol=1e-11)
    assert r.stats["mode"] == "power" and r.stats["power"]["gamma"] <= 0.8 + 1e-12
    assert np.abs(r.values - ref).sum() <= max(1e-11, r.stats["error_bound"])
    with pytest.raises(InvalidParameterError, match="dangling"):
        digraph.run(g, Tilted(), mode="scc")


def test_power_refuses_a_dangling_term_that_is_not_a_contraction():
    g = digraph.load(([0, 1], [1, 2]), num_vertices=3)
    sys_ = LinearSystem(b=np.ones(3), src_scale=np.array([0.5, 0.5, 0.0]), normalize=True,
                        dangling=np.ones(3), dangling_scale=np.array([0.0, 0.0, 0.4]))  # Σd = 3

    class Bad(digraph.algorithms.Algorithm):
        name = "bad"
        parameters = {}

        def prepare(self, graph):
            return sys_

    with pytest.raises(InvalidParameterError, match="column sums below 1"):
        digraph.run(g, Bad())


# ---------------------------------------------------------------------------- networkx backend

def test_nx_backend_dangling():
    n = 80
    src, dst, w = multigraph(2, n, 300, 0.5, weighted=True)
    G = as_nx(n, src, dst, w)
    dangling = {int(v): float(k + 1) for k, v in enumerate(range(0, n, 7))}
    dangling["not a node"] = 5.0  # ignored, as networkx does
    pers = {1: 1.0, 5: 2.0}
    assert B.can_run("pagerank", (G,), {"dangling": dangling}) is True
    for weight in ("weight", None):
        got = B.pagerank(G, personalization=pers, dangling=dangling, tol=1e-12, weight=weight)
        ref = nx.pagerank(G, personalization=pers, dangling=dangling, tol=1e-15, max_iter=10_000,
                          weight=weight)
        assert list(got) == list(G) and all(type(v) is float for v in got.values())
        assert sum(abs(got[k] - ref[k]) for k in ref) <= n * 1e-12 + 1e-12
    # networkx's own test graph and numbers
    G = nx.DiGraph()
    G.add_edges_from([(1, 2), (1, 3), (3, 1), (3, 2), (3, 5), (4, 5), (4, 6), (5, 4), (5, 6),
                      (6, 4)])
    got = B.pagerank(G, dangling={1: 2, 2: 3, 3: 0, 4: 0, 5: 0, 6: 0})
    want = [0.10844518, 0.18618601, 0.0710892, 0.2683668, 0.15919783, 0.20671497]
    assert [got[k] for k in sorted(G)] == pytest.approx(want, abs=1e-4)


def test_nx_backend_dangling_refusals():
    G = nx.DiGraph([(0, 1), (1, 2)])
    with pytest.raises(nx.PowerIterationFailedConvergence):  # networkx: 0/0, NaN iteration
        B.pagerank(G, dangling={"x": 1.0})
    with pytest.raises(nx.PowerIterationFailedConvergence):
        B.pagerank(G, dangling={0: 0})
    assert "non-negative" in B.can_run("pagerank", (G,), {"dangling": {0: -1}})
    assert "dict" in B.can_run("pagerank", (G,), {"dangling": [1, 0, 0]})
    for kw in ({"mode": "scc"}, {"mode": "bsp"}, {"device": "cuda"}):
        assert "power" in B.can_run("pagerank", (G,), dict(dangling={0: 1}, **kw))
    assert B.can_run("pagerank", (G,), {"dangling": {0: 1}, "mode": "power"}) is True
    with pytest.raises(InvalidParameterError, match="dangling="):
        B.pagerank(G, dangling={0: 1.0}, mode="scc")


@pytest.mark.skipif("digraph" not in nx.utils.backends.backends,
                    reason="digraph's networkx entry points are not installed in this environment")
@pytest.mark.filterwarnings("ignore:Note. conversions to backend graphs")
def test_nx_dispatch_dangling():
    G = nx.DiGraph([(0, 1), (1, 2), (2, 0), (2, 3), (0, 4)])
    d = {0: 1.0, 3: 2.0}
    got = nx.pagerank(G, backend="digraph", dangling=d, tol=1e-12)
    ref = nx.pagerank(G, dangling=d, tol=1e-15, max_iter=1000)
    assert sum(abs(got[k] - ref[k]) for k in ref) <= 1e-10
