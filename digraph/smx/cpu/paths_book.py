"""Book-keeping of the path walks (:mod:`~.paths`, :mod:`~.paths_monotone`), inlined in
their kernels: the rounds (``stamp``) in which each SCC-vertex ran (``scc_runs``) and the lengths of
the paths each thread walked (``length_hist``)."""

import numba
from numba import njit

from .atomics import atomic_add, atomic_xchg

__all__ = []


@njit(inline="always")
def book(p, length, path_scc, scc_last, scc_runs, stamp, length_hist):
    sc = path_scc[p]
    if scc_last[sc] != stamp:
        if atomic_xchg(scc_last, sc, stamp) != stamp:
            atomic_add(scc_runs, sc, 1)
    row = length_hist[numba.get_thread_id()]
    row[min(length, row.size - 1)] += 1


@njit(inline="always")
def book_scc(sc, scc_last, scc_runs, stamp):
    if scc_last[sc] != stamp:
        if atomic_xchg(scc_last, sc, stamp) != stamp:
            atomic_add(scc_runs, sc, 1)
