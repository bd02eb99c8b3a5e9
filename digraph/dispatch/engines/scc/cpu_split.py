"""The SCC engine's large components split over the CPU threads
(:mod:`digraph.dispatch.engines.scc.cpu`): which components are split (:func:`splits`, a cost
model of :class:`~digraph.dispatch.engines.scc.cpu.DagPushSettings`), their chunks
(:func:`split_plan`), and their sweeps (:func:`split_component`), the chunks exchanging through
accumulators or outboxes (the kernels of :mod:`digraph.smx.cpu.scc_split`).  The sweeps are
over-relaxed as one thread's are (:mod:`digraph.smx.cpu.relaxation`): one factor for all the
chunks, chosen between kernel calls from the component's pending mass.
"""

from types import SimpleNamespace

import numpy as np

from ....smx.cpu import relaxation as R
from ....smx.cpu import scc as K
from ....smx.cpu import scc_split as KS
from ... import driver

__all__ = ["splits", "split_plan", "split_component"]


def split_component(c, cond, T, ecoef, icoef, has_coef, vscale, b, x, r, budget, vmax, linf,
                    prio, sor, max_sweeps, cnt, settings):
    """A large component over ``T`` threads (``settings.split_kind`` says how the chunks exchange);
    returns (its rounds: sweeps of the slowest chunk, arcs pulled and pushed)."""
    a, z = int(cond.comp_offsets[c]), int(cond.comp_offsets[c + 1])
    KS.pull_range(a, z, cond.ein_offsets, cond.ein_sources, ecoef, has_coef, vscale, b, x, r)
    pulled = int(cond.ein_offsets[z] - cond.ein_offsets[a])
    cnt[0, K.PULLS] += pulled
    cnt[0, K.RAN] += 1
    pushed = int(cnt[:, K.PUSHES].sum())
    kind = settings.split_kind
    if kind == "auto":
        kind = "outbox" if split_plan(cond, c, T)[2] <= settings.outbox_cross else "accumulate"
    sweep = _sweep_outbox if kind == "outbox" else _sweep_accumulate
    rounds = sweep(c, cond, T, a, z, icoef, has_coef, vscale, x, r, budget, vmax, linf, prio,
                   sor, max_sweeps, cnt, settings)
    if rounds <= 1:
        cnt[0, K.ONCE] += 1
    return rounds, pulled + int(cnt[:, K.PUSHES].sum()) - pushed


def splits(cond, T, settings):
    """Which components of ``cond`` the engine splits over ``T`` threads (a bool array): those
    of at least ``settings.split_arcs`` inside arcs whose modelled split time,
    ``split_thread_cost / T + split_cross_cost · cross``, is below one thread's
    (:class:`~digraph.dispatch.engines.scc.cpu.DagPushSettings`); none on one thread."""
    out = np.zeros(cond.num_components, np.bool_)
    if T <= 1:
        return out
    for c in np.flatnonzero(cond.comp_arcs >= settings.split_arcs):  # the few large ones
        cross = split_plan(cond, int(c), T)[2] if settings.split_cross_cost > 0 else 0.0
        out[c] = settings.split_thread_cost / T + settings.split_cross_cost * cross < 1.0
    return out


def split_plan(cond, c, T):
    """(chunk bounds, inside arcs between each pair of chunks, share of the inside arcs that
    cross chunks) of component ``c`` over ``T`` threads, kept on the condensation."""
    plans = cond.__dict__.setdefault("_split_plans", {})
    if (c, T) not in plans:
        a, z = int(cond.comp_offsets[c]), int(cond.comp_offsets[c + 1])
        cum = cond.iout_offsets[a:z + 1] - cond.iout_offsets[a]
        bounds = a + np.searchsorted(cum, np.linspace(0, cum[-1], T + 1)).astype(np.int64)
        bounds[0], bounds[-1] = a, z
        cap = np.zeros((T, T), np.int64)
        KS.box_capacity(bounds, cond.iout_offsets, cond.iout_targets, cap)
        plans[c, T] = (bounds, cap, float(cap.sum()) / max(int(cond.comp_arcs[c]), 1))
    return plans[c, T]


def _sweep_accumulate(c, cond, T, a, z, icoef, has_coef, vscale, x, r, budget, vmax, linf, prio,
                      sor, max_sweeps, cnt, settings):
    """Sweeps of a split component, a kernel call per ``settings.inner_sweeps``, the chunks
    exchanging through per-thread accumulators (:func:`digraph.smx.cpu.scc_split.sweep_chunks`);
    returns the sweeps of the slowest chunk."""
    bounds = split_plan(cond, c, T)[0]
    acc = np.zeros((T, z - a), np.float64)  # what each thread pushed into the others' chunks
    seen = np.zeros((T, z - a), np.float64)  # what each owner took of it
    pending = np.zeros((T, 2), np.float64)
    state = np.zeros(R.STATE, np.float64)
    st = SimpleNamespace(w=R.start(state, sor, float(np.abs(r[a:z]).sum())), sweeps=0)

    def done():
        KS.chunk_pending(bounds, r, acc, seen, pending)
        if st.sweeps:  # ω for the next call, from the mass the last one left
            st.w = R.after(state, sor, float(st.sweeps), float(pending[:, 0].sum()))
        return (pending[:, 1].max() <= vmax) if linf else (pending[:, 0].sum() <= budget)

    def sweep(left):
        cnt[:, K.MAX_SWEEPS] = 0
        KS.sweep_chunks(bounds, cond.iout_offsets, cond.iout_targets, icoef, has_coef, vscale, x,
                        r, acc, seen, min(settings.inner_sweeps, left), budget, vmax, linf, prio,
                        st.w, cnt)
        # 0: every chunk within its share, only rounding keeps the sum above
        made = int(cnt[:, K.MAX_SWEEPS].max())
        st.sweeps += made
        return made

    rounds, capped = driver.local(done, sweep, max_sweeps=max_sweeps)
    if capped:
        cnt[0, K.CAPPED] += 1
    return rounds


def _sweep_outbox(c, cond, T, a, z, icoef, has_coef, vscale, x, r, budget, vmax, linf, prio,
                  sor, max_sweeps, cnt, settings):
    """Sweeps of a split component, a sweep per kernel call, the chunks exchanging through
    outboxes (:func:`digraph.smx.cpu.scc_split.sweep_boxes`); returns the sweeps."""
    arcs = int(cond.comp_arcs[c])
    bounds, cap, _ = split_plan(cond, c, T)
    box_off = np.zeros(T * T + 1, np.int64)
    np.cumsum(cap.ravel(), out=box_off[1:])
    box_tgt = np.empty(2 * box_off[-1], cond.iout_targets.dtype)
    box_val = np.empty(2 * box_off[-1], np.float64)
    box_len = np.zeros((2, T * T), np.int64)
    out = np.zeros((T, 4), np.float64)
    mass = float(np.abs(r[a:z]).sum())
    top = float(np.abs(r[a:z]).max()) if z > a else 0.0
    above = np.abs(r[a:z]) > vmax  # L∞ route: the residuals that may push (cpu_scc._pushable)
    pmass = float(np.abs(r[a:z])[above].sum())
    parcs = float(np.diff(cond.iout_offsets[a:z + 1])[above].sum())
    args = (bounds, cond.iout_offsets, cond.iout_targets, icoef, has_coef, vscale, x, r, box_off,
            box_tgt, box_val, box_len)
    state = np.zeros(R.STATE, np.float64)
    st = SimpleNamespace(mass=mass, top=top, pmass=pmass, parcs=parcs, parity=0,
                         w=R.start(state, sor, mass), sweeps=0)

    def done():
        return (st.top <= vmax) if linf else (st.mass <= budget)

    def sweep(left):
        theta = (prio * st.pmass / max(st.parcs, 1.0) if linf
                 else max(prio * st.mass / arcs, budget / arcs))
        KS.sweep_boxes(*args, st.parity, theta, vmax, st.w, cnt, out)
        st.mass, st.top = float(out[:, 0].sum()), float(out[:, 1].max())
        st.pmass, st.parcs = float(out[:, 2].sum()), float(out[:, 3].sum())
        st.parity ^= 1
        st.sweeps += 1
        st.w = R.after(state, sor, float(st.sweeps), st.mass)
        return 1

    rounds, capped = driver.local(done, sweep, max_sweeps=max_sweeps)
    if capped:
        cnt[0, K.CAPPED] += 1
    KS.sweep_boxes(*args, st.parity, np.inf, vmax, 1.0, cnt, out)  # the last outboxes in
    return rounds
