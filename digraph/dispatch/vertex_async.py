"""Vertex-centric asynchronous execution (``mode="vertex-async"``, DiGraph-t, Groute-like).

A pass walks the worklist of active vertices in vertex order, spread over threads in dynamic
chunks (idle threads take the next chunk); every value written is seen at once by later steps of
the same pass, and pushes into shared masters are atomic (:mod:`digraph.smx.cpu_async`).  A
"round" is one pass; the next worklist is every vertex still active after it:

* linear systems: ``|δ_v| > θ`` (θ from :func:`~digraph.dispatch.convergence.residual_threshold`),
  stopping on the same sound error bound as every other mode;
* monotone systems: the value changed since the vertex last pushed it; a frontier smaller than
  :data:`QUEUE_SHARE` of the vertices runs as one first-in first-out phase on one thread instead
  (``queue_phases`` counts them; each is one round);
* h-index: a neighbour's estimate dropped.

Counters: ``vertex_updates`` = worklist vertices processed, ``arc_updates`` = arcs pushed along.
"""

from contextlib import contextmanager

import numba
import numpy as np

from ..errors import InvalidParameterError
from ..smx import cpu_async as A
from .bsp import undirected_adjacency
from .convergence import (certified_bound, linear_contraction, linear_error_bound,
                          residual_threshold, tightened, verdict)
from .systems import linear_factors, monotone_arrays, monotone_start

__all__ = ["solve", "CHUNK", "QUEUE_SHARE", "QUEUE_GROW"]

CHUNK = 256
"""Vertices per dynamically scheduled chunk of a pass."""


@contextmanager
def _dynamic_chunks():
    old = numba.get_parallel_chunksize()
    numba.set_parallel_chunksize(CHUNK)
    try:
        yield
    finally:
        numba.set_parallel_chunksize(old)


def solve(graph, system, *, tol, max_iter, stats):
    """Run ``system`` asynchronously to convergence; returns (state, converged)."""
    fam = system.family
    with _dynamic_chunks():
        if fam == "linear":
            return _solve_linear(graph, system, tol, max_iter, stats)
        if fam == "monotone":
            return _solve_monotone(graph, system, max_iter, stats)
        if fam == "hindex":
            return _solve_hindex(graph, system, max_iter, stats)
    raise InvalidParameterError(f"unknown system family {fam!r}")


def _solve_linear(graph, sys, tol, max_iter, stats, x0=None, delta0=None):
    """Push passes from ``x = 0, δ = b`` (or from a state ``x0`` with residual ``delta0``)."""
    n = graph.num_vertices
    gammas = linear_contraction(graph, sys)
    src_scale, dst_scale, has_coef, arc_coef = linear_factors(graph, sys)
    x = np.zeros(n, np.float64) if x0 is None else x0
    delta = np.ascontiguousarray(sys.b if delta0 is None else delta0, dtype=np.float64).copy()
    theta = 0.0
    converged = False
    while True:
        mag = np.abs(delta)
        r1 = float(mag.sum())
        rmax = float(mag.max()) if n else 0.0
        sum_x = float(x.sum())
        bound = linear_error_bound(r1, rmax, sum_x, n, gammas, sys.normalize)
        if bound <= tightened(tol, stats) or r1 == 0.0:
            # certify on the residual recomputed from x (δ drifts by rounding); if short, carry
            # on from the exact residual
            bound, r1, floor = certified_bound(graph, sys, x, gammas, delta)
            outcome = verdict(bound, r1, floor, tol, stats)
            if outcome != "retry":
                converged = outcome == "converged"
                break
            continue
        if stats["rounds"] >= max_iter:
            break
        theta = residual_threshold(tightened(tol, stats), sum_x, n, gammas, sys.normalize)
        worklist = np.flatnonzero(mag > theta)
        stats["arc_updates"] += int(A.linear_push_pass(
            worklist, graph.out_offsets, graph.out_targets, arc_coef, has_coef, src_scale,
            dst_scale, delta, x))
        stats["vertex_updates"] += int(worklist.size)
        stats["rounds"] += 1
    stats["error_bound"] = float(bound)
    stats["residual_l1"] = float(r1)
    return x, converged


QUEUE_SHARE = 1 / 32
"""A frontier of fewer than this share of the vertices runs as a one-thread FIFO phase
(:func:`~digraph.smx.cpu_async.monotone_queue`) instead of a parallel pass, until its queue
outgrows :data:`QUEUE_GROW` times that size or it has read as many arcs as there are vertices: a
parallel pass costs a scan of every vertex to find its worklist, which a small frontier does not
pay back, and a phase that has done a scan's worth of work lets the threads share the rest (SSSP on a chain of 10^6 vertices: 10^6
passes, more than 5 minutes; with the queue 0.1 s)."""
QUEUE_GROW = 1


def _settles_in_order(sys, arc_value, has_value):
    """Whether the small-frontier phase should take vertices best value first (a heap) rather
    than first in first out: when a push never betters the value it came from, as for SSSP
    (``plus`` along non-negative arcs, under ``min``), each vertex is then pushed once.  Without
    arc values the steps are all 1 and first in, first out is that order already, at a fraction of
    a heap's cost.  Measured
    on a 700x700 grid with weights in [1, 100] (both directions, 2 cores): FIFO 0.75 s and 64.5 M
    arc relaxations (33 per arc), the heap 0.12 s and 1.96 M (one per arc); scipy's Dijkstra
    0.10 s."""
    if sys.combine != "min" or sys.relax not in ("plus", "max") or not has_value:
        return False  # unit steps: first in, first out is breadth-first, Dijkstra's order already
    return bool(arc_value.size == 0 or arc_value.min() >= 0.0)


def _solve_monotone(graph, sys, max_iter, stats):
    n = graph.num_vertices
    op, combine, has_value, arc_value = monotone_arrays(graph, sys)
    x, active = monotone_start(sys, n)
    identity = np.inf if combine == 0 else -np.inf
    sent = np.where(active, identity, x)
    converged = False
    small = max(1, int(n * QUEUE_SHARE))
    max_arcs = max(n, 1)  # a phase hands back after as many arcs as a pass's scan has vertices
    inq = queue = None
    ordered = _settles_in_order(sys, arc_value, has_value)
    stats.setdefault("queue_phases", 0)
    stats["queue"] = "heap" if ordered else "fifo"
    while True:
        worklist = np.flatnonzero(x != sent)
        if worklist.size == 0:
            converged = True
            break
        if stats["rounds"] >= max_iter:
            break
        if worklist.size < small:
            if ordered:
                done, arcs, _ = A.monotone_heap(worklist, graph.out_offsets, graph.out_targets,
                                                arc_value, has_value, op, combine, x, sent,
                                                QUEUE_GROW * small, max_arcs)
            else:
                if inq is None:
                    inq = np.zeros(n, np.bool_)
                    queue = np.empty(n, np.int64)
                done, arcs, _ = A.monotone_queue(worklist, graph.out_offsets, graph.out_targets,
                                                 arc_value, has_value, op, combine, x, sent, inq,
                                                 queue, QUEUE_GROW * small, max_arcs)
            stats["queue_phases"] += 1
            stats["arc_updates"] += int(arcs)
            stats["vertex_updates"] += int(done)
            stats["rounds"] += 1
            continue
        stats["arc_updates"] += int(A.monotone_push_pass(
            worklist, graph.out_offsets, graph.out_targets, arc_value, has_value, op, combine,
            x, sent))
        stats["vertex_updates"] += int(worklist.size)
        stats["rounds"] += 1
    return x, converged


def _solve_hindex(graph, sys, max_iter, stats):
    n = graph.num_vertices
    offsets, nbr = undirected_adjacency(graph)
    est = np.diff(offsets)
    dirty = np.ones(n, dtype=np.bool_)
    maxdeg = int(est.max()) if n else 0
    count = np.zeros((numba.config.NUMBA_NUM_THREADS, maxdeg + 2), dtype=np.int64)
    converged = False
    while True:
        worklist = np.flatnonzero(dirty)
        if worklist.size == 0:
            converged = True
            break
        if stats["rounds"] >= max_iter:
            break
        dirty[:] = False
        _, arcs = A.hindex_pass(worklist, offsets, nbr, est, dirty, count)
        stats["arc_updates"] += int(arcs)
        stats["vertex_updates"] += int(worklist.size)
        stats["rounds"] += 1
    return est, converged
