"""Small frontiers of min/max systems on one thread (dispatch/engines/push/cpu_vertex_async.py): a FIFO phase, or a
heap (Dijkstra's order) when pushes never better the value they came from; answers against scipy
and the BSP engine, and the work they save on chains and grids."""

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.csgraph as cg

import digraph
from digraph.algorithms import REQUIRED, Algorithm, MonotoneSystem
from digraph.dispatch.engines.push import cpu_vertex_async as VA


class Widest(Algorithm):
    """Largest bottleneck weight from ``source``: combine max, relax min (the FIFO phase)."""

    name = "widest_queue_test"
    parameters = {"source": REQUIRED}

    def prepare(self, graph, source):
        init = np.full(graph.num_vertices, -np.inf)
        init[graph.index_of(source, "source")] = np.inf
        return MonotoneSystem(init=init, relax="min", combine="max", arc_value=graph.arc_weights())


def _random(seed, n=400, m=2400):
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, (2, m))
    return digraph.load((src, dst, rng.uniform(0.01, 10.0, m)), num_vertices=n), src, dst


def test_sssp_on_a_long_chain_is_one_queue_phase():
    n = 100_000
    g = digraph.load((np.arange(n - 1), np.arange(1, n)))
    r = digraph.run(g, "sssp", source=0)
    s = r.stats
    assert s["mode"] == "vertex-async" and s["push"]["queue"] == "fifo"  # unit steps: breadth-first
    assert s["rounds"] == 1 and s["push"]["queue_phases"] == 1 and s["arc_updates"] == n - 1
    assert np.array_equal(r.values, np.arange(n, dtype=float))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("share", [1.0, VA.DEFAULT.queue_share, 0.0])
def test_sssp_matches_dijkstra_whatever_the_phase(engine_settings, seed, share):
    engine_settings(VA.DEFAULT, queue_share=share)
    g, src, dst = _random(seed)
    u, v, w = g.arc_sources, g.out_targets, g.arc_weights()
    first = np.lexsort((w, v, u))  # parallel arcs: the lightest one (csr_matrix would add them)
    keep = first[np.r_[True, (np.diff(u[first]) != 0) | (np.diff(v[first]) != 0)]]
    ref = cg.dijkstra(sp.csr_matrix((w[keep], (u[keep], v[keep])), shape=(400, 400)),
                      indices=int(g.index_of(3, "source")))
    r = digraph.run(g, "sssp", source=3, mode="vertex-async")
    assert np.allclose(r.values, ref, rtol=0, atol=1e-9) and r.stats["converged"]
    assert r.stats["push"]["queue"] == "heap"
    if share == 1.0:  # all of it in the heap: every reachable vertex pushed once
        reach = np.isfinite(ref)
        assert r.stats["push"]["queue_phases"] >= 1
        assert r.stats["vertex_updates"] == reach.sum()


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("share", [1.0, 0.0])
def test_widest_path_fifo_matches_bsp(engine_settings, seed, share):
    engine_settings(VA.DEFAULT, queue_share=share)
    g, _, _ = _random(seed + 10)
    r = digraph.run(g, Widest(), source=5, mode="vertex-async")
    ref = digraph.run(g, Widest(), source=5, mode="bsp")
    assert np.array_equal(r.values, ref.values)
    assert r.stats["push"]["queue"] == "fifo"


class MinPlus(Algorithm):
    """Shortest walks from ``source`` along arcs of any sign (a DAG here: no negative cycle)."""

    name = "minplus_queue_test"
    parameters = {"source": REQUIRED}

    def prepare(self, graph, source):
        init = np.full(graph.num_vertices, np.inf)
        init[graph.index_of(source, "source")] = 0.0
        return MonotoneSystem(init=init, relax="plus", combine="min", arc_value=graph.arc_weights())


def test_negative_arcs_take_the_fifo_phase():
    src = np.array([0, 0, 1, 2])
    dst = np.array([1, 2, 3, 3])
    w = np.array([1.0, 5.0, 10.0, -8.0])
    g = digraph.load((src, dst, w))
    r = digraph.run(g, MinPlus(), source=0, mode="vertex-async")
    assert r.stats["push"]["queue"] == "fifo"
    assert np.array_equal(r.values, [0.0, 1.0, 5.0, -3.0])
