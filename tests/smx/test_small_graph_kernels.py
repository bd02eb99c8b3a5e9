"""What a small graph's first run compiles less of, with the same answers: the condensation by
numpy below ``NUMPY_ARCS`` arcs (digraph.paths.condensation), Tarjan and the levels without
allocators, and the SCC engine's serial pass without sweeps (digraph.smx.cpu.scc)."""

import dataclasses

import numba
import numpy as np
import pytest

import digraph
from digraph import generators
from digraph.dispatch.engines.scc import cpu as dag_push
from digraph.graph import Graph
from digraph.paths import condensation
from digraph.preprocess import scc as pre_scc
from digraph.smx.cpu import scc as K

FIELDS = ("order", "comp_offsets", "level_offsets", "comp_arcs", "iout_offsets", "iout_targets",
          "iout_arcs", "ein_offsets", "ein_sources", "ein_arcs")


def _random_graphs(seed, count):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n = int(rng.integers(1, 120))
        m = int(rng.integers(0, 4 * n))
        src = rng.integers(0, n, m)
        dst = np.where(rng.random(m) < 0.3, (src + 1) % n, rng.integers(0, n, m))  # cycles
        yield Graph.from_arrays(src, dst, num_vertices=n)  # self-loops and repeated arcs too


def test_numpy_condensation_is_the_kernels(monkeypatch):
    for g in _random_graphs(11, 60):
        small = condensation.Condensation(g)
        monkeypatch.setattr(condensation, "NUMPY_ARCS", 0)
        big = condensation.Condensation(g)
        monkeypatch.setattr(condensation, "NUMPY_ARCS", 1 << 16)
        assert small.num_components == big.num_components
        assert small.num_levels == big.num_levels
        for f in FIELDS:
            a, b = getattr(small, f), getattr(big, f)
            assert a.dtype == b.dtype, f
            assert np.array_equal(a, b), f


def test_tarjan_scan_is_tarjan_range():
    for g in _random_graphs(12, 30):
        n = g.num_vertices
        lab, nc = pre_scc.tarjan_scc(g.out_offsets, g.out_targets, n)
        ref = np.empty(n, np.int32)
        eoff, etg = np.zeros(n + 1, np.int64), np.zeros(0, np.int32)
        assert pre_scc._tarjan_range(g.out_offsets, g.out_targets, eoff, etg, np.int64(0),
                                     np.int64(n), ref) == nc
        assert np.array_equal(lab, ref)


def _engine_inputs(g, direct):
    cond = condensation.condensation_for(g)[0]
    n = g.num_vertices
    rng = np.random.default_rng(5)
    vscale = rng.random(n) / np.maximum(np.diff(g.out_offsets), 1) * 0.85
    threads = numba.config.NUMBA_NUM_THREADS
    return cond, (cond.comp_offsets, cond.comp_arcs, cond.ein_offsets, cond.ein_sources,
                  np.zeros(1), cond.iout_offsets, cond.iout_targets, np.zeros(1), False,
                  vscale[cond.order], rng.random(n), np.zeros(n), np.zeros(n), 1e-9, 0.0, False,
                  0.5, np.array([1.0, 3, 2, 0.3, 1.5]), 100,
                  np.zeros((threads, K.COUNTERS), np.int64),
                  np.zeros(cond.num_components, np.int64),
                  np.zeros(cond.num_components, np.int64), direct,
                  np.full((threads, max(direct * direct + direct, 5)), np.nan),
                  np.zeros(1, np.int64), np.zeros(1, cond.iout_targets.dtype), np.zeros(1),
                  np.zeros(1))


def test_serial_pass_direct_is_serial_pass():
    g = Graph.from_arrays(*generators.rmat(7, 2, seed=3))
    cond, _ = _engine_inputs(g, 0)
    direct = int(np.diff(cond.comp_offsets).max())  # every cyclic component solved exactly
    assert (cond.comp_arcs > 0).sum() > 0 and (cond.comp_arcs == 0).sum() > 0
    _, ref = _engine_inputs(g, direct)
    _, new = _engine_inputs(g, direct)
    K.serial_pass(0, cond.num_components, *ref)
    K.serial_pass_direct(0, cond.num_components, *new)
    for i in (11, 12, 19, 20, 21):  # x, r, counters, sweeps and arcs sent: bit for bit
        assert np.array_equal(ref[i], new[i])
    assert ref[19][:, K.DIRECT].sum() == (cond.comp_arcs > 0).sum()


@pytest.mark.parametrize("direct, pull, expected", [(0, 0.0, "serial_pass"),
                                                     (0, 5.0, "serial_pass_pulled"),
                                                     (32, 5.0, "serial_pass_direct")])
def test_engine_picks_the_pass_by_component_size(monkeypatch, direct, pull, expected):
    """Small components solved exactly, larger ones swept; the pulled sweeps' pass only where a
    component has fewer inside arcs a vertex than ``pull_degree`` (here one)."""
    calls = []
    for name in ("serial_pass", "serial_pass_direct", "serial_pass_pulled"):
        kernel = getattr(K, name)
        monkeypatch.setattr(K, name, lambda *a, _k=kernel, _n=name: (calls.append(_n), _k(*a)))
    g = Graph.from_arrays(np.array([0, 1, 2, 2, 3, 4]), np.array([1, 2, 0, 3, 4, 3]))
    s = dataclasses.replace(dag_push.DEFAULT, direct_vertices=direct, pull_degree=pull)
    r = digraph.run(g, "pagerank", mode="scc", settings=s)
    # the run's own pass comes last (a warm-up on a tiny graph may come first)
    assert calls and calls[-1] == expected
    ref = digraph.run(g, "pagerank", mode="scc", tol=1e-12)
    assert np.abs(r.values - ref.values).sum() < 1e-5


def test_warmup_compiles_both_serial_passes():
    # in this process (jobs=1), where the dispatchers' signatures can be seen
    digraph.warmup(modes=["scc"], families=["linear"], jobs=1)
    assert K.serial_pass.signatures and K.serial_pass_direct.signatures
    assert K.serial_pass_pulled.signatures and K.level_pass_pulled.signatures
    assert K.level_pass.signatures
