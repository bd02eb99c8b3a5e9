"""The sharded engine's settings: :class:`MultiGpuSettings` and its default
:data:`DEFAULT`, read by the engines over several GPUs (:mod:`digraph.dispatch.engines.push.gpus`,
the several-GPU ``scc``).  The engine's modules read them with
:func:`digraph.dispatch.settings.current`, which gives a run's own settings when it passed some."""

from dataclasses import dataclass

from ...settings import register

__all__ = ["MultiGpuSettings", "DEFAULT"]


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
        iteration measured the same limit: :class:`~digraph.dispatch.engines.power.gpu_settings.PowerGpuSettings`).
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
        (:class:`~.launch._PreparedLaunch`) stay valid, so that
        run's first round does not marshal its arguments through Numba's dispatcher again (at
        four GPUs, 44 such launches and 76 array registrations a run).  The vectors occupy what
        CuPy's memory pool would keep anyway; they are freed (:func:`drop_work`) when another
        graph, another set of GPUs or another engine runs, or when the graph is collected.
        Measured on R-MAT 2^25, 4 × H100: set-up 19–20 → 13–19 ms, certification 8 → 7 ms, the
        run (with the launches found by tag) 305–307 → 291–297 ms.
    prefault : bool
        *Ablation* (``balance_multi_gpu.py``).  Sharded linear runs fault in the pages of the
        host array for ``x`` on a background thread while the rounds run
        (:mod:`~.host_pages`; False: a fresh array at the end).  Measured on
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


DEFAULT = register(MultiGpuSettings())
