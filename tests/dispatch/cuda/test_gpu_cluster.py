"""The cluster engine (``mode="cluster"``, one GPU) and its clusters: answers equal scipy's
Dijkstra / BFS and the other modes exactly, the router's choice, the refusals.

Under Numba's CUDA simulator (no GPU) a cluster holds at most 64 vertices
(:data:`digraph.smx.cuda.clusters.CT`), so the small graphs here still have many clusters and
many rounds; ``pytest -m gpu`` on a GPU runs the same tests with blocks of 1,024.
"""

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.csgraph as cg
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import digraph
import digraph.generators as gen
from digraph.errors import InvalidParameterError
from digraph.preprocess.clusters import (cluster_layout, clusters_for, internal_share_sample)

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("one_gpu")]


def _dijkstra(src, dst, w, n, s):
    A = sp.csr_matrix((np.ones(len(src)) if w is None else w, (src, dst)), shape=(n, n))
    if w is None:
        A.sum_duplicates()
        A.data[:] = 1.0
    return cg.dijkstra(A, indices=s)


def _grid(rows, cols, seed=0, weights=(1, 100)):
    t = gen.grid(rows, cols, seed=seed, weights=weights)
    w = t[2] if weights is not None else None
    return digraph.Graph.from_arrays(t[0], t[1], w, num_vertices=rows * cols), t[0], t[1], w


# ---------------------------------------------------------------------------- clusters (CPU)


@pytest.mark.parametrize("size", [1, 7, 64])
def test_clusters_cut_every_vertex_once_into_full_clusters_of_near_vertices(size):
    g, src, dst, _ = _grid(9, 13)
    cl = clusters_for(g, size)
    n = g.num_vertices
    assert sorted(cl.order.tolist()) == list(range(n))
    assert np.array_equal(cl.new_id[cl.order], np.arange(n))
    sizes = np.diff(cl.starts)
    assert (sizes[:-1] == size).all() and 1 <= sizes[-1] <= size
    label = np.repeat(np.arange(cl.num_clusters), sizes)[cl.new_id]  # per old vertex
    assert cl.internal_arcs == int((label[src] == label[dst]).sum())
    # BFS growth keeps clusters compact: most of each cluster is one piece (the last one takes
    # what is left over)
    A = sp.csr_matrix((np.ones(src.size), (src, dst)), shape=(n, n))
    for c in range(cl.num_clusters - 1):
        vs = cl.order[cl.starts[c]:cl.starts[c + 1]]
        _, lab = cg.connected_components(A[vs][:, vs], directed=False)
        assert np.bincount(lab).max() * 2 >= vs.size
    if size == 64:
        assert cl.internal_share(g.num_arcs) > 0.75


def test_clusters_of_a_fragmented_graph_are_filled_up():
    # 40 disjoint arcs: each BFS piece holds 2 vertices; clusters of 8 take 4 pieces each
    src, dst = np.arange(0, 80, 2), np.arange(1, 80, 2)
    g = digraph.Graph.from_arrays(src, dst, num_vertices=80)
    cl = clusters_for(g, 8)
    assert cl.num_clusters == 10 and cl.internal_arcs == 40
    assert clusters_for(digraph.Graph.from_arrays([], [], num_vertices=0), 8).num_clusters == 0


def test_cluster_layout_holds_every_in_arc_once_local_ones_first():
    g, src, dst, w = _grid(6, 7, seed=2)
    cl = clusters_for(g, 10)
    lay = cluster_layout(g, cl)
    n = g.num_vertices
    label = lay["label"]
    seen = []
    for i in range(n):
        v = cl.order[i]
        base = cl.starts[label[i]]
        for e in range(lay["off"][i], lay["off"][i + 1]):
            a = lay["arc"][e]
            u = cl.new_id[g.arc_sources[a]]
            assert g.out_targets[a] == v
            if e < lay["mid"][i]:
                assert label[u] == label[i] and lay["src"][e] == u - base
            else:
                assert label[u] != label[i] and lay["src"][e] == u
            seen.append(a)
        reach = {label[cl.new_id[t]] for t in g.out_targets[g.out_offsets[v]:g.out_offsets[v + 1]]}
        reach.discard(label[i])
        assert sorted(lay["xo"][lay["xo_off"][i]:lay["xo_off"][i + 1]].tolist()) == sorted(reach)
    assert sorted(seen) == list(range(g.num_arcs))
    assert lay["local_arcs"].sum() == cl.internal_arcs
    assert lay["local_arcs"].sum() + lay["external_arcs"].sum() == g.num_arcs


def test_internal_share_sample_tells_a_grid_from_a_random_graph():
    g, *_ = _grid(60, 60)
    assert internal_share_sample(g, 256) > 0.85
    src, dst = gen.rmat(12, 8, seed=1)
    r = digraph.Graph.from_arrays(src, dst, num_vertices=1 << 12)
    assert internal_share_sample(r, 256) < 0.5


@pytest.mark.parametrize("bad", [0, -3, 2.5, True])
def test_cluster_size_must_be_a_positive_integer(bad):
    g, *_ = _grid(3, 3)
    with pytest.raises(InvalidParameterError, match="cluster size"):
        clusters_for(g, bad)


# ---------------------------------------------------------------------------- the engine


@pytest.mark.parametrize("weights", [(1, 100), None])
def test_cluster_sssp_on_a_grid_equals_dijkstra_in_fewer_rounds(weights):
    g, src, dst, w = _grid(20, 23, seed=5, weights=weights)
    ref = _dijkstra(src, dst, w, g.num_vertices, 0)
    r = digraph.run(g, "sssp", source=0, device="cuda", mode="cluster")
    assert np.array_equal(r.values, ref)
    assert r.stats["engine"] == "gpu-cluster" and r.stats["converged"]
    # bsp's rounds are the hops of the deepest shortest path (vertex-async's depend on the order
    # its threads run in, one at a time under the simulator)
    bsp = digraph.run(g, "sssp", source=0, device="cuda", mode="bsp")
    assert np.array_equal(bsp.values, ref)
    assert r.stats["rounds"] * 2 < bsp.stats["rounds"]
    from digraph.smx.cuda.clusters import CT
    size = min(512, CT)  # ClusterSettings.size, at most the simulator's 64
    assert r.stats["cluster"]["size"] == size
    assert r.stats["cluster"]["clusters"] == -(-g.num_vertices // size)
    assert r.stats["cluster"]["clusters_run"] >= r.stats["cluster"]["clusters"]
    assert r.stats["cluster"]["sweeps"] >= r.stats["cluster"]["clusters_run"]
    assert r.stats["arc_updates"] >= g.num_arcs


def test_cluster_sssp_from_a_hub_of_a_real_graph(tmp_path):
    # p2p-like: sparse, no locality; a source whose out-arcs leave its cluster at once
    src, dst = gen.rmat(10, 4, seed=3)
    g = digraph.Graph.from_arrays(src, dst, num_vertices=1 << 10)
    s = int(np.argmax(np.diff(g.out_offsets)))
    ref = _dijkstra(src, dst, None, g.num_vertices, s)
    r = digraph.run(g, "sssp", source=s, device="cuda", mode="cluster")
    assert np.array_equal(r.values, ref)


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(n=st.integers(1, 90), data=st.data())
def test_cluster_sssp_matches_dijkstra_on_random_graphs(n, data):
    m = data.draw(st.integers(0, 4 * n))
    src = np.array(data.draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m)), np.int64)
    dst = np.array(data.draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m)), np.int64)
    w = np.array(data.draw(st.lists(st.integers(1, 9), min_size=m, max_size=m)), np.float64)
    s = data.draw(st.integers(0, n - 1))
    g = digraph.Graph.from_arrays(src, dst, w, num_vertices=n)
    r = digraph.run(g, "sssp", source=s, device="cuda", mode="cluster")
    cpu = digraph.run(g, "sssp", source=s)
    assert np.array_equal(r.values, cpu.values)


def test_router_sends_road_like_graphs_to_clusters_and_others_not():
    from digraph.dispatch.engines.cluster.gpu import DEFAULT as CLUSTER
    from digraph.dispatch.route import DEFAULT, route
    from digraph.dispatch.route.settings import RouteSettings
    from digraph.smx.cuda.clusters import CT
    g, src, dst, w = _grid(30, 30, seed=1)
    share = internal_share_sample(g, min(CLUSTER.size, CT))
    # the simulator's clusters hold 64 vertices: a grid keeps ~85% of a ball's arcs inside (94%
    # with the GPU's 512), so the cut is placed below that here
    loose = RouteSettings(cluster_share=0.8)
    plan = route("monotone", None, "cuda", graph=g, settings=loose)
    assert plan.mode == "cluster" and "road-like" in plan.reason and f"{share:.0%}" in plan.reason
    # no locality, no hub: an Erdős–Rényi-like graph large enough for balls of 512 to stay small
    src2, dst2 = gen.rmat(14, 8, a=0.25, b=0.25, c=0.25, seed=2)
    h = digraph.Graph.from_arrays(src2, dst2, num_vertices=1 << 14)
    assert int(h.in_degree.max()) <= DEFAULT.cluster_max_in_degree
    assert internal_share_sample(h, min(CLUSTER.size, CT)) < 0.5
    assert route("monotone", None, "cuda", graph=h, settings=loose).mode == "vertex-async"
    # a hub in a grid: its thread would walk 3,000 in-arcs alone at every sweep
    hub_src = np.concatenate([src, np.arange(1, 3001) % g.num_vertices])
    hub_dst = np.concatenate([dst, np.zeros(3000, np.int64)])
    hub = digraph.Graph.from_arrays(hub_src, hub_dst, num_vertices=g.num_vertices)
    assert int(hub.in_degree.max()) > DEFAULT.cluster_max_in_degree
    assert route("monotone", None, "cuda", graph=hub, settings=loose).mode == "vertex-async"
    assert route("monotone", None, "cpu", graph=g, settings=loose).mode == "vertex-async"
    assert route("monotone", None, "cuda:0,1", graph=g, settings=loose).mode == "vertex-async"
    r = digraph.run(g, "sssp", source=0, device="cuda")  # a whole run, the default cut
    assert r.stats["mode"] == ("cluster" if share >= DEFAULT.cluster_share else "vertex-async")
    assert r.stats["requested_mode"] is None
    assert np.array_equal(r.values, _dijkstra(src, dst, w, g.num_vertices, 0))


def test_router_walks_paths_for_min_max_when_the_graph_holds_its_pathset():
    from digraph.dispatch import route as R
    from digraph.dispatch.route import settings as route_settings
    src, dst = gen.rmat(10, 8, a=0.25, b=0.25, c=0.25, seed=3)  # no locality: not road-like
    w = np.random.default_rng(3).integers(1, 9, src.size).astype(np.float64)
    g = digraph.Graph.from_arrays(src, dst, w, num_vertices=1 << 10)
    low = route_settings.RouteSettings(path_min_arcs=1)
    assert route_mode(g, low) == "vertex-async"  # no PathSet yet: preprocessing is not free
    cpu = digraph.run(g, "sssp", source=1, mode="path")  # keeps the PathSet with the graph
    plan = R.route("monotone", None, "cuda", graph=g, settings=low)
    assert plan.mode == "path" and "PathSet" in plan.reason
    assert route_mode(g, route_settings.RouteSettings(path_min_arcs=g.num_arcs + 1)) == "vertex-async"
    assert R.route("monotone", None, "cpu", graph=g, settings=low).mode == "vertex-async"
    assert R.route("linear", None, "cuda", graph=g, settings=low).mode != "path"
    # a whole run: the PathSet kept is the one walked
    r = digraph.run(g, "sssp", source=1, device="cuda", settings=[low])
    assert r.stats["mode"] == "path" and r.stats["requested_mode"] is None
    assert np.array_equal(r.values, cpu.values)
    # R-MAT repeats arcs (scipy's matrix would add their weights): the CPU's default engine
    assert np.array_equal(r.values, digraph.run(g, "sssp", source=1, mode="vertex-async").values)


def route_mode(g, settings):
    from digraph.dispatch.route import route
    return route("monotone", None, "cuda", graph=g, settings=settings).mode


def test_cluster_mode_is_refused_where_it_does_not_run():
    g, *_ = _grid(4, 4)
    with pytest.raises(InvalidParameterError, match="one GPU"):
        digraph.run(g, "sssp", source=0, mode="cluster")
    with pytest.raises(InvalidParameterError, match="min/max"):
        digraph.run(g, "pagerank", device="cuda", mode="cluster")
    with pytest.raises(InvalidParameterError, match="min/max"):
        digraph.run(g, "kcore", device="cuda", mode="cluster")


def test_cluster_settings_are_checked():
    from digraph.dispatch.engines import one_gpu as gpu
    from digraph.dispatch.engines.cluster.gpu import ClusterSettings
    from digraph.algorithms import get
    from digraph.result import RunStats
    g, *_ = _grid(4, 4)
    algo = get("sssp")
    system = algo.prepare(g, **algo.bind(g, {"source": 0}))
    for bad in (ClusterSettings(size=33), ClusterSettings(size=2048),
                ClusterSettings(rounds_per_check=0)):
        with pytest.raises(InvalidParameterError, match="ClusterSettings"):
            gpu.solve(g, system, mode="cluster", tol=0.0, max_iter=100, stats=RunStats.new(),
                      cluster_settings=bad)
