"""The task cuts of the CPU engines' parallel loops over vertices whose work is their arcs.

Numba's ``prange`` splits its iteration space into one contiguous block a thread (the OpenMP and
workqueue layers schedule statically).  A loop over vertices then gives each thread ``n / t``
vertices, whatever their arcs: on graphs whose vertex ids follow degree (social and citation
graphs, numbered by arrival) the first block can hold most of the arcs, and the other threads
wait for it.  A kernel that loops ``for t in prange(T)`` over the ranges ``cuts[t] ..
cuts[t + 1]`` of :func:`arc_tasks` instead gives every thread about the same arcs.

The cuts are :func:`~digraph.dispatch.runtime.cuda.ranges.shard_ranges` (the several-GPU cut)
with :data:`TASKS_PER_THREAD` ranges a thread and a vertex counted as :data:`VERTEX_COST` arcs
(its offsets, its output and its scale), kept in ``graph._cache`` per thread count.
"""

import numba
import numpy as np

from .cuda.ranges import shard_ranges

__all__ = ["arc_tasks", "task_cuts", "TASKS_PER_THREAD", "VERTEX_COST"]

TASKS_PER_THREAD = 4
"""Ranges a thread: under static scheduling a thread takes as many consecutive ranges of about
equal arcs (the same balance as one range each); a work-stealing layer (TBB) can move them."""

VERTEX_COST = 2
"""Arcs a vertex counts as in the cut, besides its own."""


def task_cuts(offsets, threads=None, per_thread=TASKS_PER_THREAD):
    """The cuts ``[0 = c_0 <= c_1 <= ... <= c_T = n]`` of ``T = per_thread · threads``
    consecutive vertex ranges of about equal arcs of the CSR ``offsets`` (length n + 1;
    ``threads``: Numba's current thread count when None), as an int64 array."""
    t = numba.get_num_threads() if threads is None else max(int(threads), 1)
    offsets = np.asarray(offsets)
    if offsets.size <= 1:
        return np.zeros(2, np.int64)
    return np.ascontiguousarray(shard_ranges(offsets, per_thread * t, VERTEX_COST),
                                dtype=np.int64)


def arc_tasks(graph, offsets="in_offsets", threads=None, per_thread=TASKS_PER_THREAD):
    """:func:`task_cuts` of ``graph.<offsets>`` (``"in_offsets"`` for a pull,
    ``"out_offsets"`` for a push), kept in ``graph._cache`` per thread count.

    Parameters
    ----------
    graph : digraph.Graph
    offsets : str
    threads : int, optional
        Numba's current thread count when None.
    per_thread : int
        Ranges a thread (1: one range a thread, as a Gauss–Seidel sweep wants them).

    Returns
    -------
    numpy.ndarray of int64
    """
    t = numba.get_num_threads() if threads is None else max(int(threads), 1)
    return graph._cached(("cpu-arc-tasks", offsets, t, int(per_thread)),
                         lambda: task_cuts(getattr(graph, offsets), t, per_thread))
