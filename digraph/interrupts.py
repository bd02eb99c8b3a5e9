"""Ctrl-C without crashes: SIGINT is deferred while compiled kernels run and raised between them.

CPython runs a Python-level signal handler in the main thread whenever the interpreter next checks
for signals.  Inside a call to a Numba kernel that check can happen in the dispatcher's C code
(boxing the results, say): a ``KeyboardInterrupt`` raised there surfaces as ``SystemError:
CPUDispatcher(...) returned a result with an exception set`` or, where the C code does not expect
the failure, as a segmentation fault.  And while worker threads run ``nogil`` kernels on shared
arrays (the preprocessing's joblib threads, the cache reader's checksum threads), a
``KeyboardInterrupt`` that unwinds the main thread frees those arrays or ends the interpreter
under the workers' feet.

The cure is to never raise from the signal handler while digraph works.  Every public entry point
that runs kernels (``digraph.load``, ``Graph.from_arrays``, ``digraph.preprocess``,
``PathSet.load``, ``digraph.run``) runs inside :func:`deferred`: a Ctrl-C only sets a flag, the
code checks it at safe points -- between stages, chunks and rounds (:func:`check`) -- and raises
``KeyboardInterrupt`` there, with every worker thread joined and no kernel running.  On leaving
the outermost block a pending interrupt is raised.  Callers see an ordinary ``KeyboardInterrupt``
(the command line turns it into ``digraph: interrupted``, exit 130).

Only the main thread's default handler (``signal.default_int_handler``) is replaced, and only
for the duration of the call; a handler of the caller's own (or ``SIG_IGN``) is left alone, and
calls from other threads run undeferred.  This module imports nothing of digraph: any layer may
import it.
"""

import functools
import os
import signal
import sys
import threading

__all__ = ["deferred", "deferring", "check", "pending", "command_line_import", "is_command_line",
           "ignore_from_now"]

_state = {"depth": 0, "pending": False, "previous": None}


def _handler(signum, frame):
    """SIGINT inside :func:`deferred`: remember it, raise nothing (the next :func:`check` will)."""
    _state["pending"] = True


def pending():
    """True when a Ctrl-C arrived inside the current :func:`deferred` block and is not yet
    raised."""
    return _state["pending"]


def check():
    """Raise ``KeyboardInterrupt`` if a Ctrl-C arrived since the block began (a safe point).

    Call between kernels, never inside one: at a stage boundary, between chunks, once a round.
    Costs one dictionary lookup when nothing is pending.
    """
    if _state["pending"]:
        _state["pending"] = False
        raise KeyboardInterrupt


class deferred:
    """Context manager: within it, SIGINT is recorded instead of raised (see the module text).

    Nested blocks share the outermost one's handler.  Leaving the outermost block restores the
    previous handler and raises ``KeyboardInterrupt`` if a Ctrl-C is still pending -- also when
    another exception is leaving the block, since the user asked to stop.
    """

    __slots__ = ("_active",)

    def __enter__(self):
        self._active = False
        if threading.current_thread() is not threading.main_thread():
            return self
        if _state["depth"] == 0:
            try:
                current = signal.getsignal(signal.SIGINT)
            except (ValueError, OSError):  # pragma: no cover - no signals here
                return self
            if current is not signal.default_int_handler:
                return self
            signal.signal(signal.SIGINT, _handler)
            _state["previous"] = current
            _state["pending"] = False
        _state["depth"] += 1
        self._active = True
        return self

    def __exit__(self, exc_type, exc, tb):
        if not self._active:
            return False
        _state["depth"] -= 1
        if _state["depth"] == 0:
            signal.signal(signal.SIGINT, _state["previous"])
            _state["previous"] = None
            if _state["pending"]:
                _state["pending"] = False
                if exc_type is not KeyboardInterrupt:
                    raise KeyboardInterrupt
        return False


def deferring(func):
    """Decorator: run ``func`` inside :func:`deferred`."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with deferred():
            return func(*args, **kwargs)

    return wrapper


#: The console scripts whose start :func:`command_line_import` guards.
_COMMANDS = ("digraph", "digraph-demo")


def _exit_interrupted(signum, frame):
    """SIGINT while a command line imports the package: nothing is written yet; say so, exit 130."""
    try:
        sys.stderr.write("digraph: interrupted\n")
        sys.stderr.flush()
    finally:
        os._exit(130)


def is_command_line():
    """True in the main thread of one of digraph's console scripts (``sys.argv[0]`` names
    ``digraph`` or ``digraph-demo`` and ``__main__`` is a script, not a module run with ``-m``)."""
    main = sys.modules.get("__main__")
    argv0 = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return (argv0 in _COMMANDS and getattr(main, "__spec__", None) is None
            and threading.current_thread() is threading.main_thread())


def ignore_from_now():
    """A console script whose work is done (its output written, its status decided) ignores
    SIGINT while the interpreter shuts down: a late Ctrl-C changes nothing, so it must not turn a
    finished command into one killed by a signal.  Only in :func:`is_command_line` processes."""
    if is_command_line():
        try:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        except (ValueError, OSError):  # pragma: no cover
            pass


class command_line_import:
    """Context manager around the package's own imports (``digraph/__init__.py``).

    When the process is one of digraph's console scripts (``sys.argv[0]`` names ``digraph`` or
    ``digraph-demo`` and ``__main__`` is a script, not a module run with ``-m``), a Ctrl-C while
    Numba and the kernels' modules load -- before the command line's own handling exists -- ends
    the process with ``digraph: interrupted`` and exit status 130, as it does later, instead of
    an import traceback.  Anywhere else (a library import, a notebook) it does nothing.
    """

    __slots__ = ("_previous",)

    def __enter__(self):
        self._previous = None
        if is_command_line():
            try:
                if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
                    self._previous = signal.signal(signal.SIGINT, _exit_interrupted)
            except (ValueError, OSError):  # pragma: no cover
                self._previous = None
        return self

    def __exit__(self, exc_type, exc, tb):
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
        return False
