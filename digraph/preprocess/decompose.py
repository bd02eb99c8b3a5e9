"""Path decomposition: Algorithm 1 of DiGraph (ASPLOS 2019, section 3.2.1), run per subgraph.

The vertices are cut into contiguous ranges balanced by arc count (:func:`vertex_ranges`); each
range with the arcs leaving its vertices is a *subgraph*, decomposed by one worker thread.  A worker
runs an iterative depth-first traversal with an explicit stack (no recursion):

* roots are taken in descending degree order (degree = in + out), so the traversal starts at hubs;
  a second sweep over the roots collects arcs left behind at the depth bound;
* the arcs of a vertex are followed in descending degree of their target (ties: increasing CSR
  order), so hubs chain into *hot* paths;
* every arc followed is appended to the current path; the traversal descends into the target only
  when it is a local, unvisited vertex and the depth is below ``dmax``; otherwise the path ends at
  the target (reaching a visited vertex: that vertex ends the path, Algorithm 1's "inner" case) and
  the next arc starts a new path at the vertex on top of the stack;
* backtracking out of a vertex ends the current path (Algorithm 1, line 21).

**Arcs that leave the range** (target owned by another subgraph) are followed like arcs to a visited
vertex: they end the current path (they become *path tails*); the traversal never enters another
worker's vertices, so workers share no state.  Head-to-tail merging (:mod:`.merge`) later joins such
paths across subgraph borders.

Every arc lies on exactly one path (each arc is taken once, through a per-vertex cursor), a path has
between 1 and ``dmax`` arcs, and the output is (``path_offsets``, ``path_vertices``,
``path_arc_ids``) with the layout of :class:`digraph.paths.PathSet`: path ``p`` is
``path_vertices[path_offsets[p]:path_offsets[p+1]]`` and its arcs are
``path_arc_ids[path_offsets[p]-p : path_offsets[p+1]-p-1]``.
"""

import numpy as np
from numba import njit

from ._parallel import run_parallel, vertex_ranges, workspace_or_numpy

__all__ = ["decompose", "decompose_range"]


@njit(cache=True, nogil=True)
def _sort_adjacency(out_offsets, out_targets, degree, lo, hi, kmax):
    """CSR arc indices of vertices lo..hi-1, each vertex's arcs by descending target degree
    (stable); ``kmax`` >= every ``degree`` (a rank from :func:`degree_rank`, so the counting sort is
    small)."""
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
                key = np.int64(degree[out_targets[s + k]])
                j = k
                while j > 0 and kbuf[j - 1] < key:
                    kbuf[j] = kbuf[j - 1]
                    order[base + j] = order[base + j - 1]
                    j -= 1
                kbuf[j] = key
                order[base + j] = s + k
    # lists longer than 32: one counting sort of all their arcs by descending degree (stable, so
    # ties keep CSR order), then a stable distribution back to their sources
    nbig = 0
    for u in range(lo, hi):
        d = out_offsets[u + 1] - out_offsets[u]
        if d > 32:
            nbig += d
    if nbig == 0:
        return order
    cnt = np.zeros(kmax + 2, dtype=np.int64)
    for u in range(lo, hi):
        if out_offsets[u + 1] - out_offsets[u] > 32:
            for e in range(out_offsets[u], out_offsets[u + 1]):
                cnt[kmax - np.int64(degree[out_targets[e]]) + 1] += 1
    for k in range(kmax + 1):
        cnt[k + 1] += cnt[k]
    tmp_e = np.empty(nbig, dtype=np.int64)
    tmp_u = np.empty(nbig, dtype=np.int64)
    for u in range(lo, hi):
        if out_offsets[u + 1] - out_offsets[u] > 32:
            for e in range(out_offsets[u], out_offsets[u + 1]):
                k = kmax - np.int64(degree[out_targets[e]])
                i = cnt[k]
                cnt[k] = i + 1
                tmp_e[i] = e
                tmp_u[i] = u
    cur = np.empty(hi - lo, dtype=np.int64)
    for u in range(lo, hi):
        cur[u - lo] = out_offsets[u] - a0
    for i in range(nbig):
        u = tmp_u[i] - lo
        order[cur[u]] = tmp_e[i]
        cur[u] += 1
    return order


@njit(cache=True, nogil=True)
def _by_degree_desc(degree, lo, hi):
    """Local indices 0..hi-lo-1 sorted by descending degree, stable (a counting sort)."""
    nloc = hi - lo
    dmax = 0
    for i in range(nloc):
        if np.int64(degree[lo + i]) > dmax:
            dmax = np.int64(degree[lo + i])
    counts = np.zeros(dmax + 2, dtype=np.int64)
    for i in range(nloc):
        counts[dmax - np.int64(degree[lo + i]) + 1] += 1
    for k in range(dmax + 1):
        counts[k + 1] += counts[k]
    out = np.empty(nloc, dtype=np.int64)
    for i in range(nloc):
        k = dmax - np.int64(degree[lo + i])
        out[counts[k]] = i
        counts[k] += 1
    return out


@njit(cache=True, nogil=True)
def decompose_range(out_offsets, out_targets, degree, lo, hi, dmax, kmax, off, verts, arcs):
    """Algorithm 1 on the subgraph of vertices ``lo..hi-1`` (their out-arcs, local successors only).

    ``kmax`` >= every ``degree`` value.  Writes into ``off`` (>= mc+1 entries), ``verts`` (>= 2 mc)
    and ``arcs`` (>= mc), mc = arcs of the range, and returns ``(offsets, vertices, arc_ids)``: the
    used parts, offsets local to them.  The buffers come from numpy (huge pages).
    """
    a0 = out_offsets[lo]
    nloc = hi - lo
    order = _sort_adjacency(out_offsets, out_targets, degree, lo, hi, kmax)
    cursor = np.empty(nloc, dtype=np.int64)
    for i in range(nloc):
        cursor[i] = out_offsets[lo + i] - a0
    roots = _by_degree_desc(degree, lo, hi)
    visited = np.zeros(nloc, dtype=np.bool_)
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


@njit(cache=True, nogil=True)
def _rank_into(degree, present, out):
    """``out[v]`` = rank of ``degree[v]`` among the distinct degrees (order kept, ties kept)."""
    for v in range(degree.size):
        present[degree[v]] = 1
    r = 0
    for d in range(present.size):
        if present[d]:
            present[d] = r
            r += 1
    for v in range(degree.size):
        out[v] = present[degree[v]]


def degree_rank(degree):
    """Degrees replaced by their dense rank (uint16 when fewer than 65,536 distinct values, else
    uint32): the same order and ties, so the traversal is unchanged, but the array the adjacency
    sort reads at random is 4x (2x) smaller than int64 degrees and stays in cache longer."""
    degree = np.asarray(degree)
    if degree.size == 0:
        return degree.astype(np.uint16)
    present = np.zeros(int(degree.max()) + 1, dtype=np.int64)
    kinds = np.count_nonzero(np.bincount(degree)) if degree.size else 0
    out = np.empty(degree.size, dtype=np.uint16 if kinds <= 65536 else np.uint32)
    _rank_into(degree, present, out)
    return out


@njit(cache=True, nogil=True)
def _compact(off, verts, ranges_arcs, npaths, nverts):
    """Move the per-range results (range ``i`` wrote its paths at ``off[a_i + i:]``,
    ``verts[2 a_i:]``, ``a_i`` = its first arc) together, in place (every destination lies at or
    before its source); offsets become global.  Returns (paths, vertex entries)."""
    pbase = 0
    vbase = 0
    for i in range(npaths.size):
        a = ranges_arcs[i]
        for j in range(npaths[i]):
            off[pbase + j] = off[a + i + j] + vbase
        for j in range(nverts[i]):
            verts[vbase + j] = verts[2 * a + j]
        pbase += npaths[i]
        vbase += nverts[i]
    off[pbase] = vbase
    return pbase, vbase


def decompose(graph, *, dmax=16, jobs=1, subgraph_arcs=1 << 18, degree=None, ws=None):
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
    degree = degree_rank(degree)
    kmax = np.int64(degree.max()) if degree.size else np.int64(0)
    m = graph.num_arcs
    ws = workspace_or_numpy(ws)
    off = ws.empty(m + ranges.size, np.int64)     # range i: off[a_i + i : b_i + i + 1]
    verts = ws.empty(2 * m, graph.out_targets.dtype)
    arcs = ws.empty(m, np.int64)          # range i's arcs land at [a_i, a_i + mc_i): no move
    ao = graph.out_offsets
    tasks = []
    for i in range(ranges.size - 1):
        a, b = int(ao[ranges[i]]), int(ao[ranges[i + 1]])
        tasks.append((ao, graph.out_targets, degree, np.int64(ranges[i]), np.int64(ranges[i + 1]),
                      np.int64(dmax), kmax, off[a + i:b + i + 1], verts[2 * a:2 * b], arcs[a:b]))
    parts = run_parallel(decompose_range, tasks, jobs)
    npaths = np.array([p[0].size - 1 for p in parts], dtype=np.int64)
    nverts = np.array([p[1].size for p in parts], dtype=np.int64)
    del parts
    P, V = _compact(off, verts, np.asarray(ao[ranges[:-1]], dtype=np.int64), npaths, nverts)
    return off[:P + 1], verts[:V], arcs, ranges
