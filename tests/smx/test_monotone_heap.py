"""The small-frontier phase of vertex-async on min systems in order of value
(digraph.smx.cpu.vertex_async.monotone_heap): a 4-ary heap with the vertices' slots kept, against
scipy's Dijkstra, in phases cut short as the engine cuts them."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import dijkstra

from digraph.smx.cpu import vertex_async as A

PLUS, MIN = 0, 0  # relax x_u + a, combine by min (digraph.dispatch.systems.monotone_arrays)


def _graph(seed, n=400, m=3000):
    rng = np.random.default_rng(seed)
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    w = rng.integers(0, 20, m).astype(np.float64)  # zero-weight arcs too: ties in the heap
    order = np.argsort(src, kind="stable")
    src, dst, w = src[order], dst[order], w[order]
    off = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=off[1:])
    return off, dst.astype(np.int64), w, sp.csr_matrix((w, dst, off), shape=(n, n))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("limit, max_arcs", [(1 << 40, 1 << 40), (8, 50), (64, 1)])
def test_phases_reach_dijkstras_distances(seed, limit, max_arcs):
    off, dst, w, M = _graph(seed)
    n = off.size - 1
    source = int(np.argmax(np.diff(off)))
    x = np.full(n, np.inf)
    x[source] = 0.0
    sent = np.full(n, np.inf)
    pos = np.full(n, -1, np.int64)
    relaxed = 0
    for _ in range(10 * n):  # the engine's loop: phases until nothing is active
        work = np.flatnonzero(x != sent)
        if work.size == 0:
            break
        if work.size >= limit:  # a large frontier takes a pass, as in the engine
            relaxed += A.monotone_push_pass_serial(work, off, dst, w, True, PLUS, MIN, x, sent)
            continue
        _, arcs, left = A.monotone_heap(work, off, dst, w, True, PLUS, MIN, x, sent, limit,
                                        max_arcs, pos)
        relaxed += arcs
        assert (pos == -1).all()  # every slot handed back, whatever stopped the phase
        assert left == 0 or left > limit or arcs > max_arcs
    assert np.array_equal(x, dijkstra(M, indices=source))
    if limit > n:  # one phase in Dijkstra's order: each reached vertex's arcs once
        reached = np.isfinite(x)
        assert relaxed == int(np.diff(off)[reached].sum())
