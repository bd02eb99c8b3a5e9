"""Successive over-relaxation (SOR) of Gauss–Seidel sweeps, its factor ω chosen at run time: the
SCC engine's (:mod:`digraph.smx.cpu.scc`, :mod:`digraph.smx.cpu.scc_split`) and the power
iteration's (:mod:`digraph.smx.cpu.gauss_seidel`).

A push of vertex ``v`` with factor ω adds ``ω·r_v`` to ``x_v``, leaves ``(1 − ω)·r_v`` as its
residual and sends ``ω·r_v`` along its out-arcs, so every residual stays exact and ω = 1 is the
plain sweep.  For a consistently ordered matrix whose Gauss–Seidel sweeps shrink the error by ``q``
a sweep, Young's theorem gives the best factor

    ω* = 2 / (1 + √(1 − q))

(D. M. Young, *Iterative methods for solving partial difference equations of elliptic type*,
Trans. AMS 76, 1954; R. S. Varga, *Matrix Iterative Analysis*, §4.3).  A graph's matrix is not
consistently ordered, and ω > 1 may slow a component's sweeps or make them diverge (a web
graph's), so the factor is measured, not assumed, per component:

1. ``warm`` sweeps at ω = 1, then the rate ``q`` (pending mass per sweep, geometric mean) over at
   least ``window`` more;
2. where ``q > min_rate`` (slow enough to gain), ω = min(ω*, ``wmax``); after one settling sweep
   its rate over a window must be below ``q``;
3. ω is kept while every later window's rate stays below ``q``; at the first window that is not,
   the sweeps go back to ω = 1 for good (what ω left behind is worked off at the plain rate: the
   residuals are exact, only time is lost).

The policy lives in a small state array (:data:`STATE` floats) so that a kernel's sweep loop and a
Python loop (a split component's outbox sweeps) run the same steps; distances are in sweeps, so a
caller that makes several sweeps between checks (:func:`~.scc_split.sweep_chunks`) gets the same
rates.  ``params`` = (ω, warm, window, min_rate, wmax): ω > 0 fixes the factor (1.0: plain
Gauss–Seidel), ω = 0 chooses it as above (:attr:`~digraph.dispatch.engines.scc.cpu.
DagPushSettings.relaxation`).
"""

import numpy as np
from numba import njit

from ...errors import InvalidParameterError

__all__ = ["STATE", "PARAMS", "params", "start", "after"]

STATE = 5
"""Floats of a component's policy state: ω, phase, q, mass at the window's start, its sweep."""
PARAMS = 5
"""Floats of the policy's parameters: ω (0: chosen at run time), warm, window, min_rate, wmax."""

_MEASURE, _RELAXED, _FIXED = 0.0, 1.0, 2.0


def params(omega="auto", warm=3, window=2, min_rate=0.3, wmax=1.5, owner="relaxation"):
    """The policy's :data:`PARAMS` as a float64 array, checked: ``omega`` ``"auto"`` (chosen at
    run time) or a fixed factor in (0, 2); ``owner`` names the setting in an error."""
    if isinstance(omega, str):
        if omega != "auto":
            raise InvalidParameterError(f"{owner} must be 'auto' or a number in (0, 2), got "
                                        f"{omega!r}")
        omega = 0.0
    elif not 0.0 < float(omega) < 2.0:
        raise InvalidParameterError(f"{owner} must be 'auto' or a number in (0, 2) (SOR "
                                    f"diverges outside), got {omega!r}")
    if warm < 1 or window < 1 or not 1.0 <= wmax < 2.0:
        raise InvalidParameterError(f"{owner}: the warm sweeps and the window must be at least "
                                    "1 and the largest factor in [1, 2)")
    return np.array([float(omega), warm, window, min_rate, wmax], np.float64)


@njit(cache=True, nogil=True, inline="always")
def start(state, params, mass):
    """Reset ``state`` for a component whose pending mass is ``mass``; returns its first ω."""
    fixed = params[0] > 0.0
    state[0] = params[0] if fixed else 1.0
    state[1] = _FIXED if fixed else _MEASURE
    state[2] = 0.0
    state[3] = mass
    state[4] = 0.0
    return state[0]


@njit(cache=True, nogil=True, inline="always")
def _rate(state, sweeps, mass):
    span = sweeps - state[4]
    return (mass / state[3]) ** (1.0 / span) if state[3] > 0.0 and span > 0.0 else 0.0


@njit(cache=True, nogil=True, inline="always")
def after(state, params, sweeps, mass):
    """Update ``state`` after the component's ``sweeps``-th sweep (counted from its start) left
    ``mass`` pending; returns the ω of the next sweep."""
    phase = state[1]
    if phase == _FIXED:
        return state[0]
    warm, window, min_rate, wmax = params[1], params[2], params[3], params[4]
    if phase == _MEASURE:
        if sweeps < warm:
            return 1.0
        if state[4] == 0.0:  # the measured window starts after the warm sweeps
            state[3] = mass
            state[4] = sweeps
            return 1.0
        if sweeps - state[4] < window:
            return 1.0
        q = _rate(state, sweeps, mass)
        state[2] = q
        if min_rate < q < 1.0:
            state[0] = min(2.0 / (1.0 + (1.0 - q) ** 0.5), wmax)
            state[1] = _RELAXED
            state[4] = -sweeps  # the trial's window starts after one settling sweep
        else:
            state[1] = _FIXED
        return state[0]
    if state[4] <= 0.0:  # the settling sweep is done
        if sweeps + state[4] < 1.0:
            return state[0]
        state[3] = mass
        state[4] = sweeps
        return state[0]
    if sweeps - state[4] < window:
        return state[0]
    if not _rate(state, sweeps, mass) < state[2]:  # no faster than ω = 1: back for good
        state[0] = 1.0
        state[1] = _FIXED
        return 1.0
    state[3] = mass  # the next window
    state[4] = sweeps
    return state[0]
