"""The path modes' CUDA kernels (:mod:`digraph.smx.cuda.kernels` re-exports them): one thread
walks a unit (one long path, or several short consecutive ones) arc by arc in persistent blocks
that take units from an atomic cursor; :func:`path_linear_walk` for linear systems, with the
shared-memory proxy accumulators (``PROXY_SLOTS`` per block) of the highest in-degree vertices,
and :func:`path_monotone_walk` for min/max systems.  The two walks share the persistent blocks'
take from the cursor (:func:`take_units`); their arc loops differ (a sum carried with proxies,
a min/max carried as the best value) and stay each in its kernel."""


from numba import cuda, float64, int64

from .common import improve, relax

__all__ = []

PROXY_SLOTS = 128
"""Shared-memory proxy accumulators per block (the highest in-degree vertices)."""


@cuda.jit(device=True, inline=True)
def take_units(cursor, base_sh):
    """The block's next ``blockDim`` units: thread 0 advances the atomic ``cursor`` by that many
    and shares the old value through ``base_sh``; every thread gets it (the first unit's index
    in the queue; the work is done once it reaches the number of units)."""
    if cuda.threadIdx.x == 0:
        base_sh[0] = cuda.atomic.add(cursor, 0, cuda.blockDim.x)
    cuda.syncthreads()
    base = base_sh[0]
    cuda.syncthreads()
    return base


@cuda.jit(device=True, inline=True)
def walk_linear_unit(a, b, src, dst, coef, s, x, theta, hub_slot, use_proxy, proxy):
    """Walk the path-order arcs ``[a, b)`` of a linear system (one thread): each arc sends
    ``d = c·(x_u − s_j)`` when ``|d| > theta`` (``s_j``, the arc's mirror, then takes ``x_u``), the
    value just written carried to the next arc of the same path, a proxied target's ``d`` added
    to the block's shared ``proxy`` slot; returns (arcs sent, pending mass ``Σ|d|`` seen).  Only
    an arc whose path goes on from its target waits for the add's old value (the carry); the
    others' adds return nothing, so the thread does not wait on them (on web graphs most arcs
    are on paths of one arc)."""
    sent = 0
    pend = 0.0
    prev_v = -1
    prev_val = 0.0
    for j in range(a, b):
        u = src[j]
        if u == prev_v:
            xu = prev_val  # the value this thread has just written: the path's carry
        else:
            xu = x[u]
            if use_proxy:
                hs = hub_slot[u]
                if hs >= 0:
                    xu += proxy[hs]
        v = dst[j]
        d = coef[j] * (xu - s[j])
        prev_v = -1
        if abs(d) > theta:
            s[j] = xu
            sent += 1
            hs = hub_slot[v] if use_proxy else -1
            if j + 1 < b and src[j + 1] == v:  # the path goes on from v: carry what was written
                if hs >= 0:
                    old = cuda.atomic.add(proxy, hs, d)
                    prev_val = x[v] + old + d
                else:
                    old = cuda.atomic.add(x, v, d)
                    prev_val = old + d
                prev_v = v
            elif hs >= 0:  # the value unused: an add that need not come back (a reduction)
                cuda.atomic.add(proxy, hs, d)
            else:
                cuda.atomic.add(x, v, d)
        pend += abs(d)
    return sent, pend


@cuda.jit(device=True, inline=True)
def walk_monotone_unit(a, b, src, dst, value, has_value, op, combine, s, x):
    """Walk the path-order arcs ``[a, b)`` of a min/max system (one thread): an arc whose source
    value changed since it last sent (its mirror ``s_j``) relaxes its target, the best value
    carried along the path; returns the arcs sent."""
    sent = 0
    prev_v = -1
    prev_val = 0.0
    for j in range(a, b):
        u = src[j]
        xu = x[u]
        if u == prev_v:  # what this thread has just written (or better, from another)
            xu = min(xu, prev_val) if combine == 0 else max(xu, prev_val)
        prev_v = -1
        if xu != s[j]:
            s[j] = xu
            sent += 1
            v = dst[j]
            c = relax(op, xu, value[j] if has_value else 1.0)
            improve(x, v, c, combine)
            prev_v = v
            prev_val = c
    return sent


@cuda.jit(cache=True)
def path_linear_walk(order, nunits, unit_offsets, src, dst, coef, s, x, theta, hub_slot, hubs,
                     use_proxy, unit_sent, unit_pend, cursor):
    """One round of the path engine over the units ``order[:nunits]`` (persistent blocks).

    ``unit_sent[k]``: arcs of unit k transmitted (|d| > θ); ``unit_pend[k]``: the pending mass of
    its arcs when it was walked (sent or not).
    """
    base_sh = cuda.shared.array(1, int64)
    proxy = cuda.shared.array(PROXY_SLOTS, float64)
    tid = cuda.threadIdx.x
    bd = cuda.blockDim.x
    for i in range(tid, PROXY_SLOTS, bd):
        proxy[i] = 0.0
    cuda.syncthreads()
    while True:
        base = take_units(cursor, base_sh)
        if base >= nunits:
            break
        k = base + tid
        if k < nunits:
            unit = order[k]
            sent, pend = walk_linear_unit(unit_offsets[unit], unit_offsets[unit + 1], src, dst,
                                          coef, s, x, theta, hub_slot, use_proxy, proxy)
            unit_sent[unit] = sent
            unit_pend[unit] = pend
    cuda.syncthreads()
    if use_proxy:  # flush the block's proxies to their masters
        for i in range(tid, min(PROXY_SLOTS, hubs.size), bd):
            p = proxy[i]
            if p != 0.0:
                cuda.atomic.add(x, hubs[i], p)


@cuda.jit(cache=True)
def path_monotone_walk(order, nunits, unit_offsets, src, dst, value, has_value, op, combine, s, x,
                       unit_sent, cursor):
    """One round of the path engine for a min/max system (persistent blocks, atomic cursor)."""
    base_sh = cuda.shared.array(1, int64)
    tid = cuda.threadIdx.x
    while True:
        base = take_units(cursor, base_sh)
        if base >= nunits:
            break
        k = base + tid
        if k < nunits:
            unit = order[k]
            unit_sent[unit] = walk_monotone_unit(unit_offsets[unit], unit_offsets[unit + 1], src,
                                                 dst, value, has_value, op, combine, s, x)
