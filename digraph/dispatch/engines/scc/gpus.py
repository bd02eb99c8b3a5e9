"""The DAG dispatcher over several GPUs (``mode="scc"`` with ``device="cuda:0,1,..."``): the
GPU SCC engine (:mod:`digraph.dispatch.engines.scc.gpu`) with the components of each unit dealt
to the GPUs (:mod:`digraph.paths.scc_deal`).

The units run in the one-GPU order, ``P0, G0, P1, G1, …``.  In a unit every GPU runs what was
dealt to it with the one-GPU launches (:class:`~.gpu_units.Units`
over a restricted schedule): its light pieces from its own ready queue, its heavy components in
rounds over that GPU.  At the unit's end the GPUs wait for each other, and each sends each other
GPU the values of its vertices finished in the unit that the other's components read
(:func:`~digraph.paths.scc_deal.crossings`), gathered, copied peer to peer and scattered into
that GPU's ``x``: a value crosses once to each GPU that reads it (``bytes_between_gpus``).

Every GPU holds the whole condensation (its components read in-arcs from any position) and a
state ``x`` of every vertex, of which its own components' entries and the values it received are
current.  The error budget is the one-GPU engine's, per arc, ``Σx`` bounded below by the
finished units' sums over each GPU's own vertices.  At the end the owners' entries are gathered
on the first GPU and certified there on the residual of the whole system; a run the budget did
not carry is finished there by ``bsp`` from the exact residual.

A heavy component runs on one GPU, except a *giant* (:func:`~digraph.paths.scc_deal.deal`: it costs
more than ``1/k`` of its unit and has at least two GPUs' worth of arcs,
:attr:`~digraph.dispatch.runtime.cuda.shard_settings.MultiGpuSettings.min_arcs_per_gpu` each), which
runs sharded as the sharded engine runs a graph: its inputs from other components pulled once on
GPU 0 make the constant term of the component's own system (the arcs inside, their coefficients),
solved by :func:`digraph.dispatch.engines.push.gpus.solve` (``bsp``) over the GPUs to the
component's share of the budget, and its values written back on GPU 0 (``stats["scc_giants"]``:
arcs, rounds, GPUs of each).  The component's system is built once and kept on the condensation.
Under the CUDA simulator the same device may be named several times (the GPUs' arrays are separate,
the exchange a host copy).
"""

import time

import numpy as np

from ...settings import current
from ....paths.condensation import condensation_for
from ....paths.scc_deal import crossings, deal, restricted
from ....paths.scc_schedule import scc_schedule
from ...convergence import pending_budget
from . import gpu as one_gpu_scc
from .gpu import check_settings, finish, run_arrays
from .gpu_layout import device_layout
from .gpu_units import Units, record
from .gpu_work import work_arrays
from ...runtime.cuda.backend import backend, gpu_name

__all__ = ["solve_dag", "prepare"]


def solve_dag(graph, system, *, devices, tol, max_iter, stats, settings=None):
    """Solve the linear ``system`` component by component over the GPUs ``devices``
    (``["cuda:0", "cuda:1", ...]``); returns (the state on the first GPU in the graph's vertex
    order, converged).  ``settings``: a
    :class:`~.gpu.GpuSccSettings` (default its ``DEFAULT``)."""
    from ....smx.cuda import scc_blocks
    settings = current(one_gpu_scc.DEFAULT) if settings is None else settings
    check_settings(settings, system)
    t_last = time.perf_counter()
    n = graph.num_vertices
    k = len(devices)
    cond, t_build = condensation_for(graph, "vertex")
    sch = scc_schedule(cond, settings.heavy_arcs, scc_blocks.SH)
    from ...runtime.cuda import shard_settings
    per = current(shard_settings.DEFAULT).min_arcs_per_gpu
    owner, giant = deal(cond, sch, k, giant_arcs=2 * per)
    cross = _crossings(cond, sch, owner, k)
    P = sch.num_phases
    gpus = []
    for g, dev in enumerate(devices):
        be = backend(dev)
        be.stats = stats
        with be.current():
            sg = restricted(cond, sch, owner, g, giant)
            tag = ("deal", k, g)
            d = device_layout(be, graph, cond, sg, settings.heavy_arcs, scc_blocks.SH, tag)
            key = (be.device_id, be.sim, int(settings.heavy_arcs), int(scc_blocks.SH)) + tag
            w, reused, kept, anderson = run_arrays(be, graph, system, cond, sg, d, settings, key)
            own = np.repeat(owner == g, np.diff(cond.comp_offsets))
            gpus.append({"be": be, "sch": sg, "d": d, "w": w, "kept": kept, "reused": reused,
                         "anderson": anderson, "own": own,
                         "own_dev": be.put(own.astype(np.float64)) if system.normalize else None})
    first = gpus[0]
    L = first["w"]["L"]
    gammas = L.gammas
    linf = gammas[0] >= 1.0
    prio = 0.0 if linf else float(settings.priority_share)
    for G in gpus:
        G["units"] = Units(G["be"], settings, cond, G["sch"], G["d"], G["w"], G["anderson"],
                            linf, prio, max_iter)
    stats["gpu_work_kept"] = all(G["reused"] for G in gpus)
    stats["state"] = "vertex"
    stats["priority"] = "pending" if settings.priority_share > 0 else "none"
    stats["time_condensation"] = t_build
    stats["gpu"] = "CUDA simulator" if first["be"].sim else gpu_name(first["be"])
    stats["gpus"] = k
    stats.setdefault("gpus_named", k)  # digraph.run sets it: the GPUs named, not only those used
    stats["bytes_between_gpus"] = 0
    stats["gpu_components"] = np.bincount(owner, minlength=k).tolist()
    stats["gpu_arcs"] = np.bincount(owner, weights=cond.comp_arcs, minlength=k).astype(
        np.int64).tolist()
    inside = max(int(cond.comp_arcs.sum()), 1)
    unit_b = first["w"]["unit_b"]  # Σb by unit over every vertex (each GPU holds all of b)
    _sync(gpus)
    t_now = time.perf_counter()
    phase_ms = [round((t_now - t_last) * 1e3, 3)]  # the set-up
    t_last = t_now
    giants = {}  # phase: its giant components
    for c in np.flatnonzero(giant):
        giants.setdefault(int(sch.phase[c]), []).append(int(c))
    stats["scc_giants"] = []
    giant_sweeps = {}
    for u in range(2 * P):
        kph, heavy = divmod(u, 2)
        big = giants.get(kph, []) if heavy else []
        if not big and not any(G["units"].has(kph, heavy) for G in gpus):
            continue
        sum_done = (sum(_own_sum(G) for G in gpus) if (system.normalize and u) else 0.0)
        budget = pending_budget(tol, sum_done + float(unit_b[u:].sum()), n, gammas,
                                system.normalize)
        vmax = budget if linf else 0.0
        for G in gpus:
            if G["units"].has(kph, heavy):
                with G["be"].current():
                    (G["units"].heavy if heavy else G["units"].light)(kph, budget / inside, vmax)
        for c in big:  # while the dealt groups run
            giant_sweeps[c] = _giant(gpus, devices, cond, c, budget / inside, max_iter, stats)
        _sync(gpus)
        _send(gpus, cross.get(u, ()), stats)
        t_now = time.perf_counter()
        phase_ms.append(round((t_now - t_last) * 1e3, 3))
        t_last = t_now
    c, sweeps, heavy_rounds, capped, mem = 0, 0, [], False, []
    for G in gpus:
        with G["be"].current():
            cg, sg, hr, cap = G["units"].outcome()
        c, sweeps, capped = c + cg, sweeps + sg, capped or cap
        heavy_rounds += hr
        mem += G["units"].heavy_mem
    for comp, ran in giant_sweeps.items():
        sweeps[comp] = ran
    record(stats, cond, sch, c, sweeps, heavy_rounds, mem)
    x = np.zeros(n, np.float64)  # each GPU's own entries, gathered on the first
    for G in gpus:
        with G["be"].current():
            xg = G["be"].get(G["w"]["x"])
        x[G["own"]] = xg[G["own"]]
        if G is not first:
            stats["bytes_between_gpus"] += int(G["own"].sum()) * 8
    be0 = first["be"]
    with be0.current():
        out = first["w"]["out"]
        be0.xp.take(be0.put(x), first["d"]["inv"], out=out)
        bound, r1, floor = L.certify(out)
    for g, G in enumerate(gpus):
        be = G["be"]
        if G["kept"]:  # the next run's launches stay prepared
            w = G["w"]
            be.retain(work_arrays(w) + [a for t in w["pos"].values() for a in t] +
                      [a for a in G["d"].values() if hasattr(a, "__cuda_array_interface__")],
                      f"scc-deal:{g}", holder=w)
        else:
            be.release(f"scc-deal:{g}")
    phase_ms.append(round((time.perf_counter() - t_last) * 1e3, 3))  # counters and certificate
    stats["error_bound"] = float(bound)
    stats["residual_l1"] = float(r1)
    stats["scc_phase_ms"] = phase_ms
    with be0.current():
        return finish(be0, graph, system, tol, max_iter, stats, out, L, bound, r1, floor, capped)


def _giant(gpus, devices, cond, c, per_arc, max_iter, stats):
    """Component ``c`` solved sharded over ``devices``: its inputs pulled on GPU 0 (whose ``x``
    holds them) make ``b`` of its own system, which
    :func:`~digraph.dispatch.engines.push.gpus.solve` runs (``bsp``) to an error of at most the
    component's share of the budget; the values land in GPU 0's ``x``.  Returns the rounds it
    took."""
    from ....algorithms.base import LinearSystem
    from ....result import RunStats
    from ....smx.cuda import scc_heavy as H
    from ..push import gpus as multi_gpu
    G = gpus[0]
    be, w, d = G["be"], G["w"], G["d"]
    p0, p1 = int(cond.comp_offsets[c]), int(cond.comp_offsets[c + 1])
    arcs = int(cond.comp_arcs[c])
    sub = _component_graph(be, w, cond, c)
    with be.current():
        pos = be.xp.arange(p0, p1, dtype=np.int32)
        be.launch(H.scc_pull_list, be.grid(p1 - p0), be.block, pos, d["ein_off"], d["ein_src"],
                  w["ecoef"], w["has_coef"], w["vscale"], w["b"], w["x"], w["r"])
        b = be.get(w["r"][p0:p1])
    system = LinearSystem(b=b, arc_scale=sub.weights)
    # the whole system's contraction factors bound the component's (its columns and rows are
    # parts of the whole's): its L1 bound r1 / (1 − γ1) at share / (1 − γ1) leaves r1 ≤ share
    # (a bound of the share itself asked r1 ≤ (1 − γ1) × share, and more rounds).  Measured:
    # docs/history/benchmarks-notebook.md, "The DAG dispatcher over several GPUs"
    gammas = w["L"].gammas
    system.error_gammas = gammas
    share = per_arc * arcs
    tol = share / (1.0 - gammas[0]) if gammas[0] < 1.0 else share
    sub_stats = RunStats.new()
    xc, _ = multi_gpu.solve(sub, system, devices=list(devices), mode="bsp",
                            tol=max(tol, 1e-300), max_iter=max_iter, stats=sub_stats,
                            min_arcs_per_gpu=0)
    for H_ in gpus:
        H_["be"].stats = stats  # the sharded engine's shards counted into its own stats
    with be.current():
        w["x"][p0:p1] = be.put(np.asarray(xc, np.float64))
    stats["arc_updates"] += int(sub_stats["arc_updates"])
    stats["bytes_between_gpus"] += int(sub_stats.get("bytes_between_gpus", 0))
    ran = int(sub_stats["rounds"])
    stats["scc_giants"].append({"component": int(c), "arcs": arcs, "rounds": ran,
                                "gpus": int(sub_stats.get("gpus", 1)),
                                "error_bound": float(sub_stats.get("error_bound", np.inf))})
    return ran


def _component_graph(be, w, cond, c):
    """Component ``c``'s arcs inside as a graph of its own (positions from 0), each arc weighted
    by its coefficient (kept on the condensation per component and coefficients)."""
    from ....graph import Graph
    kept = cond.__dict__.setdefault("_giant_graphs", {})
    key = (int(c), bool(w["has_coef"]))
    coef = w["icoef"] if w["has_coef"] else w["vscale"]
    if key in kept and kept[key][0] is coef:
        return kept[key][1]
    p0, p1 = int(cond.comp_offsets[c]), int(cond.comp_offsets[c + 1])
    a0, a1 = int(cond.iout_offsets[p0]), int(cond.iout_offsets[p1])
    src = np.repeat(np.arange(p1 - p0, dtype=np.int64), np.diff(cond.iout_offsets[p0:p1 + 1]))
    dst = cond.iout_targets[a0:a1].astype(np.int64) - p0
    with be.current():
        weight = (be.get(coef[a0:a1]) if w["has_coef"]
                  else be.get(coef[p0:p1])[src])  # by source: vscale
    sub = Graph.from_arrays(src, dst, np.asarray(weight, np.float64), num_vertices=p1 - p0)
    kept.clear()  # one component's graph at a time: they can be large
    kept[key] = (coef, sub)
    return sub


def _own_sum(G):
    """``Σx`` over this GPU's own positions (the finished ones hold their values, the rest 0)."""
    be = G["be"]
    with be.current():
        return float(be.get(be.xp.dot(G["w"]["x"], G["own_dev"])))


def _sync(gpus):
    for G in gpus:
        with G["be"].current():
            G["be"].sync()


def _crossings(cond, sch, owner, k):
    """:func:`~digraph.paths.scc_deal.crossings` grouped by unit:
    ``{unit: [(g, h, positions)]}``."""
    kept = cond.__dict__.setdefault("_gpu_crossings", {})
    key = (id(owner), int(k))
    if key not in kept or kept[key][0] is not owner:
        out = {}
        for (u, g, h), pos in sorted(crossings(cond, sch, owner).items()):
            out.setdefault(u, []).append((g, h, pos))
        kept[key] = (owner, out)
    return kept[key][1]


def _send(gpus, todo, stats):
    """The values of ``x`` at ``positions`` from GPU ``g`` into GPU ``h``, for each ``(g, h,
    positions)`` of ``todo``: a gather on ``g``, a peer copy, a scatter on ``h`` (host copies
    under the simulator); ``bytes_between_gpus`` counted."""
    for g, h, pos in todo:
        src, dst = gpus[g], gpus[h]
        stats["bytes_between_gpus"] += int(pos.size) * 8
        if src["be"].sim:
            dst["w"]["x"][pos] = src["w"]["x"][pos]
            continue
        bufs = src["w"].setdefault("xidx", {})  # kept with the run's arrays
        got = bufs.get((g, h, id(pos)))
        if got is None or got[0] is not pos:  # (an id is reused only once pos is gone)
            with src["be"].current():
                ig = src["be"].put(pos)
            with dst["be"].current():
                ih = dst["be"].put(pos)
                buf = dst["be"].xp.empty(pos.size, np.float64)
            got = bufs[(g, h, id(pos))] = (pos, ig, ih, buf)
        _, ig, ih, buf = got
        be_s, be_d = src["be"], dst["be"]
        with be_s.current():
            vals = src["w"]["x"][ig]
            be_s.sync()
        with be_d.current():
            be_d.xp.cuda.runtime.memcpyPeer(buf.data.ptr, be_d.device_id, vals.data.ptr,
                                            be_s.device_id, pos.size * 8)
            dst["w"]["x"][ih] = buf


def prepare(req, devices):
    """The placement's entry (:mod:`digraph.dispatch.engines.registry`): the one-GPU ``scc``
    kernels warm on each of ``devices`` (``time_compile``), then a function that solves ``req``,
    each unit's components dealt over them."""
    from .. import warm
    from ..common import solve_dual_or
    from ...runtime.cuda.backend import backend

    def warm_up():
        for d in dict.fromkeys(devices):
            b = backend(d)
            with b.current():
                warm.gpu(b, "scc", req.system.family, d)

    def run():
        with backend(devices[0]).current():
            return solve_dual_or(solve_dag, req.graph, req.system, req.tol, req.max_iter,
                                 req.stats, dict(devices=devices))

    warm.timed(req.stats, warm_up)
    return run
