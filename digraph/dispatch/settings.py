"""The engine settings of one run.

Every engine keeps its tunable constants in a frozen dataclass (``BspSettings``,
``MultiGpuSettings``, ...) with a module-level default, registered here by :func:`register`.
A caller changes them for one run by passing settings objects, never by replacing a module's
default::

    from dataclasses import replace
    from digraph.dispatch.engines.push.gpus import DEFAULT as MULTI_GPU
    digraph.run(g, "pagerank", device="cuda:0,1", settings=[replace(MULTI_GPU, min_arcs_per_gpu=0)])

:func:`digraph.run` makes them the run's settings (:func:`using`) and an engine reads its own with
:func:`current` (``current(DEFAULT)``: the run's object of that class, else the default).  The
run's settings live in a context variable: they hold for the calling thread's run and for the
worker threads an engine starts through :func:`executor`, and never leak into another run.

A leaf module: it imports nothing of digraph but :mod:`digraph.errors`.
"""

import contextvars
import dataclasses
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

from ..errors import InvalidParameterError

__all__ = ["register", "current", "using", "check", "executor"]

_KNOWN = {}
"""Settings class → its registered default."""

_RUN = contextvars.ContextVar("digraph_run_settings", default=None)


def register(default):
    """Record ``default`` (a frozen dataclass instance) as the default of its class; returns it."""
    if not (dataclasses.is_dataclass(default) and not isinstance(default, type)):
        raise TypeError(f"{default!r} is not a settings dataclass instance")
    _KNOWN[type(default)] = default
    return default


def current(default):
    """The run's settings of ``default``'s class when the run passed one, else ``default``."""
    run = _RUN.get()
    if run:
        got = run.get(type(default))
        if got is not None:
            return got
    return default


def check(settings):
    """``settings`` (None, one settings object, or an iterable of them) as a tuple, each an
    instance of a registered settings class and at most one per class; raises
    :class:`~digraph.errors.InvalidParameterError` naming what is wrong."""
    if settings is None:
        return ()
    objs = (settings,) if dataclasses.is_dataclass(settings) else settings
    try:
        objs = tuple(objs)
    except TypeError:
        raise InvalidParameterError(
            f"settings must be a settings object or a list of them (such as "
            f"dataclasses.replace(digraph.dispatch.engines.push.cpu_bsp.DEFAULT, ...)), "
            f"not {settings!r}") from None
    seen = set()
    for s in objs:
        if type(s) not in _KNOWN:
            known = ", ".join(sorted(c.__name__ for c in _KNOWN))
            raise InvalidParameterError(
                f"settings: {s!r} is not an engine's settings object (known: {known})")
        if type(s) in seen:
            raise InvalidParameterError(f"settings: two {type(s).__name__} objects given")
        seen.add(type(s))
    return objs


@contextmanager
def using(settings):
    """The run's settings for the duration of the block (added to any already in force)."""
    objs = check(settings)
    if not objs:
        yield
        return
    token = _RUN.set({**(_RUN.get() or {}), **{type(s): s for s in objs}})
    try:
        yield
    finally:
        _RUN.reset(token)


def _adopt(run):
    _RUN.set(run)


def executor(workers):
    """A :class:`~concurrent.futures.ThreadPoolExecutor` whose threads run with the settings of
    the run that made it."""
    return ThreadPoolExecutor(max_workers=workers, initializer=_adopt, initargs=(_RUN.get(),))
