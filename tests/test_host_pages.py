"""Host arrays faulted in on a background thread (digraph.dispatch.host_pages)."""
import numpy as np

from digraph.dispatch import host_pages
from digraph.dispatch.host_pages import prefaulted


def test_large_array_is_touched_in_the_background_and_writable():
    n = (host_pages.MIN_BYTES // 8) + 12345
    buf = prefaulted(n)
    assert buf._thread is not None  # large enough to get a thread
    a = buf.ready()
    assert buf._thread is None and a.shape == (n,) and a.dtype == np.float64
    assert buf.ready() is a  # idempotent
    # every touched byte (one per page) is 0, and the array takes a full write
    assert not a.view(np.uint8)[::host_pages.PAGE].any()
    a[:] = np.arange(n)
    assert a[-1] == n - 1


def test_small_array_gets_no_thread():
    buf = prefaulted(1000, np.int32)
    assert buf._thread is None
    a = buf.ready()
    assert a.shape == (1000,) and a.dtype == np.int32


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
