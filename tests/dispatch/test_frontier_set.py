"""Work proportional to what is active (issue 17, item 6) for the CPU linear push engines:
``bsp`` and ``vertex-async`` keep the vertices whose residual is non-zero in a residual set while
they are few (:class:`digraph.dispatch.engines.push.cpu_bsp.Touched`), and their scans read only those.

The set must change the work, never the answer: every run here is compared with the same run
with the set switched off (``set_share=0``: every scan reads every vertex, the engines as they
were) and with an exact solve, within the certified bound; ``stats["push"]["vertices_scanned"]``
shows that the scans followed the residual.
"""

import contextlib
import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import digraph
from digraph import compiling
from digraph.algorithms import Adsorption, PageRank
from digraph.algorithms._reference import coefficient_matrix
from digraph.dispatch.engines.push import cpu_bsp as bsp, cpu_vertex_async as vertex_async
from digraph.dispatch.settings import using
from digraph.graph import Graph
from digraph.smx.cpu import bsp as cpu_bsp

MODULES = {"bsp": bsp, "vertex-async": vertex_async}


@contextlib.contextmanager
def frontier_set(mode, share, least=None):
    """``mode``'s engine with the residual set's ``set_share`` (and ``set_min``) set."""
    mod = MODULES[mode]
    kw = {"set_share": share}
    if least is not None:
        kw["set_min"] = least
    with using([dataclasses.replace(mod.DEFAULT, **kw)]):
        yield


def run_both(g, name, mode, **params):
    """(with the set, without it): the same run twice."""
    with frontier_set(mode, 0.0):
        off = digraph.run(g, name, mode=mode, **params)
    on = digraph.run(g, name, mode=mode, **params)
    return on, off


def assert_agree(on, off):
    """Both answers lie within their certified bounds of the exact one: so of each other."""
    gap = np.abs(on.values - off.values).sum()
    assert gap <= on.stats["error_bound"] + off.stats["error_bound"]


def chain(k):
    """0 → 1 → … → k-1."""
    return Graph.from_arrays(np.arange(k - 1), np.arange(1, k), num_vertices=k)


def local_forward(n, deg=2, reach=60, seed=0):
    """Each vertex has ``deg`` arcs to vertices at most ``reach`` ahead (a few back-arcs too):
    a residual started on a few vertices spreads by about ``reach`` vertices a round."""
    rng = np.random.default_rng(seed)
    src = np.repeat(np.arange(n), deg)
    dst = np.minimum(src + rng.integers(1, reach + 1, src.size), n - 1)
    back = rng.integers(0, n, n // 50)
    src = np.concatenate([src, back])
    dst = np.concatenate([dst, np.maximum(back - rng.integers(1, reach + 1, back.size), 0)])
    return Graph.from_arrays(src, dst, num_vertices=n)


def jacobi_reference(g, seeds, beta):
    """Adsorption by 300 Jacobi sweeps in scipy (rows of A sum to β = 0.8 at most, so the error
    is below n · 0.8^300 < 1e-25): a direct solve fills in on a random graph (minutes)."""
    algo = Adsorption()
    system = algo.prepare(g, **algo.bind(g, {"seeds": seeds, "beta": beta}))
    a = coefficient_matrix(g, system)
    x = system.b.copy()
    for _ in range(300):
        x = system.b + a @ x
    return x


# ---------------------------------------------------------------------------- whole runs


@pytest.mark.parametrize("mode", ["bsp", "vertex-async"])
def test_chain_personalised_at_its_head(mode):
    n, alpha, tol = 200_000, 0.85, 1e-8
    g = chain(n)
    on, off = run_both(g, "pagerank", mode, personalization={0: 1.0}, alpha=alpha, tol=tol)
    # the exact answer: x_k ∝ α^k (the tail's mass is dropped), normalised
    exact = alpha ** np.arange(n, dtype=np.float64)
    exact /= exact.sum()
    for r in (on, off):
        s = r.stats
        assert s["converged"] and s["error_bound"] <= tol
        assert np.abs(r.values - exact).sum() <= s["error_bound"]
        assert s["rounds"] >= 100  # the residual walks down the chain one vertex a round
    assert off.stats["push"]["vertices_scanned"] >= off.stats["rounds"] * n
    # with the set: the first scan and one after each certificate read every vertex, the
    # rounds only the one or two vertices holding the residual
    certificates = 1 + on.stats.get("recertified", 0)
    assert on.stats["push"]["vertices_scanned"] <= (certificates + 1) * n + 10 * on.stats["rounds"]
    assert_agree(on, off)
    if mode == "bsp":  # Jacobi rounds over the same frontiers in the same order
        for key in ("rounds", "vertex_updates", "arc_updates", "sparse_rounds"):
            assert on.stats[key] == off.stats[key], key


@pytest.fixture(scope="module")
def forward_graph():
    return local_forward(50_000)


@pytest.mark.parametrize("mode", ["bsp", "vertex-async"])
@pytest.mark.parametrize("seeds", [[7], [0, 25_000], [100, 31_000, 49_990]])
def test_adsorption_with_few_seeds(forward_graph, mode, seeds):
    g, tol = forward_graph, 1e-8
    exact = Adsorption().reference(g, seeds=seeds, beta=0.8)
    on, off = run_both(g, "adsorption", mode, seeds=seeds, beta=0.8, tol=tol)
    for r in (on, off):
        assert r.stats["converged"] and r.stats["error_bound"] <= tol
        assert np.abs(r.values - exact).sum() <= r.stats["error_bound"]
    assert_agree(on, off)
    n, rounds = g.num_vertices, on.stats["rounds"]
    assert off.stats["push"]["vertices_scanned"] >= off.stats["rounds"] * n
    # the residual reaches a few thousand vertices: the scans read a small share of n a round
    assert on.stats["push"]["vertices_scanned"] < 0.25 * rounds * n
    assert on.stats["arc_updates"] < 0.25 * rounds * g.num_arcs
    if mode == "bsp":
        assert on.stats["rounds"] == off.stats["rounds"]
        assert on.stats["arc_updates"] == off.stats["arc_updates"]


@pytest.mark.parametrize("mode", ["bsp", "vertex-async"])
def test_a_set_that_outgrows_its_limit_is_dropped(mode):
    """One seed in a random graph: the residual reaches every vertex within a few rounds, the
    set is dropped, later scans read every vertex (and bsp pulls); the answers agree."""
    rng = np.random.default_rng(5)
    n, m = 20_000, 100_000
    g = Graph.from_arrays(rng.integers(0, n, m), rng.integers(0, n, m), num_vertices=n)
    exact = jacobi_reference(g, seeds=[3], beta=0.8)
    on, off = run_both(g, "adsorption", mode, seeds=[3], beta=0.8, tol=1e-8)
    for r in (on, off):
        assert r.stats["converged"]
        assert np.abs(r.values - exact).sum() <= r.stats["error_bound"] <= 1e-8
    rounds = on.stats["rounds"]
    assert on.stats["push"]["vertices_scanned"] > (rounds // 2) * n  # the set did not last
    # the first rounds did
    assert on.stats["push"]["vertices_scanned"] < off.stats["push"]["vertices_scanned"]
    if mode == "bsp":
        assert on.stats["dense_rounds"] == off.stats["dense_rounds"] > 0


@pytest.mark.parametrize("mode", ["bsp", "vertex-async"])
def test_uniform_pagerank(mode):
    """δ = b is non-zero everywhere: the scans read every vertex, as before (a set may start
    late in the run, once the residual has vanished from most vertices), same answer."""
    g = local_forward(20_000, deg=4, seed=2)
    on, off = run_both(g, "pagerank", mode, tol=1e-9)
    n = g.num_vertices
    assert on.stats["push"]["vertices_scanned"] <= off.stats["push"]["vertices_scanned"]
    assert on.stats["push"]["vertices_scanned"] >= n * on.stats["rounds"] // 2
    assert np.abs(on.values - off.values).sum() <= 2e-9
    if mode == "bsp":  # δ vanishes nowhere in Jacobi rounds here: the same rounds exactly
        assert np.array_equal(on.values, off.values)


SETTINGS = dict(deadline=None, max_examples=25,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@st.composite
def small_graphs(draw, max_n=60):
    n = draw(st.integers(1, max_n))
    v = st.integers(0, n - 1)
    m = draw(st.integers(0, 3 * n))
    arcs = draw(st.lists(st.tuples(v, v), min_size=m, max_size=m))
    src = np.array([a for a, _ in arcs], dtype=np.int64)
    dst = np.array([b for _, b in arcs], dtype=np.int64)
    w = None
    if draw(st.booleans()):
        w = np.array(draw(st.lists(st.integers(1, 9), min_size=m, max_size=m)), float)
    return Graph.from_arrays(src, dst, w, num_vertices=n)


@settings(**SETTINGS)
@given(g=small_graphs(), data=st.data())
def test_any_limit_gives_the_exact_answer(g, data):
    """Sets of every size, dropped and rebuilt at any round (``set_min`` 0 to 2, shares up to
    all the vertices), on both engines: personalised PageRank (the normalised answer uses the
    tracked Σx) and adsorption, within the certified bound of the exact solve."""
    n = g.num_vertices
    seeds = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=3, unique=True))
    share = data.draw(st.sampled_from([1 / 16, 1 / 2, 1.0]))
    least = data.draw(st.integers(0, 2))
    pers = {s: 1.0 + i for i, s in enumerate(seeds)}
    pr_exact = PageRank().reference(g, personalization=pers)
    ad_exact = Adsorption().reference(g, seeds=seeds)
    for mode in MODULES:
        with frontier_set(mode, share, least):
            pr = digraph.run(g, "pagerank", mode=mode, personalization=pers, tol=1e-10)
            ad = digraph.run(g, "adsorption", mode=mode, seeds=seeds, tol=1e-10)
        for r, exact in ((pr, pr_exact), (ad, ad_exact)):
            s = r.stats
            assert s["converged"] and s["error_bound"] <= 1e-10
            assert np.abs(r.values - exact).sum() <= s["error_bound"] + 1e-15


# ---------------------------------------------------------------------------- the kernels


@settings(deadline=None, max_examples=60)
@given(data=st.data())
def test_set_scan_reads_what_a_full_scan_reads(data):
    n = data.draw(st.integers(1, 300))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    delta = rng.standard_normal(n) * (rng.random(n) < data.draw(st.floats(0.0, 1.0)))
    theta = float(data.draw(st.sampled_from([0.0, 0.5, 1.5])))
    deg = rng.integers(0, 5, n)
    x = rng.random(n)
    none = np.empty(0, np.uint8)
    full = cpu_bsp.linear_scan(delta, theta, deg, x, none, none, np.empty(0, np.int64))
    mark, block = cpu_bsp.new_set(n)
    assert cpu_bsp.set_build(delta, mark, block) == full[5] == np.count_nonzero(delta)
    # zero a few entries after the build: the scan must unflag them
    gone = rng.random(n) < 0.3
    delta[gone] = 0.0
    full = cpu_bsp.linear_scan(delta, theta, deg, x, none, none, np.empty(0, np.int64))
    front = np.empty(n, np.int64)
    nf, vol, r1, rmax, sx, kept = cpu_bsp.linear_scan(delta, theta, deg, x, mark, block, front)
    assert (nf, vol, rmax, kept) == (full[0], full[1], full[3], full[5])
    assert r1 == pytest.approx(full[2], rel=1e-12, abs=0.0)
    assert front[:nf].tolist() == np.flatnonzero(np.abs(delta) > theta).tolist()  # vertex order
    assert mark[:n].tolist() == (delta != 0).astype(np.uint8).tolist() and not mark[n:].any()
    blocks = np.zeros_like(block)
    blocks[np.flatnonzero(delta) >> cpu_bsp.BLOCK_SHIFT] = 1
    assert block.tolist() == blocks.tolist()  # empty blocks are unflagged too
    cpu_bsp.set_clear(mark, block)
    assert not mark.any() and not block.any()


def test_touched_limit_and_drop():
    t = bsp.Touched(10_000, 1 / 8, 16)
    assert t.limit == 1250
    delta = np.zeros(10_000)
    delta[[3, 700, 9_999]] = 1.0
    t.build(delta, 3, 5.0)
    assert t.valid and t.count == 3 and t.total_x() == 5.0
    t.absorbed(0.5)
    assert t.total_x() == 5.5
    t.grew(1_000)
    assert t.valid
    t.grew(300)  # 1,303 flagged > 1,250
    assert not t.valid and not t.mark.any() and not t.block.any()
    big = np.ones(10_000)
    t.build(big, 10_000, 0.0)  # more than half the limit: no set
    assert not t.valid
    assert bsp.Touched(10, 1 / 8, 16).limit == 16 and bsp.Touched(10**6, 0.0, 16).limit == -1


def test_warmup_compiles_the_set_kernels():
    """After the warm-up of both engines, a run whose residual starts on one vertex (the set's
    kernels) and one without a set compile nothing."""
    digraph.warmup(modes=["bsp", "vertex-async"], families=["linear"])
    c0 = compiling.seconds()
    g = local_forward(3_000, seed=1)
    for mode in MODULES:
        digraph.run(g, "adsorption", mode=mode, seeds=[5], tol=1e-8)
        with frontier_set(mode, 0.0):
            digraph.run(g, "adsorption", mode=mode, seeds=[5], tol=1e-8)
    assert compiling.seconds() == c0
