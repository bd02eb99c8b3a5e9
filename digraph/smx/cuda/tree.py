"""CUDA kernel of the shortest-path tree over tight arcs, the GPU twin of
:mod:`digraph.smx.cpu.tree`.

The same canonical tree (an arc ``u → v`` is tight when ``d(v) < inf`` and
``fl(d(u) + w_uv) == d(v)``; ``hops`` the breadth-first level over tight arcs; ``pred(v)`` the
smallest index among the tight in-neighbours one level up), built level-synchronously (the
top-down step of Beamer, Asanović and Patterson, "Direction-optimizing breadth-first search",
SC 2012): one launch per level, a thread per frontier vertex scanning its out-arcs.

* A vertex first reached at level ``L + 1`` is claimed by ``atomicCAS(hops[v], -1, L + 1)``;
  the thread that wins appends it to the next frontier (``atomicAdd`` on its length);
* every thread that finds a tight arc ``u → v`` with ``hops[v]`` equal to ``L + 1`` (its own
  claim or another's) takes ``atomicMin(pred[v], u)``, so ``pred(v)`` is the smallest candidate
  whatever the threads' order — the CPU's answer, bit for bit.

``pred`` starts at ``n`` (no candidate); the host turns what stays ``n`` into -1.
"""

import math

from numba import cuda

__all__ = ["tree_level"]


@cuda.jit
def tree_level(out_offsets, out_targets, weights, unit, tight, dist, frontier, nf, level, hops,
               pred, nxt, count):
    """Expand the frontier of ``level`` (``frontier[:nf]``) to ``level + 1`` into ``nxt``
    (``count[0]`` its length, incremented atomically)."""
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    up = level + 1
    while i < nf:
        u = frontier[i]
        du = dist[u] if tight else 0.0
        for e in range(out_offsets[u], out_offsets[u + 1]):
            v = out_targets[e]
            hv = hops[v]
            if hv != -1 and hv != up:
                continue
            if tight:
                dv = dist[v]
                w = 1.0 if unit else weights[e]
                if not (dv < math.inf and du + w == dv):
                    continue
            old = cuda.atomic.cas(hops, v, -1, up)
            if old == -1:
                k = cuda.atomic.add(count, 0, 1)
                nxt[k] = v
                cuda.atomic.min(pred, v, u)
            elif old == up:
                cuda.atomic.min(pred, v, u)
        i += stride
