"""Numba CPU kernels of the vertex state of the path modes
(:mod:`digraph.dispatch.engines.scc.cpu`): linear systems solved component by component of the
vertex condensation (:mod:`digraph.paths.condensation`), in position space.

A component starts by *pulling* its in-arcs from other components (final by then), which gives
each of its vertices its residual ``r_v = b_v + Σ_{u→v, u outside} c_uv x_u`` with ``x_v = 0``; a
vertex without arcs inside its component is then exact (``x_v = r_v``, one evaluation).  Otherwise
the component *sweeps* its vertices in position order, Gauss–Seidel style: a vertex whose residual
is worth it adds it to ``x_v`` and pushes ``c·r_v`` along its inside out-arcs, where later vertices
of the same sweep use it at once.  "Worth it" is a soft priority by pending mass, without a sort:
``|r_v| > deg_v · max(budget / arcs, prio · mass / arcs)``, with ``mass`` the component's pending
residual after the previous sweep (a vertex's push costs its out-degree, so its residual is
compared per arc); with ``prio < 1`` every sweep makes progress.  A push is over-relaxed by a
factor ω that the sweeps measure for each component (:mod:`.relaxation`, the kernel argument
``sor``: ``ω·r_v`` added and pushed, ``(1 − ω)·r_v`` left).  The component is done when its
pending mass is within its budget (L∞ route: every residual within ``vmax``).  On the L∞ route
only residuals above ``vmax`` may push, so ``mass`` and ``arcs`` there are those of the vertices
above ``vmax`` (:func:`pushable`): taken over every residual, the many small ones that may
never push can raise the threshold above every vertex that may, and the sweeps then push nothing
and never end (docs/history/benchmarks-lab-notebook.md, "Adsorption with the dual-weight
bound").

A component too large for one thread is split over the threads by the kernels of
:mod:`~.scc_split` (its pull, and its sweeps exchanging through accumulators or outboxes).

Counters per thread (``cnt[t]``): :data:`PULLS`, :data:`PUSHES` (arcs), :data:`VERTEX_PUSHES`,
:data:`SWEEPS`, :data:`MAX_SWEEPS` (of one chunk of a split component, this call), :data:`ONCE`
(components done in at most one sweep), :data:`CAPPED` (components stopped by ``max_sweeps``),
:data:`RAN`, :data:`DIRECT` (components solved exactly, :func:`_direct`); per component, its
sweeps and the arcs it pulled and pushed.

Small cyclic components (at most ``direct`` vertices, a kernel argument from
:attr:`~digraph.dispatch.engines.scc.cpu.DagPushSettings.direct_vertices`) are not swept: their
system ``(I − A_c) x_c = r_c`` is solved exactly by Gaussian elimination (:func:`_direct`), as the
GPU engine's light components (:data:`digraph.smx.cuda.scc_blocks.DK`): sweeping them takes many
sweeps each, their rate being the gain of their own short cycles (measured:
docs/history/benchmarks-notebook.md, "PageRank: two formulations on the CPU, against scipy and
igraph PRPACK").
"""

import numba
import numpy as np
from numba import njit, prange

from . import relaxation
from .serial import serial_twin, twin


__all__ = ["COUNTERS", "coefficients", "acyclic_pass", "acyclic_pass_serial", "level_pass",
           "level_pass_pulled", "serial_pass", "serial_pass_pulled", "serial_pass_direct"]

PULLED = False
"""Whether :func:`_component` may sweep in pull form (:func:`_pulled`): False in the passes
below, True in their twins ``serial_pass_pulled`` and ``level_pass_pulled`` (the same code
compiled with this constant set), so that a run with no component to pull never compiles
the pulled sweeps."""

PULLS, PUSHES, VERTEX_PUSHES, SWEEPS, MAX_SWEEPS, ONCE, CAPPED, RAN, DIRECT = range(9)
COUNTERS = 16
"""Columns of a thread's counter row: the nine above, padded to 128 bytes so that two threads'
rows never share a cache line (every component of a level adds to its thread's row)."""


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
def pull(j, ein_offsets, ein_sources, ecoef, has_coef, vscale, b, x):
    acc = b[j]
    for k in range(ein_offsets[j], ein_offsets[j + 1]):
        s = ein_sources[k]
        acc += (ecoef[k] if has_coef else vscale[s]) * x[s]
    return acc


@njit(cache=True, nogil=True, inline="always")
def pushable(r, iout_offsets, lo, hi, vmax):
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
    it instead of :func:`_component`: a call of that (not inlined) function with its twenty array
    arguments costs more than an acyclic vertex's own work, and most components of a web or
    peer-to-peer graph are one acyclic vertex (measured: docs/history/benchmarks-notebook.md,
    "PageRank: two formulations on the CPU, against scipy and igraph PRPACK")."""
    for j in range(a, z):
        x[j] = pull(j, ein_offsets, ein_sources, ecoef, has_coef, vscale, b, x)
        r[j] = 0.0
    pulled = ein_offsets[z] - ein_offsets[a]
    cnt[PULLS] += pulled
    cnt[RAN] += 1
    cnt[VERTEX_PUSHES] += z - a
    cnt[ONCE] += 1
    return pulled


@njit(cache=True, nogil=True, inline="always")
def _direct(a, z, iout_offsets, iout_targets, icoef, has_coef, vscale, x, r, work):
    """Solve ``(I − A_c) y = r_c`` on positions ``a:z`` (a component with arcs inside, its
    residuals ``r_c`` pulled) exactly: ``x_c += y``, ``r_c = 0``; returns the inside arcs read.
    ``I − A_c`` is diagonally dominant by columns on the L1 route (column sums of ``A`` at most
    γ1 < 1) and by rows on the L∞ route, so Gaussian elimination needs no pivoting.
    ``work`` (float64, at least ``k² + k`` entries for ``k = z − a``, any content) holds the
    matrix, row by row, then ``y``: the kernel allocates nothing."""
    k = z - a
    for i in range(k * k):
        work[i] = 0.0
    for i in range(k):
        work[i * k + i] = 1.0
        work[k * k + i] = r[a + i]
    for j in range(a, z):
        for e in range(iout_offsets[j], iout_offsets[j + 1]):
            work[(iout_targets[e] - a) * k + j - a] -= icoef[e] if has_coef else vscale[j]
    y = k * k
    for p in range(k):
        for i in range(p + 1, k):
            f = work[i * k + p] / work[p * k + p]
            if f != 0.0:
                for c in range(p + 1, k):
                    work[i * k + c] -= f * work[p * k + c]
                work[y + i] -= f * work[y + p]
    for p in range(k - 1, -1, -1):
        acc = work[y + p]
        for c in range(p + 1, k):
            acc -= work[p * k + c] * work[y + c]
        work[y + p] = acc / work[p * k + p]
    for i in range(k):
        x[a + i] += work[y + i]
        r[a + i] = 0.0
    return iout_offsets[z] - iout_offsets[a]


@njit(cache=True, nogil=True, inline="always")
def _solved(a, z, ein_offsets, ein_sources, ecoef, iout_offsets, iout_targets, icoef, has_coef,
            vscale, b, x, r, cnt, work):
    """Pull, then solve positions ``a:z`` exactly (:func:`_direct`: a component with arcs inside
    and at most ``direct`` vertices); returns the arcs pulled and read."""
    for j in range(a, z):
        r[j] = pull(j, ein_offsets, ein_sources, ecoef, has_coef, vscale, b, x)
    pulled = ein_offsets[z] - ein_offsets[a]
    cnt[PULLS] += pulled
    cnt[RAN] += 1
    read = _direct(a, z, iout_offsets, iout_targets, icoef, has_coef, vscale, x, r, work)
    cnt[PUSHES] += read
    cnt[VERTEX_PUSHES] += z - a
    cnt[DIRECT] += 1
    cnt[ONCE] += 1
    return pulled + read


@njit(cache=True, nogil=True)
def _pulled(a, z, iout_offsets, iout_targets, icoef, iin_offsets, iin_sources, iin_coef, has_coef,
            vscale, x, r, budget, vmax, linf, sor, max_sweeps, cnt, work, back, mass, top, sent):
    """Gauss–Seidel sweeps of positions ``a:z`` in pull form: each vertex sums its in-arcs inside
    the component (``iin_*``, the transpose of ``iout_*``) over its pulled inputs ``r`` (held
    fixed: ``b`` plus the finished components' arcs), ``x_v += ω (r_v + Σ c x_u − x_v)``.  No
    priority and no residual per arc: a sweep reads every inside arc once, in order, where a
    push reads and writes a target's residual per arc; on a component of few arcs per vertex
    that costs less (:attr:`~digraph.dispatch.engines.scc.cpu.DagPushSettings.pull_degree`).

    Stop: after a sweep of changes ``Δ`` made with factor ω the residual is
    ``r_v = (1/ω − 1) Δ_v + Σ_{u after v} c_uv Δ_u`` (only the arcs back to an earlier position
    carry a change the sweep did not use), so ``‖r‖₁ ≤ Σ_u |Δ_u| (|1/ω − 1| + B_u)`` with
    ``B_u`` the coefficients of ``u``'s arcs back (its column's share), and
    ``‖r‖∞ ≤ (|1/ω − 1| + max_v R_v) ‖Δ‖∞`` with ``R_v`` those of ``v``'s in-arcs from later
    positions; ``B`` (L1 route) or ``R`` (L∞ route) is summed into ``back[a:z]`` first (one pass
    over the arcs).  The sweeps end when the bound is within the component's budget (``vmax``
    on the L∞ route).  ``mass``, ``top``: the pulled residual's, ``sent``: the arcs pulled;
    returns (sweeps, arcs pulled and read)."""
    reads = iin_offsets[z] - iin_offsets[a]
    rmax = 0.0
    for j in range(a, z):
        acc = 0.0
        if linf:  # in-arcs from later positions
            for e in range(iin_offsets[j], iin_offsets[j + 1]):
                u = iin_sources[e]
                if u > j:
                    acc += abs(iin_coef[e]) if has_coef else abs(vscale[u])
        else:  # out-arcs to earlier positions
            for e in range(iout_offsets[j], iout_offsets[j + 1]):
                if iout_targets[e] < j:
                    acc += abs(icoef[e]) if has_coef else abs(vscale[j])
        acc *= 1.0 + 1e-12  # the sum's rounding
        back[j] = acc
        rmax = max(rmax, acc)
    sweeps = 0
    w = relaxation.start(work, sor, mass)
    while (top > vmax) if linf else (mass > budget):
        if sweeps >= max_sweeps:
            cnt[CAPPED] += 1
            break
        sweeps += 1
        f = abs(1.0 / w - 1.0)
        mass = 0.0
        top = 0.0
        for j in range(a, z):
            acc = r[j]
            if has_coef:
                for e in range(iin_offsets[j], iin_offsets[j + 1]):
                    acc += iin_coef[e] * x[iin_sources[e]]
            else:
                for e in range(iin_offsets[j], iin_offsets[j + 1]):
                    u = iin_sources[e]
                    acc += vscale[u] * x[u]
            dx = w * (acc - x[j])
            x[j] += dx
            mass += abs(dx) * (f + back[j])
            top = max(top, abs(dx))
        top *= f + rmax
        w = relaxation.after(work, sor, sweeps, mass)
    cnt[PUSHES] += (sweeps + 1) * reads  # and the pass for ``back``
    cnt[VERTEX_PUSHES] += sweeps * (z - a)
    cnt[SWEEPS] += sweeps
    if sweeps <= 1:
        cnt[ONCE] += 1
    return sweeps, sent + (sweeps + 1) * reads


@njit(cache=True, nogil=True)
def _component(a, z, ein_offsets, ein_sources, ecoef, iout_offsets, iout_targets, icoef, has_coef,
               vscale, b, x, r, budget, vmax, linf, prio, sor, max_sweeps, cnt, direct, work,
               iin_offsets, iin_sources, iin_coef, pullp):
    """Pull, then sweep positions ``a:z`` (one component with arcs inside, one thread; the passes
    take acyclic ones to :func:`_acyclic` first) until within budget, or solve it exactly when it
    has at most ``direct`` vertices; returns (sweeps, arcs pulled and pushed or read).  ``sor``:
    the parameters of :mod:`.relaxation`, its state kept in ``work[:STATE]``.  An exact
    solve reads the component's arcs once and counts as one sweep of the critical path
    (``stats["rounds"]``), though not in ``SWEEPS``."""
    if z - a <= direct:  # one pass on the critical path
        return 1, _solved(a, z, ein_offsets, ein_sources, ecoef, iout_offsets, iout_targets, icoef,
                          has_coef, vscale, b, x, r, cnt, work)
    arcs = iout_offsets[z] - iout_offsets[a]
    for j in range(a, z):
        r[j] = pull(j, ein_offsets, ein_sources, ecoef, has_coef, vscale, b, x)
    cnt[PULLS] += ein_offsets[z] - ein_offsets[a]
    cnt[RAN] += 1
    base = budget / arcs
    sent = ein_offsets[z] - ein_offsets[a]
    mass = 0.0
    top = 0.0
    for j in range(a, z):
        mass += abs(r[j])
        top = max(top, abs(r[j]))
    if PULLED and pullp[0] > 0.0 and arcs < pullp[0] * (z - a):  # low degree: pulled sweeps
        return _pulled(a, z, iout_offsets, iout_targets, icoef, iin_offsets, iin_sources,
                       iin_coef, has_coef, vscale, x, r, budget, vmax, linf, sor, max_sweeps, cnt,
                       work, pullp[1:], mass, top, sent)
    sweeps = 0
    pushed = 0
    w = relaxation.start(work, sor, mass)  # work[:STATE]: the policy's state (no direct solve here)
    while (top > vmax) if linf else (mass > budget):
        if sweeps >= max_sweeps:
            cnt[CAPPED] += 1
            break
        sweeps += 1
        if linf:
            pmass, parcs = pushable(r, iout_offsets, a, z, vmax)
            theta = prio * pmass / max(parcs, 1)
        else:
            theta = max(prio * mass / arcs, base)
        for j in range(a, z):
            d = r[j]
            lo = iout_offsets[j]
            hi = iout_offsets[j + 1]
            ad = abs(d)
            if ad > theta * (hi - lo) and ad > vmax:
                dd = w * d  # over-relaxed: (1 - w) d stays (:mod:`.relaxation`)
                x[j] += dd
                r[j] = d - dd
                if has_coef:
                    for e in range(lo, hi):
                        r[iout_targets[e]] += icoef[e] * dd
                else:  # one factor for every out-arc: the product made once (the same value)
                    cd = vscale[j] * dd
                    for e in range(lo, hi):
                        r[iout_targets[e]] += cd
                sent += hi - lo
                pushed += 1
        mass = 0.0
        top = 0.0
        for j in range(a, z):
            mass += abs(r[j])
            top = max(top, abs(r[j]))
        w = relaxation.after(work, sor, sweeps, mass)
    cnt[PUSHES] += sent - (ein_offsets[z] - ein_offsets[a])
    cnt[VERTEX_PUSHES] += pushed
    cnt[SWEEPS] += sweeps
    if sweeps <= 1:
        cnt[ONCE] += 1
    return sweeps, sent


@njit(parallel=True, cache=True, nogil=True)
def acyclic_pass(pos, ein_offsets, ein_sources, ecoef, has_coef, vscale, b, x, r):
    """The acyclic vertices at positions ``pos`` (one level's components without inside arcs,
    each one vertex): exact from their final inputs in one pull each, over the threads in even
    blocks.  Their counters and arcs pulled are the caller's (one vector sum): a level of many
    one-vertex components costs a pull a vertex here, where :func:`level_pass` adds a
    component's bookkeeping to each (and its dynamic chunks)."""
    for i in prange(pos.size):
        j = pos[i]
        x[j] = pull(j, ein_offsets, ein_sources, ecoef, has_coef, vscale, b, x)
        r[j] = 0.0


acyclic_pass_serial = serial_twin(acyclic_pass)


@njit(parallel=True, cache=True, nogil=True)
def level_pass(comps, comp_offsets, comp_arcs, ein_offsets, ein_sources, ecoef, iout_offsets,
               iout_targets, icoef, has_coef, vscale, b, x, r, per_arc, vmax, linf, prio,
               sor, max_sweeps, cnt, comp_sweeps, comp_sent, direct, work, iin_offsets,
               iin_sources, iin_coef, pullp):
    """Components ``comps`` of one level, one per thread at a time (dynamic chunks): each pulls
    and converges on its own; budget = ``per_arc`` × its inside arcs (L1 route).  Each one's
    sweeps and arcs sent go to ``comp_sweeps[c]``, ``comp_sent[c]``.  ``work``: a row of
    ``direct² + direct`` floats per thread (:func:`_direct`'s scratch), as ``cnt``."""
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
                              per_arc * comp_arcs[c], vmax, linf, prio, sor, max_sweeps,
                              cnt[numba.get_thread_id()], direct, work[numba.get_thread_id()],
                              iin_offsets, iin_sources, iin_coef, pullp)
        comp_sweeps[c] = sw
        comp_sent[c] = sent


@njit(cache=True, nogil=True)
def serial_pass(c0, c1, comp_offsets, comp_arcs, ein_offsets, ein_sources, ecoef, iout_offsets,
                iout_targets, icoef, has_coef, vscale, b, x, r, per_arc, vmax, linf, prio,
                sor, max_sweeps, cnt, comp_sweeps, comp_sent, direct, work, iin_offsets,
                iin_sources, iin_coef, pullp):
    """Components ``c0:c1`` (several thin levels) one after another on the calling thread, in
    level order, so a deep DAG costs no call per level (``work``: as for :func:`level_pass`,
    row 0 used)."""
    row = cnt[0]
    for c in range(c0, c1):
        if comp_arcs[c] == 0:
            comp_sweeps[c] = 0
            comp_sent[c] = _acyclic(comp_offsets[c], comp_offsets[c + 1], ein_offsets,
                                    ein_sources, ecoef, has_coef, vscale, b, x, r, row)
            continue
        sw, sent = _component(comp_offsets[c], comp_offsets[c + 1], ein_offsets, ein_sources,
                              ecoef, iout_offsets, iout_targets, icoef, has_coef, vscale, b, x, r,
                              per_arc * comp_arcs[c], vmax, linf, prio, sor, max_sweeps, row, direct,
                              work[0], iin_offsets, iin_sources, iin_coef, pullp)
        comp_sweeps[c] = sw
        comp_sent[c] = sent


@njit(cache=True, nogil=True)
def serial_pass_direct(c0, c1, comp_offsets, comp_arcs, ein_offsets, ein_sources, ecoef,
                       iout_offsets, iout_targets, icoef, has_coef, vscale, b, x, r, per_arc, vmax,
                       linf, prio, sor, max_sweeps, cnt, comp_sweeps, comp_sent, direct, work,
                       iin_offsets, iin_sources, iin_coef, pullp):
    """:func:`serial_pass` (the same arguments, answers and counters) for components ``c0:c1``
    whose cyclic ones all have at most ``direct`` vertices, so that none is swept: it compiles
    without the sweeps (``per_arc``, ``vmax``, ``linf``, ``prio`` and ``max_sweeps`` unused).
    The pull of :func:`_acyclic` and :func:`_solved` is written out once, shared by both kinds
    of component: each inlined call is compiled anew."""
    row = cnt[0]
    for c in range(c0, c1):
        a = comp_offsets[c]
        z = comp_offsets[c + 1]
        cyclic = comp_arcs[c] != 0
        for j in range(a, z):
            acc = b[j]
            for k in range(ein_offsets[j], ein_offsets[j + 1]):
                s = ein_sources[k]
                acc += (ecoef[k] if has_coef else vscale[s]) * x[s]
            if cyclic:
                r[j] = acc
            else:  # exact: its inputs are final
                x[j] = acc
                r[j] = 0.0
        pulled = ein_offsets[z] - ein_offsets[a]
        row[PULLS] += pulled
        row[RAN] += 1
        row[VERTEX_PUSHES] += z - a
        row[ONCE] += 1
        if not cyclic:
            comp_sweeps[c] = 0
            comp_sent[c] = pulled
            continue
        read = _direct(a, z, iout_offsets, iout_targets, icoef, has_coef, vscale, x, r, work[0])
        row[PUSHES] += read
        row[DIRECT] += 1
        comp_sweeps[c] = 1
        comp_sent[c] = pulled + read


_component_pulled = twin(_component, "_pulled", PULLED=True)
serial_pass_pulled = twin(serial_pass, "_pulled", _component=_component_pulled)
level_pass_pulled = twin(level_pass, "_pulled", parallel=True, _component=_component_pulled)
