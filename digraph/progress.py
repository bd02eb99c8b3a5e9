"""Progress of a run as it goes: the round drivers report each round here.

Every round loop (:mod:`digraph.dispatch.driver`) calls :func:`report` once a round with the
rounds run so far and, for sums, the current bound on the answer's error.  Nobody listens unless a
caller asked (:func:`listening`: the command line's progress bar, ``digraph.run(progress=True)``),
and then a listener sees every report of runs started in the same thread or task (a
:class:`contextvars.ContextVar`, so concurrent runs in other threads report to their own
listeners).  Unheard, a report costs one context-variable lookup.
"""

from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["report", "listening"]

_LISTENER = ContextVar("digraph_progress_listener", default=None)


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
