"""The workers' side of the dual weights' sweeps on a Dask cluster
(:mod:`digraph.dispatch.engines.power.cluster_dual` drives them from the client).

The sweeps of :func:`digraph.dispatch.dual_bound.dual_weights`, ``w' = 1 + Aᵀ w`` from
``w = 1``, with ``A_vu = dst_scale_v · coef_e · src_scale_u`` for each arc ``e = (u, v)``, on the
shards of a run already started (:mod:`.cluster_worker`): a shard holds the in-arcs of its
range, so each worker adds, for every source ``u`` its arcs read, the terms
``coef_e · dst_scale_v · w_v`` of its own targets (compensated sums, over the shard's arcs
ordered by source: :func:`transpose`, 12 bytes an arc, built once a run and dropped after),
and sends the sums of the sources of each other range back to that range's worker (the round's
exchange reversed: the entries it reads of that range, in the same order).  The owner of ``u`` adds the ``k`` parts,
``(Aᵀ w)_u = src_scale_u · Σ``, and answers ``min (w − Aᵀ w)`` and ``max w`` of its range.

Once the client has found ``s = min_u (w − Aᵀ w)_u`` large enough, each worker keeps
``ẑ = w / s'`` (``s'`` lowered by the rounding) as the run's dual weights, so that its rounds
return the dual route's sums (:func:`.cluster_maps.weighted_sums`), and under the factors' key
on its shard for the next run with the same coefficients (adsorption with other seeds).
"""

import numpy as np
from distributed.diagnostics.plugin import WorkerPlugin
from numba import njit, prange

from ....numeric import neumaier_add
from .cluster_worker import PowerShards

__all__ = ["DualWeights", "transpose", "partial_sums", "finish"]

#: the dual weights a shard keeps, of as many coefficient vectors
KEEP = 4

#: the handlers :class:`DualWeights` adds to a worker (``digraph_power_<op>``)
OPS = ("dual_begin", "dual_sweep", "dual_end")


@njit(cache=True, nogil=True)
def transpose(off, src, coef, has, dst_scale, t_off, t_dst, t_f):
    """The shard's in-arcs ordered by source (a counting sort), into ``t_off`` (compact sources
    + 1, zeros), ``t_dst`` and ``t_f`` (an entry an arc): per compact source index its arcs'
    local targets and factors ``coef_e · dst_scale_v``."""
    size = t_off.size - 1
    for e in range(src.size):
        t_off[src[e] + 1] += 1
    for u in range(size):
        t_off[u + 1] += t_off[u]
    pos = t_off[:-1].copy()
    for v in range(off.size - 1):
        for e in range(off[v], off[v + 1]):
            u = src[e]
            p = pos[u]
            pos[u] = p + 1
            t_dst[p] = v
            t_f[p] = (coef[e] if has else 1.0) * dst_scale[v]


@njit(parallel=True, cache=True, nogil=True)
def partial_sums(t_off, t_dst, t_f, w, out):
    """``out_u = Σ_e t_f[e] · w[t_dst[e]]`` over the arcs of each compact source ``u``
    (compensated sums)."""
    for u in prange(out.size):
        acc = 0.0
        comp = 0.0
        for e in range(t_off[u], t_off[u + 1]):
            acc, comp = neumaier_add(acc, comp, t_f[e] * w[t_dst[e]])
        out[u] = acc + comp


@njit(parallel=True, cache=True, nogil=True)
def finish(total, src_scale, w, nxt):
    """``nxt = 1 + src_scale ∘ total`` (the range's ``1 + Aᵀ w``); returns
    ``(min (w − Aᵀ w), max w)`` over the range (``(inf, 0)`` when it is empty)."""
    smin = np.inf
    wmax = 0.0
    for i in prange(w.size):
        y = src_scale[i] * total[i]
        nxt[i] = 1.0 + y
        smin = min(smin, w[i] - y)
        wmax = max(wmax, w[i])
    return smin, wmax


class _Sweeps:
    """One run's sweeps on one shard: ``w`` and ``nxt`` of its range, the compact sums and the
    arcs by source."""

    def __init__(self, r):
        shard = r.shard
        size = int(shard.base[-1])
        n = shard.v1 - shard.v0
        m = shard.src.size
        self.t = (np.zeros(size + 1, np.int64), np.empty(m, np.int32 if n < 2**31 else np.int64),
                  np.empty(m, np.float64))
        transpose(shard.off, shard.src, r.coef, r.has, r.dst_scale, *self.t)
        self.w = np.ones(n, np.float64)
        self.nxt = np.empty(n, np.float64)
        self.acc = np.empty(size, np.float64)
        b, i = shard.base, shard.index
        self.own = self.acc[b[i]:b[i + 1]]


class DualWeights(WorkerPlugin):
    """The worker plugin of the dual weights' sweeps (module docstring); the runs, shards and
    mail are :class:`~.cluster_worker.PowerShards`'."""

    name = "digraph-dual-weights"
    idempotent = True

    def setup(self, worker):
        self.worker = worker
        for op in OPS:
            worker.handlers[f"digraph_power_{op}"] = getattr(self, f"_{op}")

    def teardown(self, worker):
        for op in OPS:
            worker.handlers.pop(f"digraph_power_{op}", None)

    def _state(self, run):
        p = self.worker.plugins.get(PowerShards.name)
        if p is None:
            raise KeyError(f"worker {self.worker.address} has no {PowerShards.name} plugin")
        return p, p._run(run)

    async def _dual_begin(self, run=None, key=None, fresh=False):
        """Take the dual weights kept under ``key`` for run ``run`` (``{"cached": True}`` with
        their largest value), or, when they are not kept or ``fresh``, set up its sweeps from
        ``w = 1``."""
        p, r = self._state(run)
        if key in r.shard.duals and not fresh:
            r.zw = r.shard.duals[key]
            return {"cached": True, "zmax": float(r.zw.max()) if r.zw.size else 0.0}
        r.zw = None
        r.sweeps = await p._compute(_Sweeps, r)
        return {"cached": False}

    async def _dual_sweep(self, run=None, k=None, swap=False, timeout=60.0):
        """Sweep ``k`` (after ``w ← nxt`` when ``swap``): ``nxt = 1 + Aᵀ w`` on the range, the
        sources' sums of the other ranges sent to their workers; answers the range's
        ``min (w − Aᵀ w)``, ``max w`` and whether ``nxt`` is finite."""
        p, r = self._state(run)
        d, shard = r.sweeps, r.shard

        def sums():
            if swap:
                d.w, d.nxt = d.nxt, d.w
            partial_sums(*d.t, d.w, d.acc)
        await p._compute(sums)
        b = shard.base
        tag = f"{run}:dual:{k}"
        sent = await p._send(tag, shard, {h: d.acc[b[h]:b[h + 1]] for h in shard.reads}, timeout)
        got = await p._collect(tag, shard, shard.send_idx.keys(), timeout)

        def total():
            own = d.own.copy()
            for g, a in got.items():  # in-process workers hand the wrapper over as sent
                own[shard.send_idx[g]] += np.asarray(getattr(a, "data", a), np.float64)
            smin, wmax = finish(own, r.src_scale, d.w, d.nxt)
            return float(smin), float(wmax), bool(np.isfinite(d.nxt).all())
        smin, wmax, finite = await p._compute(total)
        return {"s": smin, "wmax": wmax, "finite": finite, "sent": sent}

    async def _dual_end(self, run=None, key=None, safe=None):
        """End the sweeps: with ``safe``, ``ẑ = w / safe`` becomes the run's dual weights and is
        kept under ``key``; without, the run goes on without them."""
        p, r = self._state(run)
        d, r.sweeps = r.sweeps, None
        if safe is not None and d is not None:
            r.zw = d.w * (1.0 / float(safe))
            duals = r.shard.duals
            duals[key] = r.zw
            while len(duals) > KEEP:  # the oldest coefficients' weights go first
                duals.pop(next(iter(duals)))
        return {"dual": r.zw is not None}
