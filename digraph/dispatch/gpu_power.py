"""The Google-matrix power iteration on one GPU (``mode="power"``, ``device="cuda[:N]"``): the GPU
twin of :mod:`digraph.dispatch.power`, same round, same sound stop, same counters.

A round is two launches (three with in-degree hubs) and one read-back of four scalars
(:mod:`digraph.smx.cuda_power`).  The stop: for the computed ``x_{k+1} = M x_k + δ``,

    ‖x_{k+1} − π‖₁ ≤ (γ1 ‖x_{k+1} − x_k‖₁ + ‖δ‖₁ + 2 |Σx_k − 1|) / (1 − γ1),

with ``‖δ‖₁ ≤ u (E + 2 (s + |c| + Σx_{k+1}) + (B + 8)(s + Σx_{k+1}))``: ``E = Σ_v (deg_v + 3) y_v``
bounds the rounding of the pulls (a sum of ``deg_v`` non-negative terms in any order, the scaling
and the product ``src_scale ∘ x``), ``c = 1 − s`` the teleport, ``B`` the blocks whose sums were
added atomically in any order.  Plain sums, not Neumaier's: the bound pays for their rounding.
"""

import math
from dataclasses import dataclass

import numpy as np

from ..algorithms.base import SumNormalized
from ..errors import InvalidParameterError
from .convergence import ROUNDING_MARGIN
from . import driver
from .power import _gamma
from .systems import linear_factors

__all__ = ["solve", "group_size", "PowerGpuSettings", "DEFAULT"]


@dataclass(frozen=True)
class PowerGpuSettings:
    """How the GPU power iteration pulls.

    ``bins``
        In-degree classes ``[lo, hi)`` of the binned pull and the threads per vertex of each; from
        ``bins[-1][1]`` in-arcs on, a block per vertex
        (:func:`~digraph.smx.cuda_power.power_pull_heavy`).  A group sized for the mean in-degree
        leaves most threads idle on hub-heavy graphs (R-MAT 2^22: 0.45–0.7 ms a round for the
        light vertices, 0.4 ms for 35,443 hubs with 56% of the arcs, where cuSPARSE takes 0.61
        ms for all of it).
    ``bin_arcs``
        Graphs with at least this many arcs use the binned pull (its class lists cost 4 bytes a
        vertex on the GPU, kept on the graph).  docs/benchmarks.md, "PageRank on one GPU", column
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
        the first GPU alone, when the graph fits there).  docs/benchmarks.md, "Several GPUs:
        the power iteration sharded" (2 × H200, tol 1e-8): R-MAT 2^22 (64 Mi arcs) 31.0 ms on
        two against 28.3 on one, R-MAT 2^24 (256 Mi) 85.5 against 103.5, 2^25 161 against 216:
        64 Mi a GPU puts two GPUs from 128 Mi arcs on, between the loss and the first gain
        measured; four from 256 Mi (4 × H200, R-MAT 2^25: 117 ms on four against 220 on one;
        R-MAT 2^24 on four not measured).
    ``pack_share``
        Several GPUs: when at most this share of the vertices have a non-zero ``z`` (PageRank:
        out-arcs), a round copies only those entries of each range (packed, then put in place
        on the receiving GPU) instead of the whole range.  docs/benchmarks.md, "Several GPUs:
        the power iteration sharded" (2 × H200, R-MAT, 52% of the vertices with out-arcs):
        2^25 152–153 ms against 155–156, 2^24 80.4–81.3 against 82.6–83.2; where nearly every
        vertex has out-arcs packing only adds the packing kernels, hence 0.9 (not measured).
    """

    bins: tuple = ((0, 4, 1), (4, 32, 4), (32, 1024, 32))
    bin_arcs: int = 1 << 24
    blocks_per_sm: int = 16
    shard_arcs: int = 64 << 20
    pack_share: float = 0.9


DEFAULT = PowerGpuSettings()


def group_size(graph):
    """Threads per vertex of the pull: the power of two nearest half the mean in-degree, 1 to 32.
    A group reads its vertex's in-arcs side by side (coalesced) and sums them by shuffles."""
    if not graph.num_vertices:
        return 1
    mean = graph.num_arcs / graph.num_vertices
    return int(min(32, max(1, 2 ** round(math.log2(max(mean / 2, 1.0))))))


def degree_classes(be, deg, classes, blocks_per_sm):
    """([(threads per vertex, vertex list, grid)] for the in-degree classes ``[lo, hi)`` of
    ``classes`` (``(lo, hi, threads)`` each), the list of vertices of in-degree ``classes[-1][1]``
    or more, a block each), on the device; ``deg``: the in-degrees on the host."""
    from ..smx.cuda_kernels import HB
    lists = []
    for lo, hi, gb in classes:
        verts = np.flatnonzero((deg >= lo) & (deg < hi)).astype(np.int32)
        if verts.size:
            grid = max(1, min((verts.size * gb + HB - 1) // HB, blocks_per_sm * be.sms))
            lists.append((gb, be.put(verts), grid))
    return lists, be.put(np.flatnonzero(deg >= classes[-1][1]).astype(np.int32))


def vertex_vectors(be, system, out_degree, n, v0=0, v1=None):
    """(teleport vector ``b / Σb``, ``src_scale``, ``dst_scale``) of the vertices ``[v0, v1)``
    on the device (default all ``n``); ``out_degree``: theirs, on the device (PageRank's
    ``src_scale = α / out-degree`` is made from it there; ``v = 1/n`` is made there too)."""
    xp = be.xp
    v1 = n if v1 is None else v1
    if getattr(system, "b_constant", None) is not None:  # v = 1/n, made here (no upload)
        tele = be.keep(xp.full(v1 - v0, 1.0 / max(n, 1)))
    else:
        b = np.asarray(system.b, np.float64)
        tele = be.keep(be.put(b[v0:v1]) / (float(b.sum()) if n else 1.0))
    sds = getattr(system, "src_degree_scale", None)
    if sds is not None:  # src_scale = sds / out-degree, made from the out-degrees on the GPU
        deg = out_degree.astype(np.float64)
        src_scale = be.keep(xp.where(deg > 0, sds / xp.maximum(deg, 1.0), 0.0))
    else:
        src_scale = _vertex_factor(be, _part(system.src_scale, v0, v1), v1 - v0)
    return tele, src_scale, _vertex_factor(be, _part(system.dst_scale, v0, v1), v1 - v0)


def _part(a, v0, v1):
    return None if a is None else np.asarray(a, np.float64)[v0:v1]


def _bins(be, graph, settings):
    """:func:`degree_classes` of ``settings.bins`` for the graph's in-degrees, kept on the
    graph."""
    key = ("cuda-power-bins", be.device_id, be.sim, settings.bins, settings.blocks_per_sm)
    got = graph._cache.get(key)
    if got is None:
        got = graph._cache[key] = degree_classes(be, np.asarray(graph.in_degree), settings.bins,
                                                 settings.blocks_per_sm)
    for _, verts, _ in got[0]:
        be.keep(verts)
    be.keep(got[1])
    return got


def _vertex_factor(be, a, n):
    """A vertex factor on the device: ones made there when absent (no host array, no copy)."""
    if a is None:
        return be.keep(be.xp.ones(n, np.float64))
    return be.put(a, np.float64)


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
    from ..smx.cuda_kernels import HB
    g1, why = _gamma(graph, system, dangling_ok=True)  # the router's call: kept on the system
    if why is None and getattr(system, "dangling", None) is not None:
        why = "a dangling vector (dangling=) is run by the CPU power iteration only"
    if why is not None:
        raise InvalidParameterError(f"mode='power' cannot run this system: {why}")
    be = gpu.backend(device)
    be.stats = stats
    stats["gpu"] = "CUDA simulator" if be.sim else gpu._gpu_name(be)
    stats["gamma"] = float(g1)
    stats.setdefault("dense_rounds", 0)
    xp = be.xp
    n, m = graph.num_vertices, graph.num_arcs
    G = int(group or group_size(graph))
    if G & (G - 1) or not 1 <= G <= min(32, HB):
        raise InvalidParameterError(f"group must be a power of two from 1 to {min(32, HB)}, got {G}")
    stats["power_group"] = G
    dg = gpu._device_graph(be, graph)
    bins = _bins(be, graph, settings) if group is None and m >= settings.bin_arcs else None
    stats["power_pull"] = "binned" if bins is not None else "grouped"
    has = system.arc_scale is not None
    in_coef = be.put(linear_factors(graph, system)[3][graph.in_arcs]) if has else be.put(np.zeros(1))
    tele, src_scale, dst_scale = vertex_vectors(be, system, dg["out_degree"], n)
    x = be.keep(tele.copy())
    y = be.keep(xp.empty(n, np.float64))
    z = be.keep(xp.empty(n, np.float64))
    z[...] = src_scale * x
    accs = [be.keep(xp.zeros(4, np.float64)), be.keep(xp.zeros(4, np.float64))]
    heavy = dg["heavy_in"]
    u = np.finfo(np.float64).eps / 2
    grid_pull = max(1, min((n * G + HB - 1) // HB, settings.blocks_per_sm * be.sms))
    grid_tel = max(1, min(be.grid_hb(n), settings.blocks_per_sm * be.sms))
    blocks = grid_pull + min(int(heavy.size), 65535) + grid_tel
    st = {"x": x, "y": y, "sx": float(tele.sum()) if n else 0.0, "k": 0}

    def step():
        x, y, k = st["x"], st["y"], st["k"]
        acc, nxt = accs[k % 2], accs[(k + 1) % 2]
        if bins is None:
            be.launch(K.power_pull, grid_pull, HB, G, dg["in_offsets"], dg["in_sources"], in_coef,
                      has, z, dst_scale, y, acc)
            be.heavy(K.power_pull_heavy, heavy, dg["in_offsets"], dg["in_sources"], in_coef, has, z,
                     dst_scale, y, acc)
        else:
            for gb, verts, grid in bins[0]:
                be.launch(K.power_pull_list, grid, HB, gb, verts, dg["in_offsets"], dg["in_sources"],
                          in_coef, has, z, dst_scale, y, acc)
            be.heavy(K.power_pull_heavy, bins[1], dg["in_offsets"], dg["in_sources"], in_coef, has,
                     z, dst_scale, y, acc)
        be.launch(K.power_teleport, grid_tel, HB, y, tele, x, src_scale, z, acc, nxt)
        s, e, diff, sy = (float(t) for t in be.get(acc))
        c = 1.0 - s
        delta = (u * (e + 2 * (s + abs(c) + sy) + (blocks + 8) * (s + sy))
                 + 2 * abs(st["sx"] - 1.0) + abs(sy - 1.0))
        st.update(x=y, y=x, sx=sy, k=k + 1)
        return (g1 * diff + delta) * (1.0 + ROUNDING_MARGIN) / (1.0 - g1), delta, diff

    if n == 0:
        rounds, converged = 0, True
    else:
        rounds, converged = driver.power(step, g1=g1, tol=tol, max_iter=max_iter, stats=stats,
                                         trip=trip)
    x = st["x"]
    stats["rounds"] += rounds
    stats["dense_rounds"] += rounds
    stats["arc_updates"] += rounds * m
    stats["vertex_updates"] += rounds * n
    if n == 0:
        stats["error_bound"] = 0.0
    be.sync()
    out = be.get(x)
    be.release()
    # x sums to 1 up to rounding that the bound counts: the host divides nothing (6 ms a run on
    # R-MAT 2^22 before)
    return out.view(SumNormalized), converged
