"""Ctrl-C anywhere ends cleanly: ``digraph: interrupted``, exit 130, no traceback, no crash, nothing
half-written (:mod:`digraph.interrupts`).

The command-line tests send SIGINT to ``digraph run`` and ``digraph preprocess`` on an edge list of
a million arcs at delays spread over the whole command (start, load, preprocessing, rounds,
output).  ``DIGRAPH_SIGINT_TRIALS`` sets how many delays per command (default 8; the issue's check
ran 60 per command).  Each outcome must be a clean interruption or a normal completion.
"""

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
from digraph import interrupts
from digraph.paths import PathSet

ROOT = Path(__file__).resolve().parents[1]
TRIALS = int(os.environ.get("DIGRAPH_SIGINT_TRIALS", "8"))
CRASH_WORDS = ("Traceback", "Fatal Python error", "SystemError", "Segmentation", "core dumped")


@pytest.fixture(scope="module")
def big_file(tmp_path_factory):
    """An edge list of 10^6 arcs over 10^5 vertices (about 12 MB of text)."""
    path = tmp_path_factory.mktemp("big") / "big.txt"
    rng = np.random.default_rng(3)
    arcs = rng.integers(0, 100_000, size=(1_000_000, 2))
    np.savetxt(path, arcs, fmt="%d")
    return path


def _env():
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
                PYTHONFAULTHANDLER="1")


def _command(*args):
    # the console script's own start: __main__ is a script named digraph, as pip installs it
    stub = "import sys; sys.argv[0] = 'digraph'; from digraph.cli import main; sys.exit(main())"
    return [sys.executable, "-c", stub, *map(str, args)]


def _interrupt(cmd, delay, cwd):
    """Run ``cmd``, send SIGINT after ``delay`` seconds; (exit status, stdout, stderr)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(), cwd=cwd)
    timer = threading.Timer(delay, lambda: p.poll() is None and p.send_signal(signal.SIGINT))
    timer.start()
    try:
        out, err = p.communicate(timeout=300)
    finally:
        timer.cancel()
    return p.returncode, out, err


def _classify(rc, out, err):
    """``"interrupted"``, ``"completed"``, ``"before digraph"`` or ``"crash: ..."``.

    ``"before digraph"``: the signal came while the interpreter was still finding the package,
    before any line of digraph ran (a traceback of the command's own ``-c`` line alone, ending in
    ``KeyboardInterrupt``): on a loaded machine the start can take longer than the first delay,
    and no code of digraph's can handle a signal before it runs."""
    lines = err.strip().splitlines()
    if (lines[:1] == ["Traceback (most recent call last):"] and lines[-1:] == ["KeyboardInterrupt"]
            and all(ln.startswith('  File "<string>"') for ln in lines[1:-1])):
        return "before digraph"
    if any(w in err for w in CRASH_WORDS):
        return f"crash: exit {rc}: {err.strip()[-400:]}"
    if rc == 130 and err.strip().splitlines()[-1:] == ["digraph: interrupted"]:
        return "interrupted"
    if rc == 0:
        return "completed"
    return f"crash: exit {rc}: {err.strip()[-400:]}"


def _sweep(cmd, cwd, after=None):
    """Time one full run, then interrupt ``TRIALS`` runs at delays spread over it."""
    t0 = time.perf_counter()
    rc, out, err = _interrupt(cmd, 1e9, cwd)
    full = time.perf_counter() - t0
    assert rc == 0, err
    outcomes = []
    # from inside the imports (the interpreter's own start, ~0.1 s, is CPython's) to past the end
    for delay in np.linspace(0.25, 1.05 * full, TRIALS):
        got = _classify(*_interrupt(cmd, float(delay), cwd))
        if after is not None and not got.startswith("crash"):
            after(got)
        outcomes.append((round(float(delay), 2), got))
    crashes = [o for o in outcomes if o[1].startswith("crash")]
    assert not crashes, crashes
    assert any(o[1] == "interrupted" for o in outcomes), outcomes
    return outcomes


def test_ctrl_c_during_a_run_is_clean(big_file, tmp_path):
    out = tmp_path / "ranks.csv"
    out.write_text("old\n")

    def whole(outcome):  # --out is replaced whole or not at all
        text = out.read_text()
        assert text == "old\n" or (text.startswith("vertex,value\n") and text.count("\n") == 100_001)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["ranks.csv"]

    _sweep(_command("run", "pagerank", big_file, "--top", "0", "--out", out), tmp_path, whole)


def test_ctrl_c_during_preprocessing_is_clean(big_file, tmp_path):
    cache = tmp_path / "cache"

    def whole(outcome):  # no cache, or one that loads and checks
        if cache.exists():
            if (cache / "manifest.json").exists():
                PathSet.load(cache)
            else:  # interrupted before the first manifest: nothing but the marker and lock
                assert {p.name for p in cache.iterdir()} <= {".lock", ".digraph-cache"}, list(cache.iterdir())

    _sweep(_command("preprocess", big_file, "-o", cache, "--jobs", "2"), tmp_path, whole)


# ----------------------------------------------------------------------------- in process

def _sigint_after(delay):
    """Send this process SIGINT after ``delay`` seconds (from a timer thread)."""
    t = threading.Timer(delay, lambda: os.kill(os.getpid(), signal.SIGINT))
    t.start()
    return t


def test_a_deferred_interrupt_is_raised_at_the_next_check_and_the_handler_restored():
    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        with interrupts.deferred():
            assert signal.getsignal(signal.SIGINT) is not before
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)  # the handler has run: nothing was raised
            assert interrupts.pending()
            interrupts.check()
    assert not interrupts.pending()
    assert signal.getsignal(signal.SIGINT) is before
    with pytest.raises(KeyboardInterrupt):  # raised on leaving the outermost block
        with interrupts.deferred():
            with interrupts.deferred():
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.05)
            assert interrupts.pending()  # the inner block does not raise it
    assert signal.getsignal(signal.SIGINT) is before


def test_a_handler_of_the_callers_own_is_left_alone():
    seen = []
    old = signal.signal(signal.SIGINT, lambda s, f: seen.append(s))
    try:
        with interrupts.deferred():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
            interrupts.check()  # nothing pending: the caller's handler got it
        assert seen == [signal.SIGINT]
    finally:
        signal.signal(signal.SIGINT, old)


@pytest.mark.parametrize("mode", ["scc", "bsp", "power"])
def test_ctrl_c_inside_digraph_run_raises_keyboardinterrupt_and_the_next_run_is_right(big_file, mode):
    g = digraph.load(big_file)
    want = digraph.run(g, "pagerank", mode=mode, tol=1e-10).values
    t0 = time.perf_counter()
    digraph.run(g, "pagerank", mode=mode, tol=1e-10)
    full = time.perf_counter() - t0
    timer = _sigint_after(full / 3)
    try:
        with pytest.raises(KeyboardInterrupt):
            digraph.run(g, "pagerank", mode=mode, tol=1e-10)
            time.sleep(full)  # a run that finished first still gets the interrupt here
    finally:
        timer.cancel()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    np.testing.assert_allclose(digraph.run(g, "pagerank", mode=mode, tol=1e-10).values, want, atol=1e-12)
