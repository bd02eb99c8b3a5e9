"""digraph.load: every input kind read correctly (errors are in test_load_errors.py)."""

import gzip
import tempfile
from collections import Counter
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import digraph
from digraph.io.edgelist import parse_edgelist
from conftest import dataset_path, write


# ---------------------------------------------------------------- helpers

def triples(g):
    """Multiset of (source id, target id, weight) of a Graph, in the caller's ids."""
    ids = g.vertex_ids
    s = ids[g.arc_sources].tolist()
    t = ids[g.out_targets].tolist()
    w = g.arc_weights().tolist()
    return Counter(zip(s, t, w))


def expected(arcs):
    return Counter((u, v, float(w)) for u, v, w in arcs)


# a self-loop and parallel arcs
ARCS = [(0, 1, 1.5), (1, 2, 2.0), (2, 0, 0.25), (2, 2, 3.0), (0, 1, 4.0)]


# ---------------------------------------------------------------- text edge lists
@pytest.mark.parametrize("ext", [".el", ".txt", ".edges", ".tsv", ".csv"])
@pytest.mark.parametrize("gz", [False, True])
def test_every_edgelist_extension(tmp_path, ext, gz):
    sep = "," if ext == ".csv" else " "
    text = "".join(f"{u}{sep}{v}{sep}{w!r}\n" for u, v, w in ARCS)
    path = write(tmp_path, "g" + ext + (".gz" if gz else ""), text)
    g = digraph.load(path)
    assert g.num_vertices == 3 and g.num_arcs == 5
    assert g.weighted and g.directed
    assert g.name == "g"
    assert triples(g) == expected(ARCS)
    assert triples(digraph.load(str(path))) == expected(ARCS)  # str path too


def test_unweighted_two_columns(tmp_path):
    g = digraph.load(write(tmp_path, "a.txt", "0 1\n1 2\n2 0\n"))
    assert not g.weighted and g.weights is None
    assert g.num_arcs == 3
    assert sorted(zip(g.arc_sources.tolist(), g.out_targets.tolist())) == [(0, 1), (1, 2), (2, 0)]


def test_comments_blank_lines_tabs_crlf(tmp_path):
    text = ("# a comment\r\n"
            "% another comment\r\n"
            "   # indented comment\r\n"
            "\t% indented with a tab\r\n"
            "\r\n"
            "   \t \r\n"
            "0\t1\t\t2.5\r\n"
            "  1    2  \t 0.5  \r\n"
            "2 \t0 1e-3\r\n"
            "\n"
            "3 0 7")  # no final newline
    g = digraph.load(write(tmp_path, "c.el", text))
    assert triples(g) == expected([(0, 1, 2.5), (1, 2, 0.5), (2, 0, 1e-3), (3, 0, 7.0)])


def test_csv_header_and_spaces(tmp_path):
    text = "# exported\nsource,target,weight\n0, 1 ,0.5\n1,2,1.5\r\n"
    g = digraph.load(write(tmp_path, "h.csv", text))
    assert triples(g) == expected([(0, 1, 0.5), (1, 2, 1.5)])


def test_tsv_header(tmp_path):
    g = digraph.load(write(tmp_path, "h.tsv", "from\tto\n5\t6\n6\t7\n"))
    assert triples(g) == expected([(5, 6, 1.0), (6, 7, 1.0)])
    # a first line of numbers is data, not a header
    g = digraph.load(write(tmp_path, "n.tsv", "5\t6\n6\t7\n"))
    assert g.num_arcs == 2


def test_utf8_bom(tmp_path):
    g = digraph.load(write(tmp_path, "bom.csv", "\ufeffsrc,dst\n0,1\n"))
    assert g.num_arcs == 1
    g = digraph.load(write(tmp_path, "bom.txt", "\ufeff0 1\n"))
    assert g.num_arcs == 1


def test_csv_without_header(tmp_path):
    g = digraph.load(write(tmp_path, "n.csv.gz", "1,2\n2,3\n"))
    assert g.num_arcs == 2 and list(g.vertex_ids) == [1, 2, 3]


@pytest.mark.parametrize("token", [
    "1e-300", "2.5E+10", "0.1", "-0.1", "+.5", "5.", "-0", "0.0", "00012.5000", "1e22", "1e23",
    "123456789012345678901234", "1.7976931348623157e308", "4.9e-324", "2.2250738585072014e-308",
    "3.141592653589793238462643383279", "0.30000000000000004", "9007199254740993",
    "1e400", "-1e400", "1e-400", "123.456e-5", "7E2", "0.000000000000000000000000000012345",
    "inf", "-Infinity", "INF", "+inf", "1.000000000000000000000000001",
])
def test_weights_parse_exactly_like_float(tmp_path, token):
    g = digraph.load(write(tmp_path, "w.txt", f"0 1 {token}\n"))
    got = g.weights[0]
    want = float(token)
    assert got == want and np.signbit(got) == np.signbit(want)


def test_weights_many_values_exact(tmp_path):
    rng = np.random.default_rng(7)
    vals = np.concatenate([rng.standard_normal(300) * 10.0 ** rng.integers(-30, 30, 300),
                           rng.random(200), rng.integers(-10**6, 10**6, 100).astype(float)])
    tokens = ([repr(float(x)) for x in vals] + [f"{x:.6e}" for x in vals]
              + [f"{x:.3f}" for x in vals])
    text = "".join(f"0 1 {t}\n" for t in tokens)
    src, dst, w = parse_edgelist(text.encode())
    assert w.tolist() == [float(t) for t in tokens]


def test_negative_and_huge_ids_renumbered(tmp_path):
    big = 2**63 - 1
    small = -(2**63)
    arcs = [(big, -5, 1.0), (-5, big, 2.0), (small, small, 0.5), (12345678901234, -5, 3.0),
            (big, -5, 1.0), (0, small, -2.0)]
    text = "".join(f"{u} {v} {w}\n" for u, v, w in arcs)
    g = digraph.load(write(tmp_path, "big.txt", text))
    assert g.vertex_ids.dtype == np.int64
    assert g.vertex_ids.tolist() == sorted({small, -5, 0, 12345678901234, big})
    assert g.num_arcs == len(arcs)
    assert triples(g) == expected(arcs)
    assert g.index_of(big) == 4 and g.index_of(small) == 0


def test_plus_sign_ids(tmp_path):
    g = digraph.load(write(tmp_path, "p.txt", "+1 +2\n"))
    assert g.vertex_ids.tolist() == [1, 2]


def test_num_vertices_keeps_isolated(tmp_path):
    g = digraph.load(write(tmp_path, "iso.txt", "1 3\n3 1\n"), num_vertices=6)
    assert g.num_vertices == 6
    assert g.vertex_ids.tolist() == list(range(6))
    assert g.out_degree.tolist() == [0, 1, 0, 1, 0, 0]
    assert triples(g) == expected([(1, 3, 1), (3, 1, 1)])


def test_format_override_and_name(tmp_path):
    path = write(tmp_path, "graph.dat", "0 1\n1 2\n")
    g = digraph.load(path, format="edgelist", name="mine")
    assert g.num_arcs == 2 and g.name == "mine"
    g = digraph.load(write(tmp_path, "x.data", "0,1\n"), format="CSV")
    assert g.num_arcs == 1
    assert digraph.load(write(tmp_path, "cnr-2000.txt.gz", "0 1\n")).name == "cnr-2000"
    assert digraph.load(write(tmp_path, "a.b.el", "0 1\n")).name == "a.b"


def test_gzip_detected_by_magic(tmp_path):
    path = tmp_path / "plain.txt"
    path.write_bytes(gzip.compress(b"0 1\n1 2\n"))
    assert digraph.load(path).num_arcs == 2


def test_multi_member_gzip(tmp_path):
    path = tmp_path / "mm.txt.gz"
    path.write_bytes(gzip.compress(b"0 1\n1 2\n") + gzip.compress(b"2 3\n"))
    assert digraph.load(path).num_arcs == 3


def test_directed_flag_and_weighted_flag(tmp_path):
    path = write(tmp_path, "w.txt", "0 1 2.0\n1 0 2.0\n")
    g = digraph.load(path, directed=False)
    assert not g.directed
    g = digraph.load(path, weighted=False)
    assert not g.weighted and g.num_arcs == 2
    assert digraph.load(path, weighted=True).weighted
    # with weighted=False the third column is not stored, so a NaN there does not matter
    assert digraph.load(write(tmp_path, "n.txt", "0 1 nan\n"), weighted=False).num_arcs == 1


@pytest.mark.parametrize("text", ["", "# only a comment\n% and another\n", "\n\n  \n", "\r\n"])
def test_empty_file(tmp_path, text):
    g = digraph.load(write(tmp_path, "e.txt", text))
    assert g.num_vertices == 0 and g.num_arcs == 0
    g = digraph.load(write(tmp_path, "e.txt", text), num_vertices=4)
    assert g.num_vertices == 4 and g.num_arcs == 0


def test_empty_gz_and_csv(tmp_path):
    assert digraph.load(write(tmp_path, "e.txt.gz", "")).num_vertices == 0
    assert digraph.load(write(tmp_path, "e.csv", "src,dst\n")).num_arcs == 0


# ---------------------------------------------------------------- Matrix Market
def test_mtx_general_real(tmp_path):
    text = ("%%MatrixMarket matrix coordinate real general\n"
            "% a comment\n"
            "%\n"
            "5 5 4\n"
            "1 2 0.5\n"
            "2 3 -1e2\n"
            "3 3 0\n"
            "2 3 7\n")
    g = digraph.load(write(tmp_path, "m.mtx", text))
    assert g.num_vertices == 5 and g.directed and g.weighted and g.name == "m"
    assert triples(g) == expected([(0, 1, 0.5), (1, 2, -100.0), (2, 2, 0.0), (1, 2, 7.0)])


def test_mtx_integer_gz_and_pattern(tmp_path):
    text = "%%MatrixMarket matrix coordinate integer general\n3 3 2\n1 2 4\n3 1 -2\n"
    g = digraph.load(write(tmp_path, "i.mtx.gz", text))
    assert triples(g) == expected([(0, 1, 4.0), (2, 0, -2.0)])
    assert not digraph.load(write(tmp_path, "i2.mtx", text), weighted=False).weighted
    text = "%%MatrixMarket matrix coordinate pattern general\n4 4 2\n1 2\n3 1\n"
    g = digraph.load(write(tmp_path, "p.mtx", text))
    assert not g.weighted and g.num_vertices == 4
    assert triples(g) == expected([(0, 1, 1.0), (2, 0, 1.0)])


def test_mtx_symmetric(tmp_path):
    text = ("%%MatrixMarket matrix coordinate real symmetric\n"
            "3 3 3\n"
            "2 1 1.5\n"
            "3 3 2.0\n"
            "3 1 0.5\n")
    g = digraph.load(write(tmp_path, "s.mtx", text))
    assert not g.directed
    assert triples(g) == expected([(1, 0, 1.5), (0, 1, 1.5), (2, 2, 2.0), (2, 0, 0.5), (0, 2, 0.5)])


def test_mtx_case_insensitive_banner_and_format_override(tmp_path):
    text = "%%matrixmarket MATRIX Coordinate Pattern Symmetric\n2 2 1\n2 1\n"
    g = digraph.load(write(tmp_path, "s.txt", text), format="mtx")
    assert triples(g) == expected([(1, 0, 1.0), (0, 1, 1.0)])


def test_mtx_empty_matrix(tmp_path):
    text = "%%MatrixMarket matrix coordinate real general\n3 3 0\n"
    g = digraph.load(write(tmp_path, "z.mtx", text))
    assert g.num_vertices == 3 and g.num_arcs == 0
    assert digraph.load(write(tmp_path, "e.mtx", "")).num_vertices == 0


# ---------------------------------------------------------------- networkx
def test_networkx_digraph_weights_and_isolated():
    G = nx.DiGraph(name="toy")
    G.add_node(9)
    G.add_edge(5, 1, weight=2.5)
    G.add_edge(1, 3)  # missing attribute -> 1.0
    G.add_edge(3, 5, weight=0.5)
    g = digraph.load(G)
    assert g.num_vertices == 4 and g.name == "toy" and g.directed
    assert g.vertex_ids.dtype == np.int64
    assert g.vertex_ids.tolist() == list(G)  # G's node order
    assert triples(g) == expected([(5, 1, 2.5), (1, 3, 1.0), (3, 5, 0.5)])
    assert g.index_of(9) == 0 and g.index_of([5, 3]).tolist() == [1, 3]


def test_networkx_unweighted_graph_is_unweighted():
    G = nx.path_graph(4, create_using=nx.DiGraph)
    assert not digraph.load(G).weighted
    assert digraph.load(G, weighted=True).arc_weights().tolist() == [1.0, 1.0, 1.0]
    G[0][1]["weight"] = 3.0
    assert digraph.load(G).weighted
    assert not digraph.load(G, weight=None).weighted
    assert not digraph.load(G, weighted=False).weighted


def test_networkx_multidigraph_parallel_arcs():
    G = nx.MultiDiGraph()
    G.add_edge("a", "b", w=1.0)
    G.add_edge("a", "b", w=2.0)
    G.add_edge("a", "b")
    G.add_edge("b", "b", w=4.0)
    g = digraph.load(G, weight="w")
    assert g.vertex_ids.dtype == object and g.vertex_ids.tolist() == ["a", "b"]
    assert triples(g) == expected([("a", "b", 1.0), ("a", "b", 2.0), ("a", "b", 1.0),
                                   ("b", "b", 4.0)])
    assert g.index_of("b") == 1


def test_networkx_undirected_with_self_loop():
    G = nx.Graph()
    G.add_edge("x", "y", cost=2.0)
    G.add_edge("y", "y", cost=5.0)
    G.add_node("lonely")
    g = digraph.load(G, weight="cost")
    assert not g.directed and g.num_vertices == 3
    assert triples(g) == expected([("x", "y", 2.0), ("y", "x", 2.0), ("y", "y", 5.0)])


def test_networkx_multigraph_undirected():
    G = nx.MultiGraph()
    G.add_edges_from([(0, 1), (0, 1), (2, 2)])
    g = digraph.load(G)
    assert not g.directed
    assert triples(g) == expected([(0, 1, 1), (1, 0, 1), (0, 1, 1), (1, 0, 1), (2, 2, 1)])


def test_networkx_mixed_and_tuple_nodes():
    G = nx.DiGraph()
    G.add_edge((0, 1), "s")
    G.add_edge("s", 3)
    g = digraph.load(G)
    assert g.vertex_ids.dtype == object
    assert g.vertex_ids.tolist() == [(0, 1), "s", 3]
    assert triples(g) == expected([((0, 1), "s", 1.0), ("s", 3, 1.0)])


def test_networkx_empty():
    g = digraph.load(nx.DiGraph())
    assert g.num_vertices == 0 and g.num_arcs == 0


# ---------------------------------------------------------------- numpy and scipy
def test_arrays_inputs():
    src, dst, w = [3, 1, 3], [1, 7, 3], [0.5, 1.5, 2.5]
    arcs = list(zip(src, dst, w))
    assert triples(digraph.load((np.array(src), np.array(dst), np.array(w)))) == expected(arcs)
    assert triples(digraph.load([src, dst, w])) == expected(arcs)
    g = digraph.load((src, dst))
    assert not g.weighted and g.vertex_ids.tolist() == [1, 3, 7]
    m = np.array([src, dst, w]).T  # (m, 3) float array
    assert triples(digraph.load(m)) == expected(arcs)
    m2 = np.array([src, dst]).T
    assert triples(digraph.load(m2)) == expected([(u, v, 1.0) for u, v in zip(src, dst)])
    g = digraph.load(m, weighted=False, num_vertices=10, directed=False, name="arr")
    assert g.num_vertices == 10 and not g.weighted and not g.directed and g.name == "arr"


def test_scipy_inputs():
    A = sp.csr_array(np.array([[0, 2.0, 0], [0, 0, 3.0], [1.0, 0, 0]]))
    g = digraph.load(A)
    assert g.num_vertices == 3 and g.weighted
    assert triples(g) == expected([(0, 1, 2.0), (1, 2, 3.0), (2, 0, 1.0)])
    # explicit zeros are arcs of weight 0, isolated rows stay vertices
    B = sp.csr_matrix((np.array([0.0, 5.0]), np.array([1, 2]), np.array([0, 2, 2, 2, 2])),
                      shape=(4, 4))
    g = digraph.load(B)
    assert g.num_vertices == 4
    assert triples(g) == expected([(0, 1, 0.0), (0, 2, 5.0)])
    # COO duplicates are parallel arcs
    C = sp.coo_array((np.array([1.0, 2.0]), (np.array([0, 0]), np.array([1, 1]))), shape=(2, 2))
    assert triples(digraph.load(C)) == expected([(0, 1, 1.0), (0, 1, 2.0)])
    assert not digraph.load(A, weighted=False).weighted
    assert not digraph.load(sp.csr_array(np.eye(2, dtype=bool))).weighted


def test_graph_returned_as_is():
    g = digraph.load(([0], [1]))
    assert digraph.load(g) is g


# ---------------------------------------------------------------- property test
ids = st.integers(min_value=-(2**63), max_value=2**63 - 1)
weights = st.floats(allow_nan=False, allow_infinity=True)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(arcs=st.lists(st.tuples(ids, ids, weights), max_size=40),
       seps=st.lists(st.sampled_from([" ", "\t", "  ", " \t "]), min_size=1, max_size=4),
       crlf=st.booleans(), style=st.sampled_from(["repr", "e", "g"]), weighted=st.booleans())
def test_property_text_roundtrip(arcs, seps, crlf, style, weighted):
    end = "\r\n" if crlf else "\n"
    fmt = {"repr": repr, "e": lambda x: f"{x:.17e}", "g": lambda x: f"{x:.17g}"}[style]
    lines = []
    for k, (u, v, w) in enumerate(arcs):
        s = seps[k % len(seps)]
        lines.append(f"{u}{s}{v}{s}{fmt(w)}" if weighted else f"{u}{s}{v}")
        if k % 7 == 3:
            lines.append("# comment")
    text = "# header comment" + end + end.join(lines) + end
    src, dst, w = parse_edgelist(text.encode())
    assert src.tolist() == [a[0] for a in arcs]
    assert dst.tolist() == [a[1] for a in arcs]
    if weighted and arcs:
        assert w.tolist() == [float(fmt(a[2])) for a in arcs]
    else:
        assert w is None
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "p.txt.gz"
        path.write_bytes(gzip.compress(text.encode()))
        g = digraph.load(path)
        want = Counter((u, v, float(fmt(x)) if weighted else 1.0) for u, v, x in arcs)
        assert triples(g) == want
        assert g.vertex_ids.tolist() == sorted({a[0] for a in arcs} | {a[1] for a in arcs})


# ---------------------------------------------------------------- the shared datasets
@pytest.mark.datasets
def test_dataset_cnr_2000():
    g = digraph.load(dataset_path("cnr-2000.txt.gz"))
    assert g.num_vertices == 325_557 and g.num_arcs == 3_216_152
    assert g.name == "cnr-2000" and not g.weighted
    assert int(np.count_nonzero(g.arc_sources == g.out_targets)) == 87_442
    assert int(np.count_nonzero(g.out_degree == 0)) == 78_056


@pytest.mark.datasets
def test_dataset_dblp_2010_keeps_isolated_ids():
    path = dataset_path("dblp-2010.txt.gz")
    g = digraph.load(path, num_vertices=326_186, directed=False)
    assert g.num_vertices == 326_186 and g.num_arcs == 1_615_400 and not g.directed
    assert int(np.count_nonzero(g.out_degree + g.in_degree == 0)) == 25_539
    assert digraph.load(path).num_vertices == 326_186 - 25_539


@pytest.mark.datasets
def test_dataset_cit_hepph_one_based():
    g = digraph.load(dataset_path("cit-HepPh.txt.gz"))
    assert g.num_vertices == 34_546 and g.num_arcs == 421_578
    assert g.vertex_ids[0] == 1 and g.vertex_ids[-1] == 34_546


@pytest.mark.datasets
@pytest.mark.parametrize("name", ["email-Eu-core", "p2p-Gnutella08"])
def test_dataset_matches_networkx(name):
    path = dataset_path(f"{name}.txt.gz")
    G = nx.read_edgelist(path, create_using=nx.MultiDiGraph, nodetype=int)
    g = digraph.load(path)
    assert g.num_vertices == G.number_of_nodes()
    assert set(g.vertex_ids.tolist()) == set(G)
    assert triples(g) == Counter((u, v, 1.0) for u, v in G.edges())


def test_to_scipy_leaves_the_graph_intact():
    """sum_duplicates() must not rewrite the graph's own CSR arrays (parallel arcs)."""
    g = digraph.load((np.array([0, 0, 1, 2, 2]), np.array([1, 1, 2, 0, 0])))
    off, tgt = g.out_offsets.copy(), g.out_targets.copy()
    a = g.to_scipy()
    assert a.nnz == 3 and a[0, 1] == 2.0
    np.testing.assert_array_equal(g.out_offsets, off)
    np.testing.assert_array_equal(g.out_targets, tgt)


@pytest.mark.parametrize("n, m", [(1, 0), (7, 0), (3, 10), (100, 1000), (1000, 20000)])
def test_small_graphs_are_ordered_by_numpy_as_by_the_kernel(n, m):
    """Below ``NUMPY_ARCS`` arcs the CSR/CSC order is numpy's (nothing to compile on a first
    load): the same permutation, offsets and in-arc lists as the counting-sort kernel."""
    from digraph.graph import _csr_order, _csr_order_numpy
    rng = np.random.default_rng(n + m)
    for itype in (np.int32, np.int64):
        s = rng.integers(0, n, m).astype(itype)
        d = rng.integers(0, n, m).astype(itype)
        for a, b in zip(_csr_order(s, d, n), _csr_order_numpy(s, d, n)):
            assert a.dtype == b.dtype and np.array_equal(a, b)
