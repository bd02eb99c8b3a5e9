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
from digraph import cli_run
from digraph.atomic_file import atomic_file
from conftest import random_graph
from digraph.paths import PathSet
from digraph.paths import pathset as pathset_mod
from digraph.preprocess import load_or_build, preprocess
from digraph.preprocess.errors import CacheError

ROOT = Path(__file__).resolve().parents[2]


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
    """Only the marker, the manifest, the lock and the one generation the manifest names; the
    manifest keeps the marker's folder id."""
    man = json.loads((Path(d) / "manifest.json").read_text())
    assert cache_names(d) == sorted([".digraph-cache", ".lock", "manifest.json", f"arrays-{man['generation']}"])
    assert man["folder"] == json.loads((Path(d) / ".digraph-cache").read_text())["id"]


def write_cache_by(call, graph, d, refusal):
    """Write a cache at ``d`` through ``call`` (``save``, ``load_or_build`` or ``run``), expecting
    a CacheError matching ``refusal``."""
    with pytest.raises(CacheError, match=refusal):
        if call == "save":
            preprocess(graph).save(d)
        elif call == "load_or_build":
            load_or_build(graph, d)
        else:
            digraph.run(graph, "sssp", source=0, mode="path", cache=d)


# ----------------------------------------------------------------------------- the Python API

@pytest.mark.parametrize("call", ["save", "load_or_build", "run"])
def test_a_folder_of_user_files_is_refused_untouched(tmp_path, graph, call):
    d = user_folder(tmp_path)
    before = snapshot(d)
    write_cache_by(call, graph, d, r"thesis: is a folder that is not a digraph path cache .*main\.tex")
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
    assert names == sorted([".digraph-cache", ".lock", "manifest.json", f"arrays-{gen}"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c"]  # nothing stranded beside it


def test_a_format_1_cache_is_refused_untouched(tmp_path, graph):
    """The layout before generations kept the arrays beside the manifest: such a folder cannot be
    told from a user's folder of ``.npy`` files by anything only a writer wrote, so it is left."""
    d = tmp_path / "old"
    d.mkdir()
    ps = preprocess(graph)
    for name, a in ps.arrays().items():
        np.save(d / f"{name}.npy", a)
    man = ps.manifest() | {"format_version": 1}
    (d / "manifest.json").write_text(json.dumps(man))
    before = snapshot(d)
    with pytest.raises(CacheError, match="format version 1"):
        PathSet.load(d)
    with pytest.raises(CacheError, match=r"old: is a folder that is not a digraph path cache"):
        load_or_build(graph, d)
    assert snapshot(d) == before


def _legacy(d):
    """Make the cache in ``d`` look as one written before markers existed."""
    (d / ".digraph-cache").unlink()
    man = json.loads((d / "manifest.json").read_text())
    del man["folder"]
    (d / "manifest.json").write_text(json.dumps(man))


def test_a_cache_written_before_markers_is_read_and_adopted(tmp_path, graph):
    d = tmp_path / "c"
    preprocess(graph, dmax=3).save(d)
    _legacy(d)
    assert PathSet.load(d, graph=graph).params["dmax"] == 3  # still read
    assert not (d / ".digraph-cache").exists()  # a reader writes nothing
    preprocess(graph, dmax=5).save(d)  # recognised by its manifest's content, then marked
    assert PathSet.load(d, graph=graph).params["dmax"] == 5
    assert_clean_cache(d)


@pytest.mark.parametrize("content", [
    '{"name": "app"}',  # a web app's manifest
    '{"format": "digraph-pathset", "format_version": 3, "generation": "0123456789abcdef"}',  # no such folder
    "not json at all",
])
@pytest.mark.parametrize("call", ["save", "load_or_build", "run"])
def test_a_folder_holding_only_a_file_named_manifest_json_is_refused(tmp_path, graph, content, call):
    d = tmp_path / "webapp"
    d.mkdir()
    (d / "manifest.json").write_text(content)
    before = snapshot(d)
    write_cache_by(call, graph, d, r"webapp: is a folder that is not a digraph path cache .*manifest\.json")
    assert snapshot(d) == before
    assert cache_names(d) == ["manifest.json"]


@pytest.mark.parametrize("names", [["path_heat.npy"], ["path_heat.npy", "dag_offsets.npy", ".lock"],
                                   ["arrays-0123456789abcdef/path_offsets.npy"], [".digraph-cache"]])
def test_a_folder_holding_files_named_like_a_caches_is_refused(tmp_path, graph, names):
    d = tmp_path / "npydir"
    for name in names:
        (d / name).parent.mkdir(parents=True, exist_ok=True)
        if name.endswith(".npy"):
            np.save(d / name, np.ones(3))
        else:
            (d / name).write_text("mine\n")  # a user's .lock, a forged or damaged marker
    before = snapshot(d)
    with pytest.raises(CacheError, match="npydir: is a folder that is not a digraph path cache"):
        preprocess(graph).save(d)
    with pytest.raises(CacheError, match="not a digraph path cache"):
        load_or_build(graph, d)
    assert snapshot(d) == before


def test_a_marker_is_not_taken_from_a_name_alone(tmp_path, graph):
    """A marker of another format or version, or with a malformed id, marks nothing."""
    for i, mark in enumerate([{"format": "digraph-cache-folder", "version": 2, "id": "0" * 32},
                              {"format": "other", "version": 1, "id": "0" * 32},
                              {"format": "digraph-cache-folder", "version": 1, "id": "../x"}]):
        d = tmp_path / f"m{i}"
        d.mkdir()
        (d / ".digraph-cache").write_text(json.dumps(mark))
        (d / "path_heat.npy").write_bytes(b"mine")
        with pytest.raises(CacheError, match="not a digraph path cache"):
            preprocess(graph).save(d)
        assert (d / "path_heat.npy").read_bytes() == b"mine"


def _interrupt_np_save(monkeypatch, at):
    """Make the cache writer's ``at``-th ``np.save`` raise KeyboardInterrupt."""
    real_save = np.save
    calls = {"n": 0}

    def failing_save(f, a, **kw):
        calls["n"] += 1
        if calls["n"] == at:
            raise KeyboardInterrupt
        return real_save(f, a, **kw)

    monkeypatch.setattr(pathset_mod.np, "save", failing_save)


def test_an_interrupted_first_write_into_an_empty_folder_leaves_it_empty(tmp_path, graph, monkeypatch):
    d = tmp_path / "empty"
    d.mkdir()
    _interrupt_np_save(monkeypatch, 3)
    with pytest.raises(KeyboardInterrupt):
        preprocess(graph).save(d)
    monkeypatch.undo()
    assert cache_names(d) in ([], [".lock"])  # no marker: the folder is not claimed
    preprocess(graph).save(d)
    assert_clean_cache(d)


def test_a_cache_with_a_damaged_manifest_is_still_ours(tmp_path, graph):
    d = tmp_path / "c"
    preprocess(graph).save(d)
    (d / "manifest.json").write_text("{ half a manif")
    ps = load_or_build(graph, d)  # rebuilt over it: the marker says the folder is a cache's
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
    _interrupt_np_save(monkeypatch, 4)
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


# The publish (manifest swap) and collect (stale generations deleted) steps, interleaved with a
# reader at each point a reader can be overtaken, deterministically.

def test_a_reader_overtaken_by_a_writer_keeps_the_new_generation(tmp_path, graph, monkeypatch):
    """A writer publishes a new cache after a reader read the old one and before the reader tidies
    up: the reader must keep the generation the manifest names now, not the one it read."""
    d = tmp_path / "c"
    old, new = preprocess(graph, dmax=2), preprocess(graph, dmax=7)
    old.save(d)
    real = pathset_mod.validate.load_checked
    done = []

    def then_a_writer(*a, **kw):
        out = real(*a, **kw)
        if not done:
            done.append(1)
            new.save(d)  # publishes and collects the generation this reader just read
        return out

    monkeypatch.setattr(pathset_mod.validate, "load_checked", then_a_writer)
    assert PathSet.load(d, graph=graph, mmap=False).params["dmax"] == 2  # what it read, whole
    monkeypatch.undo()
    assert PathSet.load(d, graph=graph).params["dmax"] == 7  # the writer's cache is intact
    assert_clean_cache(d)


@pytest.mark.parametrize("writes", [1, 2])
def test_a_reader_whose_generation_was_collected_reads_the_current_one(tmp_path, graph, monkeypatch, writes):
    """Writers publish (and collect the reader's generation) between the reader's manifest read and
    its array reads: the reader retries on the manifest that is current, never answers a mix."""
    d = tmp_path / "c"
    versions = [preprocess(graph, dmax=k) for k in (2, 5, 7)]
    versions[0].save(d)
    real = PathSet.read_manifest
    done = []

    def then_writers(directory):
        man = real(directory)
        if not done:
            done.append(1)
            for ps in versions[1:1 + writes]:
                ps.save(d)
        return man

    monkeypatch.setattr(PathSet, "read_manifest", staticmethod(then_writers))
    back = PathSet.load(d, graph=graph, mmap=False)
    monkeypatch.undo()
    want = versions[writes]
    assert back.params["dmax"] == want.params["dmax"]
    for name, a in want.arrays().items():
        assert np.array_equal(getattr(back, name), a), name
    assert_clean_cache(d)


def test_a_reader_never_tidies_a_folder_whose_manifest_is_not_its_own(tmp_path, graph):
    """A manifest whose folder id is not the marker's (copied in from another cache) makes a
    reader leave every generation alone."""
    a, b = tmp_path / "a", tmp_path / "b"
    preprocess(graph, dmax=2).save(a)
    preprocess(graph, dmax=3).save(b)
    gen_b = json.loads((b / "manifest.json").read_text())["generation"]
    man_a = json.loads((a / "manifest.json").read_text())
    import shutil
    shutil.copytree(a / f"arrays-{man_a['generation']}", b / f"arrays-{man_a['generation']}")
    (b / "manifest.json").write_text(json.dumps(man_a))  # b's marker, a's manifest
    assert PathSet.load(b, graph=graph).params["dmax"] == 2
    assert (b / f"arrays-{gen_b}").is_dir()  # not collected by a reader


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


def test_a_writer_killed_outright_leaves_no_temporary_file(tmp_path):
    """SIGKILL in the middle of a write: the old file stays and nothing else appears (the data
    went into a nameless file, where the system has them)."""
    from digraph.atomic_file import anonymous
    fd = anonymous(tmp_path)
    if fd is None:
        pytest.skip("no O_TMPFILE here: a killed writer leaves a hidden .tmp file")
    os.close(fd)
    f = tmp_path / "ranks.csv"
    f.write_text("old\n")
    script = ("import sys, time\nfrom digraph.atomic_file import atomic_file\n"
              "with atomic_file(sys.argv[1], 'w') as out:\n"
              "    out.write('half' * 1000); out.flush(); print('writing', flush=True); time.sleep(60)\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    p = subprocess.Popen([sys.executable, "-c", script, str(f)], stdout=subprocess.PIPE, text=True, env=env)
    assert p.stdout.readline() == "writing\n"
    p.kill()
    p.wait(timeout=60)
    assert f.read_text() == "old\n"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["ranks.csv"]


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
@pytest.mark.parametrize("target", ["folder", "file", "manifest", "npy"])
def test_cli_cache_options_refuse_user_paths(tmp_path, graph_file, option, target):
    t = user_folder(tmp_path) if target == "folder" else tmp_path / "f.txt"
    if target == "file":
        t.write_text("keep\n")
    elif target == "manifest":  # a web app's folder
        t = tmp_path / "webapp"
        t.mkdir()
        (t / "manifest.json").write_text('{"name":"app"}\n')
    elif target == "npy":  # arrays named like a cache's
        t = tmp_path / "npydir"
        t.mkdir()
        np.save(t / "path_heat.npy", np.ones(3))
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

    monkeypatch.setattr(cli_run, "zip", half_zip, raising=False)
    with pytest.raises(KeyboardInterrupt):
        cli_run._write_values(str(out), result)
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
