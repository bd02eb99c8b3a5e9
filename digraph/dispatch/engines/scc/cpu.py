"""The SCC engine (``mode="scc"``, the default for linear algorithms on the CPU): linear systems
solved SCC by SCC in the order of the DAG sketch, with one residual per vertex.

DiGraph's model (§3.2.2): an SCC-vertex runs once its predecessors have converged, and one whose
inputs are final never runs again (Observation 2).  Here the SCC-vertices are the strongly
connected components of the graph itself (:mod:`digraph.paths.condensation`) and a component is
never revisited at all: it starts when every component of the lower levels is done, pulls its
inputs from them once, and converges on its own (:mod:`digraph.smx.cpu.scc`):

* a component of one vertex (every acyclic vertex) is exact after that one evaluation;
* a small component is swept by one thread, Gauss–Seidel style, with a soft priority by pending
  mass per arc; the components of one level run in parallel (dynamic chunks: idle threads take
  the next one);
* every swept component's pushes are over-relaxed (SOR) by a factor measured on its own sweeps
  (:mod:`digraph.smx.cpu.relaxation`, :attr:`DagPushSettings.relaxation`): Young's factor for
  its rate at ω = 1, kept while it converges faster;
* a large component (at least :attr:`DagPushSettings.split_arcs` inside arcs) is split into one
  chunk per thread by inside arcs; a push into another thread's chunk goes to the pusher's own
  accumulator, which the owner drains (:func:`digraph.smx.cpu.scc_split.sweep_chunks`: no
  atomics, no lost update), or to outboxes (:mod:`.cpu_split`).

Why not per-arc mirrors (``mode="path"``, :mod:`digraph.dispatch.engines.path.cpu`)?  On a CPU a
mirror per arc (or per short-path group) costs a read per arc to find what is pending, every
round; a vertex residual is one value to test, and the vertex state sends about as few arcs as
the mirrors, in less time.  Measured: docs/history/benchmarks-notebook.md, "Vertex state: the
SCC engine's variants (2 cores)".

Error budget.  Linear systems ``x = b + A x`` with ``A ≥ 0``.  When a component is done its
residual is exactly its pending mass (its inputs are final), so the answer's residual is the sum
over components; the L1 budget of :func:`~.convergence.pending_budget` is shared by inside arcs
(a component of ``k`` arcs may leave ``budget · k / (arcs inside all components)``).  For a
normalised answer the budget scales with ``Σx``, which is not known yet: a lower bound is used,
``Σx`` of the finished levels plus ``Σb`` of the rest (a state that only grows from 0 ends at
least at ``b``).  The L∞ route (adsorption) bounds every vertex's residual instead.  The result
is certified on the residual recomputed from the state; if that fails (rounding), the run is
finished by vertex-level push from the exact residual, as in the arc state.
"""

from dataclasses import dataclass

import numba
import numpy as np

from ...settings import current, register
from ....errors import InvalidParameterError
from ....paths.condensation import ORDERS, condensation_for, inside_in_arcs
from ....smx.cpu import relaxation as R
from ....smx.cpu import scc as K
from ....smx.cpu.serial import pick
from ... import driver
from ..push.cpu import finish_linear
from ..registry import find
from .cpu_split import split_component, split_plan, splits
from ...convergence import certified_bound, pending_budget, quick_contraction
from ...systems import linear_factors

__all__ = ["solve", "DagPushSettings", "DEFAULT", "sor_params", "splits", "split_plan"]


@dataclass(frozen=True)
class DagPushSettings:
    """How the SCC engine (``mode="scc"``) schedules its components and sweeps.

    The measurements are in docs/history/benchmarks-notebook.md, "Measurements behind the CPU
    engines' thresholds" (subsections "Vertex state: the SCC engine's variants (2 cores)" and
    "Threads: splitting the large components, and when ``bsp`` is better (16 cores)"); earlier
    ones in docs/history/benchmarks-lab-notebook.md.  The router weighs this engine against
    ``bsp`` on the share of the arcs in components of at least this ``split_arcs``
    (:mod:`digraph.dispatch.engines.scc.cpu_cost`).

    Attributes
    ----------
    split_arcs : int
        Components with at least this many inside arcs are split over the threads (below: one
        thread per component, components of a level in parallel).  Splitting was measured against
        not splitting (the "no split" column of "Threads", the "no component split" row of
        "Vertex state"); the threshold 100,000 itself was not measured against other values:
        chosen by hand.  ``1`` splits every component with an arc (the tests and the warm-up of
        :mod:`digraph.compiling`).
    split_thread_cost, split_cross_cost : float
        ``a`` and ``b`` of the split's modelled time over the same component swept on one
        thread, ``a / T + b · cross`` (``cross``: the share of its inside arcs between the
        ``T`` chunks, :func:`split_plan`): a component of ``split_arcs`` or more is split only
        where this is below 1.  ``a`` counts the sweeps the chunks' coupling adds, ``b`` what
        each crossing arc costs in the exchange (and in sweeps).  Fitted on 2 threads
        (docs/history/docstring-measurements.md, "DagPushSettings.split_cross_cost"):
        splitting took 0.65x the one-thread sweeps on a road grid (cross 0.001), 0.93x on
        cnr-2000 (0.18), 1.44x on soc-Epinions1 (0.35) and 1.8x on soc-Slashdot0902 (0.41).
        ``split_cross_cost = 0`` splits every component of ``split_arcs`` or more (the tests).
    priority_share : float
        ``prio`` of the soft priority (``priority="pending"``): a vertex is pushed when its
        residual per out-arc exceeds this share of its component's mean pending mass per arc
        (``< 1``, so every sweep pushes something); ``priority="none"`` pushes every vertex above
        the budget's per-arc share.  The priority was measured against none (the "no priority"
        row of "Vertex state"); the share 0.5 itself was not measured against other values:
        chosen by hand.
    inner_sweeps : int
        Sweeps of a split component per kernel call between global checks of its pending mass
        (the accumulator exchange).  Not measured: chosen by hand.
    level_chunk : int
        Components per dynamically scheduled chunk of a level.  Not measured: chosen by hand.
    split_kind : {"auto", "outbox", "accumulate"}
        How a split component's chunks exchange pushes: ``"outbox"`` (per-pair outboxes, added
        one sweep late; fastest where few arcs cross the chunks), ``"accumulate"`` (each
        thread's own running sums, drained by the owner at once; keeps Gauss–Seidel order where
        most arcs cross), or ``"auto"`` (the default): outbox when at most ``outbox_cross`` of
        the component's inside arcs cross its chunks.  Measured in "Threads" (the "auto",
        "accumulators" and "outboxes" columns).  An ablation switch: ``"outbox"`` and
        ``"accumulate"`` force one exchange, as ``benchmarks/bench_cpu_threads.py`` does for those
        columns (and the tests and the warm-up, to reach both kernels).
    outbox_cross : float
        ``split_kind="auto"`` takes outboxes when at most this share of a split component's inside
        arcs cross its chunks, accumulators above; the default lies between the crossing shares
        of the graphs where outboxes won and of those where accumulators won.  Measured:
        "Threads" (the times) and docs/history/benchmarks-lab-notebook.md, "Threads: splitting
        the large components, and when ``bsp`` is better (16 cores)" (the crossing shares).
    thin_arcs : int
        A level with fewer arcs (inside and pulled) than this runs on one thread, in one kernel
        call with its thin neighbours: a deep DAG then costs no call per level.  Not measured:
        chosen by hand.  ``0`` runs every level in parallel (the tests and the warm-up).
    direct_vertices : int
        Cyclic components of at most this many vertices are solved exactly, by Gaussian
        elimination on ``I − A`` restricted to them (:func:`digraph.smx.cpu.scc._direct`, about
        k³/3 operations), instead of being swept until their residual is within budget (at the rate
        of their own short cycles' gain, which may be slow).  32 is the GPU engine's bound too
        (:data:`digraph.smx.cuda.scc_blocks.DK`).  ``0`` sweeps every component.  Measured:
        docs/history/benchmarks-notebook.md, "PageRank: two formulations on the CPU, against scipy
        and igraph PRPACK" (the sweeps) and docs/history/docstring-measurements.md,
        "digraph.dispatch.engines.scc.cpu.DagPushSettings.direct_vertices" (the times).
    relaxation : "auto" or float
        The over-relaxation factor ω of the sweeps (:mod:`digraph.smx.cpu.relaxation`):
        ``"auto"`` (the default) measures each swept component's rate at ω = 1 and tries Young's
        factor for it, kept while its windows converge faster; a number in (0, 2) fixes ω for
        every sweep (``1.0``: plain Gauss–Seidel sweeps, the engine before relaxation).
        Measured: docs/history/benchmarks-notebook.md, "Over-relaxed sweeps".
    pull_degree : float
        A swept component of fewer inside arcs a vertex than this runs Gauss–Seidel sweeps in
        pull form (:func:`digraph.smx.cpu.scc._pulled`: every inside arc read once a sweep, no
        priority) instead of pushes; ``0`` pushes in every component.  Measured:
        docs/history/benchmarks-notebook.md, "Over-relaxed sweeps" (pulled against pushed sweeps
        by the components' arcs per vertex).
    relax_warm, relax_window, relax_min_rate, relax_max : int, int, float, float
        ``"auto"``'s steps: sweeps at ω = 1 before the rate is measured, sweeps a rate is
        measured over, the rate a component must exceed to be over-relaxed (faster ones gain
        little), and the largest ω tried.  Chosen on the corpus's giant components by the arc
        updates counted against other values (the same note).
    """

    split_arcs: int = 100_000
    split_thread_cost: float = 1.3
    split_cross_cost: float = 1.8
    priority_share: float = 0.5
    inner_sweeps: int = 8
    level_chunk: int = 16
    split_kind: str = "auto"
    outbox_cross: float = 0.45
    thin_arcs: int = 20_000
    direct_vertices: int = 32
    relaxation: object = "auto"
    relax_warm: int = 3
    relax_window: int = 2
    relax_min_rate: float = 0.3
    relax_max: float = 1.5
    pull_degree: float = 5.0


DEFAULT = register(DagPushSettings())


def sor_params(settings):
    """The float64 parameters of :mod:`digraph.smx.cpu.relaxation` for ``settings`` (checked)."""
    return R.params(settings.relaxation, settings.relax_warm, settings.relax_window,
                    settings.relax_min_rate, settings.relax_max, "DagPushSettings.relaxation")


def solve(graph, system, *, tol, max_iter, stats, priority="pending", order="vertex",
          pathset=None, settings=None):
    """Solve the linear ``system`` component by component; returns (state, converged).

    ``priority``: ``"pending"`` (soft priority, :attr:`DagPushSettings.priority_share`) or
    ``"none"``.
    ``order``: the vertex order inside a component, ``"vertex"`` (ids) or ``"path"`` (the
    PathSet's storage order: each path's vertices in sequence; needs ``pathset``).
    ``max_iter`` bounds the sweeps of each component (a power iteration's rounds, per
    SCC-vertex); ``stats["rounds"]`` counts the sweeps on the DAG's critical path (a level as
    long as its slowest component; a component solved exactly, ``direct_vertices``, counts one;
    an acyclic one none), so it may exceed ``max_iter`` on a deep DAG of cyclic components.  The
    run is converged when the certified bound is within ``tol``.
    ``settings``: a :class:`DagPushSettings` (default :data:`DEFAULT`).
    """
    settings = current(DEFAULT) if settings is None else settings
    if system.family != "linear":
        raise InvalidParameterError("mode='scc' applies to linear algorithms (PageRank, "
                                    "adsorption, user-defined LinearSystem)")
    if priority not in ("pending", "none"):
        raise InvalidParameterError(f"mode='scc' takes priority 'pending' or 'none', "
                                    f"got {priority!r}")
    if order not in ORDERS:
        raise InvalidParameterError(f"order must be one of {ORDERS}, got {order!r}")
    n = graph.num_vertices
    cond, t_build = condensation_for(graph, order, pathset)
    stats["state"] = "vertex"
    stats["priority"] = priority
    stats["vertex_order"] = order
    stats["time_condensation"] = t_build
    stats.setdefault("arcs_examined", 0)
    gammas = quick_contraction(graph, system)
    linf = gammas[0] >= 1.0  # only the L∞ route bounds the error
    src_scale, dst_scale, has_arc, arc = linear_factors(graph, system)
    has_coef = has_arc or system.dst_scale is not None
    o = cond.order
    if has_coef:
        icoef = np.empty(cond.iout_targets.size, np.float64)
        ecoef = np.empty(cond.ein_sources.size, np.float64)
        K.coefficients(o, cond.iout_offsets, cond.iout_targets, cond.iout_arcs, cond.ein_offsets,
                       cond.ein_sources, cond.ein_arcs, src_scale, arc if has_arc else src_scale,
                       has_arc, dst_scale, icoef, ecoef)
        vscale = np.zeros(1, np.float64)
    else:
        icoef = ecoef = np.zeros(1, np.float64)
        vscale = np.ascontiguousarray(src_scale[o])
    b = np.ascontiguousarray(np.asarray(system.b, np.float64)[o])
    x = np.zeros(n, np.float64)
    r = np.zeros(n, np.float64)
    prio = settings.priority_share if priority == "pending" else 0.0
    T = numba.get_num_threads()
    cnt = np.zeros((numba.config.NUMBA_NUM_THREADS, K.COUNTERS), np.int64)
    d = int(settings.direct_vertices)
    # a thread's scratch: an exact solve's matrix, or a swept component's relaxation state
    work = np.empty((numba.config.NUMBA_NUM_THREADS, max(d * d + d, R.STATE)), np.float64)
    sor = sor_params(settings)
    swept, pull, pull_args = _pulled_arrays(cond, settings, icoef if has_coef else None)
    C = cond.num_components
    comp_sweeps = np.zeros(C, np.int64)
    comp_sent = np.zeros(C, np.int64)
    inside = max(int(cond.comp_arcs.sum()), 1)
    b_left = float(b.sum())
    sum_done = 0.0
    split = splits(cond, T, settings)
    rounds = 0
    layer_rounds = np.zeros(cond.num_levels, np.int64)
    acyclic_sent = np.zeros(cond.num_levels, np.int64)  # arcs pulled by a level's acyclic_pass
    old_chunk = numba.get_parallel_chunksize()
    steps = cond.__dict__.setdefault("_steps", {})  # kept: the same for every run
    key = (split.tobytes() if split.any() else None, int(settings.thin_arcs))
    if key not in steps:
        steps[key] = _steps(cond, split, settings.thin_arcs)
    for kind, L0, L1 in steps[key]:
        driver.safe_point()  # a Ctrl-C, or the deadline, between steps
        c0, c1 = int(cond.level_offsets[L0]), int(cond.level_offsets[L1])
        a, z = int(cond.comp_offsets[c0]), int(cond.comp_offsets[c1])
        budget = pending_budget(tol, sum_done + b_left, n, gammas, system.normalize)
        per_arc = budget / inside
        vmax = budget if linf else 0.0
        args = (cond.comp_offsets, cond.comp_arcs, cond.ein_offsets, cond.ein_sources, ecoef,
                cond.iout_offsets, cond.iout_targets, icoef, has_coef, vscale, b, x, r, per_arc,
                vmax, linf, prio, sor, max_iter, cnt, comp_sweeps, comp_sent, d, work, *pull_args)
        if kind == "serial":
            # without the sweeps' code when no component here needs it (compiled apart)
            # and the pulled sweeps' code only where a component takes them
            (K.serial_pass_pulled if pull[c0:c1].any() else K.serial_pass if swept[c0:c1].any()
             else K.serial_pass_direct)(c0, c1, *args)
            # levels one after another, each as long as its slowest component
            layer_rounds[L0:L1] = np.maximum.reduceat(comp_sweeps[c0:c1],
                                                      cond.level_offsets[L0:L1] - c0)
        else:
            pos, pulled, cyclic = _level_parts(cond, L0)
            if pos.size:  # one-vertex components: a pull each, no component bookkeeping
                pick(K.acyclic_pass, K.acyclic_pass_serial, pos.size)(
                    pos, cond.ein_offsets, cond.ein_sources, ecoef, has_coef, vscale, b, x, r)
                cnt[0, K.PULLS] += pulled
                for k in (K.RAN, K.VERTEX_PUSHES, K.ONCE):
                    cnt[0, k] += pos.size
                acyclic_sent[L0] = pulled
            small = cyclic[~split[cyclic]]
            if small.size:
                numba.set_parallel_chunksize(settings.level_chunk)
                try:
                    (K.level_pass_pulled if pull[small].any() else K.level_pass)(small, *args)
                finally:
                    numba.set_parallel_chunksize(old_chunk)
            # the small components side by side, then each split one with every thread
            layer_rounds[L0] = int(comp_sweeps[small].max(initial=0))
            for c in cyclic[split[cyclic]]:
                comp_sweeps[c], comp_sent[c] = split_component(
                    c, cond, T, ecoef, icoef, has_coef, vscale, b, x, r,
                    per_arc * cond.comp_arcs[c], vmax, linf, prio, sor, max_iter, cnt, settings)
                layer_rounds[L0] += comp_sweeps[c]
        rounds += int(layer_rounds[L0:L1].sum())
        sum_done += float(x[a:z].sum())
        b_left -= float(b[a:z].sum())
    out_of_rounds = bool(cnt[:, K.CAPPED].any())  # a component stopped by max_iter
    stats["rounds"] += rounds
    layer_arcs = (np.add.reduceat(comp_sent, cond.level_offsets[:-1]) + acyclic_sent if C
                  else np.zeros(0, np.int64))
    tot = cnt.sum(axis=0)
    stats["arc_updates"] += int(tot[K.PULLS] + tot[K.PUSHES])
    stats["vertex_updates"] += int(tot[K.VERTEX_PUSHES])
    stats["arcs_examined"] += int(tot[K.PULLS] + tot[K.PUSHES])
    stats["sweeps"] = int(tot[K.SWEEPS])
    stats["scc_vertices"] = cond.num_components
    stats["scc_ran"] = int(tot[K.RAN])
    stats["scc_ran_once"] = int(tot[K.ONCE])
    stats["scc_split"] = int(split.sum())
    stats["scc_direct"] = int(tot[K.DIRECT])
    stats["layers"] = cond.num_levels
    stats["layer_rounds"] = layer_rounds.tolist()
    stats["layer_arc_updates"] = layer_arcs.tolist()
    xo = np.empty(n, np.float64)
    xo[o] = x
    rvec = np.empty(n, np.float64)
    bound, r1, floor = certified_bound(graph, system, xo, gammas, rvec)
    stats["error_bound"] = float(bound)
    stats["residual_l1"] = float(r1)
    # the budget's lower bound of Σx or rounding falling short, finish from the exact residual
    end = driver.ending(stats, (bound, r1, floor), tol, capped=out_of_rounds,
                        then=find("scc", "cpu").after_stall,
                        why="the sweeps left more residual than the budget (a lower bound of Σx, "
                            "or rounding, fell short)")
    if end != "hand-over":
        return xo, end == "converged"
    return finish_linear(graph, system, tol, max_iter, stats, x0=xo, delta0=rvec)


def _pulled_arrays(cond, settings, icoef):
    """(the components swept (arcs inside, more than ``settings.direct_vertices`` vertices), those
    that sweep in pull form, ``(iin_offsets, iin_sources, iin_coef, pullp)`` of the kernels'
    pulled sweeps): the swept ones of fewer than ``settings.pull_degree`` inside arcs a vertex
    (both masks kept on the condensation); the inside arcs by target
    (:func:`~digraph.paths.condensation.inside_in_arcs`, built only where one does), their
    coefficients (``icoef`` permuted; none without arc factors) and ``pullp``: ``pull_degree``,
    then one float a position (the sums of :func:`digraph.smx.cpu.scc._pulled`'s bound)."""
    deg = float(settings.pull_degree)
    masks = cond.__dict__.setdefault("_pull_masks", {})  # kept: the same for every run
    key = (deg, int(settings.direct_vertices))
    if key not in masks:
        sizes = np.diff(cond.comp_offsets)
        swept = (cond.comp_arcs > 0) & (sizes > settings.direct_vertices)
        masks[key] = swept, swept & (cond.comp_arcs < deg * sizes)
    swept, pull = masks[key]
    if not pull.any():
        return swept, pull, (np.zeros(1, np.int64), np.zeros(1, cond.iout_targets.dtype),
                             np.zeros(1), np.zeros(1))
    off, src, perm = inside_in_arcs(cond)
    coef = np.ascontiguousarray(icoef[perm]) if icoef is not None else np.zeros(1)
    pullp = np.empty(cond.iout_offsets.size, np.float64)  # the threshold, then _pulled's scratch
    pullp[0] = deg
    return swept, pull, (off, src, coef, pullp)


def _level_parts(cond, L):
    """(positions of level ``L``'s one-vertex components, the arcs they pull, its other
    components), kept on the condensation: a level step reads them without a pass over its
    components."""
    parts = cond.__dict__.setdefault("_level_parts", {})
    if L not in parts:
        comps = np.arange(cond.level_offsets[L], cond.level_offsets[L + 1], dtype=np.int64)
        one = cond.comp_arcs[comps] == 0
        pos = cond.comp_offsets[comps[one]]
        pulled = int((cond.ein_offsets[pos + 1] - cond.ein_offsets[pos]).sum())
        parts[L] = (pos, pulled, comps[~one])
    return parts[L]


def _steps(cond, split, thin_arcs):
    """(kind, first level, end level) in order: a run of consecutive *thin* levels (fewer than
    ``thin_arcs`` arcs in all, none split) is one ``"serial"`` step on one thread; every other
    level is a ``"level"`` step, its components in parallel."""
    L = cond.num_levels
    if L == 0:
        return []
    lo = cond.level_offsets
    work = cond.comp_arcs + np.diff(cond.ein_offsets[cond.comp_offsets])
    level_work = np.add.reduceat(work, lo[:-1])
    level_split = np.add.reduceat(split.astype(np.int64), lo[:-1]) > 0
    thin = (level_work < thin_arcs) & ~level_split
    steps = []
    L0 = 0
    while L0 < L:
        L1 = L0 + 1
        if thin[L0]:
            while L1 < L and thin[L1]:
                L1 += 1
            steps.append(("serial", L0, L1))
        else:
            steps.append(("level", L0, L1))
        L0 = L1
    return steps
