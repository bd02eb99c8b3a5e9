"""The vertex condensation of a graph, laid out for SCC-by-SCC processing (the vertex state of the
CPU path modes, :mod:`digraph.dispatch.engines.scc.cpu`).

The strongly connected components of the graph (iterative Tarjan, :func:`digraph.preprocess.scc.
tarjan_scc`) form a DAG; the *level* of a component is the longest chain of components above it
(level 0: no arc enters it from another component), so every arc between two components goes
from a lower level to a strictly higher one, and the components of one level never depend on
each other.  This is the DAG sketch of DiGraph §3.2.2 at vertex granularity: the sketch of
:mod:`digraph.preprocess.dag` groups *paths*, which the per-arc (mirror) state needs; per-vertex
residuals only need the vertices' own dependencies, and the vertex condensation is finer (every
acyclic vertex is a component of its own, computed exactly once from final inputs).

Layout: vertices are renumbered to *positions*, by level, then component, then vertex id
(``order="vertex"``) or first appearance in the PathSet's storage order (``order="path"``: hot
paths first, each path's vertices consecutively, so a sweep walks the paths).  Two CSR arrays in
position space split the arcs:

* ``iout_*`` — out-arcs inside a component (pushed while the component iterates);
* ``ein_*`` — in-arcs from other components (pulled once, when the component starts: its
  predecessors are final by then).

``*_arc`` keeps each arc's CSR index, for arc factors.  Built in O(n + m) Numba passes plus sorts
of n keys; kept on the graph (:func:`condensation_for`), since it depends on nothing else.  A graph
of fewer than :data:`NUMPY_ARCS` arcs is sorted and split by numpy instead (the same arrays): its
build compiles only Tarjan's and the levels' kernels.
"""

import time

import numpy as np
from numba import njit, prange

from ..graph import NUMPY_ARCS  # fewer arcs: sorted and split by numpy (argsort_keys, split_arcs)
from ..preprocess.scc import tarjan_scc
from ..smx.cpu.serial import pick, serial_twin

__all__ = ["Condensation", "condensation_for", "cached_condensation", "largest_share_bound",
           "inside_in_arcs", "ORDERS", "NUMPY_ARCS"]

ORDERS = ("vertex", "path")



@njit(cache=True, nogil=True)
def _levels(in_offsets, in_sources, by_topo, comp_start, level, vlev):
    """Longest chain of components above each component (components in topological order),
    written to ``level``; ``vlev`` (int64, a vertex's level) comes filled with -1.

    A vertex's level is written once its component is done (-1 before), so an in-arc's source
    costs one scattered read: a source of the same component is not done yet, and one of a later
    component cannot be (topological order).  The caller allocates (the kernel compiles without
    numpy's allocators)."""
    for c in range(level.size):
        lev = 0
        for i in range(comp_start[c], comp_start[c + 1]):
            v = by_topo[i]
            for k in range(in_offsets[v], in_offsets[v + 1]):
                lv = vlev[in_sources[k]] + 1
                if lv > lev:
                    lev = lv
        level[c] = lev
        for i in range(comp_start[c], comp_start[c + 1]):
            vlev[by_topo[i]] = lev


@njit(cache=True, nogil=True)
def stable_argsort(keys, nkeys):
    """``np.argsort(keys, kind="stable")`` for integer keys in ``[0, nkeys)``, by counting in
    O(n + nkeys), faster than numpy's stable sort (called three times a build; figures:
    docs/history/docstring-measurements.md, "digraph.paths.condensation.stable_argsort")."""
    start = np.zeros(nkeys + 1, np.int64)
    for i in range(keys.size):
        start[keys[i] + 1] += 1
    for k in range(nkeys):
        start[k + 1] += start[k]
    out = np.empty(keys.size, np.int64)
    for i in range(keys.size):
        k = keys[i]
        out[start[k]] = i
        start[k] += 1
    return out


@njit(cache=True, nogil=True)
def _path_keys(n, path_offsets, path_vertices):
    """First position of each vertex in the PathSet's storage order."""
    key = np.full(n, np.int64(1) << 62)
    k = 0
    for i in range(path_vertices.size):
        v = path_vertices[i]
        if key[v] > k:
            key[v] = k
        k += 1
    return key


@njit(parallel=True, cache=True, nogil=True)
def _split_arcs(pos, comp_of_pos, comp_offsets, out_offsets, out_targets, in_offsets, in_sources,
                in_arcs):
    """The ``iout_*`` and ``ein_*`` CSR arrays (module docstring), two parallel passes over the
    positions (count, then fill).  An arc ``u → w`` lies inside ``u``'s component when ``pos[w]``
    falls in that component's range of positions, so each arc end costs one random read of
    ``pos`` (4 bytes a vertex below 2^31 vertices) and not two (``comp`` and ``pos``): the
    scattered reads are what the build waits on.  Both passes walk the vertices in their own
    order, so each vertex's rows of ``out_*`` and ``in_*`` are read where they lie and only its
    slot in the output is looked up (``pos[u]``), instead of jumping to the rows of
    ``order[i]``."""
    n = pos.size
    iout_off = np.zeros(n + 1, np.int64)
    ein_off = np.zeros(n + 1, np.int64)
    for u in prange(n):  # vertices in their order: each row is read where it lies
        i = pos[u]
        c = comp_of_pos[i]
        lo = comp_offsets[c]
        hi = comp_offsets[c + 1]
        k_in = 0
        for e in range(out_offsets[u], out_offsets[u + 1]):
            p = pos[out_targets[e]]
            if lo <= p < hi:
                k_in += 1
        iout_off[i + 1] = k_in
        k_out = 0
        for k in range(in_offsets[u], in_offsets[u + 1]):
            p = pos[in_sources[k]]
            if p < lo or p >= hi:
                k_out += 1
        ein_off[i + 1] = k_out
    for i in range(n):
        iout_off[i + 1] += iout_off[i]
        ein_off[i + 1] += ein_off[i]
    iout_tgt = np.empty(iout_off[n], pos.dtype)
    iout_arc = np.empty(iout_off[n], np.int64)
    ein_src = np.empty(ein_off[n], pos.dtype)
    ein_arc = np.empty(ein_off[n], np.int64)
    for u in prange(n):
        i = pos[u]
        c = comp_of_pos[i]
        lo = comp_offsets[c]
        hi = comp_offsets[c + 1]
        j = iout_off[i]
        for e in range(out_offsets[u], out_offsets[u + 1]):
            p = pos[out_targets[e]]
            if lo <= p < hi:
                iout_tgt[j] = p
                iout_arc[j] = e
                j += 1
        j = ein_off[i]
        for k in range(in_offsets[u], in_offsets[u + 1]):
            p = pos[in_sources[k]]
            if p < lo or p >= hi:
                ein_src[j] = p
                ein_arc[j] = in_arcs[k]
                j += 1
    return iout_off, iout_tgt, iout_arc, ein_off, ein_src, ein_arc


_split_arcs_serial = serial_twin(_split_arcs)


def argsort_keys(keys, nkeys, numpy=False):
    """``np.argsort(keys, kind="stable")`` (int64) of integer keys in ``[0, nkeys)``: by numpy
    when ``numpy``, else by :func:`stable_argsort`; the same permutation either way (a stable
    sort's is unique)."""
    if numpy:
        return np.argsort(keys, kind="stable").astype(np.int64, copy=False)
    return stable_argsort(keys, np.int64(nkeys))


def _split_numpy(pos, comp_of_pos, out_offsets, out_targets, in_offsets, in_sources, in_arcs):
    """The arrays of :func:`_split_arcs` (the same values, types and order) by numpy sorts."""
    n = pos.size
    comp_of = comp_of_pos[pos]  # each vertex's component

    def rows(offsets, ends, keep):
        """(row offsets by position, selected entries ordered by their row's position, then as
        they lie): the entries ``k`` of each vertex's row with ``keep[k]``."""
        owner = np.repeat(np.arange(n), np.diff(offsets))
        sel = np.flatnonzero(keep(comp_of[owner], comp_of[ends]))
        at = pos[owner[sel]]
        sel = sel[np.argsort(at, kind="stable")]
        off = np.zeros(n + 1, np.int64)
        np.cumsum(np.bincount(at, minlength=n), out=off[1:])
        return off, sel

    iout_off, e = rows(out_offsets, out_targets, np.equal)
    ein_off, k = rows(in_offsets, in_sources, np.not_equal)
    return (iout_off, pos[out_targets[e]], e.astype(np.int64), ein_off, pos[in_sources[k]],
            in_arcs[k].astype(np.int64))


def split_arcs(pos, comp_of_pos, comp_offsets, graph, numpy=False):
    """The ``iout_*`` and ``ein_*`` arrays of ``graph`` (module docstring): by numpy when
    ``numpy``, else by :func:`_split_arcs` (its serial twin for small graphs); the same arrays
    either way."""
    if numpy:
        return _split_numpy(pos, comp_of_pos, graph.out_offsets, graph.out_targets,
                            graph.in_offsets, graph.in_sources, graph.in_arcs)
    return pick(_split_arcs, _split_arcs_serial, graph.num_arcs)(
        pos, comp_of_pos, comp_offsets, graph.out_offsets, graph.out_targets, graph.in_offsets,
        graph.in_sources, graph.in_arcs)


class Condensation:
    """Components of a graph by level, with the arcs split into inside / between components.

    Attributes
    ----------
    order : int64 array, n
        Vertex at each position (``pos[order] = arange(n)``).
    comp_offsets : int64 array, C+1
        Component ``c`` holds positions ``comp_offsets[c]:comp_offsets[c+1]``; components are
        numbered by level, then topologically.
    level_offsets : int64 array, L+1
        Components of level ``l``: ``level_offsets[l]:level_offsets[l+1]``.
    comp_arcs : int64 array, C
        Arcs inside each component (0: the component is one vertex without a self-loop).
    iout_offsets, iout_targets, iout_arcs, ein_offsets, ein_sources, ein_arcs
        The two CSR arrays of the module docstring, in position space.
    time : float
        Seconds it took to build.
    """

    def __init__(self, graph, order="vertex", pathset=None):
        if order not in ORDERS:
            raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
        t0 = time.perf_counter()
        n = graph.num_vertices
        small = graph.num_arcs < NUMPY_ARCS
        lab, ncomp = tarjan_scc(graph.out_offsets, graph.out_targets, n)
        topo = ncomp - 1 - lab  # Tarjan numbers components in reverse topological order
        by_topo = argsort_keys(topo, ncomp, small)
        start = np.zeros(ncomp + 1, np.int64)
        np.cumsum(np.bincount(topo, minlength=ncomp), out=start[1:])
        level = np.empty(ncomp, np.int64)
        _levels(graph.in_offsets, graph.in_sources, by_topo, start, level, np.full(n, -1, np.int64))
        by_level = argsort_keys(level, level.max() + 1 if ncomp else 0, small)
        rank = np.empty(ncomp, np.int64)
        rank[by_level] = np.arange(ncomp)
        comp = rank[topo]
        if order == "path":
            if pathset is None:
                raise ValueError("order='path' needs the PathSet")
            key = _path_keys(np.int64(n), pathset.path_offsets, pathset.path_vertices)
            self.order = np.lexsort((key, comp)).astype(np.int64)
        else:
            self.order = argsort_keys(comp, ncomp, small)
        idx = np.int32 if n < 2**31 else np.int64
        pos = np.empty(n, idx)
        pos[self.order] = np.arange(n, dtype=idx)
        self.comp_offsets = np.zeros(ncomp + 1, np.int64)
        np.cumsum(np.bincount(comp, minlength=ncomp), out=self.comp_offsets[1:])
        (self.iout_offsets, self.iout_targets, self.iout_arcs, self.ein_offsets, self.ein_sources,
         self.ein_arcs) = split_arcs(pos, comp[self.order], self.comp_offsets, graph, small)
        self.comp_arcs = np.diff(self.iout_offsets[self.comp_offsets])
        lev = level[by_level]
        nl = int(lev[-1]) + 1 if ncomp else 0
        self.level_offsets = np.searchsorted(lev, np.arange(nl + 1)).astype(np.int64)
        self.num_components = int(ncomp)
        self.num_levels = nl
        self.vertex_order = order
        self.time = time.perf_counter() - t0

    def level(self, L):
        """Components of level ``L``."""
        return np.arange(self.level_offsets[L], self.level_offsets[L + 1], dtype=np.int64)


def condensation_for(graph, order="vertex", pathset=None):
    """(:class:`Condensation` of ``graph``, seconds spent building it now: 0 when cached)."""
    key = ("condensation", order, id(pathset) if order == "path" else None)
    if key not in graph._cache:
        graph._cache[key] = Condensation(graph, order, pathset)
        return graph._cache[key], graph._cache[key].time
    return graph._cache[key], 0.0


def inside_in_arcs(cond):
    """``(iin_offsets, iin_sources, iin_perm)``: the arcs inside components grouped by target
    (the transpose of ``iout_*``, in position space; ``iin_perm[e]`` is the ``iout`` index of
    in-arc ``e``, sources in increasing order), for the SCC engine's pulled sweeps; built once
    (a counting sort, O(n + inside arcs)) and kept on the condensation."""
    got = cond.__dict__.get("_inside_in")
    if got is None:
        n = cond.iout_offsets.size - 1
        perm = stable_argsort(cond.iout_targets.astype(np.int64), n)
        src = np.repeat(np.arange(n, dtype=cond.iout_targets.dtype), np.diff(cond.iout_offsets))
        off = np.zeros(n + 1, np.int64)
        np.cumsum(np.bincount(cond.iout_targets, minlength=n), out=off[1:])
        got = cond.__dict__["_inside_in"] = (off, src[perm], perm)
    return got


def cached_condensation(graph, order="vertex"):
    """The :class:`Condensation` already kept on ``graph`` (vertex order), or None: nothing is
    built."""
    return graph._cache.get(("condensation", order, None))


@njit(cache=True, nogil=True)
def _two_sided_arcs(out_offsets, out_targets, in_offsets):
    """Arcs whose two ends each have an in-arc and an out-arc."""
    total = 0
    for v in range(out_offsets.size - 1):
        if in_offsets[v + 1] == in_offsets[v]:
            continue
        for k in range(out_offsets[v], out_offsets[v + 1]):
            t = out_targets[k]
            if out_offsets[t + 1] > out_offsets[t] and in_offsets[t + 1] > in_offsets[t]:
                total += 1
    return total


def largest_share_bound(graph):
    """An upper bound on the share of the arcs inside the largest strongly connected component,
    in one pass over the arcs and without the condensation: an arc inside a component of two or
    more vertices (or a self-loop) joins two vertices that each have an in-arc and an out-arc.
    Kept on the graph.  Against the true share (``comp_arcs.max() / m``) it is tight where
    sinks and sources leave the cycles, loose on web graphs, whose small components hang
    together through arcs both ways (figures: docs/history/docstring-measurements.md,
    "digraph.paths.condensation.largest_share_bound")."""
    key = ("largest_share_bound",)
    if key not in graph._cache:
        m = graph.num_arcs
        graph._cache[key] = (_two_sided_arcs(graph.out_offsets, graph.out_targets,
                                             graph.in_offsets) / m
                             if m else 0.0)
    return graph._cache[key]
