"""The round drivers (digraph/dispatch/driver.py): the protocol written once, stall detection and
hand-over, the progress reports every engine makes through them."""

import numpy as np
import pytest
import scipy.sparse as sp

import digraph
from digraph import progress
from digraph.algorithms import LinearSystem
from digraph.dispatch.engines.push import cpu_bsp as bsp, cpu_vertex_async as vertex_async
from digraph.dispatch import driver
from digraph.dispatch.convergence import certified_bound, linear_contraction
from digraph.graph import Graph
from digraph.result import RunStats

from conftest import random_graph


def katz_like(g, beta=0.9, seed=0):
    """``x = b + A x`` with ``A[v, u] = β / out-degree(u)``: columns sum to β (or 0)."""
    rng = np.random.default_rng(seed)
    deg = np.maximum(g.out_degree, 1)
    return LinearSystem(b=rng.random(g.num_vertices), src_scale=beta / deg)


def exact(g, system):
    n = g.num_vertices
    A = sp.csr_matrix((system.src_scale[g.arc_sources], (g.out_targets, g.arc_sources)), shape=(n, n))
    return np.linalg.solve(np.eye(n) - A.toarray(), system.b), A


class Jacobi:
    """A plain Jacobi push engine (scipy), the smallest thing the driver runs; ``freeze_after``
    makes its rounds do nothing from that round on, as an engine stuck on its thresholds would."""

    def __init__(self, g, system, freeze_after=None):
        self.g, self.system = g, system
        self.gammas = linear_contraction(g, system)
        self.A = exact(g, system)[1]
        self.x = np.zeros(g.num_vertices)
        self.r = system.b.copy()
        self.freeze_after = freeze_after
        self.steps = 0

    def scan(self, theta):
        a = np.abs(self.r)
        return float(a.sum()), float(a.max()), float(self.x.sum()), int((a > theta).sum())

    def step(self, theta):
        self.steps += 1
        if self.freeze_after is not None and self.steps > self.freeze_after:
            return
        self.x += self.r
        self.r = self.A @ self.r

    def certify(self):
        return certified_bound(self.g, self.system, self.x, self.gammas, self.r)


def new_stats():
    return RunStats.new()


@pytest.mark.parametrize("tol", [1e-4, 1e-8, 1e-12])
def test_linear_driver_converges_within_tol_of_the_exact_answer(tol):
    g = random_graph(1, 200, 800)
    system = katz_like(g)
    eng = Jacobi(g, system)
    stats = new_stats()
    out = driver.linear(eng, n=g.num_vertices, gammas=eng.gammas, normalize=False, tol=tol,
                        max_iter=10_000, stats=stats)
    assert out == "converged"
    assert stats["error_bound"] <= tol or stats.get("floor_limited")
    assert np.abs(eng.x - exact(g, system)[0]).sum() <= max(tol, stats["error_bound"])
    assert stats["rounds"] == eng.steps
    assert "stalled_at" not in stats


def test_max_iter_is_unconverged_with_its_bound():
    g = random_graph(2, 100, 400)
    eng = Jacobi(g, katz_like(g))
    stats = new_stats()
    out = driver.linear(eng, n=g.num_vertices, gammas=eng.gammas, normalize=False, tol=1e-12,
                        max_iter=3, stats=stats)
    assert out == "unconverged" and stats["rounds"] == 3
    assert stats["error_bound"] > 1e-12


def test_a_flat_bound_is_a_stall_after_stall_rounds():
    g = random_graph(3, 300, 1200)
    system = katz_like(g, beta=0.9)
    eng = Jacobi(g, system, freeze_after=5)
    stats = new_stats()
    out = driver.linear(eng, n=g.num_vertices, gammas=eng.gammas, normalize=False, tol=1e-10,
                        max_iter=100_000, stats=stats)
    assert out == "stalled"
    w = driver.stall_rounds(eng.gammas)
    assert w == driver.DEFAULT.stall_min_rounds  # γ = 0.9 halves the error in 7 rounds
    # the last round that lowered the bound was the 5th; it then stayed flat for w rounds
    assert stats["rounds"] == 5 + w
    assert stats["stalled_at"]["round"] == 5 + w
    assert stats["error_bound"] > 1e-10 and not stats.get("converged")


def test_a_slow_contraction_is_never_a_stall():
    """γ = 0.999: the bound falls by 0.1% a round, slower than the stall test's 0.999 factor
    would notice round by round; the window (ln 2 / (1 − γ) rounds) still sees it fall."""
    g = Graph.from_arrays(np.arange(50), (np.arange(50) + 1) % 50)  # a ring: every column 0.999
    system = LinearSystem(b=np.ones(50), src_scale=np.full(50, 0.999))
    eng = Jacobi(g, system)
    assert driver.stall_rounds(eng.gammas) >= 693
    stats = new_stats()
    out = driver.linear(eng, n=50, gammas=eng.gammas, normalize=False, tol=1e-6,
                        max_iter=100_000, stats=stats)
    assert out == "converged" and "stalled_at" not in stats


def test_a_stalled_run_is_finished_by_another_engine_from_its_state():
    g = random_graph(4, 400, 1600)
    system = katz_like(g, beta=0.95, seed=4)
    eng = Jacobi(g, system, freeze_after=8)
    stats = new_stats()
    stats["route"] = {"engine": "test engine", "steps": []}
    out = driver.linear(eng, n=g.num_vertices, gammas=eng.gammas, normalize=False, tol=1e-8,
                        max_iter=100_000, stats=stats)
    assert out == "stalled"
    before = stats["rounds"]
    driver.hand_over(stats, "vertex-async", "the test engine froze")
    x, ok = vertex_async._solve_linear(g, system, 1e-8, 100_000, stats, x0=eng.x, delta0=eng.r)
    assert ok and stats["error_bound"] <= 1e-8
    assert np.abs(x - exact(g, system)[0]).sum() <= 1e-8
    assert stats["finished_by"] == "vertex-async"
    assert stats["route"]["steps"] == [{"to": "vertex-async", "why": "the test engine froze",
                                       "round": before, "code": "hand-over"}]
    assert stats["handed_over"] == [{"to": "vertex-async", "why": "the test engine froze",
                                    "round": before}]
    assert stats["rounds"] > before


@pytest.mark.parametrize("mode", ["bsp", "vertex-async", "scc", "power"])
def test_every_round_is_reported_with_a_falling_bound(mode):
    g = random_graph(5, 500, 2500)
    seen = []
    with progress.listening(lambda rounds, bound, **info: seen.append((rounds, bound))):
        r = digraph.run(g, "pagerank", mode=mode, tol=1e-10)
    if mode == "scc":  # the SCC engine sweeps components, not rounds: it reports none
        return
    # (rounds run, the bound of the state they left): linear engines report before each round,
    # the power iteration after each round but its last
    first = 1 if mode == "power" else 0
    assert [k for k, _ in seen] == list(range(first, first + len(seen)))
    assert len(seen) == r.stats["rounds"] - first
    bounds = [b for _, b in seen]
    assert all(b is not None for b in bounds)
    if mode != "vertex-async":  # Jacobi and power rounds: the bound falls every round
        assert all(b2 <= b1 for b1, b2 in zip(bounds, bounds[1:]))
    assert bounds[-1] < bounds[0]


@pytest.mark.parametrize("mode", ["bsp", "vertex-async"])
@pytest.mark.parametrize("name, params", [("sssp", {"source": 0}), ("kcore", {})])
def test_worklist_rounds_report_their_frontier(mode, name, params):
    g = random_graph(6, 300, 1200)
    seen = []
    with progress.listening(lambda rounds, bound, **info: seen.append((rounds, bound, info))):
        r = digraph.run(g, name, mode=mode, **params)
    assert len(seen) == r.stats["rounds"] and r.stats["rounds"] > 0
    assert all(b is None and info["frontier"] > 0 for _, b, info in seen)


def test_a_listener_that_raises_does_not_stop_the_run():
    g = random_graph(7, 200, 800)
    calls = []

    def broken(rounds, bound, **info):
        calls.append(rounds)
        raise RuntimeError("display gone")
    with progress.listening(broken):
        r = digraph.run(g, "pagerank", mode="bsp", tol=1e-8)
    assert r.stats["converged"] and calls == [0]  # dropped after its first failure


def test_bsp_settings_are_frozen_and_used():
    with pytest.raises(Exception):
        bsp.DEFAULT.dense_divisor = 3
    g = random_graph(8, 300, 1500)
    system = katz_like(g)
    counts = {}
    for div in (0, 10**9):
        stats = new_stats()
        x, ok = bsp.solve(g, system, tol=1e-8, max_iter=10_000, stats=stats,
                          settings=bsp.BspSettings(dense_divisor=div))
        assert ok and np.abs(x - exact(g, system)[0]).sum() <= 1e-8
        counts[div] = (stats["dense_rounds"], stats["sparse_rounds"])
    assert counts[0][0] == 0 and counts[10**9][0] > 0


def test_a_resumed_power_run_reads_the_difference_before_its_first_round():
    """``driver.power(last_diff=)``: a run resumed mid-way (a Dask worker's batch) applies the
    stop rule's floor test to its first round with the difference of the round before, as the
    run that did not stop would; without it the first round is never judged floor-limited."""
    g1, tol = 0.85, 1e-12
    for last, expect in ((np.inf, 2), (1e-6, 1)):
        # bounds far above tol, rounding far above what tol allows; the first round's
        # difference is above the one before the run (1e-6), the second's below the first's
        rounds = iter([(1e-3, 1e-9, 2e-6), (1e-3, 1e-9, 1e-6)])
        stats = {"rounds": 0}
        done, converged = driver.power(lambda: next(rounds), g1=g1, tol=tol, max_iter=2,
                                       stats=stats, last_diff=last)
        assert done == expect
        assert bool(stats.get("floor_limited")) == (last != np.inf)
