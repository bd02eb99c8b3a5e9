"""A worker's run on its GPU (``digraph.run(..., cluster=client, device="cuda")``): the
:class:`~.cluster_state.RunState` of a shard whose round runs in the one-GPU power iteration's
CUDA kernels (:mod:`digraph.smx.cuda.power`).

Each worker uses the GPU its process sees first (``"cuda"``: dask-cuda starts one worker a GPU
and sets each one's ``CUDA_VISIBLE_DEVICES`` so). The shard's in-arcs go to the GPU once and
stay there with the shard (:class:`GpuShard`, kept for later runs on the same graph as the
shard is); a run's vectors (``x``, ``y``, the teleport vector or ``b``, the scales, the arc
factors and the compact ``z``) live on the GPU for the run. A round, as on the CPU:

1. the teleport of the range (:func:`~digraph.smx.cuda.power.power_teleport_given`: ``y += c·v``,
   ``z_own = src_scale ∘ y``, ``Σ|y − x|``, ``Σy``; the affine map's
   :func:`~digraph.smx.cuda.power.power_affine`: ``y += b`` with its weighted sums), ``x ← y``;
2. the entries of ``z_own`` each other worker reads, gathered on the GPU
   (:func:`~digraph.smx.cuda.power.gather_at`) and copied to the host, go to that worker as
   mail; those it reads come from the host into the compact ``z``;
3. the pull of its range by in-degree class (:func:`~digraph.smx.cuda.power.power_pull_list`
   and, a block a vertex, :func:`~digraph.smx.cuda.power.power_pull_heavy`), then one copy of
   the round's four sums to the host.

The sums differ from the CPU worker's in their rounding terms only: the pull's bound ``e``
(``Σ (in-degree + 3) y``) and the partial sums the blocks add (``blocks``), which the Google
rule reads (:class:`~.cluster_maps.GoogleRule`) as one GPU's round does
(:func:`~.gpu_setup.round_bound`); the affine map's ``q = Σ ŵ (in-degree + 4) y``
(:class:`~.cluster_maps.AffineRule`, as :mod:`.gpu_affine`).  Without a dangling vector the
dangling mass ``σ`` needs no sum of its own (``σ d + (1 − s − σ) v = (1 − s) v``): a system
with ``dangling=`` runs on CPU workers only (the client refuses it first).

Under Numba's CUDA simulator the device arrays are numpy arrays and the copies host copies, and
the in-process workers of a test take turns on the simulator (:data:`_SIM_TURN`).
"""

import contextlib
import threading

import numpy as np

from ...settings import current
from ...runtime.cuda.common import index_dtype
from .gpu_settings import POWER_DEFAULT
from .gpu_setup import degree_classes


def pull_settings(it):
    """What the client sends a GPU worker's start (``vectors["gpu"]``): the map's name (``it``,
    :mod:`.cluster_maps`) and the pull's choices of the run's
    :class:`~.gpu_settings.PowerGpuSettings` (its in-degree classes, ``bin_arcs``,
    ``blocks_per_sm``), so that a run's ``settings=`` reach the workers."""
    s = current(POWER_DEFAULT)
    return {"map": it.map, "bins": [list(c) for c in s.bins], "bin_arcs": int(s.bin_arcs),
            "blocks_per_sm": int(s.blocks_per_sm)}

__all__ = ["GpuShard", "GpuRunState", "pull_settings"]

#: the simulator's kernel context is one a process: in-process workers (tests) take turns
_SIM_TURN = threading.RLock()


class GpuShard:
    """A shard's in-arcs on the worker's GPU, grouped for the pull, and the exchange's lists.

    Attributes
    ----------
    off, src : device arrays
        The shard's row offsets and compact sources (int32 where they fit).
    bins : list of (int, device array, int)
        The pull's in-degree classes (threads a vertex, the vertices, the grid); ``hubs`` the
        vertices pulled a block each.
    send, buf : dict of int -> device array
        The local indices each other shard reads, and the buffers they are gathered into.
    blocks : int
        The partial sums the pull's blocks add (its rounding bound counts them).
    """

    def __init__(self, be, shard, pull):
        from ....smx.cuda.common import HB, HEAVY
        it = index_dtype(max(int(shard.base[-1]), shard.arcs) + 1)
        deg = np.diff(shard.off)
        n = deg.size
        mean = shard.arcs / n if n else 0.0
        group = int(min(32, HB, max(1, 2 ** round(np.log2(max(mean / 2, 1.0))))))
        classes = (tuple(tuple(c) for c in pull["bins"]) if shard.arcs >= pull["bin_arcs"] else
                   ((0, HEAVY, group),))
        self.key = (classes, pull["blocks_per_sm"])
        self.bins, self.hubs = degree_classes(be, deg, classes, pull["blocks_per_sm"])
        self.off = be.put(shard.off, it)
        self.src = be.put(shard.src, it)
        self.send = {h: be.put(idx, it) for h, idx in shard.send_idx.items()}
        self.buf = {h: be.keep(be.xp.empty(int(idx.size), np.float64))
                    for h, idx in shard.send_idx.items()}
        self.blocks = sum(grid for _, _, grid in self.bins) + min(int(self.hubs.size), 65535)
        arrays = [self.off, self.src, self.hubs, *self.send.values(), *self.buf.values()]
        be.retain(arrays + [verts for _, verts, _ in self.bins], ("dask-shard", id(self)),
                  holder=self)


class GpuRunState:
    """One run's vectors on one shard, on the worker's GPU (the module text); the same parts of
    a round as :class:`~.cluster_state.RunState` (``teleport``, ``parts``, ``take``, ``pull``,
    ``host_x``, ``close``), and its host attributes that the dual weights' sweeps read
    (:mod:`.cluster_dual_worker`: ``shard``, ``coef``, ``has``, ``dst_scale``, ``src_scale``,
    ``zw``, ``sweeps``)."""

    gpu = True  # the round's parts run on the GPU (the exchange's gather too)
    aa = None  # no Anderson mixes on GPU workers (cluster_anderson: CPU workers)

    def __init__(self, shard, gpu, v, src_scale, dst_scale, coef, d, didx, dg, x0=None,
                 zw=None):
        from ...runtime.cuda.backend import backend
        if d is not None or len(didx):
            raise ValueError("a dangling vector (dangling=) runs on CPU workers only")
        self.be = be = backend("cuda")
        self.stats = {"bytes_h2d": 0, "bytes_d2h": 0, "time_transfer": 0.0}
        self.shard, self.map = shard, gpu["map"]
        if isinstance(coef, str) and coef == "shard":  # the weights the shard was built with
            coef = shard.weights
        self.has = coef is not None
        self.coef = np.ascontiguousarray(coef, np.float64) if self.has else np.empty(0)
        self.src_scale = np.ascontiguousarray(src_scale, np.float64)
        self.dst_scale = np.ascontiguousarray(dst_scale, np.float64)
        v = np.ascontiguousarray(v, np.float64)
        x = v if x0 is None else np.ascontiguousarray(x0, np.float64)
        self.sx = float(x.sum())  # the sum of the x the next pull reads
        self.busy = 0.0
        self.sweeps = None
        self.told = False  # whether the last teleport's sums are still to be read
        n = shard.v1 - shard.v0
        with self.on():
            g = getattr(shard, "gpu", None)
            if g is None or g.key != (tuple(tuple(c) for c in gpu["bins"]),
                                      gpu["blocks_per_sm"]):
                g = shard.gpu = GpuShard(be, shard, gpu)
            self.g = g
            xp = be.xp
            self.grid = max(1, min(be.grid_hb(n), gpu["blocks_per_sm"] * be.sms))
            self.dv = be.put(v)
            self.dsrc = be.put(self.src_scale)
            self.ddst = be.put(self.dst_scale)
            self.dcoef = be.put(self.coef) if self.has else be.keep(xp.zeros(1, np.float64))
            self.x = be.put(x)
            self.y = be.keep(xp.zeros(n, np.float64))
            self.zc = be.keep(xp.empty(max(int(shard.base[-1]), 1), np.float64))
            b, i = shard.base, shard.index
            self.z_own = be.keep(self.zc[b[i]:b[i + 1]])  # registered: prepared launches
            self.recv = {h: self.zc[b[h]:b[h + 1]] for h in shard.reads}
            self.z_own[...] = self.dsrc * self.x
            self.acc = be.keep(xp.zeros(4, np.float64))
            self.nxt = be.keep(xp.zeros(1, np.float64))  # the kernels' other accumulator: unused
            self.zhat = be.keep(xp.zeros(1, np.float64))
        self._zw = None
        self.zw = zw

    @property
    def zw(self):
        """The affine map's dual weights of the range (host; None off the dual route)."""
        return self._zw

    @zw.setter
    def zw(self, w):
        self._zw = None if w is None else np.ascontiguousarray(w, np.float64)
        if self._zw is not None:
            with self.on():
                self.zhat = self.be.put(self._zw)

    @contextlib.contextmanager
    def on(self):
        """The worker's GPU current, copies counted in the run's own counters."""
        with (_SIM_TURN if self.be.sim else contextlib.nullcontext()), self.be.current():
            self.be.stats = self.stats
            yield

    def teleport(self, c, sd):
        """``y += (c + σ)·v`` (the affine map: ``y += b``), ``x ← y``, ``z_own = src_scale ∘ x``;
        its sums come back with the pull's (one copy a round): returns ``{}``."""
        from ....smx.cuda import power as K
        from ....smx.cuda.common import HB
        with self.on():
            self.acc[2:4] = 0.0
            if self.map == "google":
                self.be.launch(K.power_teleport_given, self.grid, HB, float(c) + float(sd),
                               self.y, self.dv, self.x, self.dsrc, self.z_own, self.acc,
                               self.nxt)
            else:
                self.be.launch(K.power_affine, self.grid, HB, self.y, self.dv, self.x, True,
                               self.dsrc, self.z_own, self.g.off, self._zw is not None,
                               self.zhat, self.acc, self.nxt)
            self.x, self.y = self.y, self.x
        self.told = True
        return {}

    def parts(self):
        """The entries of ``z_own`` each other shard reads, gathered on the GPU, on the host."""
        from ....smx.cuda import power as K
        from ....smx.cuda.common import HB
        g, be = self.g, self.be
        with self.on():
            for h, idx in g.send.items():
                if idx.size:
                    be.launch(K.gather_at, be.grid_hb(idx.size), HB, self.z_own, idx, g.buf[h])
            return {h: be.get(g.buf[h]) for h in g.send}

    def take(self, got):
        """The entries read from the other shards into the compact ``z`` on the GPU."""
        with self.on():
            for h, a in got.items():
                a = np.ascontiguousarray(a, np.float64)
                if self.be.sim:
                    self.recv[h][...] = a
                else:
                    self.recv[h].set(a)
                self.stats["bytes_h2d"] += int(a.nbytes)

    def pull(self):
        """``y = pull(z)``; the round's sums: the pull's ``s``, ``e``, ``blocks``, ``Σx``
        (``sd`` 0), and those of the teleport before it (the Google map's ``diff``, ``sy``; the
        affine map's ``diff`` or, on the dual route, ``p1``, and ``q``)."""
        from ....smx.cuda import power as K
        from ....smx.cuda.common import HB
        g, be = self.g, self.be
        with self.on():
            self.acc[0:2] = 0.0
            for gb, verts, grid in g.bins:
                be.launch(K.power_pull_list, grid, HB, gb, verts, g.off, g.src, self.dcoef,
                          self.has, self.zc, self.ddst, self.y, self.acc)
            be.heavy(K.power_pull_heavy, g.hubs, g.off, g.src, self.dcoef, self.has, self.zc,
                     self.ddst, self.y, self.acc)
            a = [float(t) for t in be.get(self.acc)]
        out = {"s": a[0], "e": a[1], "sd": 0.0, "blocks": g.blocks + self.grid}
        if self.told:
            if self.map == "google":
                out.update(diff=a[2], sy=a[3])
                self.sx = a[3]  # the x this pull read is the teleport's y
            else:
                out.update({"p1" if self._zw is not None else "diff": a[2], "q": a[3]})
        self.told = False
        out["sx"] = self.sx
        return out

    def host_x(self):
        """The run's range of ``x`` on the host (a copy)."""
        with self.on():
            return np.array(self.be.get(self.x), np.float64)

    def close(self):
        """The run is over: its arrays' registrations are dropped (the shard's stay)."""
        with self.on():
            self.be.release(("dask-run", id(self)))
