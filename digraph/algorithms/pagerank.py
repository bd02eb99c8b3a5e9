"""PageRank (Brin & Page, "The anatomy of a large-scale hypertextual Web search engine", WWW 1998).

The answer is networkx's ``pagerank(G, alpha, personalization, weight, dangling=None)``: the fixed
point of

    x_v = (1 − α) p_v + α Σ_{u→v} w_uv x_u / W_out(u),      W_out(u) = Σ_{u→t} w_ut,

normalised to sum 1.  Mass reaching out-degree-0 vertices (and vertices whose out-weights sum to
0) is dropped before normalising, which gives exactly networkx's answer, where dangling mass is
redistributed along ``p`` (both are proportional to ``(I − α Pᵀ)⁻¹ p``).  Parallel arcs add their
weights; ``p`` is the personalization vector normalised to sum 1 (uniform by default).

The native ``tol`` bounds the L1 distance of the returned vector to the exact answer (default
1e-6): the engine stops when ``2 R / ((1 − α) Σx) ≤ tol``, with ``R`` the L1 norm of the pending
residual (DESIGN.md §7), which bounds the error of the normalised answer.
"""

import numpy as np

from ..errors import InvalidParameterError
from .base import (Algorithm, DegreeScaledSystem, LinearSystem, check_probability, check_weights,
                   normalized, scaled_inverse)

__all__ = ["PageRank", "personalization_vector"]


def personalization_vector(graph, personalization, algo="pagerank", what="personalization"):
    """A non-negative vector over the vertices, from a dict {vertex id: value} or an array."""
    n = graph.num_vertices
    if isinstance(personalization, dict):
        p = np.zeros(n, np.float64)
        if personalization:
            idx = graph.index_of(list(personalization.keys()), f"{what} key")
            vals = np.asarray([float(v) for v in personalization.values()], dtype=np.float64)
            np.add.at(p, idx, vals)
            vals_checked = vals
        else:
            vals_checked = p
    else:
        p = np.asarray(personalization, dtype=np.float64)
        if p.shape != (n,):
            raise InvalidParameterError(
                f"{algo}: {what} must be a dict or an array of one value per vertex ({n}), got shape {p.shape}")
        p = p.copy()
        vals_checked = p
    if not np.all(np.isfinite(vals_checked)) or np.any(vals_checked < 0):
        raise InvalidParameterError(f"{algo}: {what} values must be finite and non-negative")
    if p.sum() <= 0:
        raise InvalidParameterError(f"{algo}: {what} sums to 0; at least one vertex needs a positive value")
    return p


class PageRank(Algorithm):
    """PageRank with damping ``alpha``, optional personalization and arc weights.

    Parameters (of ``digraph.run(g, "pagerank", ...)``)
    ----------
    alpha : float
        Damping factor in (0, 1), default 0.85.
    personalization : dict or array, optional
        Teleport weights by original vertex id (missing ids get 0) or one per vertex; normalised.
    weights : bool
        Use the graph's arc weights when it has them (default True); False: every arc weighs 1.
    """

    name = "pagerank"
    parameters = {"alpha": 0.85, "personalization": None, "weights": True}
    default_tol = 1e-6
    divides_by_sum = True

    def prepare(self, graph, alpha, personalization, weights):
        alpha = check_probability("alpha", alpha, self.name)
        n = graph.num_vertices
        w = check_weights(graph, self.name) if (weights and graph.weighted) else None
        if w is None and personalization is None:  # vectors made where they are used
            return DegreeScaledSystem(graph.out_degree, (1.0 - alpha) / max(n, 1), alpha,
                                      normalize=True)
        if w is None:
            w_out = graph.out_degree
        else:
            w_out = np.bincount(graph.arc_sources, weights=w, minlength=n)
        src_scale = scaled_inverse(w_out, alpha)
        if personalization is None:
            b = np.full(n, (1.0 - alpha) / max(n, 1))
        else:
            p = personalization_vector(graph, personalization, self.name)
            b = p * ((1.0 - alpha) / p.sum())
        return LinearSystem(b=b, src_scale=src_scale, arc_scale=w, normalize=True)

    def finalize(self, graph, x, **params):
        # in place: the state is the engine's fresh array (no second copy of n floats)
        return normalized(x)

    def reference(self, graph, alpha=0.85, personalization=None, weights=True):
        """Exact answer by a sparse direct solve of ``(I − α Pᵀ) x = (1 − α) p``, normalised."""
        from ._reference import solve_linear_system
        sys = self.prepare(graph, **self.bind(graph, dict(alpha=alpha, personalization=personalization,
                                                         weights=weights)))
        return self.finalize(graph, solve_linear_system(graph, sys))
