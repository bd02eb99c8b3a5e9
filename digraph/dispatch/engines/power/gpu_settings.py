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

    ``anderson``
        Memory of the Anderson acceleration (:mod:`digraph.dispatch.anderson`; 0: the plain
        power iteration, kept as the ablation; at most
        :data:`digraph.smx.cuda.anderson.MAX_MEMORY`).  Two more passes over the vertices a
        round cut the rounds where |λ2| is small (``benchmarks/proto_anderson_gpu.py``, one
        H200, tol 1e-8, CuPy, rounds plain → m = 2 / 4 / 6): R-MAT 2^22 25 → 11 / 11 / 11,
        R-MAT 2^24 27 → 11 / 11 / 11, dblp-2010 96 → 50 / 43 / 35, cnr-2000 99 → 85 / 68 / 69.
    ``graph_rounds``
        On a GPU, a round's pull and teleport are captured once into a CUDA graph (one per
        parity of the swapped buffers) and launched as one: a launch through Numba and
        ``cuda.core`` costs ~35 µs of host time, and a round of the grouped or binned pull makes
        two to five.  Not for cuSPARSE's pull nor for arc factors.  One H200, tol 1e-8,
        interleaved medians of 9 (``benchmarks/ab_gpu_power_graphs.py``): cnr-2000 13.5 → 9.6
        ms, dblp-2010 9.7 → 6.6 ms, the same rounds and answers; with Anderson forced on as
        well, cnr-2000 19.0 → 16.2 and dblp-2010 11.3 → 9.4 (still slower than plain: hence
        ``anderson_arcs``).
    ``keep_work_bytes``
        The run's vectors (``x``, ``y``, ``z``, the vertex factors, Anderson's rings: ``(6 + 2m
        + 2) · 8 · n`` bytes) stay on the GPU, kept on the graph, for the next run when they
        take at most this much: that run then launches every kernel through the prepared
        launches of the last (each new array costs a launch through Numba's dispatcher, ~0.3
        ms, eight a run).
    ``anderson_arcs``
        Anderson runs on graphs of at least this many arcs.  Its two passes and the host's solve
        cost ~0.26 ms a round where the launches, not the arcs, set a round's time (one H200,
        tol 1e-8, ``bench_gpu_pagerank.py --anderson 0 4``: dblp-2010, 1.6 M arcs, 14.7 ms in
        43 rounds against 11.7 in 96; cnr-2000, 3.2 M arcs, 17.2 ms in 68 against 12.4 in 99),
        and pay where the arcs do (R-MAT 2^22, 67 M arcs: 16.0 ms in 11 rounds against 26.0 in
        25; 2^24: 53.8 against 99.3).  With a plain round of ``t`` ms and the rounds cut to a
        share ρ, it pays when ``ρ (t + 0.26) < t``: from ~0.2 ms a round (~8 M arcs) at ρ ≈
        0.45 (R-MAT, dblp-2010), from ~0.6 ms (~32 M arcs) at cnr-2000's ρ ≈ 0.69; 2^24 arcs sits
        between.  Where the graph has no slow mode to remove it costs its passes: R-MAT 2^22
        without its isolated vertices, 11 rounds against 12, 14.0 ms against 12.3.
    ``anderson_ratio``
        The acceleration switches off when the third plain round's ratio of differences is below
        this share of γ (0.3 × 0.85 = 0.255 for PageRank): the iteration converges fast already
        (:class:`digraph.dispatch.anderson.Anderson`, ``start_ratio``, has the ratios measured).
        One H200: R-MAT 2^22 without its isolated vertices, 12 plain rounds, 11.3 ms plain
        against 13.6 with the mixes.
    ``anderson_restarts``
        After more restarts than this (a difference grew, or an untrusted solve), the run goes on
        plain (:class:`~digraph.dispatch.anderson.Anderson`'s ``max_restarts``;
        ``stats["anderson_gave_up"]``); None: never.  Where Anderson pays it does not restart
        (R-MAT 2^22 and 2^24, dblp-2010, cnr-2000: 0 restarts); on citation-like graphs its
        mixes overshoot (one H200, tol 1e-8, Anderson forced from the first arc,
        ``benchmarks/ab_gpu_anderson_restarts.py``, ``anderson_restarts_h200.json``; plain /
        no cap / cap 1 / 2 / 4): ``citation(2**22, back=0)`` 22.5 / 54.8 / **26.4** / 27.5 /
        32.4 ms (27 / 49 / 30 / 31 / 36 rounds, 11 restarts uncapped); ``back=0.001`` 32.5 /
        32.3 / 36.5 / 38.2 / 41.6; cit-HepPh 3.7 / 6.0 / 4.6 / 4.7 / 5.0; the others the same
        with every cap.  One GPU only: the sharded engine decides its mixes on the device.
    ``cusparse_arcs``
        Graphs with at least this many arcs pull by cuSPARSE's SpMV (its descriptors and buffer
        made once, :class:`~digraph.dispatch.runtime.cuda.spmv.SpMV`; values of ones beside the
        graph's own index arrays) and one pass for ``dst_scale`` and
        the sums (:func:`~digraph.smx.cuda.power.power_scale_sums`) instead of the Numba pull.
        docs/history/benchmarks-notebook.md, "PageRank on one GPU" (H200, tol 1e-8, solve alone): R-MAT 2^22
        (67 M arcs) 14.6 ms against 16.6 binned, 2^24 48.6 against 57.2, R-MAT 2^22 without
        its isolated vertices 10.0 against 12.0; the grouped pull stays faster on cnr-2000 (3.2
        M arcs, 12.2 against 13.5) and dblp-2010 (1.6 M, 8.6 against 12.1).  2^22 sits between
        (not measured there).
    ``cusparse_memory_share``
        cuSPARSE needs values (8 bytes an arc, kept on the graph): used when they take at most
        this share of the GPU's free memory, else the Numba pull.
    ``bins``
        In-degree classes ``[lo, hi)`` of the binned pull and the threads per vertex of each; from
        ``bins[-1][1]`` in-arcs on, a block per vertex
        (:func:`~digraph.smx.cuda.power.power_pull_heavy`).  A group sized for the mean in-degree
        leaves most threads idle on hub-heavy graphs (R-MAT 2^22: 0.45–0.7 ms a round for the
        light vertices, 0.4 ms for 35,443 hubs with 56% of the arcs, where cuSPARSE takes 0.61
        ms for all of it).
    ``bin_arcs``
        Graphs with at least this many arcs use the binned pull (its class lists cost 4 bytes a
        vertex on the GPU, kept on the graph).  docs/history/benchmarks-notebook.md, "PageRank on one GPU", column
        "solve alone: grouped / binned pull" (H200, tol 1e-8): R-MAT 2^22 30.9 ms binned against
        40.4 grouped, R-MAT 2^24 102.6 against 160.3; cnr-2000 17.9 against 13.5 and dblp-2010
        10.9 against 9.4 (3.2 M and 1.6 M arcs): below 2^24 arcs the grouped pull stays.
    ``blocks_per_sm``
        Blocks of HB threads per multiprocessor for the pull and the teleport: the grid strides
        over the vertices and each block adds its sums to the accumulator once (a block per 128
        vertices sent 65 k atomic additions to the same two words a round on R-MAT 2^22; the
        sharded ``bsp`` pull measured the same limit,
        :attr:`digraph.dispatch.runtime.cuda.shard_settings.MultiGpuSettings.pull_blocks_per_sm`;
        ``benchmarks/profile_gpu_power.py`` times 16, 64 and a thread per vertex).
    ``shard_arcs``
        Several GPUs named: the power iteration is sharded over as many of them as the graph
        has this many arcs per GPU (:mod:`digraph.dispatch.engines.power.gpus`; fewer than two:
        the first GPU alone, when the graph fits there).  docs/history/benchmarks-notebook.md, "Several GPUs:
        the power iteration sharded" (2 × H200, tol 1e-8): R-MAT 2^22 (64 Mi arcs) 31.0 ms on
        two against 28.3 on one, R-MAT 2^24 (256 Mi) 85.5 against 103.5, 2^25 161 against 216:
        64 Mi a GPU puts two GPUs from 128 Mi arcs on, between the loss and the first gain
        measured; four from 256 Mi (4 × H200, R-MAT 2^25: 117 ms on four against 220 on one;
        R-MAT 2^24 on four not measured).
    ``pack_share``
        Several GPUs: when the entries of ``z`` each GPU's in-arcs read from the other ranges
        are at most this share of ``(k − 1) n`` (every range copied whole to every other GPU), a
        round copies only those (packed, then put in place on the receiving GPU).  Measured with
        the entries of vertices with out-arcs (52% of R-MAT's; docs/history/benchmarks-notebook.md, "Several
        GPUs: the power iteration sharded", 2 × H200): 2^25 152–153 ms against 155–156 whole,
        2^24 80.4–81.3 against 82.6–83.2; where nearly every entry crosses, packing only adds
        its kernels, hence 0.9 (not measured).
    ``shard_keep_work_bytes``
        Several GPUs: a sharded run's vectors on each GPU (its replica of ``z``, the vectors of
        its range, Anderson's rings, the packed exchange's lists and buffers) stay there, kept
        on the graph, for the next run on the same GPUs when they take at most this much a GPU
        (:mod:`digraph.dispatch.engines.power.gpus`).  R-MAT 2^25 on four GPUs takes up to ~2.2
        GiB on the GPU with the most vertices, hence 4 GiB (``keep_work_bytes``, 1 GiB, would
        keep nothing there).  4 × H200, R-MAT 2^25, Anderson, warm runs: set-up 19.8–24.4 ms →
        4.2–4.6, rounds 53.5–56.7 → 41.9–43.2 (every launch a prepared one);
        ``bench_multi_gpu_power.py``: 77.2 ms → 45.4 (0.26x CuPy's power iteration on one).
    ``shard_vertex_cost``
        Several GPUs: the ranges hold equal ``arcs + shard_vertex_cost × vertices``
        (:func:`~digraph.dispatch.runtime.cuda.ranges.shard_ranges`).  A vertex costs a pull's
        row, the teleport and Anderson's two passes (about ten vectors read or written); a
        least-squares fit of the four GPUs' kernel times to their arcs and vertices (R-MAT 2^25,
        4 × H200, Anderson on, ranges cut at 3) gave 6.0–6.8 arcs a vertex; the runs at 3 / 6 /
        10 / 16 / 24 (``multi_gpu_power_costs_h200x4.json``): 38.4–38.8 / 37.3–38.4 / 38.0 /
        39.7 / 41.3 ms on four GPUs, 59.8 / 59.9–60.5 / 62.1 / 62.5 / 63.2 on two.
    ``shard_layout``
        Several GPUs: which vertices each GPU holds (:mod:`digraph.dispatch.engines.power.
        gpus_layout`): ``"ranges"`` (consecutive ranges, the cut above), ``"dealt"`` (blocks
        of ``shard_block`` vertices dealt so that every GPU holds the same vertices and about
        the same arcs) or ``"auto"``: dealt where the round's model ``max arcs + c · max
        vertices`` is at most ``shard_deal_gain`` of the ranges' and dealing adds at most
        ``shard_deal_locality`` to the share of a sample of arcs that cross GPUs (a web crawl's
        ranges keep most arcs inside: cnr-2000 on four, 0.09 crossing in ranges against 0.48
        dealt).  docs/history/benchmarks-notebook.md, "Several GPUs: the power iteration sharded" (4 × H200,
        R-MAT 2^25, tol 1e-8): ranges 37.8 ms on four GPUs and 60.0 on two, dealt 31.8 and
        49.4 (the model: 0.69x and 0.79x the ranges').
    ``shard_block``, ``shard_deal_gain``, ``shard_deal_locality``
        The dealt blocks' size and the two thresholds of ``"auto"`` above.
    ``shard_push``
        Several GPUs, packed exchange, every pair of GPUs with peer access: each GPU's kernel
        writes the entries of ``z`` the others read straight into their compact ``z`` (True),
        instead of packing them into a buffer that the receivers copy (False; also where a pair
        has no peer access).  docs/history/benchmarks-notebook.md, "Several GPUs: the power iteration sharded".
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
