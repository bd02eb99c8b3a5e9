"""The sharded engine's vertex ranges (:mod:`digraph.dispatch.runtime.cuda.ranges`) as pure numpy:
imported without CUDA or its simulator, and the properties of :func:`shard_ranges` and
:func:`recut_ranges` on small offsets (bounds from 0 to n, never decreasing, each range holding
its share of the weight within one vertex)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from digraph.dispatch.runtime.cuda.ranges import recut_ranges, shard_ranges

ROOT = Path(__file__).resolve().parents[3]

# a hub (vertex 2, 40 arcs) among light vertices, one vertex without arcs
DEGREES = [3, 1, 40, 0, 2, 5, 1, 1, 4, 2, 6, 3]


def _offsets(deg):
    return np.concatenate([[0], np.cumsum(deg)]).astype(np.int64)


def _weights(off, c):
    """Each vertex's weight as the ranges count it: its arcs + ``c``."""
    return np.diff(off) + c


def _check_bounds(b, n, k):
    b = np.asarray(b)
    assert b.dtype == np.int64 and b.shape == (k + 1,)
    assert b[0] == 0 and b[-1] == n  # the ranges cover 0..n
    assert np.all(np.diff(b) >= 0)  # consecutive, never decreasing


def _check_balance(off, b, c, k):
    """Each range's weight is within one vertex's weight of the mean."""
    w = _weights(off, c)
    per = np.array([w[b[i]:b[i + 1]].sum() for i in range(k)])
    assert per.sum() == w.sum()
    assert np.all(np.abs(per - w.sum() / k) <= w.max() + 1), per


def test_ranges_import_without_cuda():
    """The ranges module and its answers need neither CUDA, its simulator nor the engine: a fresh
    interpreter without ``NUMBA_ENABLE_CUDASIM`` imports it alone and gets the same bounds."""
    script = (
        "import json, sys\n"
        "from digraph.dispatch.runtime.cuda.ranges import shard_ranges, recut_ranges\n"
        f"off = {_offsets(DEGREES).tolist()}\n"
        "b = shard_ranges(off, 3, 1)\n"
        "r = recut_ranges(off, b, [2.0, 1.0, 1.0], 1)\n"
        "heavy = ('numba.cuda', 'cupy', 'digraph.dispatch.runtime.cuda.backend',\n"
        "         'digraph.dispatch.runtime.cuda.shards', 'digraph.dispatch.engines.push',\n"
        "         'digraph.dispatch.engines.one_gpu')\n"
        "loaded = sorted(m for m in sys.modules if m.startswith(heavy))\n"
        "print(json.dumps({'b': b.tolist(), 'r': r.tolist(), 'loaded': loaded}))\n")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["loaded"] == []
    off = _offsets(DEGREES)
    n = off.size - 1
    _check_bounds(np.array(got["b"], np.int64), n, 3)
    _check_bounds(np.array(got["r"], np.int64), n, 3)
    np.testing.assert_array_equal(got["b"], shard_ranges(off, 3, 1))
    np.testing.assert_array_equal(got["r"], recut_ranges(off, got["b"], [2.0, 1.0, 1.0], 1))


def test_shard_ranges_small_cases():
    off = _offsets(DEGREES)
    # equal degrees: equal vertex counts
    np.testing.assert_array_equal(shard_ranges(_offsets([2] * 8), 4), [0, 2, 4, 6, 8])
    # the hub's range holds it and nothing past the half of the arcs
    b = shard_ranges(off, 2)
    assert b[0] < 3 <= b[1]
    assert off[b[1]] >= off[-1] // 2 > off[b[1] - 1]
    # more ranges than vertices: empty ranges, the bounds still cover 0..n
    b = shard_ranges(_offsets([5]), 3)
    _check_bounds(b, 1, 3)
    # one range: everything
    np.testing.assert_array_equal(shard_ranges(off, 1), [0, off.size - 1])
    # no arcs at all: the vertex cost alone cuts the vertices evenly
    np.testing.assert_array_equal(shard_ranges(np.zeros(9, np.int64), 4, 1), [0, 2, 4, 6, 8])


@pytest.mark.parametrize("c", [0, 1, 3])
@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_shard_ranges_cover_and_balance(k, c):
    rng = np.random.default_rng(10 * k + c)
    for deg in (DEGREES, rng.integers(0, 20, 50), rng.integers(0, 3, 7)):
        off = _offsets(deg)
        b = shard_ranges(off, k, c)
        _check_bounds(b, off.size - 1, k)
        _check_balance(off, b, c, k)


@pytest.mark.parametrize("c", [0, 2])
def test_recut_ranges_follow_the_measured_time(c):
    off = _offsets(DEGREES)
    n = off.size - 1
    for k in (2, 3, 4):
        b = shard_ranges(off, k, c)
        # equal times: the ranges stay
        np.testing.assert_array_equal(recut_ranges(off, b, np.ones(k), c), b)
        # a slow first range gives vertices away, a slow last one too; both still cover 0..n
        slow = np.ones(k)
        slow[0] = 3.0
        new = recut_ranges(off, b, slow, c)
        _check_bounds(new, n, k)
        assert new[1] <= b[1]
        slow = np.ones(k)
        slow[-1] = 3.0
        new = recut_ranges(off, b, slow, c)
        _check_bounds(new, n, k)
        assert new[-2] >= b[-2]
        # a range measured at zero time takes every vertex it can: its share of the time is 0
        idle = np.ones(k)
        idle[0] = 0.0
        new = recut_ranges(off, b, idle, c)
        _check_bounds(new, n, k)
        assert new[1] >= b[1]
