"""The command line's inputs as people have them: standard input (``-``), ``--format``, vertex
names in ``--source``/``--seeds``/``--out``, help that lists every format, errors in the command
line's spelling (``--mode peel``), and ``warmup`` saying when a mode compiles nothing."""

import csv
import gzip
import io
import os
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import digraph
from digraph import cli
from digraph.errors import GraphFormatError, InvalidParameterError, NotAvailableError
from digraph.io import FORMATS

ROOT = Path(__file__).resolve().parents[2]
NAMES = "src,dst,weight\nalice,bob,2.5\nbob,carol,1\ncarol,alice,0.5\ndave,alice,4\n"


def main(capsys, *args, stdin=None, monkeypatch=None):
    """``digraph ARGS`` in this process: (status, stdout, stderr lines)."""
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", types.SimpleNamespace(buffer=io.BytesIO(stdin),
                                                                isatty=lambda: False))
    status = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err.strip().splitlines()


def test_stdin_is_read_through_a_pipe_gzip_or_not(tmp_path):
    """A real pipe (os.read on the descriptor), gzip told by its first bytes; names kept."""
    text = "# names\nalice bob\nbob carol\ncarol alice\ndave alice\n".encode()
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    env = dict(os.environ, PYTHONPATH=path, DIGRAPH_QUIET="1")
    want = digraph.run(digraph.load(_write(tmp_path, "g.txt", text)), "pagerank", tol=1e-10)
    for data in (text, gzip.compress(text)):
        out = tmp_path / "r.csv"
        p = subprocess.run([sys.executable, "-m", "digraph.cli", "run", "pagerank", "-", "--tol",
                            "1e-10", "--top", "2", "--out", str(out)], input=data,
                           capture_output=True, timeout=300, env=env, cwd=tmp_path)
        assert p.returncode == 0, p.stderr
        assert "'stdin'" in p.stdout.decode() and "  alice  " in p.stdout.decode()
        rows = list(csv.reader(out.read_text().splitlines()))[1:]
        got = {v: float(x) for v, x in rows}
        assert got.keys() == want.to_dict().keys()
        assert max(abs(got[k] - v) for k, v in want.to_dict().items()) < 1e-12


def _write(tmp_path, name, raw):
    path = tmp_path / name
    path.write_bytes(raw)
    return path


def test_stdin_formats_errors_and_preprocess(capsys, monkeypatch, tmp_path):
    mm = b"%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 0.5\n2 3 2\n"
    status, out, err = main(capsys, "run", "sssp", "-", "--format", "mtx", "--source", "1",
                            stdin=mm, monkeypatch=monkeypatch)
    assert status == 0 and "3 vertices, 2 arcs" in out
    status, out, err = main(capsys, "run", "pagerank", "-", stdin=mm, monkeypatch=monkeypatch)
    assert status == 2 and err == ["digraph: error: <stdin>, line 1: a Matrix Market banner, not "
                                   "an edge list: read the file as Matrix Market (a .mtx name, or "
                                   "--format mtx)"]
    status, out, err = main(capsys, "run", "pagerank", "-", stdin=b"a b\nb c d e f\n",
                            monkeypatch=monkeypatch)
    assert status == 2 and len(err) == 1 and err[0].startswith("digraph: error: <stdin>, line 2: ")
    status, out, err = main(capsys, "preprocess", "-", "--format", "csv", "-o", tmp_path / "c",
                            "--json", stdin=NAMES.encode(), monkeypatch=monkeypatch)
    assert status == 0 and '"num_vertices": 4' in out
    assert main(capsys, "info", tmp_path / "c")[0] == 0


def test_load_of_dash_is_a_file_named_dash(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError):
        digraph.load("-", format="edgelist")
    (tmp_path / "-").write_text("0 1\n")
    assert digraph.load("-", format="edgelist").num_arcs == 1


def test_format_option_on_run_and_preprocess(capsys, tmp_path):
    dat = tmp_path / "graph.dat"
    dat.write_text("from\tto\n0\t1\n1\t2\n")
    for args in (["run", "pagerank", dat, "--top", "0"], ["preprocess", dat, "-o", tmp_path / "c"]):
        status, out, err = main(capsys, *args)
        assert status == 2 and len(err) == 1
        assert "pass --format, one of edgelist, csv, tsv, mtx" in err[0] and "format=" not in err[0]
        assert main(capsys, *args, "--format", "tsv")[0] == 0
    status, out, err = main(capsys, "run", "pagerank", dat, "--format", "csv")
    assert status == 2 and "line 2" in err[0]  # one field per line: tabs are not commas


def test_help_lists_every_format_and_extension():
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if hasattr(a, "choices") and isinstance(a.choices, dict))
    for command in ("run", "preprocess"):
        text = sub.choices[command].format_help()
        for word in (".el", ".txt", ".edges", ".tsv", ".csv", ".mtx", ".gz", "'-'", "--format",
                     "{" + ",".join(FORMATS) + "}"):
            assert word in text, (command, word)


@pytest.mark.parametrize("error, text", [
    (InvalidParameterError("mode='peel' peels k-cores; the modes are 'scc', or mode=None for "
                           "the automatic choice"),
     "--mode peel peels k-cores; the modes are 'scc', or no --mode for the automatic choice"),
    (InvalidParameterError("cache=, layer_window= apply to the path modes, not mode='bsp'"),
     "--cache, layer_window= apply to the path modes, not --mode bsp"),
    (InvalidParameterError("sssp: parameter 'source' is required"), "sssp: --source is required"),
    (InvalidParameterError("threads=8 exceeds; max_iter=5 rounds; num_vertices=3"),
     "--threads 8 exceeds; --max-iter 5 rounds; --num-vertices 3"),
    (NotAvailableError("mode='cluster' runs on one GPU (device='cuda' or 'cuda:N')"),
     "--mode cluster runs on one GPU (--device cuda or 'cuda:N')"),
    (GraphFormatError("malformed line \"mode='x' format='csv')\": column 1: 'a,b' is not an "
                      "integer vertex id (for comma-separated values use a .csv name or "
                      "format='csv')", path="mode=1.txt", line=2),
     "mode=1.txt, line 2: malformed line \"mode='x' format='csv')\": column 1: 'a,b' is not an "
     "integer vertex id (for comma-separated values use a .csv name or --format csv)"),
    (ValueError("mode='peel'"), "mode='peel'"),  # not a parameter error: as it is
])
def test_cli_spelling(error, text):
    assert cli.cli_spelling(error) == text


@pytest.mark.parametrize("algorithm, mode, modes", [
    ("pagerank", "peel", ["scc", "power", "path", "path-nopriority", "vertex-async", "bsp"]),
    ("kcore", "path", ["vertex-async", "bsp", "peel"]),
    ("sssp", "scc", ["path", "path-nopriority", "vertex-async", "bsp"]),
])
def test_a_mode_that_does_not_apply_lists_every_mode_that_does(capsys, tmp_path, algorithm, mode,
                                                               modes):
    g = tmp_path / "g.txt"
    g.write_text("0 1\n1 2\n2 0\n")
    extra = ["--source", "0"] if algorithm == "sssp" else []
    status, out, err = main(capsys, "run", algorithm, g, "--mode", mode, *extra)
    assert status == 2 and len(err) == 1 and err[0].startswith(f"digraph: error: --mode {mode} ")
    listed = err[0].split(" are ", 1)[1]
    assert [m for m in ("scc", "power", "path", "path-nopriority", "vertex-async", "bsp", "peel",
                        "cluster") if f"'{m}'" in listed] == sorted(modes, key=["scc", "power",
                        "path", "path-nopriority", "vertex-async", "bsp", "peel"].index)
    assert "mode=" not in err[0] and "no --mode for the automatic choice" in err[0]
    status, out, err = main(capsys, "run", "pagerank", g, "--cache", tmp_path / "c")
    assert status == 2 and err[0].startswith("digraph: error: --cache applies to the path modes")
    assert "pass --mode path" in err[0]


def test_vertex_names_on_the_command_line(capsys, tmp_path):
    f = tmp_path / "friends.csv"
    f.write_text(NAMES)
    g = digraph.load(f)
    out_csv, out_npy = tmp_path / "d.csv", tmp_path / "d.npy"
    status, out, err = main(capsys, "run", "sssp", f, "--source", "dave", "--top", "2",
                            "--out", out_csv)
    assert status == 0 and "      dave  0" in out and "     alice  4" in out
    want = digraph.run(g, "sssp", source="dave").to_dict()
    rows = list(csv.reader(out_csv.read_text().splitlines()))
    assert rows[0] == ["vertex", "value"] and {a: float(b) for a, b in rows[1:]} == want
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("# seeds\nalice\n  bob \n")
    assert main(capsys, "run", "adsorption", f, "--seeds", f"@{seeds}", "--out", out_npy)[0] == 0
    rec = np.load(out_npy)
    assert rec["vertex"].tolist() == g.vertex_ids.tolist()
    ref = digraph.run(g, "adsorption", seeds=["alice", "bob"]).values
    assert np.allclose(rec["value"], ref, atol=1e-5)
    status, out, err = main(capsys, "run", "sssp", f, "--source", "zoe")
    assert status == 2 and err == ["digraph: error: source 'zoe' is not a vertex of the graph"]
    # a name of a blank-separated file may hold a comma: --out quotes it, csv reads it back
    t = tmp_path / "t.txt"
    t.write_text('a,b "c"\n"c" a,b\n')
    assert main(capsys, "run", "pagerank", t, "--out", out_csv, "--top", "0")[0] == 0
    rows = list(csv.reader(out_csv.read_text().splitlines()))
    assert [r[0] for r in rows[1:]] == ["a,b", '"c"']
    # integer ids: --source 07 is the vertex 7
    i = tmp_path / "i.txt"
    i.write_text("7 8\n")
    assert "        7  0" in main(capsys, "run", "sssp", i, "--source", "07")[1]


def test_warmup_says_when_a_mode_compiles_nothing(capsys):
    status, out, err = main(capsys, "warmup", "--mode", "cluster")
    assert status == 0 and err == []
    lines = [ln for ln in out.splitlines() if "nothing to compile" in ln]
    assert lines == ["  --mode cluster: nothing to compile on the CPU; cluster runs the monotone "
                     "family (sssp) on a GPU"]
    status, out, err = main(capsys, "warmup", "--mode", "peel", "--family", "linear", "-q")
    assert status == 0 and out == ""
