"""The Google-matrix power iteration on several GPUs of one host (``mode="power"``,
``device="cuda:0,1,..."``): the sharded twin of :mod:`digraph.dispatch.gpu_power`, same round,
same sound stop, same counters.

Layout.  The vertices are cut into ``k`` consecutive ranges of about equal in-arcs (a vertex
counting as :attr:`~digraph.dispatch.multi_gpu.MultiGpuSettings.vertex_cost` arcs besides its own,
:func:`~digraph.dispatch.cuda.sharded.ranges.shard_ranges`); GPU ``g`` keeps the in-arcs of its
range (offsets rebased, sources in global numbering) and its range of ``x``, ``y``, the teleport
vector and the scales, plus a full-length replica of ``z = src_scale ∘ x``, the vector a pull
reads.

A round ``k`` (Page et al. 1999; Langville and Meyer 2006, §4.5), on every GPU at once:

1. the pull of its range, ``y = dst_scale ∘ Aᵀ-pull of z``, with the block sums ``s_g = Σy`` and
   ``e_g`` (the rounding bound of the pull) — the single-GPU kernels of
   :mod:`digraph.smx.cuda_power` on the shard's arrays, grouped or binned by in-degree;
2. the host reads every GPU's four sums in one pinned copy (the one synchronisation of a round)
   and forms the teleport mass ``c = 1 − Σ_g s_g``;
3. the teleport of its range, ``y += c · v``, ``z[range] = src_scale ∘ y``, with
   ``Σ|y − x|`` and ``Σy`` (:func:`~digraph.smx.cuda_power.power_teleport_given`);
4. its range of ``z`` is copied to every other GPU (peer copies, one stream per source on each
   destination, queued on events: no host wait), and the next round's pull on a GPU waits for
   the copies into it.

The round's ``Σ|y − x|`` and ``Σy`` are read with the next round's ``s_g``, so the stop of round
``k`` is decided after the pull of round ``k + 1`` has run (its result is left unused when the
run stops).  The stop is :func:`digraph.dispatch.power.stop` with the bound of
:mod:`digraph.dispatch.gpu_power`: ``‖x_{k+1} − π‖₁ ≤ (γ1 ‖x_{k+1} − x_k‖₁ + ‖δ‖₁ +
2 |Σx_k − 1|) / (1 − γ1)``, its rounding term counting the blocks of every GPU and the ``k``
partial sums added on the host.

With Anderson acceleration (:mod:`digraph.dispatch.anderson`, graphs of
:attr:`~digraph.dispatch.gpu_power.PowerGpuSettings.anderson_arcs` arcs or more) a round has a
second synchronisation: after the teleport, each GPU's record pass adds its range's dots, the
host reads them with ``Σ|y − x|`` and ``Σy``, computes the round's bound and, when no stop can
follow, the coefficients; each GPU then mixes its range of ``x`` in place (and its ``z``) before
the copies.  When that bound ends the run, the next round's exchange and pull are not queued at
all (``stats["power_last_pull_skipped"]``; R-MAT 2^25 on four H200s 45.4 → 41.0 ms), and the
answer's ranges are copied to the host at once, every GPU's copy queued before any is waited
for (:func:`~digraph.dispatch.cuda.sharded.power_exchange._gather`).  On graphs of
:attr:`~digraph.dispatch.gpu_power.PowerGpuSettings.cusparse_arcs` arcs a GPU or more each shard
pulls by cuSPARSE's SpMV on its own in-arcs.

Kept between runs (:mod:`digraph.dispatch.cuda.sharded.power_work`).  A run's device vectors on
each GPU (``x``, ``y``, the replica of ``z``, the teleport vector and the scales, the
accumulators, Anderson's rings), the lists of ``z``'s non-zero entries with the packed exchange's
buffers (each GPU's copy of the other ranges' lists), and the rounds' streams, events and
page-locked buffers are kept on the graph for the next run on the same GPUs, ranges and settings
(:func:`~digraph.dispatch.cuda.sharded.power_work._kept_work`), when they take at most
:attr:`~digraph.dispatch.gpu_power.PowerGpuSettings.shard_keep_work_bytes` a GPU; the launches
prepared for them stay valid (:meth:`~digraph.dispatch.cuda.runtime.backend._Backend.retain`).
The start's ``z`` crosses as a round's does (the packed entries, queued on the copy streams)
instead of an all-gather with a host wait on each side.

Why it pays: a round reads every arc once and is bandwidth-bound, so ``k`` GPUs divide its pull,
and what crosses between GPUs is ``z`` once a round (8 bytes a vertex to each other GPU); the
sharded ``bsp`` runs the linear system without the rank-one term, about 4x the rounds on R-MAT
(issue 17, measurement 3).  Under Numba's CUDA simulator every shard shares one simulated device
and the copies are host copies with the same byte counts.

Where the parts live.  This module keeps :func:`solve` and :func:`_rounds`; a shard's arrays,
its pull and their release (``_shard_arrays``, ``_cusparse_matrix``, ``_pull``, ``_retain``) are
in :mod:`digraph.dispatch.cuda.sharded.power_arrays`, the packed exchange and the answer's gather
(``_pack``, ``_packed_into``, ``_gather``) in :mod:`digraph.dispatch.cuda.sharded.power_exchange`,
all importable from here as before.
"""

import time

import numpy as np

from ..algorithms.base import SumNormalized
from ..errors import InvalidParameterError
from . import driver
from .cuda.runtime.backend import _gpu_name
from .convergence import ROUNDING_MARGIN
from . import multi_gpu
from .gpu_power import DEFAULT, anderson_for, anderson_stats, group_size
from .cuda.sharded.exchange import _Exchange, _comm_stream
from .cuda.sharded.ranges import shard_ranges
from .cuda.sharded.shards import _parallel, make_shards
from .cuda.sharded.power_work import _forget_work, _kept_work, _same_vectors, _vector_key
# the parts moved to cuda/sharded/ (importable here by their old names, looked up here by solve
# and _rounds)
from .cuda.sharded.power_arrays import (_cusparse_matrix, _pull, _retain,  # noqa: F401
                                        _shard_arrays)
from .cuda.sharded.power_exchange import _gather, _pack, _packed_into
from .power import _gamma, stop

__all__ = ["solve"]


def solve(graph, system, *, devices, tol, max_iter, stats, group=None, trip=None,
          settings=None):
    """Run the power iteration on the GPUs ``devices`` (``["cuda:0", "cuda:1", ...]``); returns
    (x on the host, summing to 1, converged).

    ``group``, ``trip`` and ``settings`` as in :func:`digraph.dispatch.gpu_power.solve`; the
    binned pull is chosen per shard, from the arcs the shard holds.  The ranges are not re-cut
    from measured kernel times as the sharded ``bsp``'s are: on four H200s (R-MAT 2^25) that
    evened the GPUs' kernel time (17.2–23.3 → 19.5–20.4 ms) but slowed the run (41.0 → 44.3 ms;
    docs/benchmarks.md, "Several GPUs: the power iteration sharded").
    """
    settings = DEFAULT if settings is None else settings
    from ..smx import cuda_power as K
    from ..smx.cuda_kernels import HB
    g1, why = _gamma(graph, system, dangling_ok=True)
    if why is None and getattr(system, "dangling", None) is not None:
        why = "a dangling vector (dangling=) is run by the CPU power iteration only"
    if why is not None:
        raise InvalidParameterError(f"mode='power' cannot run this system: {why}")
    n, m = graph.num_vertices, graph.num_arcs
    G = int(group or group_size(graph))
    if G & (G - 1) or not 1 <= G <= min(32, HB):
        raise InvalidParameterError(f"group must be a power of two from 1 to {min(32, HB)}, got {G}")
    t0 = time.perf_counter()
    k = len(devices)
    cost = multi_gpu.DEFAULT.vertex_cost  # ranges of equal arcs + cost a vertex, not re-cut
    key = ("power-shard-ranges", k, cost)
    bounds = graph._cache.get(key)
    if bounds is None:
        bounds = graph._cache[key] = shard_ranges(graph.in_offsets, k, cost)
    shards = make_shards(devices, graph.in_offsets, stats, bounds=bounds)
    be0 = shards[0].be
    stats["gpu"] = "CUDA simulator" if be0.sim else _gpu_name(be0)
    stats["gpus"] = k
    stats.setdefault("gpus_named", k)
    stats["gamma"] = float(g1)
    stats["power_group"] = G
    stats.setdefault("dense_rounds", 0)
    stats["bytes_between_gpus"] = 0
    off = np.asarray(graph.in_offsets, np.int64)
    stats["gpu_arcs"] = [int(off[s.v1] - off[s.v0]) for s in shards]
    stats["gpu_vertices"] = [s.v1 - s.v0 for s in shards]
    has = system.arc_scale is not None
    ex = _Exchange(shards, "p2p", stats)
    stats["exchange"] = "host (simulator)" if be0.sim else "p2p"
    works, kept, ok = None, False, False
    try:
        aa = anderson_for(settings, g1, n, m, trip, stats)
        mem = aa.memory
        sig = (tuple(devices), tuple(int(b) for b in bounds), n, mem,
               None if group is None else G, settings)
        works, kept, reused = _kept_work(graph, shards, sig, settings, mem)
        stats["gpu_work_kept"] = reused
        for s, w in zip(shards, works):
            s.w = w
            s.tag = id(w)  # the launches' tags: the same for the next run's kept arrays
        vkey = _vector_key(system)

        def arrays(s):
            return _shard_arrays(s, graph, system, has, settings, group, mem, vkey)
        if reused and not has and _same_vectors(works[0].get("vkey"), vkey):
            # only launches and copies on the GPUs: no host thread a GPU
            sums = []
            for s in shards:
                with s.switch():
                    sums.append(arrays(s))
        else:
            sums = _parallel(shards, arrays)
        kind = ["cusparse" if s.d.get("sparse") is not None else
                "binned" if s.d["binned"] else "grouped" for s in shards]
        stats["power_pull"] = (kind[0] if len(set(kind)) == 1 else
                               ", ".join(f"{kd} on {i}" for i, kd in enumerate(kind)))
        converged = _rounds(shards, ex, K, HB, has, g1, sum(sums), n, m, tol, max_iter, stats,
                            trip, settings, t0, aa)
        anderson_stats(aa, mem, stats)
        t0 = time.perf_counter()
        out = _gather(shards, n)
        stats["time_gather"] = time.perf_counter() - t0
        ok = True
        return out.view(SumNormalized), converged
    finally:
        ex.close()
        if kept and not ok:  # the kept work may be half made: made again by the next run
            _forget_work(graph, works)
            kept = False
        _retain(shards, kept)


def _rounds(shards, ex, K, HB, has, g1, sx0, n, m, tol, max_iter, stats, trip, settings, t0,
            aa):
    from ..smx import cuda_anderson as A
    sim = shards[0].be.sim
    k = len(shards)
    mem = aa.memory
    w = 5 + 2 * mem  # the width of a shard's accumulator (_shard_arrays)
    sum_slot = 4 + 2 * mem
    mix_terms = k
    counts = [s.v1 - s.v0 for s in shards]
    zs = [s.z for s in shards]
    u = np.finfo(np.float64).eps / 2
    blocks = k  # the host's sums of the shards' partial sums
    packed = k > 1 and sum(int(s.nz.size) for s in shards) <= settings.pack_share * n
    stats["power_packed"] = packed
    if packed:
        _pack(shards, ex, settings)
    for s in shards:
        nl = s.v1 - s.v0
        be = s.be
        s.grid_tel = max(1, min(be.grid_hb(nl), settings.blocks_per_sm * be.sms))
        s.grid_aa = max(1, min(be.grid_hb(nl), settings.anderson_blocks_per_sm * be.sms))
        mix_terms += s.grid_aa + 8 + -(-nl // (s.grid_aa * HB))
        pulls = (s.grid_tel if s.d.get("sparse") is not None else
                 sum(g for _, _, g in s.d["bins"]) + min(int(s.d["hubs"].size), 65535))
        blocks += pulls + s.grid_tel
        if not sim:
            cu = s.w.get("cuda")
            if cu is None or len(cu["lanes"]) != k:  # made once, kept with the work
                import cupyx
                with s.on():
                    xp = be.xp
                    cu = s.w["cuda"] = {
                        "pinned": cupyx.empty_pinned(2 * w, np.float64),
                        "read_ev": xp.cuda.Event(disable_timing=True),
                        "ready_ev": xp.cuda.Event(disable_timing=True),  # z of the range: final
                        # pull start (after the wait for the copies into it), pull end, teleport
                        # start and end, the wait's start
                        "ev": [xp.cuda.Event() for _ in range(5)],
                        "lanes": [_comm_stream(xp) for _ in shards],
                        "done": [xp.cuda.Event(disable_timing=True) for _ in shards]}
            s.pinned, s.read_ev, s.ready_ev = cu["pinned"], cu["read_ev"], cu["ready_ev"]
            s.ev, s.lanes, s.done = cu["ev"], cu["lanes"], cu["done"]
            s.tel_ev = s.ev[3]

    def queue_pull(slot):
        """Every shard's pull into ``acc[slot]`` once the copies into it are done, then its sums
        read back (pinned, async)."""
        for h, s in enumerate(shards):
            with s.switch():
                sim or s.ev[4].record()
                if not sim and st["copied"]:
                    null = s.be.xp.cuda.Stream.null
                    for g in range(k):
                        if g != h:
                            null.wait_event(s.done[g])
                sim or s.ev[0].record()
                _pull(s.be, K, HB, s, has, s.acc[slot])
                sim or s.ev[1].record()
                if sim:
                    s.pinned = np.array(s.accbuf)
                else:
                    s.accbuf.get(out=s.pinned, blocking=False)
                    s.read_ev.record()

    def read(teleported):
        """The shards' sums ([s, e, diff, sy] of slot 0, then of slot 1), once the pull queued
        last has run; its kernel times (and those of the teleport before it) are added up."""
        rows = []
        t_wait = time.perf_counter()
        for s in shards:
            if not sim:
                s.read_ev.synchronize()
        st["wait"] += time.perf_counter() - t_wait
        for s in shards:
            if not sim:
                ms = s.be.xp.cuda.get_elapsed_time
                s.busy += ms(s.ev[0], s.ev[1]) / 1e3
                s.waited += ms(s.ev[4], s.ev[0]) / 1e3
                if teleported:
                    s.busy += ms(s.ev[2], s.ev[3]) / 1e3
            rows.append(np.array(s.pinned))
        return np.array(rows).sum(axis=0)

    def read_now():
        """Every shard's accumulators now (Anderson's dots, the teleport's sums), summed."""
        rows = []
        for s in shards:
            with s.switch():
                if sim:
                    rows.append(np.array(s.accbuf))
                else:
                    s.accbuf.get(out=s.pinned, blocking=False)
                    s.read_ev.record()
        if not sim:
            t_wait = time.perf_counter()
            for s in shards:
                s.read_ev.synchronize()
            st["wait"] += time.perf_counter() - t_wait
            for s in shards:
                rows.append(np.array(s.pinned))
        return np.array(rows).sum(axis=0)

    def exchange():
        """Each range of ``z`` (its non-zero entries when packed) copied to every other GPU, queued
        on the copy streams after the range is final; the next pull on a GPU waits for the copies
        into it (:func:`queue_pull`)."""
        for s in shards:
            with s.switch():
                if packed:
                    s.be.launch(K.gather_at, s.grid_pack, HB, s.z_own, s.nz, s.send,
                                tag=(s.tag, 5))
                sim or s.ready_ev.record()
        if packed:
            stats["bytes_between_gpus"] += 8 * (k - 1) * sum(int(s.nz.size) for s in shards)
        else:
            ex._count(zs, counts)
        if sim:
            for g, s in enumerate(shards):
                for h, t in enumerate(shards):
                    if h != g:
                        if packed:
                            t.z[s.v0 + s.nz] = s.send[:s.nz.size]
                        else:
                            t.z[s.v0:s.v1] = s.z[s.v0:s.v1]
        else:
            ready = [s.ready_ev for s in shards]
            for h, t in enumerate(shards):
                with t.switch():
                    if packed:
                        _packed_into(h, shards, ex, K, HB, ready)
                    else:
                        ex.lanes_into(h, zs, counts, ready, t.lanes, t.done)
            st["copied"] = True

    st = {"k": 0, "sx": sx0, "copied": False, "mixed": False, "last_diff": np.inf, "wait": 0.0,
          "final": False}
    for s in shards:
        with s.switch():
            s.accbuf.fill(0.0)
            if packed and k > 1:  # the entries not copied: z = src_scale ∘ x = 0 there
                s.z[:s.v0].fill(0.0)
                s.z[s.v1:].fill(0.0)
    if k > 1:
        exchange()  # z of the start, everywhere (a round's exchange: no host wait)
    queue_pull(0)
    st["sums"] = read(False)
    stats["time_setup"] = time.perf_counter() - t0
    t_rounds = time.perf_counter()

    def step():
        kk = st["k"]
        slot, nxt = kk % 2, (kk + 1) % 2
        if st["final"]:  # not reached: a round found final ends the run (the driver's stop)
            st["final"] = False
            exchange()
            queue_pull(slot)
            st["sums"] = read(False)  # its teleport's kernel time was added when it was found
        sums = st["sums"]
        s_k, e_k = sums[w * slot], sums[w * slot + 1]
        sx, sx_err = st["sx"], 0.0
        if st["mixed"]:  # the iterate pulled is a mix: its own sum, with its rounding
            sx = sums[w * slot + sum_slot]
            sx_err = 2 * u * mix_terms * sx
        c = 1.0 - s_k
        rec = aa.record_slot() if aa.memory else None
        for s in shards:
            with s.switch():
                sim or s.ev[2].record()
                s.be.launch(K.power_teleport_given, s.grid_tel, HB, c, s.y, s.tele, s.x,
                            s.src_scale, s.z_own, s.acc[slot], s.acc[nxt], tag=(s.tag, 4, slot))
                if aa.memory:
                    j, cnt = rec if rec is not None else (0, 0)
                    s.be.launch(A.anderson_record, s.grid_aa, HB, s.x, s.y, s.fprev, s.gprev,
                                s.dF, s.dG, int(rec is not None), j, cnt, s.acc[slot], 4,
                                tag=(s.tag, 7, slot))
                s.x, s.y = s.y, s.x
                sim or s.ev[3].record()
        gamma = None
        if aa.memory:  # the dots, Σ|Δ| and Σy now (a second synchronisation), then the mix
            got = read_now()
            diff, sy = got[w * slot + 2], got[w * slot + 3]
            delta = (u * (e_k + 2 * (s_k + abs(c) + sy) + (blocks + 8) * (s_k + sy))
                     + 2 * abs(sx - 1.0) + sx_err + abs(sy - 1.0))
            bound = (g1 * diff + delta) * (1.0 + ROUNDING_MARGIN) / (1.0 - g1)
            goes_on = (kk + 1 < max_iter and
                       not stop(bound, delta, diff, st["last_diff"], g1, tol, {}))
            if goes_on:  # the mix replaces x in place: only when no stop can follow this round
                cnt = 0 if rec is None else rec[1]
                gamma = aa.solve(diff, None if rec is None else got[w * slot + 4:][:cnt],
                                 None if rec is None else got[w * slot + 4 + mem:][:cnt])
            if gamma is not None:
                cs = A.mix_scalars(gamma)
                for s in shards:
                    with s.switch():
                        s.be.launch(A.anderson_mix, s.grid_aa, HB, s.x, s.dG, *cs, s.src_scale,
                                    s.z_own, s.acc[nxt], sum_slot, tag=(s.tag, 8, nxt))
            if not goes_on:  # the driver stops here on this same bound: no exchange, no pull
                for s in shards:
                    if not sim:  # read_now waited for the teleport: its kernel time is known
                        s.busy += s.be.xp.cuda.get_elapsed_time(s.ev[2], s.ev[3]) / 1e3
                st.update(sx=sy, k=kk + 1, mixed=False, last_diff=diff, final=True)
                stats["power_last_pull_skipped"] = True
                return bound, delta, diff
        exchange()
        queue_pull(nxt)
        sums = st["sums"] = read(True)
        diff, sy = sums[w * slot + 2], sums[w * slot + 3]
        delta = (u * (e_k + 2 * (s_k + abs(c) + sy) + (blocks + 8) * (s_k + sy))
                 + 2 * abs(sx - 1.0) + sx_err + abs(sy - 1.0))
        st.update(sx=sy, k=kk + 1, mixed=gamma is not None, last_diff=diff)
        return (g1 * diff + delta) * (1.0 + ROUNDING_MARGIN) / (1.0 - g1), delta, diff

    if n == 0:
        rounds, converged = 0, True
        stats["error_bound"] = 0.0
    else:
        rounds, converged = driver.power(step, g1=g1, tol=tol, max_iter=max_iter, stats=stats,
                                         trip=trip)
    wall = time.perf_counter() - t_rounds
    stats["time_rounds"] = wall
    stats["time_sync_wait"] = st["wait"]
    stats["rounds"] += rounds
    stats["dense_rounds"] += rounds
    stats["arc_updates"] += rounds * m
    stats["vertex_updates"] += rounds * n
    if sim:  # no clocks: the arc shares of the rounds' time
        arcs = np.array(stats["gpu_arcs"], np.float64)
        busy = list(wall * arcs / max(arcs.sum(), 1.0))
    else:
        busy = [s.busy for s in shards]
        stats["gpu_exchange_wait_s"] = [s.waited for s in shards]
    stats["gpu_busy_s"] = busy
    stats["gpu_idle_share"] = [max(0.0, 1.0 - b / wall) if wall > 0 else 0.0 for b in busy]
    return converged
