"""The path modes (``path``, ``path-nopriority``) on one GPU: a PathSet's walk arrays cut into units
of consecutive paths (:func:`_units`, :func:`_device_paths`), the rounds over the unfinished
layers of linear systems (:func:`_path_linear`, with its priority threshold :func:`_min_score`
and the proxies of high in-degree vertices :func:`_proxies`) and of min/max systems
(:func:`_path_monotone`).  The settings (:class:`~digraph.dispatch.gpu.GpuPathSettings`,
:data:`~digraph.dispatch.gpu.DEFAULT`) stay in :mod:`digraph.dispatch.gpu` and are read there at
each call (:mod:`.defaults`)."""

import numpy as np
from numba import njit

from ....errors import InvalidParameterError
from ... import driver
from ...convergence import certified, pending_budget
from ...systems import monotone_arrays, monotone_start
from ..common import index_dtype as _index_dtype, kernels as _kernels
from .defaults import default, path_default
from .linear import _Linear, _linear

__all__ = []


def _units(ps, unit_arcs, key):
    """Units of consecutive paths with one ``key`` (layer, partition) and at least ``unit_arcs``
    arcs (a longer path is a unit alone): (unit offsets into path-order arcs, first path of each
    unit)."""
    lengths = np.diff(np.asarray(ps.path_offsets)) - 1
    starts = _group_paths(lengths, key, unit_arcs)
    arc_off = np.concatenate([[0], np.cumsum(lengths)])
    return arc_off[np.append(starts, ps.num_paths)], starts


@njit(cache=True)
def _group_paths(lengths, key, unit_arcs):
    P = lengths.size
    out = np.empty(P, np.int64)
    k = 0
    acc = 0
    for p in range(P):
        if p == 0 or acc >= unit_arcs or key[p] != key[p - 1]:
            out[k] = p
            k += 1
            acc = 0
        acc += lengths[p]
    return out[:k]


def _device_paths(be, ps, unit_arcs=None):
    """A PathSet's walk arrays on the GPU (once per path set, device and ``unit_arcs``, default
    ``gpu.DEFAULT.unit_arcs``)."""
    unit_arcs = default().unit_arcs if unit_arcs is None else int(unit_arcs)
    key = ("cuda", be.device_id, be.sim, unit_arcs)
    cache = getattr(ps, "_device", None)
    if cache is None:
        cache = ps._device = {}
    if key in cache:
        return be.keep_all(cache[key])
    n = ps.num_vertices
    it = _index_dtype(max(n, ps.num_arcs))
    po = np.asarray(ps.path_offsets)
    src, dst = ps.arc_ends()
    unit_offsets, unit_first = _units(ps, unit_arcs, np.asarray(ps.path_layer))
    unit_layer = np.asarray(ps.path_layer)[unit_first]
    nunits = unit_first.size
    num_layers = int(unit_layer[-1]) + 1 if nunits else 0
    layer_units = np.searchsorted(unit_layer, np.arange(num_layers + 1))
    # D̄ of a unit: the arc-weighted mean of its paths' heat (the paper's Pri inside a layer)
    lengths = np.diff(po) - 1
    heat = np.asarray(ps.path_heat, dtype=np.float64)
    wsum = np.add.reduceat(heat * lengths, unit_first) if nunits else np.zeros(0)
    unit_heat = wsum / np.maximum(np.diff(unit_offsets), 1)
    d = {
        "arc_ids": be.put(ps.path_arc_ids, it),
        "src": be.put(src, it),
        "dst": be.put(dst, it),
        "unit_offsets": be.put(unit_offsets, np.int64),
        "unit_heat": be.put(unit_heat),
        "unit_paths": be.put(np.diff(np.append(unit_first, ps.num_paths)), np.int64),
        "unit_paths_host": np.diff(np.append(unit_first, ps.num_paths)),
        "unit_arcs": np.diff(unit_offsets),
        "layer_units": layer_units,
        "num_layers": num_layers,
        "nunits": nunits,
    }
    cache[key] = d
    return d


def _path_linear(be, graph, sys, tol, max_iter, stats, ps, priority, proxy, settings=None,
                 gpu_settings=None):
    settings = path_default() if settings is None else settings
    gpu_settings = default() if gpu_settings is None else gpu_settings
    K = _kernels()
    xp = be.xp
    _check_pathset(graph, ps)
    L = _Linear(be, graph, sys)
    D = _device_paths(be, ps, gpu_settings.unit_arcs)
    n, m = L.n, L.m
    has = L.has
    # c_j of every arc in path order, gathered on the device
    coef = L.src_scale[D["src"]] * L.dst_scale[D["dst"]]
    if has:
        coef *= L.arc[D["arc_ids"]]
    coef = be.keep(coef)
    x = be.keep(L.b.copy())
    s = be.keep(xp.zeros(m, np.float64))
    nunits = D["nunits"]
    unit_sent = be.keep(xp.zeros(nunits, np.int32))
    unit_pend = be.keep(xp.zeros(nunits, np.float64))
    rule = {"none": 0, "pending": 1, "paper": 2}[priority]
    score = unit_pend if rule == 1 else xp.zeros(nunits, np.float64)
    cursor = be.keep(xp.zeros(1, np.int64))
    hub_slot, hubs, nhubs = _proxies(be, graph, proxy, gpu_settings.proxy_min_in_degree)
    stats["priority"] = priority
    stats["proxy_vertices"] = nhubs
    stats.setdefault("arcs_examined", 0)
    layer_rounds = np.zeros(D["num_layers"], np.int64)
    layer_arcs = np.zeros(D["num_layers"], np.int64)
    factor = 1.0
    converged = False
    stalled = False
    bound, r1 = np.inf, np.inf

    def walk(order, th):
        cursor[...] = 0
        be.launch(K.path_linear_walk, be.walk_blocks, be.walk_block,
                  order, order.size, D["unit_offsets"], D["src"], D["dst"], coef, s, x, th,
                  hub_slot, hubs, nhubs > 0, unit_sent, unit_pend, cursor)

    while True:
        lo = 0
        sx = float(be.scalars(x.sum())[0])
        budget = factor * pending_budget(tol, sx, n, L.gammas, sys.normalize)
        th = budget / max(m, 1)
        rounds_here = 0
        best, since_best = np.inf, 0
        while lo < D["num_layers"] and not stalled:
            if stats["rounds"] >= max_iter:
                break
            u0 = int(D["layer_units"][lo])
            u1 = nunits
            full = True
            cand = xp.arange(u0, u1, dtype=np.int64)
            aging = settings.aging_rounds
            if rule and rounds_here % aging != aging - 1 and rounds_here > 0 \
                    and u1 - u0 >= settings.min_priority_units:
                sc = score[u0:u1]
                min_score = _min_score(be, sc, settings)
                if min_score > 0.0:
                    cand = cand[sc >= min_score]
                    full = False
            unit_sent[u0:u1] = 0
            walk(cand, th)
            rounds_here += 1
            uo = D["unit_offsets"]
            per_layer, (pend, walked_arcs, walked_paths) = _layer_sums(
                be, unit_sent[u0:u1], D["layer_units"][lo:] - u0, unit_pend[u0:u1].sum(),
                (uo[cand + 1] - uo[cand]).sum() if cand.size else 0,
                D["unit_paths"][cand].sum() if cand.size else 0)
            total_sent = int(per_layer.sum())
            if rule == 2:  # rule 1 scores by unit_pend itself (its last walk's pending mass)
                score[u0:u1] = D["unit_heat"][u0:u1] * unit_sent[u0:u1]
            stats["arc_updates"] += total_sent
            stats["vertex_updates"] += total_sent
            stats["arcs_examined"] += int(walked_arcs)
            stats["paths_processed"] += int(walked_paths)
            stats["partitions_processed"] += int(cand.size)
            stats["rounds"] += 1
            layer_rounds[lo:] += per_layer > 0
            layer_arcs[lo:] += per_layer
            if full:  # layers finish in order: nothing sent after every lower layer finished
                while lo < D["num_layers"] and per_layer[0] == 0:
                    lo += 1
                    per_layer = per_layer[1:]
                    rounds_here = 0
            level = pend
            if level < 0.999 * best:
                best, since_best = level, 0
            else:
                since_best += 1
                if since_best >= settings.stall_rounds:
                    stalled = True
        bound, r1, floor = L.certify(x)
        if certified(bound, r1, floor, tol, stats):
            converged = True
            break
        if stats["rounds"] >= max_iter:
            break
        if stalled or stats.get("path_sweeps", 1) >= settings.max_sweeps:
            # the mirrors' rounding floor (see digraph.dispatch.paths): finish by vertex push
            driver.hand_over(stats, "vertex-async", "the walk's mirrors reached their rounding "
                             "floor" if stalled else "the sweeps ran out")
            stats["layer_rounds"] = layer_rounds.tolist()
            stats["layer_arc_updates"] = layer_arcs.tolist()
            return _linear(be, graph, sys, tol, max_iter, stats, False, (x, L.r.copy(), L))
        factor /= 4.0
        stats["path_sweeps"] = stats.get("path_sweeps", 1) + 1
    stats["layer_rounds"] = layer_rounds.tolist()
    stats["layer_arc_updates"] = layer_arcs.tolist()
    stats["error_bound"] = float(bound)
    stats["residual_l1"] = float(r1)
    return x, converged


def _layer_sums(be, unit_sent, bounds, *more):
    """Arcs sent per layer (units are in layer order; ``bounds`` = layer starts relative to the
    first unit, with the end) and further device scalars, in one copy to the host."""
    xp = be.xp
    cs = xp.concatenate([xp.zeros(1, np.int64), xp.cumsum(unit_sent.astype(np.int64))])
    vals = [cs[xp.asarray(bounds)].astype(np.float64)]
    vals += [xp.asarray(v, dtype=np.float64).reshape(1) for v in more]
    h = be.get(xp.concatenate(vals))
    k = bounds.size
    return np.diff(h[:k]).astype(np.int64), h[k:]


def _min_score(be, sc, settings):
    """Smallest score of the highest log2 buckets holding ``settings.select_share`` of the active
    units."""
    xp = be.xp
    active = sc > 0
    exps = xp.frexp(xp.where(active, sc, 1.0))[1]
    buckets = xp.clip(exps + 1100, 0, 2200)[active]
    if buckets.size < settings.min_priority_units:
        return 0.0
    hist = be.get(xp.bincount(buckets, minlength=2201))
    acc = np.cumsum(hist[::-1])
    b = 2200 - int(np.searchsorted(acc, settings.select_share * acc[-1]))
    return float(2.0 ** (b - 1100 - 1))


def _proxies(be, graph, proxy, min_in_degree=None):
    """(slot of each vertex or −1, vertex of each slot): the highest in-degree vertices, of
    in-degree ``min_in_degree`` (default ``gpu.DEFAULT.proxy_min_in_degree``) or more."""
    min_in_degree = default().proxy_min_in_degree if min_in_degree is None else min_in_degree
    from ....smx.cuda_kernels import PROXY_SLOTS
    n = graph.num_vertices
    deg = graph.in_degree
    if proxy and n:
        top = np.argsort(-deg, kind="stable")[:PROXY_SLOTS]
        top = top[deg[top] >= min_in_degree]
    else:
        top = np.zeros(0, np.int64)
    slot = np.full(n, -1, np.int32)
    slot[top] = np.arange(top.size, dtype=np.int32)
    hubs = top if top.size else np.zeros(1, np.int64)  # a dummy slot when there is no proxy
    return be.put(slot), be.put(hubs, np.int32), int(top.size)


def _check_pathset(graph, ps):
    if ps is None:
        raise InvalidParameterError("the path modes need a PathSet")
    if ps.num_arcs != graph.num_arcs or ps.num_vertices != graph.num_vertices:
        raise InvalidParameterError("the PathSet was built from another graph")


def _path_monotone(be, graph, sys, max_iter, stats, ps, unit_arcs=None):
    K = _kernels()
    xp = be.xp
    _check_pathset(graph, ps)
    D = _device_paths(be, ps, unit_arcs)
    n = graph.num_vertices
    op, combine, has, value = monotone_arrays(graph, sys)
    x0, active0 = monotone_start(sys, n)
    identity = np.inf if combine == 0 else -np.inf
    x = be.put(x0)
    src = D["src"]
    s = be.keep(xp.where(be.put(active0)[src], identity, x[src]))
    val = be.keep(be.put(value)[D["arc_ids"]] if has else be.put(value))
    nunits = D["nunits"]
    unit_sent = be.keep(xp.zeros(nunits, np.int32))
    cursor = be.keep(xp.zeros(1, np.int64))
    stats.setdefault("arcs_examined", 0)
    lo = 0
    converged = False
    while lo < D["num_layers"]:
        if stats["rounds"] >= max_iter:
            break
        u0 = int(D["layer_units"][lo])
        order = xp.arange(u0, nunits, dtype=np.int64)
        unit_sent[u0:] = 0
        cursor[...] = 0
        be.launch(K.path_monotone_walk, be.walk_blocks, be.walk_block,
                  order, order.size, D["unit_offsets"], D["src"], D["dst"], val, has, op, combine,
                  s, x, unit_sent, cursor)
        per_layer, _ = _layer_sums(be, unit_sent[u0:], D["layer_units"][lo:] - u0)
        total = int(per_layer.sum())
        stats["arc_updates"] += total
        stats["vertex_updates"] += total
        stats["arcs_examined"] += int(D["unit_arcs"][u0:].sum())
        stats["paths_processed"] += int(D["unit_paths_host"][u0:].sum())
        stats["partitions_processed"] += int(nunits - u0)
        stats["rounds"] += 1
        while lo < D["num_layers"] and per_layer[0] == 0:
            lo += 1
            per_layer = per_layer[1:]
    else:
        converged = True
    return x, converged
