"""The sharded multi-GPU engine (``device="cuda:0,1,..."``, :mod:`digraph.dispatch.engines.push.gpus`).

Without GPUs the shards share Numba's simulated device and exchange by host copies (the byte
counts are those of the real transports); on a machine with several GPUs the same tests run on
``cuda:0`` and ``cuda:1`` with the default transport, and :func:`test_transports_agree` compares
peer-to-peer copies with NCCL.
"""

import dataclasses
import os

import numpy as np
import pytest
from hypothesis import given, settings, HealthCheck
from hypothesis import strategies as st

import digraph
from digraph.errors import InvalidParameterError
from digraph.result import RunStats

from conftest import gpu_count
from test_gpu import CASES, SRC, DST, W, WidestPath, graphs

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def every_gpu(engine_settings):
    """Shard even these tiny graphs over every GPU named (by default a graph needs
    ``MultiGpuSettings.min_arcs_per_gpu`` arcs per GPU): ``digraph.run`` takes the engine's
    :data:`~digraph.dispatch.runtime.cuda.shard_settings.DEFAULT` with these fields changed for the test."""
    _defaults(engine_settings, min_arcs_per_gpu=0, shard_families=("linear", "monotone", "hindex"))


def _defaults(engine_settings, **fields):
    """The sharded engine's defaults with ``fields`` changed, for the rest of the test."""
    from digraph.dispatch.runtime.cuda import shard_settings
    engine_settings(shard_settings.DEFAULT, **fields)


@pytest.fixture(scope="module")
def small():
    return digraph.load((SRC, DST, W))


def devices(k):
    return "cuda:" + ",".join(str(i) for i in range(k))


@pytest.mark.parametrize("mode", ["bsp", "vertex-async", "path"])
@pytest.mark.parametrize("algo,params", CASES, ids=[c[0] for c in CASES])
def test_answers_match_cpu(ngpu, small, algo, params, mode):
    # three shards for the cheap families (the simulator runs every thread in Python)
    if mode == "path" and algo == "kcore":  # no path mode for k-core: a clear error
        with pytest.raises(InvalidParameterError, match="k-core"):
            digraph.run(small, algo, mode=mode, device=devices(2), **params)
        return
    for k in sorted({2, min(3 if "tol" not in params else 2, ngpu)}):
        r = digraph.run(small, algo, mode=mode, device=devices(k), **params)
        ref = digraph.run(small, algo, mode="bsp",
                          **{**params, **({"tol": 1e-12} if "tol" in params else {})})
        assert r.stats.converged
        if "tol" in params:
            assert np.abs(r.values - ref.values).sum() <= params["tol"]
            assert r.stats.error_bound <= params["tol"]
        else:
            np.testing.assert_array_equal(r.values, ref.values)
        assert r.stats.gpus == k and r.stats.rounds > 0 and r.stats.arc_updates > 0
        if mode != "path":  # sharded: every GPU got arcs and sent a slice
            assert len(r.stats.sharded["arcs"]) == k and sum(r.stats.sharded["arcs"]) > 0
            assert r.stats.bytes_between_gpus > 0
            assert len(r.stats.sharded["idle_share"]) == k
            assert all(0.0 <= s <= 1.0 for s in r.stats.sharded["idle_share"])


def test_same_counters_as_one_gpu_for_dense_pagerank(ngpu, small):
    """Dense Jacobi rounds are the same rounds on 1 or k shards: same round count and answer up
    to rounding."""
    from digraph.dispatch.engines.push import gpus as multi_gpu
    from digraph.algorithms import get
    A = get("pagerank")
    sys = A.prepare(small, **A.bind(small, {}))
    out = {}
    for k in (1, 2):
        st_ = RunStats.new()
        x, ok = multi_gpu.solve(small, sys, devices=["cuda:0"] * k if _sim() else
                                [f"cuda:{i % ngpu}" for i in range(k)], mode="bsp", tol=1e-6,
                                max_iter=10_000, stats=st_)
        assert ok
        out[k] = (x, st_["rounds"], st_["arc_updates"])
    np.testing.assert_allclose(out[2][0], out[1][0], rtol=0, atol=1e-14)
    assert out[2][1:] == out[1][1:]


def _sim():
    from digraph.dispatch.runtime.cuda.backend import backend
    return backend("cuda").sim


def test_weighted_sssp_unreachable_and_user_algorithm(ngpu, small):
    g = digraph.load((np.array([0, 0, 1, 2, 4]), np.array([1, 2, 2, 3, 0]),
                      np.array([4.0, 1.0, 1.0, 5.0, 1.0])))
    for mode in ("bsp", "vertex-async"):
        r = digraph.run(g, "sssp", source=0, mode=mode, device=devices(2), weights=True)
        np.testing.assert_array_equal(r.values, [0.0, 4.0, 1.0, 6.0, np.inf])
        w = digraph.run(small, WidestPath(), source=0, mode=mode, device=devices(2))
        np.testing.assert_array_equal(w.values, digraph.run(small, WidestPath(), source=0).values)


@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
@given(g=graphs(), mode=st.sampled_from(["bsp", "vertex-async"]), k=st.integers(2, 3))
def test_hypothesis_graphs(g, mode, k):
    k = min(k, gpu_count())
    if k < 2:
        pytest.skip("one GPU")
    pr = digraph.run(g, "pagerank", mode=mode, device=devices(k), tol=1e-4)
    ref = digraph.run(g, "pagerank", mode="bsp", tol=1e-12)
    assert np.abs(pr.values - ref.values).sum() <= 1e-4
    for algo, params in (("sssp", {"source": 0}), ("kcore", {})):
        r = digraph.run(g, algo, mode=mode, device=devices(k), **params)
        np.testing.assert_array_equal(r.values, digraph.run(g, algo, **params).values)


def test_shard_ranges_balance_arcs():
    from digraph.dispatch.runtime.cuda.ranges import shard_ranges
    rng = np.random.default_rng(1)
    deg = rng.integers(0, 50, size=1000)
    deg[17] = 5000  # a hub: its range holds it alone
    off = np.concatenate([[0], np.cumsum(deg)])
    for k in (1, 2, 3, 4, 7):
        b = shard_ranges(off, k)
        assert b[0] == 0 and b[-1] == 1000 and b.size == k + 1 and np.all(np.diff(b) >= 0)
        arcs = np.diff(off[b])
        assert arcs.sum() == off[-1]
        # no range exceeds its share by more than one vertex's arcs
        assert arcs.max() <= off[-1] / k + deg.max()
    assert list(shard_ranges(np.zeros(4, np.int64), 2)) in ([0, 0, 3], [0, 3, 3])
    for k in (2, 3, 4):  # a vertex counting as 3 arcs: the ranges balance arcs + 3 per vertex
        b = shard_ranges(off, k, 3)
        cost = np.diff(off[b]) + 3 * np.diff(b)
        assert b[0] == 0 and b[-1] == 1000 and cost.sum() == off[-1] + 3000
        assert cost.max() <= cost.sum() / k + deg.max() + 3
    b = shard_ranges(np.concatenate([[0], np.full(10, 100)]), 2, 1)  # arcs all on vertex 0
    assert list(b) == [0, 1, 10]


def test_device_list_errors(small, request):
    from digraph.dispatch.engines.push.gpus import parse_devices
    assert parse_devices("cuda:0,2") == ["cuda:0", "cuda:2"]
    with pytest.raises(InvalidParameterError, match="twice"):
        digraph.run(small, "pagerank", device="cuda:0,0")
    request.getfixturevalue("ngpu")  # below, two GPUs named: a machine with one refuses first
    with pytest.raises(InvalidParameterError, match="batch_arcs"):
        digraph.run(small, "pagerank", device="cuda:0,1", batch_arcs=4)
    with pytest.raises(InvalidParameterError, match="path modes"):
        digraph.run(small, "pagerank", device="cuda:0,1", mode="bsp", priority="pending")


def _skewed():
    """A graph whose vertices fall in every exchange class in every shard: ids 0, 4, 8, ... have
    no in-arcs, ids 1, 5, 9, ... no out-arcs."""
    rng = np.random.default_rng(5)
    ids = np.arange(60)
    src = rng.choice(ids[ids % 4 != 1], 240, p=None)
    dst = rng.choice(ids[ids % 4 != 0], 240)
    return digraph.load((src, dst), num_vertices=60)


def _send_classes(g, k):
    """(vertices read by another shard with in-arcs, all vertices read by another shard) per
    shard, found from the arcs alone."""
    from digraph.dispatch.runtime.cuda.ranges import shard_ranges
    from digraph.dispatch.runtime.cuda.shard_settings import DEFAULT
    n = g.num_vertices
    b = shard_ranges(g.in_offsets, k, DEFAULT.vertex_cost)
    owner = np.searchsorted(b, np.arange(n), side="right") - 1
    indeg = np.diff(g.in_offsets)
    tgt = np.repeat(np.arange(n), indeg)
    src = np.asarray(g.in_sources)
    remote = np.zeros(n, bool)
    remote[src[owner[src] != owner[tgt]]] = True
    a = [int((remote & (indeg > 0))[b[i]:b[i + 1]].sum()) for i in range(k)]
    ab = [int(remote[b[i]:b[i + 1]].sum()) for i in range(k)]
    return a, ab


@pytest.mark.skipif(os.environ.get("NUMBA_ENABLE_CUDASIM") == "1",
                    reason="minutes under the CUDA simulator (a GPU thread per Python thread); "
                           "passed on two H100s, 2026-11-26")
def test_exchange_bytes_are_counted(ngpu):
    """A round all-gathers the sends of the vertices that another shard reads: those with
    in-arcs, and in the first two rounds also those without (whose δ is 0 afterwards); the set-up
    all-gathers their source factors, a certification their x."""
    g = _skewed()
    for k in sorted({2, min(3, ngpu)}):
        r = digraph.run(g, "pagerank", mode="bsp", device=devices(k), tol=1e-6)
        a, ab = _send_classes(g, k)
        assert r.stats.sharded["sends"] == a and r.stats.sharded["sends_first"] == ab
        assert 0 < sum(a) < sum(ab) <= g.num_vertices - 15  # ids 1, 5, 9, ... are never read
        rounds, certs = r.stats.rounds, 1 + r.stats.get("recertified", 0)
        assert rounds > 2 and certs == 1
        vals = sum(ab) + 2 * sum(ab) + (rounds - 2) * sum(a) + certs * sum(ab)
        assert r.stats.bytes_between_gpus == vals * 8 * (k - 1)


@pytest.mark.skipif(os.environ.get("NUMBA_ENABLE_CUDASIM") == "1",
                    reason="minutes under the CUDA simulator (a GPU thread per Python thread); "
                           "passed on two H100s, 2026-11-26")
@pytest.mark.parametrize("weighted", [False, True])
def test_layouts_give_one_gpu_answer(ngpu, weighted, engine_settings):
    """Every numbering of the shards gives the rounds and the answer of one shard in vertex
    order, and of the one-GPU engine up to rounding."""
    from digraph.dispatch.engines import one_gpu as gpu
    from digraph.dispatch.engines.push import gpus as multi_gpu
    from digraph.dispatch.runtime.cuda import shard_settings
    from digraph.algorithms import get
    _defaults(engine_settings, balance=False)  # the same ranges in every run
    g = _skewed()
    if weighted:
        g = digraph.load((np.asarray(g.arc_sources), np.asarray(g.out_targets),
                          np.linspace(0.5, 2.0, g.num_arcs)), num_vertices=g.num_vertices)
    A = get("pagerank")
    sys = A.prepare(g, **A.bind(g, {}))
    assert (sys.arc_scale is not None) == weighted

    def run(k, layout, **fields):
        st_ = RunStats.new()
        devs = ["cuda:0"] * k if _sim() else [f"cuda:{i}" for i in range(k)]
        x, ok = multi_gpu.solve(g, sys, devices=devs, mode="bsp", tol=1e-7, max_iter=10_000,
                                stats=st_, min_arcs_per_gpu=0, layout=layout,
                                settings=dataclasses.replace(shard_settings.DEFAULT, **fields))
        assert ok
        return x, st_["rounds"], st_["arc_updates"]
    ref = run(1, "none")
    for k, layout, blocks in ((1, "out-degree", 0), (2, "id", 16), (2, "none", 0),
                              (min(3, ngpu), "out-degree", 1)):
        x, rounds, arcs = run(k, layout, pull_blocks_per_sm=blocks)  # 1: threads stride
        np.testing.assert_allclose(x, ref[0], rtol=0, atol=1e-14)
        assert (rounds, arcs) == ref[1:]
    st_ = RunStats.new()
    one, ok = gpu.solve(g, sys, mode="bsp", tol=1e-7, max_iter=10_000, stats=st_)
    assert ok and "route" not in st_  # the engine alone: no plan, no shard
    # pipelined rounds stop one round later: the same answer within the tolerance ...
    assert np.abs(ref[0] / ref[0].sum() - one / one.sum()).sum() <= 2e-7
    assert st_["rounds"] <= ref[1] <= st_["rounds"] + 1
    # ... and, waiting for every round, the one-GPU engine's rounds up to rounding
    x, rounds, arcs = run(1, "none", pipeline=False)
    assert rounds == st_["rounds"]
    np.testing.assert_allclose(x, one, rtol=0, atol=1e-12)


def test_transports_agree(ngpu, small):
    """Peer-to-peer copies and NCCL give the same answers (real GPUs only)."""
    if _sim():
        pytest.skip("transports need real GPUs")
    from digraph.dispatch.engines.push import gpus as multi_gpu
    from digraph.dispatch.runtime.cuda import exchange
    from digraph.algorithms import get
    for name, params in (("pagerank", {}), ("sssp", {"source": 0}), ("kcore", {})):
        A = get(name)
        sys = A.prepare(small, **A.bind(small, params))
        outs = []
        for ex in exchange.EXCHANGES:
            st_ = RunStats.new()
            x, ok = multi_gpu.solve(small, sys, devices=["cuda:0", "cuda:1"], mode="bsp",
                                    tol=1e-10, max_iter=10_000, stats=st_, exchange=ex)
            assert ok and st_["exchange"] == ex
            outs.append(x)
        np.testing.assert_allclose(outs[0], outs[1], rtol=0, atol=1e-13)


def test_small_graphs_stay_on_one_gpu(ngpu, small, engine_settings):
    """By default a graph with fewer than ``min_arcs_per_gpu`` arcs per GPU runs the one-GPU
    engine (the simple method it could have used), with the same answer."""
    from digraph.dispatch.runtime.cuda import shard_settings
    _defaults(engine_settings, min_arcs_per_gpu=32 << 20)
    r = digraph.run(small, "pagerank", device=devices(2), tol=1e-6, mode="bsp")
    assert r.stats.gpus == 1 and r.stats.gpus_named == 2 and "bytes_between_gpus" not in r.stats
    one = digraph.run(small, "pagerank", device="cuda", mode="bsp", tol=1e-6)
    assert r.stats.mode == "bsp"
    np.testing.assert_array_equal(r.values, one.values)
    # automatic: the power iteration, on the first GPU named below two GPUs' worth of arcs
    auto = digraph.run(small, "pagerank", device=devices(2), tol=1e-6)
    one = digraph.run(small, "pagerank", device="cuda", mode="power", tol=1e-6)
    assert (auto.stats.mode, auto.stats.engine, auto.stats.gpus, auto.stats.gpus_named) == \
        ("power", "gpu-power", 1, 2)
    assert [p["code"] for p in auto.stats.route["placed"]] == ["first-gpu"]
    np.testing.assert_array_equal(auto.values, one.values)
    _defaults(engine_settings, min_arcs_per_gpu=small.num_arcs // 2)
    r = digraph.run(small, "pagerank", device=devices(min(ngpu, 3)), tol=1e-6, mode="bsp")
    assert r.stats.gpus == 2  # two GPUs' worth of arcs
    _defaults(engine_settings, shard_families=shard_settings.MultiGpuSettings.shard_families)
    r = digraph.run(small, "sssp", source=0, device=devices(2))
    assert r.stats.gpus == 1  # min/max systems stay on one GPU by default


def test_pagerank_vectors_made_on_the_gpus(ngpu, engine_settings):
    """Unweighted PageRank without personalization hands the GPUs recipes for ``b`` and the
    source factors: the shards make them from the out-degrees they hold, never on the host, and
    the rounds and answer are those of the same vectors uploaded as arrays."""
    from digraph.algorithms import get
    from digraph.algorithms.base import DegreeScaledSystem, LinearSystem
    from digraph.dispatch.engines.push import gpus as multi_gpu
    # the same ranges in both runs: split rows sum in an order that depends on the ranges
    _defaults(engine_settings, balance=False)
    g = digraph.load((SRC, DST)) if _sim() else _skewed()  # the simulator: a small graph
    A = get("pagerank")
    lazy = A.prepare(g, **A.bind(g, {"alpha": 0.8}))
    assert isinstance(lazy, DegreeScaledSystem)
    explicit = LinearSystem(b=np.full(g.num_vertices, (1.0 - 0.8) / g.num_vertices),
                            src_scale=np.where(g.out_degree > 0,
                                               0.8 / np.maximum(g.out_degree, 1), 0.0),
                            normalize=True)
    for k in (1, min(2, ngpu)):
        devs = ["cuda:0"] * k if _sim() else [f"cuda:{i}" for i in range(k)]
        got = []
        for sys_ in (lazy, explicit):
            st_ = RunStats.new()
            x, ok = multi_gpu.solve(g, sys_, devices=devs, mode="bsp", tol=1e-8,
                                    max_iter=10_000, stats=st_, min_arcs_per_gpu=0)
            assert ok
            got.append((x, st_["rounds"]))
        assert got[0][1] == got[1][1]
        np.testing.assert_array_equal(got[0][0], got[1][0])
    assert lazy.__dict__["_b"] is not None and not isinstance(lazy.__dict__["_b"], np.ndarray)
    assert not isinstance(lazy.__dict__["_src_scale"], np.ndarray)  # still only a recipe
    np.testing.assert_array_equal(lazy.src_scale, explicit.src_scale)  # made on first read
    np.testing.assert_array_equal(lazy.b, explicit.b)
