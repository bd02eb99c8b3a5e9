"""Gauss–Seidel sweeps as the CPU power iteration's accelerator (:mod:`.cpu`,
:attr:`~.cpu.PowerSettings.accelerator` ``"gauss-seidel"``): the round function that sweeps the
iterate in place (:func:`digraph.smx.cpu.gauss_seidel.sweep`) once the plain rounds slow down,
and ends with a power round ``G(x)`` of the swept iterate, whose bound is the stop.

The bound of :mod:`.cpu` holds for the power step of any non-negative ``x``: the answer is
always such a step, so the sweeps need no bound of their own.  They are cheaper than Anderson's
mixed rounds (a sweep is one pass over the arcs, with no record or mix pass over the
difference rings) and converge about as fast on graphs of one giant component, where the plain
rate is slow (``benchmarks/proto_gauss_seidel.py``).

When to check.  A sweep's ``‖Δx‖₁`` estimates the power step's difference; once ``γ1 ‖Δx‖₁ /
(1 − γ1)`` times the ratio learnt at the last check (1 at first) is within ``tol``, the sweep's
iterate is normalised and a power round run: its bound ends the run, or the next sweeps start
from its ``G(x)`` and the ratio of the check's difference to the sweep's is learnt.  A sweep
whose difference does not fall below the last one's (the rounding floor, or a stall) is checked
too, so that the stop's floor rule (:func:`~digraph.dispatch.convergence.power_stop`) reads the
power rounds' differences and rounding.
"""

import numpy as np

from ....smx.cpu import gauss_seidel as K
from ....smx.cpu import relaxation as R
from ....smx.cpu.serial import pick
from ...runtime.cpu_tasks import arc_tasks

__all__ = ["sweep_rounds", "Factors", "accelerator", "crossing_share"]


def crossing_share(graph, threads):
    """The share of the in-arcs between the ranges a sweep on ``threads`` threads cuts the
    vertices into (one a thread, :func:`~digraph.dispatch.runtime.cpu_tasks.arc_tasks`): 0 on
    one thread; kept on the graph per thread count."""
    if threads <= 1 or graph.num_arcs == 0:
        return 0.0
    return graph._cached(("sweep crossing share", int(threads)), lambda: float(K.crossing_arcs(
        arc_tasks(graph, threads=threads, per_thread=1), graph.in_offsets, graph.in_sources))
        / graph.num_arcs)


def accelerator(graph, threads, settings):
    """``settings.accelerator``, ``"auto"`` resolved: the Gauss–Seidel sweeps on one thread, and
    on up to ``settings.sweep_threads`` threads (``None``: any count) where at most
    ``settings.sweep_cross`` of the in-arcs cross the threads' ranges (read from the sweep's
    start there, so the sweeps lose their edge); Anderson's mixing otherwise."""
    if settings.accelerator != "auto":
        return settings.accelerator
    cap = settings.sweep_threads
    if threads == 1 or ((cap is None or threads <= cap)
                        and crossing_share(graph, threads) <= settings.sweep_cross):
        return "gauss-seidel"
    return "anderson"


class Factors:
    """What a sweep needs of the system besides the pull's arrays: the diagonal ``A_ww`` (the
    self-loops' coefficients), the column sums of ``A`` (for the sums of a power round's
    iterate) and the dangling scale ``g`` at its vertices ``d_idx``.  ``src_scale`` and
    ``dst_scale`` are arrays of ``n``; the self-loops' arc ids are kept on the graph."""

    def __init__(self, graph, src_scale, dst_scale, in_coef, has_coef, colsum, d_idx, d_g):
        n = graph.num_vertices
        loops = graph._cached(("self-loop arcs",), lambda: np.flatnonzero(
            graph.arc_sources == graph.out_targets))
        diag = np.zeros(n, np.float64)
        if loops.size:
            w = graph.out_targets[loops]
            coef = np.ones(loops.size)
            if has_coef:  # in_coef is in in-arc order: its arc's coefficient by arc id
                by_arc = np.empty(graph.num_arcs)
                by_arc[graph.in_arcs] = in_coef
                coef = by_arc[loops]
            np.add.at(diag, w, coef * src_scale[w] * dst_scale[w])
        self.diag = diag
        self.has_diag = bool(loops.size)
        self.colsum = np.ascontiguousarray(colsum, np.float64)
        self.d_idx = np.ascontiguousarray(d_idx, np.int64)
        self.d_g = np.ascontiguousarray(d_g, np.float64)
        self.ok = bool(n == 0 or diag.max() < 1.0)


def sweep_rounds(state, power_round, graph, pull_args, factors, start, g1, tol, n, stats, v, d,
                 from_ratio, sor):
    """The round function (``driver.power``'s ``step``) of the power iteration accelerated by
    Gauss–Seidel sweeps.

    Rounds are plain power rounds (``power_round``, the probe's rounds) until the first round
    ``k ≥ max(3, start)`` whose difference exceeds ``from_ratio · γ1`` times the previous one
    (as Anderson's start, :func:`~.cpu_anderson.anderson_rounds`); from the next round on each
    round is a sweep, or a sweep and the power round that checks it (see the module text).
    ``pull_args``: the pull's ``(in_offsets, in_sources, in_coef, has_coef, src_scale,
    dst_scale)``, the scales as arrays of ``n``; ``factors()``: the :class:`Factors`, made when
    the sweeps start (a run that stays plain pays nothing for them), and the sweeps stay off
    when a self-loop's coefficient reaches 1.  When the first round's rounding floor alone
    exceeds ``tol / 8`` the sweeps are off for the run (the floor detection of
    :func:`~digraph.dispatch.convergence.power_stop` reads the power rounds' differences).
    The vertices are cut into one range of about equal in-arcs a thread
    (:func:`~digraph.dispatch.runtime.cpu_tasks.arc_tasks`).  ``stats``: ``power_sweeps``,
    ``power_checks``.  ``sor``: the over-relaxation's parameters (:mod:`digraph.smx.cpu.
    relaxation`, its factor measured on the sweeps' differences from the sweeps' start)."""
    cuts = arc_tasks(graph, per_thread=1)
    offsets, sources, in_coef, has_coef, src, dst = pull_args
    kernel = pick(K.sweep, K.sweep_serial, graph.num_arcs)
    parts = np.zeros((cuts.size - 1, K.PARTS))
    zz = np.empty(2 * n)  # the sweep's start, then the live z = src_scale ∘ x
    z = zz[n:]
    rnd = {"k": 0, "on": True, "sweeping": False, "last": None, "start": start,
           "ratio": 1.0, "sums": None, "swept": None, "factors": None, "w": 1.0, "n": 0}
    policy = np.zeros(R.STATE)
    stats["power_sweeps"] = 0
    stats["power_checks"] = 0

    def ready():
        """Whether the sweeps may run (their factors made on the first call)."""
        if rnd["factors"] is None:
            rnd["factors"] = factors()
            rnd["on"] = rnd["on"] and rnd["factors"].ok
        return rnd["on"]

    def sums_of(x):
        f = rnd["factors"]
        sx, sa = K.sums(x, f.colsum)
        return sx, sa, K.gather(f.d_idx, f.d_g, x)

    def plain():
        x, y = state
        bound, delta, diff, floor = power_round(x, y, float(x.sum()))
        state[0], state[1] = y, x
        return bound, delta, diff, floor

    def step():
        rnd["k"] += 1
        k = rnd["k"]
        if not rnd["sweeping"]:
            bound, delta, diff, floor = plain()
            if k == 1 and floor / (1.0 - g1) > tol / 8:
                rnd["on"] = False
            last, rnd["last"] = rnd["last"], diff
            if rnd["on"] and k >= max(rnd["start"], 3 if from_ratio > 0 else 1) \
                    and (from_ratio <= 0 or diff > from_ratio * g1 * last) and ready():
                rnd["sweeping"] = True
                rnd["sums"] = None
            return bound, delta, diff
        x = state[0]
        f = rnd["factors"]
        if rnd["n"] == 0:  # the first sweep: the factor's policy starts
            rnd["w"] = R.start(policy, sor, np.inf)
        if rnd["sums"] is None:  # the sweeps start from a power round's G(x)
            np.multiply(src, x, out=z)
            rnd["sums"] = sums_of(x)
        sx, sa, sg = rnd["sums"]
        c = sx - sa - sg
        if cuts.size > 2:
            zz[:n] = z
        has_d = bool(f.d_idx.size)
        kernel(cuts, offsets, sources, in_coef, has_coef, src, dst, f.diag, f.has_diag,
               f.colsum, v, d, has_d, c, sg, rnd["w"], x, zz, parts)
        tot = parts.sum(axis=0)
        stats["power_sweeps"] += 1
        diff, sx = float(tot[0]), float(tot[1])
        rnd["n"] += 1
        rnd["w"] = R.after(policy, sor, float(rnd["n"]), diff)
        rnd["sums"] = (sx, float(tot[2]), K.gather(f.d_idx, f.d_g, x) if has_d else 0.0)
        rel = diff / max(sx, 1e-300)
        est = g1 * rel / (1.0 - g1) * rnd["ratio"]
        stalled = rnd["swept"] is not None and rel >= rnd["swept"]
        rnd["swept"] = rel
        if (est > tol or not np.isfinite(est)) and not stalled:
            return max(est, np.nextafter(tol, np.inf)), 0.0, rel
        # check: the swept iterate, normalised, and its power round G(x)
        if sx > 0.0 and np.isfinite(sx):
            x /= sx
        stats["power_checks"] += 1
        bound, delta, pdiff, _ = plain()
        if bound > tol:
            rnd["ratio"] = max(rnd["ratio"], pdiff / max(rel, 1e-300))
            rnd["sums"] = None
            rnd["swept"] = None
        return bound, delta, pdiff

    def begin(k):
        """Sweep from the next round on (a probe's judge)."""
        rnd["start"] = k
        rnd["sweeping"] = rnd["on"] and ready()
        rnd["sums"] = None

    step.begin = begin
    return step
