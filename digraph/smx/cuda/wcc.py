"""CUDA kernels of the weakly connected components, the GPU twin of :mod:`digraph.smx.cpu.wcc`.

Hook-and-compress (Shiloach and Vishkin, J. Algorithms 1982; the lock-free min-hook of ECL-CC,
Jaiganesh and Burtscher, HPDC 2018): ``comp[v] = v`` at first; :func:`wcc_hook` takes a thread per
arc ``u → v`` (its source found by a binary search of the CSR offsets, so hubs cost no more than
other vertices) and, when the roots ``r_u != r_v``, does ``atomicMin(comp[max(r_u, r_v)],
min(r_u, r_v))`` and raises ``changed[0]``; :func:`wcc_jump` points every vertex at its root.  The
host repeats both until a hooking pass changes nothing; each root is then the smallest vertex of
its component (the argument is in :mod:`digraph.smx.cpu.wcc`).
"""

from numba import cuda

__all__ = ["wcc_hook", "wcc_jump"]


@cuda.jit(device=True, inline=True)
def _find(comp, x):
    p = comp[x]
    while p != x:
        x = p
        p = comp[x]
    return x


@cuda.jit
def wcc_hook(out_offsets, out_targets, comp, changed):
    """One hooking pass over every arc."""
    n = comp.size
    m = out_targets.size
    k = cuda.grid(1)
    stride = cuda.gridsize(1)
    while k < m:
        lo = 0  # the source: the largest u with out_offsets[u] <= k
        hi = n
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if out_offsets[mid] <= k:
                lo = mid
            else:
                hi = mid
        ru = _find(comp, lo)
        rv = _find(comp, out_targets[k])
        if ru != rv:
            if ru < rv:
                cuda.atomic.min(comp, rv, ru)
            else:
                cuda.atomic.min(comp, ru, rv)
            changed[0] = 1
        k += stride


@cuda.jit
def wcc_jump(comp):
    """Point every vertex at its root."""
    v = cuda.grid(1)
    stride = cuda.gridsize(1)
    while v < comp.size:
        comp[v] = _find(comp, v)
        v += stride
