"""Shortest-path tree from exact distances: a breadth-first search over the *tight* arcs (CPU,
Numba).

Given distances ``d`` that the engines computed as ``d(s) = 0``,
``d(v) = min_{u→v} fl(d(u) + w_uv)`` (float64 sums, the least fixed point), an arc ``u → v`` is
*tight* when ``d(v) < inf`` and ``fl(d(u) + w_uv) == d(v)``.  Every path of tight arcs from ``s`` to
``v`` has length ``d(v)``, and every vertex of finite distance has one (``docs/results.md`` gives
the argument).  The tree is taken canonically, so that every device gives the same one:

* ``hops(v)`` is the breadth-first level of ``v`` in the subgraph of tight arcs (the fewest tight
  arcs from a source; -1 when none reaches it), which rules out the cycles zero-weight arcs
  would otherwise allow;
* ``pred(v)`` is the *smallest* vertex index ``u`` with ``hops(u) = hops(v) − 1`` and ``u → v``
  tight (-1 for the sources and the unreached).

With ``tight=False`` every arc counts: a plain (multi-source) breadth-first search, ``hops`` the
hop distance from the nearest source (Moore 1959, "The shortest path through a maze").

The search is the textbook FIFO one, O(n + m): every level-``L`` vertex leaves the queue before any
of level ``L + 1``, so when ``u`` (level ``L``) scans a tight arc to ``v`` already put at level
``L + 1``, ``u`` is one more candidate parent and the smaller index is kept.
"""

import numpy as np
from numba import njit

__all__ = ["tight_tree", "tree_path"]


@njit(cache=True, nogil=True)
def tight_tree(out_offsets, out_targets, weights, unit, tight, dist, sources):
    """Breadth-first tree over the tight arcs (every arc when ``tight`` is False).

    Parameters
    ----------
    out_offsets, out_targets : CSR arrays of the graph.
    weights : float64 array (m)
        Arc weights in CSR order (not read when ``unit`` or not ``tight``).
    unit : bool
        Every arc weighs 1.
    tight : bool
        Keep only the tight arcs of ``dist`` (False: every arc, a plain BFS).
    dist : float64 array (n)
        The distances (not read when not ``tight``).
    sources : int64 array
        The roots (level 0); repeats are allowed.

    Returns
    -------
    pred, hops : int64 arrays (n)
        Canonical parent (-1: a source or unreached) and level (-1: unreached).
    """
    n = out_offsets.size - 1
    hops = np.full(n, -1, dtype=np.int64)
    pred = np.full(n, -1, dtype=np.int64)
    queue = np.empty(n, dtype=np.int64)
    tail = 0
    for i in range(sources.size):
        s = sources[i]
        if hops[s] == -1:
            hops[s] = 0
            queue[tail] = s
            tail += 1
    head = 0
    while head < tail:
        u = queue[head]
        head += 1
        nxt = hops[u] + 1
        du = dist[u] if tight else 0.0
        for e in range(out_offsets[u], out_offsets[u + 1]):
            v = out_targets[e]
            hv = hops[v]
            if hv != -1 and hv != nxt:
                continue
            if tight:
                dv = dist[v]
                w = 1.0 if unit else weights[e]
                if not (dv < np.inf and du + w == dv):
                    continue
            if hv == -1:
                hops[v] = nxt
                pred[v] = u
                queue[tail] = v
                tail += 1
            elif u < pred[v]:
                pred[v] = u
    return pred, hops


@njit(cache=True, nogil=True)
def tree_path(pred, hops, t):
    """The tree path from the root to ``t`` as vertex indices (empty when ``hops[t] == -1``)."""
    k = hops[t]
    out = np.empty(max(k + 1, 0), dtype=np.int64)
    v = t
    for i in range(k, -1, -1):
        out[i] = v
        v = pred[v]
    return out
