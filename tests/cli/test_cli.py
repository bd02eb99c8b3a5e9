"""``digraph run`` on real files, through a subprocess: outputs, and one-line errors with status 2."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import digraph

ROOT = Path(__file__).resolve().parents[2]


def cli(*args, cwd=None):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "digraph.cli", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd or ROOT, timeout=300, env=env)


@pytest.fixture(scope="module")
def graph_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("g") / "web.el"
    rng = np.random.default_rng(7)
    src, dst = rng.integers(0, 60, 400) * 10, rng.integers(0, 60, 400) * 10  # ids 0, 10, 20, ...
    path.write_text("# a test graph\n" + "".join(f"{a} {b}\n" for a, b in zip(src, dst)))
    return path


def test_run_pagerank_writes_csv_and_stats(graph_file, tmp_path):
    out, stats = tmp_path / "r.csv", tmp_path / "s.json"
    p = cli("run", "pagerank", graph_file, "--tol", "1e-10", "--top", "5", "--out", out, "--stats", stats)
    assert p.returncode == 0, p.stderr
    assert "top 5" in p.stdout and "rounds" in p.stdout
    lines = out.read_text().splitlines()
    assert lines[0] == "vertex,value"
    got = {int(a): float(b) for a, b in (ln.split(",") for ln in lines[1:])}
    ref = digraph.run(digraph.load(graph_file), "pagerank", tol=1e-10).to_dict()
    assert got.keys() == ref.keys()
    assert sum(abs(got[k] - ref[k]) for k in ref) <= 1e-12
    assert json.loads(stats.read_text())["converged"] is True


def test_run_sssp_npy_and_seeds(graph_file, tmp_path):
    out = tmp_path / "d.npy"
    p = cli("run", "sssp", graph_file, "--source", "10", "--out", out, "--top", "0")
    assert p.returncode == 0, p.stderr
    rec = np.load(out)
    ref = digraph.run(digraph.load(graph_file), "sssp", source=10)
    assert np.array_equal(rec["vertex"], ref.vertex_ids)
    assert np.array_equal(rec["value"], ref.values)
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("10\n20\n")
    for spec in ("10,20", f"@{seeds}"):
        p = cli("run", "adsorption", graph_file, "--seeds", spec, "--mode", "vertex-async")
        assert p.returncode == 0, p.stderr


@pytest.mark.parametrize("args, words", [
    (["run", "pagerank", "missing.el"], "No such file"),
    (["run", "nope", "{g}"], "unknown algorithm"),
    (["run", "sssp", "{g}", "--source", "5"], "source 5 is not a vertex"),
    (["run", "sssp", "{g}"], "sssp: --source is required"),  # the option, not the parameter
    (["run", "pagerank", "{g}", "--alpha", "1.5"], "alpha"),
    (["run", "pagerank", "{g}", "--device", "cuda:0,0"], "names a GPU twice"),
    (["run", "pagerank", "{g}", "--out", "x.txt"], ".csv or .npy"),
])
def test_errors_are_one_line_with_status_2(graph_file, tmp_path, args, words):
    p = cli(*[a.format(g=graph_file) for a in args], cwd=tmp_path)
    assert p.returncode == 2
    err = p.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("digraph: error:") and words in err[0], p.stderr


def test_bad_command_line_and_help():
    assert cli("run").returncode == 2  # argparse: missing arguments
    p = cli("--help")
    assert p.returncode == 0 and "digraph run pagerank" in p.stdout
