"""Own-range arcs first (:func:`digraph.dispatch.engines.push.gpus_layout.shard_layout` with ``split``): a
round sums them while the other ranges' sends are exchanged (``MultiGpuSettings.overlap``)."""
import dataclasses

import numpy as np
import pytest

import digraph
from digraph.algorithms import get
from digraph.dispatch.engines.push import gpus as multi_gpu
from digraph.dispatch.runtime.cuda.backend import backend
from digraph.dispatch.engines.push import gpus_layout
from digraph.dispatch.runtime.cuda import shard_settings
from digraph.dispatch.runtime.cuda import shards
from digraph.dispatch.engines.push.gpus_layout import own_first
from digraph.errors import NotAvailableError
from digraph.result import RunStats


def test_own_first_keeps_each_part_in_order():
    rng = np.random.default_rng(3)
    deg = rng.integers(0, 9, 200)
    deg[[0, 57, 199]] = 0
    off = np.concatenate([[0], np.cumsum(deg)])
    own = rng.random(off[-1]) < 0.4
    mid, order = own_first(np, off, own)
    assert np.array_equal(np.sort(order), np.arange(off[-1]))  # a permutation
    for r in range(deg.size):
        a, b = off[r], off[r + 1]
        rows = np.arange(a, b)
        assert a <= mid[r] <= b
        np.testing.assert_array_equal(order[a:mid[r]], rows[own[a:b]])
        np.testing.assert_array_equal(order[mid[r]:b], rows[~own[a:b]])


def shard_devices(k):
    """``k`` device names for ``multi_gpu.solve``: ``cuda:0`` k times under the simulator, k
    GPUs otherwise (the test is skipped without them)."""
    try:
        be = backend("cuda")
    except NotAvailableError as e:
        pytest.skip(str(e))
    if be.sim:
        return ["cuda:0"] * k
    from numba import cuda
    if len(cuda.gpus) < k:
        pytest.skip(f"{len(cuda.gpus)} GPUs")
    return [f"cuda:{i}" for i in range(k)]


def _graph():
    # small and sparse (the simulator runs every GPU thread in Python; a vertex of in-degree
    # >= 4 takes a block), with one vertex heavy in each part: 40 takes 6 arcs from its own
    # range's 30..59 and 5 from others, 10 takes 5 from other ranges
    rng = np.random.default_rng(11)
    src = np.concatenate([rng.integers(0, 60, 80), [31, 33, 35, 37, 39, 41, 1, 3, 5, 7, 9],
                          [41, 43, 45, 47, 49]])
    dst = np.concatenate([rng.integers(0, 60, 80), [40] * 11, [10] * 5])
    return digraph.load((src, dst), num_vertices=60)


def test_split_layout_puts_own_range_arcs_first():
    devs = shard_devices(2)
    g = _graph()
    st = RunStats.new()
    sh = shards.make_shards(devs, g.in_offsets, st, bounds=np.array([0, 30, 60]))
    plain = gpus_layout.shard_layout(sh, g, "out-degree", split=False)
    split = gpus_layout.shard_layout(sh, g, "out-degree", split=True)
    host = backend(devs[0]).get if backend(devs[0]).sim else (lambda a: a.get())
    for s, p, d in zip(sh, plain, split):
        assert "mid" not in p and p["counts"] == d["counts"]
        off, src, mid = host(d["off"]), host(d["src"]), host(d["mid"])
        np.testing.assert_array_equal(off, host(p["off"]))
        psrc = host(p["src"])
        for v in range(s.v0, s.v1):
            a, m, b = off[v], mid[v - s.v0], off[v + 1]
            assert np.all((src[a:m] >= s.v0) & (src[a:m] < s.v1))
            assert not np.any((src[m:b] >= s.v0) & (src[m:b] < s.v1))
            np.testing.assert_array_equal(np.sort(src[a:b]), np.sort(psrc[a:b]))
        head = off[s.v0:s.v1]
        local = np.flatnonzero(mid - head >= 4) + s.v0
        rest = np.flatnonzero(off[s.v0 + 1:s.v1 + 1] - mid >= 4) + s.v0
        from digraph.smx.cuda.common import HEAVY
        if HEAVY == 4:
            np.testing.assert_array_equal(host(d["heavy_local"]), local)
            np.testing.assert_array_equal(host(d["heavy_rest"]), rest)
            assert local.size and rest.size  # both kernels are exercised below


@pytest.mark.parametrize("weighted", [False, True])
def test_split_rounds_give_the_unsplit_answer(weighted):
    """Summing own-range arcs apart changes each sum's order only: the same rounds, and the
    answer up to rounding."""
    devs = shard_devices(2)
    g = _graph()
    if weighted:
        g = digraph.load((np.asarray(g.arc_sources), np.asarray(g.out_targets),
                          np.linspace(0.5, 2.0, g.num_arcs)), num_vertices=g.num_vertices)
    A = get("pagerank")
    sys = A.prepare(g, **A.bind(g, {"alpha": 0.3}))  # few rounds: the simulator is slow
    assert (sys.arc_scale is not None) == weighted
    sim = backend(devs[0]).sim

    def run(overlap, exchange):
        settings = dataclasses.replace(shard_settings.DEFAULT, balance=False, overlap=overlap)
        st = RunStats.new()
        x, ok = multi_gpu.solve(g, sys, devices=devs, mode="bsp", tol=1e-9, max_iter=10_000,
                                stats=st, min_arcs_per_gpu=0, exchange=exchange,
                                settings=settings)
        assert ok
        return x, st
    x0, st0 = run(False, "nccl")
    assert not st0["overlapped"]
    # on GPUs: NCCL on a stream of its own, and peer copies on a stream per source GPU
    for exchange in ("nccl",) if sim else ("nccl", "p2p"):
        x1, st1 = run(True, exchange)
        assert st1["rounds"] == st0["rounds"] and st1["arc_updates"] == st0["arc_updates"]
        assert st1["bytes_between_gpus"] == st0["bytes_between_gpus"]
        np.testing.assert_allclose(x1, x0, rtol=0, atol=1e-14)
        assert st1["overlapped"] == (not sim)
