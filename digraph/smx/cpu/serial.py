"""Serial twins of the parallel kernels, for small inputs.

A ``parallel=True`` kernel costs two to four times as long to compile as the same loop run
serially, and on a small input its pass costs about what waking the threads does.  So a kernel
that a small graph's run needs (the first answer after an install, with Numba's cache empty)
has a serial twin, the same function compiled without ``parallel`` (``prange`` then runs as
``range``) and cached apart; :func:`pick` chooses by the size of the input:
:data:`SERIAL_ITEMS` items or more run the parallel kernel.  A twin gives the same answers (the
kernels read and write the same arrays; reductions may round in another order).
:func:`parallel_only` makes every pick parallel for a block, for ahead-of-time compilation of
both (:func:`digraph.warmup`).
"""

import contextlib
import contextvars
import types

from numba import njit

__all__ = ["SERIAL_ITEMS", "twin", "serial_twin", "pick", "parallel_only"]

SERIAL_ITEMS = 1 << 14
"""Inputs of fewer items (arcs) run a kernel's serial twin: a pass over them costs tens of
microseconds, what a parallel region's start costs on a few threads."""

_PARALLEL_ONLY = contextvars.ContextVar("digraph_parallel_only", default=False)


def twin(kernel, suffix, parallel=False, **names):
    """``kernel``'s function compiled again (``njit(cache=True, nogil=True, parallel=...)``) under
    the name ``<name><suffix>``, so that Numba caches the two apart, its module-level ``names``
    replaced (a constant, or a function it calls)."""
    f = kernel.py_func
    g = types.FunctionType(f.__code__, dict(f.__globals__, **names) if names else f.__globals__,
                           f.__name__ + suffix, f.__defaults__, f.__closure__)
    g.__qualname__ = f.__qualname__ + suffix
    g.__module__ = f.__module__
    g.__doc__ = f.__doc__
    return njit(cache=True, nogil=True, parallel=parallel)(g)


def serial_twin(kernel):
    """The serial twin of the Numba ``kernel`` (:func:`twin` without ``parallel``, named
    ``<name>_serial``)."""
    return twin(kernel, "_serial")


def pick(kernel, twin, items):
    """``twin`` for an input of fewer than :data:`SERIAL_ITEMS` items, else ``kernel``."""
    return twin if items < SERIAL_ITEMS and not _PARALLEL_ONLY.get() else kernel


@contextlib.contextmanager
def parallel_only():
    """Every :func:`pick` inside the block gives the parallel kernel."""
    token = _PARALLEL_ONLY.set(True)
    try:
        yield
    finally:
        _PARALLEL_ONLY.reset(token)
