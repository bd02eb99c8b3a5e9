"""The GPU path modes' rounds queued on the device (:mod:`digraph.dispatch.engines.path.gpu`):
a round is two launches, the walk (:func:`path_linear_round`, :func:`path_monotone_round`) and the
control (:func:`path_round_control`), and the host reads the control words every few rounds, the
one synchronisation.

Driving each round from the host (the priority histogram, ``bincount`` and a copy back; the
compaction of the chosen units; the per-layer sums of the units' arcs sent, a ``cumsum`` and a
copy back; the counters) would cost more CuPy work and two synchronisations a round, more than
the walk itself (measured: docs/history/benchmarks-notebook.md, "The GPU path mode: where its
time goes").  Here the walk does that bookkeeping as it goes and the control kernel decides the
next round on the device, with the rules of a host loop:

* a round walks every unit of the unfinished layers (``layer_units[lo]`` on), or, under
  priority, those whose score is at least the threshold ``fctl[MIN_SCORE]``;
* the walk adds each unit's score to a histogram of log2 buckets; the control kernel takes the
  highest buckets holding ``share`` of the scored units as the next threshold (DiGraph's soft
  priority; every ``aging``-th round of a layer walks all, and with fewer than ``min_units``
  units it walks all);
* after a round that walked all, the layers that sent nothing are finished (layers finish in
  order) and ``lo`` moves past them;
* the pending mass ``Σ unit_pend`` of the unfinished units is the stall level: no fall below
  0.999 of its best for ``stall_rounds`` rounds stops the sweep (the mirrors' rounding floor);
* the rounds stop at ``max_iter``, when every layer is finished, or when the pending mass is
  within the sweep's budget (``fctl[BUDGET]``; the host then certifies the answer from its exact
  residual, and a sweep that fails goes on with a budget 4× lower).  Waiting for every layer to
  finish instead asks every arc's ``|d|`` to fall below ``θ = budget / m``, an L∞ test
  ``log(m) / log(1/α)`` rounds stricter than the L1 bound needs
  (docs/history/benchmarks-notebook.md, "Rounds queued on the device").

Counters accumulate on the device (``ctl[SENT]``, ``ctl[EXAMINED]``, ``ctl[PATHS]``,
``ctl[UNITS]``, ``ctl[ROUNDS]``; per layer ``layer_rounds``, per unit ``unit_total``) and are read
once a sweep; a sweep starts with one launch (:func:`path_round_start`) and a run's per-layer
counters are summed in one (:func:`path_layer_sums`).

What a round costs beyond its arcs is kept small (``ncu``; measured:
docs/history/benchmarks-notebook.md, "The walk's fixed costs"): a walk block's counters are
summed by warp shuffles, not by shared-memory atomics of every thread on the same five words
(the float64 one a compare-and-swap loop), and the control kernel finds the threshold's bucket
with a suffix scan over its threads, not by one thread walking the buckets' chunk sums.
"""

import math

from numba import cuda, float64, int32, int64

from .common import SIM, HB, block_sum
from .walks import PROXY_SLOTS, walk_linear_unit, walk_monotone_unit

__all__ = []

HBINS = 2201
"""Buckets of the priority histogram: a score's binary exponent + :data:`HOFF`, clipped (the host
loop's ``frexp`` buckets)."""
HOFF = 1100

# the int64 control words
LO, ROUNDS, HERE, FULL, DONE, STALLED, SINCE, SENT, EXAMINED, PATHS, UNITS, MAX_ROUNDS = range(12)
NCTL = 12
# the float64 control words
THETA, MIN_SCORE, BEST, PEND, BUDGET = range(5)
NFCTL = 5


@cuda.jit(device=True, inline=True)
def _bucket(sc):
    """The histogram bucket of a score ``sc > 0``: ``frexp(sc)[1] + HOFF``, clipped."""
    e = int(math.floor(math.log2(sc))) + 1 + HOFF
    return min(max(e, 0), HBINS - 1)


WARPS = 32
"""Warps a walk block may have (the counters' shared scratch: five words a warp)."""
_WARP_INTS = 4 * WARPS  # a shared array's shape must be a global constant

if SIM:  # the simulator has no warp shuffles: every thread adds into shared memory
    @cuda.jit(device=True, inline=True)
    def _add_counts(ctl, fctl, sh_n, sh_p, sent, arcs, paths, units, pend):
        """The block's counters into the control words (simulator: shared atomics)."""
        cuda.atomic.add(sh_n, 0, sent)
        cuda.atomic.add(sh_n, 1, arcs)
        cuda.atomic.add(sh_n, 2, paths)
        cuda.atomic.add(sh_n, 3, units)
        cuda.atomic.add(sh_p, 0, pend)
        cuda.syncthreads()
        if cuda.threadIdx.x == 0:
            _publish(ctl, fctl, sh_n[0], sh_n[1], sh_n[2], sh_n[3], sh_p[0])
else:
    @cuda.jit(device=True, inline=True)
    def _add_counts(ctl, fctl, sh_n, sh_p, sent, arcs, paths, units, pend):
        """The block's counters into the control words: each warp's sums by shuffles into
        shared memory, thread 0 adds the warps' and makes one global atomic a counter a block.
        (Not five shared-memory atomics a thread on the same five words: the float64 one is a
        compare-and-swap loop, a large share of a small graph's walk.)"""
        off = 16
        while off > 0:
            sent += cuda.shfl_xor_sync(0xFFFFFFFF, sent, off)
            arcs += cuda.shfl_xor_sync(0xFFFFFFFF, arcs, off)
            paths += cuda.shfl_xor_sync(0xFFFFFFFF, paths, off)
            units += cuda.shfl_xor_sync(0xFFFFFFFF, units, off)
            pend += cuda.shfl_xor_sync(0xFFFFFFFF, pend, off)
            off //= 2
        tid = cuda.threadIdx.x
        w = tid // 32
        if tid % 32 == 0:
            sh_n[4 * w] = sent
            sh_n[4 * w + 1] = arcs
            sh_n[4 * w + 2] = paths
            sh_n[4 * w + 3] = units
            sh_p[w] = pend
        cuda.syncthreads()
        if tid == 0:
            for q in range(1, (cuda.blockDim.x + 31) // 32):
                sent += sh_n[4 * q]
                arcs += sh_n[4 * q + 1]
                paths += sh_n[4 * q + 2]
                units += sh_n[4 * q + 3]
                pend += sh_p[q]
            _publish(ctl, fctl, sent, arcs, paths, units, pend)


@cuda.jit(device=True, inline=True)
def _publish(ctl, fctl, sent, arcs, paths, units, pend):
    """A block's counters added to the control words (one thread)."""
    cuda.atomic.add(ctl, SENT, sent)
    cuda.atomic.add(ctl, EXAMINED, arcs)
    cuda.atomic.add(ctl, PATHS, paths)
    cuda.atomic.add(ctl, UNITS, units)
    if pend != 0.0:
        cuda.atomic.add(fctl, PEND, pend)


@cuda.jit(cache=True)
def path_linear_round(ctl, fctl, layer_units, unit_layer, unit_offsets, unit_paths, src, dst,
                      coef, s, x, hub_slot, hubs, use_proxy, rule, unit_heat, score, unit_sent,
                      unit_pend, unit_total, layer_any, hist, want_hist):
    """One round of the path engine on a linear system, over the units of the unfinished layers
    (grid-stride; nothing once ``ctl[DONE]``).

    ``score`` is ``unit_pend`` itself under ``rule`` 1 (pending) and a array of its own under
    rule 2 (the paper's ``D̄ · N``: ``unit_heat`` times the arcs sent).  Writes ``unit_sent``,
    ``unit_pend`` and, for rule 2, ``score`` of each unit it walks (a deferred unit's ``unit_sent``
    and rule-2 score become 0); adds the arcs sent to ``unit_total``, marks ``layer_any`` of a
    layer that sent, and, when ``want_hist``, each scored unit's bucket to ``hist``.
    """
    proxy = cuda.shared.array(PROXY_SLOTS, float64)
    sh_hist = cuda.shared.array(HBINS, int32)
    sh_n = cuda.shared.array(_WARP_INTS, int64)
    sh_p = cuda.shared.array(WARPS, float64)
    if ctl[DONE] != 0:
        return
    tid = cuda.threadIdx.x
    bd = cuda.blockDim.x
    for i in range(tid, PROXY_SLOTS, bd):
        proxy[i] = 0.0
    if want_hist:
        for i in range(tid, HBINS, bd):
            sh_hist[i] = 0
    if tid < 4:
        sh_n[tid] = 0
    if tid == 0:
        sh_p[0] = 0.0
    cuda.syncthreads()
    full = ctl[FULL] != 0
    theta = fctl[THETA]
    ms = fctl[MIN_SCORE]
    nunits = unit_sent.size
    sent_all = 0
    arcs = 0
    paths = 0
    units = 0
    pend_all = 0.0
    k = layer_units[ctl[LO]] + cuda.grid(1)
    step = cuda.gridsize(1)
    while k < nunits:
        if full or score[k] >= ms:
            a = unit_offsets[k]
            b = unit_offsets[k + 1]
            sent, pend = walk_linear_unit(a, b, src, dst, coef, s, x, theta, hub_slot,
                                          use_proxy, proxy)
            unit_sent[k] = sent
            unit_pend[k] = pend
            if sent > 0:
                unit_total[k] += sent
                lay = unit_layer[k]
                if layer_any[lay] == 0:  # a plain store, once: no atomic queue on one word
                    layer_any[lay] = 1
            if rule == 2:
                score[k] = unit_heat[k] * sent
            sent_all += sent
            arcs += b - a
            paths += unit_paths[k]
            units += 1
        else:
            unit_sent[k] = 0
            if rule == 2:
                score[k] = 0.0
        pend_all += unit_pend[k]
        if want_hist:
            sc = score[k]
            if sc > 0.0:
                cuda.atomic.add(sh_hist, _bucket(sc), 1)
        k += step
    _add_counts(ctl, fctl, sh_n, sh_p, sent_all, arcs, paths, units, pend_all)
    if use_proxy:  # flush the block's proxies to their masters
        for i in range(tid, min(PROXY_SLOTS, hubs.size), bd):
            p = proxy[i]
            if p != 0.0:
                cuda.atomic.add(x, hubs[i], p)
    if want_hist:
        for i in range(tid, HBINS, bd):
            c = sh_hist[i]
            if c != 0:
                cuda.atomic.add(hist, i, c)


@cuda.jit(cache=True)
def path_monotone_round(ctl, fctl, layer_units, unit_layer, unit_offsets, unit_paths, src, dst,
                        value, has_value, op, combine, s, x, unit_total, layer_any):
    """One round of the path engine on a min/max system over the units of the unfinished layers
    (grid-stride; nothing once ``ctl[DONE]``): every unit walked, ``unit_total`` and
    ``layer_any`` as in :func:`path_linear_round`."""
    sh_n = cuda.shared.array(_WARP_INTS, int64)
    sh_p = cuda.shared.array(WARPS, float64)
    if ctl[DONE] != 0:
        return
    tid = cuda.threadIdx.x
    if tid < 4:
        sh_n[tid] = 0
    if tid == 0:
        sh_p[0] = 0.0
    cuda.syncthreads()
    nunits = unit_total.size
    sent_all = 0
    arcs = 0
    paths = 0
    units = 0
    k = layer_units[ctl[LO]] + cuda.grid(1)
    step = cuda.gridsize(1)
    while k < nunits:
        a = unit_offsets[k]
        b = unit_offsets[k + 1]
        sent = walk_monotone_unit(a, b, src, dst, value, has_value, op, combine, s, x)
        if sent > 0:
            unit_total[k] += sent
            lay = unit_layer[k]
            if layer_any[lay] == 0:
                layer_any[lay] = 1
        sent_all += sent
        arcs += b - a
        paths += unit_paths[k]
        units += 1
        k += step
    _add_counts(ctl, fctl, sh_n, sh_p, sent_all, arcs, paths, units, 0.0)


CT = 8 if SIM else 256
"""Threads of the control kernel (one block; 8 in the simulator, which runs a thread each)."""


@cuda.jit(cache=True)
def path_round_control(ctl, fctl, layer_units, layer_any, layer_rounds, hist, rule, share,
                       min_units, aging, stall_rounds, want_hist):
    """After a round (one block, nothing once ``ctl[DONE]``): count the round, finish the layers
    that sent nothing after a round that walked all, watch the stall level, choose the next
    round's priority threshold from ``hist`` (then cleared), and set ``ctl[DONE]`` when every
    layer is finished, the sweep stalled, ``ctl[MAX_ROUNDS]`` rounds ran or the round's pending
    mass fell to ``fctl[BUDGET]``.  Every value that changes between sweeps is a control word,
    so a CUDA graph of the launches stays valid."""
    sh_i = cuda.shared.array(2, int64)
    sh_c = cuda.shared.array(CT, int64)
    sh_f = cuda.shared.array(2, float64)  # the round's pending mass, the next threshold
    if ctl[DONE] != 0:
        return
    tid = cuda.threadIdx.x
    bd = cuda.blockDim.x
    L = layer_rounds.size
    lo = ctl[LO]
    for lay in range(lo + tid, L, bd):
        if layer_any[lay] != 0:
            layer_rounds[lay] += 1
    cuda.syncthreads()
    if tid == 0:
        ctl[ROUNDS] += 1
        here = ctl[HERE] + 1
        nlo = lo
        if ctl[FULL] != 0:  # layers finish in order: nothing sent after every lower one finished
            while nlo < L and layer_any[nlo] == 0:
                nlo += 1
                here = 0
        level = fctl[PEND]
        sh_f[0] = level
        fctl[PEND] = 0.0
        if level < 0.999 * fctl[BEST]:
            fctl[BEST] = level
            ctl[SINCE] = 0
        else:
            ctl[SINCE] += 1
            if ctl[SINCE] >= stall_rounds:
                ctl[STALLED] = 1
        ctl[LO] = nlo
        ctl[HERE] = here
        prio = (rule != 0 and want_hist and here % aging != aging - 1 and here > 0
                and nlo < L and layer_units[L] - layer_units[nlo] >= min_units)
        sh_i[0] = nlo
        sh_i[1] = 1 if prio else 0
    cuda.syncthreads()
    for lay in range(lo + tid, L, bd):
        layer_any[lay] = 0
    nlo = sh_i[0]
    prio = sh_i[1] != 0
    chunk = (HBINS + bd - 1) // bd
    if prio:  # thread t's chunk of buckets, then the counts from chunk t up (a suffix scan)
        c = 0
        for i in range(tid * chunk, min((tid + 1) * chunk, HBINS)):
            c += hist[i]
        sh_c[tid] = c
        cuda.syncthreads()
        off = 1
        while off < bd:
            c = sh_c[tid + off] if tid + off < bd else 0
            cuda.syncthreads()
            sh_c[tid] += c
            cuda.syncthreads()
            off *= 2
        total = sh_c[0]
        target = share * total
        above = sh_c[tid + 1] if tid + 1 < bd else 0
        # the chunk where the count from the top reaches ``target``: its thread finds the bucket
        if total >= min_units and (sh_c[tid] >= target or tid == 0) and \
                (above < target or tid == bd - 1):
            acc = above
            i = min((tid + 1) * chunk, HBINS) - 1
            while i > 0:
                acc += hist[i]
                if acc >= target:
                    break
                i -= 1
            sh_f[1] = 2.0 ** (i - HOFF - 1)
    cuda.syncthreads()
    if tid == 0:
        ms = 0.0
        if prio and sh_c[0] >= min_units:
            ms = sh_f[1]
        fctl[MIN_SCORE] = ms
        ctl[FULL] = 0 if ms > 0.0 else 1
        if nlo >= L or ctl[STALLED] != 0 or ctl[ROUNDS] >= ctl[MAX_ROUNDS] or \
                sh_f[0] <= fctl[BUDGET]:
            ctl[DONE] = 1
    cuda.syncthreads()
    if want_hist:
        for i in range(tid, HBINS, bd):
            hist[i] = 0


@cuda.jit(cache=True)
def path_round_start(ctl, fctl, hist, layer_any, max_rounds, theta, budget, done):
    """A sweep's start in one launch (grid-stride, any grid): every control word reset
    (``ctl[FULL]`` 1, ``ctl[DONE]`` ``done``, at most ``max_rounds`` rounds, ``fctl`` = θ, 0, ∞,
    0, ``budget``), the histogram and the layers' marks cleared."""
    for k in range(cuda.grid(1), max(hist.size, layer_any.size, NCTL), cuda.gridsize(1)):
        if k < NCTL:
            ctl[k] = 1 if k == FULL else done if k == DONE else max_rounds if k == MAX_ROUNDS else 0
        if k < NFCTL:
            fctl[k] = theta if k == THETA else math.inf if k == BEST else budget if k == BUDGET \
                else 0.0
        if k < hist.size:
            hist[k] = 0
        if k < layer_any.size:
            layer_any[k] = 0


@cuda.jit(cache=True)
def path_layer_sums(layer_units, unit_total, layer_rounds, out):
    """The per-layer counters of a run (a block a layer, :data:`HB` threads): ``out[l]`` the
    rounds layer ``l`` sent in, ``out[L + l]`` the arcs its units sent (their totals summed)."""
    buf = cuda.shared.array(HB, float64)
    L = layer_rounds.size
    for lay in range(cuda.blockIdx.x, L, cuda.gridDim.x):
        acc = 0.0
        for k in range(layer_units[lay] + cuda.threadIdx.x, layer_units[lay + 1],
                       cuda.blockDim.x):
            acc += unit_total[k]
        acc = block_sum(buf, acc)
        if cuda.threadIdx.x == 0:
            out[lay] = layer_rounds[lay]
            out[L + lay] = acc
