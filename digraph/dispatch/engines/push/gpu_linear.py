"""Linear systems on one GPU, resident: :class:`Linear` (a system's arrays on the device and its
certified error bound; PageRank's vectors made on the device from the out-degrees:
:func:`_degree_scaled`), :class:`_LinearRounds` (``bsp``'s fused dense pull or sparse push, or
``vertex-async``'s atomic pushes) and :func:`_linear`, which drives them with
:func:`digraph.dispatch.driver.linear` and hands a stalled run to the other of the two."""

import numpy as np

from ...settings import current
from ..registry import find
from ... import driver
from ...convergence import ROUNDING_MARGIN, checked_contraction, linear_error_bound, rounding_floor
from ...systems import linear_factors
from ...runtime.cuda.common import (column_sums_known, contraction_sums, count_dense_round,
                                    hb as _hb, kernels as _kernels)
from ...runtime.cuda.device_graph import resident_graph

__all__ = []


def _degree_scaled(sys):
    """(``b``'s constant, ``src_scale``'s numerator) of a system whose vectors are recipes
    (:class:`~digraph.algorithms.base.DegreeScaledSystem`: PageRank without personalization or
    weights), or None: such vectors are made on the GPU from its out-degrees, not built on the
    host and uploaded."""
    c = getattr(sys, "b_constant", None)
    s = getattr(sys, "src_degree_scale", None)
    if c is None or s is None or sys.arc_scale is not None or sys.dst_scale is not None:
        return None
    return float(c), float(s)


class Linear:
    """A linear system's arrays on the device and its certified error bound."""

    def __init__(self, be, graph, sys):
        xp = be.xp
        self.be = be
        self.g = resident_graph(be, graph)
        self.n, self.m = graph.num_vertices, graph.num_arcs
        g = self.g
        made = _degree_scaled(sys)
        if made:  # PageRank without personalization: the vectors made here, not uploaded
            n, s = self.n, made[1]
            has = False
            deg = g["out_degree"]
            self.src_scale = be.keep(xp.where(deg > 0, s / xp.maximum(deg, 1), 0.0))
            self.dst_scale = be.keep(xp.ones(n, np.float64))
            self.arc = be.put(np.empty(0, np.float64))
        else:
            src, dst, has, arc = linear_factors(graph, sys)
            self.src_scale = be.put(src)
            self.dst_scale = be.put(dst)
            self.arc = be.put(arc)
        self.has = has
        self.in_coef = be.put(arc[graph.in_arcs]) if has else self.arc
        known = column_sums_known(sys, has)
        col, row, bad = contraction_sums(be, 0, self.n, g["in_offsets"], g["in_sources"],
                                         self.in_coef, has, self.src_scale, self.dst_scale,
                                         not known, g["heavy_in"])
        if known:
            col = self.src_scale * g["out_degree"]
        self.gammas = checked_contraction(*be.scalars(col.max(), row.max(), bad[0])) \
            if self.m else (0.0, 0.0)
        if getattr(sys, "error_gammas", None) is not None:  # rescaled by dual weights
            self.gammas = sys.error_gammas
        if made:
            self.b = be.keep(xp.full(self.n, made[0], np.float64))
            self.bmax = abs(made[0]) if self.n else 0.0
            self.bsum = abs(made[0]) * self.n
            self.b_total = made[0] * self.n
        else:
            self.b = be.put(sys.b, np.float64)
            self.bmax = float(np.abs(sys.b).max()) if self.n else 0.0
            self.bsum = float(np.abs(sys.b).sum())
            self.b_total = float(np.sum(sys.b))
        self.x_total = self.b_total  # Σx at the last certificate (x = b before any)
        self.normalize = sys.normalize
        self.r = be.keep(xp.empty(self.n, np.float64))
        self.norms = be.keep(xp.zeros(5, np.float64))  # certify's Σ|r|, max|r|, Σx, Σ|x|, max|x|

    def certify(self, x):
        """(bound, ‖r‖₁, floor) from the residual recomputed from ``x`` (left in ``self.r``; Σx in
        ``self.x_total``)."""
        K = _kernels()
        be, g = self.be, self.g
        args = (g["in_offsets"], g["in_sources"], self.in_coef, self.has, self.src_scale,
                self.dst_scale, self.b, x, self.r)
        be.launch(K.linear_residual, be.grid(self.n), be.block, *args)
        be.heavy(K.linear_residual_heavy, g["heavy_in"], *args)
        if self.n:
            norms = self.norms
            norms.fill(0.0)
            be.launch(K.linear_residual_norms, min(be.grid_hb(self.n), be.walk_blocks), _hb(),
                      self.r, x, norms)
            r1, rmax, sx, xsum, xmax = (float(t) for t in be.get(norms))
        else:
            r1 = rmax = sx = xsum = xmax = 0.0
        self.x_total = sx
        e1, emax = rounding_floor(self.bsum, self.bmax, xsum, xmax, r1, rmax)
        bound = linear_error_bound(r1 + e1, rmax + emax, sx, self.n, self.gammas, self.normalize)
        floor = linear_error_bound(e1, emax, sx, self.n, self.gammas, self.normalize)
        return bound * (1.0 + ROUNDING_MARGIN), r1, floor


class _LinearRounds:
    """BSP (``jacobi``: Jacobi rounds, a fused dense pull or a sparse push by the frontier's
    out-arcs) or vertex-async passes on the GPU, for :func:`digraph.dispatch.driver.linear`."""

    def __init__(self, be, L, stats, jacobi, settings, state=None):
        xp = be.xp
        self.be, self.L, self.stats, self.jacobi = be, L, stats, jacobi
        self.divisor = settings.dense_divisor
        n = L.n
        self.x = be.keep(xp.zeros(n, np.float64) if state is None else state[0])
        self.delta = be.keep(L.b.copy() if state is None else state[1])
        self.send = be.keep(xp.zeros(n, np.float64))  # sparse rounds: zero except during a push
        self.scan_out = be.keep(xp.zeros(5, np.float64))
        self.delta_new = be.keep(xp.empty(n, np.float64)) if jacobi else None
        self.known = None  # the statistics a fused dense round returned for the state it left
        self.nf = self.vol = 0

    def scan(self, theta):
        if self.known is None:
            be, L = self.be, self.L
            self.scan_out[...] = 0.0
            be.launch(_kernels().linear_scan, be.grid_hb(L.n), _hb(), self.delta, theta,
                      L.g["out_degree"], self.x, self.scan_out)
            r1, rmax, sx, nf, vol = (float(v) for v in be.get(self.scan_out))
        else:
            r1, rmax, sx, nf, vol = self.known
            self.known = None
        self.nf, self.vol = nf, vol
        return r1, rmax, sx, nf

    def certify(self):
        bound, r1, floor = self.L.certify(self.x)
        self.delta[...] = self.L.r  # carry on from the exact residual
        self.known = None
        return bound, r1, floor

    def step(self, theta):
        K = _kernels()
        be, L, stats = self.be, self.L, self.stats
        g, m, xp = L.g, L.m, be.xp
        if self.jacobi and self.vol * self.divisor > m:
            # one fused pass: absorb, pull, and the statistics of the state it leaves
            self.scan_out[...] = 0.0
            args = (0, g["in_offsets"], g["in_sources"], L.in_coef, L.has, L.src_scale,
                    L.dst_scale, self.delta, self.delta_new, self.x, theta, g["out_degree"],
                    self.scan_out)
            be.launch(K.linear_dense_batch, be.grid_hb(L.n), _hb(), 0, L.n, *args)
            be.heavy(K.linear_dense_batch_heavy, g["heavy_in"], *args)
            r1n, rmaxn, sxn, absorbed, absorbed_vol = (float(v) for v in be.get(self.scan_out))
            self.delta, self.delta_new = self.delta_new, self.delta
            count_dense_round(stats, m, absorbed)
            # this round's frontier stands in for the next one while it stays dense; near the
            # switch to sparse rounds the next frontier is scanned exactly
            if absorbed_vol * self.divisor > 2 * m:
                self.known = (r1n, rmaxn, sxn, absorbed, absorbed_vol)
            return
        front = xp.flatnonzero(xp.abs(self.delta) > theta)
        if self.jacobi:
            be.launch(K.linear_take, be.grid(front.size), be.block, front, self.delta, self.x,
                      L.src_scale, self.send)
            args = (self.send, g["out_offsets"], g["out_targets"], L.arc, L.has, L.dst_scale,
                    self.delta)
            be.launch(K.linear_push, be.grid(front.size), be.block, front, *args)
            be.heavy(K.linear_push_heavy, g["heavy_out"], *args)
            stats["sparse_rounds"] += 1
        else:
            args = (g["out_offsets"], g["out_targets"], L.arc, L.has, L.src_scale, L.dst_scale,
                    self.delta, self.x)
            be.launch(K.linear_async_push, be.grid(front.size), be.block, front, *args)
            be.heavy(K.linear_async_push_heavy, g["heavy_out"], theta, *args)
        stats["arc_updates"] += int(self.vol)
        stats["vertex_updates"] += int(self.nf)


def solve_linear(be, graph, sys, tol, max_iter, stats, jacobi, state=None, settings=None,
            fallback=True):
    """BSP (``jacobi``) or vertex-async rounds from ``x = 0, δ = b`` (or ``state = (x, δ[, L])``);
    a stalled run is finished by the mode its registry row names (``after_stall``: the other
    of the two) from the state it reached (unless ``fallback`` is False)."""
    from .cpu_bsp import DEFAULT
    settings = current(DEFAULT) if settings is None else settings
    L = state[2] if state is not None and len(state) > 2 else Linear(be, graph, sys)
    eng = _LinearRounds(be, L, stats, jacobi, settings, state)
    outcome = driver.linear(eng, n=L.n, gammas=L.gammas, normalize=sys.normalize, tol=tol,
                            max_iter=max_iter, stats=stats)
    if outcome == "stalled" and fallback:
        mode = "bsp" if jacobi else "vertex-async"
        then = find(mode, "gpu").after_stall
        driver.hand_over(stats, then, f"{mode}'s bound stopped falling")
        return solve_linear(be, graph, sys, tol, max_iter, stats, then == "bsp",
                            (eng.x, eng.delta, L), settings, fallback=False)
    return eng.x, outcome == "converged"
