"""Host arrays whose pages are faulted in by a background thread while the GPUs compute.

A fresh ``np.empty(n)`` costs nothing until it is written: the first write of each page
traps into the kernel, which zeroes the page and maps it.  Copying a result of a few hundred
MB from the GPUs into a fresh array therefore pays for those faults after the last round
(``benchmarks/balance_multi_gpu.py``; measured: docs/history/benchmarks-lab-notebook.md, "Four
GPUs: ranges re-cut from measured kernel time, prefaulted host array, parallel finalize").
:func:`prefaulted` hands out the array at the start of a run and touches one byte of every page
on a thread that holds no GIL (Numba ``nogil``), so the faults overlap the rounds the host only
waits for; :meth:`Prefaulted.ready` joins the thread before the copy.
"""
import threading

import numpy as np
from numba import njit

PAGE = 4096
MIN_BYTES = 16 << 20
"""Smaller arrays are returned untouched: their faults cost less than a thread."""


@njit(nogil=True, cache=True)
def _touch(buf, step):
    for i in range(0, buf.size, step):
        buf[i] = 0


class Prefaulted:
    """A host array of ``n`` items of ``dtype`` being faulted in (see :func:`prefaulted`)."""

    def __init__(self, n, dtype=np.float64):
        self.array = np.empty(int(n), dtype)
        self._thread = None
        if self.array.nbytes >= MIN_BYTES:
            self._thread = threading.Thread(target=_touch, args=(self.array.view(np.uint8), PAGE),
                                            name="digraph-prefault", daemon=True)
            self._thread.start()

    def ready(self):
        """The array, every page of it mapped (waits for the thread)."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        return self.array


def prefaulted(n, dtype=np.float64):
    """A :class:`Prefaulted` host array of ``n`` items; its pages are touched in the background.

    Parameters
    ----------
    n : int
        Number of items.
    dtype : numpy dtype, optional
        Item type (default float64).

    Returns
    -------
    Prefaulted
        Call :meth:`Prefaulted.ready` for the array once it is about to be written.
    """
    return Prefaulted(n, dtype)
