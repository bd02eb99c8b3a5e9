"""Bulk-synchronous rounds over a frontier (``mode="bsp"``, the Gunrock-like baseline) on CPU cores.

Each round runs one kernel of :mod:`digraph.smx.cpu.bsp` over the active vertices, reading the
previous round's state (Jacobi), and picks the direction per round as Ligra does: a parallel pull
over in-arcs when the frontier's out-arcs exceed ``m / dense_divisor`` (:class:`BspSettings`), a
push from the frontier otherwise.  The counters of docs/design.md §5 are filled as work is done:

* ``rounds`` — rounds run;
* ``vertex_updates`` — linear: frontier vertices that absorbed their residual; monotone: vertices
  whose value improved; h-index: frontier vertices whose estimate was recomputed;
* ``arc_updates`` — arcs read by the kernels (a dense pull round reads every arc);
* ``vertices_scanned`` — linear: vertices whose residual the scans read (every vertex, or only
  those of the residual set while the residual is non-zero on few vertices, :class:`Touched`).

Linear systems stop on a bound of the answer's error computed from the residual alone (see
:func:`linear_error_bound`), never from a reference.
"""

from dataclasses import dataclass

import numpy as np

from ...settings import current, register
from ....errors import InvalidParameterError
from ....smx.cpu import bsp as K
from ... import driver
from ....numeric import neumaier_add
from ...convergence import certified_bound, linear_contraction
from ...runtime.cpu_tasks import arc_tasks
from ...systems import linear_factors, monotone_arrays, monotone_start, undirected_adjacency

__all__ = ["solve", "BspSettings", "DEFAULT"]


@dataclass(frozen=True)
class BspSettings:
    """How ``bsp`` picks a round's direction (Ligra's rule; Shun & Blelloch, PPoPP 2013).

    ``dense_divisor``: a round pulls over every in-arc when the frontier's out-arcs exceed
    ``m / dense_divisor``, else pushes from the frontier, for sums; ``monotone_dense_divisor``
    the same for min/max systems (SSSP).  ``0`` never pulls and ``10**9`` always pulls (the
    warm-up compiles both).  Measured: docs/history/benchmarks-notebook.md, "bsp: the direction
    switch" (``benchmarks/results/bsp_direction_cpu2_quiet.json``):

    * sums (PageRank): a pull is needed; between ``m / 5`` and ``m / 80`` the times agree within
      the noise, and Ligra's ``m / 20`` (Shun & Blelloch, PPoPP 2013) is kept;
    * min/max (SSSP): never pulling is fastest: the dense min/max round reads every in-arc with
      no early exit, so it costs more than pushing even a frontier of a fifth of the arcs.

    ``set_share`` and ``set_min`` (sums; :class:`Touched`): while the residual is non-zero on at
    most ``max(set_share · n, set_min)`` vertices (a set starts only at half that), the rounds
    scan a residual set of those vertices instead of every vertex; ``set_share = 0`` never does
    (the ablation).  A flagged vertex of the set costs a few times a vertex of a full scan (more
    where the residual is scattered over the blocks), so at ``1/8`` the set is never much dearer
    than a full scan and, clustered, several times cheaper; a set that grows past it is dropped,
    and built again only when a full scan finds the residual on half as many vertices (after a
    certificate, say).  ``set_min``: a set of that many vertices costs no more to scan than one
    parallel launch (not compared with other values).  Measured:
    docs/history/benchmarks-notebook.md, "bsp and vertex-async: the residual set"; whole runs
    with and without the set: ``benchmarks/bench_frontier.py``,
    ``benchmarks/results/frontier_cpu2.json``."""


    dense_divisor: int = 20
    monotone_dense_divisor: int = 0
    set_share: float = 1 / 8
    set_min: int = 1024


DEFAULT = register(BspSettings())


def solve(graph, system, *, tol, max_iter, stats, settings=None, x0=None, delta0=None,
          on_stall=None):
    """Run ``system`` to convergence (or ``max_iter`` rounds); returns (state, converged).

    ``settings``: a :class:`BspSettings` (default :data:`DEFAULT`).  Linear systems: from the
    state ``x0`` with residual ``delta0`` when given (a run handed over), and a run whose bound
    stops falling returns ``on_stall(x, delta)`` when given (the hand-over of
    :mod:`digraph.dispatch.engines.push.cpu`), else its state, not converged."""
    settings = current(DEFAULT) if settings is None else settings
    fam = system.family
    if fam == "linear":
        return _solve_linear(graph, system, tol, max_iter, stats, settings, x0, delta0, on_stall)
    if fam == "monotone":
        return _solve_monotone(graph, system, max_iter, stats, settings)
    if fam == "hindex":
        return _solve_hindex(graph, system, max_iter, stats)
    raise InvalidParameterError(f"unknown system family {fam!r}")


# ---------------------------------------------------------------------------- linear

class Touched:
    """The vertices whose residual δ is non-zero, kept as a residual set while they are few, so
    that a round's scan and frontier read them only (work proportional to what is active).

    While ``valid``, the set (``mark``, ``block``: :data:`digraph.smx.cpu.bsp.BLOCK_SHIFT`)
    flags every vertex whose δ is non-zero (and maybe some whose δ went back to 0, unflagged at
    the next scan); a scan reads the block flags, n/64 bytes, and the flagged vertices only, in
    vertex order, and ``Σx`` is kept as ``Σx + Σ δ absorbed`` (Neumaier's compensated sum)
    instead of read from every vertex.  The set is built (:meth:`build`) from a full scan that
    found at most ``limit / 2`` non-zero entries, and dropped (:meth:`drop`) once it flags more
    than ``limit = max(share · n, least)`` vertices, or when δ is rewritten everywhere (a dense
    round, a certificate); the next scan then reads every vertex again.  ``share = 0`` never
    builds one (every scan reads every vertex).  Used by ``bsp`` and
    ``vertex-async`` (:class:`BspSettings`, ``VertexAsyncSettings``)."""

    NO_MARK = np.empty(0, np.uint8)
    NO_FRONT = np.empty(0, np.int64)

    def __init__(self, n, share, least):
        self.n = n
        self.limit = max(int(share * n), int(least)) if share > 0 else -1
        self.valid = False
        self.mark = self.block = None
        self.count = 0  # vertices flagged (an overcount after parallel passes)
        self.sum_x = self.comp = 0.0

    def sets(self):
        """(mark, block) for the kernels: empty arrays when no set is kept."""
        if self.valid:
            return self.mark, self.block
        return self.NO_MARK, self.NO_MARK

    def build(self, delta, nnz, sum_x):
        """After a full scan that found ``nnz`` non-zero entries of δ and ``Σx = sum_x``: flag
        them when they are few (at most half the limit, so that a set does not start only to be
        dropped a round later)."""
        if self.valid or 2 * nnz > self.limit:
            return
        if self.mark is None:
            self.mark, self.block = K.new_set(self.n)
        self.count = int(K.set_build(delta, self.mark, self.block))
        self.sum_x, self.comp = float(sum_x), 0.0
        self.valid = True

    def absorbed(self, total):
        """``Σx`` grew by ``total`` (the δ that a round absorbed into x)."""
        self.sum_x, self.comp = neumaier_add.py_func(self.sum_x, self.comp, float(total))

    def total_x(self):
        return self.sum_x + self.comp

    def grew(self, added):
        """A round flagged ``added`` more vertices; the set is dropped once it outgrew the limit."""
        self.count += int(added)
        if self.count > self.limit:
            self.drop()

    def drop(self):
        if self.valid:
            K.set_clear(self.mark, self.block)
            self.valid = False
            self.count = 0


class _LinearRounds:
    """Jacobi push rounds for :func:`digraph.dispatch.driver.linear`: a dense pull when the
    frontier's out-arcs exceed ``m / dense_divisor``, a push from the frontier otherwise.  While
    the residual is non-zero on few vertices (:class:`Touched`), the scan and the push round read
    only those."""

    def __init__(self, graph, sys, gammas, stats, settings, x0=None, delta0=None):
        self.graph, self.sys, self.gammas, self.stats = graph, sys, gammas, stats
        self.divisor = settings.dense_divisor
        n = graph.num_vertices
        self.src_scale, self.dst_scale, self.has_coef, self.arc_coef = linear_factors(graph, sys)
        self.in_coef = self.arc_coef[graph.in_arcs] if self.has_coef else self.arc_coef
        self.x = np.zeros(n, np.float64) if x0 is None else x0
        self.delta = np.ascontiguousarray(sys.b if delta0 is None else delta0,
                                          dtype=np.float64).copy()
        self.send = self.new_delta = None  # the dense round's buffers, made when first needed
        self.touched = Touched(n, settings.set_share, settings.set_min)
        self.front = None  # the frontier a scan of the residual set found, in vertex order
        stats.setdefault("vertices_scanned", 0)
        self.nf = self.vol = 0
        self.front_theta = None

    def scan(self, theta):
        t = self.touched
        mark, block = t.sets()
        front = self.front if t.valid else Touched.NO_FRONT
        nf, vol, r1, rmax, sum_x, nnz = K.linear_scan(self.delta, theta, self.graph.out_degree,
                                                      self.x, mark, block, front)
        self.front_theta = theta if t.valid else None  # front holds the frontier of this θ
        if t.valid:
            self.stats["vertices_scanned"] += t.count
            t.count = int(nnz)
            sum_x = t.total_x()
        else:
            self.stats["vertices_scanned"] += self.delta.size
            t.build(self.delta, nnz, sum_x)
            if t.valid:
                self._set_frontier(theta)
        self.nf, self.vol = nf, vol
        return r1, rmax, sum_x, nf

    def _set_frontier(self, theta):
        """The frontier of θ from the residual set, into ``front`` (a set just built, or a θ
        other than the scan's: the driver always scans with the θ it then steps with)."""
        t = self.touched
        if self.front is None:
            self.front = np.empty(self.x.size, np.int64)
        self.nf, self.vol, _, _, t.count = K.set_scan(self.delta, theta, self.graph.out_degree,
                                                      t.mark, t.block, self.front)
        self.stats["vertices_scanned"] += t.count
        self.front_theta = theta

    def certify(self):
        # the residual recomputed from x replaces the tracked δ (which drifts by rounding)
        self.touched.drop()  # δ is rewritten at every vertex: the next scan reads them all
        return certified_bound(self.graph, self.sys, self.x, self.gammas, self.delta)

    def step(self, theta):
        g, stats, m, t = self.graph, self.stats, self.graph.num_arcs, self.touched
        if self.vol * self.divisor > m:
            t.drop()  # δ is rewritten at every vertex
            if self.send is None:
                self.send = np.empty(self.x.size, np.float64)
                self.new_delta = np.empty(self.x.size, np.float64)
            K.linear_dense_round(arc_tasks(g), g.in_offsets, g.in_sources, self.in_coef,
                                 self.has_coef, self.src_scale, self.dst_scale, self.delta,
                                 self.x, theta, self.send, self.new_delta)
            self.delta, self.new_delta = self.new_delta, self.delta
            stats["arc_updates"] += m
            stats["dense_rounds"] += 1
        else:
            if t.valid and self.front_theta != theta:
                self._set_frontier(theta)
            listed = t.valid
            if not listed:
                stats["vertices_scanned"] += self.x.size  # the push finds its frontier itself
            mark, block = t.sets()
            front = self.front if listed else Touched.NO_FRONT
            arcs, added, absorbed = K.linear_sparse_round(
                g.out_offsets, g.out_targets, self.arc_coef, self.has_coef, self.src_scale,
                self.dst_scale, self.delta, self.x, theta, front, self.nf, mark, block)
            if listed:
                t.absorbed(absorbed)
                t.grew(added)
            stats["arc_updates"] += int(arcs)
            stats["sparse_rounds"] += 1
        stats["vertex_updates"] += int(self.nf)


def _solve_linear(graph, sys, tol, max_iter, stats, settings, x0=None, delta0=None, on_stall=None):
    """Jacobi rounds from ``x = 0, δ = b`` (or from ``x0`` with residual ``delta0``); a stalled
    run returns ``on_stall(x, δ)`` when given."""
    gammas = linear_contraction(graph, sys)
    eng = _LinearRounds(graph, sys, gammas, stats, settings, x0, delta0)
    outcome = driver.linear(eng, n=graph.num_vertices, gammas=gammas, normalize=sys.normalize,
                            tol=tol, max_iter=max_iter, stats=stats)
    if outcome == "stalled" and on_stall is not None:
        return on_stall(eng.x, eng.delta)
    return eng.x, outcome == "converged"


# ---------------------------------------------------------------------------- monotone

class _MonotoneRounds:
    """Jacobi min/max rounds for :func:`digraph.dispatch.driver.worklist`, dense or sparse by
    the frontier's out-arcs (as the linear rounds)."""

    def __init__(self, graph, sys, stats, settings):
        self.graph, self.stats, self.divisor = graph, stats, settings.monotone_dense_divisor
        n = graph.num_vertices
        self.op, self.combine, self.has_value, self.arc_value = monotone_arrays(graph, sys)
        self.x, self.act = monotone_start(sys, n)
        self.in_value = self.arc_value[graph.in_arcs] if self.has_value else self.arc_value
        self.new_x = np.empty(n, np.float64)
        self.new_act = np.empty(n, np.bool_)
        self.vol = 0

    def active(self):
        nf, self.vol = K.monotone_scan(self.act, self.graph.out_degree)
        return nf

    def step(self):
        g, stats, m = self.graph, self.stats, self.graph.num_arcs
        if self.vol * self.divisor > m:
            improved = K.monotone_dense_round(arc_tasks(g), g.in_offsets, g.in_sources,
                                              self.in_value, self.has_value, self.op,
                                              self.combine, self.x, self.act, self.new_x,
                                              self.new_act)
            self.x, self.new_x = self.new_x, self.x
            self.act, self.new_act = self.new_act, self.act
            stats["arc_updates"] += m
            stats["dense_rounds"] += 1
        else:
            arcs, improved = K.monotone_sparse_round(g.out_offsets, g.out_targets, self.arc_value,
                                                     self.has_value, self.op, self.combine,
                                                     self.x, self.act)
            stats["arc_updates"] += int(arcs)
            stats["sparse_rounds"] += 1
        stats["vertex_updates"] += int(improved)


def _solve_monotone(graph, sys, max_iter, stats, settings):
    eng = _MonotoneRounds(graph, sys, stats, settings)
    converged = driver.worklist(eng, max_iter=max_iter, stats=stats)
    return eng.x, converged


# ---------------------------------------------------------------------------- h-index

class _HIndexRounds:
    """h-index rounds over a frontier (Lü et al. 2016; Montresor et al. 2013) for
    :func:`digraph.dispatch.driver.worklist`: each recomputes its frontier's estimates from the
    previous round's, and the next frontier is the neighbours of the estimates that fell."""

    def __init__(self, graph, stats):
        import numba
        n = graph.num_vertices
        self.n, self.stats = n, stats
        self.offsets, self.nbr = undirected_adjacency(graph)
        self.est = np.diff(self.offsets)
        self.new_est = self.est.copy()
        self.frontier = np.arange(n, dtype=np.int64)
        self.mark = np.zeros(n, dtype=np.bool_)
        self.buf = np.empty(n, dtype=np.int64)
        self.chunks = 8 * numba.get_num_threads()

    def active(self):
        return self.frontier.size

    def step(self):
        offsets, f, stats = self.offsets, self.frontier, self.stats
        K.hindex_round(offsets, self.nbr, self.est, f, self.new_est, self.chunks)
        stats["vertex_updates"] += int(f.size)
        stats["arc_updates"] += int((offsets[f + 1] - offsets[f]).sum())
        # every vertex recomputed = every arc read (dense); otherwise the frontier's arcs only
        stats["dense_rounds" if f.size == self.n else "sparse_rounds"] += 1
        self.frontier = K.hindex_next_frontier(offsets, self.nbr, self.est, self.new_est, f,
                                               self.mark, self.buf)


def _solve_hindex(graph, sys, max_iter, stats):
    eng = _HIndexRounds(graph, stats)
    converged = driver.worklist(eng, max_iter=max_iter, stats=stats)
    return eng.est, converged
