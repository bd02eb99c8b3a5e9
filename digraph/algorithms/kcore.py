"""k-core decomposition: the core number of every vertex (Batagelj & Zaversnik, "An O(m)
algorithm for cores decomposition of networks", 2003), computed by the h-index iteration
(Montresor, De Pellegrini & Miorandi, "Distributed k-core decomposition", IEEE TPDS 2013;
Lü et al., "The H-index of a network node and its relation to degree and coreness", Nature
Communications 2016):

    c⁰(v) = deg(v),     c^{t+1}(v) = H({c^t(u) : u ∈ N(v)}),

where H is the h-index (the largest h with at least h values ≥ h), which decreases monotonically
to the core number from any order of updates.

Semantics are networkx's ``core_number`` on directed graphs: the degree is in-degree + out-degree,
neighbours are counted with multiplicity (a reciprocated pair u⇄v makes u a neighbour of v twice;
parallel arcs count once each), and self-loops are removed first (networkx refuses graphs with
self-loops; digraph drops them).  A graph read from an undirected source (networkx ``Graph``,
symmetric Matrix Market) stores every edge as two arcs; its core numbers are those of the
undirected graph, as networkx gives them.
"""

import numpy as np

from .base import Algorithm, HIndexSystem

__all__ = ["KCore"]


class KCore(Algorithm):
    """Core numbers (int64), networkx ``core_number`` semantics."""

    name = "kcore"
    parameters = {}
    value_dtype = np.int64

    def prepare(self, graph):
        return HIndexSystem(halve=not graph.directed)

    def finalize(self, graph, x, **params):
        return np.asarray(x, dtype=np.int64)

    def reference(self, graph):
        """Batagelj–Zaversnik peeling in plain Python on the undirected multigraph of the arcs."""
        n = graph.num_vertices
        src = graph.arc_sources.tolist()
        dst = graph.out_targets.tolist()
        nbrs = [[] for _ in range(n)]
        for u, v in zip(src, dst):
            if u != v:
                nbrs[u].append(v)
                nbrs[v].append(u)
        deg = [len(a) for a in nbrs]
        core = list(deg)
        import heapq
        heap = [(d, v) for v, d in enumerate(deg)]
        heapq.heapify(heap)
        removed = [False] * n
        k = 0
        while heap:
            d, v = heapq.heappop(heap)
            if removed[v] or d != deg[v]:
                continue
            k = max(k, d)
            core[v] = k
            removed[v] = True
            for u in nbrs[v]:
                if not removed[u]:
                    deg[u] -= 1
                    heapq.heappush(heap, (deg[u], u))
        out = np.asarray(core, dtype=np.int64)
        return out // 2 if not graph.directed else out
