"""Shard ranges re-cut from measured per-GPU kernel time (:func:`recut_ranges`,
:func:`balanced_ranges`, :func:`learn_balance` in :mod:`digraph.dispatch.engines.push.gpus`)."""
import dataclasses

import numpy as np
import pytest

import digraph
from digraph.dispatch.engines.push import gpus as multi_gpu
from digraph.dispatch.runtime.cuda import shard_settings
from digraph.dispatch.runtime.cuda.residency import residency
from digraph.dispatch.runtime.cuda.ranges import (balanced_ranges, learn_balance, recut_ranges,
                                                  shard_ranges)
from digraph.errors import InvalidParameterError
from digraph.result import RunStats


def _offsets(seed=1, n=1000):
    rng = np.random.default_rng(seed)
    deg = rng.integers(0, 50, size=n)
    deg[17] = 5000
    return np.concatenate([[0], np.cumsum(deg)]), deg


@pytest.mark.parametrize("c", [0, 3])
def test_equal_times_keep_the_ranges(c):
    off, _ = _offsets()
    for k in (2, 3, 4):
        b = shard_ranges(off, k, c)
        np.testing.assert_array_equal(recut_ranges(off, b, np.ones(k), c), b)
        np.testing.assert_array_equal(recut_ranges(off, b, np.full(k, 7.5), c), b)


@pytest.mark.parametrize("c", [0, 3])
def test_recut_equalises_a_cost_proportional_to_weight_per_range(c):
    """Cost of a vertex = weight × its range's rate: after one re-cut every range's cost is
    within one vertex of the mean (the model is exact for such costs)."""
    off, deg = _offsets(2)
    n = deg.size
    weight = deg + c
    for k, rates in ((2, [3.0, 1.0]), (4, [2.0, 1.0, 1.5, 0.5]), (3, [1.0, 0.0, 4.0])):
        b = shard_ranges(off, k, c)
        rate = np.repeat(rates, np.diff(b))  # per vertex: the rate of its old range
        busy = np.add.reduceat(weight * rate, b[:-1]) if n else np.zeros(k)
        new = recut_ranges(off, b, busy, c)
        assert new[0] == 0 and new[-1] == n and np.all(np.diff(new) >= 0)
        cost = np.array([(weight * rate)[new[i]:new[i + 1]].sum() for i in range(k)])
        assert cost.sum() == pytest.approx(busy.sum())
        assert cost.max() <= busy.sum() / k + (weight * rate).max() + 1e-9


def test_recut_moves_work_off_the_slow_range():
    off, _ = _offsets()
    b = shard_ranges(off, 4)
    new = recut_ranges(off, b, [2.0, 1.0, 1.0, 1.0])
    assert new[1] < b[1]  # the slow first range shrinks
    new = recut_ranges(off, b, [1.0, 1.0, 1.0, 2.0])
    assert new[3] > b[3]  # the slow last range shrinks from its start


def test_recut_errors_and_degenerate_times():
    off, _ = _offsets()
    b = shard_ranges(off, 3)
    with pytest.raises(InvalidParameterError, match="2 times for 3 ranges"):
        recut_ranges(off, b, [1.0, 2.0])
    np.testing.assert_array_equal(recut_ranges(off, b, np.zeros(3)), b)  # nothing measured


class _G:  # a graph's cache is all balanced_ranges and learn_balance touch
    def __init__(self):
        self._cache = {}


def test_learning_recuts_then_keeps_the_best():
    cfg = dataclasses.replace(shard_settings.DEFAULT, balance_recuts=2)
    off, _ = _offsets()
    g, key, st = _G(), ("multi-gpu-balance", "linear", ("a", "b", "c"), 0), RunStats.new()
    first = balanced_ranges(g, key, off, 3, 0, st, cfg)
    np.testing.assert_array_equal(first, shard_ranges(off, 3))
    assert st["gpu_recuts"] == 0
    learn_balance(g, key, first, [3.0, 1.0, 1.0], rounds=4, settings=cfg)  # too few: not learnt
    assert key not in g._cache
    # a layout kept in the graph's residency for the first ranges, and one unrelated entry
    res = residency(g)
    lay_key = ("out-degree", tuple((i, False, int(first[i]), int(first[i + 1]))
                                   for i in range(3)), False)
    res.put("multi-gpu-layout", lay_key, "layout")
    g._cache["other"] = 1
    learn_balance(g, key, first, [0.3, 0.1, 0.1], rounds=10, settings=cfg)
    second = balanced_ranges(g, key, off, 3, 0, st, cfg)
    assert st["gpu_recuts"] == 1 and second[1] < first[1]
    # the first ranges are the best measured so far: kept
    assert res.peek("multi-gpu-layout", lay_key) == "layout"
    learn_balance(g, key, second, [0.05, 0.2, 0.1], rounds=10, settings=cfg)  # busiest 0.2
    # the former best's arrays dropped, nothing else
    assert res.peek("multi-gpu-layout", lay_key) is None and g._cache["other"] == 1
    third = balanced_ranges(g, key, off, 3, 0, st, cfg)
    assert st["gpu_recuts"] == 2 and not np.array_equal(third, second)
    learn_balance(g, key, third, [0.1, 0.12, 0.3], rounds=10, settings=cfg)
    # re-cuts used up: the ranges with the smallest busiest-GPU time from now on
    best = balanced_ranges(g, key, off, 3, 0, st, cfg)
    np.testing.assert_array_equal(best, second)
    assert st["gpu_recuts"] == 2


def test_balanced_ranges_stay_while_even():
    off, _ = _offsets()
    g, key, st = _G(), ("k",), RunStats.new()
    b = balanced_ranges(g, key, off, 2, 0, st)
    learn_balance(g, key, b, [1.0, 1.04], rounds=20)  # within DEFAULT.balance_tol
    np.testing.assert_array_equal(balanced_ranges(g, key, off, 2, 0, st), b)
    assert st["gpu_recuts"] == 0
    # settled: a later uneven (noisy) measurement re-cuts nothing
    learn_balance(g, key, b, [1.0, 2.0], rounds=20)
    np.testing.assert_array_equal(balanced_ranges(g, key, off, 2, 0, st), b)
    assert st["gpu_recuts"] == 0


@pytest.mark.gpu
def test_recut_ranges_give_the_same_answer():
    """Ranges re-cut from (here injected) uneven times give the answer of the first ranges."""
    from digraph.algorithms import get
    from test_multi_gpu_overlap import shard_devices
    devs = shard_devices(2)
    # small and sparse: the simulator runs every GPU thread in Python, and vertices of in-degree
    # >= 4 take its block-per-vertex kernel
    rng = np.random.default_rng(7)
    g = digraph.load((rng.integers(0, 60, 90), rng.integers(0, 60, 90)), num_vertices=60)
    A = get("pagerank")
    sys = A.prepare(g, **A.bind(g, {"alpha": 0.3}))  # few rounds: the simulator is slow

    def run():
        st = RunStats.new()
        x, ok = multi_gpu.solve(g, sys, devices=devs, mode="bsp", tol=1e-7, max_iter=10_000,
                                stats=st, min_arcs_per_gpu=0)
        assert ok
        return x, st
    x0, st0 = run()
    cost = shard_settings.DEFAULT.vertex_cost
    key = ("multi-gpu-balance", "linear", tuple(devs), cost)
    b0 = shard_ranges(g.in_offsets, 2, cost)
    g._cache[key] = {"recuts": 0, "settled": False, "best": (np.inf, b0), "bounds": b0,
                     "busy": np.array([4., 1.])}
    x1, st1 = run()
    assert st1["gpu_recuts"] == 1
    assert st1["gpu_vertices"][0] < st0["gpu_vertices"][0]
    assert np.abs(x1 - x0).sum() <= 1e-6
