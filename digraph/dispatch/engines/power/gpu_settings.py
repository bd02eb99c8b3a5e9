"""The one-GPU power iteration's settings: :class:`PowerGpuSettings` and its default
:data:`POWER_DEFAULT` (read with :func:`digraph.dispatch.settings.current`, which gives a run's
own settings when it passed some).  The sharded power iteration and the GPU SCC engine's heavy
components read them too."""

from dataclasses import dataclass

from ...settings import register

__all__ = ["PowerGpuSettings", "POWER_DEFAULT"]


@dataclass(frozen=True)
class PowerGpuSettings:
    """How the GPU power iteration pulls.

    The measurements behind the defaults are in docs/history/benchmarks-notebook.md, "PageRank
    on one GPU: the power iteration against CuPy" (one GPU) and "Several GPUs: the power
    iteration sharded" (the ``shard_*`` fields and ``pack_share``); figures that are in neither
    are in docs/history/docstring-measurements.md.

    ``anderson``
        Memory of the Anderson acceleration (:mod:`digraph.dispatch.anderson`; 0: the plain
        power iteration, kept as the ablation; at most
        :data:`digraph.smx.cuda.anderson.MAX_MEMORY`).  Two more passes over the vertices a
        round cut the rounds where |λ2| is small (``benchmarks/proto_anderson_gpu.py``).
    ``graph_rounds``
        On a GPU, a round's pull and teleport are captured once into a CUDA graph (one per
        parity of the swapped buffers) and launched as one: a launch through Numba and
        ``cuda.core`` costs host time whatever its work, and a round of the grouped or binned
        pull makes two to five.  Not for cuSPARSE's pull nor for arc factors.  The rounds and
        answers are the same (``benchmarks/ab_gpu_power_graphs.py``).
    ``keep_work_bytes``
        The run's vectors (``x``, ``y``, ``z``, the vertex factors, Anderson's rings: ``(6 + 2m
        + 2) · 8 · n`` bytes) stay on the GPU, kept on the graph, for the next run when they
        take at most this much: that run then launches every kernel through the prepared
        launches of the last (each new array costs a launch through Numba's dispatcher).
    ``anderson_arcs``
        Anderson runs on graphs of at least this many arcs.  Its two passes and the host's solve
        add a fixed cost ``a`` to every round, which pays only where the arcs, not the launches,
        set a round's time: with a plain round of ``t`` and the rounds cut to a share ρ, it pays
        when ``ρ (t + a) < t`` (``bench_gpu_pagerank.py --anderson 0 4``).  Where the graph has
        no slow mode to remove it costs its passes.
    ``anderson_ratio``
        The acceleration switches off when the third plain round's ratio of differences is below
        this share of γ (0.3 × 0.85 = 0.255 for PageRank): the iteration converges fast already
        and the mixes cost more than the rounds they save
        (:class:`digraph.dispatch.anderson.Anderson`, ``start_ratio``, has the ratios measured).
    ``anderson_restarts``
        After more restarts than this (a difference grew, or an untrusted solve), the run goes on
        plain (:class:`~digraph.dispatch.anderson.Anderson`'s ``max_restarts``;
        ``stats["anderson_gave_up"]``); None: never.  Where Anderson pays it does not restart;
        on citation-like graphs its mixes overshoot, and the cap bounds what they cost
        (``benchmarks/ab_gpu_anderson_restarts.py``).  One GPU only: the sharded engine decides
        its mixes on the device.
    ``cusparse_arcs``
        Graphs with at least this many arcs pull by cuSPARSE's SpMV (its descriptors and buffer
        made once, :class:`~digraph.dispatch.runtime.cuda.spmv.SpMV`; values of ones beside the
        graph's own index arrays) and one pass for ``dst_scale`` and the sums
        (:func:`~digraph.smx.cuda.power.power_scale_sums`) instead of the Numba pull, which stays
        faster on smaller graphs (the crossover itself was not searched).
    ``cusparse_memory_share``
        cuSPARSE needs values (8 bytes an arc, kept on the graph): used when they take at most
        this share of the GPU's free memory, else the Numba pull.
    ``bins``
        In-degree classes ``[lo, hi)`` of the binned pull and the threads per vertex of each; from
        ``bins[-1][1]`` in-arcs on, a block per vertex
        (:func:`~digraph.smx.cuda.power.power_pull_heavy`).  A group sized for the mean in-degree
        leaves most threads idle on hub-heavy graphs (``benchmarks/profile_gpu_power.py``;
        docs/history/benchmarks-lab-notebook.md, "PageRank on one GPU: the Google-matrix power
        iteration").
    ``bin_arcs``
        Graphs with at least this many arcs use the binned pull (its class lists cost 4 bytes a
        vertex on the GPU, kept on the graph); below, the grouped pull stays, which is faster
        there (docs/history/benchmarks-lab-notebook.md, "PageRank on one GPU: the Google-matrix
        power iteration").
    ``blocks_per_sm``
        Blocks of HB threads per multiprocessor for the pull and the teleport: the grid strides
        over the vertices and each block adds its sums to the accumulator once (a block per few
        vertices would send every block's atomic additions to the same two words a round; the
        sharded ``bsp`` pull found the same limit,
        :attr:`digraph.dispatch.runtime.cuda.shard_settings.MultiGpuSettings.pull_blocks_per_sm`;
        ``benchmarks/profile_gpu_power.py`` times 16, 64 and a thread per vertex).
    ``shard_arcs``
        Several GPUs named: the power iteration is sharded over as many of them as the graph
        has this many arcs per GPU (:mod:`digraph.dispatch.engines.power.gpus`; fewer than two:
        the first GPU alone, when the graph fits there).  64 Mi a GPU puts two GPUs from 128 Mi
        arcs on, between the largest size that lost on two GPUs and the smallest that gained,
        and four from 256 Mi.
    ``pack_share``
        Several GPUs: when the entries of ``z`` each GPU's in-arcs read from the other ranges
        are at most this share of ``(k − 1) n`` (every range copied whole to every other GPU), a
        round copies only those (packed, then put in place on the receiving GPU).  Where nearly
        every entry crosses, packing only adds its kernels, hence 0.9 (not measured).
    ``shard_keep_work_bytes``
        Several GPUs: a sharded run's vectors on each GPU (its replica of ``z``, the vectors of
        its range, Anderson's rings, the packed exchange's lists and buffers) stay there, kept
        on the graph, for the next run on the same GPUs when they take at most this much a GPU
        (:mod:`digraph.dispatch.engines.power.gpus`): enough for the largest graph measured,
        which ``keep_work_bytes`` would not keep; every launch of the next run is then a
        prepared one (``bench_multi_gpu_power.py``).
    ``shard_vertex_cost``
        Several GPUs: the ranges hold equal ``arcs + shard_vertex_cost × vertices``
        (:func:`~digraph.dispatch.runtime.cuda.ranges.shard_ranges`).  A vertex costs a pull's
        row, the teleport and Anderson's two passes (about ten vectors read or written); the
        value is a least-squares fit of the GPUs' kernel times to their arcs and vertices
        (``bench_multi_gpu_power.py --vertex-costs``).
    ``shard_layout``
        Several GPUs: which vertices each GPU holds
        (:mod:`digraph.dispatch.engines.power.gpus_layout`): ``"ranges"`` (consecutive ranges,
        the cut above), ``"dealt"`` (blocks of ``shard_block`` vertices dealt so that every GPU
        holds the same vertices and about the same arcs) or ``"auto"``: dealt where the round's
        model ``max arcs + c · max vertices`` is at most ``shard_deal_gain`` of the ranges' and
        dealing adds at most ``shard_deal_locality`` to the share of a sample of arcs that cross
        GPUs (a web crawl's ranges keep most arcs inside).
    ``shard_block``, ``shard_deal_gain``, ``shard_deal_locality``
        The dealt blocks' size and the two thresholds of ``"auto"`` above.
    ``shard_push``
        Several GPUs, packed exchange, every pair of GPUs with peer access: each GPU's kernel
        writes the entries of ``z`` the others read straight into their compact ``z`` (True),
        instead of packing them into a buffer that the receivers copy (False; also where a pair
        has no peer access).
    """

    anderson: int = 4
    cusparse_arcs: int = 1 << 22
    cusparse_memory_share: float = 0.25
    anderson_arcs: int = 1 << 24
    anderson_ratio: float = 0.3
    anderson_restarts: int = 1
    anderson_blocks_per_sm: int = 16
    graph_rounds: bool = True
    keep_work_bytes: int = 1 << 30
    bins: tuple = ((0, 4, 1), (4, 32, 4), (32, 1024, 32))
    bin_arcs: int = 1 << 24
    blocks_per_sm: int = 16
    shard_arcs: int = 64 << 20
    pack_share: float = 0.9
    shard_keep_work_bytes: int = 4 << 30
    shard_vertex_cost: int = 6
    shard_layout: str = "auto"
    shard_block: int = 4096
    shard_deal_gain: float = 0.9
    shard_deal_locality: float = 0.1
    shard_push: bool = True


POWER_DEFAULT = register(PowerGpuSettings())
