"""CUDA kernels of Anderson acceleration for the GPU power iteration
(:mod:`digraph.dispatch.anderson` holds the method and its host side; Walker and Ni 2011).

Two passes a round over the vertices, each one launch, grid-strided, HB threads a block:

* :func:`anderson_record`: with ``f = g − x``, write the new column ``ΔF_j = f − f_prev``,
  ``ΔG_j = g − g_prev`` of the rings ``dF``, ``dG`` (``memory × n``, one row a slot), add the
  dots ``a_i = ΔF_j · ΔF_i`` and ``b_i = ΔF_i · f`` of the slots ``i < cnt`` to ``acc[base + i]``
  and ``acc[base + memory + i]`` (block sums, one atomic each), and keep ``f_prev, g_prev ← f, g``.
  ``record = 0`` keeps ``f``, ``g`` only (the first round of a run).
* :func:`anderson_mix`: in place, ``g ← max(g − Σ_i γ_i ΔG_i, 0)``, ``z = src_scale ∘ g`` (the
  next pull's input), and ``Σ g`` added to ``acc[slot]`` (the bound counts the iterate's sum).
  The coefficients come as scalars (no copy to the device), up to :data:`MAX_MEMORY`.
"""

from numba import cuda, float64

from .common import HB, block_sum

__all__ = ["anderson_record", "anderson_mix", "mix_scalars", "MAX_MEMORY"]

MAX_MEMORY = 8
"""Most slots :func:`anderson_mix` takes coefficients for."""


def mix_scalars(gamma):
    """:func:`anderson_mix`'s ``cnt, c0 … c7`` for the coefficients ``gamma``: Python numbers
    whatever the count, so one prepared launch serves every round (a launch keyed by other
    argument types goes through Numba's dispatcher)."""
    return [len(gamma)] + [float(c) for c in gamma] + [0.0] * (MAX_MEMORY - len(gamma))


@cuda.jit(cache=True)
def anderson_record(x, g, fprev, gprev, dF, dG, record, j, cnt, acc, base):
    buf = cuda.shared.array(HB, float64)
    _record(buf, x, g, fprev, gprev, dF, dG, record, j, cnt, acc, base)


@cuda.jit(device=True, inline=True)
def _record(buf, x, g, fprev, gprev, dF, dG, record, j, cnt, acc, base):
    """The record pass (module docstring), shared with
    :func:`digraph.smx.cuda.anderson_state.anderson_record_ctl`."""
    a = cuda.local.array(MAX_MEMORY, float64)
    b = cuda.local.array(MAX_MEMORY, float64)
    for i in range(MAX_MEMORY):
        a[i] = 0.0
        b[i] = 0.0
    mem = dF.shape[0]
    for v in range(cuda.grid(1), g.size, cuda.gridsize(1)):
        gv = g[v]
        f = gv - x[v]
        if record:
            df = f - fprev[v]
            dF[j, v] = df
            dG[j, v] = gv - gprev[v]
            for i in range(cnt):
                di = df if i == j else dF[i, v]
                a[i] += df * di
                b[i] += di * f
        fprev[v] = f
        gprev[v] = gv
    if record:
        for i in range(cnt):
            sa = block_sum(buf, a[i])
            sb = block_sum(buf, b[i])
            if cuda.threadIdx.x == 0:
                cuda.atomic.add(acc, base + i, sa)
                cuda.atomic.add(acc, base + mem + i, sb)


@cuda.jit(cache=True)
def anderson_mix(g, dG, cnt, c0, c1, c2, c3, c4, c5, c6, c7, src_scale, z, acc, slot):
    buf = cuda.shared.array(HB, float64)
    s = 0.0
    for v in range(cuda.grid(1), g.size, cuda.gridsize(1)):
        t = g[v]
        if cnt > 0:
            t -= c0 * dG[0, v]
        if cnt > 1:
            t -= c1 * dG[1, v]
        if cnt > 2:
            t -= c2 * dG[2, v]
        if cnt > 3:
            t -= c3 * dG[3, v]
        if cnt > 4:
            t -= c4 * dG[4, v]
        if cnt > 5:
            t -= c5 * dG[5, v]
        if cnt > 6:
            t -= c6 * dG[6, v]
        if cnt > 7:
            t -= c7 * dG[7, v]
        if t < 0.0:
            t = 0.0
        g[v] = t
        z[v] = src_scale[v] * t
        s += t
    s = block_sum(buf, s)
    if cuda.threadIdx.x == 0:
        cuda.atomic.add(acc, slot, s)
