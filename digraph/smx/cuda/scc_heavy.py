"""CUDA kernels of the SCC engine's heavy components (the giant component of a web graph; see
:mod:`digraph.smx.cuda.scc` and :mod:`digraph.dispatch.engines.scc.gpu`).

A heavy group (a phase's heavy components, positions ``pos``) starts with :func:`scc_pull_list`
(``r_j = b_j + Σ c·x_u`` over the in-arcs from finished components), then runs push rounds over
the whole GPU, :data:`G` threads a vertex sharing its out-arcs: a vertex pushes when
``|r_j| > deg_j · max(prio · mass / arcs, budget / arcs)`` (the soft priority of the CPU engine,
``mass`` the previous round's), and the group stops once a round's mass is within ``budget``.

Two ways to run the rounds, the same arithmetic (:func:`_push_round`):

* :func:`scc_heavy_rounds`: **one launch for all the rounds**, a grid barrier between rounds
  (:func:`grid_barrier`: an arrival counter, so the grid must be resident at once, as the light
  phase's queue kernel must be); the device decides the stop.  A round then costs its work and a
  barrier, not a launch from the host (measured: docs/history/benchmarks-notebook.md, "The heavy
  rounds profiled: the longest chain of pushes").
* :func:`scc_round`: one launch a round, queued by the host without a synchronisation (the
  device decides the stop from ``ctl``, so rounds queued past the end do nothing).

``ctl[0:3]`` hold each round's mass (Σ|r| as its threads read it, before they push: an upper bound
of the mass it leaves, for ``A`` with column sums below 1) by ``k % 3``, ``ctl[3:6]`` its largest
residual (the L∞ route only); round ``k`` adds its own and zeroes round ``k + 1``'s slots, so a
round's slots are never zeroed while a late block still reads them.  ``ctl[6]`` is the outcome: 1
done, −1 stopped by ``max_rounds`` (the persistent kernel); ``ctl[7]`` the rounds the persistent
kernel ran.
"""

import math

from numba import cuda, float64, int64

from .common import SIM, HB, block_sum
from .scc_blocks import CAPPED, PUSHES, ROUNDS, VERTEX_PUSHES, G, arc_coef, from_leader
from .common import block_max
from .timers import globaltimer, load_relaxed

__all__ = ["TB", "BIG_OUT", "HEAVY_BLOCKS_PER_SM", "scc_pull_list", "scc_round", "scc_heavy_rounds"]

TB = HB
"""Threads per block of the heavy rounds (a power of two: tree reductions)."""

BIG_OUT = 4 if SIM else 64
"""Out-arcs inside its group above which a heavy vertex is pushed by a whole block."""
HEAVY_BLOCKS_PER_SM = 8
"""Blocks of :func:`scc_heavy_rounds` the compiler must fit on a multiprocessor (its launch
bounds), so that a grid of this many blocks a multiprocessor is surely resident at once."""


@cuda.jit(cache=True)
def scc_pull_list(pos, ein_off, ein_src, ecoef, has_coef, vscale, b, x, r):
    """``r_j = b_j + Σ c·x_u`` over the in-arcs from other components of the positions ``pos``
    (a heavy group's start: its inputs are final)."""
    i = cuda.grid(1)
    if i < pos.size:
        j = pos[i]
        s = b[j]
        for k in range(ein_off[j], ein_off[j + 1]):
            u = ein_src[k]
            s += arc_coef(k, ecoef, has_coef, vscale, u) * x[u]
        r[j] = s


@cuda.jit(device=True, inline=True)
def _push_vertex(j, d, lane, width, theta, vmax, iout_off, iout_tgt, icoef, has_coef, vscale, x,
                 r):
    """Push residual ``d`` of position ``j`` if it is above ``theta`` times its out-degree and
    ``vmax``: lanes ``lane, lane + width, …`` of its group share its out-arcs, lane 0 moves ``d``
    into ``x[j]``.  Returns the arcs pushed, −1 if it did not push."""
    lo = iout_off[j]
    hi = iout_off[j + 1]
    if not (abs(d) > theta * (hi - lo) and abs(d) > vmax):
        return -1
    if lane == 0:
        x[j] += d
        cuda.atomic.add(r, j, -d)
    for e in range(lo + lane, hi, width):
        cuda.atomic.add(r, iout_tgt[e], arc_coef(e, icoef, has_coef, vscale, j) * d)
    return hi - lo


@cuda.jit(device=True, inline=True)
def _tally(got, top, sent, vs, d, arcs):
    """A vertex's residual ``d`` and pushed ``arcs`` (−1: none) added to a lane's totals."""
    if arcs >= 0:
        return got + abs(d), max(top, abs(d)), sent + arcs, vs + 1
    return got + abs(d), max(top, abs(d)), sent, vs


@cuda.jit(device=True, inline=True)
def _push_round(buf, k, theta, pos, npos, big, nbig, iout_off, iout_tgt, icoef, has_coef, vscale, x,
                r, ctl, vmax, linf, cnt):
    """Round ``k`` of a heavy group with threshold ``theta`` (per out-arc): each vertex reads its
    residual once (a relaxed load: other blocks' pushes land in L2, not in this one's L1), pushes
    it if it is above ``theta`` times its out-degree and ``vmax``, and the block adds what its
    vertices held to ``ctl[k % 3]`` (and, on the L∞ route, their largest to ``ctl[3 + k % 3]``:
    a float64 atomic maximum is a compare-and-swap loop, which a few hundred blocks contend for,
    so the L1 route, whose stop reads the mass only, does without it).

    The ``nbig`` positions ``big`` (more than :data:`BIG_OUT` out-arcs) are pushed by a whole
    block each, the ``npos`` others (``pos``) by :data:`G` threads each: a round lasts as long as
    its longest chain of pushes (a push loads the arc's target, then adds to it), so a vertex of
    many out-arcs among :data:`G` threads would hold every round of its group to a long chain.

    Returns this thread's (arcs pushed, vertices pushed): the caller adds them to ``cnt`` (a
    block sum and two atomics on one address from every block: once a launch, not a round).

    (Pushes into a group's hub targets are not added up per block in shared memory, one global
    atomic a hub and block at the round's end: that was slower; measured:
    docs/history/benchmarks-notebook.md, "The heavy rounds profiled: the longest chain of
    pushes".)"""
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    if i == 0:
        ctl[(k + 1) % 3] = 0.0
        ctl[3 + (k + 1) % 3] = 0.0
        cuda.atomic.add(cnt, ROUNDS, 1)
    got = 0.0
    top = 0.0
    sent = 0
    vs = 0
    nt = npos * G
    stride = cuda.gridDim.x * cuda.blockDim.x
    sub = i % G
    for b in range(cuda.blockIdx.x, nbig, cuda.gridDim.x):  # the same in every thread of a block
        j = big[b]
        if tid == 0:
            buf[0] = load_relaxed(r, j)
        cuda.syncthreads()
        d = buf[0]
        cuda.syncthreads()
        arcs = _push_vertex(j, d, tid, cuda.blockDim.x, theta, vmax, iout_off, iout_tgt, icoef,
                            has_coef, vscale, x, r)
        if tid == 0:
            got, top, sent, vs = _tally(got, top, sent, vs, d, arcs)
    for t in range((nt + stride - 1) // stride):  # as many times in every thread (shuffles)
        v = (i + t * stride) // G
        d = 0.0
        j = 0
        if v < npos:
            j = pos[v]
            if sub == 0:
                d = load_relaxed(r, j)
        d = from_leader(buf, d)  # one read of r[j] for the group
        if v < npos:
            arcs = _push_vertex(j, d, sub, G, theta, vmax, iout_off, iout_tgt, icoef, has_coef,
                                vscale, x, r)
            if sub == 0:
                got, top, sent, vs = _tally(got, top, sent, vs, d, arcs)
    if linf:
        top = block_max(buf, top)
    total = block_sum(buf, got)
    if tid == 0:
        cuda.atomic.add(ctl, k % 3, total)
        if linf:
            cuda.atomic.max(ctl, 3 + k % 3, top)
    return sent, vs


@cuda.jit(device=True, inline=True)
def _count(buf, cnt, sent, vs):
    """The block's pushed arcs and vertices (each thread's ``sent``, ``vs``) added to ``cnt``."""
    arcs_sent = block_sum(buf, float64(sent))
    pushed = block_sum(buf, float64(vs))
    if cuda.threadIdx.x == 0:
        cuda.atomic.add(cnt, PUSHES, int64(arcs_sent))
        cuda.atomic.add(cnt, VERTEX_PUSHES, int64(pushed))


@cuda.jit(device=True, inline=True)
def _theta(k, mass, prio, budget, arcs, linf):
    """Round ``k``'s threshold per out-arc, from the previous round's ``mass``."""
    return 0.0 if (linf or k == 0) else max(prio * mass / arcs, budget / arcs)


@cuda.jit(device=True, inline=True)
def _within(mass, top, budget, vmax, linf):
    """Whether a round that left ``mass`` (largest residual ``top``) ends the group."""
    return (top <= vmax) if linf else (mass <= budget)


@cuda.jit(cache=True)
def scc_round(k, pos, npos, big, nbig, iout_off, iout_tgt, icoef, has_coef, vscale, x, r, ctl,
              budget, arcs, vmax, linf, prio, cnt):
    """Round ``k`` of a heavy group, one launch (``arcs`` arcs inside, stop at ``budget``).

    The first round that finds round ``k − 1`` within the budget sets ``ctl[6]`` (done, sticky:
    the slots stop rotating then, so a later round must not read them), and every round from then
    on does nothing, so rounds can be queued past the end."""
    buf = cuda.shared.array(HB, float64)
    if ctl[6] > 0.0:  # done: a round found the group within its budget
        return
    mass = math.inf
    if k > 0:
        mass = ctl[(k + 2) % 3]
        if _within(mass, ctl[3 + (k + 2) % 3], budget, vmax, linf):
            if cuda.grid(1) == 0:
                ctl[6] = 1.0  # sticky: the slots are no longer rotated
            return
    sent, vs = _push_round(buf, k, _theta(k, mass, prio, budget, arcs, linf), pos, npos, big,
                           nbig, iout_off, iout_tgt, icoef, has_coef, vscale, x, r, ctl, vmax,
                           linf, cnt)
    _count(buf, cnt, sent, vs)


@cuda.jit(device=True, inline=True)
def grid_barrier(bar, target):
    """Wait until ``target`` blocks have arrived at ``bar[0]`` (this one included): the grid's
    barrier, with a fence on each side so that what a block wrote before it is seen after it."""
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        cuda.threadfence()
        cuda.atomic.add(bar, 0, 1)
        while load_relaxed(bar, 0) < target:
            pass
        cuda.threadfence()
    cuda.syncthreads()


@cuda.jit(cache=True, **({} if SIM else {"launch_bounds": (TB, HEAVY_BLOCKS_PER_SM)}))
def scc_heavy_rounds(pos, npos, big, nbig, iout_off, iout_tgt, icoef, has_coef, vscale, x, r, ctl,
                     bar, budget, arcs, vmax, linf, prio, max_rounds, cnt, rtrace):
    """All the rounds of a heavy group in one launch (``bar[0]`` zero at the launch; every block
    resident at once): round after round, a grid barrier, then every thread reads the round's
    mass and decides alone, and alike, whether to stop.  Sets ``ctl[6]`` to 1 when done, −1 when
    ``max_rounds`` ran first, and ``ctl[7]`` to the rounds it ran (the host reads them once, at
    the run's end).

    ``rtrace`` (int64; one entry: off) receives rows of three: the GPU's nanosecond timer once
    the round's pushes are done (their barrier passed), once the round is done, and the arcs
    pushed so far (``cnt[PUSHES]``); row 0 the start, row ``k + 1`` round ``k``, as many as
    fit."""
    buf = cuda.shared.array(HB, float64)
    nb = cuda.gridDim.x
    mass = math.inf
    top = math.inf
    k = 0
    tracing = rtrace.size > 1  # then the counters are added each round: the trace reads them
    traced = cuda.grid(1) == 0 and tracing
    tpush = int64(0)
    sent_all = 0
    vs_all = 0
    if traced:
        rtrace[0] = globaltimer()
        rtrace[1] = rtrace[0]
        rtrace[2] = load_relaxed(cnt, PUSHES)
    while True:
        sent, vs = _push_round(buf, k, _theta(k, mass, prio, budget, arcs, linf), pos, npos,
                               big, nbig, iout_off, iout_tgt, icoef, has_coef, vscale, x, r, ctl,
                               vmax, linf, cnt)
        if tracing:
            _count(buf, cnt, sent, vs)
        else:
            sent_all += sent
            vs_all += vs
        grid_barrier(bar, nb * (k + 1))
        if traced:
            tpush = globaltimer()
        mass = load_relaxed(ctl, k % 3)
        top = load_relaxed(ctl, 3 + k % 3)
        k += 1
        if traced and 3 * k + 2 < rtrace.size:
            rtrace[3 * k] = tpush
            rtrace[3 * k + 1] = globaltimer()
            rtrace[3 * k + 2] = load_relaxed(cnt, PUSHES)
        if _within(mass, top, budget, vmax, linf) or k >= max_rounds:
            break
    _count(buf, cnt, sent_all, vs_all)  # zero when tracing: added each round
    if cuda.grid(1) == 0:
        ctl[7] = float64(k)
        if _within(mass, top, budget, vmax, linf):
            ctl[6] = 1.0
        else:
            ctl[6] = -1.0
            cuda.atomic.add(cnt, CAPPED, 1)
