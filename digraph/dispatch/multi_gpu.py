"""Several GPUs of one host (issue 6): the graph sharded by vertex ranges, one shard per GPU, with
the replicated vectors exchanged between rounds by peer-to-peer copies or NCCL.

``digraph.run(..., device="cuda:0,1,2,3")`` runs here for ``bsp`` and ``vertex-async``; the path
modes go to the path dispatcher of :mod:`digraph.dispatch.multi` with one
:class:`~digraph.dispatch.gpu_workers.GpuWorker` per GPU.

Why vertex shards.  On one GPU the measured fastest modes are ``bsp`` for linear systems and
``vertex-async`` for min/max and h-index systems (``docs/history/benchmarks-notebook.md``); a round of either reads
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
  first (:func:`~digraph.dispatch.cuda.sharded.layout.shard_layout`): a round all-gathers only
  those, and a pull's random reads crowd
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
alone (:meth:`~digraph.dispatch.cuda.sharded.shards._Shard.switch`).

Settings.  Every tunable is a field of the frozen :class:`MultiGpuSettings` (``solve(...,
settings=)``, default :data:`DEFAULT`), each citing its measurement; nothing here is a module
switch.

Counters, beside the single-GPU ones: ``gpus``, ``exchange`` (transport), ``bytes_between_gpus``,
``gpu_arcs`` (arcs per shard), ``gpu_busy_s`` and ``gpu_idle_share`` per GPU (kernel time measured
with CUDA events against the rounds' wall time; the arc share under the simulator),
``gpu_vertices`` and ``gpu_recuts`` (how often the ranges were re-cut from the kernel times of
earlier runs on the same graph and GPUs:
:func:`~digraph.dispatch.cuda.sharded.ranges.balanced_ranges`); linear runs add
``gpu_exchange_wait_s``, ``overlapped``, ``time_launch``, ``time_gather`` and
``gpu_work_kept``.

Where the code is (issue 18, item 5): this module keeps the settings (:class:`MultiGpuSettings`,
:data:`DEFAULT`), :func:`parse_devices`, :func:`gpus_to_use` and :func:`solve`; the engine's
parts are in ``digraph/dispatch/cuda/sharded/``: :mod:`~.cuda.sharded.ranges` (the vertex ranges
and their balance, pure numpy), :mod:`~.cuda.sharded.shards` (the shards, the helpers over them
and the work kept between runs), :mod:`~.cuda.sharded.exchange` (the transports),
:mod:`~.cuda.sharded.timer`, :mod:`~.cuda.sharded.layout` (a linear system's layout and upload),
:mod:`~.cuda.sharded.rounds` (the linear round pipeline), :mod:`~.cuda.sharded.linear` and
:mod:`~.cuda.sharded.monotone` (the engines).  Their names are re-exported here
(``multi_gpu.shard_ranges``, ``multi_gpu._Exchange``, ``multi_gpu._WORK``, ...); a function of
those modules called without ``settings`` reads ``multi_gpu.DEFAULT`` at the call, so replacing
it here still reaches them.
"""

from dataclasses import dataclass

import numpy as np

from ..errors import InvalidParameterError, NotAvailableError
from .cuda.runtime.backend import _gpu_name
# the engine's parts (digraph/dispatch/cuda/sharded/), re-exported under their old names
# (multi_gpu.shard_ranges, multi_gpu._Exchange, multi_gpu._WORK, ...)
from .cuda.sharded.exchange import EXCHANGES, _NCCL, _Exchange, _comm_stream  # noqa: F401
from .cuda.sharded.exchange import _nccl_type  # noqa: F401
from .cuda.sharded.layout import (LAYOUTS, _arc_order, _build_layout,  # noqa: F401
                                  _own_first, _range_arcs, linear_shards, shard_layout)
from .cuda.sharded.linear import (_ShardedRounds, _certify, _contraction,  # noqa: F401
                                  _divide_by_sum, _gather_linear, _linear)
from .cuda.sharded.monotone import _hindex, _monotone
from .cuda.sharded.ranges import (_cuts, _forget_ranges, _imbalance,  # noqa: F401
                                  balanced_ranges, learn_balance, recut_ranges, shard_ranges)
from .cuda.sharded.rounds import _Rounds, linear_round  # noqa: F401
from .cuda.sharded.shards import (_WORK, _Shard, _arrays, _gather_host,  # noqa: F401
                                  _heavy_host, _kept_work, _parallel, _retain, _sync_all,
                                  drop_work, make_shards)
from .cuda.sharded.timer import _Timer

__all__ = ["solve", "parse_devices", "shard_ranges", "make_shards", "EXCHANGES", "LAYOUTS",
           "MultiGpuSettings", "DEFAULT"]


@dataclass(frozen=True)
class MultiGpuSettings:
    """How the sharded engine splits a graph over GPUs, lays out and exchanges its shards and
    queues its rounds.  Each default is the faster side of the measurement it cites: the tables
    are in docs/history/benchmarks-notebook.md, "Measurements behind the GPU engines' settings" (with their
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
        *Ablation* (``tests/dispatch/cuda/test_multi_gpu_work.py``, ``ab_multi_gpu.py``).  A sharded linear run
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
        *Ablation* (``profile_multi_gpu.py``, ``tests/dispatch/cuda/test_multi_gpu.py``).  Sharded linear
        rounds run one ahead of the host: round t+1 is queued before round t's statistics are
        read, so no GPU waits for the host to launch (False: every round waits).  Measured on two
        H200s, R-MAT 2^24 PageRank: 293 ms pipelined against 338 ms with prepared launches alone.
    overlap : bool
        *Ablation* (``ab_multi_gpu.py``, ``tests/dispatch/cuda/test_multi_gpu_overlap.py``).  Sharded linear
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
    """The list of ``"cuda:N"`` devices named by ``"cuda:0,1,..."`` (several, distinct;
    :func:`digraph.dispatch.placement.several`)."""
    from .placement import several
    return list(several(device))


def gpus_to_use(graph, system, devices, min_arcs_per_gpu=None, settings=None):
    """How many of ``devices`` a sharded run of ``system`` uses: no more GPUs than the graph has
    arcs per ``min_arcs_per_gpu`` (default ``settings.min_arcs_per_gpu``; 0: every GPU named),
    and one for families outside ``settings.shard_families`` unless ``min_arcs_per_gpu`` is given
    (measured: sharded min/max pushes lose to one GPU, docs/history/benchmarks-notebook.md).  ``digraph.run``
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
