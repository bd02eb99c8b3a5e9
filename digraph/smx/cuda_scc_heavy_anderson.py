"""Anderson-accelerated rounds of a heavy group of the GPU SCC engine
(``GpuSccSettings(heavy_anderson=m)``; :mod:`digraph.smx.cuda_scc_heavy` has the plain rounds).

The plain rounds push with the soft priority and let a round's pushes land while others read
(Gauss–Seidel-like, no history).  These are Jacobi rounds with Anderson acceleration
(Walker & Ni, SIAM J. Numer. Anal. 49(4), 2011; the light sweeps' method,
:mod:`digraph.smx.cuda_scc_sweeps`, over the whole GPU): every vertex of the group steps by

    δ_k = R_k − Σ_s γ_s (ΔX_s + ΔF_s),   γ = argmin ‖R_k − ΔF γ‖₂,

pushes ``δ_k`` along its arcs inside the group into an accumulator, and the next round reads
``R_{k+1} = R_k − δ_k + (A δ_k)`` from it: two accumulators take turns (round ``k`` pushes into
``rb`` when ``k`` is even, ``ra`` when odd, and round ``k + 1`` reads and zeroes what round ``k``
filled), so a residual is read only once all of the previous round's pushes have landed.  A round
has two grid barriers: after the sums (``Σ|R|``, ``ΔFᵀR``, ``ΔFᵀΔF``: six float64 atomics a block
into ``sums``, three rotating slots of six sums in :data:`SPREAD` copies) and after the pushes.
Every thread reads the sums, stops when ``Σ|R| ≤ budget`` (the plain rounds' stop) and solves
for ``γ`` alone and alike.

Every vertex pushes every round, an atomic an arc, and the atomics into one target queue behind
each other: a round lasts at least the busiest target's in-arcs times an atomic's 6–10 ns on an
H200, so the engine runs these rounds only on groups without such hubs
(:attr:`~digraph.dispatch.cuda.one_gpu.scc.GpuSccSettings.heavy_anderson_in`).

The history lives in ``hist`` (float64, 5 rows × the group's vertices, by the vertex's index in
the group: ``pos`` first, then ``big``): row 0 ``R``, rows 1–2 ``ΔX`` of slots 0–1, rows 3–4
``ΔF``; step ``k`` takes slot ``k % mem``.  The L1 route only (the L∞ route keeps the plain
rounds).
"""

import math

from numba import cuda, float64, int64

from .cuda_kernels import _SIM, HB
from .cuda_scc_blocks import CAPPED, PUSHES, ROUNDS, VERTEX_PUSHES, G, _coef, _from_leader
from .cuda_scc_heavy import HEAVY_BLOCKS_PER_SM, TB, _grid_barrier
from .cuda_scc_sweeps import _coefficients
from .cuda_timers import load_relaxed

__all__ = ["scc_heavy_anderson", "SUMS"]

SPREAD = 8
"""Copies of each sum: block ``b`` adds to copy ``b % SPREAD`` (a thousand blocks adding to one
address queue behind each other), and every block adds the copies up in the same order."""
SUMS = 3 * 6 * SPREAD
"""Words of a heavy group's ``sums`` (three rotating slots of six sums in ``SPREAD`` copies)."""
_B6 = 6 * HB  # shared sizes must be plain constants


@cuda.jit(device=True, inline=True)
def _observe(j, li, k, mem, cnt, ra, rb, hist):
    """Round ``k``'s residual ``R_k`` of position ``j`` (index ``li`` in the group), read from the
    accumulator the previous round filled (zeroed for the round after), ``ΔF_{k−1}`` stored;
    returns its terms of the six sums (``|R|``, ``ΔF_0ᵀR``, ``ΔF_1ᵀR``, ``ΔF_0ᵀΔF_0``,
    ``ΔF_0ᵀΔF_1``, ``ΔF_1ᵀΔF_1``; slots not held count zero)."""
    if k == 0:
        R = load_relaxed(ra, j)  # the pulled inputs
        ra[j] = 0.0
    else:
        if k % 2 == 1:  # relaxed loads: other blocks' pushes land in L2, not in this one's L1
            acc = load_relaxed(rb, j)
            rb[j] = 0.0
        else:
            acc = load_relaxed(ra, j)
            ra[j] = 0.0
        sp = (k - 1) % mem
        d = hist[1 + sp, li]  # ΔX_{k−1}
        R = hist[0, li] - d + acc
        hist[3 + sp, li] = acc - d  # ΔF_{k−1}
    hist[0, li] = R
    f0 = 0.0
    f1 = 0.0
    if cnt == 2 or (cnt == 1 and (k - 1) % mem == 0):
        f0 = hist[3, li]
    if cnt == 2 or (cnt == 1 and (k - 1) % mem == 1):
        f1 = hist[4, li]
    return abs(R), f0 * R, f1 * R, f0 * f0, f0 * f1, f1 * f1


@cuda.jit(device=True, inline=True)
def _step(li, k, mem, cnt, g0, g1, hist):
    """Round ``k``'s step ``δ`` of the vertex of index ``li``, stored as ``ΔX_k``."""
    R = hist[0, li]
    d = R
    if cnt == 2 or (cnt == 1 and (k - 1) % mem == 0):
        d -= g0 * (hist[1, li] + hist[3, li])
    if cnt == 2 or (cnt == 1 and (k - 1) % mem == 1):
        d -= g1 * (hist[2, li] + hist[4, li])
    hist[1 + k % mem, li] = d
    return d


@cuda.jit(device=True, inline=True)
def _push(j, d, lane, width, k, iout_off, iout_tgt, icoef, has_coef, vscale, ra, rb):
    """``d`` along position ``j``'s arcs inside the group, lanes ``lane, lane + width, …``, into
    round ``k``'s accumulator."""
    for e in range(iout_off[j] + lane, iout_off[j + 1], width):
        v = _coef(e, icoef, has_coef, vscale, j) * d
        if k % 2 == 0:
            cuda.atomic.add(rb, iout_tgt[e], v)
        else:
            cuda.atomic.add(ra, iout_tgt[e], v)


@cuda.jit(device=True, inline=True)
def _block_sums6(b6, t0, t1, t2, t3, t4, t5):
    """The six values summed over the block (``HB`` threads; thread 0 gets the sums)."""
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


@cuda.jit(cache=True, **({} if _SIM else {"launch_bounds": (TB, HEAVY_BLOCKS_PER_SM)}))
def scc_heavy_anderson(pos, npos, big, nbig, iout_off, iout_tgt, icoef, has_coef, vscale, x, ra,
                       rb, hist, sums, ctl, bar, budget, arcs, mem, max_rounds, cnt):
    """All the rounds of a heavy group in one launch (module docstring; ``bar[0]`` and ``sums``
    zero, ``rb`` zero on the group's positions, ``ra`` its pulled inputs; every block resident at
    once), Anderson memory ``mem`` (1 or 2).  The ``npos`` positions ``pos`` are pushed by
    :data:`~digraph.smx.cuda_scc_blocks.G` threads each, the ``nbig`` positions ``big`` by a
    block each.  Sets ``ctl[6]`` to 1 when done, −1 when ``max_rounds`` ran first, ``ctl[7]`` to
    the rounds run; adds the rounds, the arcs pushed (``arcs`` a round) and the vertices pushed to
    ``cnt``.  ``ra`` and ``rb`` end zero on the group's positions."""
    b6 = cuda.shared.array(_B6, float64)
    buf = cuda.shared.array(HB, float64)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    nb = cuda.gridDim.x
    stride = nb * cuda.blockDim.x
    sub = i % G
    nt = npos * G
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
        for b in range(cuda.blockIdx.x, nbig, nb):  # the block's big vertices: thread 0 reads
            if tid == 0:
                u0, u1, u2, u3, u4, u5 = _observe(big[b], npos + b, k, mem, cnt_h, ra, rb, hist)
                t0 += u0
                t1 += u1
                t2 += u2
                t3 += u3
                t4 += u4
                t5 += u5
        for t in range((nt + stride - 1) // stride):
            v = (i + t * stride) // G
            if v < npos and sub == 0:
                u0, u1, u2, u3, u4, u5 = _observe(pos[v], v, k, mem, cnt_h, ra, rb, hist)
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
        _grid_barrier(bar, nb * (2 * k + 1))
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
                ok, g0, g1 = _coefficients(1, c0, c1, h00, h01, h11)
                if (k - 1) % mem == 1:
                    g1 = g0
                    g0 = 0.0
            else:
                ok, g0, g1 = _coefficients(2, c0, c1, h00, h01, h11)
            if not ok:  # the history dropped: a plain step
                cnt_h = 0
                g0 = 0.0
                g1 = 0.0
        for b in range(cuda.blockIdx.x, nbig, nb):
            j = big[b]
            if tid == 0:
                d = _step(npos + b, k, mem, cnt_h, g0, g1, hist)
                x[j] += d
                buf[0] = d
            cuda.syncthreads()
            d = buf[0]
            cuda.syncthreads()
            _push(j, d, tid, cuda.blockDim.x, k, iout_off, iout_tgt, icoef, has_coef, vscale, ra,
                  rb)
        for t in range((nt + stride - 1) // stride):  # as many times in every thread (shuffles)
            v = (i + t * stride) // G
            d = 0.0
            j = 0
            if v < npos:
                j = pos[v]
                if sub == 0:
                    d = _step(v, k, mem, cnt_h, g0, g1, hist)
                    x[j] += d
            d = _from_leader(buf, d)
            if v < npos:
                _push(j, d, sub, G, k, iout_off, iout_tgt, icoef, has_coef, vscale, ra, rb)
        _grid_barrier(bar, nb * (2 * k + 2))
        k += 1
    if i == 0:
        ctl[7] = float64(k)
        cuda.atomic.add(cnt, ROUNDS, k)
        cuda.atomic.add(cnt, PUSHES, int64(k) * arcs)
        cuda.atomic.add(cnt, VERTEX_PUSHES, int64(k) * (npos + nbig))
        if mass <= budget:
            ctl[6] = 1.0
        else:
            ctl[6] = -1.0
            cuda.atomic.add(cnt, CAPPED, 1)
