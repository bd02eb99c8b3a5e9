"""The progress display of the ``digraph`` command line (:mod:`digraph.cli`): :class:`Progress`
(stage names and elapsed seconds on stderr, a live line on a terminal, a round bar once a run goes
on for :data:`BAR_DELAY` seconds) and the ``--progress`` / ``--quiet`` options."""

import threading
import time


def add_progress_options(parser):
    g = parser.add_mutually_exclusive_group()
    g.add_argument("--progress", action="store_true",
                   help="show progress on stderr even when it is not a terminal")
    g.add_argument("-q", "--quiet", action="store_true",
                   help="print nothing on stdout or stderr but errors (files are still written)")


BAR_DELAY = 1.0
"""Seconds a run goes on before its round bar replaces the stage's live line."""


class Progress:
    """Stage names and elapsed seconds on a stream (stderr).

    On a terminal the current stage's line is redrawn with its elapsed time every ``interval``
    seconds by a daemon thread, until a round bar (:meth:`round_bar`) takes the line over;
    elsewhere (``--progress`` into a file or pipe) each stage prints one line when it ends.  A
    disabled Progress prints nothing.
    """

    def __init__(self, stream, enabled, interval=0.2, bar_delay=None):
        self.stream = stream
        self.enabled = bool(enabled)
        self.live = self.enabled and stream_isatty(stream)
        self.interval = interval
        self.bar_delay = bar_delay  # the round bar's default delay; None: BAR_DELAY
        self._stop = None
        self._thread = None
        self._stage = None
        self._t0 = 0.0

    def start(self, stage):
        """Begin ``stage`` (ends the previous one)."""
        self.end()
        if not self.enabled:
            return
        self._stage, self._t0 = stage, time.perf_counter()
        if self.live:
            self._stop = threading.Event()
            self._thread = threading.Thread(target=self._tick, daemon=True)
            self._draw()
            self._thread.start()

    def end(self, detail=""):
        """End the current stage, printing its elapsed time and ``detail``."""
        if self._stage is None:
            return
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
        dt = time.perf_counter() - self._t0
        line = f"digraph: {self._stage}: {dt:.2f} s" + (f", {detail}" if detail else "")
        self._write(("\r\033[K" if self.live else "") + line + "\n")
        self._stage = None

    def note(self, text):
        """A line of its own (e.g. the stage times of a preprocessing run)."""
        if self.enabled:
            self.end()
            self._write(f"digraph: {text}\n")

    def aside(self, text):
        """A line of its own without ending the current stage (a live line is redrawn after it)."""
        if self.enabled:
            self._write(("\r\033[K" if self.live else "") + f"digraph: {text}\n")

    def round_bar(self, delay=None):
        """A :class:`digraph.progress.RoundBar` of the current stage on a terminal (None
        elsewhere, or when tqdm is missing): it appears after ``delay`` seconds (default the
        Progress's ``bar_delay``, else :data:`BAR_DELAY`), stops the live line's redrawing when it
        does, and leaves no line behind (the stage's own line follows when it ends)."""
        if not self.live or self._stage is None:
            return None
        delay = self.bar_delay if delay is None else delay
        try:
            import tqdm  # noqa: F401 - a dependency, but the stage lines do without it
        except ImportError:
            return None
        from .progress import RoundBar
        return RoundBar(desc=f"digraph: {self._stage}",
                        file=_OnFirstWrite(self.stream, self._pause),
                        delay=BAR_DELAY if delay is None else delay, leave=False)

    def _pause(self):
        """A round bar takes over the live line: stop redrawing it, and clear it."""
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
        self._write("\r\033[K")

    def abort(self):
        """Stop drawing without a final line (an error follows)."""
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
            self._write("\n")
        self._stage = None

    def _tick(self):
        while not self._stop.wait(self.interval):
            self._draw()

    def _draw(self):
        dt = time.perf_counter() - self._t0
        self._write(f"\r\033[Kdigraph: {self._stage}... {dt:.1f} s")

    def _write(self, text):
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed or broken stderr must not fail the run
            pass


class _OnFirstWrite:
    """``stream``, calling ``hook()`` before the first text is written to it."""

    def __init__(self, stream, hook):
        self._stream = stream
        self._hook = hook

    def write(self, text):
        if text and self._hook is not None:
            hook, self._hook = self._hook, None
            hook()
        return self._stream.write(text)

    def flush(self):
        self._stream.flush()

    def __getattr__(self, name):  # encoding, fileno, isatty: tqdm sizes and styles the bar by them
        return getattr(self._stream, name)


def stream_isatty(stream):
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
