"""Vertex-centric asynchronous execution (``mode="vertex-async"``, DiGraph-t, Groute-like).

A pass walks the worklist of active vertices in vertex order, spread over threads in dynamic
chunks (idle threads take the next chunk); every value written is seen at once by later steps of
the same pass, and pushes into shared masters are atomic (:mod:`digraph.smx.cpu.vertex_async`).  A
"round" is one pass; the next worklist is every vertex still active after it:

* linear systems: ``|δ_v| > θ`` (θ from :func:`~digraph.dispatch.convergence.residual_threshold`),
  stopping on the same sound error bound as every other mode;
* monotone systems: the value changed since the vertex last pushed it; a frontier smaller than
  :attr:`VertexAsyncSettings.queue_share` of the vertices runs as one first-in first-out phase on
  one thread instead (``queue_phases`` counts them; each is one round);
* h-index: a neighbour's estimate dropped.

Counters: ``vertex_updates`` = worklist vertices processed, ``arc_updates`` = arcs pushed along,
``vertices_scanned`` (linear) = vertices whose residual the scans read: every vertex, or, while
the residual is non-zero on few vertices, only those (a residual set,
:class:`~.cpu_bsp.Touched`; the worklist then comes from it, in vertex order).
"""

from contextlib import contextmanager
from dataclasses import dataclass

import numba
import numpy as np

from ...settings import current, register
from ....errors import InvalidParameterError
from ....smx.cpu import vertex_async as A
from ....smx.cpu import bsp as K
from ....smx.cpu.serial import pick
from ... import driver
from .cpu_bsp import Touched
from ...convergence import certified_bound, linear_contraction
from ...systems import linear_factors, monotone_arrays, monotone_start, undirected_adjacency

__all__ = ["solve", "VertexAsyncSettings", "DEFAULT"]


@dataclass(frozen=True)
class VertexAsyncSettings:
    """How ``vertex-async`` schedules its passes.

    Attributes
    ----------
    chunk : int
        Vertices per dynamically scheduled chunk of a pass (Numba's parallel chunk size while the
        engine runs; idle threads take the next chunk).  Not measured: chosen by hand, and no
        benchmark varies it.
    queue_share : float
        A frontier of fewer than this share of the vertices (monotone systems) runs as a one-thread
        phase (:func:`~digraph.smx.cpu.vertex_async.monotone_queue`, first in first out, or
        :func:`~digraph.smx.cpu.vertex_async.monotone_heap`, best value first:
        :func:`_settles_in_order`) instead of a parallel pass, until its queue outgrows
        ``queue_grow`` times that size or it has read as many arcs as there are vertices: a parallel
        pass costs a scan of every vertex to find its worklist, which a small frontier does not pay
        back, and a phase that has done a scan's worth of work lets the threads share the rest.
        Measured: docs/history/benchmarks-notebook.md, "SSSP: chains, grids and web graphs
        against scipy's Dijkstra" (a chain is one queue phase, where parallel passes take one a
        vertex).  The value 1/32 itself was not compared with others.  ``1.0`` sends every
        frontier short of all the vertices to a queue phase, ``0.0`` none
        (tests/dispatch/test_vertex_async_queue.py forces each side; the warm-up of
        :mod:`digraph.compiling` uses ``1.0`` to compile the queue kernels).
    queue_grow : int
        A queue phase hands back to parallel passes once its queue holds ``queue_grow`` times the
        size below which a phase starts (``queue_share`` of the vertices).  Not measured: chosen
        as 1, the size that started the phase.
    set_share, set_min : float, int
        Linear systems: while the residual is non-zero on at most ``max(set_share · n,
        set_min)`` vertices, the scans read a residual set of those vertices only
        (:class:`~.cpu_bsp.Touched`); ``set_share = 0`` never does (the ablation).
        The same cost model and values as ``bsp``
        (:class:`~.cpu_bsp.BspSettings`): a full scan here is numpy's, a few times cheaper a
        vertex than the set's a flagged vertex (docs/history/docstring-measurements.md).
    serial_arcs : int
        Linear systems with a residual set: a pass whose worklist has fewer out-arcs runs on the
        calling thread: below, a parallel region's start costs more than the pass, and far more
        when another process holds a core (serial against parallel passes on two graphs:
        docs/history/docstring-measurements.md).
    """

    chunk: int = 256
    queue_share: float = 1 / 32
    queue_grow: int = 1
    set_share: float = 1 / 8
    set_min: int = 1024
    serial_arcs: int = 1024


DEFAULT = register(VertexAsyncSettings())


@contextmanager
def _dynamic_chunks(chunk):
    old = numba.get_parallel_chunksize()
    numba.set_parallel_chunksize(chunk)
    try:
        yield
    finally:
        numba.set_parallel_chunksize(old)


def solve(graph, system, *, tol, max_iter, stats, settings=None, x0=None, delta0=None,
          on_stall=None):
    """Run ``system`` asynchronously to convergence; returns (state, converged).

    ``settings``: a :class:`VertexAsyncSettings` (default :data:`DEFAULT`).  Linear systems: from
    the state ``x0`` with residual ``delta0`` when given (a run handed over), and a run whose
    bound stops falling returns ``on_stall(x, delta)`` when given (the hand-over of
    :mod:`digraph.dispatch.engines.push.cpu`), else its state, not converged."""
    settings = current(DEFAULT) if settings is None else settings
    fam = system.family
    with _dynamic_chunks(settings.chunk):
        if fam == "linear":
            return _solve_linear(graph, system, tol, max_iter, stats, x0=x0, delta0=delta0,
                                 on_stall=on_stall, settings=settings)
        if fam == "monotone":
            return _solve_monotone(graph, system, max_iter, stats, settings)
        if fam == "hindex":
            return _solve_hindex(graph, system, max_iter, stats)
    raise InvalidParameterError(f"unknown system family {fam!r}")


class _LinearRounds:
    """Push passes for :func:`digraph.dispatch.driver.linear`: the worklist of a pass is every
    vertex whose residual exceeds θ, in vertex order, pushed in place with atomic adds.  While
    the residual is non-zero on few vertices (:class:`~.cpu_bsp.Touched`), the scan
    reads only those, and a pass of fewer than ``serial_arcs`` arcs runs on one thread."""

    def __init__(self, graph, sys, gammas, stats, settings, x0=None, delta0=None):
        self.graph, self.sys, self.gammas, self.stats = graph, sys, gammas, stats
        n = graph.num_vertices
        self.src_scale, self.dst_scale, self.has_coef, self.arc_coef = linear_factors(graph, sys)
        self.x = np.zeros(n, np.float64) if x0 is None else x0
        self.delta = np.ascontiguousarray(sys.b if delta0 is None else delta0,
                                          dtype=np.float64).copy()
        self.touched = Touched(n, settings.set_share, settings.set_min)
        self.serial_arcs = settings.serial_arcs
        self.buf = None  # the worklist a scan of the residual set finds
        stats.setdefault("vertices_scanned", 0)
        self.worklist = None
        self.vol = 0

    def scan(self, theta):
        t, stats = self.touched, self.stats
        if t.valid:
            nw, self.vol, r1, rmax, kept = K.set_scan(self.delta, theta, self.graph.out_degree,
                                                      t.mark, t.block, self.buf)
            stats["vertices_scanned"] += t.count
            t.count = int(kept)
            self.worklist = self.buf[:nw]
            return r1, rmax, t.total_x(), nw
        mag = np.abs(self.delta)
        n = mag.size
        self.worklist = np.flatnonzero(mag > theta)
        r1, rmax, sum_x = float(mag.sum()), float(mag.max()) if n else 0.0, float(self.x.sum())
        stats["vertices_scanned"] += n
        if 2 * self.worklist.size <= t.limit:  # else the non-zero entries are too many anyway
            t.build(self.delta, np.count_nonzero(self.delta), sum_x)
            if t.valid:
                if self.buf is None:
                    self.buf = np.empty(n, np.int64)
                self.vol = int(self.graph.out_degree[self.worklist].sum())
        return r1, rmax, sum_x, self.worklist.size

    def certify(self):
        # the residual recomputed from x replaces the tracked δ (which drifts by rounding)
        self.touched.drop()  # δ is rewritten at every vertex: the next scan reads them all
        return certified_bound(self.graph, self.sys, self.x, self.gammas, self.delta)

    def step(self, theta):
        g, w, t = self.graph, self.worklist, self.touched
        arcs, absorbed, added = A.linear_push_pass(
            w, g.out_offsets, g.out_targets, self.arc_coef, self.has_coef, self.src_scale,
            self.dst_scale, self.delta, self.x, *t.sets(), t.valid and self.vol < self.serial_arcs)
        if t.valid:
            t.absorbed(absorbed)
            t.grew(added)
        self.stats["arc_updates"] += int(arcs)
        self.stats["vertex_updates"] += int(w.size)


def _solve_linear(graph, sys, tol, max_iter, stats, x0=None, delta0=None, on_stall=None,
                  settings=None):
    """Push passes from ``x = 0, δ = b`` (or from a state ``x0`` with residual ``delta0``); a
    stalled run returns ``on_stall(x, δ)`` when given."""
    settings = current(DEFAULT) if settings is None else settings
    gammas = linear_contraction(graph, sys)
    eng = _LinearRounds(graph, sys, gammas, stats, settings, x0, delta0)
    outcome = driver.linear(eng, n=graph.num_vertices, gammas=gammas, normalize=sys.normalize,
                            tol=tol, max_iter=max_iter, stats=stats)
    if outcome == "stalled" and on_stall is not None:
        return on_stall(eng.x, eng.delta)
    return eng.x, outcome == "converged"


def _settles_in_order(sys, arc_value, has_value):
    """Whether the small-frontier phase should take vertices best value first (a heap) rather
    than first in first out: when a push never betters the value it came from, as for SSSP
    (``plus`` along non-negative arcs, under ``min``), each vertex is then pushed once.  Without
    arc values the steps are all 1 and first in, first out is that order already, at a fraction of
    a heap's cost.  Measured: docs/history/benchmarks-notebook.md, "SSSP's small-frontier phase:
    a heap or a queue"."""
    if sys.combine != "min" or sys.relax not in ("plus", "max") or not has_value:
        return False  # unit steps: first in, first out is breadth-first, Dijkstra's order already
    return bool(arc_value.size == 0 or arc_value.min() >= 0.0)


class _MonotoneRounds:
    """Min/max passes for :func:`digraph.dispatch.driver.worklist`: a parallel pass over the
    vertices whose value changed since they last pushed, or, for a frontier smaller than
    :attr:`VertexAsyncSettings.queue_share` of the vertices, one queue phase on one thread (first
    in first out, or best value first: :func:`_settles_in_order`)."""

    def __init__(self, graph, sys, stats, settings):
        self.graph, self.stats = graph, stats
        n = graph.num_vertices
        self.op, self.combine, self.has_value, self.arc_value = monotone_arrays(graph, sys)
        self.x, active = monotone_start(sys, n)
        identity = np.inf if self.combine == 0 else -np.inf
        self.sent = np.where(active, identity, self.x)
        self.small = max(1, int(n * settings.queue_share))
        self.grow = settings.queue_grow
        self.max_arcs = max(n, 1)  # a phase hands back after as many arcs as a scan has vertices
        self.inq = self.queue = self.pos = None
        self.ordered = _settles_in_order(sys, self.arc_value, self.has_value)
        stats.setdefault("queue_phases", 0)
        stats["queue"] = "heap" if self.ordered else "fifo"
        self.worklist = None

    def active(self):
        self.worklist = np.flatnonzero(self.x != self.sent)
        return self.worklist.size

    def step(self):
        g, w, stats = self.graph, self.worklist, self.stats
        args = (g.out_offsets, g.out_targets, self.arc_value, self.has_value, self.op,
                self.combine, self.x, self.sent)
        if w.size < self.small:
            if self.ordered:
                if self.pos is None:
                    self.pos = np.full(self.x.size, -1, np.int64)
                done, arcs, _ = A.monotone_heap(w, *args, self.grow * self.small, self.max_arcs,
                                                self.pos)
            else:
                if self.inq is None:
                    self.inq = np.zeros(self.x.size, np.bool_)
                    self.queue = np.empty(self.x.size, np.int64)
                done, arcs, _ = A.monotone_queue(w, *args, self.inq, self.queue,
                                                 self.grow * self.small, self.max_arcs)
            stats["queue_phases"] += 1
            stats["arc_updates"] += int(arcs)
            stats["vertex_updates"] += int(done)
            return
        push = pick(A.monotone_push_pass, A.monotone_push_pass_serial, g.num_arcs)
        stats["arc_updates"] += int(push(w, *args))
        stats["vertex_updates"] += int(w.size)


def _solve_monotone(graph, sys, max_iter, stats, settings):
    eng = _MonotoneRounds(graph, sys, stats, settings)
    converged = driver.worklist(eng, max_iter=max_iter, stats=stats)
    return eng.x, converged


class _HIndexRounds:
    """h-index passes for :func:`digraph.dispatch.driver.worklist`: the worklist is every vertex
    a neighbour's falling estimate marked dirty, recomputed in place."""

    def __init__(self, graph, stats):
        n = graph.num_vertices
        self.stats = stats
        self.offsets, self.nbr = undirected_adjacency(graph)
        self.est = np.diff(self.offsets)
        self.dirty = np.ones(n, dtype=np.bool_)
        maxdeg = int(self.est.max()) if n else 0
        self.count = np.zeros((numba.config.NUMBA_NUM_THREADS, maxdeg + 2), dtype=np.int64)
        self.worklist = None

    def active(self):
        self.worklist = np.flatnonzero(self.dirty)
        return self.worklist.size

    def step(self):
        self.dirty[:] = False
        _, arcs = A.hindex_pass(self.worklist, self.offsets, self.nbr, self.est, self.dirty,
                                self.count)
        self.stats["arc_updates"] += int(arcs)
        self.stats["vertex_updates"] += int(self.worklist.size)


def _solve_hindex(graph, sys, max_iter, stats):
    eng = _HIndexRounds(graph, stats)
    converged = driver.worklist(eng, max_iter=max_iter, stats=stats)
    return eng.est, converged
