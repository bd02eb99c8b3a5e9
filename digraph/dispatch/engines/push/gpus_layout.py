"""A sharded linear system's layout and upload: each range's vertices renumbered by exchange
class (:func:`shard_layout`, kept in the graph's residency, kind ``"multi-gpu-layout"``; with
``split``, each target's arcs from its own range first) and the system's vectors uploaded into it
(:func:`linear_shards`)."""

import numpy as np

from ....errors import InvalidParameterError
from ...systems import ones_or
from ...runtime.cuda.common import index_dtype
from ...runtime.cuda.residency import residency
from ...settings import current
from ...runtime.cuda.shard_settings import DEFAULT as MULTI_GPU
from ...runtime.cuda.shards import parallel

__all__ = ["LAYOUTS", "shard_layout", "linear_shards"]

LAYOUTS = ("out-degree", "id", None)


def shard_layout(shards, graph, order=None, split=None, settings=None):
    """Each linear shard's in-arcs with its range renumbered (kept in the graph's residency, kind
    ``"multi-gpu-layout"``, key ``(order, ((device, sim, v0, v1) per shard), split)``).

    A shard's range ``[v0, v1)`` keeps its vertices, in a new order by exchange class:

    0. read by another shard's pull (an out-arc leaves the range) and with in-arcs;
    1. read by another shard and without in-arcs: its δ is 0 from the second round on;
    2. read only inside the range;
    3. never read (out-degree 0).

    A round all-gathers only the first class of every range (the first two in the first two
    rounds, while the sends of class 1 are not yet 0), and a pull's reads crowd into the ranges'
    heads.  Renumbering inside the ranges keeps each range's arcs and each vertex's in-arc order,
    so the sums per vertex are unchanged.

    ``order``: default ``settings.layout``
    (:class:`~digraph.dispatch.runtime.cuda.shard_settings.MultiGpuSettings`, default
    :data:`~digraph.dispatch.runtime.cuda.shard_settings.DEFAULT`).
    ``split`` (default ``settings.overlap`` when there are several shards): each vertex's in-arcs
    from its own range are moved ahead of the others, keeping their order within each part, so
    a round can sum them while the other ranges' sends are exchanged
    (:func:`~digraph.smx.cuda.linear_pull.linear_pull_local`).

    Returns one dict per shard: ``off`` (full-length CSC offsets rebased to the shard's arcs),
    ``src`` (new numbers), ``heavy``, ``out_degree`` (new numbers, own range), ``perm`` (new
    position in the range → old), ``counts`` = (class 0, classes 0–1, classes 0–2) and, when
    split, ``mid`` (where each target's arcs from other ranges begin, indexed ``v - v0``),
    ``heavy_local`` and ``heavy_rest`` (the vertices with >= HEAVY arcs in each part)."""
    settings = current(MULTI_GPU) if settings is None else settings
    order = settings.layout if order is None else order
    order = None if order == "none" else order
    if order not in LAYOUTS:
        raise InvalidParameterError(f"layout must be one of {LAYOUTS}, got {order!r}")
    split = (settings.overlap if split is None else bool(split)) and len(shards) > 1
    key = (order, tuple((s.be.device_id, s.be.sim, s.v0, s.v1) for s in shards), split)
    lay = residency(graph).get("multi-gpu-layout", key,
                               lambda: _build_layout(shards, graph, order, split))
    for s, d in zip(shards, lay):
        s.lay = s.be.keep_all(d)
    return lay


def _build_layout(shards, graph, order, split):
    from ....smx.cuda.common import HEAVY
    n, m = graph.num_vertices, graph.num_arcs
    k = len(shards)
    it = index_dtype(max(n, m))
    in_off = np.asarray(graph.in_offsets, np.int64)
    in_src = np.asarray(graph.in_sources)
    outdeg = np.asarray(graph.out_degree, np.int64)

    def sources(s):  # the range's in-arc sources (old numbers) and which are read from outside
        be, xp = s.be, s.be.xp
        a0, a1 = int(in_off[s.v0]), int(in_off[s.v1])
        src = be.put(in_src[a0:a1], it)
        mark = None
        if k > 1:
            mk = xp.zeros(n, np.uint8)
            mk[src[(src < s.v0) | (src >= s.v1)]] = 1
            mark = be.get(mk)
        return src, mark
    got = parallel(shards, sources)
    remote = np.zeros(n, bool)
    for _, mk in got:
        if mk is not None:
            remote |= mk.view(bool)
    indeg = np.diff(in_off)
    cls = np.where(outdeg == 0, 3, np.where(~remote, 2, np.where(indeg > 0, 0, 1))).astype(np.int8)

    def permute(s):  # new position in the range -> old (sorted by class, then the order's key)
        be, xp = s.be, s.be.xp
        ng = s.v1 - s.v0
        c = cls[s.v0:s.v1]
        counts = tuple(int(v) for v in np.cumsum(np.bincount(c, minlength=4))[:3])
        if order is None:
            return xp.arange(ng, dtype=np.int64), (ng, ng, ng)
        i = xp.arange(ng, dtype=np.int64)
        key = be.put(c, np.int64)
        if order == "out-degree" and ng:
            od = outdeg[s.v0:s.v1]
            top = int(od.max())
            key = (key * (top + 1) + (top - be.put(od))) * ng + i
        else:
            key = key * ng + i
        return xp.argsort(key), counts
    perms = parallel(shards, permute)
    new_of_old = np.empty(n, it)
    for s, (perm, _) in zip(shards, perms):
        p = perm if s.be.sim else perm.get()
        new_of_old[s.v0 + p] = np.arange(s.v0, s.v1, dtype=it)

    def build(s, src, perm_counts):
        be, xp = s.be, s.be.xp
        perm, counts = perm_counts
        v0, v1 = s.v0, s.v1
        a1 = int(in_off[v1] - in_off[v0])
        off_new, idx, mid = _range_arcs(s, in_off, src, perm, split)
        if order is not None:
            src = be.put(new_of_old, it)[src][idx]
        elif split:  # idx is the identity otherwise
            src = src[idx]
        off = xp.empty(n + 1, np.int64)
        off[:v0] = 0
        off[v0:v1 + 1] = off_new
        off[v1 + 1:] = a1
        deg = off_new[1:] - off_new[:-1]
        od = xp.zeros(n, np.int64)
        od[v0:v1] = be.put(outdeg[v0:v1])[perm]
        d = {"off": off, "src": src.astype(it, copy=False),
             "heavy": (xp.flatnonzero(deg >= HEAVY) + v0).astype(np.int64),
             "out_degree": od, "perm": perm.astype(it), "counts": counts}
        if split:
            head = off_new[:-1]
            d["mid"] = mid
            d["heavy_local"] = (xp.flatnonzero(mid - head >= HEAVY) + v0).astype(np.int64)
            d["heavy_rest"] = (xp.flatnonzero(off_new[1:] - mid >= HEAVY) + v0).astype(np.int64)
        return d
    lay = [None] * k
    for j, s in enumerate(shards):  # one at a time: the arc index takes 8 bytes an arc
        with s.on():
            lay[j] = build(s, got[j][0], perms[j])
            s.be.sync()
    return lay


def _range_arcs(s, in_off, src_old, perm, split):
    """(range-local CSC offsets in the new order, old arc position of each new arc position,
    ``mid`` or None) of shard ``s``'s range: rows taken in the order ``perm``, and with ``split``
    each row's arcs from the range itself (``src_old``, the range's in-arc sources in old
    numbers, on the device) ahead of the others."""
    xp = s.be.xp
    a0, a1 = int(in_off[s.v0]), int(in_off[s.v1])
    off_loc = s.be.put(in_off[s.v0:s.v1 + 1] - a0)
    off_new, idx = _arc_order(xp, off_loc, perm, a1 - a0)
    if not split:
        return off_new, idx, None
    own = ((src_old >= s.v0) & (src_old < s.v1))[idx]
    mid, first = own_first(xp, off_new, own)
    return off_new, idx[first], mid


def own_first(xp, off, own):
    """(``mid``, order) that puts the arcs flagged ``own`` first in each row of the CSC offsets
    ``off``, both parts in their order: ``order`` maps new arc positions to old ones, and row r's
    other arcs begin at ``mid[r]``."""
    arcs = own.size
    c = xp.zeros(arcs + 1, np.int64)
    xp.cumsum(own.astype(np.int64), out=c[1:])
    start = off[:-1]
    mid = start + (c[off[1:]] - c[start])
    p = xp.arange(arcs, dtype=np.int64)
    row = xp.searchsorted(off[1:], p, side="right")
    before = c[:-1] - c[start][row]  # own arcs ahead of p in its row
    pos = xp.where(own, start[row] + before, mid[row] + (p - start[row] - before))
    order = xp.empty(arcs, np.int64)
    order[pos] = p
    return mid, order


def _arc_order(xp, off_loc, perm, arcs):
    """(new range-local offsets, old arc position of each new arc position) of a range whose
    rows are taken in the order ``perm`` (new → old)."""
    deg = (off_loc[1:] - off_loc[:-1])[perm]
    off_new = xp.zeros(perm.size + 1, np.int64)
    xp.cumsum(deg, out=off_new[1:])
    p = xp.arange(arcs, dtype=np.int64)
    row = xp.searchsorted(off_new[1:], p, side="right")
    idx = off_loc[:-1][perm][row] + (p - off_new[row])
    return off_new, idx


def linear_shards(shards, graph, sys, ex=None, order=None, split=None, settings=None):
    """Upload a linear system's shards in their :func:`shard_layout` (``x = 0``, ``δ = b``);
    returns whether arcs carry factors.  Each GPU uploads its own range of the vertex vectors
    (the uploads run in parallel over the GPUs' own links) and renumbers it on the device; the
    source factors read from other ranges are then all-gathered (``ex``).  ``order``, ``split``
    and ``settings``: as :func:`shard_layout` takes them."""
    n, m = graph.num_vertices, graph.num_arcs
    has = sys.arc_scale is not None
    shard_layout(shards, graph, order, split, settings)
    in_off = np.asarray(graph.in_offsets, np.int64)
    in_coef = ones_or(sys.arc_scale, m)[graph.in_arcs] if has else None
    # a vector with a recipe (LinearSystem.b_constant, .src_degree_scale) is made on the GPUs
    # and never read on the host; the others are uploaded range by range (None: ones)
    made = {"b": getattr(sys, "b_constant", None),
            "src_scale": getattr(sys, "src_degree_scale", None)}
    vecs = {}
    for name in ("src_scale", "dst_scale", "b"):
        if made.get(name) is not None:
            vecs[name] = ("made", float(made[name]))
        else:
            v = getattr(sys, name)
            vecs[name] = None if v is None else ones_or(v, n)

    def upload(s):
        be, xp = s.be, s.be.xp
        d = s.lay
        s.off, s.src, s.heavy, s.out_degree = d["off"], d["src"], d["heavy"], d["out_degree"]
        s.perm = d["perm"]
        s.n_send, s.n_send_first, s.n_read = d["counts"]
        s.split = "mid" in d
        s.part = s.vector("part", max(s.v1 - s.v0, 1))
        s.part.fill(0.0)
        if s.split:
            s.mid, s.heavy_local, s.heavy_rest = d["mid"], d["heavy_local"], d["heavy_rest"]
        else:  # placeholders: the kernels take them and do not read them
            s.mid = s.heavy_local = s.heavy_rest = s.vector("placeholder", 1, np.int64)
        v0, v1 = s.v0, s.v1
        if has:
            a0, a1 = int(in_off[v0]), int(in_off[v1])
            src_old = be.put(graph.in_sources[a0:a1]) if s.split else None
            idx = _range_arcs(s, in_off, src_old, s.perm, s.split)[1]
            s.coef = s.vector("coef", a1 - a0)
            s.coef[...] = be.put(in_coef[a0:a1])[idx]
        else:
            s.coef = s.vector("no_coef", 1)
        for name, v in vecs.items():
            a = s.vector(name, n)  # refilled in place: kept launches read the same arrays
            if v is None:
                a.fill(1.0)
            elif isinstance(v, tuple):
                a.fill(0.0)
                if name == "b":
                    a[v0:v1] = v[1]
                else:  # scale / out-degree, as the host's scaled_inverse makes it
                    od = s.out_degree[v0:v1]
                    a[v0:v1] = xp.where(od > 0, v[1] / xp.maximum(od, 1), 0.0)
            else:
                a.fill(0.0)
                a[v0:v1] = be.put(v[v0:v1])[s.perm]
            setattr(s, name, a)
        s.x = s.vector("x", n)
        s.x.fill(0.0)
        s.delta = s.vector("delta", n)
        s.delta[...] = s.b
        s.send = s.vector("send", n)
        s.send.fill(0.0)
        s.r = s.vector("r", n)
        s.r.fill(0.0)
        babs = xp.abs(s.b[v0:v1])
        return be.scalars(babs.sum(), babs.max()) if v1 > v0 else (0.0, 0.0)
    norms = parallel(shards, upload)
    if ex is not None and vecs["src_scale"] is not None:
        ex.allgather([s.src_scale for s in shards], [s.n_send_first for s in shards])
    s_norms = np.array(norms).reshape(-1, 2)
    return has, float(s_norms[:, 0].sum()), float(s_norms[:, 1].max())
