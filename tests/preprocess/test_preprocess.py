"""Tests of the preprocessing stage: decomposition, merging, hot labels, dependency graph, DAG
sketch, layers, partitions (digraph.preprocess), each against a slow, obviously right reference."""

import gzip
from collections import Counter

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import connected_components

from digraph.errors import InvalidParameterError
from digraph.graph import Graph
from digraph.preprocess import preprocess
from digraph.preprocess.decompose import decompose
from digraph.preprocess.partition import hot_labels
from digraph.preprocess.scc import scc_two_phase, tarjan_scc

DATASETS = __import__("pathlib").Path(__file__).resolve().parents[2].parent / "shared" / "datasets"


# ---------------------------------------------------------------------------- helpers
def paths_of(ps):
    return [ps.path(p).tolist() for p in range(ps.num_paths)]


def check_cover(g, ps):
    """Every arc on exactly one path; consecutive entries of a path are the arcs listed for it."""
    m = g.num_arcs
    assert ps.path_arc_ids.size == m
    assert np.array_equal(np.sort(ps.path_arc_ids), np.arange(m))
    src = g.arc_sources
    dst = g.out_targets
    aoff = ps.path_arc_offsets
    for p in range(ps.num_paths):
        vs = ps.path(p)
        assert vs.size >= 2
        ids = ps.path_arc_ids[aoff[p]:aoff[p + 1]]
        assert ids.size == vs.size - 1
        assert np.array_equal(src[ids], vs[:-1]) and np.array_equal(dst[ids], vs[1:])
    # multiset of (src, dst) pairs equals the graph's
    pairs = Counter()
    for vs in paths_of(ps):
        pairs.update(zip(vs[:-1], vs[1:]))
    assert pairs == Counter(zip(src.tolist(), dst.tolist()))


def explicit_dependency_graph(ps):
    """G' built literally: p -> q when a non-head vertex of p is a non-tail vertex of q (p != q)."""
    P = ps.num_paths
    writes = [set(vs[1:]) for vs in paths_of(ps)]
    reads = [set(vs[:-1]) for vs in paths_of(ps)]
    rows, cols = [], []
    for p in range(P):
        for q in range(P):
            if p != q and writes[p] & reads[q]:
                rows.append(p)
                cols.append(q)
    return sp.csr_array((np.ones(len(rows)), (rows, cols)), shape=(P, P))


def reference_layers(adj, labels, ncomp):
    """Longest distance from a source in the condensation of adj (plain Python)."""
    a = adj.tocoo()
    cedges = {(labels[i], labels[j]) for i, j in zip(a.row, a.col) if labels[i] != labels[j]}
    succ = {c: [] for c in range(ncomp)}
    indeg = [0] * ncomp
    for u, v in cedges:
        succ[u].append(v)
        indeg[v] += 1
    layer = [0] * ncomp
    queue = [c for c in range(ncomp) if indeg[c] == 0]
    seen = 0
    while queue:
        u = queue.pop()
        seen += 1
        for v in succ[u]:
            layer[v] = max(layer[v], layer[u] + 1)
            indeg[v] -= 1
            if indeg[v] == 0:
                queue.append(v)
    assert seen == ncomp
    return layer, cedges


def _csr(offsets, targets, n):
    """scipy CSR from our CSR arrays, built through COO (duplicates summed, indices sorted)."""
    rows = np.repeat(np.arange(n), np.diff(offsets))
    return sp.coo_array((np.ones(targets.size), (rows, targets)), shape=(n, n)).tocsr()


def dag_reach(ps):
    """Reachability between SCC-vertices through the DAG sketch (junctions included)."""
    N = ps.dag_offsets.size - 1
    A = _csr(ps.dag_offsets, ps.dag_targets, N)
    from scipy.sparse.csgraph import shortest_path
    D = shortest_path(A, unweighted=True)
    return np.isfinite(D)


def check_structure(g, ps, partition_arcs):
    P = ps.num_paths
    S = ps.num_scc
    # storage order and tables
    assert np.all(np.diff(ps.path_scc) >= 0)
    assert ps.scc_path_offsets[0] == 0 and ps.scc_path_offsets[-1] == P
    assert np.all(np.diff(ps.scc_path_offsets) >= 1)
    assert np.array_equal(np.repeat(np.arange(S), np.diff(ps.scc_path_offsets)), ps.path_scc)
    assert np.all(np.diff(ps.scc_layer) >= 0)
    assert np.array_equal(ps.path_layer, ps.scc_layer[ps.path_scc])
    for layer in range(ps.num_layers):
        a, b = ps.layer_scc_offsets[layer], ps.layer_scc_offsets[layer + 1]
        assert b > a and np.all(ps.scc_layer[a:b] == layer)
        assert np.all(np.diff(ps.scc_succ_paths[a:b]) <= 0)   # descending successor paths
    # hot first inside each SCC-vertex
    for s in range(S):
        h = ps.path_hot[ps.scc_path_offsets[s]:ps.scc_path_offsets[s + 1]]
        assert np.all(np.diff(h.astype(int)) <= 0)
    # partitions: cover every path once, contiguous, one layer each, within budget
    po = ps.partition_offsets
    assert po[0] == 0 and po[-1] == P and np.all(np.diff(po) >= 1)
    aoff = ps.path_arc_offsets
    for k in range(ps.num_partitions):
        a, b = po[k], po[k + 1]
        assert len(set(ps.path_layer[a:b].tolist())) == 1
        arcs = aoff[b] - aoff[a]
        assert arcs <= partition_arcs or b - a == 1
    # DAG sketch: acyclic, consistent
    N = ps.dag_offsets.size - 1
    assert N == S + ps.num_junctions
    if N:
        A = _csr(ps.dag_offsets, ps.dag_targets, N)
        nc, _ = connected_components(A, directed=True, connection="strong")
        assert nc == N
        assert np.all(A.diagonal() == 0)
    # every arc of the sketch goes up in layer (junctions: >= into them, > out of them)
    lay = np.concatenate([ps.scc_layer, ps.junction_layer])
    for u in range(N):
        for v in ps.dag_targets[ps.dag_offsets[u]:ps.dag_offsets[u + 1]]:
            if v < S:
                assert lay[v] > lay[u]
            else:
                assert lay[v] >= lay[u]


def check_against_explicit(ps):
    """SCCs, sketch reachability and layers equal those of the literal dependency graph G'."""
    P = ps.num_paths
    if P == 0:
        return
    G = explicit_dependency_graph(ps)
    nc, lab = connected_components(G, directed=True, connection="strong")
    assert nc == ps.num_scc
    pairs = set(zip(lab.tolist(), ps.path_scc.tolist()))
    assert len(pairs) == nc                                  # same partition of the paths
    mapping = dict(pairs)                                    # reference comp -> our SCC id
    ref_layer, cedges = reference_layers(G, lab, nc)
    for c in range(nc):
        assert ps.scc_layer[mapping[c]] == ref_layer[c]
    # every dependency goes from a lower to a strictly higher layer (or stays in one SCC)
    Gc = G.tocoo()
    for p, q in zip(Gc.row, Gc.col):
        if ps.path_scc[p] != ps.path_scc[q]:
            assert ps.path_layer[q] > ps.path_layer[p]
    # the sketch has exactly the reachability of G' between SCC-vertices
    R = dag_reach(ps)[:ps.num_scc, :ps.num_scc]
    ref = np.zeros((nc, nc), bool)
    from scipy.sparse.csgraph import shortest_path
    Cadj = np.zeros((nc, nc))
    for u, v in cedges:
        Cadj[u, v] = 1
    ref = np.isfinite(shortest_path(Cadj, unweighted=True))
    inv = np.empty(nc, np.int64)
    for c, s in mapping.items():
        inv[s] = c
    assert np.array_equal(R, ref[np.ix_(inv, inv)])


def small_graph(draw_arcs, n):
    src = np.array([a for a, _ in draw_arcs], dtype=np.int64)
    dst = np.array([b for _, b in draw_arcs], dtype=np.int64)
    return Graph.from_arrays(src, dst, num_vertices=n)


@st.composite
def multigraphs(draw, max_n=10, max_m=30):
    n = draw(st.integers(1, max_n))
    m = draw(st.integers(0, max_m))
    arcs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), min_size=m, max_size=m))
    return small_graph(arcs, n + draw(st.integers(0, 2)))   # a few isolated vertices at the end


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------------------- properties
@SETTINGS
@given(g=multigraphs(), dmax=st.sampled_from([1, 2, 3, 16]),
       merge=st.sampled_from(["none", "constrained", "trails"]),
       cap=st.sampled_from([1, 2, 5, 16, None]), sub=st.sampled_from([1, 4, 1 << 18]),
       part=st.sampled_from([1, 3, 4096]), hot=st.sampled_from([0.0, 0.3, 1.0]))
def test_random_multigraphs(g, dmax, merge, cap, sub, part, hot):
    ps = preprocess(g, dmax=dmax, merge=merge, max_path_length=cap, subgraph_arcs=sub,
                    partition_arcs=part, hot_ratio=hot, jobs=1)
    check_cover(g, ps)
    lengths = ps.path_lengths
    if ps.num_paths:
        limit = dmax if merge == "none" or cap is None else max(dmax, cap)
        if not (merge != "none" and cap is None):
            assert lengths.max() <= limit
    assert ps.path_hot.sum() == int(np.ceil(hot * ps.num_paths - 1e-9))
    check_structure(g, ps, part)
    check_against_explicit(ps)
    assert ps.info["acyclic"]


@settings(max_examples=25, deadline=None)
@given(g=multigraphs(max_n=30, max_m=120), merge=st.sampled_from(["constrained", "trails"]))
def test_jobs_do_not_change_the_result(g, merge):
    a = preprocess(g, jobs=1, subgraph_arcs=7, merge=merge, partition_arcs=5)
    b = preprocess(g, jobs=2, subgraph_arcs=7, merge=merge, partition_arcs=5)
    for name, arr in a.arrays().items():
        assert np.array_equal(arr, getattr(b, name)), name


@settings(max_examples=60, deadline=None)
@given(g=multigraphs(max_n=40, max_m=120), sub=st.sampled_from([1, 5, 1 << 20]))
def test_tarjan_equals_scipy(g, sub):
    n = g.num_vertices
    ref_n, ref = connected_components(
        sp.coo_array((np.ones(g.num_arcs), (g.arc_sources, g.out_targets)), shape=(n, n)).tocsr(),
        directed=True, connection="strong")
    lab, nc = tarjan_scc(g.out_offsets, g.out_targets)
    assert nc == ref_n and len(set(zip(lab.tolist(), ref.tolist()))) == nc
    from digraph.preprocess._parallel import vertex_ranges
    lab2, nc2, _ = scc_two_phase(g.out_offsets, g.out_targets, vertex_ranges(g.out_offsets, sub), jobs=2)
    assert nc2 == ref_n and len(set(zip(lab2.tolist(), ref.tolist()))) == nc2
    # reverse topological numbering
    s, t = g.arc_sources, g.out_targets
    for L in (lab, lab2):
        cut = L[s] != L[t]
        assert np.all(L[s][cut] > L[t][cut])


@settings(max_examples=40, deadline=None)
@given(heat=st.lists(st.integers(0, 5), max_size=40), ratio=st.floats(0, 1))
def test_hot_labels_rule(heat, ratio):
    heat = np.array(heat, dtype=np.float64)
    hot = hot_labels(heat, ratio)
    assert hot.sum() == int(np.ceil(ratio * heat.size - 1e-9))
    if hot.any() and (~hot).any():
        assert heat[hot].min() >= heat[~hot].max()


# ---------------------------------------------------------------------------- hand-checked cases
def test_hand_checked_cycle_with_tail():
    # 0->1->2->0 and 2->3->4.  Degrees: 2:3, 0:2, 1:2, 3:2, 4:1.  The traversal starts at 2 (highest
    # degree), follows 2->0 (target degree 2, before 2->3 by CSR order), 0->1, 1->2 (visited: path
    # ends), then 2->3->4.  Paths: p0 = 2 0 1 2, p1 = 2 3 4.  p0 writes 2, p1 reads 2: p0 -> p1 only.
    g = Graph.from_arrays([0, 1, 2, 2, 3], [1, 2, 0, 3, 4])
    ps = preprocess(g, merge="none")
    assert sorted(paths_of(ps)) == [[2, 0, 1, 2], [2, 3, 4]]
    assert ps.num_scc == 2 and ps.num_layers == 2
    p0 = paths_of(ps).index([2, 0, 1, 2])
    p1 = 1 - p0
    assert ps.path_layer[p0] == 0 and ps.path_layer[p1] == 1
    assert ps.dag_targets.tolist() == [int(ps.path_scc[p1])]
    assert ps.scc_succ_paths[ps.path_scc[p0]] == 1


def test_hand_checked_depth_bound():
    # chain 0->1->2->3->4 with dmax=2: paths of at most 2 arcs; 1 has degree 2 like 2 and 3, so the
    # traversal starts at 1 (first of the highest degree): 1->2->3 (depth 2 reached), then 3->4, 0->1.
    g = Graph.from_arrays([0, 1, 2, 3], [1, 2, 3, 4])
    ps = preprocess(g, dmax=2, merge="none")
    assert sorted(paths_of(ps)) == [[0, 1], [1, 2, 3], [3, 4]]
    # a chain of dependencies: 0 1 -> 1 2 3 -> 3 4, three layers
    assert ps.num_layers == 3
    ps2 = preprocess(g, dmax=2, merge="trails", max_path_length=None)
    assert paths_of(ps2) == [[0, 1, 2, 3, 4]]
    ps3 = preprocess(g, dmax=2, merge="trails", max_path_length=3)
    assert paths_of(ps3) == [[0, 1, 2, 3], [3, 4]]       # greedy cut at 3 arcs


def test_hand_checked_junction():
    # a1, a2 -> x -> b1, b2 cut into single arcs: four SCC-vertices, every in-path writes x read by
    # every out-path; the sketch keeps one junction instead of the 4 arcs of the product.
    x, a1, a2, b1, b2 = 0, 1, 2, 3, 4
    g = Graph.from_arrays([a1, a2, x, x], [x, x, b1, b2])
    ps = preprocess(g, dmax=1, merge="none")
    assert ps.num_paths == 4 and ps.num_scc == 4
    assert ps.num_junctions == 1 and ps.junction_vertex.tolist() == [x]
    heads = [vs[0] for vs in paths_of(ps)]
    for p, h in enumerate(heads):
        assert ps.path_layer[p] == (1 if h == x else 0)
    check_against_explicit(ps)


def test_constrained_merge_respects_inner_junctions():
    # 3 is a junction (in 2, out 2) and an inner vertex of the decomposed path 0 3 4; 1->3 and 3->2
    # must stay unmerged in the constrained mode, and merge in the trail mode.
    g = Graph.from_arrays([0, 3, 1, 3], [3, 4, 3, 2])
    ps = preprocess(g, merge="constrained", max_path_length=None)
    for vs in paths_of(ps):
        inner = vs[1:-1]
        if 3 in inner:
            # only one path may pass through the junction
            assert sum(3 in v[1:-1] for v in paths_of(ps)) == 1
    t = preprocess(g, merge="trails", max_path_length=None)
    assert t.num_paths == 2


def test_symmetric_graph_trails_are_long():
    # a symmetric cycle 0..9: Euler trails cover it with few paths, constrained merging with many
    n = 10
    s = np.arange(n)
    src = np.concatenate([s, (s + 1) % n])
    dst = np.concatenate([(s + 1) % n, s])
    g = Graph.from_arrays(src, dst)
    t = preprocess(g, merge="trails", max_path_length=None)
    assert t.num_paths <= 2
    check_cover(g, t)


def test_empty_and_arcless_graphs():
    for g in (Graph.from_arrays([], [], num_vertices=0), Graph.from_arrays([], [], num_vertices=5)):
        ps = preprocess(g)
        assert ps.num_paths == 0 and ps.num_scc == 0 and ps.num_partitions == 0
        st_ = ps.stats()
        assert st_["num_paths"] == 0 and st_["mean_length"] == 0.0


def test_stats_keys_and_bound():
    g = Graph.from_arrays([0, 0, 0, 1, 2], [1, 2, 3, 3, 3])
    ps = preprocess(g, merge="trails", max_path_length=None)
    st_ = ps.stats()
    assert st_["path_count_lower_bound"] == 3        # out - in: vertex 0 has +3
    assert st_["num_paths"] >= 3
    assert st_["mean_length"] <= st_["mean_length_upper_bound"] + 1e-12
    for key in ("arc_weighted_mean_length", "hot_share", "num_scc", "giant_scc_path_share",
                "giant_scc_arc_share", "num_layers", "dep_graph_vertex_ratio", "dep_graph_arc_ratio",
                "partition_balance", "time_decompose", "time_merge", "time_scc", "time_total"):
        assert key in st_


@pytest.mark.parametrize("kwargs", [dict(dmax=0), dict(merge="greedy"), dict(hot_ratio=1.5),
                                    dict(partition_arcs=0), dict(max_path_length=-1), dict(jobs=0),
                                    dict(dmax=2.5), dict(hot_ratio="x")])
def test_bad_parameters(kwargs):
    g = Graph.from_arrays([0], [1])
    with pytest.raises(InvalidParameterError):
        preprocess(g, **kwargs)


def test_arc_values_gather_weights():
    g = Graph.from_arrays([0, 1, 2, 0], [1, 2, 0, 2], weight=[1.0, 2.0, 3.0, 4.0])
    ps = preprocess(g)
    ev = ps.arc_values(g)
    aoff = ps.path_arc_offsets
    w = {(0, 1): 1.0, (1, 2): 2.0, (2, 0): 3.0, (0, 2): 4.0}
    for p in range(ps.num_paths):
        vs = ps.path(p)
        assert ev[aoff[p]:aoff[p + 1]].tolist() == [w[(a, b)] for a, b in zip(vs[:-1], vs[1:])]


# ---------------------------------------------------------------------------- real graphs
def _read(name):
    path = DATASETS / name
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    with gzip.open(path, "rb") as f:
        a = np.array(f.read().split(), dtype=np.int64).reshape(-1, 2)
    return a[:, 0], a[:, 1]


@pytest.mark.datasets
@pytest.mark.parametrize("name", ["email-Eu-core.txt.gz", "wiki-Vote.txt.gz", "p2p-Gnutella08.txt.gz"])
def test_real_graphs(name):
    s, d = _read(name)
    g = Graph.from_arrays(s, d)
    for merge in ("constrained", "trails"):
        ps = preprocess(g, merge=merge, subgraph_arcs=4096, jobs=2)
        assert np.array_equal(np.sort(ps.path_arc_ids), np.arange(g.num_arcs))
        src, dst = g.arc_sources, g.out_targets
        aoff = ps.path_arc_offsets
        # consecutive entries are the arcs listed (vectorised)
        start = np.zeros(ps.path_vertices.size, bool)
        start[ps.path_offsets[:-1]] = True
        end = np.zeros(ps.path_vertices.size, bool)
        end[ps.path_offsets[1:] - 1] = True
        assert np.array_equal(ps.path_vertices[~end], src[ps.path_arc_ids])
        assert np.array_equal(ps.path_vertices[~start], dst[ps.path_arc_ids])
        assert aoff[-1] == g.num_arcs
        check_structure(g, ps, 4096)
        st_ = ps.stats()
        assert st_["num_paths"] >= st_["path_count_lower_bound"]
        b = preprocess(g, merge=merge, subgraph_arcs=4096, jobs=1)
        for nm, arr in ps.arrays().items():
            assert np.array_equal(arr, getattr(b, nm)), nm


@pytest.mark.datasets
def test_decompose_alone_on_real_graph():
    s, d = _read("cit-HepPh.txt.gz")
    g = Graph.from_arrays(s, d)
    off, verts, arcs, ranges = decompose(g, dmax=16, jobs=2, subgraph_arcs=1 << 15)
    assert ranges.size > 2
    assert np.array_equal(np.sort(arcs), np.arange(g.num_arcs))
    assert (np.diff(off) - 1).max() <= 16


# ---------------------------------------------------------------------------- fast paths of issue 3
def test_chunked_and_radix_layouts_equal_the_gather_reference():
    """The storage layout (counting sorts or radix sort, 1 or 2 chunks) equals the plain reference:
    storage_order's permutation applied by gathering, on a graph large enough for 2 chunks."""
    from digraph.generators import rmat
    from digraph.preprocess.dag import build_dag
    from digraph.preprocess.merge import merge_paths
    from digraph.preprocess.partition import path_heat, permute_paths, storage_layout, storage_order

    s, d = rmat(15, 8, seed=3)
    g = Graph.from_arrays(s, d, num_vertices=1 << 15)
    n = g.num_vertices
    degree = g.in_degree + g.out_degree
    off, verts, arcs, ranges = decompose(g, dmax=16, jobs=2, subgraph_arcs=1 << 14)
    off, verts, arcs = merge_paths(off, verts, arcs, n, g.in_degree, g.out_degree)
    heat = path_heat(off, verts, degree, 2)
    hot = hot_labels(heat, 0.1)
    dd = build_dag(g, off, verts, ranges, 2)
    nscc = dd["num_scc"]
    pscc = dd["path_scc"]
    assert off.size - 1 >= 2 * 65536            # two chunks at jobs=2
    order, scc_off = storage_order(off, verts, pscc.astype(np.int64), np.int64(nscc), hot, np.int64(n))
    ref_off, ref_verts, ref_arcs = permute_paths(off, verts, arcs, order, 1)
    ref = (ref_off, ref_verts, ref_arcs, heat[order], pscc[order].astype(np.int64), hot[order],
           dd["scc_layer"][pscc[order]], scc_off)
    for method in ("counting", "radix"):
        for jobs in (1, 2):
            got = storage_layout(off, verts, arcs, heat, pscc, nscc, hot, dd["scc_layer"], n, jobs, method=method,
                                 sort_chunks=jobs)
            for a, b in zip(got, ref):
                assert a.dtype == b.dtype and np.array_equal(a, b), (method, jobs)


def test_jobs_do_not_change_a_large_result():
    """--jobs 1 == --jobs 2 where every stage really splits its work (P >= 2 chunks of 65,536)."""
    from digraph.generators import rmat
    s, d = rmat(15, 8, seed=5)
    g = Graph.from_arrays(s, d, num_vertices=1 << 15)
    a = preprocess(g, jobs=1, subgraph_arcs=1 << 14)
    b = preprocess(g, jobs=2, subgraph_arcs=1 << 14)
    for name, x in a.arrays().items():
        y = b.arrays()[name]
        assert x.dtype == y.dtype and np.array_equal(x, y), name


def test_hot_labels_select_equals_partition_rule():
    """The radix select gives numpy's partition rule (k highest, ties by lower index), negatives,
    -0.0 and heavy ties included."""
    rng = np.random.default_rng(7)
    for trial in range(200):
        P = int(rng.integers(1, 400))
        kind = trial % 4
        if kind == 0:
            h = rng.integers(0, 5, P).astype(float)
        elif kind == 1:
            h = rng.normal(size=P) * 1e3
        elif kind == 2:
            h = rng.integers(-3, 3, P) / 7.0
        else:
            h = np.where(rng.random(P) < 0.5, 0.0, -0.0)
        for ratio in (0.0, 0.05, 0.1, 0.5, 0.99, 1.0):
            k = int(np.ceil(ratio * P - 1e-9))
            want = np.zeros(P, bool)
            if k:
                thr = np.sort(h)[::-1][k - 1]
                want |= h > thr
                need = k - int(want.sum())
                want[np.flatnonzero(h == thr)[:need]] = True
            assert np.array_equal(hot_labels(h, ratio), want), (trial, ratio)


def test_workspace_reuses_only_its_own_released_buffers():
    from digraph.preprocess._parallel import Workspace
    ws = Workspace()
    a = ws.empty(1000, np.int64)
    ws.release(a, np.empty(10))          # a foreign array is ignored
    b = ws.empty(900, np.int32)
    assert np.shares_memory(a, b) and ws.fresh_bytes == 8000
    c = ws.empty(1000, np.int64)         # nothing released: fresh
    assert not np.shares_memory(b, c)
