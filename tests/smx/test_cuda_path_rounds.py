"""The GPU path modes' round control (:mod:`digraph.smx.cuda.path_rounds`) kernel by kernel, against
numpy: the priority threshold the control kernel takes from the histogram (a suffix scan over its
threads, then one thread's search of its chunk), a sweep's start, and the per-layer sums.  The
path modes' answers are tested in ``test_gpu.py``; these check the bookkeeping that only shows
there as rounds."""

import numpy as np
import pytest
from numba import cuda

from digraph.smx.cuda import path_rounds as R
from digraph.smx.cuda import common

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("one_gpu")]


def _threshold(hist, share):
    """The serial rule: the highest buckets holding ``share`` of the scored units; their lowest
    bucket's score, ``2**(bucket − HOFF − 1)``."""
    target = share * hist.sum()
    acc = 0
    i = R.HBINS - 1
    while i > 0:
        acc += hist[i]
        if acc >= target:
            break
        i -= 1
    return 2.0 ** (i - R.HOFF - 1)


def _control(hist, share, min_units, units=100):
    """One control launch after a priority round of one layer; (ctl, fctl, hist) after it."""
    ctl = np.zeros(R.NCTL, np.int64)
    ctl[R.MAX_ROUNDS] = 1000
    fctl = np.array([1e-9, 0.0, np.inf, 1.0, -1.0])  # θ, min score, best, pending, budget
    d = [cuda.to_device(a) for a in (ctl, fctl, np.array([0, units], np.int64),
                                     np.ones(1, np.int32), np.zeros(1, np.int64),
                                     hist.astype(np.int32))]
    R.path_round_control[1, R.CT](d[0], d[1], d[2], d[3], d[4], d[5], 1, share, min_units, 4,
                                  10, True)
    return d[0].copy_to_host(), d[1].copy_to_host(), d[5].copy_to_host()


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("share", [0.2, 0.5, 1.0])
def test_control_kernel_threshold_equals_the_serial_rule(seed, share):
    rng = np.random.default_rng(seed)
    hist = np.zeros(R.HBINS, np.int64)
    # scores spread over 2^-60 .. 2^10, some buckets empty, one spike (a chunk's edge included)
    buckets = rng.integers(R.HOFF - 60, R.HOFF + 10, 40)
    np.add.at(hist, buckets, rng.integers(1, 50, buckets.size))
    hist[R.HOFF - 1] += 500
    ctl, fctl, left = _control(hist, share, 1)
    assert fctl[R.MIN_SCORE] == _threshold(hist, share)
    assert ctl[R.FULL] == 0 and ctl[R.ROUNDS] == 1 and ctl[R.DONE] == 0
    assert not left.any()  # the histogram is cleared for the next round


def test_control_kernel_walks_all_below_min_units_and_takes_the_largest_scores():
    hist = np.zeros(R.HBINS, np.int64)
    hist[R.HOFF + 3] = 5
    ctl, fctl, _ = _control(hist, 0.2, 6)  # fewer scored units than min_units: walk them all
    assert fctl[R.MIN_SCORE] == 0.0 and ctl[R.FULL] == 1
    top = R.HOFF + 1024  # the bucket of the largest float64 (frexp's exponent 1024)
    hist[top] = 7
    ctl, fctl, _ = _control(hist, 0.2, 6)
    assert fctl[R.MIN_SCORE] == 2.0 ** 1023 and ctl[R.FULL] == 0


def test_sweep_start_and_layer_sums():
    ctl = cuda.to_device(np.full(R.NCTL, 7, np.int64))
    fctl = cuda.to_device(np.full(R.NFCTL, 7.0))
    hist = cuda.to_device(np.ones(R.HBINS, np.int32))
    any_ = cuda.to_device(np.ones(5, np.int32))
    R.path_round_start[4, 8](ctl, fctl, hist, any_, 33, 0.25, 2.5, 0)
    c, f = ctl.copy_to_host(), fctl.copy_to_host()
    want = np.zeros(R.NCTL, np.int64)
    want[R.FULL], want[R.MAX_ROUNDS] = 1, 33
    assert np.array_equal(c, want)
    assert f[R.THETA] == 0.25 and f[R.BUDGET] == 2.5 and f[R.BEST] == np.inf
    assert f[R.MIN_SCORE] == 0.0 and f[R.PEND] == 0.0
    assert not hist.copy_to_host().any() and not any_.copy_to_host().any()

    rng = np.random.default_rng(1)
    layer_units = np.array([0, 3, 3, 40, 41], np.int64)  # an empty layer, a long one
    unit_total = rng.integers(0, 9, 41).astype(np.int64)
    rounds = np.array([4, 0, 9, 1], np.int64)
    out = cuda.to_device(np.zeros(8))
    R.path_layer_sums[2, common.HB](cuda.to_device(layer_units), cuda.to_device(unit_total),
                               cuda.to_device(rounds), out)
    o = out.copy_to_host()
    assert np.array_equal(o[:4], rounds)
    assert np.array_equal(o[4:], np.add.reduceat(unit_total, layer_units[:-1]) *
                          (np.diff(layer_units) > 0))
