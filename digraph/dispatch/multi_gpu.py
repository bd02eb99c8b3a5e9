"""Several GPUs of one host (issue 6): the graph sharded by vertex ranges, one shard per GPU, with
the replicated vectors exchanged between rounds by peer-to-peer copies or NCCL.

``digraph.run(..., device="cuda:0,1,2,3")`` runs here for ``bsp`` and ``vertex-async``; the path
modes go to the path dispatcher of :mod:`digraph.dispatch.multi` with one
:class:`~digraph.dispatch.gpu_workers.GpuWorker` per GPU.

Why vertex shards.  On one GPU the measured fastest modes are ``bsp`` for linear systems and
``vertex-async`` for min/max and h-index systems (``docs/benchmarks.md``); a round of either reads
each arc at most once and is bandwidth-bound on large graphs, so splitting the arcs over GPUs
divides a round's time, and what crosses between GPUs is one vector slice per GPU and round.
The path dispatcher, whose walks need more rounds and host book-keeping, serves the path modes.

Layout.  The vertices are cut into ``k`` consecutive ranges holding equal numbers of arcs (the
in-arcs for pull systems, the out-arcs for push systems, the undirected adjacency for h-index);
GPU ``g`` keeps the arcs of its range (the offsets rebased and clipped, so the single-GPU kernels
of :mod:`digraph.smx.cuda_kernels` run unchanged on a shard) and a full-length replica of every
vector a kernel reads.  Per round:

* **linear** (PageRank, adsorption, user sums): every GPU writes its range's *sends*
  ``src_scale · δ`` of the frontier (:func:`~digraph.smx.cuda_kernels.linear_frontier`); the
  sends that other GPUs read are *all-gathered*; every GPU then absorbs and pulls its targets in
  one dense pass (:func:`~digraph.smx.cuda_kernels.linear_pull`: one random read per arc, δ kept
  for its own range only).  Each range is renumbered so that the vertices other ranges read come
  first (:func:`shard_layout`): a round all-gathers only those, and a pull's random reads crowd
  into the ranges' heads.  With ``overlap`` (:class:`MultiGpuSettings`), each target's arcs
  from its own range come first in its in-arc list, and a round sums them while the sends of
  the other ranges are exchanged.  The error bound is tracked from the per-GPU block statistics
  (40 bytes each) and certified, as on one GPU, from the residual recomputed on every shard after
  an all-gather of the ``x`` that other ranges read.
* **monotone** (SSSP, user min/max): every GPU pushes its active sources over their out-arcs into
  its replica (atomic min/max); the replicas are then *all-reduced* with the system's min/max; a
  vertex is active next round when its value changed.  ``vertex-async`` pushes against each
  vertex's last sent value (Gauss–Seidel inside a GPU), ``bsp`` from a snapshot (Jacobi).
* **h-index** (k-core): every GPU recomputes the h-index of its frontier; estimates are
  all-gathered and the "neighbour dropped" marks all-reduced with max.

Transport (``exchange=``): ``"p2p"`` — ``cudaMemcpyPeerAsync`` of each range to every other GPU
(peer access enabled where the driver allows it; an all-reduce gathers the other replicas' slices
of a range on its owner, reduces there and all-gathers back); ``"nccl"`` — grouped NCCL
broadcasts (one per range) and ``ncclAllReduce``.  Both are measured by
``benchmarks/bench_multi_gpu.py`` and ``benchmarks/ab_multi_gpu.py``; the defaults are the faster
there: peer copies queued on events for linear rounds (``linear_exchange``), NCCL for the
others (``default_exchange``; both :class:`MultiGpuSettings`).  Under Numba's CUDA
simulator every shard shares one simulated device and the exchange is a host copy with the same
byte counts, so the logic is tested in CI.

Host threads: kernel launches and copies are asynchronous, so one host thread keeps every GPU
busy between the per-round synchronisations; the uploads of the shards run in one host thread per
GPU (:class:`concurrent.futures.ThreadPoolExecutor`).  The host's share is kept small: a linear
run's vectors and prepared launches are kept for the next run on the same graph and GPUs
(``keep_work``), the round kernels are found by tag, and the rounds switch GPUs through CuPy
alone (:meth:`_Shard.switch`).

Settings.  Every tunable is a field of the frozen :class:`MultiGpuSettings` (``solve(...,
settings=)``, default :data:`DEFAULT`), each citing its measurement; nothing here is a module
switch.

Counters, beside the single-GPU ones: ``gpus``, ``exchange`` (transport), ``bytes_between_gpus``,
``gpu_arcs`` (arcs per shard), ``gpu_busy_s`` and ``gpu_idle_share`` per GPU (kernel time measured
with CUDA events against the rounds' wall time; the arc share under the simulator),
``gpu_vertices`` and ``gpu_recuts`` (how often the ranges were re-cut from the kernel times of
earlier runs on the same graph and GPUs: :func:`balanced_ranges`); linear runs add
``gpu_exchange_wait_s``, ``overlapped``, ``time_launch``, ``time_gather`` and
``gpu_work_kept``.
"""

import contextlib
import time
import weakref
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from ..algorithms.base import SumNormalized
from ..errors import InvalidParameterError, NotAvailableError
from . import driver
from .cuda.common import (column_sums_known, contraction_sums, count_dense_round, hb,
                          index_dtype, kernels)
from .cuda.runtime.backend import backend, _gpu_name
from .convergence import checked_contraction, linear_error_bound
from .convergence import ROUNDING_MARGIN, rounding_floor
from .host_pages import prefaulted
from .systems import monotone_arrays, monotone_start, ones_or

__all__ = ["solve", "parse_devices", "shard_ranges", "make_shards", "EXCHANGES", "LAYOUTS",
           "MultiGpuSettings", "DEFAULT"]

EXCHANGES = ("p2p", "nccl")
LAYOUTS = ("out-degree", "id", None)


@dataclass(frozen=True)
class MultiGpuSettings:
    """How the sharded engine splits a graph over GPUs, lays out and exchanges its shards and
    queues its rounds.  Each default is the faster side of the measurement it cites: the tables
    are in docs/benchmarks.md, "Measurements behind the GPU engines' settings" (with their
    commands and machines), taken from the multi-GPU sessions of
    docs/history/benchmarks-lab-notebook.md.  The fields marked *ablation* keep a measured loser
    reachable only for the benchmark or test that compares both sides: pass
    ``dataclasses.replace(DEFAULT, field=...)`` as ``solve(..., settings=)``.

    Attributes
    ----------
    default_exchange : {"p2p", "nccl"}
        The transport of min/max and h-index systems (and of linear ones without ``overlap``).
        With host-synchronised copies NCCL was as fast as peer-to-peer copies or faster for
        R-MAT PageRank (``bench_multi_gpu.py``): on four H200s 386 against 441 ms (2^25), on two
        517 against 541; on four H100s 1,273 against 1,289 ms (2^25) and 688 against 708 (2^24).
        Sharded SSSP, which runs on one GPU by default, was mixed (R-MAT 2^25 on two and four
        H100s: NCCL 401 and 360 ms, peer copies 383 and 462).  Peer-to-peer copies are used where
        CuPy has no NCCL.
    linear_exchange : {"p2p", "nccl"}
        The transport of linear systems (with ``overlap``; without it, ``default_exchange``).
        Peer copies queued on events (copy engines, no multiprocessor taken from the sums they
        overlap) beat NCCL on its own stream: R-MAT 2^25 PageRank on four H100s 348–350 vs
        362–368 ms, on two 518–521 vs 525–530 ms (``benchmarks/ab_multi_gpu.py``, 2026-11-27).
    shard_families : tuple of str
        System families sharded by default.  SSSP lost to one GPU at every size measured (R-MAT
        2^25: 540 ms on two GPUs, 475 ms on one; 4 × H100, ``bench_multi_gpu.py``): a round
        pushes a small frontier, so the all-reduce of the whole vector costs more than the pushes
        it splits; such runs use one GPU unless ``solve(min_arcs_per_gpu=)`` is given.
    min_arcs_per_gpu : int
        A run uses at most ``m // min_arcs_per_gpu`` of the GPUs named (at least one; one GPU runs
        the single-GPU engine; 0 uses every GPU named).  Measured on H100s
        (``bench_multi_gpu.py --probe``): a dense round pulls ~44 G arcs/s on one GPU, and each
        further GPU costs ~0.25 ms of host launches and 0.1–0.35 ms of all-gather per round, so
        splitting pays from some 40 M arcs for two GPUs and 75 M for four (cnr-2000, 3.2 M arcs,
        ran 2.2–4.4× slower on two and four GPUs).
    vertex_cost : int
        A linear shard's range balances arcs + this many arcs per vertex (a round's pull also
        costs per target), before ``balance`` re-cuts it.  Measured on two H100s, R-MAT 2^25
        PageRank: ranges of equal arcs left the GPU with the hubs idle 24% of the rounds (its
        range holds 4.7 M vertices, the other 28.8 M); with 3 the rounds took 519 ms instead of
        615 ms and both GPUs idled about 10%.  Later, on four H200s (``balance_multi_gpu.py``,
        costs 0, 1, 3, 6), no cost was best for both k: four GPUs 352–364 ms at 0 against
        374–377 at 3, two GPUs 480–483 ms at 1 against 493–497 at 3; ``balance`` re-cuts the
        ranges from there, so 3 was kept as the starting point.
    layout : {"out-degree", "id", None}
        How a linear system's shards number their vertices (:func:`shard_layout`):
        ``"out-degree"`` (each range's vertices in the four exchange classes, each class by
        falling out-degree), ``"id"`` (the classes, each in vertex order) or ``None`` (vertex
        order; every round all-gathers whole ranges).  Measured on two H100s, R-MAT 2^25
        PageRank: without renumbering 1,177 ms (30.6 GB between the GPUs) against 823 ms
        (9.0 GB), and 1,280 against 910 ms of rounds on one GPU (the read sources packed into
        fewer cache lines).  The out-degree order within a class was no faster than vertex order
        (612 against 615 ms of rounds on 2^25); it stays the default as the order measured at
        every size, and ``solve(layout=)`` (``bench_multi_gpu.py --layouts``) takes the others.
    pull_blocks_per_sm : int
        Blocks of the pull kernel per multiprocessor (0: a thread per target): each thread
        strides over several targets and the block reduces its round statistics once.  Measured
        on two H100s, R-MAT 2^24 and 2^25 PageRank: the strided blocks gained 3–10% of the
        rounds' time over a thread per target (2^25 on one GPU 910 against 939 ms, on two 615
        against 664 ms).  The count 16 was not compared with others here (one GPU's power
        iteration measured the same limit: :class:`~digraph.dispatch.gpu_power.PowerGpuSettings`).
    balance : bool
        *Ablation* (tests pin the ranges with False).  Sharded linear runs re-cut their ranges
        from the kernel time measured per GPU in earlier runs on the same graph and GPUs
        (:func:`balanced_ranges`).  Measured on four H200s, R-MAT 2^25 PageRank: ranges of equal
        arcs + 3 per vertex left the GPU with the hubs busy 2.3–2.4 ms a round and the others
        1.6–1.8 ms; no fixed vertex cost balanced both two and four GPUs
        (``benchmarks/balance_multi_gpu.py``, costs 0, 1, 3, 6).
    balance_tol : float
        Ranges are re-cut while the busiest GPU's kernel time exceeds the mean by more than this.
        Measured on four H100s, R-MAT 2^25 PageRank, each re-learnt from scratch over 6 runs
        (``ab_multi_gpu.py --relearn 6``): 0.02 gave 313–320 ms, 0.05 308–321 ms, the same
        within the noise.
    balance_recuts : int
        At most this many re-cuts per graph and GPU set; the best ranges measured are kept after.
        A re-cut costs one layout build, 2–4 s on R-MAT 2^25 (4 × H200); one re-cut settled R-MAT
        2^25 on four GPUs.  The bound itself was not varied.
    balance_min_rounds : int
        Runs of fewer rounds teach nothing (their times are mostly set-up).  Not measured.
    keep_work : bool
        *Ablation* (``tests/test_multi_gpu_work.py``, ``ab_multi_gpu.py``).  A sharded linear run
        keeps its per-run device vectors (``x``, ``δ``, the sends, the residual, ``b`` and the
        scales, the round statistics) for the next run on the same graph and GPUs, which refills
        them in place; the launches prepared for them
        (:class:`~digraph.dispatch.cuda.runtime.launch._PreparedLaunch`) stay valid, so that
        run's first round does not marshal its arguments through Numba's dispatcher again (at
        four GPUs, 44 such launches and 76 array registrations a run).  The vectors occupy what
        CuPy's memory pool would keep anyway; they are freed (:func:`drop_work`) when another
        graph, another set of GPUs or another engine runs, or when the graph is collected.
        Measured on R-MAT 2^25, 4 × H100: set-up 19–20 → 13–19 ms, certification 8 → 7 ms, the
        run (with the launches found by tag) 305–307 → 291–297 ms.
    prefault : bool
        *Ablation* (``balance_multi_gpu.py``).  Sharded linear runs fault in the pages of the
        host array for ``x`` on a background thread while the rounds run
        (:mod:`~digraph.dispatch.host_pages`; False: a fresh array at the end).  Measured on
        four and two H200s, R-MAT 2^25 PageRank, interleaved: four GPUs 374–377 ms against
        401–410 without, two 493–497 against 538–541 (``balance_multi_gpu.py``).
    pipeline : bool
        *Ablation* (``profile_multi_gpu.py``, ``tests/test_multi_gpu.py``).  Sharded linear
        rounds run one ahead of the host: round t+1 is queued before round t's statistics are
        read, so no GPU waits for the host to launch (False: every round waits).  Measured on two
        H200s, R-MAT 2^24 PageRank: 293 ms pipelined against 338 ms with prepared launches alone.
    overlap : bool
        *Ablation* (``ab_multi_gpu.py``, ``tests/test_multi_gpu_overlap.py``).  Sharded linear
        rounds exchange the sends while each GPU sums its targets' arcs from its own range (the
        layout puts those arcs first, :func:`shard_layout`); the arcs from other ranges are
        summed once the exchange is done.  NCCL runs on a second, high-priority stream; peer
        copies run on a stream per source GPU, each as soon as its source is written, with no
        host wait.  Each target's sum is then taken in another order than on one GPU: the
        answers differ by rounding.  Measured on four H100s, R-MAT 2^25 PageRank: peer copies
        overlapped 348–350 ms against 458–481 not overlapped; NCCL 362–368 against 406–429.
    comm_priority : int
        Priority of the exchange's stream (lower is higher; clamped to the device's range): its
        kernels get multiprocessors ahead of the local sums queued at the same time.  Measured
        with NCCL overlapped on four H100s, R-MAT 2^25 PageRank: 351–353 ms at the default
        against 373–382 ms at priority 0 (``ab_multi_gpu.py``; on two GPUs the default was not
        timed in the same call).
    """

    default_exchange: str = "nccl"
    linear_exchange: str = "p2p"
    shard_families: tuple = ("linear",)
    min_arcs_per_gpu: int = 32 << 20
    vertex_cost: int = 3
    layout: object = "out-degree"
    pull_blocks_per_sm: int = 16
    balance: bool = True
    balance_tol: float = 0.05
    balance_recuts: int = 3
    balance_min_rounds: int = 8
    keep_work: bool = True
    prefault: bool = True
    pipeline: bool = True
    overlap: bool = True
    comm_priority: int = -5


DEFAULT = MultiGpuSettings()

def parse_devices(device):
    """The list of ``"cuda:N"`` devices named by ``"cuda:0,1,..."`` (several, distinct)."""
    ids = device[5:] if device.startswith("cuda:") else ""
    parts = [p for p in ids.split(",") if p != ""]
    if len(parts) < 2:
        raise InvalidParameterError(f"device {device!r}: several GPUs are named 'cuda:0,1,...'")
    nums = [int(p) for p in parts]
    if len(set(nums)) != len(nums):
        raise InvalidParameterError(f"device {device!r} names a GPU twice")
    return [f"cuda:{i}" for i in nums]


def shard_ranges(offsets, k, vertex_cost=0):
    """Boundaries ``b[0] = 0 <= ... <= b[k] = n`` of ``k`` consecutive vertex ranges holding about
    ``m / k`` arcs each (CSR ``offsets`` of length n + 1), a vertex counting as ``vertex_cost``
    arcs besides its own."""
    offsets = np.asarray(offsets)
    n = offsets.size - 1
    c = int(vertex_cost)
    m = int(offsets[-1]) + c * n
    return _cuts(offsets, c, (np.arange(1, k, dtype=np.int64) * m) // k)


def _cuts(offsets, c, targets):
    """``[0, i_1, ..., i_{k-1}, n]``: ``i_q`` the first vertex with ``offsets[i] + c·i >=
    targets[q]`` (a bisection over all targets at once: no temporary the size of the graph)."""
    n = offsets.size - 1
    targets = np.asarray(targets, np.int64)
    lo = np.zeros(targets.size, np.int64)
    hi = np.full(targets.size, n + 1, np.int64)
    while np.any(lo < hi):
        mid = (lo + hi) // 2
        low = (offsets[np.minimum(mid, n)].astype(np.int64) + c * mid) < targets
        go = lo < hi
        lo = np.where(go & low, mid + 1, lo)
        hi = np.where(go & ~low, mid, hi)
    b = np.concatenate([[0], np.clip(lo, 0, n), [n]]).astype(np.int64)
    return np.maximum.accumulate(b)


def recut_ranges(offsets, bounds, busy, vertex_cost=0):
    """Boundaries re-cut so that each range gets an equal share of the measured kernel time.

    Range ``j`` of ``bounds`` took ``busy[j]`` (seconds a round, say); inside a range that time
    is taken as spread over its vertices in proportion to their weight (arcs + ``vertex_cost``
    per vertex, the weight :func:`shard_ranges` balances).  The cumulative time is then
    piecewise linear in the weight, and the new boundaries are where it crosses ``q / k`` of
    the total, ``q = 1 .. k − 1``.  With measured times equal the boundaries stay (up to
    rounding); a range of zero weight takes none.

    Parameters
    ----------
    offsets : array of int, length n + 1
        CSR offsets of the sharded arcs (in-arcs for linear systems).
    bounds : array of int, length k + 1
        The boundaries the times were measured on.
    busy : array of float, length k
        Kernel time of each range.
    vertex_cost : int
        Arcs a vertex counts as besides its own.

    Returns
    -------
    numpy.ndarray of int64, length k + 1
    """
    offsets = np.asarray(offsets)
    b = np.asarray(bounds, np.int64)
    busy = np.maximum(np.asarray(busy, np.float64), 0.0)
    k = b.size - 1
    if busy.size != k:
        raise InvalidParameterError(f"{busy.size} times for {k} ranges")
    c = int(vertex_cost)
    W = offsets[b].astype(np.int64) + c * b  # weight before each boundary
    w = np.diff(W).astype(np.float64)
    if busy.sum() <= 0 or k == 1:
        return b.copy()
    cum = np.concatenate([[0.0], np.cumsum(busy)])
    t = np.arange(1, k) * (cum[-1] / k)
    j = np.clip(np.searchsorted(cum, t, side="right") - 1, 0, k - 1)
    frac = np.where(busy[j] > 0, (t - cum[j]) / np.where(busy[j] > 0, busy[j], 1.0), 0.0)
    target = W[j] + np.floor(np.clip(frac, 0.0, 1.0) * w[j]).astype(np.int64)
    return _cuts(offsets, c, target)


# ---------------------------------------------------------------------------- shards and exchange


class _Shard:
    """One GPU's range ``[v0, v1)`` (arcs ``[a0, a1)``) and its device arrays."""

    def __init__(self, device, v0, v1, stats):
        self.be = backend(device)
        self.be.stats = stats
        self.v0, self.v1 = int(v0), int(v1)
        self.busy = 0.0
        self.waited = 0.0  # kernel time lost waiting for exchanges (linear rounds)
        self.work = {}  # per-run device vectors, kept for the next run (keep_work)

    def vector(self, name, size, dtype=np.float64):
        """The shard's work vector ``name`` of ``size`` entries: the one kept from the last run
        when it has that size (its values left as they were), else a new one."""
        a = self.work.get(name)
        if a is None or a.size != size or a.dtype != dtype:
            a = self.work[name] = self.be.keep(self.be.xp.empty(size, dtype))
        return self.be.keep(a)

    def switch(self):
        """:meth:`on` for the rounds' queueing: only CuPy's device is made current, which makes
        its primary context the driver's current one, where Numba's launches and its dispatcher
        then go; Numba's own context stack is left alone.  Under cProfile a switch through
        Numba's context stack and CuPy took about 80 µs, and a round at four GPUs makes eight;
        through CuPy alone the host's queueing at four H100s fell from 0.92–0.96 to 0.58–0.60 ms
        a round on R-MAT 2^24 (``ab_multi_gpu.py``, 2026-11-27; docs/benchmarks.md,
        "Measurements behind the GPU engines' settings"): the switch it replaced is gone."""
        be = self.be
        if be.sim:
            return self.on()
        return be.xp.cuda.Device(be.device_id)

    def on(self):
        """The shard's device made current (CuPy and Numba); nothing under the simulator."""
        be = self.be
        if be.sim:
            return contextlib.nullcontext()
        stack = contextlib.ExitStack()
        stack.enter_context(be.cuda.gpus[be.device_id])
        stack.enter_context(be.xp.cuda.Device(be.device_id))
        return stack

    def resident(self, graph, family, build):
        """The shard's graph arrays (a dict built by ``build()`` on first use), kept on the graph
        for later runs as one GPU keeps its CSR/CSC (``graph._cache``)."""
        be = self.be
        key = ("multi-gpu", family, be.device_id, be.sim, self.v0, self.v1)
        d = graph._cache.get(key)
        if d is None:
            d = graph._cache[key] = build()
        return be.keep_all(d)

    def rebased(self, offsets, a0, a1, dtype=np.int64):
        """Full-length offsets of this shard's arcs ``[a0, a1)``: rebased to the shard's arc
        arrays and clipped, so a vertex outside the range has no arcs."""
        return self.be.put(np.clip(np.asarray(offsets, np.int64) - a0, 0, a1 - a0), dtype)


_NCCL = {}


class _Exchange:
    """All-gather (each shard's range into every other replica) and all-reduce (min/max of the
    replicas) between the shards' full-length arrays; counts ``bytes_between_gpus``."""

    def __init__(self, shards, kind, stats):
        self.shards = shards
        self.kind = kind
        self.stats = stats
        self.sim = shards[0].be.sim
        self.comms = None
        if self.sim:
            return
        import cupy
        self.rt = cupy.cuda.runtime
        ids = [s.be.device_id for s in shards]
        if kind == "p2p":
            for s in shards:
                with s.on():
                    for t in shards:
                        if t is not s and self.rt.deviceCanAccessPeer(s.be.device_id,
                                                                      t.be.device_id):
                            try:
                                self.rt.deviceEnablePeerAccess(t.be.device_id)
                            except cupy.cuda.runtime.CUDARuntimeError:
                                pass  # already enabled
        elif kind == "nccl":
            try:
                from cupy.cuda import nccl
            except ImportError:
                raise NotAvailableError("exchange='nccl' needs CuPy built with NCCL") from None
            if not getattr(nccl, "available", True):
                raise NotAvailableError("exchange='nccl': CuPy's NCCL is not available here")
            self.nccl = nccl
            key = tuple(ids)
            if key not in _NCCL:  # a clique per set of devices, created once per process
                _NCCL[key] = nccl.NcclCommunicator.initAll(ids)
            self.comms = _NCCL[key]
        else:
            raise InvalidParameterError(f"exchange must be one of {EXCHANGES}, got {kind!r}")

    def _count(self, arrs, slices):
        item = arrs[0].itemsize
        k = len(self.shards)
        self.stats["bytes_between_gpus"] += int(sum(sl * item for sl in slices) * (k - 1))

    def allgather(self, arrs, counts=None, streams=None):
        """Shard g's range of ``arrs[g]`` copied into every other ``arrs[h]``: the whole range,
        or its first ``counts[g]`` entries.  ``streams`` (NCCL only): one CuPy stream per GPU
        to run the exchange on instead of the default stream; the caller orders it."""
        sh = self.shards
        counts = [s.v1 - s.v0 for s in sh] if counts is None else [int(c) for c in counts]
        if len(sh) == 1:
            return
        self._count(arrs, counts)
        if self.sim:
            for g, s in enumerate(sh):
                for h in range(len(sh)):
                    if h != g:
                        arrs[h][s.v0:s.v0 + counts[g]] = arrs[g][s.v0:s.v0 + counts[g]]
            return
        item = arrs[0].itemsize
        if self.kind == "p2p":
            # a copy runs on its source's stream: every GPU must be done reading the
            # destinations (a pipelined round may still run on them)
            _sync_all(sh)
            for g, s in enumerate(sh):
                nbytes = counts[g] * item
                if nbytes == 0:
                    continue
                with s.on():
                    for h, t in enumerate(sh):
                        if h != g:
                            off = s.v0 * item
                            self.rt.memcpyPeerAsync(arrs[h].data.ptr + off, t.be.device_id,
                                                    arrs[g].data.ptr + off, s.be.device_id,
                                                    nbytes, 0)
            # the copies run on the sources' streams: the destinations' next kernels wait here
            _sync_all(sh)
        else:
            nc = self.nccl
            dt = _nccl_type(nc, arrs[0].dtype)
            # every rank takes the broadcasts in the same order (root 0, 1, ...), each GPU made
            # current once; NCCL's kernels run on the GPUs' streams after their earlier work
            nc.groupStart()
            for h, t in enumerate(sh):
                with t.on():
                    for g, s in enumerate(sh):
                        cnt = counts[g]
                        if cnt:
                            p = arrs[h].data.ptr + s.v0 * item
                            self.comms[h].broadcast(p, p, cnt, dt, g,
                                                    0 if streams is None else streams[h].ptr)
            nc.groupEnd()

    def lanes_into(self, h, arrs, counts, ready, lanes, done):
        """The part of an :meth:`allgather` by peer copies that lands on shard ``h`` (its GPU
        current), queued without a host wait: shard g's first ``counts[g]`` entries are copied
        into ``arrs[h]`` on stream ``lanes[g]`` (on GPU h) once events ``ready[g]`` (the source
        written) and ``ready[h]`` (the destination no longer read) have happened; ``done[g]`` is
        recorded after each copy.  The caller counts the bytes (:meth:`_count`)."""
        sh = self.shards
        t = sh[h]
        item = arrs[0].itemsize
        dst = arrs[h].data.ptr
        for g, s in enumerate(sh):
            if g == h:
                continue
            lane = lanes[g]
            lane.wait_event(ready[g])
            lane.wait_event(ready[h])
            if counts[g]:
                off = s.v0 * item
                self.rt.memcpyPeerAsync(dst + off, t.be.device_id, arrs[g].data.ptr + off,
                                        s.be.device_id, int(counts[g]) * item, lane.ptr)
            done[g].record(lane)

    def replicate(self, arrs):
        """``arrs[0]`` (on the first GPU) copied whole into every other ``arrs[h]``."""
        sh = self.shards
        self.stats["bytes_between_gpus"] += int(arrs[0].nbytes * (len(sh) - 1))
        if self.sim:
            for a in arrs[1:]:
                a[...] = arrs[0]
            return
        with sh[0].on():
            for h, t in enumerate(sh[1:], 1):
                self.rt.memcpyPeerAsync(arrs[h].data.ptr, t.be.device_id, arrs[0].data.ptr,
                                        sh[0].be.device_id, arrs[0].nbytes, 0)
        _sync_all(sh)

    def allreduce(self, arrs, op, count=True):
        """Every ``arrs[h]`` replaced by the elementwise ``op`` ("min", "max" or "sum") of all
        (``count``: add the bytes to ``bytes_between_gpus``; set-up exchanges are not)."""
        sh = self.shards
        n = arrs[0].size
        k = len(sh)
        before = self.stats["bytes_between_gpus"]
        try:
            self._allreduce(arrs, op, sh, n, k)
        finally:
            if not count:
                self.stats["bytes_between_gpus"] = before

    def _allreduce(self, arrs, op, sh, n, k):
        self.stats["bytes_between_gpus"] += int(2 * n * arrs[0].itemsize * (k - 1))
        if self.sim:
            f = {"min": np.minimum, "max": np.maximum, "sum": np.add}[op]
            red = f.reduce(np.stack(arrs), axis=0)
            for a in arrs:
                a[...] = red
            return
        if self.kind == "nccl":
            nc = self.nccl
            dt = _nccl_type(nc, arrs[0].dtype)
            o = {"min": nc.NCCL_MIN, "max": nc.NCCL_MAX, "sum": nc.NCCL_SUM}[op]
            nc.groupStart()
            for h, t in enumerate(sh):
                with t.on():
                    p = arrs[h].data.ptr
                    self.comms[h].allReduce(p, p, n, dt, o, 0)
            nc.groupEnd()
            return
        # p2p: the other replicas' slices of a range gathered on its owner (on the owner's
        # stream, after every GPU's kernels), reduced there, and gathered back
        item = arrs[0].itemsize
        _sync_all(sh)
        for h, t in enumerate(sh):
            cnt = t.v1 - t.v0
            if cnt == 0:
                continue
            with t.on():
                xp = t.be.xp
                stage = xp.empty((k, cnt), arrs[h].dtype)
                for g, s in enumerate(sh):
                    if g != h:
                        self.rt.memcpyPeerAsync(stage[g].data.ptr, t.be.device_id,
                                                arrs[g].data.ptr + t.v0 * item, s.be.device_id,
                                                cnt * item, 0)
                stage[h] = arrs[h][t.v0:t.v1]
                arrs[h][t.v0:t.v1] = (stage.min(axis=0) if op == "min" else
                                      stage.max(axis=0) if op == "max" else stage.sum(axis=0))
        self.stats["bytes_between_gpus"] -= int(n * item * (k - 1))  # counted again below
        self.allgather(arrs)

    def close(self):
        self.comms = None


def _nccl_type(nc, dtype):
    dtype = np.dtype(dtype)
    table = {np.dtype(np.float64): nc.NCCL_FLOAT64, np.dtype(np.int64): nc.NCCL_INT64,
             np.dtype(np.uint8): nc.NCCL_UINT8, np.dtype(np.int32): nc.NCCL_INT32}
    return table[dtype]


class _Timer:
    """Per-GPU kernel time of a round (CUDA events) and the rounds' wall time."""

    def __init__(self, shards, arcs):
        self.shards = shards
        self.arcs = np.asarray(arcs, dtype=np.float64)
        self.wall = 0.0
        self.events = None

    def _record(self):
        """A CUDA event recorded on every GPU's stream now."""
        events = []
        for s in self.shards:
            with s.on():
                e = s.be.xp.cuda.Event()
                e.record()
                events.append(e)
        return events

    def start(self):
        self.t0 = time.perf_counter()
        self.marks = []
        if not self.shards[0].be.sim:
            self.events = True
            self.marks.append(self._record())

    def pause(self):
        """Record the end of a stretch of kernels (an exchange follows)."""
        if self.events is not None:
            self.marks.append(self._record())

    def resume(self):
        """Record the start of the next stretch of kernels."""
        if self.events is not None:
            self.marks.append(self._record())

    def stop_kernels(self):
        """Record the end of each GPU's kernels (before the exchange)."""
        self.pause()

    def finish(self):
        """The round's wall time, and each GPU's time in kernels: the stretches between
        ``start``/``resume`` and the next ``pause``/``stop_kernels``."""
        self.wall += time.perf_counter() - self.t0
        if self.events is not None:
            import cupy
            m = self.marks
            for i, s in enumerate(self.shards):
                with s.on():
                    m[-1][i].synchronize()
                    for a, b in zip(m[0::2], m[1::2]):
                        s.busy += cupy.cuda.get_elapsed_time(a[i], b[i]) / 1e3

    def report(self, stats):
        stats["time_rounds"] = self.wall
        sh = self.shards
        if sh[0].be.sim:  # no clocks in the simulator: the arc share stands in
            share = self.arcs / max(self.arcs.max(), 1.0)
            busy = share * self.wall
        else:
            busy = np.array([s.busy for s in sh])
        stats["gpu_busy_s"] = [float(b) for b in busy]
        if not sh[0].be.sim and any(s.waited for s in sh):
            stats["gpu_exchange_wait_s"] = [float(s.waited) for s in sh]
        stats["gpu_idle_share"] = [float(max(0.0, 1.0 - b / self.wall)) if self.wall else 0.0
                                   for b in busy]


# ---------------------------------------------------------------------------- solve



def gpus_to_use(graph, system, devices, min_arcs_per_gpu=None, settings=None):
    """How many of ``devices`` a sharded run of ``system`` uses: no more GPUs than the graph has
    arcs per ``min_arcs_per_gpu`` (default ``settings.min_arcs_per_gpu``; 0: every GPU named),
    and one for families outside ``settings.shard_families`` unless ``min_arcs_per_gpu`` is given
    (measured: sharded min/max pushes lose to one GPU, docs/benchmarks.md).  ``digraph.run``
    runs the one-GPU engine when this is 1 and the default applies."""
    settings = DEFAULT if settings is None else settings
    per = settings.min_arcs_per_gpu if min_arcs_per_gpu is None else int(min_arcs_per_gpu)
    k = len(devices) if per <= 0 else max(1, min(len(devices), graph.num_arcs // per))
    if system.family not in settings.shard_families and min_arcs_per_gpu is None:
        k = 1
    return k

def solve(graph, system, *, devices, mode, tol, max_iter, stats, exchange=None,
          min_arcs_per_gpu=None, layout=None, divide_by_sum=False, settings=None):
    """Run ``system`` on the GPUs ``devices`` (``["cuda:0", "cuda:1", ...]``) in ``mode``
    (``"bsp"`` or ``"vertex-async"``); returns (host state, converged).

    Parameters
    ----------
    graph : digraph.Graph
    system : LinearSystem, MonotoneSystem or HIndexSystem
    devices : list of str
        One entry per shard; under the CUDA simulator the same device may be named repeatedly.
    mode : {"bsp", "vertex-async"}
        Linear systems run dense Jacobi rounds in both (the measured fastest on one GPU is
        ``bsp``); monotone and h-index systems push Jacobi (``bsp``) or against the last sent
        values (``vertex-async``) inside each GPU.
    exchange : {"p2p", "nccl"}, optional
        Transport between GPUs (default ``settings.linear_exchange`` for linear systems,
        ``settings.default_exchange`` for the others).
    min_arcs_per_gpu : int, optional
        Use no more GPUs than the graph has arcs per this many (default
        ``settings.min_arcs_per_gpu``; 0 uses every GPU named).  With one GPU left it runs as
        one shard; ``digraph.run`` runs the one-GPU engine instead (:func:`gpus_to_use`, the
        simple method it could have used).  Given, families outside ``settings.shard_families``
        are sharded too.
    layout : {"out-degree", "id", "none"}, optional
        How linear shards number their vertices (default ``settings.layout``, see
        :func:`shard_layout`).
    divide_by_sum : bool
        Linear systems: divide ``x`` by its sum on the GPUs before it is copied down, and return
        it as a :class:`~digraph.algorithms.base.SumNormalized` array (for an algorithm whose
        answer is that, :attr:`~digraph.algorithms.base.Algorithm.divides_by_sum`: the host's
        two passes over ``x`` took 18 ms of a 300 ms run on R-MAT 2^25).
    settings : MultiGpuSettings, optional
        Default :data:`DEFAULT`.
    """
    if mode not in ("bsp", "vertex-async"):
        raise InvalidParameterError(f"the sharded multi-GPU engine runs bsp and vertex-async, "
                                    f"not {mode!r}")
    settings = DEFAULT if settings is None else settings
    explicit = exchange is not None
    fam = system.family
    exchange = exchange or (settings.linear_exchange if fam == "linear" and settings.overlap
                            else settings.default_exchange)
    if exchange not in EXCHANGES:
        raise InvalidParameterError(f"exchange must be one of {EXCHANGES}, got {exchange!r}")
    k = gpus_to_use(graph, system, devices, min_arcs_per_gpu, settings)
    stats["gpus_named"] = len(devices)
    devices = list(devices)[:k]
    if divide_by_sum and fam != "linear":
        raise InvalidParameterError("divide_by_sum applies to linear systems")
    if fam == "linear":
        offsets = graph.in_offsets
    elif fam == "monotone":
        offsets = graph.out_offsets
    elif fam == "hindex":
        from .bsp import undirected_adjacency
        und = undirected_adjacency(graph)
        offsets = und[0]
    else:
        raise InvalidParameterError(f"unknown system family {fam!r}")
    cost = settings.vertex_cost if fam == "linear" else 0
    learn = settings.balance and fam == "linear" and k > 1
    balance_key = ("multi-gpu-balance", fam, tuple(devices), cost)
    bounds = (balanced_ranges(graph, balance_key, offsets, k, cost, stats, settings) if learn
              else shard_ranges(offsets, k, cost))
    shards = make_shards(devices, offsets, stats, bounds=bounds)
    if fam == "linear":
        works, stats["gpu_work_kept"] = _kept_work(graph, devices, settings.keep_work)
        for s, w in zip(shards, works):
            s.work = w
    else:
        drop_work()
    be0 = shards[0].be
    stats["gpu"] = "CUDA simulator" if be0.sim else _gpu_name(be0)
    stats["gpus"] = k
    stats["bytes_between_gpus"] = 0
    off = np.asarray(offsets, np.int64)
    stats["gpu_arcs"] = [int(off[s.v1] - off[s.v0]) for s in shards]
    stats["gpu_vertices"] = [s.v1 - s.v0 for s in shards]
    if k == 1 and not explicit:
        exchange = "p2p"  # nothing crosses: no NCCL communicator for one GPU
    try:
        ex = _Exchange(shards, exchange, stats)
    except NotAvailableError:
        if explicit:
            raise
        exchange = "p2p"  # CuPy without NCCL
        ex = _Exchange(shards, exchange, stats)
    stats["exchange"] = "host (simulator)" if be0.sim else exchange
    timer = _Timer(shards, stats["gpu_arcs"])
    try:
        if fam == "linear":
            x, ok = _linear(shards, ex, timer, graph, system, tol, max_iter, stats, layout,
                            divide_by_sum, settings)
        elif fam == "monotone":
            x, ok = _monotone(shards, ex, timer, graph, system, max_iter, stats, mode == "bsp")
        else:
            x, ok = _hindex(shards, ex, timer, graph, und, max_iter, stats, mode == "bsp")
    finally:
        ex.close()
        _retain(shards, settings.keep_work and fam == "linear")
    timer.report(stats)
    # the simulator has no clocks; a process's first run on these GPUs loads the kernels while
    # its rounds are timed, which a GPU's events count as kernel time
    first = (fam, tuple(devices)) not in _RAN
    _RAN.add((fam, tuple(devices)))
    if learn and not be0.sim and not first:
        learn_balance(graph, balance_key, bounds, stats["gpu_busy_s"], stats.get("rounds", 0),
                      settings)
    return x, ok


_RAN = set()  # (family, devices) of the runs of this process


_WORK = {}  # the kept work: {"graph": weakref, "devices": tuple, "shards": [dict per shard]}


def _kept_work(graph, devices, keep=True):
    """(the per-shard work dicts kept by the last sharded linear run on ``graph`` and
    ``devices``, True), or (new ones, False); what was kept for another graph or GPUs is dropped
    first.  ``keep`` (:attr:`MultiGpuSettings.keep_work`): the new ones are kept for the next
    run; False drops what was kept and keeps nothing."""
    devices = tuple(devices)
    ref = _WORK.get("graph")
    if keep and ref is not None and ref() is graph and _WORK["devices"] == devices:
        return _WORK["shards"], True
    drop_work()
    shards = [{} for _ in devices]
    if keep:
        def collected(r):
            if _WORK.get("graph") is r:
                drop_work()
        _WORK.update(graph=weakref.ref(graph, collected), devices=devices, shards=shards)
    return shards, False


def drop_work():
    """Free the device vectors kept by the last sharded linear run
    (:attr:`MultiGpuSettings.keep_work`) and forget the prepared launches of its GPUs."""
    devices = _WORK.get("devices", ())
    _WORK.clear()
    for d in dict.fromkeys(devices):
        try:
            backend(d).release()
        except Exception:  # pragma: no cover - at interpreter exit
            pass


def _arrays(d):
    """The device arrays among a dict's values (lists of them included)."""
    out = []
    for v in d.values():
        for a in (v if isinstance(v, (list, tuple)) else (v,)):
            if hasattr(a, "__cuda_array_interface__"):
                out.append(a)
    return out


def _retain(shards, keep):
    """End of a run: each GPU keeps the shards' work vectors and layouts registered, with the
    launches prepared for them (``keep``), or forgets every array and launch."""
    by = {}
    for s in shards:
        arrs = by.setdefault(id(s.be), (s.be, []))[1]
        if keep:
            arrs += _arrays(s.work) + _arrays(getattr(s, "lay", None) or {})
    for be, arrs in by.values():
        if keep:
            be.retain(arrs)
        else:
            be.release()


def balanced_ranges(graph, key, offsets, k, vertex_cost, stats, settings=None):
    """Shard boundaries for a run: :func:`shard_ranges` on a graph's first run, then re-cut by
    :func:`recut_ranges` from the per-GPU kernel time :func:`learn_balance` kept (cached on the
    graph under ``key``) in the following runs while that time is uneven (by more than
    ``settings.balance_tol``), at most ``settings.balance_recuts`` times
    (:class:`MultiGpuSettings`, default :data:`DEFAULT`).  The first run found even (or the last
    re-cut) settles the ranges for good: from then on the ranges that gave the smallest
    busiest-GPU time, so that a noisy measurement later never costs a new layout (1–4 s on R-MAT
    2^24–2^25).
    ``stats["gpu_recuts"]`` counts the re-cuts made."""
    settings = DEFAULT if settings is None else settings
    st = graph._cache.get(key)
    if st is None:
        bounds = shard_ranges(offsets, k, vertex_cost)
    elif (not st["settled"] and st["recuts"] < settings.balance_recuts
          and _imbalance(st["busy"]) > settings.balance_tol):
        bounds = recut_ranges(offsets, st["bounds"], st["busy"], vertex_cost)
        if np.array_equal(bounds, st["bounds"]):
            st["settled"] = True  # no vertex left to move
        else:
            st["recuts"] += 1
            _forget_ranges(graph, st["bounds"], keep=st["best"][1])
    else:  # even, or the re-cuts used up: settled for good, so noise never re-cuts later
        st["settled"] = True
        bounds = st["best"][1]
        if not np.array_equal(bounds, st["bounds"]):
            _forget_ranges(graph, st["bounds"], keep=bounds)
    stats["gpu_recuts"] = 0 if st is None else st["recuts"]
    return np.asarray(bounds, np.int64)


def learn_balance(graph, key, bounds, busy, rounds, settings=None):
    """Keep the kernel time per round of each range of ``bounds`` for the next run's ranges
    (nothing from a run of fewer than ``settings.balance_min_rounds`` rounds)."""
    settings = DEFAULT if settings is None else settings
    if rounds < settings.balance_min_rounds:
        return
    per = np.asarray(busy, np.float64) / rounds
    bounds = np.asarray(bounds, np.int64)
    st = graph._cache.setdefault(key, {"recuts": 0, "settled": False, "best": (np.inf, bounds)})
    st["bounds"], st["busy"] = bounds, per
    if per.max() < st["best"][0] or np.array_equal(bounds, st["best"][1]):
        _forget_ranges(graph, st["best"][1], keep=bounds)  # the former best's arrays
        st["best"] = (float(per.max()), bounds)


def _imbalance(busy):
    busy = np.asarray(busy, np.float64)
    mean = busy.mean()
    return float(busy.max() / mean - 1.0) if mean > 0 else 0.0


def _forget_ranges(graph, bounds, keep):
    """Drop the device arrays cached for the ranges ``bounds`` (a layout, resident arrays) unless
    they are those of ``keep``: re-cut ranges would otherwise hold GPU memory for good."""
    if np.array_equal(bounds, keep):
        return
    ranges = set(zip(np.asarray(bounds)[:-1].tolist(), np.asarray(bounds)[1:].tolist()))
    kept = set(zip(np.asarray(keep)[:-1].tolist(), np.asarray(keep)[1:].tolist()))
    for key in list(graph._cache):
        if not (isinstance(key, tuple) and key and key[0] in ("multi-gpu", "multi-gpu-layout")):
            continue
        if key[0] == "multi-gpu":
            r = {(key[-2], key[-1])}
        else:
            r = {(t[2], t[3]) for t in key[2]}
        if r & ranges and not r <= kept:
            del graph._cache[key]


def make_shards(devices, offsets, stats, vertex_cost=0, bounds=None):
    """One :class:`_Shard` per device over ranges of equal arc counts of CSR ``offsets`` (a vertex
    counting as ``vertex_cost`` arcs besides its own), or over the boundaries ``bounds``."""
    if bounds is None:
        bounds = shard_ranges(offsets, len(devices), vertex_cost)
    return [_Shard(d, bounds[i], bounds[i + 1], stats) for i, d in enumerate(devices)]


def _parallel(shards, fn):
    """``fn(shard)`` for every shard, one host thread per GPU (in turn under the simulator)."""
    def run(s):
        with s.on():
            return fn(s)
    if shards[0].be.sim or len(shards) == 1:
        return [run(s) for s in shards]
    with ThreadPoolExecutor(len(shards)) as pool:
        return list(pool.map(run, shards))


def _gather_host(shards, arrs):
    """The shards' ranges of ``arrs`` copied into one host array (``bytes_d2h`` counted)."""
    out = np.empty(arrs[0].size, dtype=arrs[0].dtype)
    for s, a in zip(shards, arrs):
        if s.v1 == s.v0:
            continue
        with s.on():
            be = s.be
            if be.sim:
                out[s.v0:s.v1] = a[s.v0:s.v1]
            else:
                be.sync()
                t0 = time.perf_counter()
                a[s.v0:s.v1].get(out=out[s.v0:s.v1])
                be.stats["time_transfer"] += time.perf_counter() - t0
            be.stats["bytes_d2h"] += int((s.v1 - s.v0) * out.itemsize)
    return out


def _heavy_host(graph, kind, offsets):
    """Vertices of degree >= HEAVY in CSR ``offsets`` (cached on the graph)."""
    from ..smx.cuda_kernels import HEAVY
    key = ("multi-gpu-heavy", kind, HEAVY)
    if key not in graph._cache:
        graph._cache[key] = np.flatnonzero(np.diff(offsets) >= HEAVY)
    return graph._cache[key]


def _sync_all(shards):
    for s in shards:
        with s.on():
            s.be.sync()


# ---------------------------------------------------------------------------- linear


def shard_layout(shards, graph, order=None, split=None, settings=None):
    """Each linear shard's in-arcs with its range renumbered (cached on the graph).

    A shard's range ``[v0, v1)`` keeps its vertices, in a new order by exchange class:

    0. read by another shard's pull (an out-arc leaves the range) and with in-arcs;
    1. read by another shard and without in-arcs: its δ is 0 from the second round on;
    2. read only inside the range;
    3. never read (out-degree 0).

    A round all-gathers only the first class of every range (the first two in the first two
    rounds, while the sends of class 1 are not yet 0), and a pull's reads crowd into the ranges'
    heads.  Renumbering inside the ranges keeps each range's arcs and each vertex's in-arc order,
    so the sums per vertex are unchanged.

    ``order``: default ``settings.layout`` (:class:`MultiGpuSettings`, default :data:`DEFAULT`).
    ``split`` (default ``settings.overlap`` when there are several shards): each vertex's in-arcs
    from its own range are moved ahead of the others, keeping their order within each part, so
    a round can sum them while the other ranges' sends are exchanged
    (:func:`~digraph.smx.cuda_kernels.linear_pull_local`).

    Returns one dict per shard: ``off`` (full-length CSC offsets rebased to the shard's arcs),
    ``src`` (new numbers), ``heavy``, ``out_degree`` (new numbers, own range), ``perm`` (new
    position in the range → old), ``counts`` = (class 0, classes 0–1, classes 0–2) and, when
    split, ``mid`` (where each target's arcs from other ranges begin, indexed ``v - v0``),
    ``heavy_local`` and ``heavy_rest`` (the vertices with >= HEAVY arcs in each part)."""
    settings = DEFAULT if settings is None else settings
    order = settings.layout if order is None else order
    order = None if order == "none" else order
    if order not in LAYOUTS:
        raise InvalidParameterError(f"layout must be one of {LAYOUTS}, got {order!r}")
    split = (settings.overlap if split is None else bool(split)) and len(shards) > 1
    key = ("multi-gpu-layout", order,
           tuple((s.be.device_id, s.be.sim, s.v0, s.v1) for s in shards), split)
    lay = graph._cache.get(key)
    if lay is None:
        lay = graph._cache[key] = _build_layout(shards, graph, order, split)
    for s, d in zip(shards, lay):
        s.lay = s.be.keep_all(d)
    return lay


def _build_layout(shards, graph, order, split):
    from ..smx.cuda_kernels import HEAVY
    n, m = graph.num_vertices, graph.num_arcs
    k = len(shards)
    it = index_dtype(max(n, m))
    in_off = np.asarray(graph.in_offsets, np.int64)
    in_src = np.asarray(graph.in_sources)
    outdeg = np.asarray(graph.out_degree, np.int64)

    def sources(s):  # the range's in-arc sources (old numbers) and which are read from outside
        be, xp = s.be, s.be.xp
        a0, a1 = int(in_off[s.v0]), int(in_off[s.v1])
        src = be.put(in_src[a0:a1], it)
        mark = None
        if k > 1:
            mk = xp.zeros(n, np.uint8)
            mk[src[(src < s.v0) | (src >= s.v1)]] = 1
            mark = be.get(mk)
        return src, mark
    got = _parallel(shards, sources)
    remote = np.zeros(n, bool)
    for _, mk in got:
        if mk is not None:
            remote |= mk.view(bool)
    indeg = np.diff(in_off)
    cls = np.where(outdeg == 0, 3, np.where(~remote, 2, np.where(indeg > 0, 0, 1))).astype(np.int8)

    def permute(s):  # new position in the range -> old (sorted by class, then the order's key)
        be, xp = s.be, s.be.xp
        ng = s.v1 - s.v0
        c = cls[s.v0:s.v1]
        counts = tuple(int(v) for v in np.cumsum(np.bincount(c, minlength=4))[:3])
        if order is None:
            return xp.arange(ng, dtype=np.int64), (ng, ng, ng)
        i = xp.arange(ng, dtype=np.int64)
        key = be.put(c, np.int64)
        if order == "out-degree" and ng:
            od = outdeg[s.v0:s.v1]
            top = int(od.max())
            key = (key * (top + 1) + (top - be.put(od))) * ng + i
        else:
            key = key * ng + i
        return xp.argsort(key), counts
    perms = _parallel(shards, permute)
    new_of_old = np.empty(n, it)
    for s, (perm, _) in zip(shards, perms):
        p = perm if s.be.sim else perm.get()
        new_of_old[s.v0 + p] = np.arange(s.v0, s.v1, dtype=it)

    def build(s, src, perm_counts):
        be, xp = s.be, s.be.xp
        perm, counts = perm_counts
        v0, v1 = s.v0, s.v1
        a1 = int(in_off[v1] - in_off[v0])
        off_new, idx, mid = _range_arcs(s, in_off, src, perm, split)
        if order is not None:
            src = be.put(new_of_old, it)[src][idx]
        elif split:  # idx is the identity otherwise
            src = src[idx]
        off = xp.empty(n + 1, np.int64)
        off[:v0] = 0
        off[v0:v1 + 1] = off_new
        off[v1 + 1:] = a1
        deg = off_new[1:] - off_new[:-1]
        od = xp.zeros(n, np.int64)
        od[v0:v1] = be.put(outdeg[v0:v1])[perm]
        d = {"off": off, "src": src.astype(it, copy=False),
             "heavy": (xp.flatnonzero(deg >= HEAVY) + v0).astype(np.int64),
             "out_degree": od, "perm": perm.astype(it), "counts": counts}
        if split:
            head = off_new[:-1]
            d["mid"] = mid
            d["heavy_local"] = (xp.flatnonzero(mid - head >= HEAVY) + v0).astype(np.int64)
            d["heavy_rest"] = (xp.flatnonzero(off_new[1:] - mid >= HEAVY) + v0).astype(np.int64)
        return d
    lay = [None] * k
    for j, s in enumerate(shards):  # one at a time: the arc index takes 8 bytes an arc
        with s.on():
            lay[j] = build(s, got[j][0], perms[j])
            s.be.sync()
    return lay


def _range_arcs(s, in_off, src_old, perm, split):
    """(range-local CSC offsets in the new order, old arc position of each new arc position,
    ``mid`` or None) of shard ``s``'s range: rows taken in the order ``perm``, and with ``split``
    each row's arcs from the range itself (``src_old``, the range's in-arc sources in old
    numbers, on the device) ahead of the others."""
    xp = s.be.xp
    a0, a1 = int(in_off[s.v0]), int(in_off[s.v1])
    off_loc = s.be.put(in_off[s.v0:s.v1 + 1] - a0)
    off_new, idx = _arc_order(xp, off_loc, perm, a1 - a0)
    if not split:
        return off_new, idx, None
    own = ((src_old >= s.v0) & (src_old < s.v1))[idx]
    mid, first = _own_first(xp, off_new, own)
    return off_new, idx[first], mid


def _own_first(xp, off, own):
    """(``mid``, order) that puts the arcs flagged ``own`` first in each row of the CSC offsets
    ``off``, both parts in their order: ``order`` maps new arc positions to old ones, and row r's
    other arcs begin at ``mid[r]``."""
    arcs = own.size
    c = xp.zeros(arcs + 1, np.int64)
    xp.cumsum(own.astype(np.int64), out=c[1:])
    start = off[:-1]
    mid = start + (c[off[1:]] - c[start])
    p = xp.arange(arcs, dtype=np.int64)
    row = xp.searchsorted(off[1:], p, side="right")
    before = c[:-1] - c[start][row]  # own arcs ahead of p in its row
    pos = xp.where(own, start[row] + before, mid[row] + (p - start[row] - before))
    order = xp.empty(arcs, np.int64)
    order[pos] = p
    return mid, order


def _arc_order(xp, off_loc, perm, arcs):
    """(new range-local offsets, old arc position of each new arc position) of a range whose
    rows are taken in the order ``perm`` (new → old)."""
    deg = (off_loc[1:] - off_loc[:-1])[perm]
    off_new = xp.zeros(perm.size + 1, np.int64)
    xp.cumsum(deg, out=off_new[1:])
    p = xp.arange(arcs, dtype=np.int64)
    row = xp.searchsorted(off_new[1:], p, side="right")
    idx = off_loc[:-1][perm][row] + (p - off_new[row])
    return off_new, idx


def linear_shards(shards, graph, sys, ex=None, order=None, split=None, settings=None):
    """Upload a linear system's shards in their :func:`shard_layout` (``x = 0``, ``δ = b``);
    returns whether arcs carry factors.  Each GPU uploads its own range of the vertex vectors
    (the uploads run in parallel over the GPUs' own links) and renumbers it on the device; the
    source factors read from other ranges are then all-gathered (``ex``).  ``order``, ``split``
    and ``settings``: as :func:`shard_layout` takes them."""
    n, m = graph.num_vertices, graph.num_arcs
    has = sys.arc_scale is not None
    shard_layout(shards, graph, order, split, settings)
    in_off = np.asarray(graph.in_offsets, np.int64)
    in_coef = ones_or(sys.arc_scale, m)[graph.in_arcs] if has else None
    # a vector with a recipe (LinearSystem.b_constant, .src_degree_scale) is made on the GPUs
    # and never read on the host; the others are uploaded range by range (None: ones)
    made = {"b": getattr(sys, "b_constant", None),
            "src_scale": getattr(sys, "src_degree_scale", None)}
    vecs = {}
    for name in ("src_scale", "dst_scale", "b"):
        if made.get(name) is not None:
            vecs[name] = ("made", float(made[name]))
        else:
            v = getattr(sys, name)
            vecs[name] = None if v is None else ones_or(v, n)

    def upload(s):
        be, xp = s.be, s.be.xp
        d = s.lay
        s.off, s.src, s.heavy, s.out_degree = d["off"], d["src"], d["heavy"], d["out_degree"]
        s.perm = d["perm"]
        s.n_send, s.n_send_first, s.n_read = d["counts"]
        s.split = "mid" in d
        s.part = s.vector("part", max(s.v1 - s.v0, 1))
        s.part.fill(0.0)
        if s.split:
            s.mid, s.heavy_local, s.heavy_rest = d["mid"], d["heavy_local"], d["heavy_rest"]
        else:  # placeholders: the kernels take them and do not read them
            s.mid = s.heavy_local = s.heavy_rest = s.vector("placeholder", 1, np.int64)
        v0, v1 = s.v0, s.v1
        if has:
            a0, a1 = int(in_off[v0]), int(in_off[v1])
            src_old = be.put(graph.in_sources[a0:a1]) if s.split else None
            idx = _range_arcs(s, in_off, src_old, s.perm, s.split)[1]
            s.coef = s.vector("coef", a1 - a0)
            s.coef[...] = be.put(in_coef[a0:a1])[idx]
        else:
            s.coef = s.vector("no_coef", 1)
        for name, v in vecs.items():
            a = s.vector(name, n)  # refilled in place: kept launches read the same arrays
            if v is None:
                a.fill(1.0)
            elif isinstance(v, tuple):
                a.fill(0.0)
                if name == "b":
                    a[v0:v1] = v[1]
                else:  # scale / out-degree, as the host's scaled_inverse makes it
                    od = s.out_degree[v0:v1]
                    a[v0:v1] = xp.where(od > 0, v[1] / xp.maximum(od, 1), 0.0)
            else:
                a.fill(0.0)
                a[v0:v1] = be.put(v[v0:v1])[s.perm]
            setattr(s, name, a)
        s.x = s.vector("x", n)
        s.x.fill(0.0)
        s.delta = s.vector("delta", n)
        s.delta[...] = s.b
        s.send = s.vector("send", n)
        s.send.fill(0.0)
        s.r = s.vector("r", n)
        s.r.fill(0.0)
        babs = xp.abs(s.b[v0:v1])
        return be.scalars(babs.sum(), babs.max()) if v1 > v0 else (0.0, 0.0)
    norms = _parallel(shards, upload)
    if ex is not None and vecs["src_scale"] is not None:
        ex.allgather([s.src_scale for s in shards], [s.n_send_first for s in shards])
    s_norms = np.array(norms).reshape(-1, 2)
    return has, float(s_norms[:, 0].sum()), float(s_norms[:, 1].max())


def linear_round(s, has, theta, stage, scan=None, settings=None):
    """Queue one dense round's ``stage`` on shard ``s`` (its device current): ``"send"`` the
    frontier's sends of its range (to be all-gathered); ``"local"`` (split layouts only) sum
    each target's arcs from its own range, which read no exchanged send; ``"pull"`` absorb and
    pull its range (the arcs from other ranges only, when split), statistics into ``scan``
    (five float64 on the shard's GPU).  The sums' grid: ``settings.pull_blocks_per_sm``
    (:class:`MultiGpuSettings`, default :data:`DEFAULT`)."""
    K = kernels()
    be = s.be
    tag = id(s.work)  # a tag per shard and stage: the launches find their prepared selves
    if stage == "send" and s.n_read:
        be.launch(K.linear_frontier, be.grid(s.n_read), be.block, s.v0, s.v0 + s.n_read, s.delta,
                  s.src_scale, theta, s.send, tag=(tag, 0))
        return
    per_sm = (DEFAULT if settings is None else settings).pull_blocks_per_sm
    blocks = be.grid_hb(s.v1 - s.v0)
    if per_sm:
        blocks = min(blocks, per_sm * be.sms)
    if stage == "local" and s.split:
        args = (s.off, s.mid, s.src, s.coef, has, s.send, s.part)
        be.launch(K.linear_pull_local, blocks, hb(), s.v0, s.v1, *args, tag=(tag, 1))
        be.heavy(K.linear_pull_local_heavy, s.heavy_local, s.v0, *args, tag=(tag, 2))
    if stage == "pull":
        scan.fill(0.0)
        rest = (s.off, s.mid, s.part, s.split, s.src, s.coef, has, s.send, s.dst_scale, s.delta,
                s.x, theta, s.out_degree, scan)
        tag = (tag, 3, id(scan))
        be.launch(K.linear_pull, blocks, hb(), s.v0, s.v1, *rest, tag=tag)
        be.heavy(K.linear_pull_heavy, s.heavy_rest if s.split else s.heavy, s.v0, *rest,
                 tag=tag + (1,))


def _comm_stream(xp, priority=None):
    """A non-blocking CuPy stream for the exchange, of ``priority`` (default
    :attr:`MultiGpuSettings.comm_priority` of :data:`DEFAULT`)."""
    priority = DEFAULT.comm_priority if priority is None else priority
    try:
        return xp.cuda.Stream(non_blocking=True, priority=priority)
    except TypeError:  # a CuPy without stream priorities
        return xp.cuda.Stream(non_blocking=True)


class _Rounds:
    """Dense rounds on every shard, queued one ahead of the host with ``settings.pipeline``
    (:class:`MultiGpuSettings`, default :data:`DEFAULT`).

    A round launches each shard's sends, the all-gather and each shard's sums of its own-range
    arcs (split layouts: at the same time with ``settings.overlap``, the all-gather on a stream
    of its own, of ``settings.comm_priority``), then each shard's pull with its statistics
    written to one of two scan slots, copied to pinned host memory and followed by an event.
    :meth:`launch` queues a round; :meth:`read` waits for the oldest round in flight and returns
    its summed statistics.  Round t+1 therefore uses the threshold θ computed from round t − 1's
    Σx (never larger than the current one for a non-negative answer, so the unsent mass only gets
    smaller), and a run stops one round after the bound is met, with the extra round's
    absorption kept.  Per-GPU kernel time comes from events around each GPU's kernels (the time
    its pull waited for the exchange is counted apart); the wall time runs from the first launch
    to the last read of a stretch."""

    EVENTS = 7  # send start, send end, local end, pull start, pull end, copy end, exchange end

    def __init__(self, shards, ex, has, timer, settings=None):
        self.shards, self.ex, self.has, self.timer = shards, ex, has, timer
        self.settings = settings = DEFAULT if settings is None else settings
        self.sim = shards[0].be.sim
        self.overlap = (settings.overlap and not self.sim and len(shards) > 1 and
                        all(s.split for s in shards))
        self.lanes = self.overlap and ex.kind == "p2p"
        self.flight = []  # rounds queued and not read: (slot, per-shard events)
        self.slot = 0
        self.t_open = None
        self.host = 0.0  # host time spent queueing rounds
        for s in shards:
            with s.on():
                xp = s.be.xp
                s.scans = [s.vector(f"scan{i}", 5) for i in range(2)]
                for a in s.scans:
                    a.fill(0.0)
                if self.sim:
                    s.pinned = [None, None]
                    s.events = [[None] * self.EVENTS for _ in range(2)]
                else:
                    import cupyx
                    s.pinned = [cupyx.empty_pinned(5, np.float64) for _ in range(2)]
                    # reused: a slot's round has been read before the slot is queued again
                    s.events = [[xp.cuda.Event() for _ in range(self.EVENTS)] for _ in range(2)]
                    prio = settings.comm_priority
                    s.comm = _comm_stream(xp, prio) if self.overlap else None
                    if self.lanes:  # a stream per source GPU; done[slot][g]: its copy ended
                        s.lanes = [_comm_stream(xp, prio) for _ in shards]
                        s.done = [[xp.cuda.Event(disable_timing=True) for _ in shards]
                                  for _ in range(2)]

    def launch(self, theta, wide):
        t0 = time.perf_counter()
        if not self.flight:
            self.t_open = t0
        sh, slot, sim, has, cfg = self.shards, self.slot, self.sim, self.has, self.settings
        marks = [s.events[slot] for s in sh]
        lanes = self.lanes
        for h, (s, ev) in enumerate(zip(sh, marks)):
            with s.switch():
                if lanes and self.flight:  # the last round's copies out of this range are done
                    null = s.be.xp.cuda.Stream.null
                    for g, t in enumerate(sh):
                        if g != h:
                            null.wait_event(t.done[slot ^ 1][h])
                sim or ev[0].record()
                linear_round(s, has, theta, "send", settings=cfg)
                if not sim:
                    ev[1].record()
                    if self.overlap and not lanes:
                        s.comm.wait_event(ev[1])
                if not self.overlap:
                    linear_round(s, has, theta, "local", settings=cfg)
                    sim or ev[2].record()
        counts = [s.n_send_first if wide else s.n_send for s in sh]
        sends = [s.send for s in sh]
        if lanes:  # the copies into each GPU are queued below, with its sums
            self.ex._count(sends, counts)
            ready = [ev[1] for ev in marks]
        else:
            self.ex.allgather(sends, counts, [s.comm for s in sh] if self.overlap else None)
        for h, (s, ev) in enumerate(zip(sh, marks)):
            with s.switch():
                if self.overlap:
                    if not lanes:
                        ev[6].record(s.comm)
                    linear_round(s, has, theta, "local", settings=cfg)
                    ev[2].record()
                    if lanes:
                        self.ex.lanes_into(h, sends, counts, ready, s.lanes, s.done[slot])
                    null = s.be.xp.cuda.Stream.null
                    for g in range(len(sh)) if lanes else ():
                        if g != h:
                            null.wait_event(s.done[slot][g])
                    if not lanes:
                        null.wait_event(ev[6])
                sim or ev[3].record()
                linear_round(s, has, theta, "pull", s.scans[slot], cfg)
                if sim:
                    s.pinned[slot] = np.array(s.scans[slot])
                else:
                    ev[4].record()
                    s.scans[slot].get(out=s.pinned[slot], blocking=False)
                    ev[5].record()
        self.flight.append((slot, marks))
        self.slot ^= 1
        self.host += time.perf_counter() - t0
        if not self.settings.pipeline:
            return self.read()
        return None

    def read(self):
        """Statistics (‖δ‖₁, ‖δ‖∞, Σx, absorbed arcs) of the oldest round in flight, its kernel
        times added to each shard's busy time; None when no round is in flight."""
        if not self.flight:
            return None
        slot, marks = self.flight.pop(0)
        rows = []
        for s, ev in zip(self.shards, marks):
            if not self.sim:
                import cupy
                ms = cupy.cuda.get_elapsed_time
                ev[5].synchronize()
                s.busy += (ms(ev[0], ev[2]) + ms(ev[3], ev[4])) / 1e3
                s.waited += ms(ev[2], ev[3]) / 1e3
            rows.append(np.array(s.pinned[slot]))
        if not self.flight:
            self.timer.wall += time.perf_counter() - self.t_open
        sc = np.array(rows)
        return float(sc[:, 0].sum()), float(sc[:, 1].max()), float(sc[:, 2].sum()), \
            float(sc[:, 3].sum())

    def drain(self):
        """Read every round in flight; the statistics of the last (None if none)."""
        got = None
        while self.flight:
            got = self.read()
        return got


class _ShardedRounds:
    """The sharded linear rounds for :func:`digraph.dispatch.driver.linear`: a step launches a
    round on every GPU (:class:`_Rounds`, one round ahead of the host with ``pipeline``) and
    takes in the statistics of the oldest one in flight, which a scan reports; a certificate
    first drains the rounds in flight, so the state certified is the state left."""

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


def _linear(shards, ex, timer, graph, sys, tol, max_iter, stats, layout=None,
            divide_by_sum=False, settings=None):
    settings = DEFAULT if settings is None else settings
    K = kernels()
    HB = hb()
    n = graph.num_vertices
    t0 = time.perf_counter()
    host = prefaulted(n) if settings.prefault and not shards[0].be.sim else None
    has, bsum, bmax = linear_shards(shards, graph, sys, ex, layout, settings=settings)
    gammas = _contraction(shards, ex, sys, has, graph.num_arcs)
    rounds = _Rounds(shards, ex, has, timer, settings)
    _sync_all(shards)
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
    :class:`~digraph.dispatch.host_pages.Prefaulted` array) when given."""
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
    _parallel(shards, fetch)
    return out


def _contraction(shards, ex, sys, has, m):
    """γ1, γ∞ summed on the GPUs: each shard's column-sum contributions all-reduced (or the
    column sums taken from the out-degrees of each range, :func:`~digraph.dispatch.gpu.
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

# ---------------------------------------------------------------------------- monotone


def _monotone(shards, ex, timer, graph, sys, max_iter, stats, jacobi):
    K = kernels()
    n, m = graph.num_vertices, graph.num_arcs
    op, combine, has, value = monotone_arrays(graph, sys)
    x0, active0 = monotone_start(sys, n)
    identity = np.inf if combine == 0 else -np.inf
    it = index_dtype(max(n, m))
    out_off = np.asarray(graph.out_offsets, np.int64)
    heavy_all = _heavy_host(graph, "out", out_off)
    sent0 = np.where(active0, identity, x0)

    def upload(s):
        be, xp = s.be, s.be.xp
        a0, a1 = int(out_off[s.v0]), int(out_off[s.v1])
        d = s.resident(graph, "out", lambda: {
            "off": s.rebased(out_off, a0, a1),
            "tgt": be.put(np.asarray(graph.out_targets)[a0:a1], it),
            "heavy": be.put(heavy_all[(heavy_all >= s.v0) & (heavy_all < s.v1)], np.int32),
            "out_degree": be.put(graph.out_degree, np.int64)})
        s.off, s.tgt, s.heavy, s.out_degree = d["off"], d["tgt"], d["heavy"], d["out_degree"]
        s.val = be.put(np.asarray(value)[a0:a1] if has else value)
        s.x = be.put(x0)
        s.xs = be.keep(xp.empty(n, np.float64))
        s.mark = be.keep(xp.zeros(n, np.uint8))
        s.active = be.put(active0, np.uint8)
        s.sent = be.put(sent0)
    _parallel(shards, upload)
    reduce_op = "min" if combine == 0 else "max"
    seen = {}

    def active():
        fronts, nf, vol = [], 0, 0
        for s in shards:
            with s.on():
                xp = s.be.xp
                rng = s.active[s.v0:s.v1] if jacobi else s.x[s.v0:s.v1] != s.sent[s.v0:s.v1]
                f = xp.flatnonzero(rng).astype(np.int64) + s.v0
                c, v = s.be.scalars(f.size, s.out_degree[f].sum() if f.size else 0)
                fronts.append(f)
                nf += int(c)
                vol += int(v)
        seen.update(fronts=fronts, nf=nf, vol=vol)
        return nf

    def step():
        fronts, nf, vol = seen["fronts"], seen["nf"], seen["vol"]
        timer.start()
        for s, f in zip(shards, fronts):
            with s.on():
                be = s.be
                s.xs[...] = s.x
                if jacobi:
                    s.mark[...] = 0
                    args = (s.xs, s.off, s.tgt, s.val, has, op, combine, s.x, s.mark)
                    if f.size:
                        be.launch(K.monotone_push, be.grid(f.size), be.block, f, *args)
                    be.heavy(K.monotone_push_heavy, s.heavy, s.active, *args)
                else:
                    args = (s.off, s.tgt, s.val, has, op, combine, s.x, s.sent)
                    if f.size:
                        be.launch(K.monotone_async_push, be.grid(f.size), be.block, f, *args)
                    be.heavy(K.monotone_async_push_heavy, s.heavy, *args)
        timer.stop_kernels()
        ex.allreduce([s.x for s in shards], reduce_op)
        changed = 0
        for s in shards:
            with s.on():
                if jacobi:  # active next round: the range's values that changed this round
                    s.active[...] = 0
                    s.active[s.v0:s.v1] = s.x[s.v0:s.v1] != s.xs[s.v0:s.v1]
                    changed += int(s.be.scalars(s.active[s.v0:s.v1].sum())[0])
        timer.finish()
        stats["vertex_updates"] += changed if jacobi else nf
        stats["arc_updates"] += vol
        stats["sparse_rounds"] += 1

    converged = driver.worklist(driver.Rounds(active, step), max_iter=max_iter, stats=stats)
    return _gather_host(shards, [s.x for s in shards]), converged


# ---------------------------------------------------------------------------- h-index


def _hindex(shards, ex, timer, graph, und, max_iter, stats, jacobi):
    K = kernels()
    from ..smx.cuda_kernels import HEAVY
    off_h, nbr_h = und
    n = graph.num_vertices
    deg = np.diff(off_h)
    it = index_dtype(max(n, nbr_h.size))
    heavy_all = np.flatnonzero(deg >= HEAVY)

    def upload(s):
        be, xp = s.be, s.be.xp
        a0, a1 = int(off_h[s.v0]), int(off_h[s.v1])
        d = s.resident(graph, "undirected", lambda: {
            "off": s.rebased(off_h, a0, a1), "nbr": be.put(nbr_h[a0:a1], it),
            "heavy": be.put(heavy_all[(heavy_all >= s.v0) & (heavy_all < s.v1)], np.int32)})
        s.off, s.nbr, s.heavy = d["off"], d["nbr"], d["heavy"]
        s.est = be.put(deg, np.int64)
        s.deg = be.put(deg, np.int64)
        s.spare = be.keep(s.est.copy())
        s.infront = be.keep(xp.ones(n, np.uint8))
        s.mark = be.keep(xp.zeros(n, np.uint8))
        s.front = xp.arange(s.v0, s.v1, dtype=np.int64)
    _parallel(shards, upload)

    def active():
        return sum(int(s.front.size) for s in shards)

    def step():
        nf = active()
        timer.start()
        vol = 0
        for s in shards:
            with s.on():
                be = s.be
                s.mark[...] = 0
                if jacobi:
                    s.spare[...] = s.est
                write = s.spare if jacobi else s.est
                if s.front.size:
                    be.launch(K.hindex_round, be.grid(s.front.size), be.block, s.front, s.off,
                              s.nbr, s.est, write, s.mark)
                    vol += int(be.scalars(s.deg[s.front].sum())[0])
                be.heavy(K.hindex_round_heavy, s.heavy, s.infront, s.off, s.nbr, s.est, write,
                         s.mark)
                if jacobi:
                    s.est, s.spare = s.spare, s.est
        timer.stop_kernels()
        ex.allgather([s.est for s in shards])
        ex.allreduce([s.mark for s in shards], "max")
        for s in shards:
            with s.on():
                xp = s.be.xp
                s.front = xp.flatnonzero(s.mark[s.v0:s.v1]).astype(np.int64) + s.v0
                s.infront, s.mark = s.mark, s.infront
        timer.finish()
        stats["vertex_updates"] += nf
        stats["arc_updates"] += vol
        stats["dense_rounds" if nf == n else "sparse_rounds"] += 1

    converged = driver.worklist(driver.Rounds(active, step), max_iter=max_iter, stats=stats)
    return _gather_host(shards, [s.est for s in shards]), converged
