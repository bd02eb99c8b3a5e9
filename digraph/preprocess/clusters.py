"""Clusters of nearby vertices, each small enough for one GPU thread block.

DiGraph's argument is that a new value should cross a whole *path* in one round.  On road-like
graphs (grids, geometric graphs: low degree, high diameter, every arc local) the same holds for a
small *region*: :func:`clusters_for` cuts the graph into clusters of ``size``
vertices, and the GPU's cluster engine (:mod:`digraph.dispatch.engines.cluster.gpu`) relaxes each
one to its local fixpoint in a thread block's shared memory within a single round, so a value
crosses a whole cluster (tens of hops) per round instead of one hop.

The cut is greedy breadth-first growth (the "graph growing" of Karypis and Kumar's multilevel
schemes, without the refinement; Karypis & Kumar, SIAM J. Sci. Comput. 20(1), 1998, §4.1): the
smallest unassigned vertex seeds a cluster, which takes unassigned in- and out-neighbours in BFS
order until it holds ``size`` vertices; when the growth runs out of neighbours first, the next
seed grows in the same cluster, so every cluster but the last holds exactly ``size`` vertices (on
web graphs growth alone stops after a few vertices, and a thread block would get only those;
measured: docs/history/benchmarks-notebook.md, "SSSP on road-like graphs on one GPU").  A cluster
is then a union of connected pieces.
It runs in O(n + m) in Numba.  On a grid a
cluster is a diamond of about ``sqrt(2 * size)`` hops across; on graphs without locality (R-MAT,
social graphs) most arcs leave their cluster, which :func:`internal_share_sample` detects cheaply
before anything is built (the router's test).

:func:`cluster_layout` returns what the engine uploads: the vertices renumbered cluster by cluster,
each vertex's in-arcs with those from its own cluster first (their sources as indices within the
cluster) and the rest after (global new ids), and for each vertex the other clusters its out-arcs
reach (the clusters to run again when it improves).
"""

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..errors import InvalidParameterError

__all__ = ["Clusters", "clusters_for", "cluster_layout", "internal_share_sample"]


@dataclass(frozen=True)
class Clusters:
    """A cut of the vertices into clusters of ``size`` vertices (the last may hold fewer), each
    a union of connected pieces grown breadth-first.

    Attributes
    ----------
    size : int
        The largest cluster allowed.
    order : ndarray of int64, shape (n,)
        The vertices cluster by cluster: new id ``i`` is old vertex ``order[i]``.
    new_id : ndarray of int64, shape (n,)
        The inverse: ``new_id[order[i]] == i``.
    starts : ndarray of int64, shape (num_clusters + 1,)
        Cluster ``c`` holds new ids ``starts[c]`` to ``starts[c + 1] - 1``.
    internal_arcs : int
        Arcs whose two ends lie in the same cluster.
    """

    size: int
    order: np.ndarray
    new_id: np.ndarray
    starts: np.ndarray
    internal_arcs: int

    @property
    def num_clusters(self):
        return self.starts.size - 1

    def internal_share(self, m):
        """The share of ``m`` arcs whose two ends lie in the same cluster."""
        return self.internal_arcs / m if m else 1.0


@njit(cache=True, nogil=True, inline="always")
def _absorb(off, nbr, v, tag, bound, new, order, pos, end):
    """Breadth-first growth's step: the neighbours ``w`` of ``v`` (CSR ``off``/``nbr``) with
    ``tag[w] < bound`` join (``tag[w] = new``, appended to ``order`` while ``pos < end``); returns
    the new ``pos``.  Clusters: tags are labels, −1 free; samples: tags are stamps, older ones
    free."""
    for e in range(off[v], off[v + 1]):
        w = nbr[e]
        if tag[w] < bound and pos < end:
            tag[w] = new
            order[pos] = w
            pos += 1
    return pos


@njit(cache=True, nogil=True)
def _grow(n, out_off, out_tgt, in_off, in_src, size, order, label, starts):
    """Greedy BFS growth (module docstring); fills ``order``, ``label`` (cluster of each vertex)
    and ``starts``; returns the number of clusters (n > 0)."""
    for v in range(n):
        label[v] = -1
    pos = 0
    c = -1
    start = 0
    for s in range(n):
        if label[s] >= 0:
            continue
        if c < 0 or pos - start >= size:  # a new cluster; else the seed fills the last one up
            c += 1
            start = pos
            starts[c] = start
        label[s] = c
        order[pos] = s
        head = pos
        pos += 1
        while head < pos and pos - start < size:
            v = order[head]
            head += 1
            pos = _absorb(out_off, out_tgt, v, label, 0, c, order, pos, start + size)
            pos = _absorb(in_off, in_src, v, label, 0, c, order, pos, start + size)
    starts[c + 1] = n
    return c + 1


@njit(cache=True, nogil=True)
def _internal(n, out_off, out_tgt, label):
    k = 0
    for v in range(n):
        for e in range(out_off[v], out_off[v + 1]):
            if label[out_tgt[e]] == label[v]:
                k += 1
    return k


def _check_size(size):
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
        raise InvalidParameterError(f"cluster size must be a positive integer, got {size!r}")
    return int(size)


def clusters_for(graph, size):
    """The graph's :class:`Clusters` of at most ``size`` vertices (built once, kept on the
    graph)."""
    size = _check_size(size)
    key = ("clusters", size)
    got = graph._cache.get(key)
    if got is not None:
        return got
    n = graph.num_vertices
    out_off = np.asarray(graph.out_offsets, np.int64)
    out_tgt = np.asarray(graph.out_targets)
    in_off = np.asarray(graph.in_offsets, np.int64)
    in_src = np.asarray(graph.in_sources)
    order = np.empty(n, np.int64)
    label = np.empty(n, np.int64)
    starts = np.empty(n + 1, np.int64)
    k = _grow(n, out_off, out_tgt, in_off, in_src, size, order, label, starts)
    new_id = np.empty(n, np.int64)
    new_id[order] = np.arange(n, dtype=np.int64)
    cl = Clusters(size, order, new_id, starts[:k + 1].copy(),
                  int(_internal(n, out_off, out_tgt, label)))
    graph._cache[key] = cl
    return cl


@njit(cache=True, nogil=True)
def _layout(n, order, new_id, starts, label_new, in_off, in_src, in_arcs, out_off, out_tgt,
            off, src, arc, mid, xo_off, xo):
    """The renumbered in-arcs (local ones first, local sources as indices in the cluster) and the
    clusters each vertex's out-arcs reach besides its own (each listed once)."""
    pos = 0
    for i in range(n):
        v = order[i]
        c = label_new[i]
        base = starts[c]
        off[i] = pos
        for e in range(in_off[v], in_off[v + 1]):  # local in-arcs first
            j = new_id[in_src[e]]
            if label_new[j] == c:
                src[pos] = j - base
                arc[pos] = in_arcs[e]
                pos += 1
        mid[i] = pos
        for e in range(in_off[v], in_off[v + 1]):
            j = new_id[in_src[e]]
            if label_new[j] != c:
                src[pos] = j
                arc[pos] = in_arcs[e]
                pos += 1
    off[n] = pos
    k = 0
    seen = np.full(starts.size, -1, np.int64)  # the last vertex that listed each cluster
    for i in range(n):
        v = order[i]
        c = label_new[i]
        xo_off[i] = k
        for e in range(out_off[v], out_off[v + 1]):
            d = label_new[new_id[out_tgt[e]]]
            if d != c and seen[d] != i:
                seen[d] = i
                xo[k] = d
                k += 1
    xo_off[n] = k
    return k


def cluster_layout(graph, cl):
    """The renumbered arrays of ``cl`` (kept on the graph with it): a dict with ``off``, ``mid``
    (int64, n + 1 and n: vertex ``i``'s in-arcs are ``off[i]:off[i+1]``, those from its own cluster
    ``off[i]:mid[i]``), ``src`` (int32: an index within the cluster for local arcs, a new id
    otherwise), ``arc`` (the arcs' ids in the graph's CSR order, for their values), ``label``
    (each new id's cluster), ``xo_off`` / ``xo`` (the other clusters each new id's out-arcs
    reach), ``local_arcs`` / ``external_arcs`` (per cluster)."""
    key = ("cluster-layout", cl.size)
    got = graph._cache.get(key)
    if got is not None:
        return got
    n, m = graph.num_vertices, graph.num_arcs
    sizes = np.diff(cl.starts)
    label_new = np.repeat(np.arange(cl.num_clusters, dtype=np.int64), sizes)
    off = np.empty(n + 1, np.int64)
    mid = np.empty(n, np.int64)
    src = np.empty(m, np.int32 if n < 2**31 - 1 else np.int64)
    arc = np.empty(m, np.int64)
    xo_off = np.empty(n + 1, np.int64)
    xo = np.empty(m, np.int64)
    k = _layout(n, cl.order, cl.new_id, cl.starts, label_new,
                np.asarray(graph.in_offsets, np.int64), np.asarray(graph.in_sources),
                np.asarray(graph.in_arcs, np.int64), np.asarray(graph.out_offsets, np.int64),
                np.asarray(graph.out_targets), off, src, arc, mid, xo_off, xo)
    local = np.add.reduceat(mid - off[:-1], cl.starts[:-1]) if n else np.zeros(0, np.int64)
    total = np.add.reduceat(np.diff(off), cl.starts[:-1]) if n else np.zeros(0, np.int64)
    lay = {"off": off, "mid": mid, "src": src, "arc": arc, "label": label_new,
           "xo_off": xo_off, "xo": xo[:k].astype(np.int32), "local_arcs": local,
           "external_arcs": total - local}
    graph._cache[key] = lay
    return lay


@njit(cache=True, nogil=True)
def _sample(out_off, out_tgt, in_off, in_src, size, seeds, mark, queue):
    inside = 0
    total = 0
    for r in range(seeds.size):
        stamp = r + 1
        s = seeds[r]
        mark[s] = stamp
        queue[0] = s
        pos = 1
        head = 0
        while head < pos and pos < size:
            v = queue[head]
            head += 1
            pos = _absorb(out_off, out_tgt, v, mark, stamp, stamp, queue, pos, size)
            pos = _absorb(in_off, in_src, v, mark, stamp, stamp, queue, pos, size)
        for q in range(pos):
            v = queue[q]
            for e in range(out_off[v], out_off[v + 1]):
                total += 1
                if mark[out_tgt[e]] == stamp:
                    inside += 1
    return inside, total


def internal_share_sample(graph, size, samples=32, seed=0):
    """The share of arcs that stay inside a BFS ball of ``size`` vertices, over ``samples`` balls
    grown from random seeds: an estimate of :meth:`Clusters.internal_share` in
    O(samples · size · degree) time, without building the clusters (a grid with ``size`` 1024:
    about 0.9; R-MAT: a few per cent)."""
    size = _check_size(size)
    n = graph.num_vertices
    if n == 0 or graph.num_arcs == 0:
        return 0.0
    rng = np.random.default_rng(seed)
    seeds = rng.integers(0, n, size=min(int(samples), n)).astype(np.int64)
    mark = np.zeros(n, np.int64)
    queue = np.empty(min(size, n), np.int64)
    inside, total = _sample(np.asarray(graph.out_offsets, np.int64), np.asarray(graph.out_targets),
                            np.asarray(graph.in_offsets, np.int64), np.asarray(graph.in_sources),
                            min(size, n), seeds, mark, queue)
    return inside / total if total else 0.0
