"""Progress of a run as it goes: the round drivers report each round here.

Every round loop (:mod:`digraph.dispatch.driver`) calls :func:`report` once a round with the
rounds run so far and, for sums, the current bound on the answer's error.  Nobody listens unless a
caller asked (:func:`listening`: the command line's progress bar, ``digraph.run(progress=True)``),
and then a listener sees every report of runs started in the same thread or task (a
:class:`contextvars.ContextVar`, so concurrent runs in other threads report to their own
listeners).  Unheard, a report costs one context-variable lookup.

:class:`RoundBar` is the listener that shows it: a `tqdm <https://tqdm.github.io>`_ bar of the
rounds, the current error bound against ``tol`` and the frontier, which appears only once a run has
gone on for a second (``delay``) and renders as a widget in notebooks (``tqdm.auto``).
"""

import functools
import math
import numbers
import sys
import time
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np

from .errors import ConvergenceError, InvalidParameterError, short_repr

__all__ = ["report", "listening", "target", "RoundBar", "with_progress"]

_LISTENER = ContextVar("digraph_progress_listener", default=None)
_STEPS = 100  # RoundBar's units: hundredths of a decade of the error bound
_BAR = "{desc}: {percentage:3.0f}%|{bar}| {elapsed}{postfix}"  # RoundBar's line for sums
_ROUNDS = "{desc}: {elapsed}{postfix}"  # and without a bound


def report(rounds, bound=None, **info):
    """Tell the listener (if any) that ``rounds`` rounds have run and, for sums, that the answer's
    error is now at most ``bound``; ``info`` carries engine-specific extras (``frontier=``, the
    active vertices of a worklist round).  A listener that raises does not stop the run."""
    listener = _LISTENER.get()
    if listener is None:
        return
    try:
        listener(rounds, bound, **info)
    except Exception:  # noqa: BLE001 - a broken progress display must not break a run
        _LISTENER.set(None)


@contextmanager
def listening(callback):
    """Within the block, every :func:`report` calls ``callback(rounds, bound, **info)``."""
    token = _LISTENER.set(callback)
    try:
        yield callback
    finally:
        _LISTENER.reset(token)


def target(tol):
    """Tell the listener (if any, and if it has a ``target`` method) the ``tol`` the run's error
    bound must reach: :func:`digraph.run` calls it once, for sums, before the first round."""
    listener = _LISTENER.get()
    aim = getattr(listener, "target", None)
    if aim is None:
        return
    try:
        aim(tol)
    except Exception:  # noqa: BLE001 - as in report()
        pass


class RoundBar:
    """A progress bar of a run's rounds: a listener for :func:`listening` (what
    ``digraph.run(progress=True)`` and the command line show).

    One line, drawn with tqdm (``tqdm.auto`` when ``file`` is None, so a widget in notebooks)::

        digraph:  62%|██████▏   | 00:03, round 41, bound 3.2e-05 → tol 1e-08, frontier 12,345

    For sums, the bar fills on a log scale, from the first bound reported to ``tol``
    (``log10(first / bound) / log10(first / tol)``); for min/max and k-core (no bound) the line
    shows the rounds (and the frontier) without a bar.  Nothing is drawn until the run has gone on
    for ``delay`` seconds, counted from the listener's creation (short runs print nothing), and
    then at most once every ``mininterval`` seconds.  ``disable=True`` draws nothing.  A failure
    of the display (a closed stream, a missing widget library) turns it off; it never raises into
    the run.  :meth:`close` (or leaving a ``with`` block) ends it: ``leave=True`` keeps the last
    state on screen, ``leave=False`` clears the line.

    ``tol`` may be left None: :func:`digraph.run` supplies it (:func:`target`).
    """

    def __init__(self, tol=None, *, desc="digraph", file=None, delay=1.0, mininterval=0.2,
                 leave=True, disable=False):
        self.tol = tol
        self.desc = desc
        self.file = file
        self.delay = float(delay)
        self.mininterval = float(mininterval)
        self.leave = leave
        self.disable = bool(disable)
        self.rounds = 0  # as last reported
        self.bound = None
        self.first_bound = None  # the bar's 0 %, for sums
        self._t0 = time.time()  # tqdm's clock: the delay counts from here
        self._bar = None
        self._total = None  # log10(first bound / tol): the bar's length, for sums
        self._closed = False

    def target(self, tol):
        """The ``tol`` the bound must reach (the bar's 100 %); set before the first report."""
        self.tol = float(tol) if tol is not None else None

    def __call__(self, rounds, bound=None, **info):
        if self.disable or self._closed:
            return
        try:
            self._show(rounds, bound, info)
        except Exception:  # noqa: BLE001 - a broken display is turned off, the run goes on
            self._fail()

    def close(self):
        """End the bar (idempotent)."""
        self._closed = True
        bar, self._bar = self._bar, None
        if bar is not None:
            try:
                bar.close()
            except Exception:  # noqa: BLE001
                pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    # ------------------------------------------------------------------------ internals

    def _show(self, rounds, bound, info):
        self.rounds = rounds
        if bound is not None:
            bound = float(bound)
            self.bound = bound
            if self.first_bound is None and math.isfinite(bound) and bound > 0:
                self.first_bound = bound
        rescale = False
        if self._total is None and self.first_bound is not None and self.tol is not None and \
                self.first_bound > self.tol > 0:  # a bar from the first finite bound to tol
            self._total = max(1, round(_STEPS * math.log10(self.first_bound / self.tol)))
            rescale = self._bar is not None  # until now rounds alone (the bound was inf)
        text = self._text(rounds, bound, info)
        if self._total is None:
            n = rounds
        elif bound is None:
            n = self._bar.n if self._bar is not None else 0
        else:
            n = self._position(bound)
        if self._bar is None:
            self._bar = self._open(n, text)
        else:
            if rescale:
                self._rescale(self._bar)
            self._bar.set_postfix_str(text, refresh=False)
        self._bar.update(n - self._bar.n)  # draws once mininterval and delay have passed

    def _open(self, n, text):
        total = self._total
        tqdm = _tqdm_class(self.file)
        kw = dict(desc=self.desc, total=total, initial=n, postfix=text, file=self.file,
                  leave=self.leave, delay=self.delay, mininterval=self.mininterval, miniters=0,
                  dynamic_ncols=True, bar_format=_BAR if total else _ROUNDS)
        try:
            bar = tqdm(**kw)
        except Exception:  # noqa: BLE001 - e.g. tqdm.notebook without ipywidgets
            from tqdm.std import tqdm as plain
            bar = plain(**kw)
        # the delay and the elapsed time count from the start of the run, not the first round
        bar.start_t = bar.last_print_t = min(self._t0, bar.start_t)
        return bar

    def _rescale(self, bar):
        """A line of rounds becomes a bar: its length is known now."""
        bar.total = self._total
        bar.bar_format = _BAR
        box = getattr(bar, "container", None)  # tqdm.notebook's widget: an 'info' bar until now
        if box is not None:
            widget = box.children[1]
            widget.max = self._total
            widget.bar_style = ""
            widget.layout.width = None

    def _position(self, bound):
        """The bar's position for ``bound``: the decades gained since the first bound (in
        hundredths, integers for notebook widgets), in [0, total]."""
        if bound <= self.tol:
            return self._total
        if not math.isfinite(bound) or not bound > 0:
            return 0
        return min(max(round(_STEPS * math.log10(self.first_bound / bound)), 0), self._total)

    def _text(self, rounds, bound, info):
        parts = [f"round {rounds:,}"]
        if bound is not None:
            part = f"bound {bound:.2g}"
            if self.tol is not None:
                part += f" {self._arrow} tol {self.tol:.2g}"
            parts.append(part)
        frontier = info.get("frontier")
        if frontier is not None:
            parts.append(f"frontier {frontier:,}" if isinstance(frontier, numbers.Integral) else
                         f"frontier {frontier}")
        return ", ".join(parts)

    @functools.cached_property
    def _arrow(self):
        """"→", or "->" where the stream's encoding has no arrow."""
        stream = self.file if self.file is not None else sys.stderr
        encoding = getattr(stream, "encoding", None) or "utf-8"
        try:
            "→".encode(encoding)
        except (LookupError, TypeError, UnicodeEncodeError):
            return "->"
        return "→"

    def _fail(self):
        self.disable = True
        bar, self._bar = self._bar, None
        if bar is not None:
            try:
                bar.disable = True  # no final draw on a stream that just failed
            except Exception:  # noqa: BLE001
                pass


def _tqdm_class(file):
    """tqdm.auto's class (a widget in notebooks) for the default stream, the console one for an
    explicit stream."""
    if file is None:
        import warnings
        with warnings.catch_warnings():  # tqdm warns when a notebook lacks ipywidgets
            warnings.simplefilter("ignore")
            from tqdm.auto import tqdm
        return tqdm
    from tqdm.std import tqdm
    return tqdm


def with_progress(run):
    """``run(..., progress=)``: the whole call reports its rounds (:mod:`digraph.progress`) to a
    :class:`~.progress.RoundBar` (``True``) or to the listener given, and a RoundBar is
    closed when the run ends, however it ends."""
    @functools.wraps(run)
    def with_progress(*args, progress=False, **kwargs):
        if isinstance(progress, np.bool_):
            progress = bool(progress)
        if progress is False or progress is None:
            return run(*args, **kwargs)
        if progress is True:
            progress = RoundBar()
        elif not callable(progress):
            raise InvalidParameterError(f"progress must be True, False or a listener "
                                        f"(a digraph.progress.RoundBar), "
                                        f"got {short_repr(progress)}")
        bar = progress if isinstance(progress, RoundBar) else None
        try:
            with listening(progress):
                result = run(*args, **kwargs)
            last_round(bar, result)
            return result
        except ConvergenceError as e:
            last_round(bar, e.result)
            raise
        finally:
            if bar is not None:
                bar.close()
    return with_progress


def last_round(bar, result):
    """A RoundBar's last state: the run's rounds and certified bound, which its last report may
    precede (a final certificate)."""
    if bar is not None and result is not None:
        bar(result.stats.get("rounds", 0), result.stats.get("error_bound"))
