"""Numba CPU kernels of the vertex state of the path modes (:mod:`digraph.dispatch.dag_push`):
linear systems solved component by component of the vertex condensation
(:mod:`digraph.paths.condensation`), in position space.

A component starts by *pulling* its in-arcs from other components (final by then), which gives
each of its vertices its residual ``r_v = b_v + Σ_{u→v, u outside} c_uv x_u`` with ``x_v = 0``; a
vertex without arcs inside its component is then exact (``x_v = r_v``, one evaluation).  Otherwise
the component *sweeps* its vertices in position order, Gauss–Seidel style: a vertex whose residual
is worth it adds it to ``x_v`` and pushes ``c·r_v`` along its inside out-arcs, where later vertices
of the same sweep use it at once.  "Worth it" is a soft priority by pending mass, without a sort:
``|r_v| > deg_v · max(budget / arcs, prio · mass / arcs)``, with ``mass`` the component's pending
residual after the previous sweep (a vertex's push costs its out-degree, so its residual is
compared per arc); with ``prio < 1`` every sweep makes progress.  The component is done when its
pending mass is within its budget (L∞ route: every residual within ``vmax``).  On the L∞ route
only residuals above ``vmax`` may push, so ``mass`` and ``arcs`` there are those of the vertices
above ``vmax`` (:func:`_pushable`): measured over every residual, the many small ones that may
never push can raise the threshold above every vertex that may, and the sweeps then push nothing
and never end (adsorption on R-MAT: a hub holding the largest residual, 1,921 idle sweeps of
2,000).

Counters per thread (``cnt[t]``): :data:`PULLS`, :data:`PUSHES` (arcs), :data:`VERTEX_PUSHES`,
:data:`SWEEPS`, :data:`MAX_SWEEPS` (of one chunk of a split component, this call), :data:`ONCE`
(components done in at most one sweep), :data:`CAPPED` (components stopped by ``max_sweeps``),
:data:`RAN`, :data:`DIRECT` (components solved exactly, :func:`_direct`); per component, its
sweeps and the arcs it pulled and pushed.

Small cyclic components (at most ``direct`` vertices, a kernel argument from
:attr:`~digraph.dispatch.dag_push.DagPushSettings.direct_vertices`) are not swept: their system
``(I − A_c) x_c = r_c`` is solved exactly by Gaussian elimination (:func:`_direct`), as the GPU
engine's light components (:data:`digraph.smx.cuda_scc.DK`).  Sweeping them cost ~70 sweeps each
on dblp-2010 (22,953 components of 2–32 vertices, 1.65 M sweeps in all) and ~134 on cnr-2000's
9,930 vertices with a loop (1.34 M sweeps), their rate being the gain of their own short cycles.
"""

import numba
import numpy as np
from numba import njit, prange


__all__ = ["COUNTERS", "coefficients", "level_pass", "serial_pass", "pull_range", "sweep_chunks",
           "chunk_pending"]

PULLS, PUSHES, VERTEX_PUSHES, SWEEPS, MAX_SWEEPS, ONCE, CAPPED, RAN, DIRECT = range(9)
COUNTERS = 9


@njit(parallel=True, cache=True, nogil=True)
def coefficients(order, iout_offsets, iout_targets, iout_arcs, ein_offsets, ein_sources, ein_arcs,
                 src_scale, arc_scale, has_arc, dst_scale, icoef, ecoef):
    """``c_uv = src_scale[u] · arc_scale[e] · dst_scale[v]`` of every inside and pulled arc."""
    for i in prange(order.size):
        u = order[i]
        for e in range(iout_offsets[i], iout_offsets[i + 1]):
            w = order[iout_targets[e]]
            icoef[e] = src_scale[u] * (arc_scale[iout_arcs[e]] if has_arc else 1.0) * dst_scale[w]
        for k in range(ein_offsets[i], ein_offsets[i + 1]):
            s = order[ein_sources[k]]
            ecoef[k] = src_scale[s] * (arc_scale[ein_arcs[k]] if has_arc else 1.0) * dst_scale[u]


@njit(cache=True, nogil=True, inline="always")
def _pull(j, ein_offsets, ein_sources, ecoef, has_coef, vscale, b, x):
    acc = b[j]
    for k in range(ein_offsets[j], ein_offsets[j + 1]):
        s = ein_sources[k]
        acc += (ecoef[k] if has_coef else vscale[s]) * x[s]
    return acc


@njit(cache=True, nogil=True, inline="always")
def _pushable(r, iout_offsets, lo, hi, vmax):
    """(mass, out-arcs) of the residuals of positions ``lo:hi`` above ``vmax``: those a sweep of the
    L∞ route may push.  Their soft-priority threshold ``prio · mass / arcs`` (``prio < 1``) lies
    below the per-arc residual of at least one of them, so every sweep pushes."""
    mass = 0.0
    arcs = 0
    for j in range(lo, hi):
        v = abs(r[j])
        if v > vmax:
            mass += v
            arcs += iout_offsets[j + 1] - iout_offsets[j]
    return mass, arcs


@njit(cache=True, nogil=True, inline="always")
def _acyclic(a, z, ein_offsets, ein_sources, ecoef, has_coef, vscale, b, x, r, cnt):
    """Positions ``a:z`` without arcs inside their component (an acyclic vertex): exact from their
    final inputs in one evaluation; returns the arcs pulled.  Inlined into the passes, which call
    it before :func:`_component`: a call of that (not inlined) function with its twenty array
    arguments cost ~80 ns, and most components of a web or peer-to-peer graph are one acyclic
    vertex (p2p-Gnutella08: 3,960 of 4,234; the components after its giant took 325 µs through
    the call)."""
    for j in range(a, z):
        x[j] = _pull(j, ein_offsets, ein_sources, ecoef, has_coef, vscale, b, x)
        r[j] = 0.0
    pulled = ein_offsets[z] - ein_offsets[a]
    cnt[PULLS] += pulled
    cnt[RAN] += 1
    cnt[VERTEX_PUSHES] += z - a
    cnt[ONCE] += 1
    return pulled


@njit(cache=True, nogil=True, inline="always")
def _direct(a, z, iout_offsets, iout_targets, icoef, has_coef, vscale, x, r):
    """Solve ``(I − A_c) y = r_c`` on positions ``a:z`` (a component with arcs inside, its
    residuals ``r_c`` pulled) exactly: ``x_c += y``, ``r_c = 0``; returns the inside arcs read.
    ``I − A_c`` is diagonally dominant by columns on the L1 route (column sums of ``A`` at most
    γ1 < 1) and by rows on the L∞ route, so Gaussian elimination needs no pivoting."""
    k = z - a
    m = np.zeros((k, k), np.float64)
    y = np.empty(k, np.float64)
    for i in range(k):
        m[i, i] = 1.0
        y[i] = r[a + i]
    for j in range(a, z):
        for e in range(iout_offsets[j], iout_offsets[j + 1]):
            m[iout_targets[e] - a, j - a] -= icoef[e] if has_coef else vscale[j]
    for p in range(k):
        for i in range(p + 1, k):
            f = m[i, p] / m[p, p]
            if f != 0.0:
                for c in range(p + 1, k):
                    m[i, c] -= f * m[p, c]
                y[i] -= f * y[p]
    for p in range(k - 1, -1, -1):
        acc = y[p]
        for c in range(p + 1, k):
            acc -= m[p, c] * y[c]
        y[p] = acc / m[p, p]
    for i in range(k):
        x[a + i] += y[i]
        r[a + i] = 0.0
    return iout_offsets[z] - iout_offsets[a]


@njit(cache=True, nogil=True)
def _component(a, z, ein_offsets, ein_sources, ecoef, iout_offsets, iout_targets, icoef, has_coef,
               vscale, b, x, r, budget, vmax, linf, prio, max_sweeps, cnt, direct):
    """Pull, then sweep positions ``a:z`` (one component, one thread) until within budget, or
    solve it exactly when it has at most ``direct`` vertices; returns (sweeps, arcs pulled and
    pushed or read)."""
    arcs = iout_offsets[z] - iout_offsets[a]
    if arcs == 0:  # acyclic vertices: exact from final inputs
        return 0, _acyclic(a, z, ein_offsets, ein_sources, ecoef, has_coef, vscale, b, x, r, cnt)
    for j in range(a, z):
        r[j] = _pull(j, ein_offsets, ein_sources, ecoef, has_coef, vscale, b, x)
    cnt[PULLS] += ein_offsets[z] - ein_offsets[a]
    cnt[RAN] += 1
    if z - a <= direct:
        read = _direct(a, z, iout_offsets, iout_targets, icoef, has_coef, vscale, x, r)
        cnt[PUSHES] += read
        cnt[VERTEX_PUSHES] += z - a
        cnt[DIRECT] += 1
        cnt[ONCE] += 1
        return 0, ein_offsets[z] - ein_offsets[a] + read
    base = budget / arcs
    sent = ein_offsets[z] - ein_offsets[a]
    mass = 0.0
    top = 0.0
    for j in range(a, z):
        mass += abs(r[j])
        top = max(top, abs(r[j]))
    sweeps = 0
    pushed = 0
    while (top > vmax) if linf else (mass > budget):
        if sweeps >= max_sweeps:
            cnt[CAPPED] += 1
            break
        sweeps += 1
        if linf:
            pmass, parcs = _pushable(r, iout_offsets, a, z, vmax)
            theta = prio * pmass / max(parcs, 1)
        else:
            theta = max(prio * mass / arcs, base)
        for j in range(a, z):
            d = r[j]
            lo = iout_offsets[j]
            hi = iout_offsets[j + 1]
            ad = abs(d)
            if ad > theta * (hi - lo) and ad > vmax:
                x[j] += d
                r[j] = 0.0
                if has_coef:
                    for e in range(lo, hi):
                        r[iout_targets[e]] += icoef[e] * d
                else:  # one factor for every out-arc: the product made once (the same value)
                    cd = vscale[j] * d
                    for e in range(lo, hi):
                        r[iout_targets[e]] += cd
                sent += hi - lo
                pushed += 1
        mass = 0.0
        top = 0.0
        for j in range(a, z):
            mass += abs(r[j])
            top = max(top, abs(r[j]))
    cnt[PUSHES] += sent - (ein_offsets[z] - ein_offsets[a])
    cnt[VERTEX_PUSHES] += pushed
    cnt[SWEEPS] += sweeps
    if sweeps <= 1:
        cnt[ONCE] += 1
    return sweeps, sent


@njit(parallel=True, cache=True, nogil=True)
def level_pass(comps, comp_offsets, comp_arcs, ein_offsets, ein_sources, ecoef, iout_offsets,
               iout_targets, icoef, has_coef, vscale, b, x, r, per_arc, vmax, linf, prio,
               max_sweeps, cnt, comp_sweeps, comp_sent, direct):
    """Components ``comps`` of one level, one per thread at a time (dynamic chunks): each pulls
    and converges on its own; budget = ``per_arc`` × its inside arcs (L1 route).  Each one's
    sweeps and arcs sent go to ``comp_sweeps[c]``, ``comp_sent[c]``."""
    for i in prange(comps.size):
        c = comps[i]
        if comp_arcs[c] == 0:
            comp_sweeps[c] = 0
            comp_sent[c] = _acyclic(comp_offsets[c], comp_offsets[c + 1], ein_offsets,
                                    ein_sources, ecoef, has_coef, vscale, b, x, r,
                                    cnt[numba.get_thread_id()])
            continue
        sw, sent = _component(comp_offsets[c], comp_offsets[c + 1], ein_offsets, ein_sources,
                              ecoef, iout_offsets, iout_targets, icoef, has_coef, vscale, b, x, r,
                              per_arc * comp_arcs[c], vmax, linf, prio, max_sweeps,
                              cnt[numba.get_thread_id()], direct)
        comp_sweeps[c] = sw
        comp_sent[c] = sent


@njit(cache=True, nogil=True)
def serial_pass(c0, c1, comp_offsets, comp_arcs, ein_offsets, ein_sources, ecoef, iout_offsets,
                iout_targets, icoef, has_coef, vscale, b, x, r, per_arc, vmax, linf, prio,
                max_sweeps, cnt, comp_sweeps, comp_sent, direct):
    """Components ``c0:c1`` (several thin levels) one after another on the calling thread, in
    level order, so a deep DAG costs no call per level."""
    row = cnt[0]
    for c in range(c0, c1):
        if comp_arcs[c] == 0:
            comp_sweeps[c] = 0
            comp_sent[c] = _acyclic(comp_offsets[c], comp_offsets[c + 1], ein_offsets,
                                    ein_sources, ecoef, has_coef, vscale, b, x, r, row)
            continue
        sw, sent = _component(comp_offsets[c], comp_offsets[c + 1], ein_offsets, ein_sources,
                              ecoef, iout_offsets, iout_targets, icoef, has_coef, vscale, b, x, r,
                              per_arc * comp_arcs[c], vmax, linf, prio, max_sweeps, row, direct)
        comp_sweeps[c] = sw
        comp_sent[c] = sent


@njit(parallel=True, cache=True, nogil=True)
def pull_range(a, z, ein_offsets, ein_sources, ecoef, has_coef, vscale, b, x, r):
    """The pull of a component split over threads (positions ``a:z``)."""
    for j in prange(a, z):
        r[j] = _pull(j, ein_offsets, ein_sources, ecoef, has_coef, vscale, b, x)


@njit(cache=True, nogil=True, inline="always")
def _chunk_pending(rl, acc, seen, t, lo, hi, a, iout_offsets, vmax, linf):
    """(pending mass, largest pending residual, mass and out-arcs of the pending residuals above
    ``vmax``: see :func:`_pushable`; L∞ route only) of chunk ``lo:hi`` owned by thread ``t``: its
    own residuals plus what the other threads accumulated for it and it has not taken yet."""
    mass = 0.0
    top = 0.0
    pmass = 0.0
    parcs = 0
    for j in range(lo, hi):
        v = abs(rl[j])
        for q in range(acc.shape[0]):
            if q != t:
                v += abs(acc[q, j - a] - seen[q, j - a])
        mass += v
        top = max(top, v)
        if linf and v > vmax:
            pmass += v
            parcs += iout_offsets[j + 1] - iout_offsets[j]
    return mass, top, pmass, parcs


@njit(parallel=True, cache=True, nogil=True)
def sweep_chunks(bounds, iout_offsets, iout_targets, icoef, has_coef, vscale, x, rl, acc, seen,
                 inner, budget, vmax, linf, prio, cnt):
    """Up to ``inner`` sweeps of each chunk ``bounds[t]:bounds[t+1]`` of one large component, a
    thread per chunk.  A push into the thread's own chunk adds to ``rl``; into another thread's
    chunk, to the pusher's own accumulator ``acc[t, w - a]``, which only it writes and which only
    grows by what was pushed during this call (:func:`chunk_pending` folds and zeroes it between
    calls).  The owner of ``w`` takes ``acc[s, w - a] − seen[s, w - a]`` from
    each other thread ``s`` and records what it took in ``seen`` (which only it writes): a value
    read while the pusher adds is either before or after the add, never torn (8-byte aligned), so
    no contribution is lost and no atomic instruction is needed.  A chunk stops early when its own
    pending mass is within its share of the budget (by inside arcs)."""
    T = bounds.size - 1
    a = bounds[0]
    arcs = iout_offsets[bounds[T]] - iout_offsets[a]
    for t in prange(T):
        c = cnt[numba.get_thread_id()]
        lo = bounds[t]
        hi = bounds[t + 1]
        mine = iout_offsets[hi] - iout_offsets[lo]
        share = budget * mine / arcs
        base = budget / arcs
        mass, top, pmass, parcs = _chunk_pending(rl, acc, seen, t, lo, hi, a, iout_offsets, vmax,
                                                    linf)
        sweeps = 0
        for s in range(inner):
            if (top <= vmax) if linf else (mass <= share):
                break
            sweeps += 1
            if linf:
                theta = prio * pmass / max(parcs, 1)
            else:
                theta = max(prio * mass / max(mine, 1), base)
            for j in range(lo, hi):
                d = rl[j]
                for q in range(T):
                    if q != t:
                        cur = acc[q, j - a]
                        old = seen[q, j - a]
                        if cur != old:
                            d += cur - old
                            seen[q, j - a] = cur
                e0 = iout_offsets[j]
                e1 = iout_offsets[j + 1]
                ad = abs(d)
                if ad > theta * (e1 - e0) and ad > vmax:
                    x[j] += d
                    rl[j] = 0.0
                    vd = 0.0 if has_coef else vscale[j] * d  # every push without arc factors
                    for e in range(e0, e1):
                        w = iout_targets[e]
                        v = icoef[e] * d if has_coef else vd
                        if w >= lo and w < hi:
                            rl[w] += v
                        else:
                            acc[t, w - a] += v
                    c[PUSHES] += e1 - e0
                    c[VERTEX_PUSHES] += 1
                else:
                    rl[j] = d
            mass, top, pmass, parcs = _chunk_pending(rl, acc, seen, t, lo, hi, a, iout_offsets, vmax,
                                                    linf)
        c[SWEEPS] += sweeps
        c[MAX_SWEEPS] = max(c[MAX_SWEEPS], sweeps)


@njit(parallel=True, cache=True, nogil=True)
def chunk_pending(bounds, rl, acc, seen, out):
    """Fold what the other threads pushed into each chunk into ``rl`` and set the accumulators
    back to zero; ``out[t]`` = (pending mass, largest pending residual) of chunk ``t`` (called
    between sweeps, threads at rest).

    The reset keeps each accumulator as small as what was pushed during one call of
    :func:`sweep_chunks`.  An accumulator that kept growing would reach the size of the
    solution itself (a hub's share of the rank), and every small push into it would then be
    rounded to a multiple of that size's ulp: mass made or lost by rounding each sweep, which
    at tight tolerances keeps the residual from ever falling below the budget."""
    T = bounds.size - 1
    a = bounds[0]
    for t in prange(T):
        mass = 0.0
        top = 0.0
        for j in range(bounds[t], bounds[t + 1]):
            d = rl[j]
            for q in range(T):
                if q != t:
                    d += acc[q, j - a] - seen[q, j - a]
                    acc[q, j - a] = 0.0
                    seen[q, j - a] = 0.0
            rl[j] = d
            mass += abs(d)
            top = max(top, abs(d))
        out[t, 0] = mass
        out[t, 1] = top


@njit(cache=True, nogil=True, inline="always")
def _owner(bounds, w):
    lo = 0
    hi = bounds.size - 2
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if bounds[mid] <= w:
            lo = mid
        else:
            hi = mid - 1
    return lo


@njit(parallel=True, cache=True, nogil=True)
def box_capacity(bounds, iout_offsets, iout_targets, cap):
    """``cap[t, q]``: inside arcs from chunk ``t`` into chunk ``q != t`` (a sweep pushes each at
    most once)."""
    T = bounds.size - 1
    for t in prange(T):
        for j in range(bounds[t], bounds[t + 1]):
            for e in range(iout_offsets[j], iout_offsets[j + 1]):
                q = _owner(bounds, iout_targets[e])
                if q != t:
                    cap[t, q] += 1


@njit(parallel=True, cache=True, nogil=True)
def sweep_boxes(bounds, iout_offsets, iout_targets, icoef, has_coef, vscale, x, rl, box_off,
                box_tgt, box_val, box_len, parity, theta, vmax, cnt, out):
    """One sweep of each chunk of a split component, a thread per chunk, without atomics: a push
    into another chunk is written to the pusher's outbox for that chunk (half ``parity`` of a
    double buffer), which its owner adds in at the start of the next sweep (one sweep late; the
    call boundary is the barrier).  ``out[t]`` = (pending mass left in chunk ``t`` plus the mass
    it sent, largest pending residual, mass and out-arcs of its residuals above ``vmax``: see
    :func:`_pushable`; 0 when ``vmax`` is 0, the L1 route).  ``theta = inf`` only drains the inboxes."""
    T = bounds.size - 1
    half = box_off[T * T]
    for t in prange(T):
        c = cnt[numba.get_thread_id()]
        lo = bounds[t]
        hi = bounds[t + 1]
        prev = 1 - parity
        for q in range(T):
            if q != t:
                k = q * T + t
                base = box_off[k] + prev * half
                for i in range(box_len[prev, k]):
                    rl[box_tgt[base + i]] += box_val[base + i]
                box_len[prev, k] = 0
        fill = np.zeros(T, np.int64)
        sent = 0.0
        swept = 0
        if theta < np.inf:
            swept = 1
            for j in range(lo, hi):
                d = rl[j]
                e0 = iout_offsets[j]
                e1 = iout_offsets[j + 1]
                ad = abs(d)
                if ad > theta * (e1 - e0) and ad > vmax:
                    x[j] += d
                    rl[j] = 0.0
                    vd = 0.0 if has_coef else vscale[j] * d  # every push without arc factors
                    for e in range(e0, e1):
                        w = iout_targets[e]
                        v = icoef[e] * d if has_coef else vd
                        if w >= lo and w < hi:
                            rl[w] += v
                        else:
                            q = _owner(bounds, w)
                            p = box_off[t * T + q] + parity * half + fill[q]
                            box_tgt[p] = w
                            box_val[p] = v
                            fill[q] += 1
                            sent += abs(v)
                    c[PUSHES] += e1 - e0
                    c[VERTEX_PUSHES] += 1
        for q in range(T):
            if q != t:
                box_len[parity, t * T + q] = fill[q]
        mass = 0.0
        top = 0.0
        for j in range(lo, hi):
            mass += abs(rl[j])
            top = max(top, abs(rl[j]))
        out[t, 0] = mass + sent
        out[t, 1] = max(top, sent)
        pmass, parcs = _pushable(rl, iout_offsets, lo, hi, vmax) if vmax > 0.0 else (0.0, 0)
        out[t, 2] = pmass
        out[t, 3] = parcs
        c[SWEEPS] += swept
