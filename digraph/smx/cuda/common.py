"""What the CUDA kernel modules of this package share (:mod:`digraph.smx.cuda.kernels` re-exports
it): the launch constants ``HEAVY`` (the degree from which a vertex gets a whole block) and ``HB``
(threads per block of the heavy and scan kernels), the simulator flag ``SIM`` and the lock that
makes the simulator's shared arrays safe for a block's threads, and the device helpers every
family calls: Neumaier's compensated step, the block sum, the relax operators and the atomic
min/max improvement."""


from numba import config, cuda

from ...numeric import neumaier_add
from ..relax_codes import MAX as _MAX, MIN as _MIN, PLUS as _PLUS, TIMES as _TIMES

__all__ = []

SIM = bool(config.ENABLE_CUDASIM)
HEAVY = 4 if SIM else 256
"""Degree from which a vertex gets a whole block instead of one thread (4 in the simulator, so
that the tests' small graphs exercise the heavy kernels too)."""
HB = 8 if SIM else 128
"""Threads per block of the heavy and scan kernels (a power of two: tree reductions; the
simulator runs each thread as a Python thread)."""


def lock_simulated_shared_arrays():
    """Make the CUDA simulator's ``cuda.shared.array`` safe for a block's threads.

    The simulator (numba-cuda's ``kernelapi.FakeCUDAShared.array``) finds a block's shared array
    by the calling line and makes it on first use, a look-up then an insert without a lock: two
    of a block's Python threads that reach the line together each make an array of their own,
    and the block's sums then read another thread's copy (seen as 1 run in 16 of the GPU power
    iteration on a 29-vertex graph ending "converged" far from the answer, and as the shards of
    the sharded engine differing by 1e-8).  The same look-up, under a lock."""
    import sys
    import threading
    import numpy as np
    from numba.core import types
    from numba.np import numpy_support
    from numba.cuda.simulator import kernelapi
    cls = kernelapi.FakeCUDAShared
    if getattr(cls, "_digraph_locked", False):
        return
    plain = cls.array
    lock = threading.Lock()

    def array(self, shape, dtype, alignment=None):
        if alignment is not None or shape == 0:
            return plain(self, shape, dtype, alignment)
        if isinstance(dtype, types.Type):
            dtype = numpy_support.as_dtype(dtype)
        f = sys._getframe(1)
        caller = (f.f_code.co_filename, f.f_lineno)
        with lock:
            res = self._allocations.get(caller)
            if res is None:
                res = self._allocations[caller] = np.empty(shape, dtype)
        return res

    cls.array = array
    cls._digraph_locked = True


if SIM:
    lock_simulated_shared_arrays()


neumaier = cuda.jit(device=True, inline=True)(neumaier_add.py_func)
"""One step of Neumaier's compensated summation: (sum, compensation); the CPU's
:func:`digraph.numeric.neumaier_add`, compiled for the device."""


@cuda.jit(device=True, inline=True)
def block_sum(buf, val):
    """Sum of ``val`` over the block's threads (every thread gets it)."""
    tid = cuda.threadIdx.x
    buf[tid] = val
    cuda.syncthreads()
    step = HB // 2
    while step > 0:
        if tid < step:
            buf[tid] += buf[tid + step]
        cuda.syncthreads()
        step //= 2
    out = buf[0]
    cuda.syncthreads()
    return out


@cuda.jit(device=True, inline=True)
def block_max(buf, val):
    """Largest ``val`` over the block's threads (every thread gets it; ``HB`` threads)."""
    tid = cuda.threadIdx.x
    buf[tid] = val
    cuda.syncthreads()
    step = HB // 2
    while step > 0:
        if tid < step:
            buf[tid] = max(buf[tid], buf[tid + step])
        cuda.syncthreads()
        step //= 2
    out = buf[0]
    cuda.syncthreads()
    return out


@cuda.jit(device=True, inline=True)
def relax(op, xu, a):
    if op == _PLUS:
        return xu + a
    if op == _MIN:
        return min(xu, a)
    if op == _MAX:
        return max(xu, a)
    if op == _TIMES:
        return xu * a
    return xu


@cuda.jit(device=True, inline=True)
def improve(x, v, c, combine):
    """Atomic min (combine 0) or max (1) of ``x[v]`` with ``c``; True when it improved."""
    if combine == 0:
        if c < x[v]:
            old = cuda.atomic.min(x, v, c)
            return c < old
        return False
    if c > x[v]:
        old = cuda.atomic.max(x, v, c)
        return c > old
    return False
