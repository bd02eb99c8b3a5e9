"""Adsorption (Baluja et al., "Video suggestion and discovery for YouTube", WWW 2008), as DiGraph
(ASPLOS 2019, §4) runs it: label mass injected at seed vertices and propagated along arcs,

    x_v = p_inj(v) · I_v + p_cont(v) · Σ_{u→v} (w_uv / W_in(v)) · x_u,     W_in(v) = Σ_{u→v} w_uv,

seeds S get injection I = 1 and ``p_inj = 1 − β``; other vertices ``p_inj = 0``; ``p_cont = β``
(default 0.8) for every vertex with in-arcs of positive total weight, else 0; the abandonment
probability is ``1 − p_inj − p_cont``.  Every row of the coefficient matrix sums to β < 1, so the
system has one solution; the native ``tol`` bounds the L1 distance to it (default 1e-6).
"""

from collections.abc import Iterable, Mapping

import numpy as np

from ..errors import InvalidParameterError, short_repr
from .base import (REQUIRED, Algorithm, LinearSystem, check_bool, check_probability, check_weights,
                   scaled_inverse, weight_sums)

__all__ = ["Adsorption"]


class Adsorption(Algorithm):
    """Adsorption label propagation from ``seeds``.

    Parameters (of ``digraph.run(g, "adsorption", ...)``)
    ----------
    seeds : vertex id or iterable of vertex ids
        Vertices with injection 1 (at least one): one id, or a list, tuple, set, array or other
        iterable of ids (every seed injects the same mass; a dict, which would look like
        per-seed weights, and nested lists are refused).
    beta : float
        Continuation probability in (0, 1), default 0.8.
    weights : bool
        Use the graph's arc weights when present (default True).  Only ``True``, ``False`` or a
        ``numpy.bool_``.
    """

    name = "adsorption"
    parameters = {"seeds": REQUIRED, "beta": 0.8, "weights": True}
    default_tol = 1e-6

    def prepare(self, graph, seeds, beta, weights):
        beta = check_probability("beta", beta, self.name)
        weights = check_bool("weights", weights, self.name)
        n = graph.num_vertices
        idx = graph.index_of(_seed_list(seeds), "seed")
        w = check_weights(graph, self.name) if (weights and graph.weighted) else None
        if w is None:  # the same for every run with this beta: kept with the graph
            dst_scale = graph._cached(("adsorption dst_scale", beta),
                                      lambda: _read_only(scaled_inverse(graph.in_degree, beta)))
        else:
            w_in = weight_sums(graph, w, graph.out_targets, self.name, "in-arc")
            dst_scale = scaled_inverse(w_in, beta)
        b = np.zeros(n, np.float64)
        b[idx] = 1.0 - beta
        system = LinearSystem(b=b, dst_scale=dst_scale, arc_scale=w)
        system.b_support = np.unique(np.asarray(idx, np.int64))
        return system

    def reference(self, graph, seeds, beta=0.8, weights=True):
        """Exact answer by a sparse direct solve."""
        from ._reference import solve_linear_system
        sys = self.prepare(graph, **self.bind(graph, dict(seeds=seeds, beta=beta, weights=weights)))
        return solve_linear_system(graph, sys)


def _read_only(a):
    a.setflags(write=False)
    return a


def _seed_list(seeds):
    """``seeds`` as a non-empty list of vertex ids (one id given alone is a list of one)."""
    if isinstance(seeds, Mapping):
        raise InvalidParameterError(
            f"adsorption: seeds takes vertex ids, not a dict ({short_repr(seeds)}): every seed "
            "injects the same mass; pass list(seeds) to use its keys")
    if isinstance(seeds, np.ndarray) and seeds.ndim == 0:
        seeds = seeds.item()
    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Iterable):
        return [seeds]  # one vertex id
    out = list(seeds)
    if not out:
        raise InvalidParameterError("adsorption: seeds is empty; give at least one seed vertex")
    for s in out:
        if isinstance(s, (list, np.ndarray, set, frozenset, Mapping)):
            raise InvalidParameterError(
                f"adsorption: seeds must be vertex ids, got a {type(s).__name__} among them: "
                f"{short_repr(s)}")
    return out
