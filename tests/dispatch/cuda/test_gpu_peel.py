"""k-core by peeling on one GPU (``mode="peel"``, :mod:`digraph.dispatch.engines.peel.gpu`, kernels
:mod:`digraph.smx.cuda.peel`): the core numbers equal networkx's ``core_number``, the quadratic
peeling of ``tests/references.py`` and the CPU peel on multigraphs with self-loops, parallel arcs,
isolated vertices, hubs and chains; every path of the one launch (block 0 alone, the grid barrier,
the switch between them, spills beyond a block's shared queue) is taken; the counters, the
residency and the router's default on one GPU.  Without a GPU the kernels run in Numba's CUDA
simulator (one block, :data:`~digraph.smx.cuda.peel.TB` threads)."""

import dataclasses

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import digraph
from digraph.algorithms.base import HIndexSystem, LinearSystem
from digraph.dispatch.engines.peel import gpu as peel_gpu
from digraph.errors import InvalidParameterError
from digraph.graph import Graph
from digraph.result import RunStats
from references import core_peeling, multigraphs

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("one_gpu")]

TAILS = {"alone": 1 << 30, "grid": 0, "switch": 1500}
"""``PeelGpuSettings.tail_arcs`` for each way to run the levels: block 0 alone from the start,
a grid barrier after every step, and barriers until the kept entries fall to 1,500."""


def _peel(g, tail="grid", **kw):
    s = dataclasses.replace(peel_gpu.DEFAULT, tail_arcs=TAILS[tail])
    return digraph.run(g, "kcore", mode="peel", device="cuda", settings=[s], **kw)


def _random(seed, n=300, m=1100):
    """Random arcs plus everything a peel must get right: parallel arcs, reciprocated pairs,
    self-loops (one vertex with loops only), a star hub (vertex 3, far beyond a block's
    threads), a chain of degree-2 vertices hanging off it and isolated vertices (the last 10)."""
    rng = np.random.default_rng(seed)
    k = n - 10
    src = [rng.integers(0, k, m)]
    dst = [rng.integers(0, k, m)]
    src.append(src[0][: m // 6])  # parallel arcs
    dst.append(dst[0][: m // 6])
    src.append(dst[0][m // 6: m // 3])  # reciprocated pairs
    dst.append(src[0][m // 6: m // 3])
    loops = rng.integers(0, k, 8)
    src += [loops, np.array([k - 1, k - 1])]
    dst += [loops, np.array([k - 1, k - 1])]
    src.append(np.full(90, 3))  # the hub
    dst.append(rng.integers(0, k, 90))
    chain = np.arange(k - 40, k - 2)
    src.append(chain[:-1])
    dst.append(chain[1:])
    src, dst = np.concatenate(src), np.concatenate(dst)
    return n, src, dst


def _sim():
    """Whether the kernels run in Numba's CUDA simulator (its launch: a fixed, small grid)."""
    from digraph.smx.cuda import peel as K
    return K.SIM


def _check_counts(r, g, want):
    s = r.stats
    assert s["mode"] == "peel" and s["engine"] == "gpu-peel" and s["converged"] is True
    assert s["peel"]["schedule"] == "gpu"
    assert s["vertex_updates"] == g.num_vertices  # each vertex peeled once
    assert s["arc_updates"] == 2 * g.num_arcs  # every arc read from both ends
    assert s["rounds"] == len(set(want.tolist()))  # a level a distinct core value
    assert s["peel"]["scans"] >= s["rounds"]
    assert "error_bound" not in s


@pytest.mark.parametrize("tail", sorted(TAILS))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_multigraphs_equal_the_reference_and_the_cpu_peel(seed, tail):
    n, src, dst = _random(seed)
    g = Graph.from_arrays(src, dst, num_vertices=n)
    want = core_peeling(n, src, dst)
    r = _peel(g, tail)
    assert r.values.tolist() == want.tolist()
    assert np.array_equal(r.values, digraph.run(g, "kcore", mode="peel").values)
    _check_counts(r, g, want)
    p = r.stats["peel"]
    if tail == "alone":
        assert p["barriers"] == 0 and p["tail_steps"] >= p["scans"]
    elif tail == "grid":
        assert p["tail_steps"] == 0 and p["barriers"] >= p["scans"] + 1
    elif _sim():  # a real grid may peel a small graph before the switch: the answer is checked
        assert p["barriers"] >= 2 and p["tail_steps"] >= 1  # barriers first, then alone


def test_every_path_of_the_launch_is_taken():
    """Across the random graphs: vertices spilled beyond a block's queue (then peeled in steps of
    their own), empty levels jumped over (more scans than levels).  The simulator's launch: a
    real grid's hundreds of blocks hold these small graphs' levels without spilling."""
    if not _sim():
        pytest.skip("the paths a small graph takes depend on the grid; the simulator's is fixed")
    spilled = jumped = 0
    for seed in range(3):
        n, src, dst = _random(seed)
        r = _peel(Graph.from_arrays(src, dst, num_vertices=n), "grid")
        spilled += r.stats["peel"]["spilled"]
        jumped += r.stats["peel"]["scans"] - r.stats["rounds"]
    assert spilled > 0 and jumped > 0


@pytest.mark.parametrize("tail", sorted(TAILS))
def test_star_chain_and_clique(tail):
    """A star of 60 leaves (core 1 for all), a chain (1), a 6-clique (5, each arc stored once in
    each direction: 10), a vertex with self-loops only (0)."""
    star = [(0, v) for v in range(1, 61)]
    chain = [(v, v + 1) for v in range(61, 90)]
    clique = [(a, b) for a in range(90, 96) for b in range(90, 96) if a != b]
    arcs = star + chain + clique + [(96, 96), (96, 96)]
    src, dst = (np.array(x) for x in zip(*arcs))
    g = Graph.from_arrays(src, dst, num_vertices=98)
    r = _peel(g, tail)
    want = np.array([1] * 90 + [10] * 6 + [0, 0])
    assert r.values.tolist() == want.tolist()
    _check_counts(r, g, want)
    assert r.stats["peel"]["scans"] > r.stats["rounds"]  # levels 2..9 jumped over


@pytest.mark.parametrize("tail", [0, 1500])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_several_blocks_at_once(monkeypatch, seed, tail):
    """The launch as on a GPU whose grid is resident: three blocks live at once
    (``cuda_simulator.run_blocks_together``), every relaxed load a turn for the other threads, so
    that blocks scan, claim and decrement between each other's steps, meet at the grid barrier
    and, with ``tail``, leave block 0 alone (the simulator's own launch runs one block)."""
    import cuda_simulator
    from digraph.smx.cuda import peel as K
    from digraph.smx.cuda import scc_heavy
    if not K.SIM:
        pytest.skip("the simulator's blocks; on a GPU the tests above run the real grid")

    def polling(a, i):
        cuda_simulator.yield_now()
        return a[i]
    monkeypatch.setattr(K, "load_relaxed", polling)
    monkeypatch.setattr(scc_heavy, "load_relaxed", polling)
    n, src, dst = _random(seed)
    g = Graph.from_arrays(src, dst, num_vertices=n)
    it = np.int32
    oo, ot, io, isrc = (np.asarray(a, it) for a in (g.out_offsets, g.out_targets, g.in_offsets,
                                                     g.in_sources))
    deg0, alen, deg = (np.empty(n, np.int64) for _ in range(3))
    K.peel_degrees[(n + 31) // 32, 32](oo, ot, io, deg0, alen)
    done = np.empty(n, np.int32)
    alive, spare, queue = (np.empty(n, it) for _ in range(3))
    ctl, bar, cnt = np.empty(K.NCTL, np.int64), np.zeros(1, np.int64), np.zeros(K.NCNT, np.int64)
    cuda_simulator.run_blocks_together(K.peel_levels, 3, K.TB, oo, ot, io, isrc, deg0, alen, deg,
                                       done, alive, spare, queue, ctl, bar, cnt, tail, 0)
    want = core_peeling(n, src, dst)
    assert deg.tolist() == want.tolist()
    assert cnt[K.PEELED] == n and cnt[K.ARCS] == 2 * g.num_arcs
    assert cnt[K.LEVELS] == len(set(want.tolist())) and cnt[K.SCANS] >= cnt[K.LEVELS]
    assert cnt[K.BARRIERS] >= (cnt[K.SCANS] + 1 if tail == 0 else 2)


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(arcs=multigraphs(max_n=30, weights="none", max_deg=5), tail=st.sampled_from(sorted(TAILS)))
def test_small_multigraphs_equal_the_reference(arcs, tail):
    g = arcs.graph()
    want = core_peeling(arcs.n, arcs.src, arcs.dst)
    r = _peel(g, tail)
    assert r.values.tolist() == want.tolist()
    _check_counts(r, g, want)


def test_networkx_graphs():
    G = nx.gnp_random_graph(150, 0.05, seed=5, directed=True)
    G.add_edge(7, 7)  # dropped, as networkx refuses it
    H = G.copy()
    H.remove_edges_from(list(nx.selfloop_edges(H)))
    assert digraph.run(G, "kcore", mode="peel", device="cuda").to_dict() == nx.core_number(H)
    U = nx.gnm_random_graph(120, 500, seed=3)
    U.add_nodes_from([500, 501])  # isolated
    r = digraph.run(U, "kcore", mode="peel", device="cuda")
    assert r.to_dict() == nx.core_number(U)  # an undirected source: halved
    assert r.stats["peel"]["schedule"] == "gpu"


def test_empty_graphs():
    assert digraph.run(nx.DiGraph(), "kcore", mode="peel", device="cuda").to_dict() == {}
    r = digraph.run(Graph.from_arrays([], [], num_vertices=4), "kcore", mode="peel",
                    device="cuda")
    assert r.values.tolist() == [0] * 4 and r.stats["rounds"] == 1
    assert r.stats["vertex_updates"] == 4 and r.stats["arc_updates"] == 0


def test_a_second_run_keeps_everything_on_the_gpu():
    from digraph.dispatch.runtime.cuda.residency import residency
    n, src, dst = _random(4, n=120, m=400)
    g = Graph.from_arrays(src, dst, num_vertices=n)
    first = digraph.run(g, "kcore", mode="peel", device="cuda")
    assert "cuda-peel" in residency(g).kinds()
    again = digraph.run(g, "kcore", mode="peel", device="cuda")
    assert np.array_equal(again.values, first.values)
    assert again.values.tolist() == core_peeling(n, src, dst).tolist()
    assert first.stats["bytes_h2d"] > 0 and again.stats["bytes_h2d"] == 0  # all kept there


def test_the_default_on_one_gpu():
    g = Graph.from_arrays([0, 1, 2, 2], [1, 2, 0, 3])
    r = digraph.run(g, "kcore", device="cuda")
    assert r.stats["mode"] == "peel" and r.stats["route"]["code"] == "default"
    assert r.values.tolist() == [2, 2, 2, 1]


def test_refusals():
    g = Graph.from_arrays([0, 1, 2], [1, 2, 0])
    with pytest.raises(InvalidParameterError, match="mode='peel' peels k-cores"):
        digraph.run(g, "pagerank", mode="peel", device="cuda")
    from digraph.dispatch.runtime.cuda.backend import backend
    with pytest.raises(InvalidParameterError, match="not the linear family"):
        peel_gpu.run_on(backend("cuda"), g, LinearSystem(b=np.ones(3)), mode="peel", tol=None,
                        max_iter=None, stats=RunStats.new(), options={})
    r = peel_gpu.run_on(backend("cuda"), g, HIndexSystem(), mode="peel", tol=None, max_iter=None,
                        stats=RunStats.new(), options={})
    assert r[1] is True
    for bad in (dict(blocks_per_sm=0), dict(tail_arcs=-1)):
        with pytest.raises(InvalidParameterError, match="PeelGpuSettings: blocks_per_sm"):
            digraph.run(g, "kcore", mode="peel", device="cuda",
                        settings=[dataclasses.replace(peel_gpu.DEFAULT, **bad)])


@pytest.mark.datasets
def test_email_eu_core_equals_networkx():
    from conftest import dataset_path
    g = digraph.load(dataset_path("email-Eu-core.txt.gz"))
    G = nx.DiGraph()
    G.add_nodes_from(g.vertex_ids.tolist())
    s, t = g.vertex_ids[g.arc_sources], g.vertex_ids[g.out_targets]
    G.add_edges_from((a, b) for a, b in zip(s.tolist(), t.tolist()) if a != b)
    for tail in ("grid", "switch"):
        assert _peel(g, tail).to_dict() == nx.core_number(G), tail
