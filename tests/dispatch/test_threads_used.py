"""The CPU threads a run uses of those it may (``threads=``): one for each
``RouteSettings.thread_arcs`` arcs, at least one, at most those asked; ``stats`` says how many
ran and why, and the answer does not depend on it."""

import networkx as nx
import numpy as np
import pytest

import digraph
from digraph.dispatch.route import settings as route_settings
from digraph.dispatch.route.placing import cpu_threads
from conftest import random_graph

pytestmark = pytest.mark.thread_rule


@pytest.mark.parametrize("arcs, threads, per, used", [
    (0, 4, 100, 1), (1, 4, 100, 1), (100, 4, 100, 1), (101, 4, 100, 2), (300, 4, 100, 3),
    (10**9, 4, 100, 4), (10**9, 1, 100, 1), (5, 3, 0, 3), (0, 2, 0, 2)])
def test_one_thread_for_each_thread_arcs(engine_settings, arcs, threads, per, used):
    engine_settings(route_settings.DEFAULT, thread_arcs=per)
    got, placed = cpu_threads(arcs, threads)
    assert got == used
    if used < threads:
        assert placed["code"] == "fewer-threads" and f"{used} of {threads} threads" in placed["why"]
    else:
        assert placed is None


@pytest.mark.parametrize("threads, cores, stall, used", [
    (16, 16, 0.014, 15), (16, 32, 0.014, 16), (9, 9, 0.014, 8), (8, 8, 0.014, 8), (2, 2, 0.014, 2),
    (16, 16, 0.0, 16), (4, 4, 0.5, 3), (1, 1, 5.0, 1)])
def test_a_core_left_free_when_every_core_is_taken(engine_settings, threads, cores, stall, used):
    engine_settings(route_settings.DEFAULT, thread_arcs=0, core_stall=stall)
    got, placed = cpu_threads(10**9, threads, cores=cores)
    assert got == used
    assert (placed is None) == (used == threads)
    if placed is not None:
        assert placed["code"] == "core-left-free"


def test_the_default_rule_is_in_force():
    assert route_settings.DEFAULT.thread_arcs > 0 and route_settings.DEFAULT.core_stall > 0
    used, _ = cpu_threads(route_settings.DEFAULT.thread_arcs, 2, cores=64)
    assert used == 1
    assert cpu_threads(10**9, 2, cores=2) == (2, None)  # two cores: both used


@pytest.mark.parametrize("algorithm, params", [
    ("pagerank", {}), ("sssp", {"source": 0}), ("kcore", {})])
def test_a_small_graph_runs_on_fewer_threads_with_the_same_answer(engine_settings, algorithm,
                                                                  params):
    g = random_graph(seed=3, n=120, m=600)
    engine_settings(route_settings.DEFAULT, thread_arcs=0, core_stall=0.0)
    every = digraph.run(g, algorithm, threads=2, **params)
    assert every.stats["threads"] == 2 and "threads_asked" not in every.stats
    engine_settings(route_settings.DEFAULT, thread_arcs=400)  # 600 arcs: 2 threads
    two = digraph.run(g, algorithm, threads=4, **params)
    assert two.stats["threads"] == 2 and two.stats["threads_asked"] == 4
    assert two.stats["route"]["placement"] == "cpu, 2 threads"
    assert [p["code"] for p in two.stats["route"]["placed"]] == ["fewer-threads"]
    engine_settings(route_settings.DEFAULT, thread_arcs=10**6)
    one = digraph.run(g, algorithm, threads=2, **params)
    assert one.stats["threads"] == 1 and one.stats["threads_asked"] == 2
    for r in (two, one):
        if algorithm == "pagerank":
            np.testing.assert_allclose(r.values, every.values, atol=1e-8)
        else:
            assert r.values.tolist() == every.values.tolist()


def test_the_rule_reads_the_arcs_and_keeps_networkx_answer():
    G = nx.gnp_random_graph(60, 0.1, seed=1, directed=True)
    r = digraph.run(G, "pagerank", threads=2)
    assert r.stats["threads"] == 1 and r.stats["threads_asked"] == 2  # far below thread_arcs
    ref = nx.pagerank(G, tol=1e-12)
    np.testing.assert_allclose([r.to_dict()[v] for v in G], [ref[v] for v in G], atol=1e-8)
