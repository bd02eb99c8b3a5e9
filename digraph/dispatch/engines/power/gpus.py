"""The Google-matrix power iteration on several GPUs of one host (``mode="power"``,
``device="cuda:0,1,..."``): the sharded twin of :mod:`digraph.dispatch.engines.power.gpu`, same
round, same sound stop, same counters.

Layout.  Each GPU ``g`` holds a set of vertices
(:mod:`digraph.dispatch.engines.power.gpus_layout`, chosen once for the graph): ``k``
consecutive ranges of about equal in-arcs (a vertex counting as
:attr:`~.gpu_settings.PowerGpuSettings.shard_vertex_cost` arcs besides its own,
:func:`~digraph.dispatch.runtime.cuda.ranges.shard_ranges`), or, where in-degree follows the
vertex number and the ranges keep no locality, blocks of vertices dealt so that every GPU holds
the same vertices and about the same arcs (``stats["power_layout"]`` says which and why).  The
engine numbers the vertices GPU by GPU, so each GPU holds one consecutive range ``[v0, v1)`` of
that numbering: its in-arcs (offsets rebased, sources in the engine's numbering) and its range of
``x``, ``y``, the teleport vector and the scales, plus the vector a pull reads, ``z = src_scale ∘
x``: with the packed exchange a compact one (the entries its in-arcs read, its own range among
them, :func:`~.gpus_exchange._compact`), else a full-length
replica; the answer is written back in the graph's numbering.

A round ``k`` (Page et al. 1999; Langville and Meyer 2006, §4.5), on every GPU at once, queued
with no host wait (:mod:`digraph.dispatch.engines.power.gpus_queued`):

1. once the copies of ``z`` into it are done, the pull of its range, ``y = dst_scale ∘ Aᵀ-pull
   of z``, with the block sums ``s_g = Σy`` and ``e_g`` (the rounding bound of the pull) — the
   single-GPU kernels of :mod:`digraph.smx.cuda.power` on the shard's arrays, grouped or binned
   by in-degree, or cuSPARSE's SpMV; its sums are copied into a table in page-locked host memory
   that every GPU reads;
2. once every GPU's row is there, the teleport of its range, ``y += c · v`` with ``c = 1 −
   Σ_g s_g`` read from the table (:func:`~digraph.smx.cuda.power.power_teleport_rows`),
   ``z[range] = src_scale ∘ y``, ``Σ|y − x|`` and ``Σy``; with Anderson, the record pass's dots;
   the row copied into a second table, which the host reads for the round's bound;
3. with Anderson (:mod:`digraph.dispatch.anderson`, graphs of
   :attr:`~.gpu_settings.PowerGpuSettings.anderson_arcs` arcs or more), once every
   GPU's second row is there, each GPU runs the same one-thread solve on the same numbers
   (:mod:`digraph.smx.cuda.anderson_state`) and mixes its range into ``x`` (and its ``z``);
4. its range of ``z`` goes to every other GPU: when packed, only the entries each other GPU's
   in-arcs read (:func:`~.gpus_exchange._pack`), written by its
   own kernel into their compact ``z`` through peer access
   (:func:`~.gpus_exchange._packed_push`,
   :attr:`~.gpu_settings.PowerGpuSettings.shard_push`), or packed and copied by
   the receivers; else the whole range by peer copies (one stream per source on each
   destination, queued on events).

The host keeps a round ahead of the GPUs and reads round ``k``'s sums while round ``k + 1``
runs; the stop is :func:`digraph.dispatch.convergence.power_stop` with the bound of
:mod:`digraph.dispatch.engines.power.gpu`: ``‖x_{k+1} − π‖₁ ≤ (γ1 ‖x_{k+1} − x_k‖₁ + ‖δ‖₁ +
2 |Σx_k − 1|) / (1 − γ1)``, its rounding term counting the blocks of every GPU and the ``k``
partial sums added on the host.  When the last two differences foretell that a round's bound
ends the run, the next round is not queued ahead (``stats["power_rounds_past_stop"]``: rounds
queued past the stop, 0 when foretold right).  The answer is the stopping round's power step
(the pulls alternate between two vectors ``y``), copied to the host range by range, every GPU's
copy queued before any is waited for
(:func:`~.gpus_exchange._gather`), behind the round itself when
its end was foretold (``stats["power_answer_early"]``).  On graphs of
:attr:`~.gpu_settings.PowerGpuSettings.cusparse_arcs` arcs a GPU or more each shard
pulls by cuSPARSE's SpMV on its own in-arcs.

Kept between runs (:mod:`digraph.dispatch.engines.power.gpus_work`).  A run's device vectors on
each GPU (``x``, ``y``, ``z``, the teleport vector and the scales, the
accumulators, Anderson's rings), the packed exchange's lists and buffers, and the rounds'
streams, events and
page-locked buffers are kept on the graph for the next run on the same GPUs, ranges and settings
(:func:`~.gpus_work.kept_work`), when they take at most
:attr:`~.gpu_settings.PowerGpuSettings.shard_keep_work_bytes` a GPU; the launches
prepared for them stay valid (:meth:`~digraph.dispatch.runtime.cuda.backend._Backend.retain`).
The start's ``z`` crosses as a round's does (the packed entries, queued on the GPUs) instead of
an all-gather with a host wait on each side.

Why it pays: a round reads every arc once and is bandwidth-bound, so ``k`` GPUs divide its pull,
and what crosses between GPUs is ``z`` once a round (8 bytes a vertex to each other GPU); the
sharded ``bsp`` runs the linear system without the rank-one term, several times the rounds on
R-MAT (docs/history/benchmarks-notebook.md, "PageRank on one GPU: the power iteration against
CuPy").  Under Numba's CUDA simulator every shard shares one simulated device
and the copies are host copies with the same byte counts.

Where the parts live.  This module keeps :func:`solve`; the rounds are in
:mod:`digraph.dispatch.engines.power.gpus_queued`; a shard's arrays,
its pull and their release (``shard_arrays``, ``_cusparse_matrix``, ``_pull``, ``_retain``) are
in :mod:`digraph.dispatch.engines.power.gpus_arrays`, the packed exchange and the answer's gather
(``_pack``, ``_packed_into``, ``_gather``) in :mod:`digraph.dispatch.engines.power.gpus_exchange`.
"""

import time

from ...settings import current
from ....algorithms.base import SumNormalized
from ....errors import InvalidParameterError
from ...runtime.cuda.backend import gpu_name
from .gpu_settings import POWER_DEFAULT as DEFAULT
from .gpu_setup import anderson_for, anderson_stats, group_size
from ...runtime.cuda.exchange import Exchange
from .gpus_layout import choose as choose_layout
from ...runtime.cuda.shards import parallel, make_shards
from ...runtime.cuda.common import same_vectors, vector_key
from .gpus_work import forget_work, kept_work
from .gpus_arrays import retain_arrays, shard_arrays
from .gpus_queued import rounds_queued
from .cpu import power_gamma

__all__ = ["solve", "prepare"]


def solve(graph, system, *, devices, tol, max_iter, stats, group=None, trip=None,
          settings=None):
    """Run the power iteration on the GPUs ``devices`` (``["cuda:0", "cuda:1", ...]``); returns
    (x on the host, summing to 1, converged).

    ``group``, ``trip`` and ``settings`` as in :func:`digraph.dispatch.engines.power.gpu.solve`; the
    binned pull is chosen per shard, from the arcs the shard holds.  The ranges follow a cost
    model (:attr:`~.gpu_settings.PowerGpuSettings.shard_vertex_cost`), not the
    measured kernel times the sharded ``bsp`` re-cuts them from: a re-cut from kernel times
    evened them but slowed the run, as the busiest GPU's kernels are not the round's critical
    path (docs/history/benchmarks-notebook.md, "Several GPUs: the power iteration sharded").
    """
    settings = current(DEFAULT) if settings is None else settings
    from ....smx.cuda import power as K
    from ....smx.cuda.common import HB
    g1, why = power_gamma(graph, system, dangling_ok=True)
    if why is None and getattr(system, "dangling", None) is not None:
        why = "a dangling vector (dangling=) is run by the CPU power iteration only"
    if why is not None:
        raise InvalidParameterError(f"mode='power' cannot run this system: {why}")
    n, m = graph.num_vertices, graph.num_arcs
    G = int(group or group_size(graph))
    if G & (G - 1) or not 1 <= G <= min(32, HB):
        raise InvalidParameterError(
            f"group must be a power of two from 1 to {min(32, HB)}, got {G}")
    t0 = time.perf_counter()
    k = len(devices)
    from ....smx.cuda.anderson_state import MAX_GPUS
    if k > MAX_GPUS:
        raise InvalidParameterError(f"the sharded power iteration takes at most {MAX_GPUS} GPUs, "
                                    f"got {k}")
    key = ("power-shard-layout", k, settings.shard_vertex_cost, settings.shard_layout,
           settings.shard_block, settings.shard_deal_gain, settings.shard_deal_locality)
    layout = graph._cache.get(key)
    if layout is None:  # ranges or dealt blocks (power_layout), chosen once for the graph
        layout = graph._cache[key] = choose_layout(graph.in_offsets, graph.in_sources, k,
                                                   settings)
    bounds = layout.bounds  # in the engine's numbering: GPU g holds [bounds[g], bounds[g + 1])
    shards = make_shards(devices, graph.in_offsets, stats, bounds=bounds)
    for g, s in enumerate(shards):
        s.layout, s.index = layout, g
    stats["power_layout"] = layout.why
    be0 = shards[0].be
    stats["gpu"] = "CUDA simulator" if be0.sim else gpu_name(be0)
    stats["gpus"] = k
    stats.setdefault("gpus_named", k)
    stats["gamma"] = float(g1)
    stats["power_group"] = G
    stats.setdefault("dense_rounds", 0)
    stats["bytes_between_gpus"] = 0
    stats["gpu_arcs"] = layout.arcs(graph.in_offsets)
    stats["gpu_vertices"] = [s.v1 - s.v0 for s in shards]
    has = system.arc_scale is not None
    ex = Exchange(shards, "p2p", stats)
    stats["exchange"] = "host (simulator)" if be0.sim else "p2p"
    works, kept, ok = None, False, False
    try:
        aa = anderson_for(settings, g1, n, m, trip, stats)
        mem = aa.memory
        sig = (tuple(devices), layout.key, n, mem,
               None if group is None else G, settings)
        works, kept, reused = kept_work(graph, shards, sig, settings, mem)
        stats["gpu_work_kept"] = reused
        for s, w in zip(shards, works):
            s.w = w
            s.tag = id(w)  # the launches' tags: the same for the next run's kept arrays
        vkey = vector_key(system)

        def arrays(s):
            return shard_arrays(s, graph, system, has, settings, group, mem, vkey)
        if reused and not has and same_vectors(works[0].get("vkey"), vkey):
            # only launches and copies on the GPUs: no host thread a GPU
            sums = []
            for s in shards:
                with s.switch():
                    sums.append(arrays(s))
        else:
            sums = parallel(shards, arrays)
        kind = ["cusparse" if s.d.get("sparse") is not None else
                "binned" if s.d["binned"] else "grouped" for s in shards]
        stats["power_pull"] = (kind[0] if len(set(kind)) == 1 else
                               ", ".join(f"{kd} on {i}" for i, kd in enumerate(kind)))
        converged, out = rounds_queued(shards, ex, K, HB, has, g1, sum(sums), n, m, tol,
                                        max_iter, stats, trip, settings, t0, aa)
        anderson_stats(aa, mem, stats)
        ok = True
        return out.view(SumNormalized), converged
    finally:
        ex.close()
        if kept and not ok:  # the kept work may be half made: made again by the next run
            forget_work(graph, works)
            kept = False
        retain_arrays(shards, kept)


def prepare(req, devices):
    """The placement's entry (:mod:`digraph.dispatch.engines.registry`): the kernels warm on
    ``devices`` (``time_compile``), then a function that solves ``req``."""
    import dataclasses
    from .. import warm
    from ....result import RunStats
    key = ("multi-gpu-power", req.plan.placement.device)

    def warm_up():
        tiny = warm.tiny_graph()
        warm.run_tiny("linear", lambda sys, _: solve(
            tiny, dataclasses.replace(sys, normalize=True), devices=devices, tol=1e-3,
            max_iter=100, stats=RunStats.new()), divisors=(None,))
        warm.WARM.add(key)

    if key not in warm.WARM:
        warm.timed(req.stats, warm_up)
    return lambda: solve(req.graph, req.system, devices=devices, tol=req.tol,
                         max_iter=req.max_iter, stats=req.stats)
