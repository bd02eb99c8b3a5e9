"""digraph.load: every refused input gets a clear error naming the file, line and problem."""

import gzip

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import digraph
from digraph.errors import (GraphFormatError, InvalidParameterError, InvalidWeightError,
                            UnknownFormatError)
from conftest import write


def format_error(path, **kw):
    with pytest.raises(GraphFormatError) as info:
        digraph.load(path, **kw)
    return info.value


# ---------------------------------------------------------------- malformed lines
@pytest.mark.parametrize("bad, line", [
    ("1 x", 5), ("1 2 abc", 5), ("a b", 5), ("1 2x", 5), ("1.5 2", 5), ("1 2 3e", 5),
    ("1 2 --3", 5), ("1 2 1.2.3", 5), ("1 2 infinite", 5), ("1,2", 5),
])
@pytest.mark.parametrize("crlf", [False, True])
@pytest.mark.parametrize("gz", [False, True])
def test_malformed_line_names_file_and_line(tmp_path, bad, line, crlf, gz):
    end = "\r\n" if crlf else "\n"
    text = end.join(["# comment", "0 1 1", "", "1 2 1", bad, "2 3 1"]) + end
    name = "bad.txt" + (".gz" if gz else "")
    err = format_error(write(tmp_path, name, text))
    msg = str(err)
    assert name in msg
    assert f"line {line}" in msg
    assert repr(bad) in msg  # the offending text, quoted
    assert err.line == line and err.path.endswith(name)


def test_comma_in_edgelist_gets_a_hint(tmp_path):
    msg = str(format_error(write(tmp_path, "c.txt", "0,1\n")))
    assert "line 1" in msg and "csv" in msg


def test_header_in_plain_edgelist_is_an_error(tmp_path):
    err = format_error(write(tmp_path, "h.txt", "src dst\n0 1\n"))
    assert err.line == 1 and "'src'" in str(err)


def test_long_line_is_truncated_in_message(tmp_path):
    err = format_error(write(tmp_path, "long.txt", "0 1\n0 " + "9" * 30 + "z" * 500 + "\n"))
    msg = str(err)
    assert err.line == 2 and "..." in msg and len(msg) < 400


@pytest.mark.parametrize("text, line, found", [
    ("0 1\n1\n", 2, "found 1"),
    ("0 1 2 3\n", 1, "found 4"),
    ("# c\n0 1 0.5\n0 1 0.5 7\n", 3, "found 4"),
])
def test_wrong_column_count(tmp_path, text, line, found):
    err = format_error(write(tmp_path, "cols.el", text))
    assert err.line == line and found in str(err) and "cols.el" in str(err)


def test_column_count_must_not_change(tmp_path):
    err = format_error(write(tmp_path, "mix.txt", "% c\n0 1\n1 2\n2 3 0.5\n"))
    msg = str(err)
    assert err.line == 4 and "line 2" in msg and "same number of fields" in msg
    err = format_error(write(tmp_path, "mix2.txt", "0 1 1.0\n1 2\n"))
    assert err.line == 2


def test_empty_csv_field(tmp_path):
    err = format_error(write(tmp_path, "e.csv", "0,1\n1,,2\n"))
    assert err.line == 2 and "empty field" in str(err)


def test_id_outside_int64(tmp_path):
    err = format_error(write(tmp_path, "o.txt", "0 1\n9223372036854775808 1\n"))
    assert err.line == 2 and "int64" in str(err)
    err = format_error(write(tmp_path, "o2.txt", "0 -9223372036854775809\n"))
    assert err.line == 1


@pytest.mark.parametrize("token", ["nan", "NaN", "-nan", "NAN"])
def test_nan_weight(tmp_path, token):
    path = write(tmp_path, "nan.txt", f"# c\n0 1 1.0\n\n1 2 {token}\n")
    with pytest.raises(InvalidWeightError) as info:
        digraph.load(path)
    msg = str(info.value)
    assert "nan.txt" in msg and "line 4" in msg and "NaN" in msg


def test_weighted_true_needs_weights(tmp_path):
    err = format_error(write(tmp_path, "u.txt", "0 1\n"), weighted=True)
    assert "u.txt" in str(err) and "weight" in str(err)


def test_num_vertices_out_of_range_names_line(tmp_path):
    text = "# comment\n0 1\n\n% c\n1 2\n2 7\n"
    err = format_error(write(tmp_path, "r.txt", text), num_vertices=5)
    msg = str(err)
    assert "r.txt" in msg and err.line == 6 and "7" in msg and "num_vertices=5" in msg
    err = format_error(write(tmp_path, "neg.txt", "0 1\n-1 2\n"), num_vertices=5)
    assert err.line == 2
    with pytest.raises(InvalidParameterError):
        digraph.load(write(tmp_path, "ok.txt", "0 1\n"), num_vertices=-1)


# ---------------------------------------------------------------- files and formats
def test_unknown_format(tmp_path):
    path = write(tmp_path, "graph.dat", "0 1\n")
    with pytest.raises(UnknownFormatError) as info:
        digraph.load(path)
    msg = str(info.value)
    assert "graph.dat" in msg and ".txt" in msg and ".mtx" in msg and ".csv" in msg
    with pytest.raises(UnknownFormatError):
        digraph.load(write(tmp_path, "noext", "0 1\n"))
    with pytest.raises(UnknownFormatError):
        digraph.load(write(tmp_path, "a.txt.bz2", "0 1\n"))


def test_bad_format_argument(tmp_path):
    with pytest.raises(InvalidParameterError, match="format"):
        digraph.load(write(tmp_path, "g.txt", "0 1\n"), format="graphml")
    with pytest.raises(InvalidParameterError, match="format"):
        digraph.load(([0], [1]), format="csv")


def test_missing_file(tmp_path):
    path = tmp_path / "nope.txt"
    with pytest.raises(FileNotFoundError, match="nope.txt"):
        digraph.load(path)


def test_truncated_gzip(tmp_path):
    raw = gzip.compress("".join(f"{i} {i + 1}\n" for i in range(2000)).encode())
    path = tmp_path / "cut.txt.gz"
    path.write_bytes(raw[:len(raw) // 2])
    err = format_error(path)
    assert "truncated or corrupt gzip" in str(err) and "cut.txt.gz" in str(err)


def test_corrupt_gzip(tmp_path):
    raw = bytearray(gzip.compress("".join(f"{i} {i + 1}\n" for i in range(2000)).encode()))
    raw[len(raw) // 2] ^= 0xFF
    raw[len(raw) // 2 + 1] ^= 0xFF
    path = tmp_path / "bad.txt.gz"
    path.write_bytes(bytes(raw))
    assert "truncated or corrupt gzip" in str(format_error(path))
    # a .gz name on data that is not gzip at all
    path = write(tmp_path, "plain.txt", "0 1\n").rename(tmp_path / "p.txt.gz")
    assert "gzip" in str(format_error(path))


# ---------------------------------------------------------------- Matrix Market
@pytest.mark.parametrize("banner, words", [
    ("0 1", "not a Matrix Market"),
    ("%%MatrixMarket matrix array real general", "array"),
    ("%%MatrixMarket matrix coordinate complex general", "complex"),
    ("%%MatrixMarket matrix coordinate real hermitian", "hermitian"),
    ("%%MatrixMarket matrix coordinate real skew-symmetric", "skew-symmetric"),
    ("%%MatrixMarket vector coordinate real general", "vector"),
    ("%%MatrixMarket matrix coordinate real", "banner"),
])
def test_mtx_bad_banner(tmp_path, banner, words):
    err = format_error(write(tmp_path, "b.mtx", banner + "\n2 2 1\n1 2 1.0\n"))
    assert "b.mtx" in str(err) and words in str(err) and err.line == 1


def test_mtx_non_square(tmp_path):
    text = "%%MatrixMarket matrix coordinate real general\n% c\n2 3 1\n1 2 1\n"
    err = format_error(write(tmp_path, "ns.mtx", text))
    assert "square" in str(err) and "2 x 3" in str(err) and err.line == 3


@pytest.mark.parametrize("entries, count", [("1 2 1\n", 2), ("1 2 1\n2 1 1\n2 2 1\n", 2)])
def test_mtx_wrong_count(tmp_path, entries, count):
    text = f"%%MatrixMarket matrix coordinate real general\n2 2 {count}\n" + entries
    err = format_error(write(tmp_path, "cnt.mtx", text))
    assert "cnt.mtx" in str(err) and f"announces {count} entries" in str(err)


@pytest.mark.parametrize("entry", ["3 1 1.0", "0 1 1.0", "1 -2 1.0"])
def test_mtx_index_out_of_range(tmp_path, entry):
    text = f"%%MatrixMarket matrix coordinate real general\n%c\n2 2 2\n1 2 1\n{entry}\n"
    err = format_error(write(tmp_path, "oor.mtx", text))
    assert err.line == 5 and "outside 1..2" in str(err) and "oor.mtx" in str(err)


def test_mtx_other_errors(tmp_path):
    head = "%%MatrixMarket matrix coordinate real general\n"
    err = format_error(write(tmp_path, "s.mtx", head + "2 2\n1 2 1\n"))
    assert "size line" in str(err) and err.line == 2
    err = format_error(write(tmp_path, "n.mtx", head + "% only comments\n"))
    assert "size line" in str(err)
    err = format_error(write(tmp_path, "c.mtx", head + "2 2 1\n1 2\n"))  # value missing
    assert err.line == 3 and "expected 3 fields" in str(err)
    pattern = "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2\n"
    err = format_error(write(tmp_path, "p.mtx", pattern), weighted=True)
    assert "pattern" in str(err)
    with pytest.raises(InvalidParameterError, match="num_vertices"):
        digraph.load(write(tmp_path, "ok.mtx", head + "2 2 1\n1 2 1\n"), num_vertices=3)
    with pytest.raises(InvalidWeightError, match="line 3"):
        digraph.load(write(tmp_path, "nan.mtx", head + "2 2 1\n1 2 nan\n"))


# ---------------------------------------------------------------- objects
def test_networkx_bad_weights():
    G = nx.DiGraph()
    G.add_edge("a", "b", weight=float("nan"))
    with pytest.raises(InvalidWeightError, match="'a' -> 'b'"):
        digraph.load(G)
    G = nx.DiGraph()
    G.add_edge(1, 2, weight="heavy")
    with pytest.raises(InvalidWeightError, match="heavy"):
        digraph.load(G)
    with pytest.raises(InvalidParameterError, match="num_vertices"):
        digraph.load(nx.path_graph(3), num_vertices=4)


def test_scipy_and_array_errors():
    with pytest.raises(InvalidParameterError, match="square"):
        digraph.load(sp.csr_array(np.ones((2, 3))))
    with pytest.raises(InvalidParameterError, match="complex"):
        digraph.load(sp.csr_array(np.eye(2, dtype=complex)))
    with pytest.raises(InvalidWeightError):
        digraph.load(sp.csr_array(np.array([[0.0, np.nan], [0.0, 0.0]])))
    with pytest.raises(InvalidParameterError, match="shape"):
        digraph.load(np.zeros((3, 4)))
    with pytest.raises(InvalidParameterError):
        digraph.load(([0, 1], [1]))
    with pytest.raises(InvalidParameterError):
        digraph.load(([0], [1], [1.0], [2.0]))
    with pytest.raises(InvalidParameterError, match="weight"):
        digraph.load(([0], [1]), weighted=True)
    with pytest.raises(InvalidParameterError, match="num_vertices"):
        digraph.load(([0, 5], [1, 2]), num_vertices=3)
    with pytest.raises(InvalidParameterError, match="cannot load"):
        digraph.load(42)
    with pytest.raises(InvalidParameterError, match="cannot load"):
        digraph.load({0: [1]})


def test_declared_sizes_beyond_memory_are_refused_before_allocation(tmp_path):
    # an 85-byte .mtx whose size line claims 10^9 rows got the process killed at 23.4 GB (issue 19)
    import resource
    import subprocess
    import sys

    from digraph.errors import GraphTooLargeError
    f = tmp_path / "huge.mtx"
    f.write_text("%%MatrixMarket matrix coordinate pattern general\n"
                 "1000000000000 1000000000000 1\n1 2\n")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(GraphTooLargeError, match=r"huge.mtx, line 2: the size line declares "
                                                  r"1,000,000,000,000 vertices"):
        digraph.load(f)
    with pytest.raises(GraphTooLargeError, match="num_vertices declares"):
        digraph.load(([0], [1]), num_vertices=10**13)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000  # KiB: nothing big
    p = subprocess.run([sys.executable, "-m", "digraph.cli", "run", "pagerank", str(f)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2
    assert p.stderr.startswith("digraph: error: out of memory: ") and len(p.stderr.splitlines()) == 1
