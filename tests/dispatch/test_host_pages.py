"""Host arrays faulted in on a background thread (digraph.dispatch.runtime.cuda.host_pages)."""
import numpy as np

from digraph.dispatch.runtime.cuda import host_pages
from digraph.dispatch.runtime.cuda.host_pages import prefaulted


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

