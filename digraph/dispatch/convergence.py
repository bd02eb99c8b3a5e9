"""Convergence of linear (sum) systems, shared by every mode: contraction factors, a sound
bound on the answer's error from the residual alone, and the residual threshold below which a
vertex (or arc) may be left pending without endangering the tolerance."""

import numpy as np
from numba import njit, prange

from ..errors import InvalidParameterError
from ..numeric import neumaier_add
from ..smx.cpu.serial import pick, serial_twin
from .runtime.cpu_tasks import arc_tasks
from .systems import linear_factors

__all__ = ["linear_contraction", "quick_contraction", "linear_error_bound", "residual_threshold",
           "pending_budget", "residual_norms", "certified_bound", "certified", "verdict",
           "tightened", "rounding_floor", "checked_contraction", "dual_sums"]


@njit(parallel=True, cache=True, nogil=True)
def _max_column_and_row_sums(out_offsets, out_targets, in_offsets, in_arcs, arc_sources,
                             src_scale, arc_scale, has_arc, dst_scale):
    n = out_offsets.size - 1
    g1 = 0.0
    ginf = 0.0
    bad = 0
    for u in prange(n):
        col = 0.0
        for e in range(out_offsets[u], out_offsets[u + 1]):
            c = src_scale[u] * (arc_scale[e] if has_arc else 1.0) * dst_scale[out_targets[e]]
            if not (c >= 0.0 and c < np.inf):
                bad += 1
            col += c
        g1 = max(g1, col)
    for v in prange(n):
        row = 0.0
        for k in range(in_offsets[v], in_offsets[v + 1]):
            e = in_arcs[k]
            row += src_scale[arc_sources[e]] * (arc_scale[e] if has_arc else 1.0) * dst_scale[v]
        ginf = max(ginf, row)
    return g1, ginf, bad


def linear_contraction(graph, system):
    """(γ1, γ∞): the largest column sum and row sum of the coefficient matrix ``A``.

    ``‖x* − x‖₁ ≤ ‖r‖₁ / (1 − γ1)`` when γ1 < 1 and ``‖x* − x‖∞ ≤ ‖r‖∞ / (1 − γ∞)`` when γ∞ < 1,
    with ``r = b + A x − x`` the residual (for non-negative ``A``).  Raises when neither is < 1.
    A system that carries ``error_gammas`` gets those (its own, already summed, or those of a
    rescaled system, :func:`digraph.dispatch.dual_bound.scaled_system`).
    """
    if getattr(system, "error_gammas", None) is not None:
        return system.error_gammas
    if graph.num_arcs == 0:
        return 0.0, 0.0
    src_scale, dst_scale, has_arc, arc = linear_factors(graph, system)
    g1, ginf, bad = _max_column_and_row_sums(
        graph.out_offsets, graph.out_targets, graph.in_offsets, graph.in_arcs, graph.arc_sources,
        src_scale, arc, has_arc, dst_scale)
    return checked_contraction(g1, ginf, bad)


@njit(cache=True, nogil=True)
def _column_max(src_scale, out_offsets):
    """(max over u of ``src_scale[u] · out-degree(u)``, how many of those are negative or not
    finite where the out-degree is positive), in one pass without temporaries."""
    g1 = 0.0
    bad = 0
    for u in range(src_scale.size):
        deg = out_offsets[u + 1] - out_offsets[u]
        c = src_scale[u] * deg
        if deg > 0 and not (c >= 0.0 and c < np.inf):
            bad += 1
        elif c > g1:
            g1 = c
    return g1, bad


def quick_contraction(graph, system):
    """(γ1, γ∞) as :func:`linear_contraction`, without a pass over the arcs when it can: with no
    arc or target factors (PageRank), column ``u`` sums to ``src_scale[u] · out-degree(u)``; γ∞ is
    then reported as ``inf`` (its route unused, every bound still sound) unless γ1 ≥ 1 needs it."""
    if getattr(system, "error_gammas", None) is not None:
        return system.error_gammas
    if system.arc_scale is not None or system.dst_scale is not None or graph.num_arcs == 0:
        return linear_contraction(graph, system)
    sds = getattr(system, "src_degree_scale", None)
    # src_scale = sds / out-degree: every column sums to sds
    if sds is not None and 0.0 <= sds < 1.0:
        return float(sds), np.inf
    n = graph.num_vertices
    src_scale = (np.ones(n) if system.src_scale is None
                 else np.ascontiguousarray(system.src_scale, dtype=np.float64))
    g1, bad = _column_max(src_scale, graph.out_offsets)
    if g1 >= 1.0 or bad:
        return linear_contraction(graph, system)
    return g1, np.inf


def checked_contraction(g1, ginf, bad):
    """(γ1, γ∞) after the checks of :func:`linear_contraction` (``bad``: arcs whose coefficient
    is negative or not finite), for engines that sum the coefficients themselves (the GPUs)."""
    g1, ginf, bad = float(g1), float(ginf), int(bad)
    if bad:
        raise InvalidParameterError(
            f"linear system coefficients must be finite and non-negative ({bad} arc(s) are not)")
    if g1 >= 1.0 and ginf >= 1.0:
        raise InvalidParameterError(
            f"the linear system is not a contraction: largest column sum {g1:.4g} and "
            f"largest row sum {ginf:.4g} are both >= 1, so no error bound (and maybe no "
            "convergence) can be guaranteed")
    return g1, ginf


def linear_error_bound(r1, rmax, sum_x, n, gammas, normalize):
    """Sound bound on the answer's error from the residual's L1 norm ``r1`` and max ``rmax``.

    Returns the bound on ``‖x − x*‖₁``, or, when ``normalize``, on ``‖x/Σx − x*/Σx*‖₁``
    (``≤ 2‖x − x*‖₁ / Σx``, since the state only grows towards ``x*``).
    """
    g1, ginf = gammas
    e = np.inf
    if g1 < 1.0:
        e = r1 / (1.0 - g1)
    if ginf < 1.0:
        e = min(e, n * rmax / (1.0 - ginf))
    if normalize:
        # ‖x/Σx − x*/Σx*‖₁ ≤ 2‖x − x*‖₁ / Σx*, and Σx* ≥ Σx − ‖x − x*‖₁
        e = 2.0 * e / (sum_x - e) if sum_x > e else np.inf
    return e


def residual_threshold(tol, sum_x, n, gammas, normalize):
    """Residual below which a vertex stays out of the frontier: skipped mass costs ≤ tol/2."""
    g1, ginf = gammas
    scale = (sum_x / 2.0 if normalize else 1.0) * tol / 2.0
    theta = 0.0
    if g1 < 1.0:
        theta = max(theta, scale * (1.0 - g1) / n)
    if ginf < 1.0:
        theta = max(theta, scale * (1.0 - ginf) / n)
    return theta


def pending_budget(tol, sum_x, n, gammas, normalize):
    """Total residual mass (L1) that keeps the error bound at or below ``tol / 2``.

    The L1 route allows ``‖r‖₁ ≤ (tol/2)(1 − γ1)``; the L∞ route ``‖r‖∞ ≤ (tol/2)(1 − γ∞)/n``,
    which a total of that size guarantees.  For a normalised answer both scale with ``Σx / 2``.
    """
    g1, ginf = gammas
    scale = (sum_x / 2.0 if normalize else 1.0) * tol / 2.0
    budget = 0.0
    if g1 < 1.0:
        budget = max(budget, scale * (1.0 - g1))
    if ginf < 1.0:
        budget = max(budget, scale * (1.0 - ginf) / max(n, 1))
    return budget


@njit(parallel=True, cache=True, nogil=True)
def residual_norms(cuts, in_offsets, in_sources, in_coef, has_coef, src_scale, dst_scale, b, x,
                   out):
    """(‖r‖₁, ‖r‖∞) of ``r = b + A x − x``, recomputed from the state alone (one pull over the
    arcs, the vertex ranges ``cuts`` of about equal in-arcs one a task,
    :func:`digraph.dispatch.runtime.cpu_tasks.arc_tasks`); ``r`` itself is written to ``out``.

    Engines that track the residual incrementally (per-arc mirrors) drift from it by rounding; this
    is the value their final error bound must use.
    """
    r1 = 0.0
    rmax = 0.0
    for t in prange(cuts.size - 1):
        part = 0.0
        top = 0.0
        for v in range(cuts[t], cuts[t + 1]):
            # Neumaier's compensated sum: the in-arc sum is exact to a few ulps whatever the degree
            acc = 0.0
            comp = 0.0
            for k in range(in_offsets[v], in_offsets[v + 1]):
                c = in_coef[k] if has_coef else 1.0
                acc, comp = neumaier_add(acc, comp, c * src_scale[in_sources[k]] * x[in_sources[k]])
            rv = b[v] + dst_scale[v] * (acc + comp) - x[v]
            out[v] = rv
            r = abs(rv)
            part += r
            top = max(top, r)
        r1 += part
        rmax = max(rmax, top)
    return r1, rmax


residual_norms_serial = serial_twin(residual_norms)


@njit(parallel=True, cache=True, nogil=True)
def dual_sums(dual, b, x, r):
    """(``ẑᵀ|r|``, ``ẑᵀε``) in one pass, ``ε_v = 8u (2|b_v| + 2|x_v| + |r_v|)`` the rounding of
    ``r_v``'s computation (``u`` the unit roundoff), for :func:`certified_bound`'s dual route.

    On Numba's threads, not a BLAS dot product: OpenBLAS's threads, woken by a long dot, spin
    for a while after it on the cores Numba's threads use."""
    u8 = 8.0 * (np.finfo(np.float64).eps / 2)
    weighted = 0.0
    floor = 0.0
    for v in prange(r.size):
        ar = abs(r[v])
        weighted += dual[v] * ar
        floor += dual[v] * (u8 * (2.0 * abs(b[v]) + 2.0 * abs(x[v]) + ar))
    return weighted, floor


dual_sums_serial = serial_twin(dual_sums)


ROUNDING_MARGIN = 1e-6
"""Relative margin added to a certified bound for the rounding of the residual's computation."""


def certified_bound(graph, system, x, gammas, out, dual=None):
    """(bound, ‖r‖₁, floor) from the residual recomputed exactly from ``x`` (written to ``out``);
    ``floor`` is the bound that the residual's rounding alone allows (see :func:`certified`).
    ``dual``: verified dual weights ``ẑ`` (:mod:`digraph.dispatch.dual_bound`); the bound is then
    also ``ẑᵀ(|r| + ε)`` with ``ε`` each entry's rounding, and the smaller one is reported.

    Incrementally tracked residuals (BSP's and vertex-async's δ, the path modes' mirrors) drift
    from the true one by rounding; a run is declared converged only on this bound.
    """
    src_scale, dst_scale, has_arc, arc = linear_factors(graph, system)
    in_coef = arc[graph.in_arcs] if has_arc else arc
    b = np.ascontiguousarray(system.b, dtype=np.float64)
    norms = pick(residual_norms, residual_norms_serial, graph.num_arcs)
    r1, rmax = norms(arc_tasks(graph), graph.in_offsets, graph.in_sources, in_coef, has_arc,
                     src_scale, dst_scale, b, x, out)
    n = graph.num_vertices
    e1, emax = rounding_floor(float(np.abs(b).sum()), float(np.abs(b).max()) if n else 0.0,
                              float(np.abs(x).sum()), float(np.abs(x).max()) if n else 0.0,
                              r1, rmax)
    sx = float(x.sum())
    bound = linear_error_bound(r1 + e1, rmax + emax, sx, n, gammas, system.normalize)
    floor = linear_error_bound(e1, emax, sx, n, gammas, system.normalize)
    if dual is not None and not system.normalize:
        weighted, dfloor = pick(dual_sums, dual_sums_serial, n)(dual, b, x, out)
        dbound = weighted + dfloor
        if dbound < bound:
            bound, floor = dbound, dfloor
    return bound * (1.0 + ROUNDING_MARGIN), r1, floor


MAX_RECERTIFICATIONS = 8
"""Failed certifications after which a push engine gives up (the run reports its bound)."""


def verdict(bound, r1, floor, tol, stats):
    """What a push engine does after certifying: ``"converged"``; ``"retry"`` (counted in
    ``stats["recertified"]``, carrying on from the exact residual towards :func:`tightened`
    targets); or ``"stop"`` after :data:`MAX_RECERTIFICATIONS` failures."""
    if certified(bound, r1, floor, tol, stats):
        return "converged"
    stats["recertified"] = stats.get("recertified", 0) + 1
    return "stop" if stats["recertified"] > MAX_RECERTIFICATIONS else "retry"


def tightened(tol, stats):
    """The target a run's tracked bound must reach before the next certification: ``tol``, then
    a quarter of it after each failed certification, so that the tracked residual's rounding
    drift cannot bring the run back to the same short certificate again and again."""
    return tol * 0.25 ** stats.get("recertified", 0)


FLOOR_SLACK = 4.0
"""A run below what float64 can certify stops ``floor_limited`` only once its bound is within
this factor of the floor (the recomputed residual within three times its own rounding): a
certificate taken far above the floor (a stalled engine's: bound 2,400 against a floor of
5.8e-11 at tol 1e-10) is no reason to stop."""


def certified(bound, r1, floor, tol, stats):
    """Whether a linear run may stop: its certified bound is within ``tol``, or ``tol`` is below
    what float64 can certify on this graph (the bound of the residual's rounding floor alone
    exceeds ``tol / 2``: no further round can help) and the bound is down to that floor (within
    :data:`FLOOR_SLACK` times it).  The second case sets
    ``stats["floor_limited"]`` and ``stats["error_floor"]`` (that floor) and the run reports the
    bound it could certify.  The one place every linear engine decides convergence: a run stops
    with ``bound <= tol`` or ``floor_limited``, never otherwise.

    ``r1`` (the recomputed residual's L1 norm) is not a reason to stop on its own: a residual of
    exactly 0 still leaves the rounding floor in ``bound`` (amplified by ``1/(1 − γ)``), and then
    ``bound = floor · (1 + ROUNDING_MARGIN)``, so ``bound > tol`` implies ``floor > tol / 2``."""
    del r1  # kept in the signature for the engines; the bound already accounts for it
    if bound <= tol:
        return True
    if floor > tol / 2 and bound <= FLOOR_SLACK * floor:
        stats["floor_limited"] = True
        stats["error_floor"] = float(floor)
        return True
    return False


def rounding_floor(bsum, bmax, xsum, xmax, r1, rmax):
    """(L1, L∞) bounds on the rounding of a residual ``r = b + A x − x`` recomputed with a
    compensated in-arc sum (:func:`residual_norms`).

    Each ``r_v`` is then exact to a few units in the last place of ``|b_v| + |(Ax)_v| + |x_v|``,
    with ``|Ax| ≤ |r| + |x| + |b|``: ``8u`` of ``2|b| + 2|x| + |r|``, summed or at the maximum.
    Near a damping of 1 the error bound multiplies this floor by ``1/(1 − γ)``, so it is added
    to the residual's norms, not only a relative margin.
    """
    u = np.finfo(np.float64).eps / 2
    return 8 * u * (2 * bsum + 2 * xsum + r1), 8 * u * (2 * bmax + 2 * xmax + rmax)


def power_stop(bound, delta, diff, last_diff, g1, tol, stats):
    """Whether a power round ends the run (the CPU and GPU iterations share it): its bound is
    within ``tol``; or rounding alone (``delta``) exceeds what ``tol`` allows and the differences
    have come down to the rounding or stopped falling, so no further round can lower the bound
    (``floor_limited`` and ``error_floor`` set)."""
    if bound <= tol:
        return True
    if delta / (1.0 - g1) > tol / 2 and (g1 * diff <= delta or diff >= last_diff):
        stats["floor_limited"] = True
        stats["error_floor"] = float(delta / (1.0 - g1))
        return True
    return False
