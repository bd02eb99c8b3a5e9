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
from .convergence import (certified_bound, linear_contraction, linear_error_bound,
                          residual_threshold, tightened, verdict)
from .systems import linear_factors, monotone_arrays, monotone_start

__all__ = ["solve"]

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

def _solve_linear(graph, sys, tol, max_iter, stats):
    n, m = graph.num_vertices, graph.num_arcs
    gammas = linear_contraction(graph, sys)
    src_scale, dst_scale, has_coef, arc_coef = linear_factors(graph, sys)
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
        if bound <= tightened(tol, stats) or nf == 0:
            # certify on the residual recomputed from x; if rounding drift leaves it short,
            # carry on from the exact residual
            bound, r1, floor = certified_bound(graph, sys, x, gammas, delta)
            outcome = verdict(bound, r1, floor, tol, stats)
            if outcome != "retry":
                converged = outcome == "converged"
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
        theta = residual_threshold(tightened(tol, stats), sum_x, n, gammas, sys.normalize)
    stats["error_bound"] = float(bound)
    stats["residual_l1"] = float(r1)
    return x, converged


# ---------------------------------------------------------------------------- monotone

def _solve_monotone(graph, sys, max_iter, stats):
    n, m = graph.num_vertices, graph.num_arcs
    op, combine, has_value, arc_value = monotone_arrays(graph, sys)
    x, active = monotone_start(sys, n)
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
        # every vertex recomputed = every arc read (dense); otherwise the frontier's arcs only
        stats["dense_rounds" if frontier.size == n else "sparse_rounds"] += 1
        frontier = K.hindex_next_frontier(offsets, nbr, est, new_est, frontier, mark, buf)
        stats["rounds"] += 1
    return est, converged
