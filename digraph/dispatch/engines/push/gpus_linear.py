"""The sharded linear engine: :func:`_linear` runs a linear system's dense rounds on the shards
(:class:`_ShardedRounds` under :func:`digraph.dispatch.driver.linear`), with the contraction
factors (:func:`_contraction`) and the certified error bound (:func:`_certify`) computed on the
GPUs, and copies ``x`` back to the host (:func:`_gather_linear`)."""

import time

import numpy as np

from ....algorithms.base import SumNormalized
from ... import driver
from ...convergence import checked_contraction, linear_error_bound
from ...convergence import ROUNDING_MARGIN, rounding_floor
from ...runtime.cuda.host_pages import prefaulted
from ...runtime.cuda.common import (column_sums_known, contraction_sums, count_dense_round, hb,
                                    kernels)
from ...settings import current
from ...runtime.cuda.shard_settings import DEFAULT as MULTI_GPU
from .gpus_layout import linear_shards
from .gpus_rounds import Rounds
from ...runtime.cuda.shards import parallel, sync_all

__all__ = []


class _ShardedRounds:
    """The sharded linear rounds for :func:`digraph.dispatch.driver.linear`: a step launches a
    round on every GPU (:class:`~.gpus_rounds.Rounds`, one round ahead of the host with
    ``pipeline``) and takes in the statistics of the oldest one in flight, which a scan reports;
    a certificate first drains the rounds in flight, so the state certified is the state left."""

    def __init__(self, shards, ex, rounds, K, HB, has, bsum, bmax, n, gammas, normalize, m,
                 max_iter, stats):
        self.shards, self.ex, self.rounds, self.K, self.HB = shards, ex, rounds, K, HB
        self.has, self.bsum, self.bmax, self.n = has, bsum, bmax, n
        self.gammas, self.normalize, self.m, self.max_iter = gammas, normalize, m, max_iter
        self.stats = stats
        self.r1, self.rmax, self.sx = bsum, bmax, 0.0
        self.wide = 2  # rounds left that all-gather the sends of the class without in-arcs too

    def _absorb(self, got):
        if got is not None:
            self.r1, self.rmax, self.sx, absorbed = got
            count_dense_round(self.stats, self.m, absorbed)

    def scan(self, theta):
        return self.r1, self.rmax, self.sx, int(self.r1 != 0.0)

    def step(self, theta):
        self._absorb(self.rounds.launch(theta, self.wide > 0))
        self.wide -= 1
        if len(self.rounds.flight) > 1:
            self._absorb(self.rounds.read())

    def certify(self):
        self._absorb(self.rounds.drain())  # the round in flight ran too: its state is certified
        t0 = time.perf_counter()
        bound, r1, floor, rmax, sx = _certify(self.shards, self.ex, self.K, self.HB, self.has,
                                              self.bsum, self.bmax, self.n, self.gammas,
                                              self.normalize)
        self.stats["time_certify"] = self.stats.get("time_certify", 0.0) + time.perf_counter() - t0
        self.r1, self.rmax, self.sx = r1, rmax, sx
        for s in self.shards:  # carry on from the exact residual
            with s.on():
                s.delta[s.v0:s.v1] = s.r[s.v0:s.v1]
        self.wide = self.max_iter + 1  # δ without in-arcs is no longer 0: send it every round
        return bound, r1, floor

    def finish(self):
        """Drain the rounds still in flight (a run stopped by ``max_iter``); the statistics of
        the state left, or None when nothing was in flight."""
        got = self.rounds.drain()
        self._absorb(got)
        return None if got is None else (self.r1, self.rmax, self.sx)


def solve_sharded_linear(shards, ex, timer, graph, sys, tol, max_iter, stats, layout=None,
            divide_by_sum=False, settings=None):
    settings = current(MULTI_GPU) if settings is None else settings
    K = kernels()
    HB = hb()
    n = graph.num_vertices
    t0 = time.perf_counter()
    host = prefaulted(n) if settings.prefault and not shards[0].be.sim else None
    has, bsum, bmax = linear_shards(shards, graph, sys, ex, layout, settings=settings)
    gammas = _contraction(shards, ex, sys, has, graph.num_arcs)
    rounds = Rounds(shards, ex, has, timer, settings)
    sync_all(shards)
    stats["time_setup"] = time.perf_counter() - t0
    stats["gpu_sends"] = [s.n_send for s in shards]
    stats["gpu_sends_first"] = [s.n_send_first for s in shards]
    stats["pipelined"] = bool(settings.pipeline)
    eng = _ShardedRounds(shards, ex, rounds, K, HB, has, bsum, bmax, n, gammas, sys.normalize,
                         graph.num_arcs, max_iter, stats)
    outcome = driver.linear(eng, n=n, gammas=gammas, normalize=sys.normalize, tol=tol,
                            max_iter=max_iter, stats=stats)
    converged = outcome == "converged"
    stats["time_launch"] = rounds.host
    stats["overlapped"] = rounds.overlap
    t0 = time.perf_counter()
    if divide_by_sum:
        _divide_by_sum(shards)
    x = _gather_linear(shards, n, host)
    stats["time_gather"] = time.perf_counter() - t0
    return (x.view(SumNormalized) if divide_by_sum else x), converged


def _divide_by_sum(shards):
    """Every range of ``x`` divided by the sum of all, on its GPU (left as it is when the sum is
    <= 0, as :func:`~digraph.algorithms.base.normalized` does)."""
    sums = []
    for s in shards:
        with s.on():
            sums.append(s.x[s.v0:s.v1].sum())
    total = 0.0
    for s, v in zip(shards, sums):
        with s.on():
            total += float(v)
    if total > 0:
        for s in shards:
            with s.on():
                s.x[s.v0:s.v1] /= total


def _gather_linear(shards, n, host=None):
    """``x`` in the graph's numbering on the host: each range put back in order on its GPU and
    copied down, the GPUs in parallel (each over its own link), into ``host`` (a
    :class:`~digraph.dispatch.runtime.cuda.host_pages.Prefaulted` array) when given."""
    out = np.empty(n, np.float64) if host is None else host.ready()

    def fetch(s):
        if s.v1 == s.v0:
            return
        be, xp = s.be, s.be.xp
        back = xp.empty(s.v1 - s.v0, np.float64)
        back[s.perm] = s.x[s.v0:s.v1]
        if be.sim:
            out[s.v0:s.v1] = back
        else:
            be.sync()
            t0 = time.perf_counter()
            back.get(out=out[s.v0:s.v1])
            be.stats["time_transfer"] += time.perf_counter() - t0
        be.stats["bytes_d2h"] += int(back.nbytes)
    parallel(shards, fetch)
    return out


def _contraction(shards, ex, sys, has, m):
    """γ1, γ∞ summed on the GPUs: each shard's column-sum contributions all-reduced (or the
    column sums taken from the out-degrees of each range, :func:`~digraph.dispatch.engines.one_gpu.
    column_sums_known`)."""
    if m == 0:
        return 0.0, 0.0
    known = column_sums_known(sys, has)
    cols, rows, bads = [], [], []
    for s in shards:
        with s.on():
            col, row, bad = contraction_sums(s.be, s.v0, s.v1, s.off, s.src, s.coef, has,
                                                 s.src_scale, s.dst_scale, not known, s.heavy)
            cols.append(col)
            rows.append(row)
            bads.append(bad)
    g1 = 0.0
    if not known:
        ex.allreduce(cols, "sum", count=False)
        with shards[0].on():
            g1 = shards[0].be.scalars(cols[0].max())[0]
    ginf, nbad = 0.0, 0
    for s, row, bad in zip(shards, rows, bads):
        with s.on():
            vals = [row.max(), bad[0]]
            if known and s.v1 > s.v0:
                vals.append((s.src_scale[s.v0:s.v1] * s.out_degree[s.v0:s.v1]).max())
            got = s.be.scalars(*vals)
            ginf, nbad = max(ginf, got[0]), nbad + int(got[1])
            if len(got) > 2:
                g1 = max(g1, got[2])
    checked = checked_contraction(g1, ginf, nbad)
    if getattr(sys, "error_gammas", None) is not None:  # rescaled by dual weights
        return sys.error_gammas
    return checked


def _certify(shards, ex, K, HB, has, bsum, bmax, n, gammas, normalize):
    """(bound, ‖r‖₁, floor, ‖r‖∞, Σx) from the residual recomputed on every shard for its range
    after an all-gather of the ``x`` that other ranges read (each shard's ``r`` holds its range)."""
    ex.allgather([s.x for s in shards], [s.n_send_first for s in shards])
    sums = []  # every GPU's residual and sums queued before any is read
    for s in shards:
        with s.on():
            be, xp = s.be, s.be.xp
            args = (s.off, s.src, s.coef, has, s.src_scale, s.dst_scale, s.b, s.x, s.r)
            be.launch(K.linear_residual, be.grid(n), be.block, *args)
            be.heavy(K.linear_residual_heavy, s.heavy, *args)
            if s.v1 > s.v0:
                mag = xp.abs(s.r[s.v0:s.v1])
                xs = s.x[s.v0:s.v1]
                sums.append((s, xp.stack([mag.sum(), mag.max(), xs.sum(), xp.abs(xs).sum(),
                                          xp.abs(xs).max()])))
    parts = []
    for s, v in sums:
        with s.on():
            parts.append(s.be.get(v))
    p = np.array(parts) if parts else np.zeros((1, 5))
    r1, rmax, sx, xsum, xmax = (float(p[:, 0].sum()), float(p[:, 1].max()), float(p[:, 2].sum()),
                                float(p[:, 3].sum()), float(p[:, 4].max()))
    e1, emax = rounding_floor(bsum, bmax, xsum, xmax, r1, rmax)
    bound = linear_error_bound(r1 + e1, rmax + emax, sx, n, gammas, normalize)
    floor = linear_error_bound(e1, emax, sx, n, gammas, normalize)
    return bound * (1.0 + ROUNDING_MARGIN), r1, floor, rmax, sx
