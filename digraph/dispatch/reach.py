"""A linear system solved on the part of the graph its constant term reaches.

For ``x = b + A x`` with ``A[v, u] ≠ 0`` only along arcs ``u → v``, the solution is
``x = Σ_k A^k b``: it is zero, exactly, at every vertex no path reaches from the support of ``b``
(the seeds of adsorption, a personalised PageRank's teleport vector).  The reached set ``R`` is
closed under out-arcs, so every arc out of ``R`` stays in it, each vertex of ``R`` keeps its
out-degree, and the system restricted to ``R`` (``b``, the vertex factors and the arc factors of
the arcs out of ``R``, in the graph's own CSR order) has the solution of the whole system on
``R``.  An engine's certified bound on the restricted system is therefore a bound on the whole
answer, which is zero elsewhere; a normalised answer (PageRank) divides by the same sum.  The
mass-preserving power iteration (teleport and dangling mass both sent along ``b``) stays inside
``R`` as well.

:func:`restrict` finds ``R`` by a breadth-first search over out-arcs that gives up once it has
read :attr:`~.route.settings.RouteSettings.reach_share` of the arcs, and builds the
restricted graph and system; ``digraph.run`` (``mode=None``; on GPUs, systems that are not
normalised only) solves that with the automatic choice and puts the answer back
(``stats["reach_vertices"]``, ``stats["reach_arcs"]``, the reason in ``stats["route"]``).
Measured: docs/history/benchmarks-notebook.md, "Small reach: solving where the seeds reach".
"""

import hashlib

import numpy as np
from numba import njit

from ..algorithms.base import LinearSystem

__all__ = ["restrict", "Restricted", "reach", "expand"]

_WIDE = "reach-wide"
"""Key of ``graph._cache``: ``(_WIDE, share) → {digest of a support: True}``, the supports of
``b`` whose reach exceeded the share (or covered every vertex), so that a run with the same
seeds does not search again (a search costs up to a pass over the share of the arcs)."""

_WIDE_KEPT = 64
"""The most supports kept per graph and share (the set is emptied beyond)."""


@njit(cache=True, nogil=True)
def _reach(out_offsets, out_targets, start, cap):
    """(the vertices reached from ``start`` in the order found, arcs read), or (empty, -1) once
    more than ``cap`` arcs have been read."""
    n = out_offsets.size - 1
    seen = np.zeros(n, np.bool_)
    size = min(n, start.size + cap)
    queue = np.empty(size, np.int64)
    tail = 0
    for s in start:
        if not seen[s]:
            seen[s] = True
            queue[tail] = s
            tail += 1
    head = 0
    arcs = 0
    while head < tail:
        u = queue[head]
        head += 1
        lo = out_offsets[u]
        hi = out_offsets[u + 1]
        arcs += hi - lo
        if arcs > cap:
            return queue[:0], -1
        for e in range(lo, hi):
            v = out_targets[e]
            if not seen[v]:
                seen[v] = True
                queue[tail] = v
                tail += 1
    return queue[:tail], arcs


@njit(cache=True, nogil=True)
def _arcs_of(out_offsets, verts, total):
    """The CSR indices of the out-arcs of ``verts``, vertex after vertex."""
    out = np.empty(total, np.int64)
    k = 0
    for u in verts:
        for e in range(out_offsets[u], out_offsets[u + 1]):
            out[k] = e
            k += 1
    return out


def reach(graph, start, cap):
    """The sorted vertices reachable from ``start`` (int array) by out-arcs and the arcs out of
    them, or None when the search reads more than ``cap`` arcs."""
    got, arcs = _reach(np.asarray(graph.out_offsets), np.asarray(graph.out_targets),
                       np.asarray(start, np.int64), np.int64(cap))
    if arcs < 0:
        return None
    return np.sort(got), int(arcs)


class Restricted:
    """The graph and system on the reached vertices ``vertices`` (sorted, of the graph
    ``whole``).  The restricted graph knows the whole one and its vertices there
    (``graph._part_of``, a plain pair: no reference cycle keeps a GPU's copy of it alive), so the
    end of a run, on any device, puts the answer back (:func:`expand`)."""

    def __init__(self, whole, graph, system, vertices, arcs, seeds):
        self.whole, self.graph, self.system = whole, graph, system
        self.vertices, self.arcs, self.seeds = vertices, arcs, seeds
        graph._part_of = (whole, vertices)

    def why(self, graph):
        return (f"restricted to the {self.vertices.size:,} of {graph.num_vertices:,} vertices "
                f"({self.arcs:,} of {graph.num_arcs:,} arcs) that the {self.seeds:,} vertices "
                "where b ≠ 0 reach (the answer is 0 elsewhere, exactly)")


def expand(part_of, x):
    """The whole graph's answer from a restricted one (``part_of``: the restricted graph's
    ``_part_of``): zero outside the reached vertices."""
    whole, vertices = part_of
    out = np.zeros(whole.num_vertices, np.float64)
    out[vertices] = np.asarray(x, np.float64)
    return out


def restrict(graph, system, share):
    """:class:`Restricted` for a linear system whose constant term reaches at most ``share`` of
    the arcs (module docstring), else None: a system with a rank-one term (``dangling``) or a
    constant ``b``, or a reach that covers every vertex, is left whole."""
    if (system.family != "linear" or system.dangling is not None
            or system.b_constant is not None or share <= 0):
        return None
    n, m = graph.num_vertices, graph.num_arcs
    support = system.b_support
    if support is None:
        support = np.flatnonzero(np.asarray(system.b))
    if support.size == 0 or support.size > share * n:
        return None
    wide = graph._cache.setdefault((_WIDE, share), {})
    key = hashlib.blake2b(support.tobytes(), digest_size=16).digest()
    if key in wide:  # this support reached too much before: no search again
        return None
    got = reach(graph, support, int(share * m))
    if got is None or got[0].size == n:
        if len(wide) >= _WIDE_KEPT:
            wide.clear()
        wide[key] = True
        return None
    verts, arcs = got
    from ..graph import Graph
    off = np.asarray(graph.out_offsets)
    eidx = _arcs_of(off, verts, arcs)
    src = np.repeat(np.arange(verts.size, dtype=np.int64), off[verts + 1] - off[verts])
    # the part is closed under out-arcs: every target is one of verts (sorted), found by search
    dst = np.searchsorted(verts, np.asarray(graph.out_targets)[eidx])
    # sorted by (source, target) in both numberings (the new one keeps the order): the
    # restricted graph's CSR order is the order of eidx, so arc factors follow by eidx
    sub = Graph.from_arrays(src, dst, None if graph.weights is None else graph.weights[eidx],
                            vertex_ids=graph.vertex_ids[verts], directed=graph.directed,
                            name=graph.name)

    def part(v):
        return None if v is None else np.ascontiguousarray(np.asarray(v)[verts])
    rs = LinearSystem(b=part(system.b), src_scale=part(system.src_scale),
                      arc_scale=None if system.arc_scale is None else
                      np.ascontiguousarray(np.asarray(system.arc_scale)[eidx]),
                      dst_scale=part(system.dst_scale), normalize=system.normalize)
    if system.src_degree_scale is not None:  # out-degrees are kept: the recipe still holds
        rs.src_degree_scale = system.src_degree_scale
    return Restricted(graph, sub, rs, verts, arcs, int(support.size))
