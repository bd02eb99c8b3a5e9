"""Edge lists of vertex names (docs/input.md, "Vertex ids: integers or names"): the first data
line decides; names are kept as written, numbered in order of first appearance, and the answers
are networkx's on the same graph."""

import random

import networkx as nx
import numpy as np
import pytest

import digraph
from digraph.errors import GraphFormatError, InvalidParameterError, VertexNotFoundError
from digraph.io.edgelist import scan_file, parse_edgelist
from conftest import write


def arcs(g):
    ids = g.vertex_ids
    w = g.arc_weights().tolist()
    return sorted(zip(ids[g.arc_sources].tolist(), ids[g.out_targets].tolist(), w))


NAMES = [("alice", "bob", 2.5), ("bob", "carol", 1.0), ("carol", "alice", 0.5),
         ("dave", "alice", 4.0), ("bob", "dave", 1.5), ("ørjan", "bob", 3.0)]


@pytest.mark.parametrize("name, sep, head", [
    ("g.txt", " ", ""), ("g.el.gz", "\t", "# names\n"), ("g.tsv", "\t", "source\ttarget\tweight\n"),
    ("g.csv", " , ", "src,dst,w\n"), ("g.csv.gz", ",", "")])
def test_names_read_as_written_in_first_appearance_order(tmp_path, name, sep, head):
    text = head + "".join(f"{u}{sep}{v}{sep}{w}\n" for u, v, w in NAMES)
    g = digraph.load(write(tmp_path, name, text))
    assert g.vertex_ids.dtype == object and all(type(v) is str for v in g.vertex_ids)
    assert g.vertex_ids.tolist() == ["alice", "bob", "carol", "dave", "ørjan"]
    assert arcs(g) == sorted(NAMES)
    ref = nx.DiGraph()
    ref.add_weighted_edges_from(NAMES)
    assert list(ref) == g.vertex_ids.tolist()  # networkx numbers the nodes the same way
    pr = digraph.run(g, "pagerank", tol=1e-12).to_dict()
    want = nx.pagerank(ref, tol=1e-14, max_iter=10_000)
    assert pr.keys() == want.keys() and sum(abs(pr[k] - want[k]) for k in want) < 1e-9
    d = digraph.run(g, "sssp", source="dave").to_dict()
    want = nx.single_source_dijkstra_path_length(ref, "dave")
    assert d == {k: float(want.get(k, float("inf"))) for k in ref}
    r = digraph.run(g, "adsorption", seeds=["alice", "ørjan"], tol=1e-10)
    assert r["alice"] > 0 and {v for v, _ in r.top(2)} <= set(g.vertex_ids.tolist())


def test_text_is_compared_as_written(tmp_path):
    g = digraph.load(write(tmp_path, "t.txt", "X 1\n1 01\n01 +1\n+1 x\n"))
    assert g.vertex_ids.tolist() == ["X", "1", "01", "+1", "x"]  # five vertices, no folding
    assert g.index_of("01") == 2 and g.index_of("+1") == 3
    with pytest.raises(VertexNotFoundError, match=r"vertex ids are names, str: '1' is one"):
        g.index_of(1)
    assert digraph.run(g, "sssp", source="1").to_dict() == {"X": float("inf"), "1": 0.0,
                                                            "01": 1.0, "+1": 2.0, "x": 3.0}


def test_integer_files_keep_integer_ids(tmp_path):
    g = digraph.load(write(tmp_path, "i.txt", "# c\n10 -3\n-3 007\n"))
    assert g.vertex_ids.dtype == np.int64 and g.vertex_ids.tolist() == [-3, 7, 10]
    with pytest.raises(VertexNotFoundError, match=r"vertex ids are integers: 7 is one"):
        g.index_of("7")


def test_a_name_after_integer_lines_is_an_error_naming_the_rule(tmp_path):
    late = write(tmp_path, "late.txt", "0 1\n1 2\nx 3\n")
    err = pytest.raises(GraphFormatError, digraph.load, late)
    assert err.value.line == 3 and "'x' is not an integer vertex id" in str(err.value)
    assert "first data line, line 1, has integer ids" in str(err.value)


@pytest.mark.parametrize("name, text, col", [
    ("h.txt", "src dst\n0 1\n1 2\n", "'src'"),
    ("h.csv", "src,1\n0,1\n1,2\n", "'src'"),
    ("typo.tsv", "0\t1x\n1\t2\n", "'1x'"),
])
def test_a_lone_first_line_of_names_is_refused(tmp_path, name, text, col):
    err = pytest.raises(GraphFormatError, digraph.load, write(tmp_path, name, text)).value
    assert err.line == 1 and f"{col} is not an integer vertex id" in str(err)
    assert "every other line has integer ids" in str(err)


def test_names_on_two_lines_or_one_line_only_are_a_file_of_names(tmp_path):
    assert digraph.load(write(tmp_path, "a.txt", "a b\n0 1\nc 1\n")).num_vertices == 5
    assert digraph.load(write(tmp_path, "b.txt", "a b\n")).vertex_ids.tolist() == ["a", "b"]


@pytest.mark.parametrize("text, line, words", [
    (b"a b\nb \xe9t\xe9\n", 2, "is not UTF-8 text"),
    (b"a b\nc\x0bd b\n", 2, "holds a control character"),
    (b"a b\nb \xc2\x85\n", 2, "holds a control character"),  # U+0085, a C1 control
    (b"a b\nb c 1 2\n", 2, "expected 2 (src dst) or 3"),
    (b"a b 1\nb c\n", 2, "every line must have the same number of fields"),
    (b"a b 1\nb c 2x\n", 2, "'2x' is not a number (the weight)"),
    (b"a b 1\nb c nan\n", 2, "NaN"),
])
def test_bad_lines_of_a_file_of_names_are_named(tmp_path, text, line, words):
    with pytest.raises((GraphFormatError, ValueError)) as info:
        digraph.load(write(tmp_path, "bad.txt", text))
    assert f"bad.txt, line {line}: " in str(info.value) and words in str(info.value)


def test_csv_names_hold_spaces_not_commas(tmp_path):
    g = digraph.load(write(tmp_path, "c.csv", "from,to\nNew York , Boston\nBoston,New York\n"))
    assert g.vertex_ids.tolist() == ["New York", "Boston"] and g.num_arcs == 2
    # a first line of names only is a csv header (docs/input.md): give a csv of names a header
    assert digraph.load(write(tmp_path, "d.csv", "Paris,Rome\nRome,Oslo\n")).num_arcs == 1
    empty = write(tmp_path, "e.csv", "a,b\nb,,c\n")
    err = pytest.raises(GraphFormatError, digraph.load, empty).value
    assert err.line == 2 and "an empty field" in str(err)


def test_names_need_no_num_vertices(tmp_path):
    err = pytest.raises(GraphFormatError, digraph.load, write(tmp_path, "n.txt", "a b\n"),
                        num_vertices=3).value
    assert "'a' is not an integer vertex id" in str(err)
    assert "num_vertices=3 needs integer ids" in str(err)


def test_names_across_blocks_equal_one_pass(tmp_path):
    """Blocks of a few bytes (names, comments and the deciding line split over many blocks) give
    what one block gives, which is what a plain Python reading of the rules gives."""
    rng = random.Random(5)
    pool = ["a", "b", "Ünïcode", "x_1", "00", "0", "𝔊", "long-name-" * 5]
    pool += [str(i) for i in range(20)]
    lines = ["# a comment", "   ", f"{rng.choice(pool)}q {rng.choice(pool)} 1.5"]
    lines += [f"{rng.choice(pool)} {rng.choice(pool)} {rng.randint(0, 9)}" for _ in range(300)]
    path = write(tmp_path, "blocks.txt", "\n".join(lines) + "\n")
    one = scan_file(path, "edgelist", None, None)
    for chunk in (7, 64, 1000):
        got = scan_file(path, "edgelist", None, None, chunk_bytes=chunk)
        assert got[3].tolist() == one[3].tolist()
        for a, b in zip(got[:3], one[:3]):
            assert np.array_equal(a, b)
    data = [ln.split() for ln in lines[2:]]
    order = list(dict.fromkeys(t for u, v, _ in data for t in (u, v)))
    assert one[3].tolist() == order
    assert [order[i] for i in one[0]] == [u for u, _, _ in data]
    assert [order[i] for i in one[1]] == [v for _, v, _ in data]
    src, dst, w = parse_edgelist(path.read_bytes())
    assert src.tolist() == [u for u, _, _ in data] and w.tolist() == [float(x) for *_, x in data]


def test_many_names_intern_exactly():
    """Tens of thousands of names, with many that share prefixes, lengths and hash slots."""
    rng = np.random.default_rng(3)
    names = [f"v{k:06d}" for k in range(20000)] + [f"{k}" for k in range(20000)]
    u = rng.integers(0, len(names), 60000)
    v = rng.integers(0, len(names), 60000)
    text = "".join(f"{names[a]} {names[b]}\n" for a, b in zip(u, v)).encode()
    src, dst, _ = parse_edgelist(b"z0 z1\n" + text)
    assert src[1:].tolist() == [names[a] for a in u] and dst[1:].tolist() == [names[b] for b in v]


def test_arrays_of_names(tmp_path):
    g = digraph.load((["b", "a", "c"], np.array(["a", "c", "b"]), [1.0, 2.0, 3.0]))
    assert g.vertex_ids.tolist() == ["b", "a", "c"]
    assert arcs(g) == [("a", "c", 2.0), ("b", "a", 1.0), ("c", "b", 3.0)]
    with pytest.raises(InvalidParameterError, match="both hold vertex names"):
        digraph.load((["a", "b"], [1, 2]))
    with pytest.raises(InvalidParameterError, match="num_vertices= needs integer vertex ids"):
        digraph.load((["a"], ["b"]), num_vertices=2)


@pytest.mark.parametrize("name, text, header, want", [
    ("g.csv", "alice,bob\nbob,carol\n", None, [("bob", "carol")]),  # the rule: a header
    ("g.csv", "alice,bob\nbob,carol\n", False, [("alice", "bob"), ("bob", "carol")]),
    ("g.tsv", "# c\nsrc\tdst\n1\t2\n", False, None),  # no header: a lone line of names, refused
    ("g.txt", "from to\n1 2\n2 3\n", True, [(1, 2), (2, 3)]),
    ("g.csv", "1,2\n2,3\n", True, [(2, 3)]),  # skipped whatever it holds
])
def test_header_switch(tmp_path, name, text, header, want):
    path = write(tmp_path, name, text)
    if want is None:
        with pytest.raises(GraphFormatError, match="line 2: .*a typo, or a header"):
            digraph.load(path, header=header)
        return
    g = digraph.load(path, header=header)
    got = sorted(zip(g.vertex_ids[g.arc_sources].tolist(), g.vertex_ids[g.out_targets].tolist()))
    assert got == want


def test_header_switch_errors(tmp_path):
    mtx = write(tmp_path, "g.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2\n")
    with pytest.raises(InvalidParameterError, match="Matrix Market"):
        digraph.load(mtx, header=True)
    with pytest.raises(InvalidParameterError, match="header must be True, False or None"):
        digraph.load(write(tmp_path, "g.csv", "1,2\n"), header="yes")
    with pytest.raises(InvalidParameterError, match="files only"):
        digraph.load(([0], [1]), header=False)
