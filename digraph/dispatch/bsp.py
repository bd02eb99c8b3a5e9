"""Bulk-synchronous rounds over a frontier (``mode="bsp"``, the Gunrock-like baseline) on CPU cores.

Each round runs one kernel of :mod:`digraph.smx.cpu_bsp` over the active vertices, reading the
previous round's state (Jacobi), and picks the direction per round as Ligra does: a parallel pull
over in-arcs when the frontier's out-arcs exceed ``m / DENSE_DIVISOR``, a push from the frontier
otherwise.  The counters of DESIGN.md §5 are filled as work is done:

* ``rounds`` — rounds run;
* ``vertex_updates`` — linear: frontier vertices that absorbed their residual; monotone: vertices
  whose value improved; h-index: frontier vertices whose estimate was recomputed;
* ``arc_updates`` — arcs read by the kernels (a dense pull round reads every arc).

Linear systems stop on a bound of the answer's error computed from the residual alone (see
:func:`linear_error_bound`), never from a reference.
"""

import numpy as np

from ..errors import InvalidParameterError
from ..smx import cpu_bsp as K

__all__ = ["solve", "linear_error_bound", "linear_contraction"]

DENSE_DIVISOR = 20


def solve(graph, system, *, tol, max_iter, stats):
    """Run ``system`` to convergence (or ``max_iter`` rounds); returns (state, converged)."""
    fam = system.family
    if fam == "linear":
        return _solve_linear(graph, system, tol, max_iter, stats)
    if fam == "monotone":
        return _solve_monotone(graph, system, max_iter, stats)
    if fam == "hindex":
        return _solve_hindex(graph, system, max_iter, stats)
    raise InvalidParameterError(f"unknown system family {fam!r}")


# ---------------------------------------------------------------------------- linear

def _ones_or(a, n):
    return np.ones(n, np.float64) if a is None else np.ascontiguousarray(a, dtype=np.float64)


def linear_contraction(graph, system):
    """(γ1, γ∞): the largest column sum and row sum of the coefficient matrix ``A``.

    ``‖x* − x‖₁ ≤ ‖r‖₁ / (1 − γ1)`` when γ1 < 1 and ``‖x* − x‖∞ ≤ ‖r‖∞ / (1 − γ∞)`` when γ∞ < 1,
    with ``r = b + A x − x`` the residual (for non-negative ``A``).
    """
    n, m = graph.num_vertices, graph.num_arcs
    if m == 0:
        return 0.0, 0.0
    src = graph.arc_sources
    dst = graph.out_targets
    c = _ones_or(system.arc_scale, m)
    if system.src_scale is not None:
        c = c * system.src_scale[src]
    if system.dst_scale is not None:
        c = c * system.dst_scale[dst]
    if np.any(c < 0) or not np.all(np.isfinite(c)):
        raise InvalidParameterError("linear system coefficients must be finite and non-negative")
    col = np.bincount(src, weights=c, minlength=n)
    row = np.bincount(dst, weights=c, minlength=n)
    return float(col.max()), float(row.max())


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
        e = 2.0 * e / sum_x if sum_x > 0 else np.inf
    return e


def _threshold(tol, sum_x, n, gammas, normalize):
    """Residual below which a vertex stays out of the frontier: skipped mass costs ≤ tol/2."""
    g1, ginf = gammas
    scale = (sum_x / 2.0 if normalize else 1.0) * tol / 2.0
    theta = 0.0
    if g1 < 1.0:
        theta = max(theta, scale * (1.0 - g1) / n)
    if ginf < 1.0:
        theta = max(theta, scale * (1.0 - ginf) / n)
    return theta


def _solve_linear(graph, sys, tol, max_iter, stats):
    n, m = graph.num_vertices, graph.num_arcs
    gammas = linear_contraction(graph, sys)
    if gammas[0] >= 1.0 and gammas[1] >= 1.0:
        raise InvalidParameterError(
            f"the linear system is not a contraction: largest column sum {gammas[0]:.4g} and "
            f"largest row sum {gammas[1]:.4g} are both >= 1, so no error bound (and maybe no "
            "convergence) can be guaranteed")
    src_scale = _ones_or(sys.src_scale, n)
    dst_scale = _ones_or(sys.dst_scale, n)
    has_coef = sys.arc_scale is not None
    arc_coef = _ones_or(sys.arc_scale, m) if has_coef else np.empty(0, np.float64)
    in_coef = arc_coef[graph.in_arcs] if has_coef else arc_coef
    in_sources = graph.in_sources
    out_degree = graph.out_degree
    x = np.zeros(n, np.float64)
    delta = np.ascontiguousarray(sys.b, dtype=np.float64).copy()
    send = np.empty(n, np.float64)
    new_delta = np.empty(n, np.float64)
    theta = 0.0
    converged = False
    bound = np.inf
    while True:
        nf, vol, r1, rmax, sum_x = K.linear_scan(delta, theta, out_degree, x)
        bound = linear_error_bound(r1, rmax, sum_x, n, gammas, sys.normalize)
        if bound <= tol or nf == 0:
            converged = bound <= tol or r1 == 0.0
            break
        if stats["rounds"] >= max_iter:
            break
        if vol * DENSE_DIVISOR > m:
            K.linear_dense_round(graph.in_offsets, in_sources, in_coef, has_coef, src_scale,
                                 dst_scale, delta, x, theta, send, new_delta)
            delta, new_delta = new_delta, delta
            stats["arc_updates"] += m
            stats["dense_rounds"] += 1
        else:
            stats["arc_updates"] += int(K.linear_sparse_round(
                graph.out_offsets, graph.out_targets, arc_coef, has_coef, src_scale, dst_scale,
                delta, x, theta))
            stats["sparse_rounds"] += 1
        stats["vertex_updates"] += int(nf)
        stats["rounds"] += 1
        theta = _threshold(tol, sum_x, n, gammas, sys.normalize)
    stats["error_bound"] = float(bound)
    stats["residual_l1"] = float(r1)
    return x, converged


# ---------------------------------------------------------------------------- monotone

def _solve_monotone(graph, sys, max_iter, stats):
    n, m = graph.num_vertices, graph.num_arcs
    op = K_OPS[sys.relax]
    combine = 0 if sys.combine == "min" else 1
    x = np.ascontiguousarray(sys.init, dtype=np.float64).copy()
    if x.shape != (n,):
        raise InvalidParameterError(f"init must have one value per vertex ({n}), got shape {x.shape}")
    active = np.zeros(n, dtype=np.bool_)
    if sys.frontier is None:
        identity = np.inf if combine == 0 else -np.inf
        active[:] = x != identity
    else:
        active[np.asarray(sys.frontier, dtype=np.int64)] = True
    has_value = sys.arc_value is not None
    arc_value = _ones_or(sys.arc_value, m) if has_value else np.empty(0, np.float64)
    in_value = arc_value[graph.in_arcs] if has_value else arc_value
    in_sources = graph.in_sources
    out_degree = graph.out_degree
    new_x = np.empty(n, np.float64)
    new_active = np.empty(n, np.bool_)
    converged = False
    while True:
        nf, vol = K.monotone_scan(active, out_degree)
        if nf == 0:
            converged = True
            break
        if stats["rounds"] >= max_iter:
            break
        if vol * DENSE_DIVISOR > m:
            improved = K.monotone_dense_round(graph.in_offsets, in_sources, in_value, has_value,
                                              op, combine, x, active, new_x, new_active)
            x, new_x = new_x, x
            active, new_active = new_active, active
            stats["arc_updates"] += m
            stats["dense_rounds"] += 1
        else:
            arcs, improved = K.monotone_sparse_round(graph.out_offsets, graph.out_targets,
                                                     arc_value, has_value, op, combine, x, active)
            stats["arc_updates"] += int(arcs)
            stats["sparse_rounds"] += 1
        stats["vertex_updates"] += int(improved)
        stats["rounds"] += 1
    return x, converged


K_OPS = {"plus": K._PLUS, "min": K._MIN, "max": K._MAX, "times": K._TIMES, "first": K._FIRST}


# ---------------------------------------------------------------------------- h-index

def undirected_adjacency(graph):
    """(offsets, neighbours) of the undirected multigraph of the arcs, self-loops removed (cached)."""
    return graph._cached("undirected", lambda: K.undirected_neighbours(
        graph.out_offsets, graph.out_targets, graph.in_offsets, graph.in_sources))


def _solve_hindex(graph, sys, max_iter, stats):
    import numba
    n = graph.num_vertices
    offsets, nbr = undirected_adjacency(graph)
    est = np.diff(offsets)
    new_est = est.copy()
    frontier = np.arange(n, dtype=np.int64)
    mark = np.zeros(n, dtype=np.bool_)
    buf = np.empty(n, dtype=np.int64)
    chunks = 8 * numba.get_num_threads()
    converged = False
    while True:
        if frontier.size == 0:
            converged = True
            break
        if stats["rounds"] >= max_iter:
            break
        K.hindex_round(offsets, nbr, est, frontier, new_est, chunks)
        stats["vertex_updates"] += int(frontier.size)
        stats["arc_updates"] += int((offsets[frontier + 1] - offsets[frontier]).sum())
        frontier = K.hindex_next_frontier(offsets, nbr, est, new_est, frontier, mark, buf)
        stats["rounds"] += 1
    return est, converged
