"""First run (issue 19, item 3): compile only what a run needs, say so while compiling, compile
ahead with ``digraph.warmup()`` / ``digraph warmup``, and cache from a read-only install."""

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from numba import njit

import digraph
from digraph import cli, compiling
from digraph.errors import InvalidParameterError

from conftest import unprivileged

ROOT = Path(__file__).resolve().parents[1]


def _graph():
    return digraph.load(([0, 1, 2, 2, 3, 4], [1, 2, 0, 3, 4, 3]))


def test_warmup_then_run_compiles_nothing():
    done = digraph.warmup(modes=["power", "scc"], families=["linear"])
    assert [d["what"] for d in done] == ["load", "route", "linear power", "linear scc"]
    assert all(d["seconds"] >= d["compiled"] >= 0.0 for d in done)
    c0 = compiling.seconds()
    for mode in (None, "scc", "power"):
        r = digraph.run(_graph(), "pagerank", mode=mode)
        assert r.stats["time_compile"] < 1.0
    assert compiling.seconds() == c0  # nothing compiled after the warm-up


def test_warmup_checks_its_arguments():
    with pytest.raises(InvalidParameterError, match="unknown mode"):
        digraph.warmup(modes=["fast"])
    with pytest.raises(InvalidParameterError, match="unknown family"):
        digraph.warmup(families=["linear", "cubic"])
    with pytest.raises(InvalidParameterError, match="index_dtypes"):
        digraph.warmup(modes=["peel"], index_dtypes=("float32",))


PARALLEL = """
import json, sys
import digraph
done = digraph.warmup(modes=["power"], families=["linear"], jobs=int(sys.argv[1]))
print(json.dumps(done))
"""

FIRST_RUN = """
import json
import digraph
from digraph import compiling
g = digraph.load(([0, 1, 2, 2, 3, 4], [1, 2, 0, 3, 4, 3]))
r = digraph.run(g, "pagerank", mode="power")
print(json.dumps([compiling.seconds(), r.stats["time_compile"]]))
"""


def _python(script, cache, *args):
    env = {k: v for k, v in os.environ.items() if k != "DIGRAPH_QUIET"}
    env.update(NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-c", script, *args], env=env, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.splitlines()[-1]), r.stderr


def test_parallel_warmup_into_an_empty_cache_then_a_run_compiles_nothing(tmp_path):
    """Two worker processes compile into a fresh cache folder: the same items in the same order
    as in one process, and the next process loads every kernel of its run from the cache."""
    cache = tmp_path / "numba"
    done, _ = _python(PARALLEL, cache, "2")
    assert [d["what"] for d in done] == ["load", "route", "linear power"]
    assert all(d["seconds"] >= d["compiled"] >= 0.0 for d in done)
    assert sum(d["compiled"] for d in done) > 0.5  # it did compile, in the workers
    (compiled, time_compile), err = _python(FIRST_RUN, cache)
    assert compiled == 0.0 and time_compile >= 0.0  # cache loads only (their seconds vary)
    assert compiling.NOTICE not in err
    again, _ = _python(PARALLEL, cache, "1")  # one process: everything from the cache
    assert [d["what"] for d in again] == [d["what"] for d in done]
    assert all(d["compiled"] == 0.0 for d in again)


def test_parallel_warmup_reports_each_item_in_this_process():
    seen = []
    done = digraph.warmup(modes=["power", "bsp"], families=["linear", "hindex"], jobs=3,
                          progress=lambda *a: seen.append(a))
    whats = ["load", "route", "linear power", "linear bsp", "hindex bsp"]
    assert [d["what"] for d in done] == whats
    assert sorted(a[0] for a in seen) == sorted(whats)
    assert all(len(a) == 3 for a in seen)


@pytest.mark.parametrize("jobs", [0, -2, 1.5, "2", True])
def test_warmup_checks_jobs(jobs):
    with pytest.raises(InvalidParameterError, match="jobs must be an integer"):
        digraph.warmup(modes=["power"], families=["linear"], jobs=jobs)


def test_cli_warmup_checks_jobs(capsys):
    assert cli.main(["warmup", "--jobs", "0"]) == 2
    assert "--jobs must be an integer from 1" in capsys.readouterr().err


def test_a_workers_exception_is_raised_here_with_its_traceback():
    from digraph import warmup_workers
    from digraph.dispatch.engines.warmup import _call
    items = [("load", "load", None, None, None), ("linear nosuch", "cpu", "nosuch", "linear",
                                                  "int32")]
    with pytest.raises(Exception) as here:  # noqa: PT011 - whatever the item raises in-process
        _call(items[1])
    with pytest.raises(type(here.value), match="^" + re.escape(str(here.value))) as info:
        warmup_workers.run(items, [[1], [0]], None, 2)
    assert "in a warmup worker process" in info.value.__notes__[-1]
    assert "Traceback" in info.value.__notes__[-1]


def test_a_worker_that_dies_is_an_error_naming_its_items(monkeypatch):
    from digraph import warmup_workers
    monkeypatch.setattr(warmup_workers, "_WORKER",
                        "import sys; sys.stderr.write('boom\\n'); sys.exit(3)")
    items = [("load", "load", None, None, None), ("route", "route", None, None, "int32")]
    # both workers die: whichever the caller hears of first is named
    with pytest.raises(ChildProcessError,
                       match=r"status 3\) while compiling '(load|route)': boom"):
        warmup_workers.run(items, [[0], [1]], None, 2)


def test_ctrl_c_stops_the_workers(tmp_path, monkeypatch):
    """SIGINT while workers compile into an empty cache: KeyboardInterrupt here, soon, and no
    worker left running."""
    import signal
    import threading
    import time

    import numba
    started = []
    popen = subprocess.Popen

    class Recorded(popen):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            started.append(self)

    monkeypatch.setattr(subprocess, "Popen", Recorded)
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path / "numba"))  # the workers' too
    timer = threading.Timer(2.0, lambda: os.kill(os.getpid(), signal.SIGINT))
    t0 = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            digraph.warmup(modes=["scc"], families=["linear"], jobs=2)
    finally:
        timer.cancel()
    assert time.perf_counter() - t0 < 10.0
    assert len(started) == 2 and all(p.poll() is not None for p in started)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_kcore_warms_the_schedule_it_runs():
    from digraph.dispatch.engines.peel import cpu as peel
    from digraph.dispatch.engines import warm
    g = _graph()
    warm.WARM.difference_update({k for k in warm.WARM if k[0] == "peel"})
    digraph.run(g, "kcore")
    warmed = {k[3] for k in warm.WARM if k[0] == "peel"}
    assert warmed == {peel.schedule(g)} == {"bz"}  # not PKC on a graph of 6 arcs


def _fresh_kernel():
    """A kernel of a digraph module compiled now (no cache): fires Numba's compile event."""
    def f(x):
        return x + 1
    f.__module__ = "digraph._test_first_run"
    return njit(f)


@pytest.fixture
def notice_state(monkeypatch):
    monkeypatch.setitem(compiling._state, "announced", False)
    monkeypatch.delenv("DIGRAPH_QUIET", raising=False)
    old = compiling.set_sink(None)
    yield
    compiling.set_sink(old)


def test_notice_once_per_process_and_compile_seconds_counted(notice_state, capsys):
    c0 = compiling.seconds()
    _fresh_kernel()(1)
    _fresh_kernel()(2)
    err = capsys.readouterr().err
    assert err.count(compiling.NOTICE) == 1 and err.startswith("digraph: compiling kernels")
    assert compiling.seconds() > c0
    _fresh_kernel()(3)
    assert compiling.NOTICE not in capsys.readouterr().err


def test_notice_silenced_by_env_and_sent_to_a_sink(notice_state, monkeypatch, capsys):
    monkeypatch.setenv("DIGRAPH_QUIET", "1")
    _fresh_kernel()(1)
    assert capsys.readouterr().err == ""
    monkeypatch.setitem(compiling._state, "announced", False)
    monkeypatch.delenv("DIGRAPH_QUIET")
    seen = []
    compiling.set_sink(seen.append)
    _fresh_kernel()(1)
    assert seen == [compiling.NOTICE] and capsys.readouterr().err == ""


def test_user_kernels_do_not_announce(notice_state, capsys):
    @njit
    def g(x):  # a kernel of the test module, not of digraph
        return x * 2
    g(3)
    assert capsys.readouterr().err == ""


def test_lazy_compilation_is_time_compile_not_compute(monkeypatch):
    """A kernel first called inside the compute phase counts in time_compile."""
    import importlib
    R = importlib.import_module("digraph.run")
    from digraph.dispatch.engines.power import cpu as power
    kernel = _fresh_kernel()
    solve = power.solve

    def slow_first(*a, **k):
        kernel(np.int64(len(a)))  # compiled here, in the middle of the run
        return solve(*a, **k)

    monkeypatch.setattr(power, "solve", slow_first)
    monkeypatch.setenv("DIGRAPH_QUIET", "1")
    c0 = compiling.seconds()
    r = R.run(_graph(), "pagerank", mode="power")
    c = compiling.seconds() - c0
    assert c > 0.01
    assert r.stats["time_compile"] >= c * 0.99
    assert r.stats["time_compute"] < r.stats["time_total"] - c * 0.99


def test_cli_warmup(capsys):
    assert cli.main(["warmup", "--mode", "peel", "--family", "hindex"]) == 0
    out = capsys.readouterr().out
    assert "hindex peel" in out and out.rstrip().splitlines()[-1].startswith("done: 3 items")
    assert cli.main(["warmup", "--mode", "peel", "-q"]) == 0
    assert capsys.readouterr().out == ""


def test_cli_run_keeps_stderr_clean_without_progress(notice_state, tmp_path, capsys):
    """Scripts that parse stderr see nothing new: the notice follows --progress, not the run."""
    f = tmp_path / "g.el"
    f.write_text("0 1\n1 2\n2 0\n")
    old = compiling.set_sink(None)
    try:
        assert cli.main(["run", "pagerank", str(f), "--top", "0"]) == 0
        assert compiling._state["sink"] is None  # restored after the command
    finally:
        compiling.set_sink(old)
    assert "compiling kernels" not in capsys.readouterr().err


def _copy_package(dest):
    shutil.copytree(ROOT / "digraph", dest / "digraph",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi", "*.nbc"))
    for p in [dest, *dest.rglob("*")]:
        mode = p.stat().st_mode
        p.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


SCRIPT = """
import sys, time
import digraph
from digraph import compiling
g = digraph.load(([0, 1, 2, 2, 3, 4], [1, 2, 0, 3, 4, 3]))
t = time.perf_counter()
for _ in range(2):
    r = digraph.run(g, "pagerank", tol=1e-10)
assert abs(sum(r.values) - 1.0) < 1e-9
print(digraph.__file__, compiling.seconds(), r.stats["mode"])
"""


def test_read_only_install_caches_in_the_user_folder(tmp_path):
    """A copy of the package in a read-only folder (as in a system site-packages): the first
    process compiles, says so once and caches in $XDG_CACHE_HOME/numba; the second loads
    everything from there, silently."""
    site = tmp_path / "site"
    site.mkdir()
    _copy_package(site)
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "DIGRAPH_QUIET", "PYTHONPATH")}
    env.update(PYTHONPATH=str(site), HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"))
    try:
        runs = [subprocess.run(unprivileged([sys.executable, "-c", SCRIPT]), env=env, cwd=tmp_path,
                               capture_output=True, text=True, timeout=600) for _ in range(2)]
    finally:
        for p in [site, *site.rglob("*")]:
            p.chmod(p.stat().st_mode | stat.S_IWUSR)
    for r in runs:
        assert r.returncode == 0, r.stderr
    first, second = runs
    assert first.stdout.split()[0].startswith(str(site))  # the read-only copy ran
    assert first.stderr.count("compiling kernels, first run only") == 1
    assert float(first.stdout.split()[1]) > 0.5  # it compiled
    assert not list(site.rglob("*.nbi"))  # nothing written into the package
    assert list((home / ".cache" / "numba").rglob("*.nbi"))  # but into the user cache
    assert "compiling kernels" not in second.stderr
    assert float(second.stdout.split()[1]) == 0.0  # every kernel came from the cache


def test_no_writable_cache_anywhere_falls_back_to_tempdir(tmp_path, monkeypatch, capsys):
    import tempfile

    import numba
    monkeypatch.setattr(numba.config, "CACHE_DIR", "")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(compiling, "_writable", lambda folder: False)
    folder = compiling.ensure_cache_location()
    assert folder == str(tmp_path / f"digraph-numba-cache-{os.getuid()}") == numba.config.CACHE_DIR
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700  # private: Numba's cache files are pickles
    err = capsys.readouterr().err
    assert err.startswith("digraph: warning: ") and err.count("\n") == 1 and folder in err
    os.chmod(folder, 0o777)  # a folder others may write into is not used: a fresh one is
    monkeypatch.setattr(numba.config, "CACHE_DIR", "")
    other = compiling.ensure_cache_location()
    assert other != folder and os.path.basename(other).startswith("digraph-numba-cache-")
    assert stat.S_IMODE(os.stat(other).st_mode) == 0o700 and other in capsys.readouterr().err
    monkeypatch.setattr(compiling, "_writable", lambda folder: True)
    monkeypatch.setattr(numba.config, "CACHE_DIR", "")
    assert compiling.ensure_cache_location() is None


def test_a_process_private_cache_folder_is_removed_at_exit(tmp_path):
    """The fresh folder used when the shared one cannot be trusted is this process's: gone after."""
    shared = tmp_path / f"digraph-numba-cache-{os.getuid()}"
    shared.mkdir()
    os.chmod(shared, 0o777)  # others may write into it: not used
    script = ("import sys, tempfile, numba\n"
              "from digraph import compiling\n"
              "numba.config.CACHE_DIR = ''\n"
              "tempfile.tempdir = sys.argv[1]\n"
              "compiling._writable = lambda folder: False\n"
              "print(compiling.ensure_cache_location())\n")
    r = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True,
                       timeout=300, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert r.returncode == 0, r.stderr
    folder = Path(r.stdout.split()[-1])
    assert folder.parent == tmp_path and folder != shared
    assert not folder.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [shared.name]
