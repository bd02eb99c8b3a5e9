"""``vertex-async`` on min/max systems on one GPU, its worklist kept on the GPU
(:mod:`digraph.dispatch.engines.push.gpu_worklist`): answers equal scipy's and the CPU's, hubs (a
block each) included, and the counters and the round limit."""

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.csgraph as cg

import digraph

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("one_gpu")]


def _random(n, m, seed, hubs=()):
    rng = np.random.default_rng(seed)
    src = np.concatenate([rng.integers(0, n, m)] + [np.full(300, h) for h in hubs])
    dst = np.concatenate([rng.integers(0, n, m)] + [rng.integers(0, n, 300) for _ in hubs])
    w = rng.integers(1, 20, src.size).astype(np.float64)
    return src, dst, w


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sssp_with_hubs_equals_dijkstra(seed):
    from digraph.smx.cuda.common import HEAVY
    n = 120
    src, dst, w = _random(n, 360, seed, hubs=(3, 50))
    g = digraph.Graph.from_arrays(src, dst, w, num_vertices=n)
    assert (np.diff(g.out_offsets) >= HEAVY).any()  # the heavy kernel has work
    A = sp.csr_matrix((w, (src, dst)), shape=(n, n))
    A.sum_duplicates()  # parallel arcs: scipy adds them; keep the lightest instead
    lightest = {}
    for u, v, c in zip(src, dst, w):
        lightest[(u, v)] = min(c, lightest.get((u, v), np.inf))
    k = np.array(list(lightest))
    A = sp.csr_matrix((list(lightest.values()), (k[:, 0], k[:, 1])), shape=(n, n))
    r = digraph.run(g, "sssp", source=3, device="cuda", mode="vertex-async")
    assert np.array_equal(r.values, cg.dijkstra(A, indices=3))
    assert r.stats["engine"] == "gpu-vertex-async" and r.stats["converged"]
    assert r.stats["rounds"] >= 1 and r.stats["vertex_updates"] >= r.stats["rounds"]
    assert r.stats["arc_updates"] >= 300  # the hub's out-arcs, read at least once


def test_unweighted_chain_rounds_and_round_limit():
    from digraph.errors import ConvergenceError
    n = 50
    g = digraph.Graph.from_arrays(np.arange(n - 1), np.arange(1, n), num_vertices=n)
    r = digraph.run(g, "sssp", source=0, device="cuda", mode="vertex-async")
    assert np.array_equal(r.values, np.arange(n, dtype=float))
    # one vertex popped a round, the last one finding no out-arc
    assert r.stats["rounds"] == n and r.stats["vertex_updates"] == n
    assert r.stats["arc_updates"] == n - 1
    with pytest.raises(ConvergenceError):
        digraph.run(g, "sssp", source=0, device="cuda", mode="vertex-async", max_iter=10)


def test_widest_path_a_max_system():
    from digraph.algorithms import Algorithm, MonotoneSystem

    class Widest(Algorithm):
        name = "widest"
        parameters = {"source": 0}

        def prepare(self, graph, source):
            init = np.full(graph.num_vertices, -np.inf)
            init[graph.index_of(source, "source")] = np.inf
            return MonotoneSystem(init=init, relax="min", combine="max",
                                  arc_value=graph.arc_weights())
    src, dst, w = _random(80, 300, 5)
    g = digraph.Graph.from_arrays(src, dst, w, num_vertices=80)
    gpu = digraph.run(g, Widest(), source=0, device="cuda", mode="vertex-async")
    cpu = digraph.run(g, Widest(), source=0)
    assert np.array_equal(gpu.values, cpu.values)
