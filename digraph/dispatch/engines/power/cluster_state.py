"""What a worker of the cluster placement's power iteration keeps (:mod:`.cluster_worker`, the
plugin that serves them): a graph's :class:`Shard` (its vertex range's in-arcs and the
exchange's lists, kept between runs) and a run's :class:`RunState` (its range of the vectors,
and the parts of a round the plugin runs on its kernel thread; :mod:`.cluster_gpu_worker` has
the GPU's)."""

import numpy as np

from ....smx.cpu.serial import pick
from .cpu import _gather_sum, _pull, _pull_serial, _teleport, _teleport_serial
from ...runtime.cpu_tasks import task_cuts
from .cluster_maps import weighted_sums, weighted_sums_serial
from .cluster_reads import compact, reads

__all__ = ["Shard", "RunState"]


class Shard:
    """One graph's vertex range on this worker, kept between runs.

    Attributes
    ----------
    index : int
        Its place among the shards (range ``[bounds[index], bounds[index + 1])``).
    peers : list of str
        Every shard's worker address, by index.
    off, src : numpy.ndarray
        The range's in-arcs: row offsets from 0, sources renumbered into the compact vector.
    base : numpy.ndarray of int64
        The offset of each range's part in the compact vector (:func:`.cluster_reads.compact`).
    reads : dict of int -> int
        Entries of each other range it reads (sent to it each round).
    send_idx : dict of int -> numpy.ndarray
        Local indices of its range that each other shard reads (sent by it each round).
    weights : numpy.ndarray of float64 or None
        The in-arcs' weights, in the order of ``src``, when the shard was built on the workers
        from a weighted edge list (a run's arc factors then come from here, not the client).
    runs : int
        Runs it has served.
    duals : dict
        The dual weights of its range found by runs on it, by the coefficients' key
        (:mod:`.cluster_dual_worker`).
    """

    def __init__(self, index, bounds, peers, off, src, weights=None):
        b = np.asarray(bounds, np.int64)
        self.index, self.peers = int(index), list(peers)
        self.v0, self.v1 = int(b[index]), int(b[index + 1])
        self.off = np.ascontiguousarray(off, np.int64)
        self.arcs = int(self.off[-1]) if self.off.size else 0
        idx_of = reads(src, b, self.index)
        src_c, self.base = compact(src, b, self.index, idx_of)
        self.src = src_c.astype(np.int32) if self.base[-1] < 2**31 else src_c
        self.idx_of = idx_of
        self.reads = {g: int(a.size) for g, a in idx_of.items() if a.size}
        self.send_idx = {}
        self.weights = None if weights is None else np.ascontiguousarray(weights, np.float64)
        self.pinned = False
        self.runs = 0
        self.duals = {}


class RunState:
    """One run's vectors on one shard (its range of each; ``zc`` the compact ``z``)."""

    gpu = False  # the round's parts run on the worker's CPU threads

    def __init__(self, shard, v, src_scale, dst_scale, coef, d, didx, dg, x0=None, zw=None,
                 anderson=None):
        self.shard = shard  # kept for the run, even if a newer graph evicts it from the worker
        n = shard.v1 - shard.v0
        if isinstance(coef, str) and coef == "shard":  # the weights the shard was built with
            coef = shard.weights
        self.v = np.ascontiguousarray(v, np.float64)
        self.src_scale = np.ascontiguousarray(src_scale, np.float64)
        self.dst_scale = np.ascontiguousarray(dst_scale, np.float64)
        self.has = coef is not None
        self.coef = np.ascontiguousarray(coef, np.float64) if self.has else np.empty(0)
        self.d = self.v if d is None else np.ascontiguousarray(d, np.float64)
        self.didx = np.ascontiguousarray(didx, np.int64)
        self.dg = np.ascontiguousarray(dg, np.float64)
        self.x = self.v.copy() if x0 is None else np.array(x0, np.float64)  # a checkpoint
        # the affine map's dual weights (cluster_maps.Affine), None elsewhere
        self.zw = None if zw is None else np.ascontiguousarray(zw, np.float64)
        self.y = np.empty(n, np.float64)
        self.zc = np.empty(max(int(shard.base[-1]), 1), np.float64)
        b, i = shard.base, shard.index
        self.z_own = self.zc[b[i]:b[i + 1]]
        self.recv = {g: self.zc[b[g]:b[g + 1]] for g in shard.reads}
        np.multiply(self.src_scale, self.x, out=self.z_own)
        self._pull = pick(_pull, _pull_serial, shard.arcs)
        self.cuts = task_cuts(shard.off)
        self._teleport = pick(_teleport, _teleport_serial, shard.arcs)
        self.weighted = pick(weighted_sums, weighted_sums_serial, shard.arcs)
        self.busy = 0.0
        self.sweeps = None  # the dual weights' sweeps under way (cluster_dual_worker)
        self.aa = None  # Anderson's mixes (cluster_anderson), with anderson={"memory": ...}
        self.mixed, self.mix_sum = False, 0.0  # the iterate to pull is a mix, and its sum
        self.answer = None  # the last power step where the iterate pulled is a mix
        if anderson and anderson["memory"] > 0:  # on every worker alike, an empty range too
            from .cluster_anderson import WorkerAnderson
            self.aa = WorkerAnderson(n, **anderson)

    # a run state's round, in the parts the plugin runs on its kernel thread (each the same
    # for the GPU's run state, :class:`.cluster_gpu_worker.GpuRunState`)
    def teleport(self, c, sd):
        """``y += c·v + σ·d``, ``x ← y``, ``z_own = src_scale ∘ x``: the teleport's sums (a
        round that records Anderson's differences: ``x`` waits for the mix, ``advance``)."""
        diff, sy = self._teleport(self.y, self.v, float(c), self.d, float(sd), self.x)
        self.x, self.y, self.answer = self.y, self.x, None
        np.multiply(self.src_scale, self.x, out=self.z_own)
        out = {"diff": float(diff), "sy": float(sy)}
        if self.zw is not None:  # the affine map's dual route: its weighted sums
            p1, p2 = self.weighted(self.zw, self.x, self.y)
            out.update(p1=float(p1), p2=float(p2))
        return out

    def parts(self):
        """The entries of ``z_own`` each other shard reads (shard index -> array)."""
        return {h: self.z_own[idx] for h, idx in self.shard.send_idx.items()}

    def take(self, got):
        """The entries read from the other shards (shard index -> array) into ``zc``."""
        for g, a in got.items():
            self.recv[g][:] = a

    def pull(self):
        """``y = pull(z)``: the pull's sums ``s``, ``σ`` and ``Σx``."""
        sh = self.shard
        s = self._pull(self.cuts, sh.off, sh.src, self.coef, self.has, self.zc,
                       self.dst_scale, self.y)
        out = {"s": float(s), "sd": float(_gather_sum(self.didx, self.dg, self.x))}
        if self.mixed:  # the mix's computed sum and its rounding (cluster_anderson)
            out.update(sx=self.mix_sum, mixed=1.0, sxr=self.aa.sum_rounding(self.mix_sum))
            self.mixed = False
        else:
            out["sx"] = float(self.x.sum())
        return out
