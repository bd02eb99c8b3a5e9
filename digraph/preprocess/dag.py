"""Path dependency graph, its SCCs (the DAG sketch) and layers (DiGraph sections 3.1 and 3.2.2).

Definition
----------
Path ``p`` *writes* its non-head vertices and *reads* its non-tail vertices; the dependency graph
``G'`` has an arc ``p -> q`` when a vertex written by ``p`` is read by ``q`` (``p != q``).  Built
literally, ``G'`` is quadratic at hubs (every path into a hub times every path out of it), so it is
never materialised.  Instead:

1. **SCCs through the vertices.**  ``G'`` is the path-to-path reachability of the bipartite graph
   ``H``: ``p -> x`` for every ``x`` written by ``p``, ``x -> q`` for every ``x`` read by ``q``.
   For a path ``v0 v1 .. vk``, ``H`` makes ``p, v1, .., v(k-1)`` strongly connected and adds
   ``v0 -> p`` and ``p -> vk``; so the vertex-to-vertex reachability of ``H`` is that of the *vertex
   dependency graph* ``D`` = the graph's own arcs plus one back arc ``v(k-1) -> v1`` per path of
   ``k >= 3`` arcs.  ``D`` has ``n`` nodes and ``m + #paths(k>=3)`` arcs; its SCCs are found with
   the two-phase Tarjan of :mod:`.scc` (local per vertex range in parallel, then global over the
   contracted local SCCs), which reads the graph's CSR and a small CSR of the back arcs
   (:func:`back_arcs`) side by side, so ``D`` is never copied (:func:`dependency_graph` builds it
   whole, for inspection). A path of ``k >= 2`` arcs belongs to the SCC of its vertex ``v1``; a
   one-arc path ``u -> w`` belongs to the SCC of ``u`` when ``u`` and ``w`` share one, and is an
   SCC-vertex of its own otherwise.  These are exactly the SCCs of ``G'`` (tests check them against
   scipy on ``G'``).
2. **DAG sketch through the vertices.**  Each write ``p -> x`` and read ``x -> q`` of ``H`` is
   mapped to the contracted nodes: ``x`` is the SCC-vertex that contains it (when its ``D``-SCC
   holds paths) or a *junction* node of its own.  Duplicate arcs are removed; a junction with one
   predecessor or one successor is replaced by direct arcs; the remaining junctions (vertices where
   several SCC-vertices write and several others read, the hub case) stay as nodes that hold no
   path.  The sketch is a DAG over ``num_scc`` SCC-vertices followed by ``num_junctions`` junctions;
   it has the same reachability between SCC-vertices as the condensation of ``G'``, with at most
   ``2m`` arcs.
3. **Layers.**  Layer of an SCC-vertex = longest distance (in SCC-vertices, junctions count 0) from
   a source of the DAG, so every dependency goes from a lower to a strictly higher layer.  Inside a
   layer, SCC-vertices are ordered by descending number of paths in their direct successor
   SCC-vertices (counted through junctions), then by id.  SCC-vertices are renumbered in that order.
"""


import numpy as np
from numba import njit

from ..compiling import work_clock
from ._parallel import workspace_or_numpy
from .scc import scc_two_phase

__all__ = ["dependency_graph", "back_arcs", "path_sccs", "dag_sketch", "build_dag"]


@njit(cache=True, nogil=True)
def dependency_graph(out_offsets, out_targets, path_offsets, path_vertices):
    """CSR (offsets, targets) of the vertex dependency graph ``D`` (graph arcs + one back arc per
    path of >= 3 arcs)."""
    n = out_offsets.size - 1
    P = path_offsets.size - 1
    extra = np.zeros(n + 1, dtype=np.int64)
    for p in range(P):
        if path_offsets[p + 1] - path_offsets[p] - 1 >= 3:
            extra[path_vertices[path_offsets[p + 1] - 2] + 1] += 1
    for v in range(n):
        extra[v + 1] += extra[v]
    doff = np.empty(n + 1, dtype=np.int64)
    for v in range(n + 1):
        doff[v] = out_offsets[v] + extra[v]
    dtg = np.empty(doff[n], dtype=out_targets.dtype)
    cur = np.empty(n, dtype=np.int64)
    for v in range(n):
        base = doff[v]
        s = out_offsets[v]
        d = out_offsets[v + 1] - s
        for k in range(d):
            dtg[base + k] = out_targets[s + k]
        cur[v] = base + d
    for p in range(P):
        a = path_offsets[p]
        b = path_offsets[p + 1]
        if b - a - 1 >= 3:
            u = path_vertices[b - 2]
            dtg[cur[u]] = path_vertices[a + 1]
            cur[u] += 1
    return doff, dtg


@njit(cache=True, nogil=True)
def _extra_count(n, path_offsets, path_vertices):
    P = path_offsets.size - 1
    eoff = np.zeros(n + 1, dtype=np.int64)
    for p in range(P):
        if path_offsets[p + 1] - path_offsets[p] - 1 >= 3:
            eoff[path_vertices[path_offsets[p + 1] - 2] + 1] += 1
    for v in range(n):
        eoff[v + 1] += eoff[v]
    return eoff


@njit(cache=True, nogil=True)
def _extra_fill(path_offsets, path_vertices, eoff, etg):
    P = path_offsets.size - 1
    cur = eoff[:-1].copy()
    for p in range(P):
        a = path_offsets[p]
        b = path_offsets[p + 1]
        if b - a - 1 >= 3:
            u = path_vertices[b - 2]
            etg[cur[u]] = path_vertices[a + 1]
            cur[u] += 1


def back_arcs(num_vertices, path_offsets, path_vertices):
    """CSR (offsets, targets) of the back arcs ``v(k-1) -> v1`` of the paths of >= 3 arcs: the arcs
    that ``D`` adds to the graph's (the two-phase Tarjan reads both CSRs; nothing is copied)."""
    eoff = _extra_count(np.int64(num_vertices), path_offsets, path_vertices)
    etg = np.empty(int(eoff[-1]), dtype=path_vertices.dtype)
    _extra_fill(path_offsets, path_vertices, eoff, etg)
    return eoff, etg


@njit(cache=True, nogil=True)
def _path_sccs_into(path_offsets, path_vertices, vlab, nvscc, pscc):
    """:func:`path_sccs` writing the path labels into ``pscc`` (any integer dtype)."""
    P = path_offsets.size - 1
    used = np.zeros(nvscc, dtype=np.bool_)
    for p in range(P):
        a = path_offsets[p]
        k = path_offsets[p + 1] - a - 1
        if k >= 2:
            s = vlab[path_vertices[a + 1]]
            used[s] = True
            pscc[p] = s
        else:
            s = vlab[path_vertices[a]]
            if s == vlab[path_vertices[a + 1]]:
                used[s] = True
                pscc[p] = s
            else:
                pscc[p] = -1
    remap = np.full(nvscc, -1, dtype=np.int64)
    c = 0
    for s in range(nvscc):
        if used[s]:
            remap[s] = c
            c += 1
    for p in range(P):
        if pscc[p] >= 0:
            pscc[p] = remap[pscc[p]]
        else:
            pscc[p] = c
            c += 1
    n = vlab.size
    vnode = np.empty(n, dtype=vlab.dtype)
    for x in range(n):
        vnode[x] = remap[vlab[x]]
    return c, vnode


def path_sccs(path_offsets, path_vertices, vlab, nvscc, out=None):
    """SCC-vertex of every path from the ``D``-SCC labels of the vertices.

    Returns (path_scc, num_scc, vertex_node) where ``vertex_node[x]`` is the SCC-vertex containing
    vertex ``x`` or -1 when its ``D``-SCC holds no path.  SCC ids are in an order where ``D``-SCCs
    come first (by label) and one-arc SCC-vertices after them.  ``out``: array for ``path_scc``
    (int64 when absent; int32 will do when fewer than 2^31 paths).
    """
    if out is None:
        out = np.empty(path_offsets.size - 1, dtype=np.int64)
    c, vnode = _path_sccs_into(path_offsets, path_vertices, vlab, np.int64(nvscc), out)
    return out, int(c), vnode


@njit(cache=True, nogil=True)
def _count_per_scc(pscc, nscc):
    """Number of paths of each SCC-vertex."""
    cnt = np.zeros(nscc, dtype=np.int64)
    for p in range(pscc.size):
        cnt[pscc[p]] += 1
    return cnt


@njit(cache=True, nogil=True)
def _apply_rank(pscc, rank):
    """``pscc[p] = rank[pscc[p]]`` in place."""
    for p in range(pscc.size):
        pscc[p] = rank[pscc[p]]


@njit(cache=True, nogil=True)
def _dedup_csr(src, dst, nnodes):
    """CSR of the arc list with duplicate arcs removed (targets in first-seen order per source)."""
    cnt = np.zeros(nnodes + 1, dtype=np.int64)
    for i in range(src.size):
        cnt[src[i] + 1] += 1
    for k in range(nnodes):
        cnt[k + 1] += cnt[k]
    tmp = np.empty(src.size, dtype=np.int64)
    pos = cnt[:-1].copy()
    for i in range(src.size):
        s = src[i]
        tmp[pos[s]] = dst[i]
        pos[s] += 1
    stamp = np.full(nnodes, -1, dtype=np.int64)
    off = np.zeros(nnodes + 1, dtype=np.int64)
    out = np.empty(src.size, dtype=np.int64)
    w = 0
    for s in range(nnodes):
        for k in range(cnt[s], cnt[s + 1]):
            t = tmp[k]
            if stamp[t] != s:
                stamp[t] = s
                out[w] = t
                w += 1
        off[s + 1] = w
    return off, out[:w]


@njit(cache=True, nogil=True)
def dag_sketch(path_offsets, path_vertices, pscc, nscc, vnode):
    """Arcs of the DAG sketch (see module doc).

    Returns (dag_offsets, dag_targets, num_junctions, junction_vertex, arcs_before_reduction) over
    nodes ``0..nscc-1`` (SCC-vertices) and ``nscc..nscc+num_junctions-1`` (junctions).
    """
    P = path_offsets.size - 1
    n = vnode.size
    N0 = nscc + n
    # 1. arcs of the contracted H: writes p -> node(x), reads node(x) -> q
    nent = 2 * (path_offsets[P] - P)
    src = np.empty(nent, dtype=np.int64)
    dst = np.empty(nent, dtype=np.int64)
    w = 0
    for p in range(P):
        sp = pscc[p]
        a = path_offsets[p]
        b = path_offsets[p + 1]
        for i in range(a, b):
            x = path_vertices[i]
            nx = vnode[x]
            if nx < 0:
                nx = nscc + x
            if nx == sp:
                continue
            if i > a:           # p writes x
                src[w] = sp
                dst[w] = nx
                w += 1
            if i < b - 1:       # p reads x
                src[w] = nx
                dst[w] = sp
                w += 1
    raw_arcs = w
    off, tg = _dedup_csr(src[:w], dst[:w], N0)
    # 2. in-degrees of the vertex nodes; eliminate junctions with one predecessor or one successor
    indeg = np.zeros(N0, dtype=np.int64)
    for k in range(tg.size):
        indeg[tg[k]] += 1
    jid = np.full(n, -1, dtype=np.int64)
    nj = 0
    for x in range(n):
        node = nscc + x
        outd = off[node + 1] - off[node]
        ind = indeg[node]
        if outd == 0 or ind == 0:
            continue
        if ind > 1 and outd > 1:
            jid[x] = nj
            nj += 1
    jvert = np.empty(nj, dtype=np.int64)
    for x in range(n):
        if jid[x] >= 0:
            jvert[jid[x]] = x
    # 3. final arc list
    cap = tg.size
    for x in range(n):
        node = nscc + x
        outd = off[node + 1] - off[node]
        ind = indeg[node]
        if jid[x] < 0 and outd > 0 and ind > 0:
            cap += ind * outd
    fs = np.empty(cap, dtype=np.int64)
    fd = np.empty(cap, dtype=np.int64)
    w = 0
    for s in range(nscc):
        for k in range(off[s], off[s + 1]):
            t = tg[k]
            if t < nscc:
                fs[w] = s
                fd[w] = t
                w += 1
            else:
                x = t - nscc
                if jid[x] >= 0:
                    fs[w] = s
                    fd[w] = nscc + jid[x]
                    w += 1
                else:
                    for kk in range(off[t], off[t + 1]):   # s -> x -> succ: direct arcs
                        if tg[kk] != s:
                            fs[w] = s
                            fd[w] = tg[kk]
                            w += 1
    for j in range(nj):
        node = nscc + jvert[j]
        for k in range(off[node], off[node + 1]):
            fs[w] = nscc + j
            fd[w] = tg[k]
            w += 1
    doff, dtg = _dedup_csr(fs[:w], fd[:w], nscc + nj)
    return doff, dtg, nj, jvert, raw_arcs


@njit(cache=True, nogil=True)
def layers_and_order(doff, dtg, nscc, scc_npaths):
    """Longest-path layers (Kahn), successor path counts and the storage order of SCC-vertices.

    Returns (layer of each node, successor path count of each SCC-vertex, sort keys of the
    SCC-vertices (layer, then descending successor paths), acyclic flag).
    """
    N = doff.size - 1
    indeg = np.zeros(N, dtype=np.int64)
    for k in range(dtg.size):
        indeg[dtg[k]] += 1
    layer = np.zeros(N, dtype=np.int64)
    queue = np.empty(N, dtype=np.int64)
    qh = 0
    qt = 0
    for v in range(N):
        if indeg[v] == 0:
            queue[qt] = v
            qt += 1
    while qh < qt:
        u = queue[qh]
        qh += 1
        for k in range(doff[u], doff[u + 1]):
            v = dtg[k]
            cand = layer[u] + (1 if v < nscc else 0)
            if cand > layer[v]:
                layer[v] = cand
            indeg[v] -= 1
            if indeg[v] == 0:
                queue[qt] = v
                qt += 1
    acyclic = qt == N
    # successor path counts (through junctions)
    jsum = np.zeros(N, dtype=np.int64)
    for j in range(nscc, N):
        for k in range(doff[j], doff[j + 1]):
            jsum[j] += scc_npaths[dtg[k]]
    succ = np.zeros(nscc, dtype=np.int64)
    for s in range(nscc):
        for k in range(doff[s], doff[s + 1]):
            t = dtg[k]
            succ[s] += scc_npaths[t] if t < nscc else jsum[t]
    # order: layer ascending, successor paths descending, id ascending
    maxl = 0
    for s in range(nscc):
        if layer[s] > maxl:
            maxl = layer[s]
    maxs = 0
    for s in range(nscc):
        if succ[s] > maxs:
            maxs = succ[s]
    keys = np.empty(nscc, dtype=np.int64)
    for s in range(nscc):
        keys[s] = layer[s] * (maxs + 1) + (maxs - succ[s])
    return layer, succ, keys, acyclic


@njit(cache=True, nogil=True)
def _renumber_dag(doff, dtg, nscc, rank):
    """DAG CSR with SCC-vertex ``s`` renamed ``rank[s]`` (junction ids unchanged)."""
    N = doff.size - 1
    newid = np.empty(N, dtype=np.int64)
    for s in range(nscc):
        newid[s] = rank[s]
    for j in range(nscc, N):
        newid[j] = j
    inv = np.empty(N, dtype=np.int64)
    for v in range(N):
        inv[newid[v]] = v
    noff = np.zeros(N + 1, dtype=np.int64)
    for i in range(N):
        v = inv[i]
        noff[i + 1] = noff[i] + doff[v + 1] - doff[v]
    ntg = np.empty(dtg.size, dtype=np.int64)
    for i in range(N):
        v = inv[i]
        b = noff[i]
        for k in range(doff[v], doff[v + 1]):
            ntg[b] = newid[dtg[k]]
            b += 1
    return noff, ntg


def build_dag(graph, path_offsets, path_vertices, ranges, jobs=1, ws=None):
    """Every DAG stage: ``D``, two-phase SCCs, SCC-vertices of paths, sketch, layers, order.

    Returns a dict of arrays: ``path_scc`` (renumbered, storage order of SCC-vertices),
    ``num_scc``, ``scc_layer``, ``scc_succ_paths``, ``dag_offsets``, ``dag_targets``,
    ``junction_vertex``, ``acyclic`` and sizes for statistics.
    """
    t0 = work_clock()  # without compilation: these are the cache's stored build times
    eoff, etg = back_arcs(graph.num_vertices, path_offsets, path_vertices)
    vlab, nv, nlocal = scc_two_phase(graph.out_offsets, graph.out_targets, ranges, jobs,
                                     extra=(eoff, etg), ws=ws,
                                     label_dtype=(np.int32 if graph.num_vertices < 2**31 - 1
                                                  else np.int64))
    dep_arcs = graph.num_arcs + int(etg.size)
    del eoff, etg
    t1 = work_clock()
    P = path_offsets.size - 1
    pscc, nscc, vnode = path_sccs(path_offsets, path_vertices, vlab, nv,
                                  out=workspace_or_numpy(ws).empty(P, np.int32 if P < 2**31 - 1
                                                                   else np.int64))
    npaths = _count_per_scc(pscc, np.int64(nscc))
    soff, stg, nj, jvert, raw_arcs = dag_sketch(path_offsets, path_vertices, pscc, np.int64(nscc),
                                                vnode)
    layer, succ, keys, acyclic = layers_and_order(soff, stg, np.int64(nscc), npaths)
    order = np.argsort(keys, kind="stable")
    rank = np.empty(nscc, dtype=np.int64)
    rank[order] = np.arange(nscc, dtype=np.int64)
    noff, ntg = _renumber_dag(soff, stg, np.int64(nscc), rank)
    _apply_rank(pscc, rank)
    t2 = work_clock()
    return {
        "timings": {"scc": t1 - t0, "dag": t2 - t1},
        "path_scc": pscc,
        "num_scc": int(nscc),
        "scc_layer": layer[:nscc][order],
        "junction_layer": layer[nscc:],
        "scc_succ_paths": succ[order],
        "scc_num_paths": npaths[order],
        "dag_offsets": noff,
        "dag_targets": ntg,
        "junction_vertex": jvert,
        "acyclic": bool(acyclic),
        "dep_graph_arcs": dep_arcs,
        "vertex_sccs": int(nv),
        "local_sccs": int(nlocal),
        "sketch_raw_arcs": int(raw_arcs),
    }
