"""Anderson acceleration with its state on the GPU: the sharded power iteration's rounds queued
with no host wait (:mod:`digraph.dispatch.engines.power.gpus_queued`).

:mod:`digraph.dispatch.anderson` keeps Anderson's small dense part on the host (Walker and Ni,
*SIAM J. Numer. Anal.* 49(4), 2011): each round the host reads the record pass's dots, solves
``(ΔFᵀΔF + ρ I) γ = ΔFᵀ f`` and hands the coefficients to the mix.  On several GPUs that read is
a synchronisation a round, and the GPUs wait for the host.  Here every GPU holds the same state
``ctl`` (and Gram matrix ``gram``), reads every GPU's dots from a table ``rows`` (one row a GPU,
in page-locked host memory mapped into every GPU, :mod:`digraph.dispatch.engines.power.
gpus_queued`), and runs the same solve on the same numbers, so all GPUs reach the same ``γ``
with no host in the loop:

* :func:`anderson_record_ctl`: :func:`digraph.smx.cuda.anderson.anderson_record` with the
  record slot ``(j, cnt)`` read from ``ctl`` (what :meth:`Anderson.record_slot` would return);
* :func:`anderson_solve_rows`: one thread (of a block that reads the table),
  :meth:`Anderson.solve` step for step (the third-round probe that switches the acceleration
  off, the restart when ``‖f‖₁`` grew, the Gram update, the regularised solve by Gaussian
  elimination with partial pivoting as LAPACK's ``dgesv``, the restart on a zero pivot, a
  non-finite ``γ`` or ``Σ|γ_i|`` above ``max_coef``), then the next round's record slot;
* :func:`anderson_mix_ctl`: ``out = max(g − Σ_i γ_i ΔG_i, 0)``, ``z = src_scale ∘ out`` and
  ``Σ out`` into ``acc[slot]`` when the solve gave coefficients; else ``out = g`` (the plain
  step) and nothing else.  The mix goes to its own vector, so the power step ``g`` stays: the
  host reads a round's bound a round late, and the answer is always a power step.
"""

import math

from numba import cuda, float64

from .anderson import MAX_MEMORY, _record
from .common import HB, block_sum

__all__ = ["CTL", "MAX_GPUS", "SOLVE_THREADS", "ctl_start", "anderson_record_ctl",
           "anderson_solve_rows", "anderson_mix_ctl", "MIX", "GAMMA", "STARTED", "SLOT", "COUNT",
           "LAST_DIFF", "PROBE", "MEMORY", "RESTARTS", "MIXES", "REC", "REC_J", "REC_CNT"]

# ctl's entries (float64)
MIX = 0  # the γ count of this round's mix (0: the plain step)
GAMMA = 1  # γ_0 … γ_7
STARTED = 9
SLOT = 10
COUNT = 11
LAST_DIFF = 12
PROBE = 13  # the third round's ratio (−1: not yet)
MEMORY = 14  # the memory in use (0: switched off)
NDIFFS = 15  # differences seen while deciding
D_PREV = 16
D_LAST = 17
RESTARTS = 18
MIXES = 19
REC = 20  # the next record pass: 1 records, 0 stores f, g only
REC_J = 21
REC_CNT = 22
CTL = 24

_TINY = 2.2250738585072014e-308  # np.finfo(np.float64).tiny
MAX_GPUS = 16
_ROWS = MAX_GPUS * (5 + 2 * MAX_MEMORY)  # the largest table anderson_solve_rows reads
SOLVE_THREADS = 32
"""Threads of :func:`anderson_solve_rows`' one block (they read the table; one solves)."""


def ctl_start(memory):
    """``ctl``'s values at the start of a run (a host list of :data:`CTL` floats)."""
    c = [0.0] * CTL
    c[LAST_DIFF] = math.inf
    c[PROBE] = -1.0
    c[MEMORY] = float(memory)
    return c


@cuda.jit(cache=True)
def anderson_record_ctl(x, g, fprev, gprev, dF, dG, ctl, acc, base):
    """:func:`~.anderson.anderson_record` with ``(record, j, cnt)`` from
    ``ctl``; nothing once the acceleration is off."""
    if ctl[MEMORY] == 0.0:
        return
    buf = cuda.shared.array(HB, float64)
    _record(buf, x, g, fprev, gprev, dF, dG, int(ctl[REC]), int(ctl[REC_J]), int(ctl[REC_CNT]),
            acc, base)


@cuda.jit(cache=True)
def anderson_solve_rows(rows, base, ring, ctl, gram, reg, max_coef, start_ratio):
    """One block of :data:`SOLVE_THREADS` threads, one of which solves: this round's solve
    from the table ``rows`` (a row a GPU, at most :data:`MAX_GPUS`: ``‖f‖₁`` of its range at
    column 2, its dots ``a_i`` at ``base + i`` and ``b_i`` at ``base + ring + i``, ``ring`` the
    rings' allocated slots), state in ``ctl`` and ``gram`` (``MAX_MEMORY²``, row major);
    ``start_ratio < 0`` for none (:class:`~digraph.dispatch.anderson.Anderson`)."""
    k = rows.shape[0]
    width = rows.shape[1]
    tab = cuda.shared.array(_ROWS, float64)  # the table read once, by all the block's threads
    for i in range(cuda.threadIdx.x, k * width, cuda.blockDim.x):  # (it may be in host memory)
        tab[i] = rows[i // width, i % width]
    cuda.syncthreads()
    if cuda.threadIdx.x != 0:
        return
    h = cuda.local.array((MAX_MEMORY, MAX_MEMORY), float64)
    r = cuda.local.array(MAX_MEMORY, float64)
    diff = 0.0
    for q in range(k):
        diff += tab[q * width + 2]
    recorded = ctl[REC] > 0.0
    ctl[MIX] = 0.0
    mem = int(ctl[MEMORY])
    if mem > 0:
        deciding = start_ratio >= 0.0 and ctl[PROBE] < 0.0
        go = True
        if deciding:
            ctl[NDIFFS] += 1.0
            ctl[D_PREV] = ctl[D_LAST]
            ctl[D_LAST] = diff
            if ctl[NDIFFS] >= 3.0:
                ratio = ctl[D_LAST] / ctl[D_PREV] if ctl[D_PREV] != 0.0 else 0.0
                ctl[PROBE] = ratio
                if ratio < start_ratio:
                    ctl[MEMORY] = 0.0  # fast already: the plain iteration from here on
                    mem = 0
                    go = False
                deciding = False
        if go:
            grew = diff > ctl[LAST_DIFF]
            ctl[LAST_DIFF] = diff
            count = int(ctl[COUNT])
            if count > 0 or recorded:
                j = int(ctl[SLOT])
                cnt = min(count + 1, mem)
                ctl[SLOT] = float((j + 1) % mem)
                ctl[COUNT] = float(cnt)
                ok = not grew
                if ok:
                    for i in range(cnt):
                        a = 0.0
                        for q in range(k):
                            a += tab[q * width + base + i]
                        gram[j * MAX_MEMORY + i] = a
                        gram[i * MAX_MEMORY + j] = a
                    tr = 0.0
                    for i in range(cnt):
                        b = 0.0
                        for q in range(k):
                            b += tab[q * width + base + ring + i]
                        r[i] = b
                        for c in range(cnt):
                            h[i, c] = gram[i * MAX_MEMORY + c]
                        tr += h[i, i]
                    add = reg * max(tr, _TINY)
                    for i in range(cnt):
                        h[i, i] += add
                    ok = _solve_small(h, r, cnt)
                if ok:
                    tot = 0.0
                    for i in range(cnt):
                        tot += abs(r[i])
                    ok = math.isfinite(tot) and tot <= max_coef
                if not ok:  # restart: the plain step
                    ctl[COUNT] = 0.0
                    ctl[SLOT] = 0.0
                    ctl[RESTARTS] += 1.0
                elif not deciding:
                    ctl[MIXES] += 1.0
                    ctl[MIX] = float(cnt)
                    for i in range(cnt):
                        ctl[GAMMA + i] = r[i]
    ctl[STARTED] = 1.0
    # the next round's record slot (Anderson.record_slot)
    ctl[REC] = 1.0 if mem > 0 else 0.0
    ctl[REC_J] = ctl[SLOT]
    ctl[REC_CNT] = float(min(int(ctl[COUNT]) + 1, max(mem, 1)))


@cuda.jit(device=True)
def _solve_small(h, r, n):
    """``h γ = r`` in place (``γ`` into ``r``) by Gaussian elimination with partial pivoting;
    False on a zero pivot (LAPACK's ``dgesv`` reports the matrix singular there)."""
    for c in range(n):
        p = c
        best = abs(h[c, c])
        for i in range(c + 1, n):
            if abs(h[i, c]) > best:
                best = abs(h[i, c])
                p = i
        if h[p, c] == 0.0:
            return False
        if p != c:
            for q in range(n):
                t = h[c, q]
                h[c, q] = h[p, q]
                h[p, q] = t
            t = r[c]
            r[c] = r[p]
            r[p] = t
        for i in range(c + 1, n):
            f = h[i, c] / h[c, c]
            for q in range(c, n):
                h[i, q] -= f * h[c, q]
            r[i] -= f * r[c]
    for c in range(n - 1, -1, -1):
        t = r[c]
        for q in range(c + 1, n):
            t -= h[c, q] * r[q]
        r[c] = t / h[c, c]
    return True


@cuda.jit(cache=True)
def anderson_mix_ctl(g, dG, ctl, src_scale, z, out, acc, slot):
    """``out = max(g − Σ_i γ_i ΔG_i, 0)``, ``z = src_scale ∘ out``, ``Σ out`` into
    ``acc[slot]``, with ``γ`` from ``ctl``; ``out = g`` when this round took the plain step."""
    buf = cuda.shared.array(HB, float64)
    cnt = int(ctl[MIX])
    c = cuda.local.array(MAX_MEMORY, float64)
    for i in range(MAX_MEMORY):
        c[i] = ctl[GAMMA + i] if i < cnt else 0.0
    s = 0.0
    for v in range(cuda.grid(1), g.size, cuda.gridsize(1)):
        t = g[v]
        if cnt > 0:
            for i in range(cnt):
                t -= c[i] * dG[i, v]
            if t < 0.0:
                t = 0.0
            z[v] = src_scale[v] * t
            s += t
        out[v] = t
    if cnt > 0:  # the same count in every thread: the block sum's barriers are reached by all
        s = block_sum(buf, s)
        if cuda.threadIdx.x == 0:
            cuda.atomic.add(acc, slot, s)
