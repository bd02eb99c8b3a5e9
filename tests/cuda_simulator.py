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

The simulator runs a launch's blocks one after another, so a persistent kernel whose blocks wait
for each other (a grid barrier) runs there with one block only; :func:`run_blocks_together`
launches one with every block live at once, as on a GPU where the grid is resident.
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


def yield_now():
    """Inside :func:`run_blocks_together`: give the other threads a turn (a thread polling what
    other blocks write calls it, as its load would wait on a GPU)."""
    from greenlet import getcurrent
    threading.current_thread()._together_yield = True
    getcurrent().parent.switch()


def run_blocks_together(kernel, grid, block, *args, max_turns=10**6):
    """``kernel[grid, block](*args)`` in the simulator with every block's threads live at once
    (the simulator runs blocks one after another): a persistent kernel whose blocks meet at a grid
    barrier (an arrival counter, polled) then runs as on a GPU where the grid is resident.

    Each thread is a greenlet run until it reaches ``syncthreads`` (it then waits until every live
    thread of its block has arrived) or calls :func:`yield_now`; each block has its own shared
    arrays.  Raises RuntimeError when no thread can move (a deadlock: a barrier some thread of the
    block never reaches) or after ``max_turns`` rounds (a poll that never ends)."""
    from greenlet import getcurrent, greenlet
    from numba.cuda.simulator import kernelapi
    from numba.cuda.simulator.kernel import BlockManager, Dim3
    me = threading.current_thread()
    collected = []
    plain_run, plain_array = BlockManager.run, kernelapi.FakeCUDAShared.array
    per_block = {}

    def shared_array(self, shape, dtype, alignment=None):  # one array a block and line
        import sys
        f = sys._getframe(1)
        key = (id(self), tuple(me.blockIdx), f.f_code.co_filename, f.f_lineno)
        if key not in per_block:
            from numba.core import types
            from numba.np import numpy_support
            if isinstance(dtype, types.Type):
                dtype = numpy_support.as_dtype(dtype)
            per_block[key] = np.empty(shape, dtype)
        return per_block[key]

    def run_all():
        kept = {k: me.__dict__[k] for k in _PLAYED if k in me.__dict__}
        manager = collected[0][0]
        points = list(np.ndindex(*manager._block_dim))
        bx, by = (tuple(manager._block_dim) + (1, 1))[:2]
        threads = []  # [greenlet, block point, thread point, waiting at a barrier]
        for _, grid_point, fargs in collected:
            for p in points:
                threads.append([greenlet(lambda a=fargs: manager._f(*a)), grid_point, p, False])
        live = {gp: len(points) for _, gp, _ in collected}
        arrived = dict.fromkeys(live, 0)

        def barrier():
            me._together_yield = False
            getcurrent().parent.switch()

        try:
            me.syncthreads = barrier
            for turn in range(max_turns):
                moved = False
                for t in threads:
                    g, gp, p, waiting = t
                    if g.dead or (waiting and arrived[gp] < live[gp]):
                        continue
                    if waiting:  # the block's barrier is complete: release every thread of it
                        for u in threads:
                            if u[1] == gp:
                                u[3] = False
                        arrived[gp] = 0
                    x, y, z = (tuple(p) + (0, 0))[:3]
                    me.blockIdx, me.threadIdx = Dim3(*gp), Dim3(*p)
                    me.thread_id = x + bx * (y + by * z)
                    me._together_yield = False
                    try:
                        g.switch()
                    except Exception as e:
                        raise _failed(e, me) from e
                    moved = True
                    if g.dead:
                        live[gp] -= 1
                    elif not me._together_yield:
                        t[3] = True
                        arrived[gp] += 1
                if all(t[0].dead for t in threads):
                    return
                if not moved:
                    raise RuntimeError("run_blocks_together: every live thread waits at a barrier "
                                       "that cannot complete")
            raise RuntimeError(f"run_blocks_together: still running after {max_turns} turns")
        finally:
            for k in _PLAYED:
                me.__dict__.pop(k, None)
            me.__dict__.update(kept)

    def collect(self, grid_point, *fargs):
        collected.append((self, grid_point, fargs))
        if len(collected) == int(np.prod(self._grid_dim)):
            run_all()

    BlockManager.run = collect
    kernelapi.FakeCUDAShared.array = shared_array
    try:
        kernel[grid, block](*args)
    finally:
        BlockManager.run = plain_run
        kernelapi.FakeCUDAShared.array = plain_array
