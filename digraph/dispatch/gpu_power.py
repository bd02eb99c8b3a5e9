"""The Google-matrix power iteration on one GPU (``mode="power"``, ``device="cuda[:N]"``): the GPU
twin of :mod:`digraph.dispatch.power`, same round, same sound stop, same counters.

A round is two launches (three with in-degree hubs; the pull by cuSPARSE's SpMV and a pass for
the sums on graphs of :attr:`PowerGpuSettings.cusparse_arcs` arcs or more) and one read-back of
the sums (:mod:`digraph.smx.cuda_power`); from :attr:`PowerGpuSettings.anderson_arcs` arcs on,
Anderson acceleration (:mod:`digraph.dispatch.anderson`) adds its record pass to the round and
its mix at the start of the next, in the same read-back.  The stop: for the computed ``x_{k+1} =
M x_k + δ``,

    ‖x_{k+1} − π‖₁ ≤ (γ1 ‖x_{k+1} − x_k‖₁ + ‖δ‖₁ + 2 |Σx_k − 1|) / (1 − γ1),

with ``‖δ‖₁ ≤ u (E + 2 (s + |c| + Σx_{k+1}) + (B + 8)(s + Σx_{k+1}))``: ``E = Σ_v (deg_v + 3) y_v``
bounds the rounding of the pulls (a sum of ``deg_v`` non-negative terms in any order, ours or
cuSPARSE's; the scaling and the product ``src_scale ∘ x``), ``c = 1 − s`` the teleport, ``B`` the
blocks whose sums were added atomically in any order.  Plain sums, not Neumaier's: the bound
pays for their rounding.  A round with a CUDA graph (:attr:`PowerGpuSettings.graph_rounds`)
launches its pull and teleport as one.

The set-up (degree classes, vertex vectors, Anderson's state) is in
:mod:`digraph.dispatch.cuda.one_gpu.power_setup`, the device work (the run's vectors, cuSPARSE's
matrix, the CUDA graphs) in :mod:`digraph.dispatch.cuda.one_gpu.power_work`; this module keeps
:class:`PowerGpuSettings`, :data:`DEFAULT` (read at each call of :func:`solve`, which passes the
settings on) and :func:`solve`, and re-exports the moved names (the same objects).
"""

from dataclasses import dataclass

import numpy as np

from ..algorithms.base import SumNormalized
from ..errors import InvalidParameterError
from .cuda.runtime.backend import backend, _gpu_name
from . import driver
from .convergence import power_stop
from .power import _gamma
from .systems import linear_factors
# the set-up and the device work (digraph/dispatch/cuda/one_gpu/power_*.py), re-exported under
# their old names (multi_gpu_power imports the set-up from here, cuda/sharded/power_work _Work)
from .cuda.one_gpu.power_setup import (_bins, _part, _vertex_factor, anderson_for,  # noqa: F401
                                       anderson_stats, degree_classes, group_size, round_bound,
                                       vertex_vectors)
from .cuda.one_gpu.power_work import (_KEPT_GRAPHS, _Work, _cusparse_matrix,  # noqa: F401
                                      _drop_kept_graphs, _graph_round, _graphs, _spmv, _work)

__all__ = ["solve", "group_size", "PowerGpuSettings", "DEFAULT"]


@dataclass(frozen=True)
class PowerGpuSettings:
    """How the GPU power iteration pulls.

    ``anderson``
        Memory of the Anderson acceleration (:mod:`digraph.dispatch.anderson`; 0: the plain
        power iteration, kept as the ablation; at most
        :data:`digraph.smx.cuda_anderson.MAX_MEMORY`).  Two more passes over the vertices a
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
        made once, :class:`~digraph.dispatch.cuda.runtime.spmv.SpMV`; values of ones beside the
        graph's own index arrays) and one pass for ``dst_scale`` and
        the sums (:func:`~digraph.smx.cuda_power.power_scale_sums`) instead of the Numba pull.
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
        (:func:`~digraph.smx.cuda_power.power_pull_heavy`).  A group sized for the mean in-degree
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
        :attr:`digraph.dispatch.multi_gpu.MultiGpuSettings.pull_blocks_per_sm`;
        ``benchmarks/profile_gpu_power.py`` times 16, 64 and a thread per vertex).
    ``shard_arcs``
        Several GPUs named: the power iteration is sharded over as many of them as the graph
        has this many arcs per GPU (:mod:`digraph.dispatch.multi_gpu_power`; fewer than two:
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
        (:mod:`digraph.dispatch.multi_gpu_power`).  R-MAT 2^25 on four GPUs takes up to ~2.2
        GiB on the GPU with the most vertices, hence 4 GiB (``keep_work_bytes``, 1 GiB, would
        keep nothing there).  4 × H200, R-MAT 2^25, Anderson, warm runs: set-up 19.8–24.4 ms →
        4.2–4.6, rounds 53.5–56.7 → 41.9–43.2 (every launch a prepared one);
        ``bench_multi_gpu_power.py``: 77.2 ms → 45.4 (0.26x CuPy's power iteration on one).
    ``shard_vertex_cost``
        Several GPUs: the ranges hold equal ``arcs + shard_vertex_cost × vertices``
        (:func:`~digraph.dispatch.cuda.sharded.ranges.shard_ranges`).  A vertex costs a pull's
        row, the teleport and Anderson's two passes (about ten vectors read or written); a
        least-squares fit of the four GPUs' kernel times to their arcs and vertices (R-MAT 2^25,
        4 × H200, Anderson on, ranges cut at 3) gave 6.0–6.8 arcs a vertex; the runs at 3 / 6 /
        10 / 16 / 24 (``multi_gpu_power_costs_h200x4.json``): 38.4–38.8 / 37.3–38.4 / 38.0 /
        39.7 / 41.3 ms on four GPUs, 59.8 / 59.9–60.5 / 62.1 / 62.5 / 63.2 on two.
    ``shard_layout``
        Several GPUs: which vertices each GPU holds (:mod:`digraph.dispatch.cuda.sharded.
        power_layout`): ``"ranges"`` (consecutive ranges, the cut above), ``"dealt"`` (blocks
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


DEFAULT = PowerGpuSettings()


def solve(graph, system, *, tol, max_iter, stats, device="cuda", group=None, trip=None,
          settings=None):
    """Run the power iteration on one GPU; returns (x on the host, summing to 1, converged).

    ``group``: threads per vertex of the pull (default :func:`group_size`; given, the grouped
    pull even where the binned one would run).  ``trip``: run as a probe, as
    :func:`digraph.dispatch.power.solve` (``converged`` None when it trips).  ``settings``: a
    :class:`PowerGpuSettings` (default :data:`DEFAULT`).
    """
    settings = DEFAULT if settings is None else settings
    from . import gpu
    from ..smx import cuda_power as K
    from ..smx import cuda_anderson as A
    from ..smx.cuda_kernels import HB
    g1, why = _gamma(graph, system, dangling_ok=True)  # the router's call: kept on the system
    if why is None and getattr(system, "dangling", None) is not None:
        why = "a dangling vector (dangling=) is run by the CPU power iteration only"
    if why is not None:
        raise InvalidParameterError(f"mode='power' cannot run this system: {why}")
    be = backend(device)
    be.stats = stats
    stats["gpu"] = "CUDA simulator" if be.sim else _gpu_name(be)
    stats["gamma"] = float(g1)
    stats.setdefault("dense_rounds", 0)
    n, m = graph.num_vertices, graph.num_arcs
    G = int(group or group_size(graph))
    if G & (G - 1) or not 1 <= G <= min(32, HB):
        raise InvalidParameterError(f"group must be a power of two from 1 to {min(32, HB)}, got {G}")
    stats["power_group"] = G
    dg = gpu._device_graph(be, graph)
    has = system.arc_scale is not None
    sparse = None
    if group is None and not be.sim and m >= settings.cusparse_arcs:
        sparse = _cusparse_matrix(be, graph, dg, settings)
    bins = (_bins(be, graph, settings) if group is None and sparse is None and
            m >= settings.bin_arcs else None)
    stats["power_pull"] = ("cusparse" if sparse is not None else
                           "binned" if bins is not None else "grouped")
    aa = anderson_for(settings, g1, n, m, trip, stats)
    mem = aa.memory
    w, kept, reused = _work(be, graph, n, mem, settings)
    stats["gpu_work_kept"] = reused
    in_coef = be.put(linear_factors(graph, system)[3][graph.in_arcs]) if has else w["no_coef"]
    if sparse is not None and (has or not sparse["ones"]):  # the matrix's values: arc factors
        sparse["coef"][...] = in_coef if has else 1.0
        sparse["ones"] = not has
    for name, vec in zip(("tele", "src_scale", "dst_scale"),
                         vertex_vectors(be, system, dg["out_degree"], n)):
        w[name][...] = vec  # into the kept vectors: the prepared launches stay valid
    tele, src_scale, dst_scale = w["tele"], w["src_scale"], w["dst_scale"]
    x, y, z = w["x"], w["y"], w["z"]
    x[...] = tele
    z[...] = src_scale * x
    if mem:  # the rings ΔF, ΔG and the last f, g (cuda_anderson)
        dF, dG, fprev, gprev = w["dF"], w["dG"], w["fprev"], w["gprev"]
    sum_slot = 4 + 2 * mem  # acc: the pull's and teleport's 4 sums, the dots, Σ of a mix
    accs = [w["acc0"], w["acc1"]]
    for acc in accs:
        acc[...] = 0.0
    heavy = dg["heavy_in"]
    u = np.finfo(np.float64).eps / 2
    grid_pull = max(1, min((n * G + HB - 1) // HB, settings.blocks_per_sm * be.sms))
    grid_tel = max(1, min(be.grid_hb(n), settings.blocks_per_sm * be.sms))
    blocks = (2 * grid_tel if sparse is not None else
              grid_pull + min(int(heavy.size), 65535) + grid_tel)
    grid_aa = max(1, min(be.grid_hb(n), settings.anderson_blocks_per_sm * be.sms))
    # a mix's Σ: a block tree, a chain per thread and an atomic add per block (its rounding)
    mix_terms = grid_aa + 8 + -(-n // (grid_aa * HB)) if n else 0
    st = {"x": x, "y": y, "sx": float(tele.sum()) if n else 0.0, "k": 0, "mix": None,
          "last_diff": np.inf}

    def pull_teleport(x, y, acc, nxt, stream):
        """Queue the pull into ``y`` and the teleport (the part of a round a CUDA graph holds)."""
        if sparse is not None:  # y = A z by cuSPARSE, then y ∘= dst_scale and its sums
            _spmv(sparse, z, y)
            be.launch(K.power_scale_sums, grid_tel, HB, y, dst_scale, dg["in_offsets"], acc)
        elif bins is None:
            be.launch(K.power_pull, grid_pull, HB, G, dg["in_offsets"], dg["in_sources"], in_coef,
                      has, z, dst_scale, y, acc, stream=stream)
            be.heavy(K.power_pull_heavy, heavy, dg["in_offsets"], dg["in_sources"], in_coef, has, z,
                     dst_scale, y, acc, stream=stream)
        else:
            for gb, verts, grid in bins[0]:
                be.launch(K.power_pull_list, grid, HB, gb, verts, dg["in_offsets"], dg["in_sources"],
                          in_coef, has, z, dst_scale, y, acc, stream=stream)
            be.heavy(K.power_pull_heavy, bins[1], dg["in_offsets"], dg["in_sources"], in_coef, has,
                     z, dst_scale, y, acc, stream=stream)
        be.launch(K.power_teleport, grid_tel, HB, y, tele, x, src_scale, z, acc, nxt,
                  stream=stream)

    # CUDA graphs: a round's pull and teleport in one launch (two graphs, one per parity of the
    # swapped buffers), captured after a first plain round of each parity has prepared the
    # launches on the rounds' stream; kept with the run's vectors
    cg = _graphs(be, w, kept, settings, sparse is None and not has)
    if cg is not None:
        be.sync()  # the set-up above ran on the default stream

    def step():
        x, y, k = st["x"], st["y"], st["k"]
        acc, nxt = accs[k % 2], accs[(k + 1) % 2]
        stream = None if cg is None else cg["stream"]
        gamma = st["mix"]
        if gamma is not None:  # x ← max(x − Σ γ_i ΔG_i, 0) in place, z from it, Σx into acc
            be.launch(A.anderson_mix, grid_aa, HB, x, dG, *A.mix_scalars(gamma), src_scale, z,
                      acc, sum_slot, stream=stream)
        if cg is None:
            pull_teleport(x, y, acc, nxt, None)
        else:
            _graph_round(cg, (k % 2, G, bins is None),
                         lambda: pull_teleport(x, y, acc, nxt, stream), stats)
        slot = aa.record_slot() if aa.memory else None
        if aa.memory:
            j, cnt = slot if slot is not None else (0, 0)
            be.launch(A.anderson_record, grid_aa, HB, x, y, fprev, gprev, dF, dG,
                      int(slot is not None), j, cnt, acc, 4, stream=stream)
        if cg is None:
            got = be.get(acc)
        else:  # into page-locked memory on the rounds' stream, then that stream only
            pin = cg["pinned"][k % 2]
            acc.get(out=pin, stream=stream, blocking=False)
            stream.synchronize()
            got = pin.copy()
            stats["bytes_d2h"] += int(acc.nbytes)
        s, e, diff, sy = (float(t) for t in got[:4])
        sx, sx_err = st["sx"], 0.0
        if gamma is not None:  # the iterate pulled is a mix: its own sum, with its rounding
            sx = float(got[sum_slot])
            sx_err = 2 * u * mix_terms * sx
        bound, delta = round_bound(g1, s, e, diff, sy, sx, sx_err, blocks, gamma is not None)
        st["mix"] = None
        if aa.memory and k + 1 < max_iter and not power_stop(bound, delta, diff, st["last_diff"], g1,
                                                              tol, {}):  # a round follows: its mix
            dots = None if slot is None else got[4:4 + slot[1]]
            dotf = None if slot is None else got[4 + mem:4 + mem + slot[1]]
            st["mix"] = aa.solve(diff, dots, dotf)
        st.update(x=y, y=x, sx=sy, k=k + 1, last_diff=diff)
        return bound, delta, diff

    if n == 0:
        rounds, converged = 0, True
    else:
        rounds, converged = driver.power(step, g1=g1, tol=tol, max_iter=max_iter, stats=stats,
                                         trip=trip)
    x = st["x"]
    anderson_stats(aa, mem, stats)
    stats["rounds"] += rounds
    stats["dense_rounds"] += rounds
    stats["arc_updates"] += rounds * m
    stats["vertex_updates"] += rounds * n
    if n == 0:
        stats["error_bound"] = 0.0
    be.sync()
    out = be.get(x)
    if kept:  # the next run's launches find these arrays prepared
        keep = [a for a in list(w.values()) + list(dg.values())
                if hasattr(a, "__cuda_array_interface__")]
        if bins is not None:
            keep += [verts for _, verts, _ in bins[0]] + [bins[1]]
        be.retain(keep, "power", holder=w)
    else:
        be.release("power")
    # x sums to 1 up to rounding that the bound counts: the host divides nothing (6 ms a run on
    # R-MAT 2^22 before)
    return out.view(SumNormalized), converged
