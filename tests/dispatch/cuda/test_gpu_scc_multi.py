"""The DAG dispatcher over several GPUs (``mode="scc"``, ``device="cuda:0,1,..."``,
:mod:`digraph.dispatch.engines.scc.gpus`): each unit's components dealt to the GPUs, what
crosses exchanged, giants sharded.  Without GPUs the GPUs are Numba's simulated device named
several times (each with arrays of its own, so a value not exchanged is missing); on a machine
with several GPUs the same tests run on them."""

import dataclasses

import numpy as np
import pytest

import digraph
from digraph.paths.condensation import condensation_for
from digraph.paths.scc_deal import crossings, deal
from digraph.paths.scc_schedule import scc_schedule

from test_gpu_scc import _cycles_dag, _pagerank_exact

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("one_gpu")]


def _settings(engine_settings, heavy_arcs, min_arcs_per_gpu):
    """Small heavy components (many heavy groups to deal) and the sharded engines' arcs a GPU."""
    from digraph.dispatch.runtime.cuda import shard_settings
    from digraph.dispatch.engines.scc import gpu as scc
    engine_settings(scc.DEFAULT, heavy_arcs=heavy_arcs)
    engine_settings(shard_settings.DEFAULT, min_arcs_per_gpu=min_arcs_per_gpu)


def _devices(k):
    return "cuda:" + ",".join(str(i) for i in range(k))


def test_dealt_components_and_exchange_give_the_answer(ngpu, engine_settings):
    """Light pieces and heavy components dealt to 2 and 3 GPUs, no giant: the answer is within
    its certified bound of the exact one with no hand-over, and what crossed is at least every
    crossing position's value once."""
    g = _cycles_dag(24, 7, seed=2, big=12, extra=3)
    m = g.num_arcs
    _settings(engine_settings, heavy_arcs=6, min_arcs_per_gpu=m // 3)  # giants need 2m/3 arcs
    exact = _pagerank_exact(g)
    for k in sorted({2, min(3, ngpu)}):
        r = digraph.run(g, "pagerank", mode="scc", device=_devices(k), tol=1e-10)
        s = r.stats
        assert s["engine"] == "multi-gpu-scc" and s["gpus"] == k
        assert s["scc"]["giants"] == [] and "finished_by" not in s
        assert np.abs(r.values - exact).sum() <= s["error_bound"] <= 1e-10
        cond, _ = condensation_for(g, "vertex")
        from digraph.smx.cuda.scc_blocks import SH
        sch = scc_schedule(cond, 6, SH)
        owner, giant = deal(cond, sch, k, giant_arcs=2 * (m // 3))
        assert not giant.any() and len(set(owner.tolist())) == k  # every GPU got components
        assert s["sharded"]["components"] == np.bincount(owner, minlength=k).tolist()
        crossed = sum(p.size for p in crossings(cond, sch, owner).values())
        assert crossed > 0 and s["bytes_between_gpus"] >= 8 * crossed
        one = digraph.run(g, "pagerank", mode="scc", device="cuda", tol=1e-10)
        assert s["dag"]["scc_vertices"] == one.stats["dag"]["scc_vertices"]
    again = digraph.run(g, "pagerank", mode="scc", device=_devices(2), tol=1e-10)
    assert again.stats["gpu_work_kept"] and "finished_by" not in again.stats  # reset, reused
    assert np.abs(again.values - exact).sum() <= again.stats["error_bound"] <= 1e-10
    _settings(engine_settings, heavy_arcs=6, min_arcs_per_gpu=m // 2)  # two GPUs' worth of arcs
    r = digraph.run(g, "pagerank", mode="scc", device=_devices(min(3, ngpu)), tol=1e-10)
    assert r.stats["gpus"] == 2 and r.stats["gpus_named"] == min(3, ngpu)
    assert np.abs(r.values - exact).sum() <= r.stats["error_bound"] <= 1e-10


def test_a_giant_runs_sharded_over_the_gpus(ngpu, engine_settings):
    """A strongly connected block holding most arcs is a giant: solved by the sharded engine
    over every GPU from its inputs, the rest dealt; the answer is right and certified."""
    g = _cycles_dag(16, 5, seed=4, big=40, extra=2)
    _settings(engine_settings, heavy_arcs=6, min_arcs_per_gpu=0)
    r = digraph.run(g, "pagerank", mode="scc", device=_devices(2), tol=1e-6)
    s = r.stats
    assert s["engine"] == "multi-gpu-scc" and len(s["scc"]["giants"]) >= 1
    big = max(s["scc"]["giants"], key=lambda e: e["arcs"])
    assert big["arcs"] >= 40 and big["gpus"] == 2 and big["rounds"] > 0
    assert "finished_by" not in s
    assert np.abs(r.values - _pagerank_exact(g)).sum() <= s["error_bound"] <= 1e-6


def test_adsorption_over_several_gpus_matches_the_cpu(ngpu, engine_settings):
    g = _cycles_dag(20, 6, seed=9, big=10, extra=2)
    _settings(engine_settings, heavy_arcs=6, min_arcs_per_gpu=0)
    seeds = [0, 30]
    cpu = digraph.run(g, "adsorption", seeds=seeds, tol=1e-12, device="cpu")
    r = digraph.run(g, "adsorption", seeds=seeds, mode="scc", device=_devices(2), tol=1e-9)
    assert r.stats["engine"] == "multi-gpu-scc" and "finished_by" not in r.stats
    assert np.abs(r.values - cpu.values).sum() <= 2e-9
