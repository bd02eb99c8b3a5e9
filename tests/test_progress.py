"""Progress of a run (issue 19, item 4): :mod:`digraph.progress`'s listeners, the tqdm
:class:`~digraph.progress.RoundBar`, ``digraph.run(progress=)`` and the command line's bar."""

import io
import re
import threading

import numpy as np
import pytest

import digraph
from digraph import cli
from digraph.errors import ConvergenceError, InvalidParameterError
from digraph.progress import RoundBar, listening, report, target

pytest.importorskip("tqdm")


class _Terminal(io.StringIO):
    """A stream that says it is a terminal (with an encoding that has the arrow)."""

    encoding = "utf-8"

    def isatty(self):
        return True


def _graph():
    rng = np.random.default_rng(3)
    return digraph.load((rng.integers(0, 60, 400), rng.integers(0, 60, 400)))


# ---------------------------------------------------------------------------- report / listening

def test_listener_receives_reports_in_its_block_only():
    seen = []
    report(1, 0.5)  # nobody listens: nothing happens
    with listening(lambda rounds, bound, **info: seen.append((rounds, bound, info))):
        report(1, 0.5)
        report(2, None, frontier=7)
        with listening(None):  # a warm-up's tiny runs are not heard
            report(99, 1.0)
    report(3, 0.1)
    assert seen == [(1, 0.5, {}), (2, None, {"frontier": 7})]


def test_listener_that_raises_does_not_break_report():
    calls = []

    def broken(rounds, bound, **info):
        calls.append(rounds)
        raise RuntimeError("display gone")

    with listening(broken):
        report(1, 0.5)  # does not raise
        report(2, 0.25)  # the broken listener was dropped
    assert calls == [1]
    target(1e-6)  # nobody listening: nothing happens


def test_listeners_are_per_thread():
    seen = []
    with listening(lambda r, b, **i: seen.append(r)):
        t = threading.Thread(target=report, args=(5, 0.1))
        t.start()
        t.join()
        report(1, 0.1)
    assert seen == [1]


# ---------------------------------------------------------------------------- RoundBar

def test_round_bar_shows_rounds_bound_and_tol():
    f = io.StringIO()
    with RoundBar(1e-8, file=f, delay=0, mininterval=0) as bar, listening(bar):
        for r, b in enumerate([1e-1, 1e-3, 1e-5, 1e-7, 1e-9], 1):
            report(r, b, frontier=1234)
    out = f.getvalue()
    assert "round 3, bound 1e-05 → tol 1e-08, frontier 1,234" in out
    assert out.endswith("round 5, bound 1e-09 → tol 1e-08, frontier 1,234\n")  # leave=True
    assert " 57%|" in out and "100%|" in out  # log scale: 4 of 7 decades, then done
    assert bar.rounds == 5 and bar.bound == 1e-9 and bar.first_bound == 1e-1


def test_round_bar_arrow_and_log_scale_on_a_utf8_terminal():
    f = _Terminal()
    bar = RoundBar(file=f, delay=0, mininterval=0, leave=False)
    with listening(bar):
        target(1e-6)  # what digraph.run tells it
        report(1, 1.0)
        report(2, 1e-3)
    bar.close()
    out = f.getvalue()
    assert "round 2, bound 0.001 → tol 1e-06" in out and " 50%|" in out
    assert out.endswith("\r")  # leave=False: the line is cleared


def test_round_bar_without_a_bound_counts_rounds_and_frontier():
    f = io.StringIO()
    with RoundBar(file=f, delay=0, mininterval=0) as bar, listening(bar):
        for r in range(1, 4):
            report(r, None, frontier=10 * r)
    out = f.getvalue()
    assert "round 3, frontier 30" in out and "%|" not in out and "tol" not in out


def test_round_bar_becomes_a_bar_when_the_bound_turns_finite():
    f = io.StringIO()
    with RoundBar(1e-4, file=f, delay=0, mininterval=0) as bar, listening(bar):
        report(0, float("inf"))
        report(1, 1.0)
        report(2, 1e-2)
    out = f.getvalue()
    assert "round 0, bound inf" in out and " 50%|" in out


def test_round_bar_is_silent_before_its_delay_and_when_disabled():
    f = io.StringIO()
    with RoundBar(1e-8, file=f, delay=60) as bar, listening(bar):  # a short run
        for r in range(1, 20):
            report(r, 10.0 ** -r)
    assert f.getvalue() == ""
    g = io.StringIO()
    with RoundBar(1e-8, file=g, delay=0, disable=True) as bar, listening(bar):
        report(1, 0.1)
    assert g.getvalue() == "" and bar._bar is None


def test_round_bar_throttles_its_redraws():
    f = io.StringIO()
    with RoundBar(1e-8, file=f, delay=0, mininterval=60) as bar, listening(bar):
        for r in range(1, 200):
            report(r, 0.5 ** r)
    assert f.getvalue().count("\r") <= 3  # the first draw and the final one, not 199


def test_round_bar_survives_a_broken_stream():
    class Broken(io.StringIO):
        def write(self, text):
            raise OSError("stderr is gone")

    bar = RoundBar(1e-8, file=Broken(), delay=0, mininterval=0)
    with listening(bar):
        report(1, 0.1)  # neither raises
        report(2, 0.01)
    bar.close()
    bar.close()  # idempotent
    assert bar.disable


# ---------------------------------------------------------------------------- digraph.run

def test_run_with_progress_works_and_closes_the_bar():
    g = _graph()
    plain = digraph.run(g, "pagerank", tol=1e-8)
    shown = digraph.run(g, "pagerank", tol=1e-8, progress=True)  # reports may be zero or many
    assert np.array_equal(plain.values, shown.values)
    assert digraph.run(g, "sssp", source=int(g.vertex_ids[0]), progress=True).stats["converged"]
    with pytest.raises(InvalidParameterError, match="progress"):
        digraph.run(g, "pagerank", progress="yes")


def test_run_reports_to_a_given_bar_with_its_tol():
    g = _graph()
    f = io.StringIO()
    bar = RoundBar(file=f, delay=0, mininterval=0)
    r = digraph.run(g, "pagerank", tol=1e-7, progress=bar)
    assert bar.tol == 1e-7  # supplied by the run
    assert bar._closed  # closed by the run
    assert bar.rounds == r.stats["rounds"]  # the last state is the run's
    assert f"round {r.stats['rounds']:,}" in f.getvalue()


def test_run_with_a_callback_and_warm_ups_unheard(monkeypatch):
    g = _graph()

    def rounds_heard():
        seen = []
        digraph.run(g, "pagerank", mode="bsp", tol=1e-8,
                    progress=lambda rounds, bound, **info: seen.append(rounds))
        return seen

    from digraph.dispatch.engines import warm
    monkeypatch.setattr(warm, "WARM", set())  # the kernels warm up again
    cold = rounds_heard()  # with the warm-up's tiny runs, which must not be heard
    assert rounds_heard() == cold


def test_unconverged_run_closes_its_bar():
    g = _graph()
    f = io.StringIO()
    bar = RoundBar(file=f, delay=0, mininterval=0)
    with pytest.raises(ConvergenceError):
        digraph.run(g, "pagerank", mode="bsp", tol=1e-12, max_iter=2, progress=bar)
    assert bar._closed and "tol 1e-12" in f.getvalue()


# ---------------------------------------------------------------------------- command line

@pytest.fixture
def graph_file(tmp_path):
    path = tmp_path / "g.el"
    rng = np.random.default_rng(5)
    path.write_text("".join(f"{a} {b}\n" for a, b in zip(rng.integers(0, 50, 300),
                                                          rng.integers(0, 50, 300))))
    return path


@pytest.fixture
def reporting_run(monkeypatch):
    """Runs that report a few rounds whatever the engine does, and a bar without delay."""
    import sys
    R = sys.modules["digraph.run"]
    finish = R._finish

    def reporting_finish(*args, **kwargs):
        for r in range(1, 4):
            report(r, 10.0 ** -r, frontier=5 * r)
        return finish(*args, **kwargs)

    monkeypatch.setattr(R, "_finish", reporting_finish)
    monkeypatch.setattr(cli, "BAR_DELAY", 0.0)
    round_bar = cli.Progress.round_bar

    def undelayed(self, delay=None):
        bar = round_bar(self, delay)
        if bar is not None:
            bar.mininterval = 0  # every round drawn
        return bar

    monkeypatch.setattr(cli.Progress, "round_bar", undelayed)


def _main(monkeypatch, stream, argv):
    monkeypatch.setattr("sys.stderr", stream)
    return cli.main(argv)


def test_progress_stops_its_ticker_while_a_bar_shows():
    f = _Terminal()
    p = cli.Progress(f, True, interval=0.01)
    p.start("running pagerank")
    bar = p.round_bar(delay=0)
    assert bar is not None and p._thread is not None
    bar.mininterval = 0  # every round drawn
    with listening(bar):
        target(1e-8)
        report(1, 0.1)
        assert p._thread is None  # the bar took the line over
        report(2, 1e-4)
    bar.close()
    p.end("2 rounds")
    out = f.getvalue()
    assert "round 2, bound 0.0001 → tol 1e-08" in out and " 43%|" in out
    assert re.search(r"\r\x1b\[Kdigraph: running pagerank: \d+\.\d\d s, 2 rounds\n$", out)
    assert cli.Progress(io.StringIO(), True).round_bar() is None  # not a terminal: no bar


def test_cli_run_shows_the_bar_on_a_terminal(graph_file, reporting_run, monkeypatch, capsys):
    err = _Terminal()
    assert _main(monkeypatch, err, ["run", "pagerank", str(graph_file), "--top", "0"]) == 0
    out = err.getvalue()
    assert "round 3, bound 0.001 → tol 1e-06, frontier 15" in out
    assert "\r\x1b[Kdigraph: running pagerank: " in out  # the stage's line after the bar
    assert out.endswith("\n") and "statistics" in capsys.readouterr().out


def test_cli_progress_into_a_file_has_stage_lines_only(graph_file, reporting_run, monkeypatch):
    err = io.StringIO()
    assert _main(monkeypatch, err, ["run", "pagerank", str(graph_file), "--top", "0",
                                    "--progress"]) == 0
    out = err.getvalue()
    assert "\r" not in out and "round 3" not in out and "digraph: running pagerank: " in out


def test_cli_quiet_prints_nothing_on_stderr(graph_file, reporting_run, monkeypatch, capsys):
    err = _Terminal()
    assert _main(monkeypatch, err, ["run", "pagerank", str(graph_file), "--quiet"]) == 0
    assert err.getvalue() == "" and capsys.readouterr().out == ""
