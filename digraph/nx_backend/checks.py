"""What ``can_run`` checks, per function: whether digraph computes networkx's exact answer for
the arguments given (``True``), or a string saying why not.  ``CHECKS`` maps each function's
networkx name to its check.
"""

import math
import numbers

import numpy as np

from .common import run_kwargs
from .convert import DigraphGraph


def _number(x):
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(x)


def _weights_ok(G, weight):
    """True, or why the weights differ from what digraph accepts (finite, >= 0, numeric)."""
    if weight is None:
        return True
    if callable(weight):
        return "weight is a function; digraph reads a numeric edge attribute"
    if isinstance(G, DigraphGraph):
        if G.weight != weight and G.graph.weighted:
            return f"graph converted with weight {G.weight!r}, call asks for {weight!r}"
        w = G.graph.weights
        if w is None:
            return True if G.weight == weight else f"graph converted without weight {weight!r}"
    else:
        try:
            w = np.fromiter((d for *_, d in G.edges(data=weight, default=1)), dtype=np.float64,
                            count=G.number_of_edges())
        except (TypeError, ValueError):
            return f"edge attribute {weight!r} holds values that are not real numbers"
    if w.size and not np.all(np.isfinite(w)):
        return f"edge attribute {weight!r} holds NaN or infinite values"
    if w.size and np.any(w < 0):
        return f"edge attribute {weight!r} holds negative values"
    return True


def _check_pagerank(G, a):
    alpha, tol, max_iter = a.get("alpha", 0.85), a.get("tol", 1e-6), a.get("max_iter", 100)
    if a.get("nstart") is not None:
        return "nstart is not supported (digraph starts from its own residual state)"
    dangling = a.get("dangling")
    if dangling is not None:
        if not isinstance(dangling, dict):
            return "dangling must be a dict"
        if not all(_number(v) and v >= 0 for v in dangling.values()):
            return "dangling values must be finite and non-negative"
        try:
            kw = run_kwargs("pagerank", a.get("backend_kwargs", {}))
        except TypeError as e:
            return str(e)
        if kw.get("mode") not in (None, "power") or kw.get("device", "cpu") != "cpu":
            return ("dangling is answered by digraph's CPU power iteration only (mode='power' or "
                    "None, device='cpu')")
    if not (_number(alpha) and 0 < alpha < 1):
        return "alpha must be a number in (0, 1)"
    if not (_number(tol) and tol > 0):
        return "tol must be a positive number"
    if not isinstance(max_iter, numbers.Integral) or isinstance(max_iter, bool):
        return "max_iter must be an integer"
    p = a.get("personalization")
    if p is not None:
        if not isinstance(p, dict):
            return "personalization must be a dict"
        if not all(_number(v) and v >= 0 for v in p.values()):
            return "personalization values must be finite and non-negative"
    weight = a.get("weight", "weight")
    ok = _weights_ok(G, weight)
    if ok is True and weight is not None and not _out_sums_finite(G, weight):
        return ("a node's out-edge weights sum to more than float64 holds (digraph refuses them; "
                "networkx counts that node as dangling)")
    return ok


def _out_sums_finite(G, weight):
    """Whether every node's out-edge weight sum fits float64 (digraph refuses those that do not)."""
    if isinstance(G, DigraphGraph):
        g = G.graph
        if not g.weighted:
            return True
        sums = np.bincount(g.arc_sources, weights=g.weights, minlength=g.num_vertices)
        return bool(np.all(np.isfinite(sums)))
    deg = G.out_degree(weight=weight) if G.is_directed() else G.degree(weight=weight)
    return all(math.isfinite(float(d)) for _, d in deg)


def _check_core_number(G, a):
    return True


def _check_dijkstra(G, a):
    cutoff = a.get("cutoff")
    if cutoff is not None and not (isinstance(cutoff, numbers.Real) and not math.isnan(cutoff)):
        return "cutoff must be a number"
    return _weights_ok(G, a.get("weight", "weight"))


def _check_bfs(G, a):
    cutoff = a.get("cutoff")
    if cutoff is not None and not (isinstance(cutoff, numbers.Real) and not math.isnan(cutoff)):
        return "cutoff must be a number"
    return True


def _check_scc(G, a):
    try:
        kw = run_kwargs("strongly_connected_components", a.get("backend_kwargs", {}))
    except TypeError as e:
        return str(e)
    if kw.get("device", "cpu") != "cpu":
        return ("digraph labels strongly connected components on the CPU only (Tarjan), not on "
                f"device {kw['device']!r}")
    return True


def _check_any(G, a):
    return True


def _check_spl(G, a):
    method = a.get("method", "dijkstra")
    if method not in ("dijkstra", "bellman-ford"):
        return f"method {method!r} is not one networkx knows (it raises ValueError itself)"
    if a.get("source") is None:
        return "lengths from every node (source=None) run in networkx; digraph answers one source"
    return _weights_ok(G, a.get("weight"))


CHECKS = {
    "pagerank": _check_pagerank,
    "shortest_path_length": _check_spl,
    "core_number": _check_core_number,
    "single_source_dijkstra_path_length": _check_dijkstra,
    "single_source_shortest_path_length": _check_bfs,
    "single_source_dijkstra": _check_dijkstra,
    "single_source_dijkstra_path": _check_dijkstra,
    "strongly_connected_components": _check_scc,
    "weakly_connected_components": _check_any,
    "bfs_layers": _check_any,
}
