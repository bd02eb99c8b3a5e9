"""Path decomposition: Algorithm 1 of DiGraph (ASPLOS 2019, section 3.2.1), run per subgraph.

The vertices are cut into contiguous ranges balanced by arc count (:func:`vertex_ranges`); each range
with the arcs leaving its vertices is a *subgraph*, decomposed by one worker thread.  A worker runs
an iterative depth-first traversal with an explicit stack (no recursion):

* roots are taken in descending degree order (degree = in + out), so the traversal starts at hubs;
  a second sweep over the roots collects arcs left behind at the depth bound;
* the arcs of a vertex are followed in descending degree of their target (ties: increasing CSR
  order), so hubs chain into *hot* paths;
* every arc followed is appended to the current path; the traversal descends into the target only
  when it is a local, unvisited vertex and the depth is below ``dmax``; otherwise the path ends at the
  target (reaching a visited vertex: that vertex ends the path, Algorithm 1's "inner" case) and the
  next arc starts a new path at the vertex on top of the stack;
* backtracking out of a vertex ends the current path (Algorithm 1, line 21).

**Arcs that leave the range** (target owned by another subgraph) are followed like arcs to a visited
vertex: they end the current path (they become *path tails*); the traversal never enters another
worker's vertices, so workers share no state.  Head-to-tail merging (:mod:`.merge`) later joins such
paths across subgraph borders.

Every arc lies on exactly one path (each arc is taken once, through a per-vertex cursor), a path has
between 1 and ``dmax`` arcs, and the output is (``path_offsets``, ``path_vertices``, ``path_arc_ids``)
with the layout of :class:`digraph.paths.PathSet`: path ``p`` is ``path_vertices[path_offsets[p]:
path_offsets[p+1]]`` and its arcs are ``path_arc_ids[path_offsets[p]-p : path_offsets[p+1]-p-1]``.
"""

import numpy as np
from numba import njit

from ._parallel import run_parallel, vertex_ranges

__all__ = ["decompose", "decompose_range"]


@njit(cache=True, nogil=True)
def _sort_adjacency(out_offsets, out_targets, degree, lo, hi):
    """CSR arc indices of vertices lo..hi-1, each vertex's arcs by descending target degree (stable)."""
    a0 = out_offsets[lo]
    order = np.empty(out_offsets[hi] - a0, dtype=np.int64)
    kbuf = np.empty(32, dtype=np.int64)
    for u in range(lo, hi):
        s = out_offsets[u]
        e = out_offsets[u + 1]
        d = e - s
        base = s - a0
        if d <= 32:
            # insertion sort on descending degree (stable), keys kept in a small buffer
            for k in range(d):
                key = degree[out_targets[s + k]]
                j = k
                while j > 0 and kbuf[j - 1] < key:
                    kbuf[j] = kbuf[j - 1]
                    order[base + j] = order[base + j - 1]
                    j -= 1
                kbuf[j] = key
                order[base + j] = s + k
        else:
            keys = np.empty(d, dtype=np.int64)
            for k in range(d):
                keys[k] = -degree[out_targets[s + k]]
            perm = np.argsort(keys, kind="mergesort")
            for k in range(d):
                order[base + k] = s + perm[k]
    return order


@njit(cache=True, nogil=True)
def _by_degree_desc(degree, lo, hi):
    """Local indices 0..hi-lo-1 sorted by descending degree, stable (a counting sort)."""
    nloc = hi - lo
    dmax = 0
    for i in range(nloc):
        if degree[lo + i] > dmax:
            dmax = degree[lo + i]
    counts = np.zeros(dmax + 2, dtype=np.int64)
    for i in range(nloc):
        counts[dmax - degree[lo + i] + 1] += 1
    for k in range(dmax + 1):
        counts[k + 1] += counts[k]
    out = np.empty(nloc, dtype=np.int64)
    for i in range(nloc):
        k = dmax - degree[lo + i]
        out[counts[k]] = i
        counts[k] += 1
    return out


@njit(cache=True, nogil=True)
def decompose_range(out_offsets, out_targets, degree, lo, hi, dmax):
    """Algorithm 1 on the subgraph of vertices ``lo..hi-1`` (their out-arcs, local successors only).

    Returns ``(offsets, vertices, arc_ids)`` with offsets local to the returned arrays.
    """
    a0 = out_offsets[lo]
    mc = out_offsets[hi] - a0
    nloc = hi - lo
    order = _sort_adjacency(out_offsets, out_targets, degree, lo, hi)
    cursor = np.empty(nloc, dtype=np.int64)
    for i in range(nloc):
        cursor[i] = out_offsets[lo + i] - a0
    roots = _by_degree_desc(degree, lo, hi)
    visited = np.zeros(nloc, dtype=np.bool_)
    off = np.empty(mc + 1, dtype=np.int64)
    verts = np.empty(2 * mc, dtype=out_targets.dtype)
    arcs = np.empty(mc, dtype=np.int64)
    depth_cap = min(dmax, nloc)
    stack = np.empty(depth_cap + 1, dtype=np.int64)
    npaths = 0
    nv = 0
    na = 0
    for sweep in range(2):
        for r in roots:
            end_r = out_offsets[lo + r + 1] - a0
            if cursor[r] == end_r:
                continue
            visited[r] = True
            top = 0
            stack[0] = r
            open_path = False
            while top >= 0:
                lu = stack[top]
                if top < dmax and cursor[lu] < out_offsets[lo + lu + 1] - a0:
                    e = order[cursor[lu]]
                    cursor[lu] += 1
                    v = out_targets[e]
                    if not open_path:
                        off[npaths] = nv
                        verts[nv] = lo + lu
                        nv += 1
                        open_path = True
                    verts[nv] = v
                    nv += 1
                    arcs[na] = e
                    na += 1
                    lv = v - lo
                    if lv >= 0 and lv < nloc and not visited[lv]:
                        visited[lv] = True
                        top += 1
                        stack[top] = lv
                    else:
                        npaths += 1
                        open_path = False
                else:
                    if open_path:
                        npaths += 1
                        open_path = False
                    top -= 1
    off[npaths] = nv
    return off[:npaths + 1], verts[:nv], arcs[:na]


def _concat(parts, vdtype):
    """Concatenate per-subgraph results into one (offsets, vertices, arc_ids) triple."""
    if not parts:
        return np.zeros(1, np.int64), np.zeros(0, vdtype), np.zeros(0, np.int64)
    sizes = np.array([p[1].size for p in parts], dtype=np.int64)
    bases = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    offsets = np.concatenate([p[0][:-1] + b for p, b in zip(parts, bases)] + [np.array([sizes.sum()])])
    vertices = np.concatenate([p[1] for p in parts]).astype(vdtype, copy=False)
    arc_ids = np.concatenate([p[2] for p in parts])
    return offsets.astype(np.int64, copy=False), vertices, arc_ids


def decompose(graph, *, dmax=16, jobs=1, subgraph_arcs=1 << 18, degree=None):
    """Cut ``graph`` into arc-disjoint paths (Algorithm 1 per subgraph, subgraphs in parallel).

    Parameters
    ----------
    graph : digraph.Graph
    dmax : int
        Depth bound ``D_MAX`` of the traversal (>= 1); no path has more than ``dmax`` arcs.
    jobs : int
        Worker threads.  The result does not depend on it.
    subgraph_arcs : int
        Target number of arcs per subgraph (vertex range).
    degree : int64 array, optional
        in + out degree of each vertex (computed when absent).

    Returns
    -------
    (path_offsets int64, path_vertices, path_arc_ids int64, ranges int64)
    """
    if degree is None:
        degree = graph.out_degree + graph.in_degree
    ranges = vertex_ranges(graph.out_offsets, subgraph_arcs)
    tasks = [(graph.out_offsets, graph.out_targets, degree, np.int64(ranges[i]), np.int64(ranges[i + 1]),
              np.int64(dmax)) for i in range(ranges.size - 1)]
    parts = run_parallel(decompose_range, tasks, jobs)
    off, verts, arcs = _concat(parts, graph.out_targets.dtype)
    return off, verts, arcs, ranges
