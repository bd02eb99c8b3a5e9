"""The dual-weight error bound (digraph.dispatch.dual_bound) and adsorption in every CPU mode.

Adsorption's columns sum to more than 1, so before the dual weights its only bound was the L∞
route, ``n`` times too loose: the default mode never converged on real graphs (issue 17).  These
tests check the weights against the exact ``z = (I − Aᵀ)⁻¹ 1``, the bound against the true error,
and that adsorption converges in every mode at tol 1e-4 … 1e-12 on R-MAT graphs of 1 k – 33 k
vertices and on the real graphs of ``../shared/datasets`` with seeds of high and of low degree.
"""

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import digraph
from digraph.algorithms import Adsorption, LinearSystem
from digraph.algorithms._reference import coefficient_matrix
from digraph.dispatch.convergence import (certified_bound, dual_sums, dual_sums_serial,
                                          linear_contraction)
from digraph.dispatch.dual_bound import DualSettings, dual_weights, scaled_system
from digraph.generators import rmat
from digraph.graph import Graph

from conftest import dataset_path, random_graph

CPU_MODES = [None, "bsp", "vertex-async", "path", "path-nopriority"]


def adsorption_system(g, seeds, beta=0.8):
    algo = Adsorption()
    return algo.prepare(g, **algo.bind(g, {"seeds": seeds, "beta": beta}))


def exact_dual(g, system):
    n = g.num_vertices
    a = coefficient_matrix(g, system)
    return spla.spsolve((sp.identity(n, format="csc") - a.T.tocsc()).tocsc(), np.ones(n))


def reference(g, system, sweeps=600):
    """``x = b + A x`` by Jacobi sweeps (row sums ≤ 0.9 here: 600 sweeps leave < 1e-27)."""
    a = coefficient_matrix(g, system)
    b = np.asarray(system.b, float)
    x = b.copy()
    for _ in range(sweeps):
        x = b + a @ x
    return x


def hub_system(g, rho=0.9):
    """A user system with row sums ``rho`` and hub columns far above 1 (only the L∞ route had a
    bound for it before)."""
    indeg = g.in_degree.astype(float)
    dst = np.where(indeg > 0, rho / np.maximum(indeg, 1), 0.0)
    b = 1.0 + (np.arange(g.num_vertices) % 3)
    return LinearSystem(b=b, dst_scale=dst)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("kind", ["adsorption", "hub"])
def test_dual_weights_bound_the_exact_dual_from_above(seed, kind):
    g = random_graph(seed, 300, 2000)
    system = adsorption_system(g, [0, 1, 2]) if kind == "adsorption" else hub_system(g)
    assert linear_contraction(g, system)[0] > 1.0  # the classic L1 route does not apply
    zhat, sweeps = dual_weights(g, system)
    z = exact_dual(g, system)
    assert zhat is not None and sweeps >= 1
    assert np.all(zhat >= z * (1 - 1e-12))
    assert zhat.max() <= 2.01 * z.max()  # DualSettings.slack 0.5: within a factor 2
    # a super-solution, checked in exact-enough arithmetic (long double)
    a = coefficient_matrix(g, system).astype(np.longdouble)
    assert np.all(zhat.astype(np.longdouble) - a.T @ zhat.astype(np.longdouble) >= 1)


def test_no_dual_weights_for_a_system_that_is_no_contraction():
    g = Graph.from_arrays([0, 1], [1, 0])
    zhat, sweeps = dual_weights(g, LinearSystem(b=np.ones(2), src_scale=np.full(2, 1.0)),
                                settings=DualSettings(max_sweeps=50))
    assert zhat is None and sweeps == 50


@pytest.mark.parametrize("seed", range(5))
def test_dual_bound_is_sound_and_tight_for_perturbed_states(seed):
    g = random_graph(seed, 400, 3000)
    system = hub_system(g)
    x_star = reference(g, system)
    zhat, _ = dual_weights(g, system)
    rng = np.random.default_rng(seed)
    gammas = linear_contraction(g, system)
    for scale in (1e-2, 1e-6, 1e-10):
        x = x_star * (1 + scale * rng.standard_normal(x_star.size))
        out = np.empty_like(x)
        bound, _, _ = certified_bound(g, system, x, gammas, out, dual=zhat)
        classic, _, _ = certified_bound(g, system, x, gammas, out)
        err = np.abs(x - x_star).sum()
        assert err <= bound
        assert bound <= classic  # never looser than the L∞ route
    below = x_star * (1 - 1e-6)  # a state below the answer (a push engine's): nearly exact
    bound, _, _ = certified_bound(g, system, below, gammas, np.empty_like(below), dual=zhat)
    err = np.abs(below - x_star).sum()
    assert err <= bound <= 2.01 * err


def test_dual_sums_are_the_dot_products_both_kernels():
    # the certificate's two sums, on Numba's threads and on one: each within a few ulps of the
    # exactly rounded dot product (math.fsum of the exact products' float64 values)
    import math
    rng = np.random.default_rng(5)
    n = 20_000
    dual, b, x = rng.random(n) * 40, rng.random(n), rng.random(n)
    r = rng.standard_normal(n) * 1e-9
    u8 = 8 * np.finfo(np.float64).eps / 2
    want = (math.fsum(dual * np.abs(r)),
            math.fsum(dual * (u8 * (2 * np.abs(b) + 2 * np.abs(x) + np.abs(r)))))
    for kernel in (dual_sums, dual_sums_serial):
        got = kernel(dual, b, x, r)
        assert np.allclose(got, want, rtol=1e-12, atol=0)


def test_scaled_system_residual_is_the_weighted_residual():
    g = random_graph(1, 200, 1500)
    system = adsorption_system(g, [3, 4])
    zhat, _ = dual_weights(g, system)
    s = scaled_system(system, zhat)
    x = np.random.default_rng(0).random(g.num_vertices)
    a, a2 = coefficient_matrix(g, system), coefficient_matrix(g, s)
    r = system.b + a @ x - x
    r2 = s.b + a2 @ (zhat * x) - zhat * x
    assert np.allclose(r2, zhat * r, rtol=1e-12, atol=1e-14)
    assert linear_contraction(g, s) == (0.0, np.inf)  # its residual bounds the original error


def check_adsorption(g, seeds, tol, mode, x_star=None, max_iter=5000):
    system = adsorption_system(g, seeds)
    if x_star is None:
        x_star = reference(g, system)
    r = digraph.run(g, "adsorption", seeds=seeds, beta=0.8, tol=tol, mode=mode, max_iter=max_iter)
    st_ = r.stats
    err = np.abs(r.values - x_star).sum()
    assert st_["converged"], st_
    assert st_["error_route"] == "dual"
    assert err <= st_["error_bound"] * (1 + 1e-9) + 1e-15
    if st_.get("floor_limited"):
        assert tol < st_["error_bound"] and st_["error_floor"] > tol / 2
    else:
        assert st_["error_bound"] <= tol
    return r


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scale=st.integers(10, 15), seed=st.integers(0, 2**16), low=st.booleans(),
       tol=st.sampled_from([1e-4, 1e-8, 1e-12]), mode=st.sampled_from(CPU_MODES))
def test_adsorption_converges_in_every_mode_on_rmat(scale, seed, low, tol, mode):
    src, dst = rmat(scale, 8, seed=seed)
    g = digraph.load((src, dst))
    order = np.argsort(g.out_degree if low else -g.out_degree, kind="stable")
    order = order[g.out_degree[order] > 0]  # low: the least connected vertices that have arcs
    seeds = g.vertex_ids[order[:10]]
    check_adsorption(g, seeds, tol, mode)


def test_dual_weights_are_reused_for_other_seeds(engine_settings):
    import dataclasses
    from digraph.dispatch import route
    # on the whole graph, however few vertices a seed reaches (dispatch/reach.py)
    engine_settings(route.DEFAULT, reach_share=0.0)
    src, dst = rmat(11, 8, seed=2)
    g = digraph.load((src, dst))
    a = digraph.run(g, "adsorption", seeds=[g.vertex_ids[0]], tol=1e-8)
    b = digraph.run(g, "adsorption", seeds=[g.vertex_ids[1]], tol=1e-8)
    assert a.stats["dual_sweeps"] > 0 and b.stats["dual_sweeps"] == 0  # A is the same
    assert b.stats["error_bound"] <= 1e-8


@pytest.mark.parametrize("name", ["wiki-Vote", "p2p-Gnutella08", "dblp-2010", "cnr-2000"])
def test_adsorption_converges_on_real_graphs(name):
    g = digraph.load(dataset_path(f"{name}.txt.gz"))
    deg = g.out_degree
    has = np.flatnonzero(deg > 0)
    high = g.vertex_ids[has[np.argsort(-deg[has], kind="stable")[:10]]]
    low = g.vertex_ids[has[np.argsort(deg[has], kind="stable")[:10]]]
    large = g.num_arcs > 1_000_000  # the named modes at one tolerance there (the suite's time)
    for seeds in (high, low):
        x_star = reference(g, adsorption_system(g, seeds), sweeps=250)  # 0.8^250 < 1e-24
        for tol in (1e-4, 1e-8, 1e-12):
            for mode in (None, "bsp", "vertex-async"):
                if mode is None or not large or tol == 1e-8:
                    check_adsorption(g, seeds, tol, mode, x_star)
