"""The GPU kernel of the cluster engine (:mod:`digraph.dispatch.engines.cluster.gpu`): min/max
systems (SSSP, widest path, reachability) relaxed cluster by cluster, each cluster to its local
fixpoint in one thread block's shared memory.

A round runs the clusters of its queue, one block each (a thread per vertex):

1. each thread pulls its vertex's in-arcs from *other* clusters once, from global memory
   (``x_v = combine(x_v, relax(x_u, a))``, the values as they are now);
2. the block then sweeps its *local* in-arcs in shared memory, Gauss–Seidel (a thread writes its
   own entry at once), until a sweep changes nothing (``syncthreads_or``): a value crosses the
   whole cluster within the round;
3. each improved vertex is written back, and the other clusters its out-arcs reach are queued for
   the next round (once each, by an atomic stamp).

Termination and soundness: a cluster's last run began after the last change of every value it
reads from outside (a later change would have queued it again) and ended at a local fixpoint, so
when a round's queue is empty every arc's constraint holds: the answer is the fixpoint of
Bellman–Ford's relaxation, the same as every other mode's.  Values only improve, so reading a
neighbour's value while another block writes it is harmless (an 8-byte store is atomic).

Queues: round ``r`` reads ``queue_in`` with ``counts[r % 3]`` entries, appends to ``queue_out``
at ``counts[(r + 1) % 3]``, and block 0 zeroes ``counts[(r + 2) % 3]`` (read by round ``r − 1``,
appended to by round ``r + 1``), so rounds can be queued back to back without the host.
``hist[r]`` keeps each round's count (rounds that ran, clusters run).  ``minkey`` rotates the same
way as ``counts``; ``keys`` by parity.
"""

import math

from numba import config, cuda, float64

from .common import relax

__all__ = ["CT", "cluster_round"]

CT = 64 if config.ENABLE_CUDASIM else 1024
"""The largest cluster a block can hold (threads per block; 64 under the simulator, where every
thread is a Python thread)."""


@cuda.jit(device=True, inline=True)
def _better(c, d, combine):
    return c < d if combine == 0 else c > d


@cuda.jit(cache=True)
def cluster_round(r, queue_in, counts, queue_out, mark, hist, keys, minkey, delta, starts, off,
                  mid, src, val, has, op, combine, x, xo_off, xo, runs, sweeps):
    """Round ``r`` of the cluster engine (module docstring); a block per queued cluster (grid
    stride), ``blockDim.x`` at least the largest cluster's size.

    Priority (SSSP with non-negative weights; ``delta = inf`` turns it off): a queued cluster's
    key is the least value among the vertices that queued it (``keys[r % 2]``, a lower bound of
    what it can receive); the round runs the clusters whose key is within ``delta`` of the least
    key queued (``minkey[r % 3]``) and passes the others on to the next round unrun, as
    Δ-stepping does with buckets (Meyer & Sanders, J. Algorithms 49(1), 2003), here over
    clusters."""
    sh = cuda.shared.array(CT, float64)
    i = cuda.threadIdx.x
    n_in = counts[r % 3]
    nxt = r + 1
    kin = keys[r % 2]
    kout = keys[nxt % 2]
    if cuda.blockIdx.x == 0 and i == 0:
        counts[(r + 2) % 3] = 0
        minkey[(r + 2) % 3] = math.inf
        hist[r] = n_in
    thr = minkey[r % 3] + delta if delta < math.inf else math.inf
    for b in range(cuda.blockIdx.x, n_in, cuda.gridDim.x):
        c = queue_in[b]
        kc = kin[c]
        cuda.syncthreads()  # every thread has read the key before thread 0 resets it
        if kc > thr:  # not yet: on to the next round, unrun
            if i == 0:
                kin[c] = math.inf
                cuda.atomic.min(kout, c, kc)
                cuda.atomic.min(minkey, nxt % 3, kc)
                if cuda.atomic.max(mark, c, nxt) < nxt:
                    queue_out[cuda.atomic.add(counts, nxt % 3, 1)] = c
            continue
        v0 = starts[c]
        nv = starts[c + 1] - v0
        v = v0 + i
        d0 = 0.0
        if i < nv:
            d = x[v]
            d0 = d
            for e in range(mid[v], off[v + 1]):  # arcs from other clusters: read once
                a = val[e] if has else 1.0
                cand = relax(op, x[src[e]], a)
                if _better(cand, d, combine):
                    d = cand
            sh[i] = d
        cuda.syncthreads()
        it = 0
        go = 1
        while go:
            ch = 0
            if i < nv:
                d = sh[i]
                for e in range(off[v], mid[v]):  # arcs inside: sources in shared memory
                    a = val[e] if has else 1.0
                    cand = relax(op, sh[src[e]], a)
                    if _better(cand, d, combine):
                        d = cand
                        ch = 1
                if ch:
                    sh[i] = d
            it += 1
            go = cuda.syncthreads_or(ch)
        if i < nv:
            d = sh[i]
            if _better(d, d0, combine):
                x[v] = d
                for q in range(xo_off[v], xo_off[v + 1]):
                    t = xo[q]
                    cuda.atomic.min(kout, t, d)
                    cuda.atomic.min(minkey, nxt % 3, d)
                    if cuda.atomic.max(mark, t, nxt) < nxt:
                        queue_out[cuda.atomic.add(counts, nxt % 3, 1)] = t
        if i == 0:
            kin[c] = math.inf
            runs[c] += 1
            sweeps[c] += it
        cuda.syncthreads()  # before the next cluster reuses ``sh``
