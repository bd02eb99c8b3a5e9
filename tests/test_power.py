"""The mass-preserving (Google-matrix) power iteration, ``mode="power"`` (dispatch/power.py), and
the router's choice between it and the SCC engine."""

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import digraph
from digraph.algorithms import REQUIRED, Algorithm, LinearSystem
from digraph.errors import InvalidParameterError
from digraph.graph import Graph

from conftest import random_graph


def nx_pagerank(g, alpha=0.85, personalization=None, weight=None):
    G = nx.MultiDiGraph()
    G.add_nodes_from(range(g.num_vertices))
    w = g.weights if weight else None
    for k, (u, v) in enumerate(zip(g.arc_sources.tolist(), g.out_targets.tolist())):
        G.add_edge(u, v, weight=1.0 if w is None else float(w[k]))
    pr = nx.pagerank(G, alpha=alpha, personalization=personalization, weight="weight" if weight else None,
                     tol=1e-15, max_iter=10_000)
    return np.array([pr[v] for v in range(g.num_vertices)])


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("tol", [1e-4, 1e-8, 1e-12])
def test_pagerank_matches_the_reference(seed, tol):
    g = random_graph(seed, 300, 900)  # about a third of the vertices dangling
    ref = digraph.algorithms.PageRank().reference(g)
    r = digraph.run(g, "pagerank", mode="power", tol=tol)
    s = r.stats
    assert s["converged"] and s["mode"] == "power" and s["formulation"] == "google"
    assert s["error_bound"] <= tol or s.get("floor_limited")
    assert np.abs(r.values - ref).sum() <= max(tol, s["error_bound"])
    assert s["arc_updates"] == s["rounds"] * g.num_arcs


def test_personalised_and_weighted_pagerank_match_networkx():
    rng = np.random.default_rng(5)
    n = 200
    src, dst = rng.integers(0, n, 800), rng.integers(0, n, 800)
    g = digraph.load((src, dst, rng.random(800) + 0.1), num_vertices=n)
    pers = {int(v): float(rng.random()) for v in rng.choice(n, 20, replace=False)}
    r = digraph.run(g, "pagerank", mode="power", personalization=pers, tol=1e-12)
    ref = nx_pagerank(g, personalization=pers, weight=True)
    assert np.abs(r.values - ref).sum() <= 1e-11


class Tilted(Algorithm):
    """A normalised system whose columns sum to different values (not PageRank's α or 0)."""

    name = "tilted"
    parameters = {"c": REQUIRED}

    def prepare(self, graph, c):
        n = graph.num_vertices
        out = np.maximum(graph.out_degree, 1).astype(float)
        # column u sums to c · (0.3 … 1.0), dangling columns to 0
        return LinearSystem(b=np.linspace(1.0, 2.0, n), src_scale=(c / out) * np.linspace(0.3, 1.0, n),
                            normalize=True)


def test_a_user_system_with_uneven_columns():
    g = random_graph(2, 400, 2500)
    sys_ = Tilted().prepare(g, c=0.9)
    from digraph.algorithms._reference import solve_linear_system
    x = solve_linear_system(g, sys_)
    ref = x / x.sum()
    r = digraph.run(g, Tilted(), c=0.9, mode="power", tol=1e-10)
    assert r.stats["gamma"] <= 0.9 + 1e-12
    assert np.abs(r.values - ref).sum() <= 1e-10
    assert r.values.sum() == pytest.approx(1.0, abs=1e-12)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(1, 40), m=st.integers(0, 120), seed=st.integers(0, 2**16),
       alpha=st.sampled_from([0.5, 0.85, 0.99]))
def test_hypothesis_graphs(n, m, seed, alpha):
    rng = np.random.default_rng(seed)
    g = Graph.from_arrays(rng.integers(0, n, m), rng.integers(0, n, m), num_vertices=n)
    ref = digraph.algorithms.PageRank().reference(g, alpha=alpha)
    r = digraph.run(g, "pagerank", mode="power", alpha=alpha, tol=1e-10)
    assert r.stats["converged"]
    assert np.abs(r.values - ref).sum() <= max(1e-10, r.stats["error_bound"])


def test_tol_below_the_rounding_floor_is_floor_limited():
    g = random_graph(1, 500, 3000)
    r = digraph.run(g, "pagerank", mode="power", tol=1e-18)
    assert r.stats["converged"] and r.stats["floor_limited"]
    assert r.stats["error_floor"] > 0.5e-18
    ref = digraph.algorithms.PageRank().reference(g)
    assert np.abs(r.values - ref).sum() <= r.stats["error_bound"]


def test_the_router_picks_power_for_a_giant_component_and_scc_for_a_dag():
    giant = random_graph(3, 2000, 20000)  # one strongly connected component
    r = digraph.run(giant, "pagerank", tol=1e-8)
    assert r.stats["mode"] == "power" and r.stats["requested_mode"] is None
    assert "largest component holds" in r.stats["route"]
    # a DAG (arcs from lower to higher ids): every component is one vertex
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 2000, (2, 20000))
    dag = Graph.from_arrays(np.minimum(a, b), np.maximum(a, b) + 1, num_vertices=2001)
    r = digraph.run(dag, "pagerank", tol=1e-8)
    assert r.stats["mode"] == "scc"
    # not PageRank-like: the SCC engine (or bsp), never power
    r = digraph.run(giant, "adsorption", seeds=[0], tol=1e-8)
    assert r.stats["mode"] != "power"


def test_power_refuses_what_it_cannot_run():
    g = random_graph(0, 50, 200)
    with pytest.raises(InvalidParameterError, match="normalised linear systems"):
        digraph.run(g, "adsorption", seeds=[0], mode="power")
    with pytest.raises(InvalidParameterError, match="mode='power'"):
        digraph.run(g, "sssp", source=0, mode="power")
    with pytest.raises(InvalidParameterError, match="runs on the CPU"):
        digraph.run(g, "pagerank", mode="power", device="cuda")
    with pytest.raises(InvalidParameterError, match="path modes"):
        digraph.run(g, "pagerank", mode="power", priority="none")
