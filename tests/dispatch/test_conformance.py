"""Every mode on every placement against the exact answers: the engines' conformance suite.

For each placement (CPU threads; one GPU; three GPUs of one host, every graph sharded or dealt over
them)
and each mode, the four built-in algorithms run on the same small graphs.  Where the mode runs
the algorithm's family on that placement (:data:`RUNS`, the contract) the answer must be exact:
within the certified ``error_bound`` of the exact solve for sums, equal to networkx/the peeling
for SSSP and k-core.  Elsewhere the run must be refused with an error naming the mode.  Without a
GPU the GPU placements run in Numba's CUDA simulator (``tests/cuda_simulator.py``).

A new engine passes this file by being added to :data:`RUNS` for what it runs.
"""

import dataclasses

import numpy as np
import pytest

import digraph
from digraph.errors import InvalidParameterError
from references import (Arcs, adsorption_exact, core_peeling, l1, pagerank_exact, sssp_networkx,
                        within)

TOL = 1e-10
ALPHA = 0.85
BETA = 0.8
SEEDS = [0, 2]

SUMS = {"pagerank", "adsorption"}
ALL = {"pagerank", "adsorption", "sssp", "kcore"}
PATHS = {"pagerank", "adsorption", "sssp"}
_COMMON = {None: ALL, "scc": SUMS, "power": {"pagerank"}, "path": PATHS,
           "path-nopriority": PATHS, "vertex-async": ALL, "bsp": ALL}
RUNS = {
    "cpu": {**_COMMON, "peel": {"kcore"}, "cluster": set()},
    "cuda": {**_COMMON, "peel": {"kcore"}, "cluster": {"sssp"},
             "power": {"pagerank", "adsorption"}},  # one GPU: the affine map's iteration too
    "cuda:0,1,2": {**_COMMON, "peel": set(), "cluster": set()},
}
"""placement → mode → the algorithms it runs there (``None``: the router's choice)."""


def _tangle():
    """9 vertices: self-loops, parallel arcs, a dangling vertex (8) and an isolated one (7)."""
    src = [0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 2, 0, 1]
    dst = [1, 1, 0, 2, 3, 0, 4, 3, 5, 6, 8, 6, 1, 4, 5, 2, 8, 1]
    w = [2, 2, 1, 3, 1, 1, 4, 2, 5, 1, 3, 2, 2, 1, 1, 7, 9, 1]
    return Arcs(9, src, dst, w)


def _random(seed=3, n=40, m=170):
    """Random arcs with float weights; vertices 35..39 are dangling."""
    rng = np.random.default_rng(seed)
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    keep = src < 35
    return Arcs(n, src[keep], dst[keep], rng.uniform(0.1, 5.0, int(keep.sum())).round(3))


def _chain_of_components():
    """Three strongly connected blocks in a chain (0–4 → 5–9 → 10–14), unweighted."""
    src, dst = [], []
    for b in range(3):
        ring = list(range(5 * b, 5 * b + 5))
        src += ring
        dst += ring[1:] + ring[:1]
        src += [ring[0], ring[2]]
        dst += [ring[3], ring[0]]
        if b < 2:
            src.append(ring[4])
            dst.append(ring[4] + 1)
    return Arcs(15, src, dst)


GRAPHS = {"tangle": _tangle, "random": _random, "chain": _chain_of_components}


@pytest.fixture(scope="module")
def cases():
    """Each graph with its exact answers (computed once)."""
    out = {}
    for name, make in GRAPHS.items():
        arcs = make()
        out[name] = (arcs, {
            "pagerank": pagerank_exact(arcs, ALPHA),
            "adsorption": adsorption_exact(arcs, SEEDS, BETA),
            "sssp": sssp_networkx(arcs, 0),
            "kcore": core_peeling(arcs.n, arcs.src, arcs.dst),
        })
    return out


PARAMS = {"pagerank": {"alpha": ALPHA, "tol": TOL}, "adsorption": {"seeds": SEEDS, "beta": BETA,
                                                                    "tol": TOL},
          "sssp": {"source": 0}, "kcore": {}}


@pytest.fixture
def sharded(engine_settings):
    """Several GPUs shard even these tiny graphs (by default a graph needs
    ``MultiGpuSettings.min_arcs_per_gpu`` arcs a GPU and stays on one below)."""
    from digraph.dispatch.engines.power import gpu_settings as power_settings
    from digraph.dispatch.runtime.cuda import shard_settings
    engine_settings(shard_settings.DEFAULT, min_arcs_per_gpu=0, shard_families=("linear", "monotone", "hindex"))
    engine_settings(power_settings.POWER_DEFAULT, shard_arcs=1)


def _check(placement, mode, cases, graphs):
    runs = RUNS[placement][mode]
    for gname in graphs:
        arcs, exact = cases[gname]
        g = arcs.graph()
        for algo, params in PARAMS.items():
            where = f"{algo} on {gname}, mode={mode!r}, device={placement!r}"
            if algo not in runs:
                with pytest.raises(InvalidParameterError, match=repr(mode)):
                    digraph.run(g, algo, mode=mode, device=placement, threads=2, **params)
                continue
            r = digraph.run(g, algo, mode=mode, device=placement, threads=2, **params)
            if mode is not None:
                assert r.stats["mode"] == mode, where
            if "," in placement:  # every graph sharded or dealt over the GPUs named
                assert r.stats["gpus"] == placement.count(",") + 1, where
            if algo in SUMS:
                bound = r.stats["error_bound"]
                assert bound <= TOL * (1 + 1e-9), where
                assert within(l1(r.values, exact[algo]), max(bound, 1e-15)), where
            else:
                np.testing.assert_array_equal(r.values, exact[algo], err_msg=where)


@pytest.mark.parametrize("mode", list(RUNS["cpu"]))
def test_cpu_modes_give_the_exact_answers(mode, cases):
    _check("cpu", mode, cases, GRAPHS)


@pytest.mark.gpu
@pytest.mark.parametrize("mode", list(RUNS["cuda"]))
def test_one_gpu_modes_give_the_exact_answers(mode, cases, one_gpu):
    _check("cuda", mode, cases, GRAPHS)


@pytest.mark.gpu
@pytest.mark.parametrize("mode", list(RUNS["cuda:0,1,2"]))
def test_several_gpu_modes_give_the_exact_answers(mode, cases, sharded):
    from conftest import gpu_count
    if gpu_count() < 3:
        pytest.skip("needs three GPUs (or the CUDA simulator)")
    _check("cuda:0,1,2", mode, cases, GRAPHS)
