"""A linear system solved where its constant term reaches (:mod:`digraph.dispatch.reach`): the
automatic choice on the CPU restricts adsorption and personalised PageRank to the vertices their
seeds reach, and the answer, zero elsewhere, is the whole system's within the certified bound."""

import dataclasses

import networkx as nx
import numpy as np
import pytest

import digraph
from digraph.algorithms import Adsorption
from digraph.dispatch import route
from digraph.dispatch.reach import reach, restrict


def _two_parts(seed=0, big=3000, small=60, weighted=False):
    """A dense random part (vertices ``0 … big − 1``) and a small one after it whose arcs stay
    inside it, with a few arcs from the big part into it (so the small part is reached from the
    big one, not the other way round); the last vertex has no out-arc (dangling), an arc from
    the small part's first vertex into it."""
    rng = np.random.default_rng(seed)
    m_big, m_small = big * 12, small * 4
    src = np.concatenate([rng.integers(0, big, m_big), big + rng.integers(0, small, m_small),
                          rng.integers(0, big, 20), [big]])
    dst = np.concatenate([rng.integers(0, big, m_big), big + rng.integers(0, small, m_small),
                          big + rng.integers(0, small, 20), [big + small]])
    w = rng.uniform(0.5, 3.0, src.size) if weighted else None
    return digraph.Graph.from_arrays(src, dst, w, num_vertices=big + small + 1)


def _descendants(g, seeds):
    G = nx.DiGraph()
    G.add_nodes_from(range(g.num_vertices))
    G.add_edges_from(zip(g.arc_sources.tolist(), g.out_targets.tolist()))
    out = set(seeds)
    for s in seeds:
        out |= nx.descendants(G, s)
    return np.array(sorted(out))


def test_reach_is_the_set_of_descendants():
    g = _two_parts()
    seeds = [3000, 3001, 3007]
    got, arcs = reach(g, np.array(seeds), cap=g.num_arcs)
    want = _descendants(g, seeds)
    np.testing.assert_array_equal(got, want)
    assert arcs == int(g.out_degree[want].sum())
    assert reach(g, np.array(seeds), cap=arcs - 1) is None  # gives up past the cap


@pytest.mark.parametrize("weighted", [False, True])
def test_adsorption_from_seeds_of_small_reach(weighted):
    g = _two_parts(weighted=weighted)
    seeds = [3000, 3005]
    r = digraph.run(g, "adsorption", seeds=seeds, beta=0.8, tol=1e-10)
    want = _descendants(g, seeds)
    s = r.stats
    assert s["reach_vertices"] == want.size and s["reach_arcs"] == int(g.out_degree[want].sum())
    assert s["route"]["restricted"].startswith(f"restricted to the {want.size} of 3,061 vertices")
    exact = Adsorption().reference(g, seeds=seeds, beta=0.8)
    assert np.abs(r.values - exact).sum() <= s["error_bound"] <= 1e-10
    outside = np.setdiff1d(np.arange(g.num_vertices), want)
    assert (r.values[outside] == 0.0).all() and (exact[outside] == 0.0).all()
    # the counters are the part's: a round reads its arcs at most once, and the SCC engine's
    # pushes out of its components count them once more
    assert s["arc_updates"] <= (s["rounds"] + 1) * s["reach_arcs"]


def test_personalised_pagerank_from_seeds_of_small_reach():
    g = _two_parts(seed=3)
    pers = {3000: 1.0, 3010: 2.0}
    r = digraph.run(g, "pagerank", personalization=pers, tol=1e-10)
    assert r.stats["reach_vertices"] < 100
    G = nx.MultiDiGraph()  # parallel arcs count once each, as digraph counts them
    G.add_nodes_from(range(g.num_vertices))
    G.add_edges_from(zip(g.arc_sources.tolist(), g.out_targets.tolist()))
    ref = nx.pagerank(G, personalization=pers, tol=1e-14, max_iter=10_000)
    want = np.array([ref[v] for v in range(g.num_vertices)])
    assert np.abs(r.values - want).sum() <= max(r.stats["error_bound"], 1e-9)
    assert r.values.sum() == pytest.approx(1.0, abs=1e-12)


def test_a_wide_reach_a_named_mode_or_a_dangling_vector_run_whole(engine_settings):
    g = _two_parts()
    wide = digraph.run(g, "adsorption", seeds=[0], tol=1e-8)  # the big part: most arcs
    assert "reach_vertices" not in wide.stats
    named = digraph.run(g, "adsorption", seeds=[3000], mode="bsp", tol=1e-8)
    assert "reach_vertices" not in named.stats and named.stats["mode"] == "bsp"
    dangling = digraph.run(g, "pagerank", personalization={3000: 1.0}, dangling={3001: 1.0},
                           tol=1e-8)  # the dangling vertex's mass goes to 3001: a rank-one term
    assert "reach_vertices" not in dangling.stats
    engine_settings(route.DEFAULT, reach_share=0.0)
    off = digraph.run(g, "adsorption", seeds=[3000], tol=1e-8)
    assert "reach_vertices" not in off.stats
    on = digraph.run(g, "adsorption", seeds=[3000], tol=1e-8, mode=None)
    assert np.abs(on.values - off.values).sum() <= 2e-8


def test_restrict_keeps_the_arc_factors_in_order():
    g = _two_parts(weighted=True)
    algo = Adsorption()
    system = algo.prepare(g, **algo.bind(g, {"seeds": [3002]}))
    got = restrict(g, system, 0.125)
    assert got is not None
    h, hs, verts = got.graph, got.system, got.vertices
    # every arc of the part, with its factor, is an arc of the graph with the same factor
    src_h = verts[h.arc_sources]
    dst_h = verts[h.out_targets]
    def factors(us, vs, f):  # the factors of each (source, target), parallel arcs together
        out = {}
        for u, v, x in zip(us.tolist(), vs.tolist(), f.tolist()):
            out.setdefault((u, v), []).append(x)
        return out
    whole = factors(g.arc_sources, g.out_targets, system.arc_scale)
    part = factors(src_h, dst_h, hs.arc_scale)
    assert part and all(whole[key] == got for key, got in part.items())
    np.testing.assert_array_equal(hs.dst_scale, system.dst_scale[verts])
    np.testing.assert_array_equal(h.out_degree, g.out_degree[verts])  # closed under out-arcs


@pytest.mark.gpu
@pytest.mark.parametrize("algorithm, params", [
    ("adsorption", {"seeds": [3000, 3005], "beta": 0.8}),
    ("pagerank", {"personalization": {3000: 1.0, 3010: 2.0}}),
])
def test_the_gpu_solves_adsorption_where_the_seeds_reach(one_gpu, algorithm, params):
    g = _two_parts(big=300, seed=5)
    params = {k: ({v - 2700: w for v, w in val.items()} if isinstance(val, dict) else
                  [v - 2700 for v in val] if isinstance(val, list) else val)
              for k, val in params.items()}  # the small part starts at 300 here
    r = digraph.run(g, algorithm, device="cuda", tol=1e-9, **params)
    cpu = digraph.run(g, algorithm, tol=1e-12, **params)
    assert cpu.stats["reach_vertices"] < 100
    if algorithm == "pagerank":  # on GPUs a normalised system runs whole (RouteSettings)
        assert "reach_vertices" not in r.stats
    else:
        assert r.stats["reach_vertices"] == cpu.stats["reach_vertices"]
    assert r.stats["device"] == "cuda" and r.values.size == g.num_vertices
    assert np.abs(r.values - cpu.values).sum() <= r.stats["error_bound"] + 1e-12 <= 2e-9


def test_a_support_that_reaches_too_much_is_not_searched_again(monkeypatch):
    import digraph.dispatch.reach as R
    g = _two_parts()
    system = Adsorption().prepare(g, **Adsorption().bind(g, {"seeds": [0, 5]}))
    assert np.array_equal(system.b_support, np.flatnonzero(system.b))
    assert restrict(g, system, 0.125) is None  # the big part: more than the share
    searched = []
    monkeypatch.setattr(R, "reach", lambda *a: searched.append(a) or reach(*a))
    assert restrict(g, system, 0.125) is None and searched == []  # remembered
    small = Adsorption().prepare(g, **Adsorption().bind(g, {"seeds": [3001]}))
    assert restrict(g, small, 0.125) is not None and len(searched) == 1
    assert restrict(g, system, 0.5) is None and len(searched) == 2  # another share: searched
