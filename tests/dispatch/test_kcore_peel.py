"""k-core by peeling (``mode="peel"``, issue 17 item 7): Batagelj–Zaversnik and PKC against
networkx ``core_number``, the plain-Python reference of :class:`~digraph.algorithms.KCore` and the
h-index iteration; the router's choice and its refusals."""

import dataclasses

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import digraph
from digraph.algorithms import KCore
from digraph.algorithms.base import HIndexSystem, LinearSystem
from digraph.dispatch.engines.peel import cpu as peel
from digraph.dispatch.route import route
from digraph.errors import InvalidParameterError
from digraph.graph import Graph
from digraph.result import RunStats
from digraph.smx.cpu import peel as cpu_peel

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def multigraphs(draw, max_n=30):
    """Directed multigraphs with self-loops, parallel arcs, reciprocated pairs and isolated
    vertices (``n`` may be 0)."""
    n = draw(st.integers(0, max_n))
    if n == 0:
        return Graph.from_arrays([], [], num_vertices=0)
    v = st.integers(0, n - 1)
    arcs = draw(st.lists(st.tuples(v, v), max_size=5 * n))
    if arcs:
        arcs += draw(st.lists(st.sampled_from(arcs), max_size=len(arcs) // 2))  # parallel arcs
        arcs += [(b, a) for a, b in draw(st.lists(st.sampled_from(arcs), max_size=len(arcs) // 2))]
    arcs += [(u, u) for u in draw(st.lists(v, max_size=3))]  # self-loops
    src = [a for a, _ in arcs]
    dst = [b for _, b in arcs]
    return Graph.from_arrays(np.array(src, np.int64), np.array(dst, np.int64), num_vertices=n)


def _kernel(g, schedule, threads=2, serial_tail=0):
    deg = cpu_peel.peel_degrees(g.out_offsets, g.out_targets, g.in_offsets)
    args = (g.out_offsets, g.out_targets, g.in_offsets, g.in_sources, deg)
    if schedule == "bz":
        cpu_peel.bz_core(*args)
    else:
        cpu_peel.pkc_core(*args, threads, serial_tail)
    return deg


def _networkx_core(g):
    """networkx core_number on the simple DiGraph of the arcs (no loops), by vertex id."""
    G = nx.DiGraph()
    G.add_nodes_from(g.vertex_ids.tolist())
    s, t = g.vertex_ids[g.arc_sources], g.vertex_ids[g.out_targets]
    G.add_edges_from((a, b) for a, b in zip(s.tolist(), t.tolist()) if a != b)
    return nx.core_number(G)


@pytest.fixture
def force(engine_settings):
    """``force(schedule, threads)``: the threads= that makes ``mode="peel"`` run ``schedule``."""
    def _force(schedule, threads):
        engine_settings(peel.DEFAULT, pkc_threads=threads if schedule == "pkc" else threads + 1,
                        pkc_min_arcs=0)
        return threads
    return _force


# ---------------------------------------------------------------------------- kernels

@settings(max_examples=150, **SETTINGS)
@given(g=multigraphs(), threads=st.integers(1, 4), tail=st.sampled_from([0, 3, 10, 1000]))
def test_kernels_equal_the_reference_on_multigraphs(g, threads, tail):
    ref = KCore().reference(g)  # BZ in plain Python on the multigraph of the arcs
    assert _kernel(g, "bz").tolist() == ref.tolist()
    assert _kernel(g, "pkc", threads, serial_tail=tail).tolist() == ref.tolist()


@settings(max_examples=60, **SETTINGS)
@given(n=st.integers(1, 40), data=st.data())
def test_kernels_equal_networkx_on_simple_digraphs(n, data):
    pairs = data.draw(st.sets(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=6 * n))
    pairs = sorted((a, b) for a, b in pairs if a != b)
    recip = data.draw(st.lists(st.sampled_from(pairs), max_size=len(pairs))) if pairs else []
    pairs = sorted(set(pairs) | {(b, a) for a, b in recip})  # reciprocated pairs count twice
    src = np.array([a for a, _ in pairs], np.int64)
    dst = np.array([b for _, b in pairs], np.int64)
    g = Graph.from_arrays(src, dst, num_vertices=n)
    want = [_networkx_core(g)[v] for v in range(n)]
    assert _kernel(g, "bz").tolist() == want
    assert _kernel(g, "pkc", 3).tolist() == want


def test_kernels_on_empty_graphs():
    for n in (0, 5):
        g = Graph.from_arrays([], [], num_vertices=n)
        assert _kernel(g, "bz").tolist() == [0] * n
        assert _kernel(g, "pkc").tolist() == [0] * n


def test_pkc_levels_chain_and_clique():
    # a path peels at level 2 (each undirected edge stored twice) in a chain, a 5-clique at 8
    path = [(i, i + 1) for i in range(20)] + [(i + 1, i) for i in range(20)]
    clique = [(21 + a, 21 + b) for a in range(5) for b in range(5) if a != b]
    src, dst = zip(*(path + clique))
    g = Graph.from_arrays(np.array(src), np.array(dst), num_vertices=26)
    for threads in (1, 2, 4):
        deg = cpu_peel.peel_degrees(g.out_offsets, g.out_targets, g.in_offsets)
        levels, scans, arcs = cpu_peel.pkc_core(g.out_offsets, g.out_targets, g.in_offsets,
                                                g.in_sources, deg, threads)
        assert deg.tolist() == [2] * 21 + [8] * 5
        assert levels == 2 and arcs == 2 * g.num_arcs and scans >= levels


# ---------------------------------------------------------------------------- digraph.run

@pytest.mark.parametrize("schedule, threads", [("bz", 1), ("pkc", 1), ("pkc", 2), ("bz", 2)])
@settings(max_examples=40, deadline=None,  # force() sets the same constants for every example
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(g=multigraphs())
def test_run_peel_matches_reference_and_counts(force, schedule, threads, g):
    r = digraph.run(g, "kcore", mode="peel", threads=force(schedule, threads))
    ref = KCore().reference(g)
    assert r.values.tolist() == ref.tolist()
    s = r.stats
    assert s["mode"] == "peel" and s["engine"] == "cpu-peel" and s["peel"]["schedule"] == schedule
    assert s["converged"] is True and s["threads"] == threads
    assert s["vertex_updates"] == g.num_vertices and s["arc_updates"] == 2 * g.num_arcs
    assert s["rounds"] == len(set(ref.tolist()))  # one level per distinct core value
    assert "error_bound" not in s  # exact, as the other k-core modes
    if g.num_arcs:
        va = digraph.run(g, "kcore", mode="vertex-async", threads=threads)
        assert np.array_equal(va.values, r.values)


@pytest.mark.parametrize("schedule", ["bz", "pkc"])
def test_undirected_networkx_graph_halved(force, schedule):
    G = nx.gnm_random_graph(120, 500, seed=3)
    G.add_nodes_from([500, 501])  # isolated
    r = digraph.run(G, "kcore", mode="peel", threads=force(schedule, 2))
    assert r.stats["peel"]["schedule"] == schedule
    assert r.to_dict() == nx.core_number(G)
    assert digraph.run(G, "kcore", threads=1).to_dict() == nx.core_number(G)  # automatic: peel


@pytest.mark.parametrize("schedule", ["bz", "pkc"])
def test_directed_networkx_graph(force, schedule):
    G = nx.gnp_random_graph(150, 0.04, seed=5, directed=True)
    G.add_edge(7, 7)  # dropped, as networkx refuses it
    r = digraph.run(G, "kcore", mode="peel", threads=force(schedule, 2))
    H = G.copy()
    H.remove_edges_from(list(nx.selfloop_edges(H)))
    assert r.to_dict() == nx.core_number(H)


def test_empty_graphs_run():
    assert digraph.run(nx.DiGraph(), "kcore", mode="peel").to_dict() == {}
    g = Graph.from_arrays([], [], num_vertices=4)
    assert digraph.run(g, "kcore", mode="peel").values.tolist() == [0] * 4


# ---------------------------------------------------------------------------- datasets

@pytest.mark.datasets
@pytest.mark.parametrize("name", ["email-Eu-core", "p2p-Gnutella08", "wiki-Vote"])
def test_small_datasets_equal_networkx(force, name):
    from conftest import dataset_path
    g = digraph.load(dataset_path(f"{name}.txt.gz"))
    want = _networkx_core(g)
    for schedule in ("bz", "pkc"):
        r = digraph.run(g, "kcore", mode="peel", threads=force(schedule, 2))
        assert r.to_dict() == want, schedule
        if schedule == "pkc":
            assert r.values.tolist() == KCore().reference(g).tolist()


@pytest.mark.datasets
@pytest.mark.parametrize("name", ["cnr-2000", "dblp-2010"])
def test_large_datasets_equal_the_h_index_iteration(force, name):
    from conftest import dataset_path
    g = digraph.load(dataset_path(f"{name}.txt.gz"))
    va = digraph.run(g, "kcore", mode="vertex-async", threads=2).values
    for schedule, threads in (("bz", 1), ("pkc", 1), ("pkc", 2)):
        r = digraph.run(g, "kcore", mode="peel", threads=force(schedule, threads))
        assert r.stats["peel"]["schedule"] == schedule
        assert np.array_equal(r.values, va), (schedule, threads)


# ---------------------------------------------------------------------------- router

def test_router_default_and_refusals():
    plan = route("hindex", None, "cpu", threads=2)
    assert plan.mode == "peel" and plan.engine == "cpu-peel" and "peeling" in plan.reason
    gpu = route("hindex", None, "cuda")
    assert gpu.mode == "peel" and gpu.engine == "gpu-peel" and "one launch" in gpu.reason
    gpus = route("hindex", None, "cuda:0,1")  # no sharded peel
    assert gpus.mode == "vertex-async" and "several GPUs" in gpus.reason
    assert route("hindex", "peel", "cpu").reason == "asked for"
    assert route("hindex", "peel", "cuda:1").engine == "gpu-peel"
    with pytest.raises(InvalidParameterError,
                       match="mode='peel' runs on the CPU or one GPU.*'vertex-async'"):
        route("hindex", "peel", "cuda:0,1")
    with pytest.raises(InvalidParameterError, match="mode='peel' peels k-cores.*not the linear family"):
        route("linear", "peel", "cpu")
    with pytest.raises(InvalidParameterError, match="mode='peel' peels k-cores.*not the monotone family"):
        route("monotone", "peel", "cpu")


def test_run_refuses_peel_for_other_algorithms():
    g = Graph.from_arrays([0, 1, 2], [1, 2, 0])
    with pytest.raises(InvalidParameterError, match="mode='peel' peels k-cores"):
        digraph.run(g, "pagerank", mode="peel")
    with pytest.raises(InvalidParameterError, match="mode='peel' peels k-cores"):
        digraph.run(g, "sssp", source=0, mode="peel")
    with pytest.raises(InvalidParameterError, match="mode='peel' peels k-cores"):
        digraph.run(g, "adsorption", seeds=[0], mode="peel")
    with pytest.raises(InvalidParameterError, match="mode='peel' runs on the CPU or one GPU"):
        digraph.run(g, "kcore", mode="peel", device="cuda:0,1")
    with pytest.raises(InvalidParameterError, match="cache= applies to the path modes"):
        digraph.run(g, "kcore", mode="peel", cache="somewhere")
    r = digraph.run(g, "kcore")
    assert r.stats["mode"] == "peel" and r.stats["route"]["reason"].startswith("automatic: one peeling pass")


def test_solve_refuses_other_families_and_schedules():
    g = Graph.from_arrays([0, 1], [1, 0])
    with pytest.raises(InvalidParameterError, match="not the linear family"):
        peel.solve(g, LinearSystem(b=np.ones(2)), stats=RunStats.new())
    with pytest.raises(InvalidParameterError, match="peel must be one of bz, pkc"):
        peel.solve(g, HIndexSystem(), stats=RunStats.new(), peel="heap")
