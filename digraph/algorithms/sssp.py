"""Single-source shortest paths (Bellman–Ford–Moore label correction; Dijkstra as the reference).

    d(s) = 0,   d(v) = min_{u→v} d(u) + w_uv,

over non-negative arc weights (1 per arc when the graph is unweighted or ``weights=False``;
parallel arcs: the lightest counts).  Unreachable vertices get +inf.  The answer equals
``scipy.sparse.csgraph.dijkstra`` and ``networkx.single_source_dijkstra_path_length`` exactly.
"""

import numpy as np

from ..errors import InvalidParameterError

from .base import REQUIRED, Algorithm, MonotoneSystem, check_bool, check_weights

__all__ = ["SSSP"]


class SSSP(Algorithm):
    """Shortest-path distances from ``source``.

    Parameters (of ``digraph.run(g, "sssp", ...)``)
    ----------
    source : vertex id
    weights : bool
        Use the graph's arc weights when present (default True); +inf weights are allowed (such
        an arc is never used), negative and NaN ones are refused.  Only ``True``, ``False`` or a
        ``numpy.bool_``.
    """

    name = "sssp"
    parameters = {"source": REQUIRED, "weights": True}

    def prepare(self, graph, source, weights):
        weights = check_bool("weights", weights, self.name)
        s = _one_source(graph, source)
        w = (check_weights(graph, self.name, allow_inf=True) if (weights and graph.weighted)
             else None)
        init = np.full(graph.num_vertices, np.inf)
        init[s] = 0.0
        return MonotoneSystem(init=init, relax="plus", combine="min", arc_value=w,
                              frontier=np.array([s]))

    def reference(self, graph, source, weights=True):
        """Dijkstra (scipy) on the graph with parallel arcs reduced to the lightest."""
        import scipy.sparse as sp
        from scipy.sparse.csgraph import dijkstra
        n = graph.num_vertices
        s = graph.index_of(source, "source")
        w = graph.arc_weights() if weights else np.ones(graph.num_arcs)
        src, dst = graph.arc_sources.astype(np.int64), graph.out_targets.astype(np.int64)
        # lightest of parallel arcs; zero weights are shifted to a tiny positive value and back,
        # since scipy drops explicit zeros of sparse inputs
        order = np.lexsort((w, dst, src))
        src, dst, w = src[order], dst[order], w[order]
        first = np.ones(src.size, bool)
        first[1:] = (src[1:] != src[:-1]) | (dst[1:] != dst[:-1])
        src, dst, w = src[first], dst[first], w[first]
        keep = np.isfinite(w)
        src, dst, w = src[keep], dst[keep], w[keep]
        zero = w == 0
        if zero.any():
            # exact: run on the graph where zero arcs contract; Dijkstra with 0-weight handled by
            # networkx instead
            import networkx as nx
            g = nx.DiGraph()
            g.add_nodes_from(range(n))
            g.add_weighted_edges_from(zip(src.tolist(), dst.tolist(), w.tolist()))
            d = nx.single_source_dijkstra_path_length(g, s)
            out = np.full(n, np.inf)
            out[list(d.keys())] = list(d.values())
            return out
        a = sp.csr_array((w, (src, dst)), shape=(n, n))
        return dijkstra(a, directed=True, indices=s)


def _one_source(graph, source):
    """The internal index of ``source``: one vertex (a tuple is one vertex when the graph's ids are
    tuples, as networkx grid nodes are); a list of several is refused, not run as multi-source."""
    if isinstance(source, tuple) and graph.vertex_ids.dtype == object:
        try:
            return int(graph.index_of([source], "source")[0])
        except Exception:
            pass
    s = graph.index_of(source, "source")
    if np.ndim(s) != 0:
        if len(s) == 1 and not isinstance(source, (list, tuple, np.ndarray)):
            return int(s[0])
        raise InvalidParameterError(
            f"sssp: source= takes one vertex id, got a {type(source).__name__} of {len(s)} "
            f"({str(source)[:60]}); run once per source")
    return int(s)
