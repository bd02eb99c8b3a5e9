"""Nothing of a user's is ever deleted or left half-written (issue 19, item 1).

Every path option -- ``PathSet.save``, ``digraph.run(cache=)``, ``load_or_build``, ``digraph run
--cache/--out/--stats``, ``digraph preprocess -o`` -- is pointed at an existing folder of other
files, a regular file, the current directory and a cache, and writes are interrupted part-way.
"""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import digraph
from digraph import cli as cli_mod
from digraph.atomic_file import atomic_file
from conftest import random_graph
from digraph.paths import PathSet
from digraph.paths import pathset as pathset_mod
from digraph.preprocess import load_or_build, preprocess
from digraph.preprocess.errors import CacheError

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def graph():
    return random_graph(0, 120, 500)


def user_folder(root):
    """A folder of a user's files: a .tex file and a subfolder with a file."""
    d = root / "thesis"
    (d / "figures").mkdir(parents=True)
    (d / "main.tex").write_text("\\documentclass{article}\n")
    (d / "figures" / "a.txt").write_text("data\n")
    return d


def snapshot(d):
    """Every file under ``d`` with its bytes."""
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(Path(d).rglob("*")) if p.is_file()}


def cache_names(d):
    return sorted(p.name for p in Path(d).iterdir())


def assert_clean_cache(d):
    """Only the manifest, the lock and the one generation the manifest names."""
    gen = json.loads((Path(d) / "manifest.json").read_text())["generation"]
    assert cache_names(d) == sorted([".lock", "manifest.json", f"arrays-{gen}"])


# ----------------------------------------------------------------------------- the Python API

@pytest.mark.parametrize("call", ["save", "load_or_build", "run"])
def test_a_folder_of_user_files_is_refused_untouched(tmp_path, graph, call):
    d = user_folder(tmp_path)
    before = snapshot(d)
    with pytest.raises(CacheError, match=r"thesis: is a folder that is not a digraph path cache .*main\.tex"):
        if call == "save":
            preprocess(graph).save(d)
        elif call == "load_or_build":
            load_or_build(graph, d)
        else:
            digraph.run(graph, "sssp", source=0, mode="path", cache=d)
    assert snapshot(d) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["thesis"]  # no stray sibling either


@pytest.mark.parametrize("call", ["save", "run"])
def test_a_regular_file_is_refused_untouched(tmp_path, graph, call):
    f = tmp_path / "notes.txt"
    f.write_text("keep me\n")
    with pytest.raises(CacheError, match="notes.txt: exists and is not a folder"):
        if call == "save":
            preprocess(graph).save(f)
        else:
            digraph.run(graph, "pagerank", mode="path", cache=f)
    assert f.read_text() == "keep me\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_the_current_directory_is_refused(tmp_path, graph, monkeypatch):
    (tmp_path / "paper.tex").write_text("x")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CacheError, match="not a digraph path cache"):
        preprocess(graph).save(".")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["paper.tex"]


def test_an_empty_folder_and_a_new_path_are_written(tmp_path, graph):
    empty = tmp_path / "empty"
    empty.mkdir()
    ps = preprocess(graph)
    ps.save(empty)
    assert_clean_cache(empty)
    ps.save(tmp_path / "a" / "b" / "new")
    assert_clean_cache(tmp_path / "a" / "b" / "new")


def test_replacing_a_cache_keeps_no_old_copy_and_never_a_user_file(tmp_path, graph):
    d = tmp_path / "c"
    preprocess(graph, dmax=3).save(d)
    (d / "README.txt").write_text("mine\n")  # a user's note inside a cache folder
    preprocess(graph, dmax=5).save(d)
    assert PathSet.load(d, graph=graph).params["dmax"] == 5
    assert (d / "README.txt").read_text() == "mine\n"
    names = cache_names(d)
    names.remove("README.txt")
    gen = json.loads((d / "manifest.json").read_text())["generation"]
    assert names == sorted([".lock", "manifest.json", f"arrays-{gen}"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c"]  # nothing stranded beside it


def test_a_format_1_cache_is_replaced_and_its_files_removed(tmp_path, graph):
    """The layout before generations: the arrays beside the manifest."""
    d = tmp_path / "old"
    d.mkdir()
    ps = preprocess(graph)
    for name, a in ps.arrays().items():
        np.save(d / f"{name}.npy", a)
    man = ps.manifest() | {"format_version": 1}
    (d / "manifest.json").write_text(json.dumps(man))
    with pytest.raises(CacheError, match="format version 1"):
        PathSet.load(d)
    b = load_or_build(graph, d)
    assert "load" not in b.timings  # rebuilt
    assert_clean_cache(d)


def test_a_cache_with_a_damaged_manifest_is_still_ours(tmp_path, graph):
    d = tmp_path / "c"
    preprocess(graph).save(d)
    (d / "manifest.json").write_text("{ half a manif")
    ps = load_or_build(graph, d)  # rebuilt over it: every name in the folder is a cache's
    assert "load" not in ps.timings
    assert_clean_cache(d)


@pytest.mark.parametrize("exc", [KeyboardInterrupt, OSError])
@pytest.mark.parametrize("at", [1, 8, 16, "manifest"])
def test_an_interrupted_replace_leaves_the_old_cache_whole(tmp_path, graph, monkeypatch, exc, at):
    d = tmp_path / "c"
    old = preprocess(graph, dmax=3)
    old.save(d)
    new = preprocess(graph, dmax=6)
    real_save, real_replace = np.save, os.replace
    calls = {"n": 0}

    def failing_save(f, a, **kw):
        calls["n"] += 1
        if calls["n"] == at:
            raise exc("interrupted (simulated)")
        return real_save(f, a, **kw)

    def failing_replace(a, b):
        if str(b).endswith("manifest.json"):
            raise exc("interrupted (simulated)")
        return real_replace(a, b)

    if at == "manifest":
        monkeypatch.setattr(pathset_mod.os, "replace", failing_replace)
    else:
        monkeypatch.setattr(pathset_mod.np, "save", failing_save)
    with pytest.raises(exc):
        new.save(d)
    monkeypatch.undo()
    back = PathSet.load(d, graph=graph)
    assert back.params["dmax"] == 3
    for name, a in old.arrays().items():
        assert np.array_equal(getattr(back, name), a), name
    assert_clean_cache(d)  # the partial generation is gone
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c"]


def test_an_interrupted_first_write_leaves_nothing(tmp_path, graph, monkeypatch):
    real_save = np.save
    calls = {"n": 0}

    def failing_save(f, a, **kw):
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt
        return real_save(f, a, **kw)

    monkeypatch.setattr(pathset_mod.np, "save", failing_save)
    with pytest.raises(KeyboardInterrupt):
        preprocess(graph).save(tmp_path / "c")
    assert list(tmp_path.iterdir()) == []


def test_a_generation_left_by_a_killed_writer_is_removed_by_the_next_reader(tmp_path, graph):
    d = tmp_path / "c"
    preprocess(graph).save(d)
    stale = d / "arrays-0123456789abcdef"  # what SIGKILL part-way through a save leaves
    stale.mkdir()
    np.save(stale / "path_offsets.npy", np.arange(3))
    PathSet.load(d, graph=graph)
    assert not stale.exists()
    assert_clean_cache(d)


def test_writers_take_turns_and_a_reader_never_sees_a_mix(tmp_path, graph):
    d = tmp_path / "c"
    versions = {k: preprocess(graph, dmax=k) for k in (2, 7)}
    versions[2].save(d)
    errors, seen = [], set()
    stop = threading.Event()

    def writer(k):
        try:
            for _ in range(6):
                versions[k].save(d)
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    def reader():
        while not stop.is_set():
            try:
                ps = PathSet.load(d, mmap=False)
            except CacheError:
                continue  # a generation replaced while we read it, three times over: retried
            k = ps.params["dmax"]
            seen.add(k)
            for name, a in versions[k].arrays().items():
                if not np.array_equal(getattr(ps, name), a):
                    errors.append(AssertionError(f"{name} of dmax={k} mixed with the other cache"))

    threads = [threading.Thread(target=writer, args=(k,)) for k in (2, 7)]
    r = threading.Thread(target=reader)
    r.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    r.join()
    assert not errors, errors
    assert seen  # the reader did read
    assert_clean_cache(d)


def test_atomic_file_keeps_the_old_content_when_interrupted(tmp_path):
    f = tmp_path / "ranks.csv"
    f.write_text("old\n")
    os.chmod(f, 0o640)
    with pytest.raises(KeyboardInterrupt):
        with atomic_file(f, "w") as out:
            out.write("new, half")
            raise KeyboardInterrupt
    assert f.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ranks.csv"]
    with atomic_file(f, "w") as out:
        out.write("new\n")
    assert f.read_text() == "new\n"
    assert (os.stat(f).st_mode & 0o777) == 0o640  # a replaced file keeps its permissions
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ranks.csv"]


# ----------------------------------------------------------------------------- the command line

def cli(*args, cwd=None, **kw):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "digraph.cli", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd or ROOT, timeout=300, env=env, **kw)


@pytest.fixture(scope="module")
def graph_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("g") / "web.el"
    rng = np.random.default_rng(5)
    src, dst = rng.integers(0, 60, 400), rng.integers(0, 60, 400)
    path.write_text("".join(f"{a} {b}\n" for a, b in zip(src, dst)))
    return path


def test_cli_preprocess_into_the_current_directory_is_refused(tmp_path, graph_file):
    user = user_folder(tmp_path)
    before = snapshot(user)
    p = cli("preprocess", graph_file, "-o", ".", cwd=user)
    assert p.returncode == 2
    assert p.stderr.startswith("digraph: error: ") and "not a digraph path cache" in p.stderr
    assert len(p.stderr.splitlines()) == 1
    assert snapshot(user) == before


@pytest.mark.parametrize("option", [["preprocess", "{g}", "-o", "{t}"],
                                    ["run", "pagerank", "{g}", "--mode", "path", "--cache", "{t}"]])
@pytest.mark.parametrize("target", ["folder", "file"])
def test_cli_cache_options_refuse_user_paths(tmp_path, graph_file, option, target):
    t = user_folder(tmp_path) if target == "folder" else tmp_path / "f.txt"
    if target == "file":
        t.write_text("keep\n")
    before = snapshot(tmp_path)
    p = cli(*[a.format(g=graph_file, t=t) for a in option])
    assert p.returncode == 2 and p.stderr.startswith("digraph: error: "), p.stderr
    assert str(t) in p.stderr
    assert p.stdout == ""  # refused before any work
    assert snapshot(tmp_path) == before


def test_cli_out_and_stats_replace_files_whole(tmp_path, graph_file):
    out, st = tmp_path / "r.csv", tmp_path / "s.json"
    out.write_text("old\n")
    p = cli("run", "pagerank", graph_file, "--out", out, "--stats", st, "--top", "0")
    assert p.returncode == 0, p.stderr
    assert out.read_text().startswith("vertex,value\n")
    assert json.loads(st.read_text())["converged"] is True
    assert sorted(x.name for x in tmp_path.iterdir()) == ["r.csv", "s.json"]


@pytest.mark.parametrize("bad, words", [("{d}/dir.csv", "is a folder"), ("{d}/no/such/r.csv", "does not exist"),
                                        ("r.json", ".csv or .npy")])
def test_cli_out_is_checked_before_the_run(tmp_path, graph_file, bad, words):
    (tmp_path / "dir.csv").mkdir()
    p = cli("run", "pagerank", graph_file, "--out", bad.format(d=tmp_path), "--progress")
    assert p.returncode == 2 and words in p.stderr
    assert "loading" not in p.stderr  # nothing was loaded or run


def test_cli_interrupted_write_keeps_the_old_file(tmp_path, graph, monkeypatch):
    out = tmp_path / "r.csv"
    out.write_text("old\n")
    result = digraph.run(graph, "pagerank")
    real_zip = zip

    def half_zip(*a):  # Ctrl-C after the first line
        it = real_zip(*a)
        yield next(it)
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_mod, "zip", half_zip, raising=False)
    with pytest.raises(KeyboardInterrupt):
        cli_mod._write_values(str(out), result)
    assert out.read_text() == "old\n"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["r.csv"]


def test_cli_closed_pipe_still_writes_the_files(tmp_path, graph_file):
    out, st = tmp_path / "r.csv", tmp_path / "s.json"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    cmd = [sys.executable, "-m", "digraph.cli", "run", "pagerank", str(graph_file), "--top", "50",
           "--out", str(out), "--stats", str(st)]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT)
    p.stdout.close()  # the reader is gone before the first line (as `| head -n 0`)
    err = p.stderr.read().decode()
    assert p.wait(timeout=300) == 0, err
    assert err == ""
    assert out.read_text().startswith("vertex,value\n")
    assert json.loads(st.read_text())["rounds"] > 0


def test_cli_ctrl_c_is_one_line_and_exit_130(tmp_path, graph_file):
    # the run itself is replaced by a long sleep, so that the signal surely lands inside it
    out = tmp_path / "r.csv"
    out.write_text("old\n")
    script = ("import sys, time, digraph\n"
              "digraph.run = lambda *a, **k: time.sleep(120)\n"
              "from digraph.cli import main\n"
              "sys.exit(main(sys.argv[1:]))\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    cmd = [sys.executable, "-c", script, "run", "pagerank", str(graph_file), "--out", str(out),
           "--progress"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    first = p.stderr.readline()  # "digraph: loading ...": the run has begun
    assert first.startswith("digraph: loading"), first
    time.sleep(0.3)
    p.send_signal(signal.SIGINT)
    rest = p.stderr.read()
    assert p.wait(timeout=60) == 130, rest
    assert rest.strip().splitlines() == ["digraph: interrupted"]
    assert out.read_text() == "old\n"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["r.csv"]
