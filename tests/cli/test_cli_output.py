"""``digraph run`` / ``digraph preprocess``: parquet output, progress on stderr, --quiet; through a
subprocess, as a user runs them."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import digraph

ROOT = Path(__file__).resolve().parents[2]


def cli(*args, cwd=None, pythonpath=(), stderr_tty=False):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([*map(str, pythonpath), str(ROOT),
                                                       os.environ.get("PYTHONPATH", "")]))
    cmd = [sys.executable, "-m", "digraph.cli", *map(str, args)]
    if not stderr_tty:
        return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd or ROOT, timeout=300, env=env)
    master, slave = os.openpty()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=slave, text=True, cwd=cwd or ROOT,
                           timeout=300, env=env)
    finally:
        os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO once the terminal's writer is gone
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    p.stderr = b"".join(chunks).decode()
    return p


@pytest.fixture(scope="module")
def graph_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("g") / "web.el"
    rng = np.random.default_rng(11)
    src, dst = rng.integers(0, 80, 500) * 3, rng.integers(0, 80, 500) * 3
    path.write_text("".join(f"{a} {b}\n" for a, b in zip(src, dst)))
    return path


def test_parquet_round_trip(graph_file, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    out = tmp_path / "ranks.parquet"
    p = cli("run", "pagerank", graph_file, "--tol", "1e-10", "--out", out, "--top", "0")
    assert p.returncode == 0, p.stderr
    table = pq.read_table(out)
    assert table.column_names == ["vertex", "value"]
    assert str(table.schema.field("vertex").type) == "int64"
    ref = digraph.run(digraph.load(graph_file), "pagerank", tol=1e-10)
    assert np.array_equal(table.column("vertex").to_numpy(), ref.vertex_ids)
    assert np.abs(table.column("value").to_numpy() - ref.values).sum() <= 1e-12
    out2 = tmp_path / "cores.parquet"
    assert cli("run", "kcore", graph_file, "--out", out2, "--quiet").returncode == 0
    assert pq.read_table(out2).column("value").to_numpy().dtype == np.int64


def test_parquet_without_pyarrow_is_one_line_error(graph_file, tmp_path):
    fake = tmp_path / "nopyarrow"
    (fake / "pyarrow").mkdir(parents=True)
    (fake / "pyarrow" / "__init__.py").write_text("raise ImportError('No module named pyarrow')\n")
    out = tmp_path / "r.parquet"
    p = cli("run", "pagerank", graph_file, "--out", out, pythonpath=[fake])
    assert p.returncode == 2
    err = p.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("digraph: error:") and "needs pyarrow" in err[0], p.stderr
    assert p.stdout == "" and not out.exists()  # refused before running, nothing half-written


def test_progress_flag_reports_stages_on_stderr_only(graph_file, tmp_path):
    plain = cli("run", "pagerank", graph_file, "--top", "3", "--stats", tmp_path / "s.json")
    assert plain.returncode == 0 and plain.stderr == ""  # not a terminal: no progress
    rounds = json.loads((tmp_path / "s.json").read_text())["rounds"]
    p = cli("run", "pagerank", graph_file, "--top", "3", "--progress")
    assert p.returncode == 0, p.stderr
    lines = p.stderr.splitlines()
    assert lines[0].startswith(f"digraph: loading {graph_file}: ") and "vertices" in lines[0]
    assert lines[1].startswith("digraph: running pagerank: ") and f"{rounds:,} rounds" in lines[1]
    assert "\r" not in p.stderr  # no redrawing outside a terminal
    assert p.stdout.splitlines()[:4] == plain.stdout.splitlines()[:4]  # stdout unchanged


def test_progress_on_a_terminal(graph_file):
    p = cli("run", "sssp", graph_file, "--source", "0", "--top", "0", stderr_tty=True)
    assert p.returncode == 0
    assert "\r\x1b[Kdigraph: running sssp" in p.stderr and "rounds" in p.stderr
    q = cli("run", "sssp", graph_file, "--source", "0", "--top", "0", "--quiet", stderr_tty=True)
    assert q.returncode == 0 and q.stderr == "" and q.stdout == ""


def test_quiet_writes_files_and_nothing_else(graph_file, tmp_path):
    out = tmp_path / "d.csv"
    p = cli("run", "sssp", graph_file, "--source", "0", "--out", out, "--quiet")
    assert p.returncode == 0 and p.stdout == "" and p.stderr == ""
    assert out.read_text().startswith("vertex,value\n")
    bad = cli("run", "sssp", graph_file, "--source", "1", "--quiet")  # 1 is not a vertex id
    assert bad.returncode == 2 and bad.stderr.startswith("digraph: error: source 1")
    both = cli("run", "sssp", graph_file, "--source", "0", "--quiet", "--progress")
    assert both.returncode == 2 and "not allowed" in both.stderr


def test_errors_after_progress_stay_one_line(graph_file):
    p = cli("run", "sssp", graph_file, "--source", "1", "--progress")
    assert p.returncode == 2
    err = p.stderr.splitlines()
    assert err[0].startswith("digraph: loading")  # the finished stage
    assert err[-1].startswith("digraph: error: source 1 is not a vertex")
    assert len(err) == 2
    bad = cli("run", "pagerank", graph_file, "--out", "x.txt")
    assert bad.returncode == 2 and ".parquet" in bad.stderr


def test_preprocess_progress_names_stages(graph_file, tmp_path):
    p = cli("preprocess", graph_file, "-o", tmp_path / "c", "--progress", "--jobs", "1")
    assert p.returncode == 0, p.stderr
    from digraph.compiling import NOTICE  # shown first when the kernels compile here
    assert p.stderr.replace(f"digraph: {NOTICE}\n", "").startswith("digraph: preprocessing ")
    for stage in ("decompose", "merge", "scc", "dag", "order"):
        assert f"{stage} " in p.stderr
    assert "num_paths" in p.stdout
    q = cli("preprocess", graph_file, "-o", tmp_path / "c2", "--quiet")
    assert q.returncode == 0 and q.stdout == "" and q.stderr == ""
    assert (tmp_path / "c2" / "manifest.json").is_file()


def test_version_and_real_load_time(graph_file, tmp_path):
    v = cli("--version")
    assert v.returncode == 0 and v.stdout.strip() == f"digraph {digraph.__version__}"
    p = cli("run", "pagerank", graph_file, "--top", "0", "--stats", tmp_path / "s.json")
    assert p.returncode == 0, p.stderr
    st = json.loads((tmp_path / "s.json").read_text())
    assert st["time_load"] > 0  # the CLI loads the file itself; it was reported as 0.0 ms
    assert st["time_total"] >= st["time_load"] + st["time_compute"] + st["time_compile"]
    assert st["engine"] == f"cpu-{st['mode']}" and st["route"]["reason"].startswith("automatic")
    p = cli("run", "pagerank", graph_file, "--top", "0")  # the table printed: every time, in ms
    rows = dict(line.split(None, 1) for line in p.stdout.splitlines()[1:] if line.strip())
    for key in ("time_load", "time_preprocess", "time_compile", "time_compute", "time_total"):
        assert rows[key].endswith(" ms"), (key, p.stdout)


def test_unconverged_run_speaks_the_cli_language(graph_file, tmp_path):
    out = tmp_path / "r.csv"
    p = cli("run", "pagerank", graph_file, "--mode", "bsp", "--max-iter", "2", "--tol", "1e-14", "--out", out)
    assert p.returncode == 2 and not out.exists()
    err = p.stderr.strip().splitlines()
    assert len(err) == 1 and "raise --max-iter or --tol, or pass --allow-unconverged" in err[0]
    assert ".result" not in p.stderr  # the Python API's wording
    q = cli("run", "pagerank", graph_file, "--mode", "bsp", "--max-iter", "2", "--tol", "1e-14", "--out", out,
            "--allow-unconverged", "--top", "0")
    assert q.returncode == 0 and q.stderr.startswith("digraph: warning: pagerank did not converge")
    assert out.read_text().startswith("vertex,value\n")
