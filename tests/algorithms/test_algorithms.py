"""Every built-in algorithm against networkx / scipy references (docs/design.md §4).

Random directed multigraphs (hypothesis) with self-loops, parallel arcs, isolated and dangling
vertices and optional weights; then the real graphs of ``../shared/datasets`` when present.
"""

import gzip
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import dijkstra

import digraph
from digraph.errors import InvalidParameterError
from digraph.algorithms import PageRank
from digraph.graph import Graph

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])


def run1(g, algorithm, **kw):
    """``digraph.run`` on one thread unless told otherwise: the answers do not depend on the
    thread count (tested on its own below), and one thread keeps these many tiny runs fast even
    when other processes load the cores (OpenMP barriers spin badly when oversubscribed)."""
    kw.setdefault("threads", 1)
    return digraph.run(g, algorithm, **kw)


from references import (Arcs, adsorption_exact, core_peeling, l1,  # noqa: E402,F401
                        multigraphs, pagerank_exact, sssp_networkx, sssp_scipy, within)


# ============================================================================ PageRank

alphas = st.sampled_from([0.5, 0.85, 0.9, 0.99]) | st.floats(0.05, 0.95)


@st.composite
def personalizations(draw, n):
    if not draw(st.booleans()):
        return None
    keys = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True))
    vals = draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 7.0]), min_size=len(keys), max_size=len(keys)))
    assume(sum(vals) > 0)  # some entries may be zero, not all
    return dict(zip(keys, vals))


@settings(max_examples=120, **SETTINGS)
@given(data=st.data(), arcs=multigraphs(), alpha=alphas, weighted=st.booleans())
def test_pagerank_tight_vs_networkx_and_exact(data, arcs, alpha, weighted):
    pers = data.draw(personalizations(arcs.n))
    g = arcs.graph()
    r = run1(g, "pagerank", alpha=alpha, personalization=pers, weights=weighted, tol=1e-10)
    exact = pagerank_exact(arcs, alpha, pers, weighted)
    assert r.values.shape == (arcs.n,)
    assert within(l1(r.values, exact), 1e-10)
    ref = PageRank().reference(g, alpha=alpha, personalization=pers, weights=weighted)  # scipy spsolve
    assert l1(ref, exact) <= 1e-12
    assert within(l1(r.values, ref), 1e-10)
    assert r.stats["error_bound"] <= 1e-10
    assert abs(r.values.sum() - 1.0) <= 1e-12
    # networkx stops at n * tol on successive differences: 1e-13 leaves it within 1e-9 even at
    # alpha = 0.99 (1e-15 was below what its rounding reaches there: it never stopped)
    nxpr = nx.pagerank(arcs.multidigraph(), alpha=alpha, personalization=pers,
                       weight="weight" if weighted else None, tol=1e-13, max_iter=100_000)
    assert l1(r.values, [nxpr[i] for i in range(arcs.n)]) <= 1e-9


@settings(max_examples=80, **SETTINGS)
@given(data=st.data(), arcs=multigraphs(), alpha=alphas, weighted=st.booleans())
def test_pagerank_default_tol(data, arcs, alpha, weighted):
    pers = data.draw(personalizations(arcs.n))
    r = run1(arcs.graph(), "pagerank", alpha=alpha, personalization=pers, weights=weighted)
    assert r.params["tol"] == 1e-6
    assert within(l1(r.values, pagerank_exact(arcs, alpha, pers, weighted)), 1e-6)


@settings(max_examples=150, **SETTINGS)
@given(data=st.data(), arcs=multigraphs(), alpha=alphas, weighted=st.booleans(),
       tol=st.sampled_from([1e-1, 1e-2, 1e-3, 1e-4, 1e-6, 1e-8]),
       max_iter=st.sampled_from([None, 1, 2, 3, 5]))
def test_pagerank_error_bound_is_sound(data, arcs, alpha, weighted, tol, max_iter):
    """stats["error_bound"] ≥ the true L1 error, on converged and on stopped (max_iter) runs."""
    pers = data.draw(personalizations(arcs.n))
    try:
        r = run1(arcs.graph(), "pagerank", alpha=alpha, personalization=pers,
                        weights=weighted, tol=tol, max_iter=max_iter)
        assert r.stats["error_bound"] <= tol
    except digraph.errors.ConvergenceError as err:
        r = err.result
        assert r.stats["error_bound"] > tol
    err_true = l1(r.values, pagerank_exact(arcs, alpha, pers, weighted))
    assert r.stats["error_bound"] >= err_true - 1e-13


def test_pagerank_weights_matter_and_parallel_arcs_add():
    # 0->1 twice, 0->2 once (unweighted) == 0->1 weight 2, 0->2 weight 1
    multi = Graph.from_arrays([0, 0, 0, 1, 2], [1, 1, 2, 0, 0])
    weighted = Graph.from_arrays([0, 0, 1, 2], [1, 2, 0, 0], [2.0, 1.0, 1.0, 1.0])
    a = run1(multi, "pagerank", tol=1e-12).values
    b = run1(weighted, "pagerank", tol=1e-12).values
    c = run1(weighted, "pagerank", tol=1e-12, weights=False).values
    assert l1(a, b) <= 1e-11
    assert l1(b, c) > 1e-3


def test_normalized_in_parallel_matches_numpy(monkeypatch):
    from digraph.algorithms import base
    rng = np.random.default_rng(3)
    x = rng.random(5000)
    ref = x / x.sum()
    monkeypatch.setattr(base, "PARALLEL_NORMALIZE", 100)  # the parallel loops on a small vector
    y = x.copy()
    out = base.normalized(y)
    assert out is y  # in place
    np.testing.assert_allclose(out, ref, rtol=1e-14, atol=0)
    assert abs(out.sum() - 1.0) < 1e-12
    z = np.zeros(300)
    assert base.normalized(z) is z and not z.any()  # Σx = 0: unchanged
    ro = x.copy()
    ro.flags.writeable = False
    np.testing.assert_allclose(base.normalized(ro), ref, rtol=1e-14)  # a copy
    np.testing.assert_array_equal(base.normalized(np.arange(4)), np.arange(4) / 6)


# ============================================================================ adsorption

@settings(max_examples=120, **SETTINGS)
@given(data=st.data(), arcs=multigraphs(), beta=st.sampled_from([0.8, 0.5, 0.99]) | st.floats(0.01, 0.99),
       weighted=st.booleans(), tol=st.sampled_from([1e-6, 1e-10]))
def test_adsorption_vs_sparse_solve(data, arcs, beta, weighted, tol):
    seeds = data.draw(st.lists(st.integers(0, arcs.n - 1), min_size=1, max_size=arcs.n, unique=True))
    r = run1(arcs.graph(), "adsorption", seeds=seeds, beta=beta, weights=weighted, tol=tol)
    exact = adsorption_exact(arcs, seeds, beta, weighted)
    # the sparse solve's own rounding grows like n·ε/(1 − β) (about 1e-13 at β = 0.99)
    slack = 1e-15 * arcs.n / (1.0 - beta)
    assert l1(r.values, exact) <= tol * (1 + 1e-9) + slack
    assert r.stats["error_bound"] >= l1(r.values, exact) - slack


def test_adsorption_default_beta_and_scalar_seed():
    arcs = Arcs(4, [0, 1, 2, 2], [1, 2, 3, 1])
    r = run1(arcs.graph(), "adsorption", seeds=0, tol=1e-12)
    assert r.params["beta"] == 0.8
    assert l1(r.values, adsorption_exact(arcs, [0], 0.8)) <= 1e-12


# ============================================================================ SSSP

@settings(max_examples=150, **SETTINGS)
@given(data=st.data(), arcs=multigraphs(weights="any", zero_weights=True), weighted=st.booleans())
def test_sssp_vs_networkx(data, arcs, weighted):
    source = data.draw(st.integers(0, arcs.n - 1))
    r = run1(arcs.graph(), "sssp", source=source, weights=weighted)
    assert np.array_equal(r.values, sssp_networkx(arcs, source, weighted))


@settings(max_examples=100, **SETTINGS)
@given(data=st.data(), arcs=multigraphs(weights="any", zero_weights=False), weighted=st.booleans())
def test_sssp_vs_scipy_dijkstra(data, arcs, weighted):
    source = data.draw(st.integers(0, arcs.n - 1))
    r = run1(arcs.graph(), "sssp", source=source, weights=weighted)
    assert np.array_equal(r.values, sssp_scipy(arcs, source, weighted))


def test_sssp_parallel_arcs_lightest_counts_and_weights_false():
    arcs = Arcs(4, [0, 0, 0, 1, 2, 2], [1, 1, 2, 3, 3, 3], [5.0, 2.0, 0.0, 4.0, 9.0, 3.0])
    g = arcs.graph()
    assert run1(g, "sssp", source=0).values.tolist() == [0.0, 2.0, 0.0, 3.0]
    assert run1(g, "sssp", source=0, weights=False).values.tolist() == [0.0, 1.0, 1.0, 2.0]
    assert run1(g, "sssp", source=3).values.tolist() == [np.inf, np.inf, np.inf, 0.0]


def test_sssp_infinite_weight_arc_is_never_used():
    g = Graph.from_arrays([0, 1, 0], [1, 2, 2], [1.0, 1.0, np.inf])
    assert run1(g, "sssp", source=0).values.tolist() == [0.0, 1.0, 2.0]
    g = Graph.from_arrays([0, 1], [1, 2], [1.0, np.inf])
    assert run1(g, "sssp", source=0).values.tolist() == [0.0, 1.0, np.inf]


# ============================================================================ k-core

@settings(max_examples=150, **SETTINGS)
@given(arcs=multigraphs(weights="none"))
def test_kcore_simple_digraph_vs_networkx(arcs):
    pairs = sorted({(u, v) for u, v in zip(arcs.src.tolist(), arcs.dst.tolist()) if u != v})
    G = nx.DiGraph()
    G.add_nodes_from(range(arcs.n))
    G.add_edges_from(pairs)
    g = Graph.from_arrays([u for u, _ in pairs], [v for _, v in pairs], num_vertices=arcs.n)
    r = run1(g, "kcore")
    assert r.values.dtype == np.int64
    core = nx.core_number(G)
    assert r.values.tolist() == [core[i] for i in range(arcs.n)]


@settings(max_examples=150, **SETTINGS)
@given(arcs=multigraphs(weights="any"))
def test_kcore_multigraph_vs_peeling(arcs):
    r = run1(arcs.graph(), "kcore")
    assert r.values.tolist() == core_peeling(arcs.n, arcs.src, arcs.dst).tolist()


@settings(max_examples=100, **SETTINGS)
@given(n=st.integers(1, 40), data=st.data())
def test_kcore_undirected_graph(n, data):
    v = st.integers(0, n - 1)
    edges = data.draw(st.lists(st.tuples(v, v).filter(lambda e: e[0] != e[1]), max_size=4 * n))
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_edges_from(edges)
    und = list(G.edges())
    src = [a for a, b in und] + [b for a, b in und]
    dst = [b for a, b in und] + [a for a, b in und]
    g = Graph.from_arrays(src, dst, num_vertices=n, directed=False)
    core = nx.core_number(G)
    assert run1(g, "kcore").values.tolist() == [core[i] for i in range(n)]


# ============================================================================ threads

def _run_all(arcs, threads, source, seeds):
    g = arcs.graph()
    return {
        "pagerank": run1(g, "pagerank", tol=1e-10, threads=threads).values,
        "adsorption": run1(g, "adsorption", seeds=seeds, tol=1e-10, threads=threads).values,
        "sssp": run1(g, "sssp", source=source, threads=threads).values,
        "kcore": run1(g, "kcore", threads=threads).values,
    }


@settings(max_examples=20, **SETTINGS)
@given(data=st.data(), arcs=multigraphs(max_n=40, max_deg=6))
def test_threads_do_not_change_the_answer(data, arcs):
    import numba
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("Numba started with one thread")
    source = data.draw(st.integers(0, arcs.n - 1))
    seeds = data.draw(st.lists(st.integers(0, arcs.n - 1), min_size=1, max_size=5, unique=True))
    one = _run_all(arcs, 1, source, seeds)
    two = _run_all(arcs, 2, source, seeds)
    for name in ("pagerank", "adsorption"):
        assert l1(one[name], two[name]) <= 1e-12, name
    for name in ("sssp", "kcore"):
        assert np.array_equal(one[name], two[name]), name


def test_threads_on_a_larger_graph_dense_rounds():
    """Dense (parallel pull) rounds with real work split across 2 threads."""
    import numba
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("Numba started with one thread")
    rng = np.random.default_rng(7)
    n, m = 3000, 30000
    arcs = Arcs(n, rng.integers(0, n, m), rng.integers(0, n, m), rng.integers(1, 10, m).astype(float))
    one = _run_all(arcs, 1, 0, [0, 1, 2])
    two = _run_all(arcs, 2, 0, [0, 1, 2])
    for name in ("pagerank", "adsorption"):
        assert l1(one[name], two[name]) <= 1e-12, name
    for name in ("sssp", "kcore"):
        assert np.array_equal(one[name], two[name]), name
    assert one["kcore"].tolist() == core_peeling(n, arcs.src, arcs.dst).tolist()
    assert np.array_equal(one["sssp"], sssp_scipy(arcs, 0))


# ============================================================================ every mode

RUN = __import__("sys").modules["digraph.run"]
def _modes():
    # "peel" answers k-core only (every other family is refused): tests/dispatch/test_kcore_peel.py;
    # "cluster" runs on one GPU only: tests/dispatch/cuda/test_gpu_cluster.py
    return [m for m in RUN.MODES if m not in ("peel", "cluster")]


@pytest.mark.parametrize("mode", _modes())
def test_pagerank_parallel_self_loops_every_mode(mode):
    arcs = Arcs(9, [0] * 21 + [1, 2, 3, 4, 0], [0] * 26)
    r = run1(arcs.graph(), "pagerank", alpha=0.99, tol=1e-10, mode=mode)
    assert within(l1(r.values, pagerank_exact(arcs, 0.99)), 1e-10)


@pytest.mark.parametrize("mode", _modes())
@settings(max_examples=25, phases=[Phase.explicit, Phase.reuse, Phase.generate], **SETTINGS)
@given(data=st.data(), arcs=multigraphs(weights="int"), alpha=alphas)
def test_every_mode_matches_the_references(mode, data, arcs, alpha):
    source = data.draw(st.integers(0, arcs.n - 1))
    seeds = data.draw(st.lists(st.integers(0, arcs.n - 1), min_size=1, max_size=5, unique=True))
    g = arcs.graph()
    r = run1(g, "pagerank", alpha=alpha, tol=1e-10, mode=mode)
    assert r.stats["mode"] == mode
    assert within(l1(r.values, pagerank_exact(arcs, alpha)), 1e-10)
    if mode == "power":  # normalised linear systems only: a clear error for the others
        with pytest.raises(InvalidParameterError, match="mode='power' cannot run this system"):
            run1(g, "adsorption", seeds=seeds, tol=1e-10, mode=mode)
        with pytest.raises(InvalidParameterError, match="mode='power'"):
            run1(g, "sssp", source=source, mode=mode)
        return
    r = run1(g, "adsorption", seeds=seeds, tol=1e-10, mode=mode)
    assert within(l1(r.values, adsorption_exact(arcs, seeds, 0.8)), 1e-10)
    if mode == "scc":  # linear systems only: a clear error for the others
        with pytest.raises(InvalidParameterError, match="mode='scc' solves linear systems"):
            run1(g, "sssp", source=source, mode=mode)
        return
    r = run1(g, "sssp", source=source, mode=mode)
    assert np.array_equal(r.values, sssp_networkx(arcs, source))
    if mode.startswith("path"):  # k-core's dependencies are undirected: no path mode
        with pytest.raises(InvalidParameterError, match="k-core depends on in- and out-neighbours"):
            run1(g, "kcore", mode=mode)
        return
    r = run1(g, "kcore", mode=mode)
    assert r.values.tolist() == core_peeling(arcs.n, arcs.src, arcs.dst).tolist()


# ============================================================================ real graphs

try:
    from conftest import dataset_path  # tests/conftest.py: skips when ../shared/datasets is absent
except ImportError:  # pragma: no cover - a checkout without the shared helper
    def dataset_path(name):
        path = Path(__file__).resolve().parents[2].parent / "shared" / "datasets" / name
        if not path.is_file():
            pytest.skip(f"dataset {path} is absent")
        return path


def dataset_arcs(name):
    path = dataset_path(f"{name}.txt.gz")
    with gzip.open(path, "rt") as f:
        a = np.loadtxt(f, dtype=np.int64, ndmin=2)
    return a[:, 0], a[:, 1]


def pagerank_power(g, alpha=0.85, tol=1e-14, max_iter=10_000):
    """scipy power iteration with dangling mass redistributed along p (networkx's rule)."""
    n = g.num_vertices
    A = g.to_scipy(weights=False).astype(np.float64)  # row = source
    out = np.asarray(A.sum(axis=1)).ravel()
    inv = np.zeros(n)
    inv[out > 0] = 1.0 / out[out > 0]
    PT = (sp.diags_array(inv) @ A).T.tocsr()
    dangling = out == 0
    x = np.full(n, 1.0 / n)
    for _ in range(max_iter):
        nx_ = alpha * (PT @ x) + (alpha * x[dangling].sum() + 1.0 - alpha) / n
        err = np.abs(nx_ - x).sum()
        x = nx_
        if err < tol * (1 - alpha):
            break
    return x / x.sum()


SMALL = ["email-Eu-core", "wiki-Vote", "p2p-Gnutella08"]


@pytest.fixture(scope="module")
def real_graphs():
    cache = {}

    def get(name):
        if name not in cache:
            src, dst = dataset_arcs(name)
            cache[name] = Graph.from_arrays(src, dst, name=name)
        return cache[name]
    return get


@pytest.mark.datasets
@pytest.mark.parametrize("name", SMALL)
def test_real_pagerank(real_graphs, name):
    g = real_graphs(name)
    exact = PageRank().reference(g)
    assert l1(exact, pagerank_power(g)) <= 1e-12
    r6 = digraph.run(g, "pagerank")
    assert l1(r6.values, exact) <= 1e-6
    assert r6.stats["error_bound"] >= l1(r6.values, exact)
    r10 = digraph.run(g, "pagerank", tol=1e-10)
    assert l1(r10.values, exact) <= 1e-10


@pytest.mark.datasets
@pytest.mark.parametrize("name", SMALL)
def test_real_sssp_and_kcore(real_graphs, name):
    g = real_graphs(name)
    ids = g.vertex_ids
    a = sp.csr_array((np.ones(g.num_arcs), g.out_targets, g.out_offsets), shape=(g.num_vertices,) * 2)
    a.sum_duplicates()
    for s in (0, g.num_vertices // 2, g.num_vertices - 1):
        r = digraph.run(g, "sssp", source=ids[s].item())
        assert np.array_equal(r.values, dijkstra(a, directed=True, indices=s))
    G = nx.DiGraph()
    G.add_nodes_from(ids.tolist())
    src = ids[g.arc_sources].tolist()
    dst = ids[g.out_targets].tolist()
    G.add_edges_from((u, v) for u, v in zip(src, dst) if u != v)
    core = nx.core_number(G)
    r = digraph.run(g, "kcore")
    assert r.to_dict() == core


@pytest.mark.datasets
@pytest.mark.slow
def test_real_cnr2000_pagerank_and_sssp(real_graphs):
    g = real_graphs("cnr-2000")
    exact = pagerank_power(g, tol=1e-14)
    r6 = digraph.run(g, "pagerank")
    assert l1(r6.values, exact) <= 1e-6
    r10 = digraph.run(g, "pagerank", tol=1e-10)
    assert l1(r10.values, exact) <= 1e-10
    a = sp.csr_array((np.ones(g.num_arcs), g.out_targets, g.out_offsets), shape=(g.num_vertices,) * 2)
    r = digraph.run(g, "sssp", source=0)
    assert np.array_equal(r.values, dijkstra(a, directed=True, indices=0))


@pytest.mark.parametrize("dtype", [np.int64, np.float64])
def test_scaled_inverse_numpy_and_parallel_forms_agree(dtype, monkeypatch):
    from digraph.algorithms import base
    # the numpy form below SCALED_INVERSE_PARALLEL entries, the parallel Numba pass above it:
    # the same values (s / w where w > 0, 0 elsewhere, negative weights included)
    rng = np.random.default_rng(5)
    w = rng.integers(-2, 6, 3000).astype(dtype)
    expect = np.where(w > 0, 0.85 / np.where(w > 0, w, 1), 0.0)
    small = base.scaled_inverse(w, 0.85)
    monkeypatch.setattr(base, "SCALED_INVERSE_PARALLEL", 100)
    large = base.scaled_inverse(w, 0.85)
    np.testing.assert_array_equal(small, expect)
    np.testing.assert_array_equal(large, expect)
    assert small.dtype == large.dtype == np.float64
    tiny = np.array([1e-320, 2.0])  # 0.85 / 1e-320 overflows: inf in both forms, no warning
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        monkeypatch.setattr(base, "SCALED_INVERSE_PARALLEL", 0)
        parallel = base.scaled_inverse(tiny, 0.85)
        monkeypatch.setattr(base, "SCALED_INVERSE_PARALLEL", 1 << 16)
        numpy_form = base.scaled_inverse(tiny, 0.85)
    np.testing.assert_array_equal(parallel, [np.inf, 0.425])
    np.testing.assert_array_equal(numpy_form, [np.inf, 0.425])
