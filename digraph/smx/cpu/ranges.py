"""Kernels of one vertex range whose pull reads a compact vector: the rounds of a Dask cluster's
workers (:mod:`digraph.dispatch.engines.push.cluster_worker`).

A worker holds the in-arcs of its range ``[v0, v1)`` (row offsets from 0) with their sources
renumbered into a compact vector ``z`` (:mod:`digraph.dispatch.engines.power.cluster_reads`):
the entries of the other ranges it reads, and its own range whole at ``z[own:own + n]``.  The
kernels below read ``z`` (and its activity flags) and write the range's next values apart
(Jacobi), as :func:`digraph.smx.cpu.bsp.monotone_dense_round` does on the whole graph.

:func:`hindex_range_round` is the h-index round of k-core (Lü et al., Nature Communications
2016; Montresor, De Pellegrini & Miorandi, IEEE TPDS 2013) over a range whose lists are its
undirected neighbour lists (self-loops dropped, with multiplicity) renumbered the same way:
``x_v ← min(x_v, H({z_u : u ∈ N(v)}))``, ``H`` the h-index
(:func:`digraph.smx.cpu.bsp.h_index`, the kernel of the one-process ``bsp`` rounds).
"""

import numpy as np
from numba import njit, prange

from .bsp import better, h_index, relax
from .serial import serial_twin

__all__ = ["monotone_range_round", "monotone_range_round_serial", "hindex_range_round",
           "hindex_range_round_serial", "warm_up"]


@njit(parallel=True, cache=True, nogil=True)
def monotone_range_round(cuts, in_offsets, in_sources, in_value, has_value, op, combine, z,
                         active, own, new_x, new_active):
    """Pull round of a min/max system over one range: row ``v`` (local) takes the best of
    ``z[own + v]`` and ``relax(z[u], a_e)`` over its in-arcs ``e = (u, v)`` whose source is
    active (``active[u]``), the rows ``cuts`` (of about equal in-arcs) one a task.

    Writes ``new_x`` and ``new_active`` (the rows whose value improved); returns (rows improved,
    arcs relaxed: the in-arcs whose source was active, as a push from the active sources counts
    them).
    """
    tasks = cuts.size - 1
    got = np.zeros(tasks, np.int64)
    arcs = np.zeros(tasks, np.int64)
    for t in prange(tasks):
        g = 0
        a_t = 0
        for v in range(cuts[t], cuts[t + 1]):
            cur = z[own + v]
            best = cur
            for k in range(in_offsets[v], in_offsets[v + 1]):
                u = in_sources[k]
                if active[u]:
                    a_t += 1
                    a = in_value[k] if has_value else 1.0
                    c = relax(op, z[u], a)
                    if better(combine, c, best):
                        best = c
            new_x[v] = best
            if best != cur:
                new_active[v] = True
                g += 1
            else:
                new_active[v] = False
        got[t] = g
        arcs[t] = a_t
    return got.sum(), arcs.sum()


monotone_range_round_serial = serial_twin(monotone_range_round)


@njit(parallel=True, cache=True, nogil=True)
def hindex_range_round(cuts, offsets, nbr, z, active, own, every, new_x, new_active):
    """h-index round over one range: row ``v`` (local) is in the frontier when ``every`` is
    true or one of its neighbours ``u`` (compact, ``nbr[offsets[v]:offsets[v + 1]]``) is
    active (its estimate fell in the last round); a frontier row of estimate ``k = z[own + v]``
    takes the h-index of its neighbours' estimates capped at ``k``, the rows ``cuts`` one a task.

    Writes ``new_x`` and ``new_active`` (the rows whose estimate fell); returns (frontier rows,
    their neighbour entries, rows fallen): the frontier and arcs of the one-process rounds
    (:func:`digraph.smx.cpu.bsp.hindex_round`).
    """
    tasks = cuts.size - 1
    front = np.zeros(tasks, np.int64)
    arcs = np.zeros(tasks, np.int64)
    fell = np.zeros(tasks, np.int64)
    for t in prange(tasks):
        kmax = 0
        for v in range(cuts[t], cuts[t + 1]):
            kmax = max(kmax, z[own + v])
        count = np.zeros(kmax + 1, np.int64)
        f_t = 0
        a_t = 0
        d_t = 0
        for v in range(cuts[t], cuts[t + 1]):
            k = z[own + v]
            new_x[v] = k
            new_active[v] = False
            lo = offsets[v]
            hi = offsets[v + 1]
            hit = every
            if not hit:
                for j in range(lo, hi):
                    if active[nbr[j]]:
                        hit = True
                        break
            if not hit:
                continue
            f_t += 1
            a_t += hi - lo
            if k == 0:
                continue
            h = h_index(count, nbr, lo, hi, z, k)
            if h < k:
                new_x[v] = h
                new_active[v] = True
                d_t += 1
        front[t] = f_t
        arcs[t] = a_t
        fell[t] = d_t
    return front.sum(), arcs.sum(), fell.sum()


hindex_range_round_serial = serial_twin(hindex_range_round)


def warm_up(family="monotone"):
    """Compile (or load from Numba's cache) the range rounds of ``family`` (``"monotone"``:
    :func:`monotone_range_round`; ``"hindex"``: :func:`hindex_range_round`) and their serial
    twins as a worker calls them (int32 sources, int64 offsets) on a ring of three vertices."""
    n = 3
    off = np.arange(n + 1, dtype=np.int64)
    src = np.array([2, 0, 1], np.int32)
    cuts = np.array([0, n], np.int64)
    if family == "hindex":
        for kernel in (hindex_range_round, hindex_range_round_serial):
            kernel(cuts, off, src, np.ones(n, np.int64), np.ones(n, np.bool_), 0, True,
                   np.empty(n, np.int64), np.empty(n, np.bool_))
        return
    from ..relax_codes import PLUS
    z = np.array([0.0, np.inf, np.inf])
    for kernel in (monotone_range_round, monotone_range_round_serial):
        kernel(cuts, off, src, np.ones(n), True, PLUS, 0, z,
               np.ones(n, np.bool_), 0, np.empty(n), np.empty(n, np.bool_))
