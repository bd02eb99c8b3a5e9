"""The networkx backend (digraph.nx_backend): same keys, value types, answers and exceptions as
networkx, on hypothesis-generated graphs and on the small real graphs.

The functions are called directly here (networkx's dispatcher only knows backends registered by
entry points); ``test_dispatch_in_process`` goes through ``nx.pagerank(G, backend="digraph")``
when the package is installed with its entry points (CI), and ``test_nx_backend_venv.py`` checks
that in a fresh virtual environment.
"""

import math
import re

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import dataset_path
from digraph.nx_backend import get_info, interface as B

ALPHA = 0.85


# ---------------------------------------------------------------------------- graphs

@st.composite
def nx_graphs(draw, multigraph=None, self_loops=True, weights=None, max_nodes=12):
    """A small networkx graph: any class, shuffled node order, int/str/tuple labels, optional
    int or float weights (zeros included)."""
    n = draw(st.integers(0, max_nodes))
    directed = draw(st.booleans())
    multi = draw(st.booleans()) if multigraph is None else multigraph
    cls = {(True, True): nx.MultiDiGraph, (True, False): nx.DiGraph,
           (False, True): nx.MultiGraph, (False, False): nx.Graph}[(directed, multi)]
    labels = draw(st.sampled_from(["int", "str", "mixed"]))
    label = {"int": lambda i: 3 * i + 1, "str": lambda i: f"v{i}",
             "mixed": lambda i: i if i % 2 else ("t", i)}[labels]
    order = draw(st.permutations(range(n))) if n else []
    pairs = draw(st.lists(st.tuples(st.integers(0, max(n - 1, 0)), st.integers(0, max(n - 1, 0))),
                          max_size=3 * n)) if n else []
    if not self_loops:
        pairs = [(u, v) for u, v in pairs if u != v]
    kind = draw(st.sampled_from(["none", "int", "float"])) if weights is None else weights
    if kind == "int":
        ws = draw(st.lists(st.integers(0, 5), min_size=len(pairs), max_size=len(pairs)))
    elif kind == "float":
        ws = draw(st.lists(st.one_of(st.just(0.0), st.floats(0.01, 10.0)), min_size=len(pairs),
                           max_size=len(pairs)))
    G = cls()
    G.add_nodes_from(label(i) for i in order)
    for k, (u, v) in enumerate(pairs):
        if kind == "none":
            G.add_edge(label(u), label(v))
        else:
            G.add_edge(label(u), label(v), weight=ws[k])
    return G


def exact_pagerank(G, alpha=ALPHA, personalization=None, weight="weight"):
    """Dense direct solve of networkx's PageRank (dangling mass along p), normalised."""
    nodes = list(G)
    n = len(nodes)
    A = nx.to_numpy_array(G, nodelist=nodes, weight=weight)  # parallel edges summed
    s = A.sum(axis=1)
    P = np.divide(A, s[:, None], out=np.zeros_like(A), where=s[:, None] > 0)
    p = np.full(n, 1.0 / n) if personalization is None else \
        np.array([personalization.get(v, 0) for v in nodes], float)
    p = p / p.sum()
    M = P.T + np.outer(p, s == 0)  # dangling columns redistribute along p
    x = np.linalg.solve(np.eye(n) - alpha * M, (1 - alpha) * p)
    return dict(zip(nodes, (x / x.sum()).tolist()))


def l1(a, b):
    assert a.keys() == b.keys()
    return sum(abs(a[k] - b[k]) for k in a)


def typed(d):
    return {k: (type(v), v) for k, v in d.items()}


SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------------------- answers

@SETTINGS
@given(nx_graphs(), st.sampled_from([1e-6, 1e-9]))
def test_pagerank_matches_networkx_within_its_tolerance(G, tol):
    if G.number_of_nodes() == 0:
        assert B.pagerank(G) == {} == nx.pagerank(G)
        return
    n = len(G)
    got = B.pagerank(G, alpha=ALPHA, tol=tol)
    assert list(got) == list(G) and all(type(v) is float for v in got.values())
    try:
        ref = nx.pagerank(G, alpha=ALPHA, tol=tol)
    except nx.PowerIterationFailedConvergence:  # networkx's 100 iterations may fall short at 1e-9
        ref = None
    exact = exact_pagerank(G)
    bound = B.pagerank_error_bound(n, ALPHA, tol)
    assert bound == n * tol  # alpha / (1 - alpha) > 1 at 0.85
    assert l1(got, exact) <= bound * (1 + 1e-6) + 1e-12
    # networkx's own answer is within alpha / (1 - alpha) * n * tol of the exact one
    if ref is not None:
        assert l1(got, ref) <= bound + ALPHA / (1 - ALPHA) * n * tol + 1e-12
    assert math.isclose(sum(got.values()), 1.0, rel_tol=1e-9)


@SETTINGS
@given(nx_graphs(weights="none"), st.floats(0.05, 0.95), st.data())
def test_pagerank_personalization_and_alpha(G, alpha, data):
    if len(G) == 0:
        return
    nodes = list(G)
    chosen = data.draw(st.lists(st.sampled_from(nodes), min_size=1, max_size=4, unique=True))
    pers = {v: data.draw(st.integers(1, 5)) for v in chosen}
    pers["not a node"] = 7  # networkx ignores keys that are not nodes
    got = B.pagerank(G, alpha=alpha, personalization=pers, tol=1e-10)
    exact = exact_pagerank(G, alpha, {k: v for k, v in pers.items() if k in G})
    assert l1(got, exact) <= B.pagerank_error_bound(len(G), alpha, 1e-10) * (1 + 1e-6) + 1e-12


@SETTINGS
@given(nx_graphs(multigraph=False, self_loops=False))
def test_core_number_exact(G):
    got = B.core_number(G)
    assert typed(got) == typed(nx.core_number(G))
    assert list(got) == list(G)


@SETTINGS
@given(nx_graphs(), st.data())
def test_dijkstra_exact_with_types(G, data):
    if len(G) == 0:
        return
    source = data.draw(st.sampled_from(list(G)))
    cutoff = data.draw(st.one_of(st.none(), st.integers(-1, 6), st.floats(0, 8)))
    got = B.single_source_dijkstra_path_length(G, source, cutoff=cutoff)
    ref = nx.single_source_dijkstra_path_length(G, source, cutoff=cutoff)
    assert typed(got) == typed(ref)
    got = B.single_source_dijkstra_path_length(G, source, weight=None)
    assert typed(got) == typed(nx.single_source_dijkstra_path_length(G, source, weight=None))


@SETTINGS
@given(nx_graphs(), st.data())
def test_bfs_lengths_exact(G, data):
    if len(G) == 0:
        return
    source = data.draw(st.sampled_from(list(G)))
    cutoff = data.draw(st.one_of(st.none(), st.integers(-1, 5), st.floats(0, 5)))
    got = B.single_source_shortest_path_length(G, source, cutoff=cutoff)
    assert typed(got) == typed(nx.single_source_shortest_path_length(G, source, cutoff=cutoff))


def test_mixed_int_float_weights_equal_values():
    G = nx.DiGraph()
    G.add_edge("a", "b", weight=1)
    G.add_edge("b", "c", weight=0.5)
    G.add_edge("a", "d", weight=2)
    got = B.single_source_dijkstra_path_length(G, "a")
    assert got == nx.single_source_dijkstra_path_length(G, "a") == {"a": 0, "b": 1, "c": 1.5, "d": 2}
    assert type(got["a"]) is int and type(got["c"]) is float


def test_modes_pass_through():
    G = nx.gnp_random_graph(40, 0.1, seed=3, directed=True)
    ref = nx.single_source_shortest_path_length(G, 0)
    for mode in ("bsp", "vertex-async", "path", "path-nopriority"):
        assert B.single_source_shortest_path_length(G, 0, mode=mode) == ref
        pr = B.pagerank(G, tol=1e-9, mode=mode)
        assert l1(pr, exact_pagerank(G)) <= 40 * 1e-9
    with pytest.raises(TypeError, match="unexpected keyword"):
        B.pagerank(G, colour="red")
    with pytest.raises(ValueError, match="names a GPU twice"):
        B.core_number(G.to_undirected(), device="cuda:0,0")


# ---------------------------------------------------------------------------- exceptions

@pytest.mark.parametrize("func, args, exc", [
    ("single_source_dijkstra_path_length", ("zz",), nx.NodeNotFound),
    ("single_source_shortest_path_length", ("zz",), nx.NodeNotFound),
    ("pagerank", (), nx.PowerIterationFailedConvergence),
    ("pagerank", (), ZeroDivisionError),
    ("core_number", (), nx.NetworkXNotImplemented),
])
def test_exceptions_match_networkx(func, args, exc):
    G = nx.DiGraph([(0, 1), (1, 2), (2, 0), (2, 3)])
    kwargs = {}
    if exc is nx.PowerIterationFailedConvergence:
        kwargs = {"max_iter": 0}
    elif exc is ZeroDivisionError:
        kwargs = {"personalization": {0: 0, 1: 0, "elsewhere": 1}}
    elif exc is nx.NetworkXNotImplemented:
        G.add_edge(1, 1)
    with pytest.raises(exc) as ours:
        getattr(B, func)(G, *args, **kwargs)
    with pytest.raises(exc) as theirs:
        getattr(nx, func)(G, *args, **kwargs)
    assert str(ours.value) == str(theirs.value) or exc is ZeroDivisionError


def test_multigraph_core_number_refused():
    with pytest.raises(nx.NetworkXNotImplemented, match="multigraph"):
        B.core_number(nx.MultiGraph([(0, 1), (0, 1)]))


def test_can_run_refuses_what_differs():
    G = nx.DiGraph()
    G.add_edge(0, 1, weight=2.0)
    G.add_edge(1, 2, weight=1)
    assert B.can_run("pagerank", (G,), {}) is True
    assert B.can_run("single_source_dijkstra_path_length", (G, 0), {"cutoff": 3}) is True
    assert B.can_run("core_number", (G,), {}) is True
    assert isinstance(B.can_run("pagerank", (G,), {"nstart": {0: 1}}), str)
    assert B.can_run("pagerank", (G,), {"dangling": {0: 1}}) is True  # the power iteration
    assert isinstance(B.can_run("pagerank", (G,), {"dangling": {0: -1}}), str)
    assert "power" in B.can_run("pagerank", (G,), {"dangling": {0: 1}, "mode": "scc"})
    assert isinstance(B.can_run("pagerank", (G,), {"alpha": 1.0}), str)
    assert isinstance(B.can_run("pagerank", (G,), {"personalization": {0: -1}}), str)
    assert isinstance(B.can_run("pagerank", (G,), {"mode": "bsp", "colour": 1}), str)
    assert B.can_run("pagerank", (G,), {"mode": "bsp"}) is True
    assert isinstance(B.can_run("single_source_dijkstra_path_length", (G, 0),
                                {"weight": lambda u, v, d: 1}), str)
    assert B.can_run("betweenness_centrality", (G,), {}) is False
    G.add_edge(2, 3, weight=-1)
    assert "negative" in B.can_run("single_source_dijkstra_path_length", (G, 0), {})
    assert "negative" in B.can_run("pagerank", (G,), {})
    assert B.can_run("pagerank", (G,), {"weight": None}) is True
    G.add_edge(3, 4, weight=float("inf"))
    assert "infinite" in B.can_run("single_source_dijkstra_path_length", (G, 0), {"weight": "weight"})
    G.add_edge(4, 5, weight="heavy")
    assert "not real numbers" in B.can_run("pagerank", (G,), {})


def test_conversion_round_trip_and_info():
    G = nx.MultiGraph()
    G.add_edge("a", ("b", 1), weight=2)
    G.add_edge("a", ("b", 1), weight=3)
    G.add_edge("c", "c", weight=1.5)
    G.graph["name"] = "g"
    dg = B.convert_from_nx(G, edge_attrs={"weight": 1})
    assert dg.__networkx_backend__ == "digraph" and dg.graph.num_arcs == 5  # 2 edges x 2 + loop
    assert dg.weight_kind == "mixed" and ("b", 1) in dg and "z" not in dg
    back = B.convert_to_nx(dg)
    assert isinstance(back, nx.MultiGraph) and back.graph == {"name": "g"}
    assert sorted(d["weight"] for *_, d in back.edges(data=True)) == [1.5, 2.0, 3.0]
    assert B.convert_to_nx({"a": 1}) == {"a": 1}
    info = get_info()
    assert info["backend_name"] == "digraph" and info["package"] == "digraph"
    assert set(info["functions"]) == {
        "pagerank", "core_number", "single_source_dijkstra_path_length",
        "single_source_shortest_path_length", "shortest_path_length", "single_source_dijkstra",
        "single_source_dijkstra_path", "strongly_connected_components",
        "weakly_connected_components", "bfs_layers"}
    for name in info["functions"]:  # the names mirror networkx's, with networkx's parameters first
        ours = list(__import__("inspect").signature(getattr(B, name)).parameters)
        theirs = list(__import__("inspect").signature(getattr(nx, name).orig_func).parameters)
        assert ours[:len(theirs)] == theirs


@pytest.mark.skipif("digraph" not in nx.utils.backends.backends,
                    reason="digraph's networkx entry points are not installed in this environment")
@pytest.mark.filterwarnings("ignore:Note. conversions to backend graphs")
def test_dispatch_in_process():
    G = nx.DiGraph([(0, 1), (1, 2), (2, 0), (2, 3)])
    got = nx.pagerank(G, backend="digraph", tol=1e-10)
    assert l1(got, exact_pagerank(G)) <= 4e-10
    assert nx.core_number(G, backend="digraph") == nx.core_number(G)
    with pytest.raises(nx.NodeNotFound):
        nx.single_source_shortest_path_length(G, 9, backend="digraph")


# ---------------------------------------------------------------------------- real graphs

@pytest.mark.datasets
@pytest.mark.parametrize("name", ["email-Eu-core.txt.gz", "p2p-Gnutella08.txt.gz"])
def test_real_graphs(name):
    G = nx.read_edgelist(dataset_path(name), create_using=nx.DiGraph, nodetype=int)
    n = len(G)
    got = B.pagerank(G, tol=1e-9)
    assert l1(got, nx.pagerank(G, tol=1e-9)) <= (1 + ALPHA / (1 - ALPHA)) * n * 1e-9
    source = next(iter(G))
    assert typed(B.single_source_dijkstra_path_length(G, source)) == \
        typed(nx.single_source_dijkstra_path_length(G, source))
    assert typed(B.single_source_shortest_path_length(G, source, cutoff=3)) == \
        typed(nx.single_source_shortest_path_length(G, source, cutoff=3))
    G.remove_edges_from(list(nx.selfloop_edges(G)))
    assert typed(B.core_number(G)) == typed(nx.core_number(G))


@pytest.mark.parametrize("cutoff", [1e-300, 0.5, 1, 1.0000001, -3, 0])
def test_bfs_cutoff_edges(cutoff):
    # networkx yields level L while cutoff > L - 1: a tiny positive cutoff still reaches level 1
    G = nx.path_graph(4)
    got = B.single_source_shortest_path_length(G, 0, cutoff=cutoff)
    assert typed(got) == typed(nx.single_source_shortest_path_length(G, 0, cutoff=cutoff))


def test_refused_pagerank_keywords_are_named():
    from digraph.nx_backend import interface
    G = nx.DiGraph([(0, 1), (1, 2)])
    for kw, name in (({"nstart": {0: 1.0}}, "nstart="),):
        with pytest.raises(NotImplementedError, match=f"does not support {name}"):
            interface.pagerank(G, **kw)
        assert name.rstrip("=") in interface.can_run("pagerank", (G,), kw)


@SETTINGS
@given(nx_graphs(), st.data())
def test_shortest_path_length_one_source_exact(G, data):
    """``shortest_path_length`` with a source: the dict, or the length to a target, and networkx's
    exceptions, hop counts and weighted, both methods."""
    if len(G) == 0:
        return
    source = data.draw(st.sampled_from(list(G)))
    weight = data.draw(st.sampled_from([None, "weight"]))
    method = data.draw(st.sampled_from(["dijkstra", "bellman-ford"]))
    got = B.shortest_path_length(G, source, weight=weight, method=method)
    assert typed(got) == typed(nx.shortest_path_length(G, source, weight=weight, method=method))
    target = data.draw(st.one_of(st.sampled_from(list(G)), st.just("not a node")))
    try:
        ref = nx.shortest_path_length(G, source, target, weight=weight, method=method)
    except (nx.NodeNotFound, nx.NetworkXNoPath) as e:
        with pytest.raises(type(e)):
            B.shortest_path_length(G, source, target, weight=weight, method=method)
    else:
        got = B.shortest_path_length(G, source, target, weight=weight, method=method)
        assert (type(got), got) == (type(ref), ref)


def test_shortest_path_length_falls_back_where_it_must():
    G = nx.DiGraph([(0, 1), (1, 2)])
    assert B.can_run("shortest_path_length", (G, 0), {}) is True
    assert "source=None" in B.can_run("shortest_path_length", (G,), {})
    assert "method" in B.can_run("shortest_path_length", (G, 0), {"method": "astar"})
    G[0][1]["weight"] = -1.0
    assert "negative" in B.can_run("shortest_path_length", (G, 0), {"weight": "weight"})
    with pytest.raises(ValueError, match="method not supported"):
        B.shortest_path_length(G, 0, method="astar")


@pytest.mark.skipif("digraph" not in nx.utils.backends.backends,
                    reason="digraph's networkx entry points are not installed in this environment")
@pytest.mark.filterwarnings("ignore:Note. conversions to backend graphs")
def test_shortest_path_length_dispatches():
    G = nx.DiGraph([(0, 1), (1, 2), (2, 0), (2, 3)])
    assert nx.shortest_path_length(G, 0, backend="digraph") == nx.shortest_path_length(G, 0)
    assert nx.shortest_path_length(G, 0, 3, backend="digraph") == 3


def test_pagerank_with_overflowing_weight_sums_falls_back():
    G = nx.DiGraph()
    G.add_edge(0, 1, weight=1e308)
    G.add_edge(0, 2, weight=1e308)
    G.add_edge(1, 2, weight=1.0)
    assert "float64" in B.can_run("pagerank", (G,), {})
    assert B.can_run("pagerank", (G,), {"weight": None}) is True
    G[0][1]["weight"] = 1e307
    G[0][2]["weight"] = 1e307
    assert B.can_run("pagerank", (G,), {}) is True


# ---------------------------------------------------------------------------- paths, components, BFS

def _edge_weight(G, u, v, weight):
    """What networkx's Dijkstra pays for the edge u -> v (the lightest of parallel edges)."""
    if weight is None:
        return 1
    if G.is_multigraph():
        return min(d.get(weight, 1) for d in G[u][v].values())
    return G[u][v].get(weight, 1)


@SETTINGS
@given(nx_graphs(), st.data())
def test_single_source_dijkstra_lengths_exact_paths_shortest(G, data):
    if len(G) == 0:
        return
    source = data.draw(st.sampled_from(list(G)))
    cutoff = data.draw(st.one_of(st.none(), st.integers(-1, 6), st.floats(0, 8)))
    weight = data.draw(st.sampled_from(["weight", None]))
    dist, paths = B.single_source_dijkstra(G, source, cutoff=cutoff, weight=weight)
    rdist, rpaths = nx.single_source_dijkstra(G, source, cutoff=cutoff, weight=weight)
    assert typed(dist) == typed(rdist) and paths.keys() == rpaths.keys()
    for v, p in paths.items():
        assert p[0] == source and p[-1] == v and len(p) == len(set(p))
        total = 0
        for a, b in zip(p, p[1:]):
            assert G.has_edge(a, b)
            total = total + _edge_weight(G, a, b, weight)
        assert total == dist[v]
        assert len(p) <= len(rpaths[v])  # the fewest edges among the shortest paths
    assert B.single_source_dijkstra_path(G, source, cutoff=cutoff, weight=weight) == paths
    target = data.draw(st.sampled_from(list(G)))
    try:
        want = nx.single_source_dijkstra(G, source, target, cutoff=cutoff, weight=weight)
    except nx.NetworkXNoPath:
        with pytest.raises(nx.NetworkXNoPath, match=re.escape(f"No path to {target}.")):
            B.single_source_dijkstra(G, source, target, cutoff=cutoff, weight=weight)
    else:
        length, path = B.single_source_dijkstra(G, source, target, cutoff=cutoff, weight=weight)
        assert (type(length), length) == (type(want[0]), want[0])
        assert path == paths.get(target, [target])


@SETTINGS
@given(nx_graphs())
def test_components_exact(G):
    if not G.is_directed():
        for f in (B.strongly_connected_components, B.weakly_connected_components):
            with pytest.raises(nx.NetworkXNotImplemented, match="undirected"):
                f(G)
        return
    got = list(B.strongly_connected_components(G))
    want = list(nx.strongly_connected_components(G))
    assert all(type(c) is set for c in got) and len(got) == len(want)
    assert set(map(frozenset, got)) == set(map(frozenset, want))
    where = {v: k for k, c in enumerate(got) for v in c}
    assert all(where[u] >= where[v] for u, v, *_ in G.edges)  # reverse topological, as networkx
    assert list(B.weakly_connected_components(G)) == list(nx.weakly_connected_components(G))


@SETTINGS
@given(nx_graphs(), st.data())
def test_bfs_layers_exact(G, data):
    if len(G) == 0:
        assert list(B.bfs_layers(G, [])) == list(nx.bfs_layers(G, [])) == []
        return
    nodes = list(G)
    sources = data.draw(st.one_of(st.sampled_from(nodes),
                                  st.lists(st.sampled_from(nodes), max_size=3)))
    got = list(B.bfs_layers(G, sources))
    want = list(nx.bfs_layers(G, sources))
    assert all(type(layer) is list for layer in got)
    assert [set(layer) for layer in got] == [set(layer) for layer in want]
    assert got[:1] == want[:1]  # networkx's first layer, in its order
    pos = {v: i for i, v in enumerate(G)}
    assert all([pos[v] for v in layer] == sorted(pos[v] for v in layer) for layer in got[1:])


def test_new_functions_errors_and_can_run():
    G = nx.DiGraph([(0, 1), (1, 2)])
    gen = B.bfs_layers(G, [0, 9])  # raised when advanced, as networkx's generator does
    with pytest.raises(nx.NetworkXError, match="The node 9 is not in the graph."):
        next(gen)
    with pytest.raises(nx.NodeNotFound, match="Node 9 not found in graph"):
        B.single_source_dijkstra(G, 9)
    with pytest.raises(nx.NetworkXNoPath, match="No path to 0."):
        B.single_source_dijkstra(G, 2, 0)
    with pytest.raises(nx.NetworkXNoPath, match="No path to 99."):
        B.single_source_dijkstra(G, 0, 99)
    assert B.single_source_dijkstra(G, 1, 1) == (0, [1]) == nx.single_source_dijkstra(G, 1, 1)
    assert list(B.bfs_layers(G, 1)) == [[1], [2]]
    assert B.can_run("strongly_connected_components", (G,), {}) is True
    assert "CPU only" in B.can_run("strongly_connected_components", (G,), {"device": "cuda"})
    assert B.can_run("weakly_connected_components", (G,), {"device": "cuda"}) is True
    assert B.can_run("bfs_layers", (G, [0, 1]), {}) is True
    assert isinstance(B.can_run("single_source_dijkstra", (G, 0), {"weight": lambda u, v, d: 1}), str)
    H = G.copy()
    H.add_edge(2, 3, weight=-1)
    assert "negative" in B.can_run("single_source_dijkstra", (H, 0), {})
    assert "negative" in B.can_run("single_source_dijkstra_path", (H, 0), {})
    with pytest.raises(digraph_errors().NotAvailableError, match="device='cpu'"):
        B.strongly_connected_components(G, device="cuda")


def digraph_errors():
    import digraph.errors
    return digraph.errors


@pytest.mark.gpu
def test_new_functions_on_the_gpu():
    from digraph.dispatch.runtime.cuda.backend import backend
    try:
        backend("cuda")
    except digraph_errors().NotAvailableError as e:
        pytest.skip(str(e))
    G = nx.gnm_random_graph(25, 50, seed=3, directed=True)
    for u, v in G.edges:
        G[u][v]["weight"] = (u + 2 * v) % 3
    dist, paths = B.single_source_dijkstra(G, 0, device="cuda")
    assert (dist, paths) == B.single_source_dijkstra(G, 0)  # the same canonical tree
    assert dist == nx.single_source_dijkstra_path_length(G, 0)
    assert list(B.weakly_connected_components(G, device="cuda")) == \
        list(nx.weakly_connected_components(G))
    assert list(B.bfs_layers(G, [0, 5], device="cuda")) == list(B.bfs_layers(G, [0, 5]))
    assert list(B.bfs_layers(G, 0, device="cuda")) == list(B.bfs_layers(G, 0))


@pytest.mark.skipif("digraph" not in nx.utils.backends.backends,
                    reason="digraph's networkx entry points are not installed in this environment")
@pytest.mark.filterwarnings("ignore:Note. conversions to backend graphs")
def test_new_functions_dispatch():
    def G():
        return nx.DiGraph([(0, 1), (1, 2), (2, 0), (2, 3), (5, 6)])
    assert nx.single_source_dijkstra(G(), 0, backend="digraph") == nx.single_source_dijkstra(G(), 0)
    assert nx.single_source_dijkstra_path(G(), 0, backend="digraph")[3] == [0, 1, 2, 3]
    assert set(map(frozenset, nx.strongly_connected_components(G(), backend="digraph"))) == \
        set(map(frozenset, nx.strongly_connected_components(G())))
    assert list(nx.weakly_connected_components(G(), backend="digraph")) == \
        list(nx.weakly_connected_components(G()))
    assert list(nx.bfs_layers(G(), [0, 5], backend="digraph")) == [[0, 5], [1, 6], [2], [3]]
