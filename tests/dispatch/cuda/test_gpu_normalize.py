"""PageRank's division by Σx done on the GPUs (``divide_by_sum``, :class:`SumNormalized`)."""
import dataclasses

import numpy as np
import pytest

import digraph
from digraph.algorithms import get
from digraph.algorithms.base import SumNormalized, normalized
from digraph.dispatch.engines.push import gpus as multi_gpu
from digraph.dispatch.engines.path import gpu_settings
from digraph.dispatch.runtime.cuda import shard_settings
from digraph.errors import InvalidParameterError
from digraph.result import RunStats

from test_multi_gpu_overlap import shard_devices


def test_normalized_leaves_a_sum_normalized_state():
    x = np.array([0.5, 0.25, 0.25, 3.0])
    out = normalized(x.copy().view(SumNormalized))
    assert type(out) is np.ndarray
    np.testing.assert_array_equal(out, x)  # not divided again
    np.testing.assert_array_equal(normalized(x.copy()), x / 4.0)


def _graph():
    rng = np.random.default_rng(5)  # sparse: the simulator is slow on in-degrees >= 4
    return digraph.load((rng.integers(0, 50, 70), rng.integers(0, 50, 70)), num_vertices=50)


@pytest.mark.parametrize("k", [1, 2])
def test_solve_divides_on_the_gpus(k):
    devs = shard_devices(k)
    pinned = dataclasses.replace(shard_settings.DEFAULT, balance=False)
    g = _graph()
    A = get("pagerank")
    sys = A.prepare(g, **A.bind(g, {"alpha": 0.3}))
    out = []
    for divide in (False, True):
        st = RunStats.new()
        x, ok = multi_gpu.solve(g, sys, devices=devs, mode="bsp", tol=1e-9, max_iter=1000,
                                stats=st, min_arcs_per_gpu=0, divide_by_sum=divide,
                                settings=pinned)
        assert ok
        out.append(x)
    assert not isinstance(out[0], SumNormalized) and isinstance(out[1], SumNormalized)
    np.testing.assert_allclose(out[1], out[0] / out[0].sum(), rtol=1e-15, atol=0)
    with pytest.raises(InvalidParameterError, match="linear systems"):
        s = get("sssp")
        multi_gpu.solve(g, s.prepare(g, **s.bind(g, {"source": 0})), devices=devs,
                        mode="bsp", tol=None, max_iter=100, stats=RunStats.new(),
                        min_arcs_per_gpu=0, divide_by_sum=True, settings=pinned)


def test_pagerank_run_divides_on_the_gpus(engine_settings):
    """``digraph.run`` asks for it on one GPU routed to one shard and on several: the answer
    sums to 1 and matches the CPU's, and comes back as a plain array."""
    shard_devices(2)
    engine_settings(shard_settings.DEFAULT, min_arcs_per_gpu=0)
    # route even this graph to one shard
    engine_settings(gpu_settings.DEFAULT, shard_arcs=0)
    g = _graph()
    ref = digraph.run(g, "pagerank", alpha=0.3, tol=1e-10)
    for dev in ("cuda", "cuda:0,1"):  # the simulator takes any device numbers
        r = digraph.run(g, "pagerank", alpha=0.3, tol=1e-10, mode="bsp", device=dev)
        assert type(r.values) is np.ndarray
        assert r.values.sum() == pytest.approx(1.0, abs=1e-14)
        assert np.abs(r.values - ref.values).sum() <= 2e-10
        assert [p["code"] for p in r.stats["route"]["placed"]] == (["one-shard"] if dev == "cuda" else ["sharded"])
        assert dev == "cuda" or r.stats["gpus"] == 2
