"""PageRank (Brin & Page, "The anatomy of a large-scale hypertextual Web search engine", WWW 1998).

The answer is networkx's ``pagerank(G, alpha, personalization, weight, dangling)``.  Without
``dangling`` it is the fixed point of

    x_v = (1 − α) p_v + α Σ_{u→v} w_uv x_u / W_out(u),      W_out(u) = Σ_{u→t} w_ut,

normalised to sum 1.  Mass reaching out-degree-0 vertices (and vertices whose out-weights sum to
0) is dropped before normalising, which gives exactly networkx's answer, where dangling mass is
redistributed along ``p`` (both are proportional to ``(I − α Pᵀ)⁻¹ p``).  Parallel arcs add their
weights; ``p`` is the personalization vector normalised to sum 1 (uniform by default).

With ``dangling = d`` (normalised to sum 1) the mass of the dangling vertices ``D`` (no out-arc
of positive weight) follows ``d`` instead of ``p``: networkx's iteration
``x ← α (Pᵀx + (Σ_{u∈D} x_u) d) + (1 − α) p``, whose fixed point solves

    x = (1 − α) p + α Pᵀ x + α (Σ_{u∈D} x_u) d          (Langville and Meyer 2006, §4.5),

a :class:`LinearSystem` with ``dangling = d`` and ``dangling_scale = α·1_D``, which only the
Google-matrix power iteration runs (``mode="power"``, chosen automatically;
:mod:`digraph.dispatch.engines.power.cpu`).  When the graph has no dangling vertex, or ``d`` equals
``p``, the term changes nothing and the system is the plain one (every mode runs it).

The native ``tol`` bounds the L1 distance of the returned vector to the exact answer (default
1e-6): the engine stops when ``2 R / ((1 − α) Σx) ≤ tol``, with ``R`` the L1 norm of the pending
residual (docs/design.md §7), which bounds the error of the normalised answer.
"""

from collections.abc import Mapping

import numpy as np

from ..errors import InvalidParameterError, short_repr
from .base import (Algorithm, DegreeScaledSystem, LinearSystem, check_bool, check_probability,
                   check_weights, normalized, scaled_inverse, weight_sums)

__all__ = ["PageRank", "personalization_vector"]


def personalization_vector(graph, personalization, algo="pagerank", what="personalization"):
    """The distribution a personalization (or dangling) vector gives: non-negative, sum 1.

    Parameters
    ----------
    graph : Graph
    personalization : dict or array-like
        ``{vertex id: weight}`` (vertices left out weigh 0; a key that is not a vertex is
        refused) or one weight per vertex, in the order of ``graph.vertex_ids``.  Weights are
        real numbers, finite and non-negative, at least one of them positive; only their ratios
        count.
    algo, what : str
        The algorithm and the parameter, for error messages.

    Returns
    -------
    numpy.ndarray of float64
        The weights divided by the largest one and then by their sum, so that weights whose sum
        overflows float64 (``1e308`` twice) or that are subnormal (``5e-324``) give the same
        distribution as the same ratios of ordinary numbers.

    Raises
    ------
    InvalidParameterError
        Not a dict or an array of one weight per vertex (a string, a set, a scalar, another
        length), a weight that is not a real number, negative, NaN or infinite (naming the
        vertex), or every weight 0.
    VertexNotFoundError
        A key that is not a vertex of the graph.
    """
    n = graph.num_vertices
    if isinstance(personalization, Mapping):
        keys = list(personalization.keys())
        vals = _weights(list(personalization.values()), keys, algo, what)
        idx = graph.index_of(keys, f"{what} key") if keys else np.zeros(0, np.int64)
    else:
        try:
            ndim = np.ndim(personalization)
        except (ValueError, TypeError):  # a ragged list
            ndim = None
        if isinstance(personalization, (str, bytes, set, frozenset)) or ndim != 1:
            raise InvalidParameterError(
                f"{algo}: {what} must be a dict {{vertex id: weight}} or an array of one weight "
                f"per vertex ({n}), got {short_repr(personalization)}")
        if len(personalization) != n:
            raise InvalidParameterError(
                f"{algo}: {what} must be a dict or an array of one value per vertex ({n}), got "
                f"{len(personalization)} values")
        vals = _weights(personalization, graph.vertex_ids, algo, what)
        idx = None
    top = float(vals.max()) if vals.size else 0.0
    if not top > 0:
        raise InvalidParameterError(
            f"{algo}: {what} sums to 0; at least one vertex needs a positive value")
    vals = vals / top  # first the largest weight to 1: the sum below cannot overflow
    if idx is None:
        p = vals
    else:
        p = np.zeros(n, np.float64)
        np.add.at(p, idx, vals)
    p /= p.sum()  # between 1 and n
    return p


def _weights(values, ids, algo, what):
    """``values`` as a float64 array, each a finite non-negative real number (``ids[i]`` names
    the vertex of the i-th value in errors)."""
    try:
        arr = np.asarray(values)
    except (ValueError, TypeError):  # ragged: checked one by one below
        arr = None
    if arr is None or arr.ndim != 1 or arr.dtype.kind not in "biuf":
        arr = list(values)
        out = np.empty(len(arr), np.float64)
        for i, v in enumerate(arr):
            try:
                if isinstance(v, (str, bytes, np.str_, np.bytes_)):
                    raise TypeError
                out[i] = float(v)
            except OverflowError:  # an int beyond float64: not finite there
                out[i] = np.inf
            except (TypeError, ValueError):
                raise InvalidParameterError(
                    f"{algo}: {what} values must be real numbers: vertex "
                    f"{short_repr(_id(ids[i]))} has {short_repr(_id(v))}") from None
    else:
        out = arr.astype(np.float64)
    bad = np.flatnonzero(~(np.isfinite(out) & (out >= 0)))
    if bad.size:
        i = int(bad[0])
        more = f" ({bad.size} such values)" if bad.size > 1 else ""
        raise InvalidParameterError(
            f"{algo}: {what} values must be finite and non-negative: vertex "
            f"{short_repr(_id(ids[i]))} has {short_repr(_id(arr[i]))}{more}")
    return out


def _id(v):
    """A vertex id as Python writes it (20, not np.int64(20))."""
    return v.item() if isinstance(v, np.generic) else v


class PageRank(Algorithm):
    """PageRank with damping ``alpha``, optional personalization and arc weights.

    Parameters (of ``digraph.run(g, "pagerank", ...)``)
    ----------
    alpha : float
        Damping factor in (0, 1), default 0.85.
    personalization : dict or array, optional
        Teleport weights by original vertex id (missing ids get 0) or one per vertex: finite,
        non-negative real numbers, not all 0; only their ratios count (normalised soundly, see
        :func:`personalization_vector`).
    dangling : dict or array, optional
        Where the mass of vertices without out-arcs goes (networkx's ``dangling``), given as
        ``personalization``; normalised.  Default: along the personalization.  Runs in
        ``mode="power"`` only (the automatic choice); other modes and GPUs refuse it.
    weights : bool
        Use the graph's arc weights when it has them (default True); False: every arc weighs 1.
        Only ``True``, ``False`` or a ``numpy.bool_`` (text such as ``"no"`` is refused).
    """

    name = "pagerank"
    parameters = {"alpha": 0.85, "personalization": None, "weights": True, "dangling": None}
    default_tol = 1e-6
    divides_by_sum = True

    def prepare(self, graph, alpha, personalization, weights, dangling=None):
        alpha = check_probability("alpha", alpha, self.name)
        weights = check_bool("weights", weights, self.name)
        n = graph.num_vertices
        w = check_weights(graph, self.name) if (weights and graph.weighted) else None
        if dangling is not None:
            d = personalization_vector(graph, dangling, self.name, what="dangling")
            system = self.prepare(graph, alpha, personalization, weights)
            w_out = graph.out_degree if w is None else np.bincount(graph.arc_sources, weights=w,
                                                                    minlength=n)
            lost = w_out == 0  # networkx's dangling nodes: out-weight 0
            d /= d.sum()
            if personalization is None:
                p = np.full(n, 1.0 / max(n, 1))
            else:
                p = personalization_vector(graph, personalization, self.name)
                p /= p.sum()
            if lost.any() and not np.array_equal(d, p):
                if isinstance(system, DegreeScaledSystem):  # a plain system: only the CPU runs it
                    system = LinearSystem(b=system.b, src_scale=system.src_scale, normalize=True)
                system.dangling = d
                system.dangling_scale = np.where(lost, alpha, 0.0)
            return system
        if w is None and personalization is None:  # vectors made where they are used
            return DegreeScaledSystem(graph.out_degree, (1.0 - alpha) / max(n, 1), alpha,
                                      normalize=True, graph=graph)
        if w is None:
            w_out = graph.out_degree
        else:
            w_out = weight_sums(graph, w, graph.arc_sources, self.name, "out-arc")
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

    def reference(self, graph, alpha=0.85, personalization=None, weights=True, dangling=None):
        """Exact answer by a sparse direct solve of ``(I − α Pᵀ) x = (1 − α) p`` (with
        ``dangling``: ``(I − α Pᵀ − α d 1_Dᵀ) x = (1 − α) p``), normalised."""
        from ._reference import solve_linear_system
        sys = self.prepare(graph, **self.bind(graph, dict(
            alpha=alpha, personalization=personalization, weights=weights, dangling=dangling)))
        return self.finalize(graph, solve_linear_system(graph, sys))
