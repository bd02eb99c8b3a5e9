"""The results cuGraph, NetworKit and networkx users expect beside the answers (issue 44 item 5):
SSSP predecessors and paths (``Result.predecessors``, ``Result.path``,
``digraph.traversal.shortest_path_tree``), BFS levels and layers (``digraph.bfs``), and
strongly / weakly connected component labels (``digraph.components``).

References: scipy's ``csgraph`` (``shortest_path(..., return_predecessors=True)``,
``connected_components``) and networkx, compared exactly; the canonical tree is also rebuilt by
an independent vectorised reference (tight arcs with numpy, their BFS levels with scipy, the
smallest parent with ``np.minimum.at``).  The GPU tests (marker ``gpu``) run the CUDA kernels in
Numba's simulator when there is no GPU.
"""

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import connected_components, shortest_path

import digraph
from conftest import dataset_path, write
from digraph.components import component_members, scc_labels, wcc_labels
from digraph.errors import InvalidParameterError, NotAvailableError, VertexNotFoundError
from digraph.graph import Graph
from digraph.bfs import bfs_layers, bfs_levels
from digraph.traversal import shortest_path_tree

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------------------- graphs

def messy_graph(seed, n=60, m=180, weights="mixed"):
    """Random arcs with self-loops, parallel arcs, zero weights and isolated vertices (the last
    ``n // 6`` vertices get no arcs)."""
    rng = np.random.default_rng(seed)
    k = n - n // 6
    src = rng.integers(0, k, m)
    dst = rng.integers(0, k, m)
    src[: m // 20] = dst[: m // 20]  # self-loops
    src = np.concatenate([src, src[: m // 10]])  # parallel arcs, other weights
    dst = np.concatenate([dst, dst[: m // 10]])
    if weights is None:
        return Graph.from_arrays(src, dst, num_vertices=n)
    if weights == "int":
        w = rng.integers(0, 4, src.size).astype(float)
    else:
        w = rng.choice([0.0, 0.5, 1.0, 0.1, 0.2, 0.3, 2.75], src.size)
    return Graph.from_arrays(src, dst, w, num_vertices=n)


@st.composite
def graphs(draw, weighted=True):
    n = draw(st.integers(1, 14))
    pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=3 * n))
    src = np.array([p[0] for p in pairs], np.int64)
    dst = np.array([p[1] for p in pairs], np.int64)
    w = None
    if weighted:
        w = np.array(draw(st.lists(st.sampled_from([0.0, 0.1, 0.2, 0.3, 1.0, 2.0, 0.7]),
                                   min_size=len(pairs), max_size=len(pairs))), float)
    return Graph.from_arrays(src, dst, w, num_vertices=n)


def arc_arrays(g, weights=True):
    w = g.arc_weights() if weights else np.ones(g.num_arcs)
    return g.arc_sources.astype(np.int64), g.out_targets.astype(np.int64), w


def reference_tree(g, d, s, weights=True):
    """The canonical tree by an independent route: the tight arcs by numpy, their BFS levels by
    scipy, each vertex's smallest parent one level up by ``np.minimum.at``."""
    n = g.num_vertices
    u, v, w = arc_arrays(g, weights)
    tight = np.isfinite(d[v]) & (d[u] + w == d[v])
    a = sp.csr_array((np.ones(int(tight.sum())), (u[tight], v[tight])), shape=(n, n))
    lev = shortest_path(a, unweighted=True, indices=s)
    hops = np.where(np.isfinite(lev), lev, -1).astype(np.int64)
    cand = tight & (hops[u] >= 0) & (hops[u] == hops[v] - 1)
    best = np.full(n, n, np.int64)
    np.minimum.at(best, v[cand], u[cand])
    return np.where(best == n, -1, best), hops


def lightest(g, weights=True):
    """{(u, v): the lightest arc weight} (what a shortest path pays for an arc)."""
    out = {}
    for a, b, c in zip(*(x.tolist() for x in arc_arrays(g, weights))):
        out[(a, b)] = min(c, out.get((a, b), np.inf))
    return out


def check_paths(g, r, weights=True):
    """Every path exists, starts at the source, ends at its target, repeats no vertex and its
    weights, added in order in float64, give the distance."""
    s = int(g.index_of(r.params["source"]))
    arc = lightest(g, weights)
    for t in range(g.num_vertices):
        p = r.path(g.vertex_ids[t])
        idx = [int(x) for x in g.index_of(p)] if p else []
        if not np.isfinite(r.values[t]):
            assert p == []
            continue
        assert idx[0] == s and idx[-1] == t and len(set(idx)) == len(idx)
        total = 0.0
        for a, b in zip(idx, idx[1:]):
            total += arc[(a, b)]
        assert total == r.values[t]


def dijkstra_reference(g, s, weights=True):
    G = nx.DiGraph()
    G.add_nodes_from(range(g.num_vertices))
    for (a, b), c in lightest(g, weights).items():
        G.add_edge(a, b, weight=c)
    d = np.full(g.num_vertices, np.inf)
    got = nx.single_source_dijkstra_path_length(G, s)
    d[list(got)] = list(got.values())
    return d


def first_seen(labels):
    """Labels renumbered in the order vertices 0, 1, ... meet them (the canonical numbering)."""
    _, first = np.unique(labels, return_index=True)
    rank = np.empty(first.size, np.int64)
    rank[np.argsort(first)] = np.arange(first.size)
    return rank[np.unique(labels, return_inverse=True)[1].reshape(-1)]


# ---------------------------------------------------------------------------- SSSP trees

@pytest.mark.parametrize("seed", range(4))
def test_predecessors_equal_scipy_where_shortest_paths_are_unique(seed):
    rng = np.random.default_rng(100 + seed)
    n, m = 300, 1500
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    pairs = np.unique(np.stack([src, dst])[:, src != dst], axis=1)  # no loops, no parallel arcs
    src, dst = pairs
    w = rng.uniform(0.5, 5.0, src.size)  # continuous: ties have probability 0
    g = Graph.from_arrays(src, dst, w, num_vertices=n)
    s = int(rng.integers(0, n))
    r = digraph.run(g, "sssp", source=s)
    d, pred = shortest_path(g.to_scipy(), method="D", indices=s, return_predecessors=True)
    assert np.array_equal(r.values, d)
    want = np.where(pred < 0, -1, pred)
    assert np.array_equal(r.predecessor_indices(), want)
    assert np.array_equal(r.predecessors(), want)  # vertex ids are 0..n-1 here
    t = int(np.flatnonzero(np.isfinite(d))[-1])
    walk = [t]
    while walk[-1] != s:
        walk.append(int(pred[walk[-1]]))
    assert r.path(t) == walk[::-1]


@SETTINGS
@given(graphs(), st.data())
def test_tree_is_the_canonical_one(g, data):
    s = data.draw(st.integers(0, g.num_vertices - 1))
    weights = data.draw(st.booleans())
    r = digraph.run(g, "sssp", source=s, weights=weights)
    assert np.array_equal(r.values, dijkstra_reference(g, s, weights))
    pred, hops = shortest_path_tree(g, r.values, s, weights=weights)
    ref_pred, ref_hops = reference_tree(g, r.values, s, weights)
    assert np.array_equal(pred, ref_pred) and np.array_equal(hops, ref_hops)
    assert np.array_equal(r.predecessor_indices(), pred)
    others = np.arange(g.num_vertices) != s
    assert pred[s] == -1 and np.array_equal(pred >= 0, np.isfinite(r.values) & others)
    check_paths(g, r, weights)
    if not weights:
        assert np.array_equal(hops, np.where(np.isfinite(r.values), r.values, -1).astype(np.int64))


@pytest.mark.parametrize("weights", ["mixed", "int", None])
def test_messy_graphs_every_mode_gives_the_same_tree(weights):
    g = messy_graph(7, weights=weights)
    trees = []
    for mode in [None, "bsp", "vertex-async", "path", "path-nopriority"]:
        r = digraph.run(g, "sssp", source=3, mode=mode)
        trees.append(r.predecessor_indices())
    ref_pred, _ = reference_tree(g, r.values, 3)
    assert all(np.array_equal(t, ref_pred) for t in trees)
    check_paths(g, r)
    # zero-weight arcs: vertices at distance 0 other than the source still hang below it
    zero = np.flatnonzero(r.values == 0)
    assert all(r.path(int(v))[0] == 3 for v in zero)


def test_zero_weight_cycle_gives_no_cycle_in_the_tree():
    # 0 -> 1 -> 2 -> 1 (weights 0) and 2 -> 3: every parent chain ends at the source
    g = Graph.from_arrays([0, 1, 2, 2, 1], [1, 2, 1, 3, 1], [0.0, 0.0, 0.0, 0.0, 0.0])
    r = digraph.run(g, "sssp", source=0)
    assert r.predecessor_indices().tolist() == [-1, 0, 1, 2]
    assert r.path(3) == [0, 1, 2, 3]


def test_names_from_an_edge_list(tmp_path):
    text = "a b 1.5\nb c 0\nc a 2\nb d 1\na d 2.5\nz z 3\nd e 0.5\nc e 1.0\n"
    g = digraph.load(write(tmp_path, "names.txt", text))
    assert g.vertex_ids.dtype == object
    r = digraph.run(g, "sssp", source="a")
    G = nx.DiGraph()
    G.add_weighted_edges_from((u, v, float(w)) for u, v, w in (ln.split() for ln in text.splitlines()))
    ref = nx.single_source_dijkstra_path_length(G, "a")
    assert r.to_dict() == {v: ref.get(v, np.inf) for v in g.vertex_ids.tolist()}
    preds = dict(zip(g.vertex_ids.tolist(), r.predecessors().tolist()))
    # d: a->d (2.5) and a->b->d (1.5 + 1) tie; the tree takes the fewer arcs; e: via c (2.5)
    assert preds == {"a": None, "b": "a", "c": "b", "d": "a", "e": "c", "z": None}
    assert r.path("e") == ["a", "b", "c", "e"] and r.path("z") == [] and r.path("a") == ["a"]
    assert r.predecessors(missing="-").tolist()[0] == "-"
    with pytest.raises(InvalidParameterError, match="'a' is a vertex id"):
        r.predecessors(missing="a")
    with pytest.raises(VertexNotFoundError, match="target 'q'"):
        r.path("q")


def test_missing_sentinel_for_integer_ids():
    g = Graph.from_arrays([-1, 5, 5], [5, 7, 9], [1.0, 1.0, 2.0])  # -1 is a vertex id
    r = digraph.run(g, "sssp", source=5)
    with pytest.raises(InvalidParameterError, match="missing=-1 is a vertex id"):
        r.predecessors()
    got = r.predecessors(missing=-2)
    assert got.dtype == np.int64 and got.tolist() == [-2, -2, 5, 5]
    assert r.predecessors(missing=None).tolist() == [None, None, 5, 5]
    assert r.path(9) == [5, 9] and r.path(-1) == []


def test_errors_are_clear():
    g = Graph.from_arrays([0, 1, 2], [1, 2, 0], [1.0, 2.0, 3.0])
    with pytest.raises(VertexNotFoundError, match="source 7"):
        digraph.run(g, "sssp", source=7)
    with pytest.raises(VertexNotFoundError, match="source 7"):
        shortest_path_tree(g, np.zeros(3), 7)
    pr = digraph.run(g, "pagerank")
    for call in (pr.predecessors, pr.predecessor_indices, lambda: pr.path(1)):
        with pytest.raises(InvalidParameterError, match="SSSP results.*'pagerank'"):
            call()
    r = digraph.run(g, "sssp", source=0)
    with pytest.raises(VertexNotFoundError, match="target 9"):
        r.path(9)
    with pytest.raises(InvalidParameterError, match="one entry per vertex"):
        shortest_path_tree(g, np.zeros(2), 0)
    with pytest.raises(InvalidParameterError, match="not 0"):
        shortest_path_tree(g, np.array([1.0, 2.0, 3.0]), 0)
    with pytest.raises(InvalidParameterError, match="vertex 2 has distance 2.5 but no chain"):
        shortest_path_tree(g, np.array([0.0, 1.0, 2.5]), 0)  # not this graph's distances
    with pytest.raises(InvalidParameterError, match="device"):
        r.predecessor_indices(device="tpu")


def test_empty_graph_and_lone_source():
    g = Graph.from_arrays(np.zeros(0, np.int64), np.zeros(0, np.int64), num_vertices=1)
    r = digraph.run(g, "sssp", source=0)
    assert r.predecessor_indices().tolist() == [-1] and r.path(0) == [0]
    assert bfs_levels(g, 0).tolist() == [0]
    e = Graph.from_arrays(np.zeros(0, np.int64), np.zeros(0, np.int64))
    assert scc_labels(e).size == 0 and wcc_labels(e).size == 0
    assert bfs_levels(e, []).size == 0 and bfs_layers(e, []) == []


# ---------------------------------------------------------------------------- BFS

@SETTINGS
@given(graphs(weighted=False), st.data())
def test_bfs_levels_and_layers_match_networkx(g, data):
    n = g.num_vertices
    srcs = data.draw(st.lists(st.integers(0, n - 1), max_size=4))
    G = nx.MultiDiGraph()
    G.add_nodes_from(range(n))
    G.add_edges_from(zip(g.arc_sources.tolist(), g.out_targets.tolist()))
    if srcs:
        want = [sorted(layer) for layer in nx.bfs_layers(G, srcs)]
    else:
        want = []
    got = bfs_layers(g, srcs)
    assert [x.tolist() for x in got] == want  # each layer in vertex order
    lev = bfs_levels(g, srcs)
    for k, layer in enumerate(want):
        assert np.all(lev[layer] == k)
    assert np.sum(lev >= 0) == sum(map(len, want))
    if srcs:
        one = bfs_levels(g, srcs[0])
        ref = nx.single_source_shortest_path_length(G, srcs[0])
        assert {i: int(x) for i, x in enumerate(one) if x >= 0} == ref
        assert np.array_equal(one, bfs_levels(g, [srcs[0]]))  # engine and frontier search agree


def test_bfs_arguments():
    g = digraph.load(nx.DiGraph([((0, "a"), (0, "b")), ((0, "b"), (1, "c"))]))
    assert bfs_levels(g, (0, "a")).tolist() == [0, 1, 2]  # a tuple is one vertex here
    assert bfs_layers(g, [(1, "c"), (0, "a")])[0].tolist() == [(0, "a"), (1, "c")]
    h = messy_graph(3, weights=None)
    with pytest.raises(VertexNotFoundError, match="source 999"):
        bfs_levels(h, [0, 999])
    with pytest.raises(VertexNotFoundError, match="source 999"):
        bfs_levels(h, 999)
    with pytest.raises(InvalidParameterError, match="mode='bsp' applies to one source"):
        bfs_levels(h, [0, 1], mode="bsp")
    assert np.array_equal(bfs_levels(h, 0, mode="bsp"), bfs_levels(h, (0,)))
    d = shortest_path(h.to_scipy(), unweighted=True, indices=[0, 5]).min(axis=0)
    assert np.array_equal(bfs_levels(h, range(0, 6, 5)), np.where(np.isfinite(d), d, -1))


# ---------------------------------------------------------------------------- components

def scipy_labels(g, connection):
    a = g.to_scipy(weights=False)
    return first_seen(connected_components(a, directed=True, connection=connection)[1])


@SETTINGS
@given(graphs(weighted=False))
def test_component_labels_equal_scipy(g):
    assert np.array_equal(scc_labels(g), scipy_labels(g, "strong"))
    assert np.array_equal(wcc_labels(g), scipy_labels(g, "weak"))


@SETTINGS
@given(graphs(weighted=False))
def test_scc_reverse_topological_order(g):
    topo = scc_labels(g, order="reverse-topological")
    assert np.array_equal(first_seen(topo), scc_labels(g))  # the same partition
    u, v = g.arc_sources, g.out_targets
    assert np.all(topo[u] >= topo[v])  # a component after those it reaches
    with pytest.raises(InvalidParameterError, match="order"):
        scc_labels(g, order="topological")


@pytest.mark.parametrize("seed, n, m", [(0, 3000, 2500), (1, 3000, 6000), (2, 500, 12000)])
def test_component_labels_on_larger_graphs(seed, n, m):
    rng = np.random.default_rng(seed)
    g = Graph.from_arrays(rng.integers(0, n, m), rng.integers(0, n, m), num_vertices=n)
    want_s, want_w = scipy_labels(g, "strong"), scipy_labels(g, "weak")
    assert np.array_equal(scc_labels(g), want_s)
    for threads in (1, 2):
        assert np.array_equal(wcc_labels(g, threads=threads), want_w)
    G = nx.DiGraph()
    G.add_nodes_from(range(n))
    G.add_edges_from(zip(g.arc_sources.tolist(), g.out_targets.tolist()))
    ours = [set(c.tolist()) for c in component_members(scc_labels(g))]
    assert sorted(map(min, ours)) == [min(c) for c in ours]  # numbered by smallest vertex
    assert sorted(map(sorted, ours)) == sorted(map(sorted, nx.strongly_connected_components(G)))
    assert [set(c.tolist()) for c in component_members(wcc_labels(g))] == \
        list(nx.weakly_connected_components(G))  # networkx's own order too


def test_components_of_names_and_undirected_graphs(tmp_path):
    g = digraph.load(write(tmp_path, "n.txt", "x y\ny x\ny z\nw v\nq q\n"))
    assert dict(zip(g.vertex_ids.tolist(), scc_labels(g).tolist())) == \
        {"x": 0, "y": 0, "z": 1, "w": 2, "v": 3, "q": 4}
    assert wcc_labels(g).tolist() == [0, 0, 0, 1, 1, 2]
    u = digraph.load(nx.path_graph(4).to_undirected())
    assert scc_labels(u).tolist() == [0, 0, 0, 0] == wcc_labels(u).tolist()
    with pytest.raises(InvalidParameterError, match="threads"):
        wcc_labels(g, threads=0)


# ---------------------------------------------------------------------------- real graphs

@pytest.mark.datasets
@pytest.mark.parametrize("name", ["email-Eu-core.txt.gz", "p2p-Gnutella08.txt.gz"])
def test_real_graphs(name):
    g = digraph.load(dataset_path(name))
    assert np.array_equal(scc_labels(g), scipy_labels(g, "strong"))
    assert np.array_equal(wcc_labels(g), scipy_labels(g, "weak"))
    rng = np.random.default_rng(5)
    w = rng.integers(1, 8, g.num_arcs).astype(float)  # integer weights: many ties
    gw = Graph.from_arrays(g.arc_sources, g.out_targets, w, num_vertices=g.num_vertices)
    s = int(np.argmax(g.out_degree))
    for graph, weights in ((g, False), (gw, True)):
        r = digraph.run(graph, "sssp", source=graph.vertex_ids[s])
        u, v, ww = arc_arrays(graph)
        order = np.lexsort((ww, v, u))  # the lightest of parallel arcs (to_scipy sums them)
        first = np.ones(order.size, bool)
        first[1:] = (u[order][1:] != u[order][:-1]) | (v[order][1:] != v[order][:-1])
        a = sp.csr_array((ww[order][first], (u[order][first], v[order][first])),
                         shape=(graph.num_vertices,) * 2)
        d, pred = shortest_path(a, method="D", indices=s, return_predecessors=True)
        assert np.array_equal(r.values, d)
        got = r.predecessor_indices()
        assert np.array_equal(got >= 0, pred >= 0)  # the same vertices have a parent
        assert np.array_equal(got, reference_tree(graph, r.values, s)[0])
        check = np.flatnonzero(got >= 0)
        assert np.all(d[got[check]] + a[got[check], check] == d[check])  # tight tree arcs
        if not weights:
            assert np.array_equal(bfs_levels(g, g.vertex_ids[s]),
                                  np.where(np.isfinite(d), d, -1))


# ---------------------------------------------------------------------------- GPU (simulator)

@pytest.fixture(scope="module")
def be():
    from digraph.dispatch.runtime.cuda.backend import backend
    try:
        return backend("cuda")
    except NotAvailableError as e:
        pytest.skip(str(e))


@pytest.mark.gpu
@pytest.mark.parametrize("weights", ["mixed", "int", None])
def test_gpu_tree_equals_cpu_tree(be, weights):
    g = messy_graph(11, n=36, m=80, weights=weights)
    r = digraph.run(g, "sssp", source=2, device="cuda")
    assert np.array_equal(r.values, dijkstra_reference(g, 2))
    on_gpu = r.predecessor_indices()  # the run's device
    assert np.array_equal(on_gpu, r.predecessor_indices(device="cpu"))
    assert np.array_equal(on_gpu, reference_tree(g, r.values, 2)[0])
    assert r.path(int(np.flatnonzero(np.isfinite(r.values))[-1])) == \
        digraph.run(g, "sssp", source=2).path(int(np.flatnonzero(np.isfinite(r.values))[-1]))
    c = digraph.run(g, "sssp", source=2)  # a CPU run's tree built on the GPU
    assert np.array_equal(c.predecessor_indices(device="cuda"), on_gpu)


@pytest.mark.gpu
def test_gpu_components_and_bfs(be):
    g = messy_graph(12, n=48, m=70, weights=None)
    assert np.array_equal(wcc_labels(g, device="cuda"), scipy_labels(g, "weak"))
    assert np.array_equal(bfs_levels(g, 1, device="cuda"), bfs_levels(g, 1))
    assert np.array_equal(bfs_levels(g, [1, 7, 7, 30], device="cuda"), bfs_levels(g, [1, 7, 30]))
    with pytest.raises(NotAvailableError, match="device='cpu'"):
        scc_labels(g, device="cuda")
    lone = Graph.from_arrays(np.zeros(0, np.int64), np.zeros(0, np.int64), num_vertices=3)
    assert wcc_labels(lone, device="cuda").tolist() == [0, 1, 2]


@pytest.mark.gpu
@settings(SETTINGS, max_examples=12)
@given(graphs(), st.data())
def test_gpu_kernels_on_drawn_graphs(be, g, data):
    s = data.draw(st.integers(0, g.num_vertices - 1))
    d = digraph.run(g, "sssp", source=s).values
    pred, hops = shortest_path_tree(g, d, s, device="cuda")
    want = reference_tree(g, d, s)
    assert np.array_equal(pred, want[0]) and np.array_equal(hops, want[1])
    assert np.array_equal(wcc_labels(g, device="cuda"), scipy_labels(g, "weak"))


def test_docs_results_example_runs(capsys):
    import re
    from pathlib import Path
    text = (Path(__file__).resolve().parents[1] / "docs" / "results.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) == 1
    exec(compile(blocks[0], "docs/results.md", "exec"), {"__name__": "docs_example"})
    printed = capsys.readouterr().out.splitlines()
    wanted = [line.split("# ")[1].split("  (")[0].split("   ")[0].strip()
              for line in blocks[0].splitlines() if line.startswith("print(")]
    assert [p.strip() for p in printed] == wanted  # the comments show what the lines print
