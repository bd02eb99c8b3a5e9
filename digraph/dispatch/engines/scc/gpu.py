"""The SCC engine on one GPU (``mode="scc"`` with a CUDA device): linear systems (PageRank,
adsorption, a ``LinearSystem``) solved component by component of the DAG sketch, the GPU twin of
the CPU's :mod:`digraph.dispatch.engines.scc.cpu`.

DiGraph's Observation 2 at vertex granularity: a strongly connected component runs once every
component it depends on is final, pulls its inputs from them once, converges on its own and
never runs again; an acyclic vertex is exact after one evaluation.  On the GPU
(:mod:`digraph.smx.cuda.scc`, schedule in :mod:`digraph.paths.scc_schedule`):

* the light components (all but a few on web graphs) run in one persistent kernel per phase, a
  block per component taken from a device-side ready queue: a component starts as soon as its
  last predecessor is done, with no launch or synchronisation per DAG level (a deep DAG costs
  nothing per level), and each sweeps in shared memory, Anderson-accelerated
  (:mod:`digraph.smx.cuda.scc_sweeps`; the CPU engine's soft priority on the L∞ route);
* the heavy ones (the giant component) run in rounds over the whole GPU, restricted to their
  vertices, all the rounds of a phase's group in one launch with a grid barrier between rounds
  (the device decides the threshold and the stop), a vertex of many out-arcs pushed by a whole
  block and the others by a few threads each; a small group, or one without hubs inside, runs
  Anderson-accelerated Jacobi rounds instead (:mod:`digraph.smx.cuda.scc_heavy_anderson`);
* the error budget is the CPU engine's: the L1 budget of
  :func:`~digraph.dispatch.convergence.pending_budget` shared by inside arcs, with ``Σx``
  bounded below by the finished components' sum plus the rest's ``Σb``; the result is certified
  on the residual recomputed from the state, and a run the budget did not carry (rounding) is
  finished by ``bsp`` from the exact residual.

Counters as on the CPU (``scc_vertices``, ``scc_ran``, ``scc_ran_once``, ``layers``,
``layer_rounds``, ``sweeps``, ``arc_updates``: arcs pulled once plus arcs pushed), and
``scc_phases`` / ``scc_heavy`` / ``heavy_rounds`` / ``scc_direct`` / ``scc_phase_ms`` for the
schedule.
"""

import time
from dataclasses import dataclass

import numpy as np

from ...settings import current, register
from ..power.gpu_settings import POWER_DEFAULT
from ....errors import InvalidParameterError
from ....paths.condensation import condensation_for
from ....paths.scc_schedule import scc_schedule
from ... import driver
from ...convergence import pending_budget
from ..power.gpu_work import Work
from .gpu_layout import unit_coefficients, device_layout, heavy_gathers
from .gpu_units import CTL, TRACE_ROUNDS, Units, record
from .gpu_work import kept_work, reset, work_arrays, work_bytes

__all__ = ["GpuSccSettings", "DEFAULT", "solve", "TRACE_ROUNDS", "CTL"]


@dataclass(frozen=True)
class GpuSccSettings:
    """How the GPU SCC engine schedules its components (``solve(..., settings=)``).

    Measured: docs/history/benchmarks-notebook.md, "PageRank by components on one GPU" and the
    sections below it (PageRank, tol 1e-8).

    Attributes
    ----------
    heavy_arcs : int
        Components with at least this many arcs inside run in rounds over the whole GPU; below,
        one block each from the queue (a component of more than
        :data:`digraph.smx.cuda.scc_blocks.SH` vertices is heavy whatever its arcs).
        Measured: docs/history/benchmarks-notebook.md, "PageRank by components on one GPU".
    priority_share : float
        The soft priority of
        :attr:`digraph.dispatch.engines.scc.cpu.DagPushSettings.priority_share` (L1 route); 0
        pushes every vertex above its per-arc budget.  Measured:
        docs/history/benchmarks-notebook.md, "PageRank by components on one GPU".
    rounds_per_check : int
        Heavy rounds queued between two reads of their done flag (the only synchronisation).
        Measured: docs/history/docstring-measurements.md,
        "digraph.dispatch.engines.scc.gpu.GpuSccSettings.rounds_per_check".
    blocks_per_sm : int
        Persistent blocks per multiprocessor of the queue kernel
        (:data:`digraph.smx.cuda.scc_blocks.QB` threads each).  They must all be resident at
        once (a block waits for components that others queue), so fewer run when the compiled
        kernel's registers or shared memory allow fewer (:func:`~.gpu_grid.resident`; the
        kernel is compiled to fit :data:`digraph.smx.cuda.scc.LIGHT_BLOCKS_PER_SM`).  A wide DAG
        is bound by the blocks, a chain of swept components is not.  Measured:
        docs/history/benchmarks-notebook.md, "The light phase profiled: one block a
        multiprocessor, and hubs walked by one thread".
    heavy_blocks_per_sm : int
        Blocks of :data:`digraph.smx.cuda.scc_heavy.TB` threads per multiprocessor for a heavy
        round (fewer when the group has fewer vertices; :data:`digraph.smx.cuda.scc_blocks.G`
        threads a vertex, a grid-stride loop over the rest; at most
        :data:`digraph.smx.cuda.scc_heavy.HEAVY_BLOCKS_PER_SM` with ``heavy_one_launch``).
        Measured: docs/history/benchmarks-notebook.md, "The heavy rounds profiled".
    heavy_one_launch : bool
        A heavy group's rounds in one launch with a grid barrier between rounds
        (:func:`digraph.smx.cuda.scc_heavy.scc_heavy_rounds`), instead of a launch a round queued
        by the host (:func:`digraph.smx.cuda.scc_heavy.scc_round`): a launch from Python costs
        about as much as a small group's round.  Measured: docs/history/benchmarks-notebook.md,
        "The heavy rounds profiled".
    light_anderson : int
        Memory of the Anderson acceleration of a swept light component's sweeps
        (:func:`digraph.smx.cuda.scc_sweeps._anderson_sweeps`: every vertex pushes a mixed step
        each sweep; at most :data:`digraph.smx.cuda.scc_sweeps.AM`); 0: the soft priority's
        sweeps (:attr:`priority_share`).  The L∞ route always sweeps with the priority.
    heavy_anderson : int
        Memory of the Anderson acceleration of the heavy rounds
        (:func:`digraph.smx.cuda.scc_heavy_anderson.scc_heavy_anderson`: Jacobi rounds, every
        vertex gathering the mixed steps of its in-arcs, two grid barriers a round; at most
        :data:`digraph.smx.cuda.scc_sweeps.AM`); 0: the plain rounds with the soft priority.
        With ``heavy_one_launch`` on the L1 route only, and not with ``trace_heavy`` (which
        profiles the plain rounds).  ``stats["scc_heavy_anderson"]``: the memory each heavy
        group ran with.
    heavy_anderson_arcs, heavy_anderson_in : int
        A group runs the Anderson rounds when it has at most ``heavy_anderson_arcs`` arcs
        inside, or when none of its vertices has more than ``heavy_anderson_in`` in-arcs inside.
        Both rounds cost about their arcs, but the plain ones push only the vertices above the
        soft priority's threshold, which on a web graph's hub-rich groups is a small share, so
        there the Anderson rounds (every arc every round) cost more than their fewer rounds
        save.  The limits are fitted to the groups of docs/history/benchmarks-notebook.md,
        "Anderson in the heavy rounds" (tol 1e-8), taking every gain and no loss measured there.
    trace_light : bool
        A profile of the light phases: ``stats["scc_light_trace"]``, an int64 array with a row of
        :data:`digraph.smx.cuda.scc.TRACE` entries per component (see
        :func:`digraph.smx.cuda.scc.scc_light_phase`; ``benchmarks/profile_gpu_scc_light.py``
        reads it).  Off by default: it costs a device array of 64 bytes a component.
    trace_heavy : bool
        A profile of the heavy rounds run in one launch: ``stats["scc_heavy_trace"]``, for each
        heavy group an int64 array of rows (GPU nanosecond timer when the round's pushes were
        done, when the round was done, arcs pushed so far): the start, then a row each round
        (at most :data:`TRACE_ROUNDS` rounds).
    """

    heavy_arcs: int = 16384
    priority_share: float = 0.5
    rounds_per_check: int = 8
    blocks_per_sm: int = 4
    heavy_blocks_per_sm: int = 8
    heavy_one_launch: bool = True
    light_anderson: int = 2
    heavy_anderson: int = 2
    heavy_anderson_arcs: int = 1 << 17
    heavy_anderson_in: int = 1 << 10
    trace_light: bool = False
    trace_heavy: bool = False


DEFAULT = register(GpuSccSettings())


def check_settings(settings, system):
    """Refuse a non-linear ``system`` and settings out of range."""
    from ....smx.cuda.scc_sweeps import AM
    if system.family != "linear":
        raise InvalidParameterError("mode='scc' applies to linear algorithms (PageRank, "
                                    "adsorption, "
                                    "user-defined LinearSystem)")
    if min(settings.heavy_arcs, settings.rounds_per_check, settings.blocks_per_sm,
           settings.heavy_blocks_per_sm) < 1 or not settings.priority_share >= 0 or \
            not (0 <= settings.light_anderson <= AM and 0 <= settings.heavy_anderson <= AM):
        raise InvalidParameterError("GpuSccSettings: heavy_arcs, rounds_per_check, blocks_per_sm "
                                    "and heavy_blocks_per_sm must be >= 1, priority_share >= 0, "
                                    f"light_anderson and heavy_anderson in 0..{AM}")


def run_arrays(be, graph, system, cond, sch, d, settings, key):
    """(the run's arrays on ``be``'s GPU, reused, kept) for the schedule ``sch`` laid out as
    ``d``: the ones a last run kept for ``key`` (reset), else new
    (:mod:`~.gpu_work`), with the Anderson rounds' arrays; and the
    phases whose heavy group runs Anderson rounds."""
    from ....smx.cuda import scc_blocks
    from ....smx.cuda import scc_heavy_anderson as HA
    from ..push.gpu_linear import Linear
    xp = be.xp
    n = graph.num_vertices
    P = sch.num_phases
    order = d["order"]

    def make():  # the run's arrays (scc_work: kept for the next run where they can be)
        L = Linear(be, graph, system)
        has_coef, icoef, ecoef = unit_coefficients(be, graph, system, cond, L.has)
        ctl0 = np.zeros(2 * max(P, 1), np.int32)
        ctl0[1::2][:P] = sch.first_count
        w = {"L": L, "has_coef": has_coef, "icoef": icoef, "ecoef": ecoef,
             "vscale": L.src_scale[order] if not has_coef else icoef, "b": L.b[order],
             "x": xp.zeros(n, np.float64), "r": xp.zeros(n, np.float64),
             "queue0": d["queue0"], "queue": d["queue0"].copy(),
             "pending0": d["pending0"], "pending": d["pending0"].copy(),
             "ctl0": be.put(ctl0), "ctl": be.put(ctl0),
             "ctlh": xp.zeros(CTL * max(P, 1), np.float64),  # a heavy group's control words
             "sums": xp.zeros(HA.SUMS * max(P, 1), np.float64),  # and Anderson's sums
             "cnt": xp.zeros(scc_blocks.COUNTERS, np.int64), "bar": xp.zeros(max(P, 1), np.int64),
             "comp_sweeps": xp.zeros(max(cond.num_components, 1), np.int64),
             "out": xp.empty(n, np.float64), "pos": {}}
        w["unit_b"] = (be.get(xp.bincount(d["unit"], weights=w["b"], minlength=d["units"]))
                       if n else np.zeros(2))
        return be.keep_all(Work(w))  # a dict the backend can hold weakly (retain)
    POWER = current(POWER_DEFAULT)
    w, reused, kept = kept_work(be, graph, system, key, work_bytes(n, cond.num_components),
                                POWER.keep_work_bytes, make)
    if reused:
        reset(w, xp)
    linf = w["L"].gammas[0] >= 1.0
    mixed = (settings.heavy_anderson > 0 and settings.heavy_one_launch and not linf
             and not settings.trace_heavy)
    sizes = np.diff(sch.heavy_offsets)
    anderson = [k for k in range(P) if mixed and sizes[k] > 0 and (
        sch.heavy_arcs[k] <= settings.heavy_anderson_arcs
        or d["heavy_in_max"][k] <= settings.heavy_anderson_in)]  # groups of Anderson rounds
    if anderson:
        heavy_gathers(be, d, cond, sch, anderson)  # kept in the layout
        size = int(sizes[anderson].max())
        if "hist" not in w or w["hist"].shape[1] < size:  # kept with the work
            w["dpos"] = xp.zeros(n, np.float64)  # the steps
            w["hist"] = xp.zeros((5, size), np.float64)
    return w, reused, kept, anderson


def solve(be, graph, system, *, tol, max_iter, stats, settings=None):
    """Solve the linear ``system`` on the GPU of backend ``be`` component by component; returns
    (the state on the device in the graph's vertex order, converged)."""
    from ....smx.cuda import scc as K
    from ....smx.cuda import scc_blocks
    settings = current(DEFAULT) if settings is None else settings
    check_settings(settings, system)
    xp = be.xp
    t_last = time.perf_counter()
    n = graph.num_vertices
    cond, t_build = condensation_for(graph, "vertex")
    sch = scc_schedule(cond, settings.heavy_arcs, scc_blocks.SH)
    d = device_layout(be, graph, cond, sch, settings.heavy_arcs, scc_blocks.SH)
    P = sch.num_phases
    key = (be.device_id, be.sim, int(settings.heavy_arcs), int(scc_blocks.SH))
    w, reused, kept, anderson = run_arrays(be, graph, system, cond, sch, d, settings, key)
    stats["gpu_work_kept"] = reused
    L = w["L"]
    gammas = L.gammas
    linf = gammas[0] >= 1.0
    x = w["x"]
    stats["state"] = "vertex"
    stats["priority"] = "pending" if settings.priority_share > 0 else "none"
    stats["time_condensation"] = t_build
    prio = 0.0 if linf else float(settings.priority_share)
    units = Units(be, settings, cond, sch, d, w, anderson, linf, prio, max_iter)
    inside = max(int(cond.comp_arcs.sum()), 1)
    unit_b = w["unit_b"]
    be.sync()
    t_now = time.perf_counter()
    phase_ms = [round((t_now - t_last) * 1e3, 3)]  # the set-up
    t_last = t_now
    busy = False  # busy: the unit before launched work
    for k in range(P):
        for heavy in (0, 1):
            u = 2 * k + heavy
            work = units.has(k, heavy)
            if u:
                if busy:
                    be.sync()  # the time of the unit before
                t_now = time.perf_counter()
                phase_ms.append(round((t_now - t_last) * 1e3, 3))
                t_last = t_now
            busy = work
            if not work:
                continue
            # Σx of the finished units bounds the budget below (a reduction and a copy: only
            # before a unit that runs)
            sum_done = float(be.get(x.sum())) if (system.normalize and u) else 0.0
            budget = pending_budget(tol, sum_done + float(unit_b[u:].sum()), n, gammas,
                                    system.normalize)
            vmax = budget if linf else 0.0
            (units.heavy if heavy else units.light)(k, budget / inside, vmax)
    be.sync()
    t_now = time.perf_counter()
    phase_ms.append(round((t_now - t_last) * 1e3, 3))
    t_last = t_now
    c, sweeps, heavy_rounds, capped = units.outcome()
    record(stats, cond, sch, c, sweeps, heavy_rounds, units.heavy_mem)
    out = w["out"]
    # a gather: faster than CuPy's scatter out[order] = x (docs/history/docstring-measurements.md)
    xp.take(x, d["inv"], out=out)
    bound, r1, floor = L.certify(out)
    if kept:  # the next run's launches stay prepared
        be.retain(work_arrays(w) + [a for t in w["pos"].values() for a in t] +
                  [a for a in d.values() if hasattr(a, "__cuda_array_interface__")], "scc",
                  holder=w)
    else:
        be.release("scc")
    phase_ms.append(round((time.perf_counter() - t_last) * 1e3, 3))  # counters and certificate
    stats["error_bound"] = float(bound)
    stats["residual_l1"] = float(r1)
    stats["scc_phase_ms"] = phase_ms
    if settings.trace_heavy:
        stats["scc_heavy_trace"] = [be.get(t).reshape(-1, 3)[:r + 1]
                                    for t, r in zip(units.heavy_trace, heavy_rounds)]
    if settings.trace_light:
        stats["scc_light_trace"] = be.get(units.trace).reshape(-1, K.TRACE)[:cond.num_components]
    return finish(be, graph, system, tol, max_iter, stats, out, L, bound, r1, floor, capped)


def finish(be, graph, system, tol, max_iter, stats, out, L, bound, r1, floor, capped):
    """(state, converged) of a run whose answer ``out`` has the certificate (bound, r1, floor):
    certified, capped, or finished by ``bsp`` from the exact residual."""
    from ..push.gpu_linear import solve_linear
    from ..registry import find
    then = find("scc", "gpu").after_stall
    end = driver.ending(stats, (bound, r1, floor), tol, capped=capped, then=then,
                        why="the components left more residual than the budget (a lower bound "
                            "of Σx, or rounding, fell short)")
    if end != "hand-over":
        return out, end == "converged"
    return solve_linear(be, graph, system, tol, max_iter, stats, then == "bsp",
                        state=(out, L.r.copy(), L))


def run_on(be, graph, system, *, mode, tol, max_iter, stats, options):
    """:func:`solve` with the ``scc_settings`` of :func:`digraph.dispatch.engines.one_gpu.solve`."""
    return solve(be, graph, system, tol=tol, max_iter=max_iter, stats=stats,
                 settings=options.get("scc_settings"))
