"""The CPU engines' task cuts (:mod:`digraph.dispatch.runtime.cpu_tasks`): vertex ranges of
about equal in-arcs, one a ``prange`` task, so that graphs whose arcs crowd at low vertex ids
(social and citation graphs) keep every thread busy; the pulls give the same answers however
the vertices are cut."""

import numba
import numpy as np
import pytest

import digraph
from digraph.dispatch.engines.power import cpu as power_cpu
from digraph.dispatch.runtime import cpu_tasks
from digraph.smx.cpu import bsp


def _skewed(n=3000, m=60000, seed=5):
    """Arcs whose targets crowd at the lowest ids (a Zipf-like in-degree by id)."""
    rng = np.random.default_rng(seed)
    dst = np.minimum((rng.pareto(0.8, m) * 3).astype(np.int64), n - 1)
    src = rng.integers(0, n, m)
    return digraph.Graph.from_arrays(src, dst, num_vertices=n)


@pytest.mark.parametrize("threads", [1, 2, 3, 16])
def test_cuts_cover_the_vertices_in_ranges_of_about_equal_arcs(threads):
    g = _skewed()
    cuts = cpu_tasks.arc_tasks(g, threads=threads)
    T = cpu_tasks.TASKS_PER_THREAD * threads
    assert cuts.dtype == np.int64 and cuts.size == T + 1
    assert cuts[0] == 0 and cuts[-1] == g.num_vertices and np.all(np.diff(cuts) >= 0)
    off = g.in_offsets.astype(np.int64)
    c = cpu_tasks.VERTEX_COST
    work = np.diff(off[cuts] + c * cuts)
    top = int(np.diff(off).max()) + c  # a range is never cut inside a vertex
    assert work.max() <= work.sum() / T + top
    # the even split by vertex ids would not be: the arcs crowd at the first ids
    even = np.linspace(0, g.num_vertices, T + 1).astype(np.int64)
    if threads > 1:
        assert np.diff(off[even] + c * even).max() > 2 * work.max()


def test_cuts_are_kept_per_thread_count_and_handle_tiny_graphs():
    g = _skewed()
    a = cpu_tasks.arc_tasks(g, threads=2)
    assert cpu_tasks.arc_tasks(g, threads=2) is a
    assert cpu_tasks.arc_tasks(g, threads=4).size == 4 * cpu_tasks.TASKS_PER_THREAD + 1
    empty = digraph.Graph.from_arrays(np.empty(0, np.int64), np.empty(0, np.int64),
                                      num_vertices=0)
    assert list(cpu_tasks.arc_tasks(empty, threads=2)) == [0, 0]
    one = digraph.Graph.from_arrays(np.array([0]), np.array([0]), num_vertices=1)
    c = cpu_tasks.arc_tasks(one, threads=2)
    assert c[0] == 0 and c[-1] == 1


def test_the_pulls_give_the_same_answer_whatever_the_cut():
    g = _skewed()
    n = g.num_vertices
    rng = np.random.default_rng(1)
    z, ds = rng.random(n), rng.random(n)
    coef = rng.random(g.num_arcs)
    whole = np.array([0, n], np.int64)
    prev = numba.get_num_threads()
    try:
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        cuts = cpu_tasks.arc_tasks(g)
        for has in (False, True):
            a, b = np.empty(n), np.empty(n)
            sa, wa = power_cpu._pull_plain(whole, g.in_offsets, g.in_sources, coef, has, z, ds, a)
            sb, wb = power_cpu._pull_plain(cuts, g.in_offsets, g.in_sources, coef, has, z, ds, b)
            assert np.array_equal(a, b)  # each entry alone: the same sums
            assert sb == pytest.approx(sa, rel=1e-12) and wb == pytest.approx(wa, rel=1e-12)
            c = np.empty(n)
            sc = power_cpu._pull(cuts, g.in_offsets, g.in_sources, coef, has, z, ds, c)
            assert np.allclose(c, a, rtol=1e-13) and sc == pytest.approx(sa, rel=1e-12)
        delta = rng.standard_normal(n)
        outs = []
        for k in (whole, cuts):
            x, send, nd = np.zeros(n), np.empty(n), np.empty(n)
            bsp.linear_dense_round(k, g.in_offsets, g.in_sources, coef, True, z, ds,
                                   delta.copy(), x, 0.5, send, nd)
            outs.append((x, nd))
        assert np.array_equal(outs[0][0], outs[1][0]) and np.array_equal(outs[0][1], outs[1][1])
    finally:
        numba.set_num_threads(prev)


def test_pagerank_on_a_skewed_graph_is_exact_within_its_bound_on_two_threads():
    from digraph.algorithms import PageRank
    g = _skewed(800, 12000)
    exact = PageRank().reference(g)
    for mode in ("power", "bsp"):
        r = digraph.run(g, "pagerank", mode=mode, tol=1e-10, threads=2)
        assert np.abs(r.values - exact).sum() <= r.stats["error_bound"]
