"""Weakly connected components on the CPU: parallel hooking to the smaller root with pointer
jumping.

A forest ``comp`` over the vertices, ``comp[v] <= v`` and ``comp[v]`` always in ``v``'s component,
starts as ``comp[v] = v``.  A *hooking* pass visits every arc ``u → v`` (in parallel, ``prange``):
with ``r_u = find(u)``, ``r_v = find(v)`` (the roots, ``comp[r] = r``) and ``r_u != r_v``, it
takes ``comp[max] = min(comp[max], min(r_u, r_v))`` with an atomic minimum; a *jumping* pass then
points every vertex at its root.  Passes repeat until a hooking pass finds no arc between two
trees.  This is the hook-and-compress scheme of Shiloach and Vishkin ("An O(log n) parallel
connectivity algorithm", J. Algorithms 1982) with the lock-free min-hook of the union-find
variants (Jayanti and Tarjan, "A randomized concurrent algorithm for disjoint set union", PODC
2016; ECL-CC, Jaiganesh and Burtscher, HPDC 2018).

Correctness: every write lowers a ``comp`` entry to a vertex of the same component, so the
``comp`` pointers stay a forest whose trees lie inside components; a pass that hooks anything
lowers ``Σ comp`` (a concurrent hook that wins instead lowers it too), so the passes end; at the
end no arc joins two trees, so the trees are the components, and the root of each is its
smallest vertex (that vertex ``m`` has ``comp[m] <= m`` inside its component, hence
``comp[m] = m``).  No update is lost: a hook that loses a race leaves its arc between two trees,
and the next pass sees it.
"""

import numpy as np
from numba import njit, prange

from .atomics import atomic_min

__all__ = ["wcc_roots"]


@njit(cache=True, nogil=True)
def _find(comp, v):
    x = v
    p = comp[x]
    while p != x:
        x = p
        p = comp[x]
    return x


@njit(cache=True, parallel=True)
def _hook(arc_sources, out_targets, comp):
    hooked = 0
    for k in prange(out_targets.size):
        ru = _find(comp, arc_sources[k])
        rv = _find(comp, out_targets[k])
        if ru != rv:
            if ru < rv:
                atomic_min(comp, rv, ru)
            else:
                atomic_min(comp, ru, rv)
            hooked += 1
    return hooked


@njit(cache=True, parallel=True)
def _jump(comp):
    for v in prange(comp.size):
        comp[v] = _find(comp, v)


def wcc_roots(arc_sources, out_targets, n):
    """The smallest vertex of each vertex's weakly connected component.

    Parameters
    ----------
    arc_sources, out_targets : int arrays (m)
        Source and target of every arc (the direction is ignored).
    n : int
        Number of vertices.

    Returns
    -------
    numpy.ndarray of int64 (n)
        ``root[v]``: the smallest vertex index of ``v``'s component.
    """
    comp = np.arange(n, dtype=np.int64)
    while out_targets.size and _hook(arc_sources, out_targets, comp):
        _jump(comp)
    return comp
