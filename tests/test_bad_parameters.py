"""Parameters at their extremes and of the wrong type: a right answer or a named error, never a
silent wrong answer or a traceback (API and command line), and nothing of the user's overwritten."""

import json
import os
import subprocess
import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

import digraph
from digraph.cli import main
from digraph.errors import InvalidParameterError, VertexNotFoundError

ROOT = Path(__file__).resolve().parents[1]

# 0 -> 1 -> 2 -> 0, 2 -> 1, 3 -> 0, 1 -> 4; vertex 4 is dangling, vertex 3 unreachable
ARCS = [(0, 1), (1, 2), (2, 0), (2, 1), (3, 0), (1, 4)]
LINEAR_MODES = ["scc", "bsp", "vertex-async", "power", "path"]


@pytest.fixture(scope="module")
def g():
    src, dst = zip(*ARCS)
    return digraph.load((np.array(src), np.array(dst)))


@pytest.fixture(scope="module")
def nxg():
    G = nx.DiGraph()
    G.add_nodes_from(range(5))
    G.add_edges_from(ARCS)
    return G


@pytest.fixture(scope="module")
def empty():
    return digraph.load((np.zeros(0, np.int64), np.zeros(0, np.int64)))


# ----------------------------------------------------------------------------- personalization

EXTREME = [
    {0: 1e308, 1: 1e308},  # the sum overflows to inf
    {0: 5e-324, 1: 5e-324},  # subnormal: the sum's reciprocal overflows
    {0: 1e308, 2: 5e307, 4: 1e308},  # overflowing sum, unequal ratios
    {0: 5e-324, 3: 1e-323},  # subnormal, ratio 1:2
]


def _scaled(p):
    """The same ratios as ordinary numbers (networkx's own sum overflows on the first case)."""
    top = max(p.values())
    return {k: v / top for k, v in p.items()}


@pytest.mark.parametrize("mode", LINEAR_MODES)
@pytest.mark.parametrize("pers", EXTREME, ids=["overflow", "subnormal", "overflow-ratios",
                                               "subnormal-ratio"])
def test_extreme_personalization_equals_networkx(g, nxg, mode, pers):
    r = digraph.run(g, "pagerank", personalization=pers, mode=mode, tol=1e-10)
    ref = nx.pagerank(nxg, personalization=_scaled(pers), tol=1e-14, max_iter=10_000)
    want = np.array([ref[v] for v in r.vertex_ids.tolist()])
    assert r.stats["converged"] and np.isfinite(r.stats["error_bound"])
    assert r.stats["error_bound"] <= 1e-10
    assert np.all(np.isfinite(r.values)) and abs(r.values.sum() - 1.0) < 1e-12
    assert np.abs(r.values - want).sum() <= 1e-9


def test_subnormal_personalization_equals_networkx_unscaled(g, nxg):
    """networkx handles the subnormal weights itself: the same answer without rescaling."""
    pers = {0: 5e-324, 3: 1e-323}
    ref = nx.pagerank(nxg, personalization=pers, tol=1e-14, max_iter=10_000)
    r = digraph.run(g, "pagerank", personalization=pers, tol=1e-10)
    assert np.abs(r.values - [ref[v] for v in r.vertex_ids.tolist()]).sum() <= 1e-9


def test_extreme_personalization_as_an_array(g):
    a = digraph.run(g, "pagerank", personalization=np.array([1e308, 1e308, 0, 0, 0]), tol=1e-10)
    b = digraph.run(g, "pagerank", personalization={0: 1.0, 1: 1.0}, tol=1e-10)
    assert np.abs(a.values - b.values).sum() <= 1e-9


def test_extreme_dangling_equals_networkx(g, nxg):
    d = {0: 1e308, 3: 1e308}
    r = digraph.run(g, "pagerank", dangling=d, tol=1e-10)
    ref = nx.pagerank(nxg, dangling=_scaled(d), tol=1e-14, max_iter=10_000)
    assert r.stats["mode"] == "power" and r.stats["converged"]
    assert np.abs(r.values - [ref[v] for v in r.vertex_ids.tolist()]).sum() <= 1e-9


@pytest.mark.parametrize("pers, words", [
    ({0: "x"}, "vertex 0 has 'x'"),
    ({1: None}, "vertex 1 has None"),
    ({0: 1.0, 2: -1.0}, "vertex 2 has -1.0"),
    ({0: float("nan")}, "vertex 0 has nan"),
    ({0: float("inf")}, "vertex 0 has inf"),
    ({0: 10**400}, "vertex 0 has 100000000000... (401 digits)"),
    ([1.0, 1.0, "a", 1.0, 1.0], "vertex 2 has 'a'"),
    (np.array([1.0, -2.0, 0, 0, 0]), "vertex 1 has -2.0"),
    ([1, 1, 1, 10**400, 1], "vertex 3 has 100000000000"),
    ({0: 0.0, 1: 0.0}, "sums to 0"),
    ({}, "sums to 0"),
    ("abc", "got 'abc'"),
    ({0, 1}, "got {0, 1}"),
    (0.5, "got 0.5"),
    ([1.0, 2.0], "one value per vertex (5), got 2 values"),
    ([[1.0, 2.0], [3.0]], "one weight per vertex"),
])
def test_bad_personalization_is_named(g, pers, words):
    with pytest.raises(InvalidParameterError) as e:
        digraph.run(g, "pagerank", personalization=pers)
    assert "personalization" in str(e.value) and words in str(e.value), str(e.value)


def test_bad_dangling_is_named(g):
    with pytest.raises(InvalidParameterError, match=r"dangling values must be real numbers: "
                                                    r"vertex 3 has 'x'"):
        digraph.run(g, "pagerank", dangling={3: "x"})


def test_personalization_key_not_a_vertex(g):
    with pytest.raises(VertexNotFoundError, match="personalization key 9"):
        digraph.run(g, "pagerank", personalization={9: 1.0})


# ----------------------------------------------------------------------------- booleans

@pytest.mark.parametrize("value", ["no", "false", "False", "", 0, 1, None, 1.0])
@pytest.mark.parametrize("algo, kw", [("pagerank", {}), ("adsorption", {"seeds": [0]}),
                                      ("sssp", {"source": 0})])
def test_weights_takes_booleans_only(g, algo, kw, value):
    with pytest.raises(InvalidParameterError) as e:
        digraph.run(g, algo, weights=value, **kw)
    assert f"weights must be True or False, got {value!r}" in str(e.value)


def test_numpy_bools_are_booleans():
    wg = digraph.load((np.array([0, 1, 2, 0]), np.array([1, 2, 0, 2]), np.array([1.0, 5.0, 1.0, 9.0])))
    for algo, kw in (("pagerank", {}), ("sssp", {"source": 0})):
        plain = digraph.run(wg, algo, weights=False, tol=1e-10, **kw).values
        weighted = digraph.run(wg, algo, weights=True, tol=1e-10, **kw).values
        assert not np.allclose(plain, weighted)  # the flag matters on this graph
        assert np.array_equal(digraph.run(wg, algo, weights=np.False_, tol=1e-10, **kw).values, plain)
        assert np.array_equal(digraph.run(wg, algo, weights=np.True_, tol=1e-10, **kw).values, weighted)
    assert digraph.run(wg, "pagerank", progress=np.False_).stats["converged"]


# ----------------------------------------------------------------------------- empty graph

@pytest.mark.parametrize("mode", [None, "scc", "bsp", "vertex-async", "power", "path",
                                  "path-nopriority"])
def test_empty_graph_pagerank_is_exact(empty, mode):
    r = digraph.run(empty, "pagerank", mode=mode)
    assert r.values.size == 0 and r.to_dict() == {}
    st = r.stats
    assert st["converged"] is True and st["rounds"] == 0
    assert st["error_bound"] == 0.0 and not st.get("floor_limited")


@pytest.mark.parametrize("mode", [None, "peel", "bsp", "vertex-async"])
def test_empty_graph_kcore(empty, mode):
    r = digraph.run(empty, "kcore", mode=mode)
    assert r.values.size == 0 and r.stats["converged"] is True and r.stats["rounds"] == 0


def test_empty_graph_needs_a_vertex_where_an_algorithm_names_one(empty):
    with pytest.raises(VertexNotFoundError):
        digraph.run(empty, "sssp", source=0)
    with pytest.raises(VertexNotFoundError):
        digraph.run(empty, "adsorption", seeds=[0])


# ----------------------------------------------------------------------------- API numbers

@pytest.mark.parametrize("name, value, shown", [
    ("max_iter", float("inf"), "inf"),
    ("max_iter", float("nan"), "nan"),
    ("max_iter", 2**63, "9223372036854775808"),
    ("max_iter", 10**400, "100000000000... (401 digits)"),
    ("max_iter", 0, "0"),
    ("max_iter", -5, "-5"),
    ("max_iter", 2.5, "2.5"),
    ("max_iter", "100", "'100'"),
    ("max_iter", True, "True"),
    ("tol", 10**400, "100000000000... (401 digits)"),
    ("tol", float("inf"), "inf"),
    ("tol", float("nan"), "nan"),
    ("tol", 0.0, "0.0"),
    ("tol", "1e-6", "'1e-6'"),
    ("alpha", 10**400, "100000000000... (401 digits)"),
    ("alpha", "0.5", "'0.5'"),
    ("alpha", float("nan"), "nan"),
])
def test_bad_numbers_are_named(g, name, value, shown):
    with pytest.raises(InvalidParameterError) as e:
        digraph.run(g, "pagerank", **{name: value})
    msg = str(e.value)
    assert name in msg and msg.endswith(f"got {shown}"), msg
    assert len(msg) < 200 and "\n" not in msg


def test_the_largest_round_limit_runs(g):
    assert digraph.run(g, "pagerank", max_iter=2**63 - 1).stats["converged"]
    assert digraph.run(g, "pagerank", max_iter=50.0).params["max_iter"] == 50


@pytest.mark.parametrize("pre, words", [
    ({"foo": 1}, "preprocess: unknown parameter 'foo'; accepted: dmax"),
    (5, "preprocess must be a dict"),
    ("dmax=3", "preprocess must be a dict"),
    ({"dmax": 2**70}, "preprocess: dmax must be at most 2**63 - 1, got 1180591620717411303424"),
    ({"dmax": 0}, "preprocess: dmax must be >= 1, got 0"),
    ({"dmax": 2.0}, "preprocess: dmax must be an integer, got 2.0"),
    ({"partition_arcs": 2**63}, "preprocess: partition_arcs must be at most 2**63 - 1"),
    ({"max_path_length": -1}, "preprocess: max_path_length must be >= 1"),
    ({"merge": ["x"]}, "preprocess: merge must be one of"),
    ({"hot_ratio": 10**400}, "preprocess: hot_ratio must be a number in [0, 1]"),
    ({"hot_ratio": float("nan")}, "preprocess: hot_ratio must be in [0, 1], got nan"),
    ({"jobs": float("inf")}, "preprocess: jobs must be -1 (every core) or an integer"),
    ({"jobs": "x"}, "preprocess: jobs must be -1"),
    ({"jobs": 0}, "preprocess: jobs must be -1"),
])
def test_bad_preprocess_is_named(g, pre, words):
    with pytest.raises(InvalidParameterError) as e:
        digraph.run(g, "pagerank", mode="path", preprocess=pre)
    assert words in str(e.value), str(e.value)


def test_good_preprocess_runs(g):
    r = digraph.run(g, "pagerank", mode="path", preprocess={"dmax": 2**63 - 1, "jobs": -1},
                    tol=1e-10)
    ref = digraph.run(g, "pagerank", mode="scc", tol=1e-10)
    assert np.abs(r.values - ref.values).sum() <= 1e-9


def test_preprocess_api_refuses_huge_counts(g):
    with pytest.raises(InvalidParameterError, match=r"dmax must be at most 2\*\*63 - 1"):
        digraph.preprocess(g, dmax=2**70)


def test_cache_must_be_a_path(g):
    with pytest.raises(InvalidParameterError, match="cache must be a folder path.*got 5"):
        digraph.run(g, "pagerank", mode="path", cache=5)


@pytest.mark.parametrize("seeds, words", [
    ({0: 1.0}, "not a dict"),
    ([[0, 1]], "got a list among them"),
    ([], "seeds is empty"),
])
def test_bad_seeds_are_named(g, seeds, words):
    with pytest.raises(InvalidParameterError, match=words):
        digraph.run(g, "adsorption", seeds=seeds)


def test_seeds_as_a_set_or_generator(g):
    ref = digraph.run(g, "adsorption", seeds=[0, 1], tol=1e-10).values
    for seeds in ({0, 1}, frozenset((0, 1)), (s for s in (0, 1)), np.array([0, 1])):
        assert np.array_equal(digraph.run(g, "adsorption", seeds=seeds, tol=1e-10).values, ref)
    assert digraph.run(g, "adsorption", seeds=np.int64(0)).stats["converged"]


# ----------------------------------------------------------------------------- command line

@pytest.fixture(scope="module")
def graph_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("bad") / "g.txt"
    path.write_text("".join(f"{a} {b}\n" for a, b in ARCS))
    return path


def _fails(capsys, argv, words):
    """``digraph argv`` ends with status 2 and one line ``digraph: error: ...words...``."""
    assert main([str(a) for a in argv]) == 2
    cap = capsys.readouterr()
    err = cap.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("digraph: error: ") and words in err[0], cap.err
    assert "Traceback" not in cap.err and cap.out == ""
    return err[0]


BIG = str(2**63)


@pytest.mark.parametrize("args, words", [
    (["--max-iter", BIG], f"--max-iter must be an integer from 1 to 2**63 - 1, got {BIG}"),
    (["--max-iter", "0"], "--max-iter must be an integer from 1"),
    (["--max-iter", "9" * 500], "--max-iter must be an integer from 1 to 2**63 - 1, got 999999999999... (500 digits)"),
    (["--tol", "nan"], "--tol must be a positive finite number, got nan"),
    (["--tol", "inf"], "--tol must be a positive finite number, got inf"),
    (["--tol", "1e999"], "--tol must be a positive finite number, got inf"),
    (["--tol=-1"], "--tol must be a positive finite number, got -1.0"),
    (["--alpha", "nan"], "--alpha must be a number in (0, 1), got nan"),
    (["--alpha=-inf"], "--alpha must be a number in (0, 1), got -inf"),
    (["--threads", BIG], "--threads must be an integer from 1"),
    (["--threads", "0"], "--threads must be an integer from 1"),
    (["--top=-1"], "--top must be an integer from 0"),
    (["--top", BIG], "--top must be an integer from 0"),
])
def test_run_numbers_are_refused_in_one_line(capsys, graph_file, args, words):
    _fails(capsys, ["run", "pagerank", graph_file, *args], words)


def test_beta_is_refused_in_one_line(capsys, graph_file):
    _fails(capsys, ["run", "adsorption", graph_file, "--seeds", "0", "--beta", "inf"],
           "--beta must be a number in (0, 1), got inf")


@pytest.mark.parametrize("args, words", [
    (["--dmax", BIG], "--dmax must be an integer from 1 to 2**63 - 1"),
    (["--dmax", "0"], "--dmax must be an integer from 1"),
    (["--partition-arcs", BIG], "--partition-arcs must be an integer from 1"),
    (["--max-path-length", BIG], "--max-path-length must be an integer from 0"),
    (["--max-path-length=-1"], "--max-path-length must be an integer from 0"),
    (["--hot-ratio", "nan"], "--hot-ratio must be a number in [0, 1], got nan"),
    (["--hot-ratio", "1.5"], "--hot-ratio must be a number in [0, 1]"),
    (["--jobs", "0"], "--jobs must be an integer from 1 to 2**63 - 1, or -1, got 0"),
    (["--jobs", BIG], "--jobs must be an integer from 1"),
    (["--num-vertices", BIG], "--num-vertices must be an integer from 0 to 2**63 - 1"),
])
def test_preprocess_numbers_are_refused_in_one_line(capsys, graph_file, tmp_path, args, words):
    out = tmp_path / "c"
    _fails(capsys, ["preprocess", graph_file, "-o", out, *args], words)
    assert not out.exists()


def test_huge_max_iter_through_a_subprocess(graph_file):
    """The console script as a user runs it: no OverflowError traceback."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    p = subprocess.run([sys.executable, "-m", "digraph.cli", "run", "pagerank", str(graph_file),
                        "--max-iter", BIG, "--mode", "bsp"],
                       capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 2 and p.stderr.startswith("digraph: error: --max-iter"), p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


# ----------------------------------------------------------------------------- outputs over inputs

def test_stats_over_the_input_graph_is_refused(capsys, graph_file):
    before = graph_file.read_bytes()
    line = _fails(capsys, ["run", "pagerank", graph_file, "--stats", graph_file],
                  "--stats")
    assert "is the input graph" in line and str(graph_file) in line
    # another spelling of the same file, through a link to its folder
    link = graph_file.parent / "again"
    if not link.exists():
        link.symlink_to(graph_file.parent, target_is_directory=True)
    _fails(capsys, ["run", "pagerank", graph_file, "--stats", link / "g.txt"], "is the input graph")
    assert graph_file.read_bytes() == before


def test_out_over_the_input_graph_is_refused(capsys, tmp_path, monkeypatch):
    g = tmp_path / "g.csv"
    g.write_text("".join(f"{a},{b}\n" for a, b in ARCS))
    before = g.read_bytes()
    _fails(capsys, ["run", "pagerank", g, "--out", g], "--out")
    monkeypatch.chdir(tmp_path)
    _fails(capsys, ["run", "pagerank", "g.csv", "--out", "./g.csv"], "is the input graph")
    assert g.read_bytes() == before


def test_out_equal_to_stats_is_refused_before_any_work(capsys, graph_file, tmp_path):
    path = tmp_path / "r.csv"  # does not exist yet: compared by absolute path
    line = _fails(capsys, ["run", "pagerank", graph_file, "--out", path, "--stats",
                           tmp_path / "." / "r.csv"], "name the same file")
    assert "--out" in line and "--stats" in line
    assert not path.exists()


def test_out_over_the_seeds_file_is_refused(capsys, graph_file, tmp_path):
    seeds = tmp_path / "seeds.csv"
    seeds.write_text("0\n")
    _fails(capsys, ["run", "adsorption", graph_file, "--seeds", f"@{seeds}", "--out", seeds],
           "is the --seeds file")
    assert seeds.read_text() == "0\n"


def test_cache_over_the_input_graph_is_refused(capsys, graph_file):
    _fails(capsys, ["run", "pagerank", graph_file, "--mode", "path", "--cache", graph_file],
           "--cache")
    _fails(capsys, ["preprocess", graph_file, "-o", graph_file], "--output")
    assert graph_file.read_text().startswith("0 1\n")


def test_distinct_outputs_still_work(capsys, graph_file, tmp_path):
    out, stats = tmp_path / "r.csv", tmp_path / "s.json"
    assert main(["run", "pagerank", str(graph_file), "--out", str(out), "--stats", str(stats),
                 "-q"]) == 0
    assert out.read_text().startswith("vertex,value\n")
    assert json.loads(stats.read_text())["converged"] is True


# ----------------------------------------------------------------------------- digraph info

HOSTILE = "\x1b[2J\x1b]0;title\x07fake\nline\r\u202eevil\x9b\x7f"


def _forged_cache(tmp_path):
    d = tmp_path / "cache"
    d.mkdir()
    man = {"format": "digraph-pathset", "format_version": HOSTILE, "engine_version": [HOSTILE],
           "graph_fingerprint": {HOSTILE: HOSTILE},
           "stats": {HOSTILE: HOSTILE, "paths": 3, "naïve é 東京": "ünïcödé"},
           "params": {HOSTILE: 1, "merge": HOSTILE},
           "info": {"x": HOSTILE}}
    (d / "manifest.json").write_text(json.dumps(man))
    return d


def _clean(text):
    """No character a terminal would act on (C0 but the line feed, DEL, C1, bidi overrides)."""
    bad = [c for c in text if (ord(c) < 32 and c != "\n") or 0x7f <= ord(c) < 0xa0
           or c in "\u202e\u2028\u2029"]
    return not bad


def test_info_escapes_what_the_manifest_says(capsys, tmp_path):
    d = _forged_cache(tmp_path)
    assert main(["info", str(d)]) == 0
    out = capsys.readouterr().out
    assert _clean(out), repr(out)
    assert "\\x1b[2J\\x1b]0;title\\x07fake\\nline\\r\\u202eevil\\x9b\\x7f" in out
    assert "param \\x1b[2J" in out  # keys too
    assert "naïve é 東京" in out and "ünïcödé" in out  # letters of every script stay readable
    assert len(out.splitlines()) == 4 + 5  # head rows + params and stats, one line each


def test_info_json_escapes_what_the_manifest_says(capsys, tmp_path):
    """JSON's own escapes (a guard: ``--json`` was safe already)."""
    d = _forged_cache(tmp_path)
    assert main(["info", "--json", str(d)]) == 0
    out = capsys.readouterr().out
    assert _clean(out), repr(out)
    assert json.loads(out)["stats"][HOSTILE] == HOSTILE  # escaped, not changed


def test_info_error_line_is_escaped(capsys, tmp_path):
    d = tmp_path / "dir\x1b[2J"
    d.mkdir()
    line = _fails(capsys, ["info", d], "not a path cache")
    assert "\x1b" not in line and "\\x1b[2J" in line
