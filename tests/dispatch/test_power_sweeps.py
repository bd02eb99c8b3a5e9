"""Gauss–Seidel sweeps as the CPU power iteration's accelerator (``PowerSettings.accelerator``
``"gauss-seidel"``, the default on one thread; :mod:`digraph.dispatch.engines.power.cpu_sweeps`, kernel
:mod:`digraph.smx.cpu.gauss_seidel`): the answer is a power step whose bound is within ``tol``
of the exact answer, on graphs with self-loops (solved exactly), arc weights, personalisation and
dangling vectors; the sweeps start only where the plain rate is slow; the values do not depend
on the threads' timing."""

import dataclasses

import numba
import numpy as np
import pytest

import digraph
from digraph import Graph
from digraph.algorithms import PageRank
from digraph.dispatch.engines.power import cpu as power
from digraph.dispatch.settings import using
from digraph.generators import rmat
from digraph.result import RunStats

from conftest import random_graph
from test_power import _two_giants

GS = power.PowerSettings(accelerator="gauss-seidel")
PLAIN = power.PowerSettings(accelerator="none")
FROM_ROUND_1 = power.PowerSettings(accelerator="gauss-seidel", anderson_from_ratio=0.0)


def solve(g, tol, settings=GS, **params):
    algo = PageRank()
    system = algo.prepare(g, **algo.bind(g, params))
    stats = RunStats.new()
    x, converged = power.solve(g, system, tol=tol, max_iter=10_000, stats=stats,
                               settings=settings)
    return np.asarray(x), converged, stats


def _exact(g, **params):
    return PageRank().reference(g, **params)


def test_the_sweeps_cut_the_rounds_where_the_plain_rate_is_slow():
    g = _two_giants(4000, 1)
    x, converged, s = solve(g, 1e-10)
    plain = solve(g, 1e-10, settings=PLAIN)[2]
    assert converged and s["power_sweeps"] > 0 and s["power_checks"] >= 1
    assert s["rounds"] < plain["rounds"] / 2
    assert np.abs(x - _exact(g)).sum() <= s["error_bound"] <= 1e-10
    # each check is one more pass over the arcs
    assert s["arc_updates"] == (s["rounds"] + s["power_checks"]) * g.num_arcs


def test_over_relaxed_sweeps_cut_the_sweeps_and_keep_the_bound():
    """``PowerSettings.sweep_relaxation``: the factor measured on the sweeps (``"auto"``) and a
    fixed one both end within tol of the exact answer; on a weighted grid (a slow, smooth
    component) the measured factor takes fewer sweeps than the plain ones."""
    k = 50
    idx = np.arange(k * k).reshape(k, k)
    a = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel()])
    b = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel()])
    w = np.random.default_rng(0).integers(1, 101, 2 * a.size).astype(np.float64)
    g = digraph.load((np.concatenate([a, b]), np.concatenate([b, a]), w), num_vertices=k * k)
    runs = {}
    for relax in (1.0, "auto", 1.2):
        st = dataclasses.replace(GS, sweep_relaxation=relax)
        x, converged, s = solve(g, 1e-10, settings=st)
        assert converged and np.abs(x - _exact(g)).sum() <= s["error_bound"] <= 1e-10
        runs[relax] = s["power_sweeps"]
    assert runs["auto"] < 0.85 * runs[1.0]
    with pytest.raises(digraph.errors.InvalidParameterError, match="sweep_relaxation"):
        solve(g, 1e-10, settings=dataclasses.replace(GS, sweep_relaxation=2.5))


def test_a_fast_plain_rate_runs_the_plain_iteration_value_for_value():
    src, dst = rmat(13, 16, seed=1)
    g = digraph.load((src, dst), num_vertices=2 ** 13)
    x, _, s = solve(g, 1e-10)
    x0, _, s0 = solve(g, 1e-10, settings=PLAIN)
    assert s["power_sweeps"] == 0 and s["rounds"] == s0["rounds"] and np.array_equal(x, x0)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("tol", [1e-5, 1e-9, 1e-13])
def test_converged_means_within_tol(seed, tol):
    g = random_graph(seed, 500, 2500)
    x, converged, s = solve(g, tol, settings=FROM_ROUND_1)
    assert converged is True
    assert s["error_bound"] <= tol or s.get("floor_limited")
    assert np.abs(x - _exact(g)).sum() <= s["error_bound"] * (1 + 1e-9) + 1e-15


def test_self_loops_are_solved_exactly_and_the_answer_is_exact():
    rng = np.random.default_rng(7)
    n = 3000
    src = np.concatenate([rng.integers(0, n, 12000), np.arange(n)])  # a self-loop on each
    dst = np.concatenate([rng.integers(0, n, 12000), np.arange(n)])
    g = Graph.from_arrays(src, dst, num_vertices=n)
    x, converged, s = solve(g, 1e-11, settings=FROM_ROUND_1)
    plain = solve(g, 1e-11, settings=PLAIN)[2]
    assert converged and s["power_sweeps"] > 0
    assert s["rounds"] < plain["rounds"]
    assert np.abs(x - _exact(g)).sum() <= s["error_bound"] <= 1e-11


def test_weights_personalisation_and_dangling_vectors():
    rng = np.random.default_rng(3)
    n, m = 1500, 6000
    src, dst = rng.integers(0, n, m), rng.integers(0, n // 2, m)  # half the vertices dangle
    w = rng.random(m) + 0.1
    g = Graph.from_arrays(src, dst, w, num_vertices=n)
    pers = rng.random(n)
    dang = rng.random(n)
    for params in ({}, {"personalization": pers}, {"dangling": dang},
                   {"personalization": pers, "dangling": dang, "alpha": 0.95}):
        x, converged, s = solve(g, 1e-10, settings=FROM_ROUND_1, **params)
        assert converged and s["power_sweeps"] > 0, params
        assert np.abs(x - _exact(g, **params)).sum() <= s["error_bound"] <= 1e-10, params


def test_the_values_do_not_depend_on_timing_and_threads_keep_the_bound():
    g = _two_giants(6000, 2)
    exact = _exact(g)
    prev = numba.get_num_threads()
    try:
        for t in sorted({1, min(2, numba.config.NUMBA_NUM_THREADS)}):
            numba.set_num_threads(t)
            a, _, s = solve(g, 1e-10)
            b, _, _ = solve(g, 1e-10)
            assert np.array_equal(a, b)  # each range reads the others' values of the sweep's start
            assert np.abs(a - exact).sum() <= s["error_bound"] <= 1e-10
    finally:
        numba.set_num_threads(prev)


def test_digraph_run_says_which_accelerator_ran():
    g = _two_giants(4000, 3)
    with using(GS):
        r = digraph.run(g, "pagerank", mode="power", tol=1e-10)
    assert r.stats["power"]["sweeps"] > 0 and r.stats["power"]["checks"] >= 1
    # the default: the sweeps on one thread; on several where few arcs cross the ranges (here
    # the two giants, one a range), Anderson's mixes where many do (a random graph) and on more
    # threads than a sweep_threads cap
    one = digraph.run(g, "pagerank", mode="power", tol=1e-10, threads=1)
    assert one.stats["power"]["sweeps"] > 0 and not one.stats["power"]["anderson_mixes"]
    from digraph.dispatch.engines.power.cpu_sweeps import crossing_share
    assert power.DEFAULT.sweep_threads is None  # no cap: the crossing share decides
    if numba.config.NUMBA_NUM_THREADS > 1:
        assert crossing_share(g, 2) <= power.DEFAULT.sweep_cross
        two = digraph.run(g, "pagerank", mode="power", tol=1e-10, threads=2)
        assert two.stats["power"]["sweeps"] > 0 and not two.stats["power"]["anderson_mixes"]
        mixed = digraph.load(rmat(12, 8, a=0.25, b=0.25, c=0.25, seed=2), num_vertices=2 ** 12)
        assert crossing_share(mixed, 2) > power.DEFAULT.sweep_cross
        r = digraph.run(mixed, "pagerank", mode="power", tol=1e-10, threads=2,
                        settings=[power.PowerSettings(anderson_from_ratio=0.0)])
        assert not r.stats["power"].get("sweeps")
        with using(power.PowerSettings(sweep_threads=1)):
            capped = digraph.run(g, "pagerank", mode="power", tol=1e-10, threads=2)
        assert capped.stats["power"]["anderson_mixes"] > 0
        assert not capped.stats["power"].get("sweeps")
    with using(power.PowerSettings(accelerator="anderson")):
        r2 = digraph.run(g, "pagerank", mode="power", tol=1e-10)
    assert r2.stats["power"]["anderson_mixes"] > 0 and not r2.stats["power"].get("sweeps")
    with pytest.raises(digraph.errors.InvalidParameterError, match="accelerator"):
        digraph.run(g, "pagerank", mode="power",
                    settings=[power.PowerSettings(accelerator="jacobi")])


def test_a_ring_is_solved_by_the_sweeps_within_the_probe_s_judged_rounds():
    # one directed ring with a few chords: |lambda2| near 1, the probe trips; sweeps in vertex
    # order follow the ring, and the run ends in power before its judge has to decide
    from digraph.dispatch import route
    n = 3000
    rng = np.random.default_rng(5)
    ring = np.arange(n)
    g = Graph.from_arrays(np.concatenate([ring, rng.integers(0, n, 30)]),
                          np.concatenate([(ring + 1) % n, rng.integers(0, n, 30)]), num_vertices=n)
    with using([route.RouteSettings(probe_margin=np.inf), GS]):  # a judge never going on
        r = digraph.run(g, "pagerank", tol=1e-9)
    s = r.stats
    assert s["mode"] == "power" and s["probe_rounds"] >= 3 and s["route"]["steps"] == []
    assert s["rounds"] < s["probe_rounds"] + route.DEFAULT.probe_judge_rounds
    assert np.abs(r.values - _exact(g)).sum() <= s["error_bound"] <= 1e-9
