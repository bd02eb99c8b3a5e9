"""Anderson-accelerated rounds of a heavy group of the GPU SCC engine
(``GpuSccSettings(heavy_anderson=m)``; :mod:`digraph.smx.cuda.scc_heavy` has the plain rounds).

The plain rounds push with the soft priority and let a round's pushes land while others read
(Gauss–Seidel-like, no history).  These are Jacobi rounds with Anderson acceleration
(Walker & Ni, SIAM J. Numer. Anal. 49(4), 2011; the light sweeps' method,
:mod:`digraph.smx.cuda.scc_sweeps`, over the whole GPU): every vertex of the group steps by

    δ_k = R_k − Σ_s γ_s (ΔX_s + ΔF_s),   γ = argmin ‖R_k − ΔF γ‖₂,

and writes it, scaled by its out-arcs' factor, to ``dpos``; the next round each vertex *gathers*
its in-arcs inside the group, ``R_{k+1} = R_k − δ_k + Σ c·δ_u`` (no atomics: :data:`G` lanes a
vertex, a block for one of more than :data:`BIG_IN` in-arcs).  A round has two grid barriers:
after the sums (``Σ|R|``, ``ΔFᵀR``, ``ΔFᵀΔF``: six float64 atomics a block into ``sums``, three
rotating slots of six sums in :data:`SPREAD` copies) and after the steps.  Every thread reads
the sums, stops when ``Σ|R| ≤ budget`` (the plain rounds' stop) and solves for ``γ`` alone and
alike.

The steps are gathered, not pushed with an atomic an arc: the atomics into one target queue
behind each other, so a round would last at least the busiest target's in-arcs times an
atomic's latency (measured: docs/history/benchmarks-notebook.md, "Anderson in the heavy
rounds").

The history lives in ``hist`` (float64, 5 rows × the group's vertices, by the vertex's index in
the group: ``spos`` first, then ``bpos``): row 0 ``R``, rows 1–2 ``ΔX`` of slots 0–1, rows 3–4
``ΔF``; step ``k`` takes slot ``k % mem``.  The L1 route only (the L∞ route keeps the plain
rounds).
"""

import math

from numba import cuda, float64, int64

from .common import SIM, HB, block_sum
from .power import group_sum
from .scc_blocks import CAPPED, PUSHES, ROUNDS, VERTEX_PUSHES, G
from .scc_heavy import HEAVY_BLOCKS_PER_SM, TB, grid_barrier
from .scc_sweeps import coefficients
from .timers import load_relaxed

__all__ = ["scc_heavy_anderson", "SUMS", "SPREAD", "BIG_IN"]

SPREAD = 8
"""Copies of each sum: block ``b`` adds to copy ``b % SPREAD`` (a thousand blocks adding to one
address queue behind each other), and every block adds the copies up in the same order."""
SUMS = 3 * 6 * SPREAD
"""Words of a heavy group's ``sums`` (three rotating slots of six sums in ``SPREAD`` copies)."""
BIG_IN = 4 if SIM else 64
"""In-arcs inside its group above which a vertex gathers with a whole block."""
_B6 = 6 * HB  # shared sizes must be plain constants


@cuda.jit(device=True, inline=True)
def _gathered(j, lane, width, hin_off, hin_src, hin_arc, icoef, has_coef, dpos):
    """This lane's share of ``Σ c·δ_u`` over position ``j``'s in-arcs inside the group (lanes
    ``lane, lane + width, …``); ``dpos`` holds ``δ_u`` scaled by ``u``'s factor, or ``δ_u`` with
    per-arc coefficients."""
    s = 0.0
    for e in range(hin_off[j] + lane, hin_off[j + 1], width):
        v = load_relaxed(dpos, hin_src[e])  # written by other blocks before the barrier
        s += icoef[hin_arc[e]] * v if has_coef else v
    return s


@cuda.jit(device=True, inline=True)
def _observe(j, li, k, mem, cnt, g, r, hist):
    """Round ``k``'s residual ``R_k`` of position ``j`` (index ``li`` in the group): the pulled
    inputs ``r[j]`` at round 0, else ``R_{k−1} − δ_{k−1} + g`` (``g`` the gathered shares), with
    ``ΔF_{k−1}`` stored; returns its terms of the six sums (``|R|``, ``ΔF_0ᵀR``, ``ΔF_1ᵀR``,
    ``ΔF_0ᵀΔF_0``, ``ΔF_0ᵀΔF_1``, ``ΔF_1ᵀΔF_1``; slots not held count zero)."""
    if k == 0:
        R = r[j]
    else:
        sp = (k - 1) % mem
        d = hist[1 + sp, li]  # ΔX_{k−1}
        R = hist[0, li] - d + g
        hist[3 + sp, li] = g - d  # ΔF_{k−1}
    hist[0, li] = R
    f0 = 0.0
    f1 = 0.0
    if cnt == 2 or (cnt == 1 and (k - 1) % mem == 0):
        f0 = hist[3, li]
    if cnt == 2 or (cnt == 1 and (k - 1) % mem == 1):
        f1 = hist[4, li]
    return abs(R), f0 * R, f1 * R, f0 * f0, f0 * f1, f1 * f1


@cuda.jit(device=True, inline=True)
def _step(j, li, k, mem, cnt, g0, g1, hist, has_coef, vscale, x, dpos):
    """Round ``k``'s step ``δ`` of position ``j`` (index ``li``): stored as ``ΔX_k``, added to
    ``x[j]``, written to ``dpos[j]`` (scaled by ``vscale[j]`` without per-arc coefficients)."""
    R = hist[0, li]
    d = R
    if cnt == 2 or (cnt == 1 and (k - 1) % mem == 0):
        d -= g0 * (hist[1, li] + hist[3, li])
    if cnt == 2 or (cnt == 1 and (k - 1) % mem == 1):
        d -= g1 * (hist[2, li] + hist[4, li])
    hist[1 + k % mem, li] = d
    x[j] += d
    dpos[j] = d if has_coef else d * vscale[j]


@cuda.jit(device=True, inline=True)
def _block_sums6(b6, t0, t1, t2, t3, t4, t5):
    """The six values summed over the block (``HB`` threads; every thread gets the sums)."""
    tid = cuda.threadIdx.x
    b6[tid] = t0
    b6[HB + tid] = t1
    b6[2 * HB + tid] = t2
    b6[3 * HB + tid] = t3
    b6[4 * HB + tid] = t4
    b6[5 * HB + tid] = t5
    cuda.syncthreads()
    step = HB // 2
    while step > 0:
        if tid < step:
            for q in range(6):
                b6[q * HB + tid] += b6[q * HB + tid + step]
        cuda.syncthreads()
        step //= 2
    out = (b6[0], b6[HB], b6[2 * HB], b6[3 * HB], b6[4 * HB], b6[5 * HB])
    cuda.syncthreads()
    return out


@cuda.jit(cache=True, **({} if SIM else {"launch_bounds": (TB, HEAVY_BLOCKS_PER_SM)}))
def scc_heavy_anderson(spos, nspos, bpos, nbpos, hin_off, hin_src, hin_arc, icoef, has_coef,
                       vscale, x, r, dpos, hist, sums, ctl, bar, budget, arcs, mem, max_rounds,
                       cnt):
    """All the rounds of a heavy group in one launch (module docstring; ``bar[0]`` and ``sums``
    zero, ``r`` the group's pulled inputs; every block resident at once), Anderson memory
    ``mem`` (1 or 2).  The ``nspos`` positions ``spos`` gather with
    :data:`~.scc_blocks.G` lanes each, the ``nbpos`` positions ``bpos`` (more
    than :data:`BIG_IN` in-arcs inside, ``hin_*`` by target position) with a block each.  Sets
    ``ctl[6]`` to 1 when done, −1 when ``max_rounds`` ran first, ``ctl[7]`` to the rounds run;
    adds the rounds, the arcs gathered (``arcs`` a round) and the vertices stepped to ``cnt``."""
    b6 = cuda.shared.array(_B6, float64)
    buf = cuda.shared.array(HB, float64)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    nb = cuda.gridDim.x
    stride = nb * cuda.blockDim.x
    sub = i % G
    nt = nspos * G
    cnt_h = 0  # steps held
    g0 = 0.0
    g1 = 0.0
    k = 0
    mass = math.inf
    while True:
        if k > 0 and cnt_h < mem:
            cnt_h += 1
        if i == 0:
            for q in range(6 * SPREAD):
                sums[6 * SPREAD * ((k + 1) % 3) + q] = 0.0
        t0 = t1 = t2 = t3 = t4 = t5 = 0.0
        for b in range(cuda.blockIdx.x, nbpos, nb):  # a block gathers, thread 0 observes
            j = bpos[b]
            g = 0.0
            if k > 0:
                g = block_sum(buf, _gathered(j, tid, cuda.blockDim.x, hin_off, hin_src, hin_arc,
                                              icoef, has_coef, dpos))
            if tid == 0:
                u0, u1, u2, u3, u4, u5 = _observe(j, nspos + b, k, mem, cnt_h, g, r, hist)
                t0 += u0
                t1 += u1
                t2 += u2
                t3 += u3
                t4 += u4
                t5 += u5
        for t in range((nt + stride - 1) // stride):  # as many times in every thread (shuffles)
            v = (i + t * stride) // G
            g = 0.0
            j = 0
            if v < nspos:
                j = spos[v]
                if k > 0:
                    g = _gathered(j, sub, G, hin_off, hin_src, hin_arc, icoef, has_coef, dpos)
            g = group_sum(buf, g, G)
            if v < nspos and sub == 0:
                u0, u1, u2, u3, u4, u5 = _observe(j, v, k, mem, cnt_h, g, r, hist)
                t0 += u0
                t1 += u1
                t2 += u2
                t3 += u3
                t4 += u4
                t5 += u5
        t0, t1, t2, t3, t4, t5 = _block_sums6(b6, t0, t1, t2, t3, t4, t5)
        s = 6 * SPREAD * (k % 3)
        if tid == 0:
            c = s + 6 * (cuda.blockIdx.x % SPREAD)
            cuda.atomic.add(sums, c, t0)
            cuda.atomic.add(sums, c + 1, t1)
            cuda.atomic.add(sums, c + 2, t2)
            cuda.atomic.add(sums, c + 3, t3)
            cuda.atomic.add(sums, c + 4, t4)
            cuda.atomic.add(sums, c + 5, t5)
        grid_barrier(bar, nb * (2 * k + 1))
        if tid < 6:  # the copies added up, in the same order in every block
            v = 0.0
            for c in range(SPREAD):
                v += load_relaxed(sums, s + 6 * c + tid)
            buf[tid] = v
        cuda.syncthreads()
        mass = buf[0]
        c0 = buf[1]
        c1 = buf[2]
        h00 = buf[3]
        h01 = buf[4]
        h11 = buf[5]
        cuda.syncthreads()
        if mass <= budget or k >= max_rounds:
            break
        if cnt_h > 0:
            if cnt_h == 1:  # the slot held: the 1×1 solve on its sums
                if (k - 1) % mem == 1:
                    c0 = c1
                    h00 = h11
                ok, g0, g1 = coefficients(1, c0, c1, h00, h01, h11)
                if (k - 1) % mem == 1:
                    g1 = g0
                    g0 = 0.0
            else:
                ok, g0, g1 = coefficients(2, c0, c1, h00, h01, h11)
            if not ok:  # the history dropped: a plain step
                cnt_h = 0
                g0 = 0.0
                g1 = 0.0
        if tid == 0:
            for b in range(cuda.blockIdx.x, nbpos, nb):
                _step(bpos[b], nspos + b, k, mem, cnt_h, g0, g1, hist, has_coef, vscale, x, dpos)
        for t in range((nt + stride - 1) // stride):  # the leader that observed the vertex
            v = (i + t * stride) // G
            if v < nspos and sub == 0:
                _step(spos[v], v, k, mem, cnt_h, g0, g1, hist, has_coef, vscale, x, dpos)
        grid_barrier(bar, nb * (2 * k + 2))
        k += 1
    if i == 0:
        ctl[7] = float64(k)
        cuda.atomic.add(cnt, ROUNDS, k)
        cuda.atomic.add(cnt, PUSHES, int64(k) * arcs)
        cuda.atomic.add(cnt, VERTEX_PUSHES, int64(k) * (nspos + nbpos))
        if mass <= budget:
            ctl[6] = 1.0
        else:
            ctl[6] = -1.0
            cuda.atomic.add(cnt, CAPPED, 1)
