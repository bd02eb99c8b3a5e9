"""The round drivers: the protocol of a run, written once per family.

An engine supplies only what is its own (one round, the statistics of its state, a certificate);
the driver decides when to certify, when to stop, whether the run still makes progress, and
reports each round to :mod:`digraph.progress`.  Every loop of rounds or sweeps of an engine is
one of these:

* :func:`linear`, :func:`worklist`, :func:`power`: a whole run of a push, worklist or power
  engine (below);
* :func:`budget_sweeps`: sweeps of an engine with its own rounds (the path modes) under a
  pending-mass budget lowered 4x a sweep, each certified, ending as :func:`ending` says;
* :func:`settle`: sweeps of a layered engine on a min/max system until a whole check finds
  nothing pending;
* :func:`layer`: the rounds of one layer of a layered engine (the CPU path modes), until its
  check passes, the rounds run out or its level stalls;
* :func:`local`: the sweeps of one part to its local fixpoint (a split component of the SCC
  engine, the dual weights' search), at most a given number;
* :func:`queued`: rounds queued on a GPU, the device's verdict read every few rounds (the one
  synchronisation).

Linear systems (:func:`linear`), ``x = b + A x``, for every push engine (CPU ``bsp`` and
``vertex-async``, one GPU's ``bsp`` and ``vertex-async``).  Each round:

1. ``scan(theta)`` → the tracked residual's ``(‖r‖₁, ‖r‖∞, Σx, active)``, ``active`` the vertices
   whose residual exceeds ``theta``;
2. the bound :func:`~.convergence.linear_error_bound` of those; when it reaches
   the (tightened) tolerance, or nothing is active, ``certify()`` recomputes the residual exactly
   from the state (the engine carries on from that one) and
   :func:`~.convergence.verdict` decides: converged, a retry towards a tighter
   target, or stop;
3. ``max_iter``; a stall (:class:`Stall`: the bound has not fallen for :func:`stall_rounds`
   rounds while above ``tol``) ends the run as ``"stalled"``, after a last certificate, for the
   engine's fallback (:func:`hand_over`);
4. ``step(theta)``: one round; the engine counts its arcs and vertices, the driver the rounds.

So ``converged`` always means ``error_bound <= tol`` or ``floor_limited`` (with the floor in
``stats["error_floor"]``), for every engine that runs here.

Worklist systems (:func:`worklist`: min/max, h-index) stop when nothing is active; the power
iteration (:func:`power`) on its own bound and stop rule, with the router's probe.
"""

import math
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from .. import progress
from ..compiling import work_clock
from ..interrupts import check as _check_interrupt
from .convergence import (certified, linear_error_bound, power_stop, residual_threshold,
                          tightened, verdict)

__all__ = ["DriverSettings", "DEFAULT", "Stall", "stall_rounds", "linear", "worklist", "Rounds",
           "power", "hand_over", "ending", "budget_sweeps", "settle", "layer", "local", "queued",
           "OverTime", "deadline", "safe_point"]


class OverTime(Exception):
    """Raised at a safe point (:func:`safe_point`) once the run has passed the :func:`deadline`
    its caller set; the caller catches it and runs another engine (an exploring run of the
    router's measured choice, :func:`digraph.dispatch.engines.on_cpu.run`)."""


_DEADLINE = [None]


@contextmanager
def deadline(at):
    """Within the block, :func:`safe_point` raises :class:`OverTime` once
    :func:`~digraph.compiling.work_clock` (which stands still while Numba compiles) passes
    ``at`` (None: no deadline).  Blocks do not nest."""
    _DEADLINE[0] = at
    try:
        yield
    finally:
        _DEADLINE[0] = None


def safe_point():
    """Between rounds, sweeps and steps, never inside a kernel: raise a pending Ctrl-C
    (:mod:`digraph.interrupts`), then :class:`OverTime` past the :func:`deadline`."""
    _check_interrupt()
    at = _DEADLINE[0]
    if at is not None and work_clock() > at:
        raise OverTime


@dataclass(frozen=True)
class DriverSettings:
    """When a run counts as stalled.

    A round makes progress when its bound falls below ``stall_fall`` times the best bound seen
    since the last certificate; a run whose bound has made no progress for
    :func:`stall_rounds` rounds (at least ``stall_min_rounds``, and at least the rounds that
    Jacobi's rate γ needs to halve the error, ``ln 2 / (1 − γ)``) is stalled.  A healthy
    engine's bound falls at least at γ a round (sound bounds of a contraction), so this never
    stops a run that converges, however slowly; what it catches is a tracked residual stuck on
    its rounding, or an engine whose thresholds leave it nothing to do while the bound is above
    ``tol``."""

    stall_fall: float = 0.999
    stall_min_rounds: int = 64


DEFAULT = DriverSettings()


def stall_rounds(gammas, settings=DEFAULT):
    """Rounds without progress after which a linear run is stalled (see :class:`DriverSettings`)."""
    g = min(gammas)
    if not g < 1.0:
        return settings.stall_min_rounds
    return max(settings.stall_min_rounds, math.ceil(math.log(2.0) / max(1.0 - g, 1e-12)))


class Stall:
    """The best level seen and the rounds since it last fell by ``fall``."""

    def __init__(self, rounds, fall=DEFAULT.stall_fall):
        self.rounds = rounds
        self.fall = fall
        self.reset()

    def reset(self):
        """Forget the history (after a certificate replaces the tracked residual)."""
        self.best = np.inf
        self.since = 0

    def update(self, level):
        """Record this round's ``level``; True when it has not fallen for ``rounds`` rounds."""
        if level < self.fall * self.best:
            self.best, self.since = level, 0
            return False
        self.since += 1
        return self.since >= self.rounds


def linear(engine, *, n, gammas, normalize, tol, max_iter, stats, settings=DEFAULT):
    """Run a linear push ``engine`` (see the module docstring); returns ``"converged"``,
    ``"unconverged"`` (``max_iter``, or certification gave up) or ``"stalled"``.

    ``engine`` has ``scan(theta) -> (r1, rmax, sum_x, active)``, ``step(theta)`` and
    ``certify() -> (bound, r1, floor)``, and may have ``finish() -> (r1, rmax, sum_x) or None``
    (rounds still in flight when ``max_iter`` stopped the run, settled; the sharded GPUs run one
    round ahead of the host); ``stats["error_bound"]`` and ``stats["residual_l1"]`` are set on
    return.
    """
    stall = Stall(stall_rounds(gammas, settings), settings.stall_fall)
    theta = 0.0
    bound = r1 = np.inf
    outcome = None
    while outcome is None:
        r1, rmax, sum_x, active = engine.scan(theta)
        bound = linear_error_bound(r1, rmax, sum_x, n, gammas, normalize)
        if bound <= tightened(tol, stats) or active == 0:
            bound, r1, floor = engine.certify()
            said = verdict(bound, r1, floor, tol, stats)
            if said != "retry":
                outcome = "converged" if said == "converged" else "unconverged"
                break
            stall.reset()
            theta = residual_threshold(tightened(tol, stats), sum_x, n, gammas, normalize)
            continue
        if stats["rounds"] >= max_iter:
            outcome = "unconverged"
            break
        if stall.update(bound):
            stats["stalled_at"] = {"round": int(stats["rounds"]), "bound": float(bound)}
            bound, r1, floor = engine.certify()
            said = verdict(bound, r1, floor, tol, stats)
            outcome = "converged" if said == "converged" else "stalled"
            break
        safe_point()  # a Ctrl-C, or the deadline, between rounds
        progress.report(stats["rounds"], bound)
        engine.step(theta)
        stats["rounds"] += 1
        theta = residual_threshold(tightened(tol, stats), sum_x, n, gammas, normalize)
    finish = getattr(engine, "finish", None)
    if finish is not None:  # an engine with rounds in flight settles them
        fresh = finish()
        if fresh is not None and outcome != "converged":
            r1, rmax, sum_x = fresh
            bound = linear_error_bound(r1, rmax, sum_x, n, gammas, normalize)
    stats["error_bound"] = float(bound)
    stats["residual_l1"] = float(r1)
    return outcome


class Rounds:
    """A worklist engine made of two functions, for a loop whose state lives in a closure:
    ``active()`` and ``step()`` as :func:`worklist` calls them."""

    def __init__(self, active, step):
        self.active, self.step = active, step


def worklist(engine, *, max_iter, stats):
    """Run a worklist ``engine`` (min/max or h-index): ``active()`` → the vertices to process
    (0: done), ``step()`` → one round (the engine counts its work, the driver the rounds).
    Returns True when nothing is left active, False at ``max_iter``."""
    while True:
        active = engine.active()
        if active == 0:
            return True
        if stats["rounds"] >= max_iter:
            return False
        safe_point()  # a Ctrl-C, or the deadline, between rounds
        progress.report(stats["rounds"], None, frontier=int(active))
        engine.step()
        stats["rounds"] += 1


def power(step, *, g1, tol, max_iter, stats, trip=None, probe_window=None, judge=None,
          last_diff=np.inf):
    """Run power rounds: ``step()`` does one and returns ``(bound, delta, diff)`` (the bound on
    the error after it, the rounding floor ``‖δ‖₁`` of it, and ``‖x_{k+1} − x_k‖₁``); the stop
    rule is :func:`digraph.dispatch.convergence.power_stop`.  Returns (rounds run, converged):
    True, False at ``max_iter``, or None when ``trip`` (the router's probe) ended the run
    undecided — from the third round on (up to round ``probe_window`` when given: an engine
    that accelerates the rounds after it, whose differences do not fall at the plain rate), a
    round whose difference is more than ``trip · g1`` times the previous one (``probe_ratio``
    and ``probe_rounds`` set in ``stats``).  ``stats["error_bound"]`` is the last round's bound.

    ``judge`` (a :class:`Judge`, with ``trip``): a round that trips does not end the run at once.
    ``judge.begin(round)`` is called (the engine accelerates the rounds from there), and
    ``judge.rounds`` rounds later ``judge.verdict(measure)`` decides from a :class:`Measure` of
    the rounds: True goes on to the end (no more probing), False ends the run undecided.

    ``last_diff``: the difference of the round before the first (a run resumed mid-way, as a
    Dask worker's batch of rounds is, :mod:`digraph.dispatch.engines.power.cluster_batch`),
    which the stop rule's floor test reads."""
    rounds = 0
    converged = False
    bound = np.inf
    diffs = []
    seconds = []  # each round's, for the judge only
    tripped = None
    timed = judge is not None and trip is not None
    t0 = work_clock() if timed else 0.0
    while not converged and rounds < max_iter:
        safe_point()  # a Ctrl-C, or the deadline, between rounds
        bound, delta, diff = step()
        rounds += 1
        if timed:
            t1 = work_clock()
            seconds.append(t1 - t0)
            t0 = t1
        converged = power_stop(bound, delta, diff, last_diff, g1, tol, stats)
        if not converged and tripped is not None and rounds == tripped + judge.rounds:
            plain, judged = seconds[1:tripped] or seconds[:1], seconds[tripped:]
            measure = Measure(plain_s=float(np.median(plain)),
                              judged_s=float(np.median(judged)),
                              spread=max(_spread(plain), _spread(judged[1:])),
                              rate=float((diff / diffs[-1]) ** (1.0 / judge.rounds))
                              if diffs[-1] > 0 else 0.0,
                              bound=float(bound), rounds=rounds)
            stats["probe_rate"] = measure.rate
            if not judge.verdict(measure):
                converged = None
                break
            trip = None
        elif (not converged and trip is not None and tripped is None
              and (probe_window is None or rounds <= probe_window)):
            diffs.append(diff)
            if len(diffs) >= 3 and diffs[-1] > trip * g1 * diffs[-2]:
                stats["probe_ratio"] = float(diffs[-1] / diffs[-2])
                stats["probe_rounds"] = rounds
                if judge is None:
                    converged = None
                    break
                tripped = rounds
                judge.begin(rounds)
        if not converged:
            progress.report(stats["rounds"] + rounds, bound)
        last_diff = diff
    stats["error_bound"] = float(bound)
    return rounds, converged


def _spread(seconds):
    """The upper quartile of ``seconds`` over the lower (1.0 for fewer than two, or a zero):
    how far apart the rounds' times lie where one slow round does not move a median."""
    if len(seconds) < 2:
        return 1.0
    lo, hi = np.percentile(seconds, [25, 75])
    return float(hi / lo) if lo > 0 else 1.0


@dataclass(frozen=True)
class Measure:
    """What a power probe measured of its rounds, for a :class:`Judge`: ``plain_s`` (the median
    seconds of a plain round before the trip, the first round left out), ``judged_s`` (the median
    seconds of a round since, so that what the first accelerated round builds once, e.g. the
    sweeps' factors, is not taken for the cost of every round left; both without Numba's compilation,
    :func:`digraph.compiling.work_clock`), ``rate`` (the geometric mean ratio of successive differences
    over the judged rounds), ``bound`` (the error bound reached), ``rounds`` (run so far) and
    ``spread`` (the upper quartile of the rounds' seconds over the lower, in whichever of the
    two sets of rounds varied more, the first accelerated round left out: how far one median
    may be from the host's usual)."""

    plain_s: float
    judged_s: float
    rate: float
    bound: float
    rounds: int
    spread: float = 1.0


class Judge:
    """The protocol of :func:`power`'s ``judge``: ``rounds`` (how many rounds after the trip
    to measure), ``begin(round)`` and ``verdict(measure) → bool`` (go on).  A subclass sets
    ``rounds``; this base begins nothing and never lets a run go on."""

    rounds = None

    def begin(self, round):  # pragma: no cover - protocol
        pass

    def verdict(self, measure):  # pragma: no cover - protocol
        return False


def hand_over(stats, to, why):
    """Record that the run goes on in engine ``to`` (a mode name, e.g. ``"vertex-async"``) from
    the state reached, for reason ``why``: ``stats["finished_by"]`` names it, and
    ``stats["handed_over"]`` and the route's ``steps`` (``stats["route"]["steps"]``, when the run
    has a route) list every hand-over of the run."""
    stats["finished_by"] = to
    step = {"to": to, "why": why, "round": int(stats["rounds"])}
    stats.setdefault("handed_over", []).append(step)
    route = stats.get("route")
    if isinstance(route, dict):
        route.setdefault("steps", []).append(dict(step, code="hand-over"))


def ending(stats, certificate, tol, *, capped, then, why, retry=False):
    """How a linear run with its own rounds ends, once its answer has the ``certificate``
    ``(bound, r1, floor)`` of :func:`~.convergence.certified_bound`:
    ``"converged"`` when :func:`~.convergence.certified`; ``"capped"`` when
    ``max_iter`` stopped it; ``"retry"`` when ``retry`` (the engine tries again, tighter);
    else ``"hand-over"``: the run goes on in mode ``then`` (its engine's
    :attr:`~.engines.registry.Engine.after_stall`) from the state reached, for
    reason ``why`` (recorded by :func:`hand_over`)."""
    bound, r1, floor = certificate
    if certified(bound, r1, floor, tol, stats):
        return "converged"
    if capped:
        return "capped"
    if retry:
        return "retry"
    hand_over(stats, then, why)
    return "hand-over"


def budget_sweeps(engine, *, tol, max_iter, max_sweeps, then, stats):
    """Sweeps of an engine with its own rounds under a pending-mass budget: ``engine.sweep(f)``
    runs rounds until the pending mass is within ``f`` times the budget of ``tol`` (or the
    rounds run out: it returns True then), ``engine.certify()`` gives the certificate
    ``(bound, r1, floor)`` of the state reached, and ``engine.floored(certificate)`` tells
    whether the rounds stopped on their rounding floor (asked only when the certificate fails
    and rounds are left).  A failed sweep that did not hit the floor is followed by another at
    a 4x lower budget, up to ``max_sweeps`` sweeps (``stats["path_sweeps"]``); otherwise the
    run goes on in mode ``then`` (:func:`hand_over`).  Returns (``"converged"``, ``"capped"``
    or ``"hand-over"``, the last certificate)."""
    factor = 1.0
    while True:
        safe_point()  # a Ctrl-C, or the deadline, between sweeps
        out_of_rounds = engine.sweep(factor)
        certificate = engine.certify()
        capped = bool(out_of_rounds) or stats["rounds"] >= max_iter
        floored = False
        if not capped and not certified(*certificate, tol, stats):
            floored = engine.floored(certificate)
        why = ("the walk's mirrors reached their rounding floor" if floored
               else "the sweeps ran out")
        end = ending(stats, certificate, tol, capped=capped, then=then, why=why,
                     retry=not floored and stats.get("path_sweeps", 1) < max_sweeps)
        if end != "retry":
            return end, certificate
        factor /= 4.0
        stats["path_sweeps"] = stats.get("path_sweeps", 1) + 1


def settle(sweep, settled, *, max_iter, stats):
    """Sweeps of a layered engine on a worklist system: ``sweep()`` runs every layer once (False:
    its rounds ran out), then ``settled()`` checks every part; until it finds nothing pending
    (True) or ``max_iter`` rounds have run (False)."""
    while True:
        safe_point()  # a Ctrl-C, or the deadline, between sweeps
        if not sweep():
            return False
        if settled():
            return True
        if stats["rounds"] >= max_iter:
            return False


def layer(engine, *, max_iter, stats, stall):
    """The rounds of one layer: ``engine.check()`` → ``(level, done)`` (the layer's pending
    level, and whether it is within the layer's share of the budget or nothing is active; an
    engine that fuses its check into the walk walks here, and its ``walk()`` does nothing), then
    ``engine.walk()``, until the check passes (``"done"``), ``max_iter`` rounds have run and a
    last ``engine.settled()`` check does not pass (``"capped"``), or the level has not fallen
    for ``stall`` rounds (a :class:`Stall`: ``"stalled"``, the mirrors' rounding floor).  The
    engine counts its rounds in ``stats["rounds"]``."""
    watch = Stall(stall, DEFAULT.stall_fall)
    while True:
        if stats["rounds"] >= max_iter:
            return "done" if engine.settled() else "capped"
        level, done = engine.check()
        if done:
            return "done"
        if watch.update(level):
            return "stalled"
        safe_point()  # a Ctrl-C, or the deadline, between rounds
        progress.report(stats["rounds"], level)
        engine.walk()


def local(done, sweep, *, max_sweeps):
    """Sweeps of one part to its local fixpoint: while not ``done()``, ``sweep(left)`` makes at
    most ``left`` sweeps and returns how many (0: nothing left that it may do), at most
    ``max_sweeps`` in all.  Returns (sweeps, capped)."""
    sweeps = 0
    while not done():
        safe_point()  # a Ctrl-C, or the deadline, between sweeps
        if sweeps >= max_sweeps:
            return sweeps, True
        made = sweep(max_sweeps - sweeps)
        if made == 0:
            break
        sweeps += made
    return sweeps, False


def queued(queue, done, *, per_check, max_rounds):
    """Rounds queued on a device back to back: ``queue(r)`` queues rounds ``r … r + per_check −
    1``, then ``done(r + per_check)`` reads the device's verdict (the one synchronisation),
    until it says done or at least ``max_rounds`` rounds were queued.  Returns (rounds queued,
    done)."""
    r = 0
    while r < max_rounds:
        safe_point()  # a Ctrl-C, or the deadline, between checks
        queue(r)
        r += per_check
        if done(r):
            return r, True
    return r, False
