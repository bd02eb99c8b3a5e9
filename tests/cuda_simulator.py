"""Faster thread blocks for Numba's CUDA simulator (installed by ``conftest.py``).

The simulator runs each thread of a block as a Python thread and meets them at
``cuda.syncthreads()`` by polling: its ``BlockManager.run`` loops over the live threads asking
each whether it is blocked or alive, holding the interpreter lock the threads need to get
there.  On the suite's kernels (every one sums over its block) that polling took about four
fifths of the time, and starting a Python thread per CUDA thread most of the rest.

Here a block's threads are greenlets of the launching thread when ``greenlet`` is installed (a
test dependency): the block runs each live thread in turn until it reaches a barrier or ends,
then starts the next round, and the launching thread plays each CUDA thread while it runs
(``threadIdx``, ``blockIdx``, ``syncthreads`` are read from ``threading.current_thread()`` by
the simulator).  The semantics are the simulator's: a barrier counts the threads still alive,
and an exception in one thread is raised by the launch, naming the thread and block.  Without
``greenlet`` the simulator is left as it is.
"""
import threading

import numpy as np

_PLAYED = ("threadIdx", "blockIdx", "thread_id", "syncthreads", "syncthreads_count",
           "syncthreads_and", "syncthreads_or")


def _failed(e, me):
    msg = f"tid={list(me.threadIdx)} ctaid={list(me.blockIdx)}"
    return type(e)(f"{msg}: {e}" if str(e) else msg)


def _green_run(self, grid_point, *args):
    """``BlockManager.run`` with the block's threads as greenlets of the launching thread."""
    from greenlet import getcurrent, greenlet
    from numba.cuda.simulator.kernel import Dim3
    me = threading.current_thread()
    kept = {k: me.__dict__[k] for k in _PLAYED if k in me.__dict__}
    bx, by = (tuple(self._block_dim) + (1, 1))[:2]
    state = np.zeros(self._block_dim, dtype=np.bool_)
    points = list(np.ndindex(*self._block_dim))
    f = self._f

    def barrier():
        getcurrent().parent.switch()

    def vote(how):
        def call(value):
            state[tuple(me.threadIdx)[:state.ndim]] = value
            barrier()
            out = how(state)
            barrier()
            return out
        return call

    lets = {}
    for p in points:
        lets[p] = greenlet(lambda: f(*args))
    try:
        me.blockIdx = Dim3(*grid_point)
        me.syncthreads = barrier
        me.syncthreads_count = vote(np.count_nonzero)
        me.syncthreads_and = vote(lambda a: 1 if np.all(a) else 0)
        me.syncthreads_or = vote(lambda a: 1 if np.any(a) else 0)
        live = points
        while live:
            waiting = []
            for p in live:
                x, y, z = (tuple(p) + (0, 0))[:3]
                me.threadIdx = Dim3(*p)
                me.thread_id = x + bx * (y + by * z)
                g = lets[p]
                try:
                    g.switch()
                except Exception as e:
                    raise _failed(e, me) from e
                if not g.dead:
                    waiting.append(p)
            live = waiting
    finally:
        for k in _PLAYED:
            me.__dict__.pop(k, None)
        me.__dict__.update(kept)


def install():
    """Patch numba-cuda's simulator (once per process); without ``greenlet`` it stays as it is
    (correct, only slower)."""
    from numba.cuda.simulator import kernel as K
    try:
        import greenlet  # noqa: F401
    except ImportError:
        return
    K.BlockManager.run = _green_run
