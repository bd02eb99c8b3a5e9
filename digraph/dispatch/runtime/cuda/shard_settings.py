"""The sharded engine's settings: :class:`MultiGpuSettings` and its default
:data:`DEFAULT`, read by the engines over several GPUs
(:mod:`digraph.dispatch.engines.push.gpus`, the several-GPU ``scc``).  The engine's modules read
them with :func:`digraph.dispatch.settings.current`, which gives a run's own settings when it
passed some."""

from dataclasses import dataclass

from ...settings import register

__all__ = ["MultiGpuSettings", "DEFAULT"]


@dataclass(frozen=True)
class MultiGpuSettings:
    """How the sharded engine splits a graph over GPUs, lays out and exchanges its shards and
    queues its rounds.  Each default is the faster side of the measurement it cites; the tables,
    with their commands and machines, are in docs/history/benchmarks-notebook.md, "Measurements
    behind the GPU engines' settings" (one item a field).  The fields marked *ablation* keep a
    measured loser reachable only for the benchmark or test that compares both sides: pass
    ``dataclasses.replace(DEFAULT, field=...)`` as ``solve(..., settings=)``.

    Attributes
    ----------
    default_exchange : {"p2p", "nccl"}
        The transport of min/max and h-index systems (and of linear ones without ``overlap``).
        NCCL was as fast as peer-to-peer copies or faster for sharded PageRank with
        host-synchronised copies (``bench_multi_gpu.py``).  Peer-to-peer copies are used where
        CuPy has no NCCL.
    linear_exchange : {"p2p", "nccl"}
        The transport of linear systems (with ``overlap``; without it, ``default_exchange``).
        Peer copies queued on events use the copy engines and take no multiprocessor from the
        sums they overlap, so they beat NCCL on its own stream (``benchmarks/ab_multi_gpu.py``).
    shard_families : tuple of str
        System families sharded by default.  SSSP is not: a round pushes a small frontier, so
        the all-reduce of the whole vector costs more than the pushes it splits
        (``bench_multi_gpu.py``); such runs use one GPU unless ``solve(min_arcs_per_gpu=)`` is
        given.
    min_arcs_per_gpu : int
        A run uses at most ``m // min_arcs_per_gpu`` of the GPUs named (at least one; one GPU runs
        the single-GPU engine; 0 uses every GPU named).  Each further GPU adds host launches and
        an all-gather to every round, which only a round of enough arcs repays
        (``bench_multi_gpu.py --probe``).
    vertex_cost : int
        A linear shard's range balances arcs + this many arcs per vertex (a round's pull also
        costs per target), before ``balance`` re-cuts it.  Ranges of equal arcs leave the GPU
        with the hubs idle; no fixed cost suits every GPU count, so this is only the starting
        point that ``balance`` re-cuts from (``balance_multi_gpu.py``).
    layout : {"out-degree", "id", None}
        How a linear system's shards number their vertices (:func:`shard_layout`):
        ``"out-degree"`` (each range's vertices in the four exchange classes, each class by
        falling out-degree), ``"id"`` (the classes, each in vertex order) or ``None`` (vertex
        order; every round all-gathers whole ranges).  Renumbering cuts the bytes between the
        GPUs and packs the read sources into fewer cache lines; the out-degree order within a
        class was no faster than vertex order and stays the default as the order timed at
        every size.  ``solve(layout=)`` (``bench_multi_gpu.py --layouts``) takes the others.
    pull_blocks_per_sm : int
        Blocks of the pull kernel per multiprocessor (0: a thread per target): each thread
        strides over several targets and the block reduces its round statistics once.  The
        count itself was not compared with others (one GPU's power iteration found the same
        limit: :class:`~digraph.dispatch.engines.power.gpu_settings.PowerGpuSettings`).
    balance : bool
        *Ablation* (tests pin the ranges with False).  Sharded linear runs re-cut their ranges
        from the kernel time measured per GPU in previous runs on the same graph and GPUs
        (:func:`balanced_ranges`): no fixed vertex cost balances every GPU count
        (``benchmarks/balance_multi_gpu.py``).
    balance_tol : float
        Ranges are re-cut while the busiest GPU's kernel time exceeds the mean by more than this
        (``ab_multi_gpu.py --relearn``; tighter values were the same within the noise).
    balance_recuts : int
        At most this many re-cuts per graph and GPU set; the best ranges measured are kept after.
        A re-cut costs one layout build.  Not varied.
    balance_min_rounds : int
        Runs of fewer rounds teach nothing (their times are mostly set-up).  Not measured.
    keep_work : bool
        *Ablation* (``tests/dispatch/cuda/test_multi_gpu_work.py``, ``ab_multi_gpu.py``).  A
        sharded linear run keeps its per-run device vectors (``x``, ``δ``, the sends, the
        residual, ``b`` and the scales, the round statistics) for the next run on the same graph
        and GPUs, which refills them in place; the launches prepared for them
        (:class:`~.launch._PreparedLaunch`) stay valid, so that run's first round does not
        marshal its arguments through Numba's dispatcher again.  The vectors occupy what
        CuPy's memory pool would keep anyway; they are freed (:func:`drop_work`) when another
        graph, another set of GPUs or another engine runs, or when the graph is collected.
    prefault : bool
        *Ablation* (``balance_multi_gpu.py``).  Sharded linear runs fault in the pages of the
        host array for ``x`` on a background thread while the rounds run
        (:mod:`~.host_pages`; False: a fresh array at the end).
    pipeline : bool
        *Ablation* (``profile_multi_gpu.py``, ``tests/dispatch/cuda/test_multi_gpu.py``).
        Sharded linear rounds run one ahead of the host: round t+1 is queued before round t's
        statistics are read, so no GPU waits for the host to launch (False: every round waits).
    overlap : bool
        *Ablation* (``ab_multi_gpu.py``, ``tests/dispatch/cuda/test_multi_gpu_overlap.py``).
        Sharded linear rounds exchange the sends while each GPU sums its targets' arcs from its
        own range (the layout puts those arcs first, :func:`shard_layout`); the arcs from other
        ranges are summed once the exchange is done.  NCCL runs on a second, high-priority
        stream; peer copies run on a stream per source GPU, each as soon as its source is
        written, with no host wait.  Each target's sum is then taken in another order than on
        one GPU: the answers differ by rounding.
    comm_priority : int
        Priority of the exchange's stream (lower is higher; clamped to the device's range): its
        kernels get multiprocessors ahead of the local sums queued at the same time
        (``ab_multi_gpu.py``).
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
