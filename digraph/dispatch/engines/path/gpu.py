"""The path modes (``path``, ``path-nopriority``) on one GPU: a PathSet's walk arrays cut into units
of consecutive paths (:func:`_units`, :func:`_device_paths`), the rounds over the unfinished
layers of linear systems (:func:`path_linear`, with the proxies of high in-degree vertices
:func:`_proxies`) and of min/max systems (:func:`path_monotone`), queued on the GPU two launches
a round with the priority threshold, the layers' progress and the counters kept there
(:class:`_Rounds`, :mod:`digraph.smx.cuda.path_rounds`).  The settings
(:class:`~.gpu_settings.GpuPathSettings`, :data:`~.gpu_settings.DEFAULT`) are read
at each call from the run's settings (:mod:`digraph.dispatch.settings`)."""

from types import SimpleNamespace

import numpy as np
from numba import njit

from ....errors import InvalidParameterError
from ... import driver
from ...convergence import pending_budget
from ...systems import monotone_arrays, monotone_start
from ...runtime.cuda.common import hb as _hb, index_dtype as _index_dtype
from ...runtime.cuda.residency import residency
from ...settings import current
from .gpu_settings import DEFAULT as GPU_SETTINGS, PATH_DEFAULT as GPU_PATH_SETTINGS
from ..power.gpu_settings import POWER_DEFAULT
from ..push.gpu_linear import Linear, solve_linear
from ..power.gpu_work import Work
from ..scc.gpu_work import kept_work
from ..registry import find

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
    unit_arcs = current(GPU_SETTINGS).unit_arcs if unit_arcs is None else int(unit_arcs)
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
        "unit_layer": be.put(unit_layer, np.int32),
        "layer_units": be.put(layer_units, np.int64),
        "unit_heat": be.put(unit_heat),
        "unit_paths": be.put(np.diff(np.append(unit_first, ps.num_paths)), np.int64),
        "num_layers": num_layers,
        "nunits": nunits,
    }
    cache[key] = d
    return d


class _Rounds:
    """The device state of the rounds queued on the GPU (:mod:`digraph.smx.cuda.path_rounds`):
    the control words, the per-layer marks and round counts, each unit's arcs sent in all."""

    def __init__(self, be, D, want_hist):
        from ....smx.cuda import path_rounds as R
        xp = be.xp
        self.be, self.D, self.R = be, D, R
        L = max(D["num_layers"], 1)
        self.ctl = be.keep(xp.zeros(R.NCTL, np.int64))
        self.fctl = be.keep(xp.zeros(R.NFCTL, np.float64))
        self.layer_any = be.keep(xp.zeros(L, np.int32))
        self.layer_rounds = be.keep(xp.zeros(D["num_layers"], np.int64))
        self.unit_total = be.keep(xp.zeros(max(D["nunits"], 1), np.int64)[:D["nunits"]])
        self.hist = be.keep(xp.zeros(R.HBINS if want_hist else 1, np.int32))
        self.layer_out = be.keep(xp.zeros(2 * L, np.float64))

    def start(self, max_rounds, theta=0.0, budget=-1.0):
        """A sweep from the first layer of at most ``max_rounds`` rounds: every control word
        reset, ``theta`` the send threshold, ``budget`` the pending mass at which the sweep stops
        (−1: only when every layer is finished)."""
        be, R = self.be, self.R
        size = max(self.hist.size, self.layer_any.size, R.NCTL)
        be.launch(R.path_round_start, min(be.grid(size), be.walk_blocks), be.block, self.ctl,
                  self.fctl, self.hist, self.layer_any, max_rounds, theta, budget,
                  int(self.D["num_layers"] == 0))

    def run(self, queue, per_check, max_rounds):
        """``queue()`` (``per_check`` rounds: a walk and a control launch each) again and again,
        the control words read after each (the one synchronisation) until the control kernel
        says done; returns the control words (host)."""
        read = {}

        def done(r):
            c = read["c"] = self.be.get(self.ctl)
            return bool(c[self.R.DONE])

        driver.queued(lambda r: queue(), done, per_check=per_check,
                      max_rounds=max_rounds + per_check)
        return read["c"]

    def counted(self, stats, c):
        """Add a sweep's counters (host copy ``c`` of the control words) to ``stats``."""
        R = self.R
        stats["arc_updates"] += int(c[R.SENT])
        stats["vertex_updates"] += int(c[R.SENT])
        stats["arcs_examined"] += int(c[R.EXAMINED])
        stats["paths_processed"] += int(c[R.PATHS])
        stats["partitions_processed"] += int(c[R.UNITS])
        stats["rounds"] += int(c[R.ROUNDS])

    def per_layer(self, stats):
        """``stats["layer_rounds"]`` and ``["layer_arc_updates"]`` from the device counts (the
        units' totals summed per layer on the device: one small copy)."""
        D = self.D
        L = D["num_layers"]
        if L == 0:
            stats["layer_rounds"] = stats["layer_arc_updates"] = []
            return
        self.be.launch(self.R.path_layer_sums, min(L, self.be.walk_blocks), _hb(),
                       D["layer_units"], self.unit_total, self.layer_rounds, self.layer_out)
        h = self.be.get(self.layer_out).astype(np.int64)
        stats["layer_rounds"] = h[:L].tolist()
        stats["layer_arc_updates"] = h[L:].tolist()


def path_linear(be, graph, sys, tol, max_iter, stats, ps, priority, proxy, settings=None,
                 gpu_settings=None):
    """The path modes on a linear system: sweeps over the layers, each a run of rounds queued on
    the GPU (:mod:`digraph.smx.cuda.path_rounds`: a walk and a control launch a round, the
    control words read every ``settings.rounds_per_check`` rounds; a kept work replays them as
    a CUDA graph, :mod:`~.gpu_work`) at the send threshold of the sweep's budget, until the
    pending mass is within the budget or every layer is finished, then certified from the exact
    residual; a sweep that fails lowers the budget 4× (at most ``settings.max_sweeps``), a
    stalled one hands over to vertex-level push."""
    settings = current(GPU_PATH_SETTINGS) if settings is None else settings
    gpu_settings = current(GPU_SETTINGS) if gpu_settings is None else gpu_settings
    from ....smx.cuda import path_rounds as R
    POWER = current(POWER_DEFAULT)
    from . import gpu_work as PW
    xp = be.xp
    _check_pathset(graph, ps)
    D = _device_paths(be, ps, gpu_settings.unit_arcs)
    n, m, nunits = graph.num_vertices, graph.num_arcs, D["nunits"]
    rule = {"none": 0, "pending": 1, "paper": 2}[priority]
    hub_key = int(gpu_settings.proxy_min_in_degree) if proxy else None
    # every scalar a captured round reads, so that a kept CUDA graph matches this run
    key = (int(gpu_settings.unit_arcs), rule, hub_key, float(settings.select_share),
           int(settings.min_priority_units), int(settings.aging_rounds),
           int(settings.stall_rounds), int(settings.rounds_per_check))

    def make():
        L = Linear(be, graph, sys)
        coef = L.src_scale[D["src"]] * L.dst_scale[D["dst"]]  # c_j of every arc in path order
        if L.has:
            coef *= L.arc[D["arc_ids"]]
        hub_slot, hubs, nhubs = _proxies(be, graph, proxy, gpu_settings.proxy_min_in_degree)
        unit_pend = xp.zeros(nunits, np.float64)
        w = Work(L=L, D=D, coef=coef, x=xp.empty(n, np.float64), s=xp.zeros(m, np.float64),
                  unit_sent=xp.zeros(nunits, np.int32), unit_pend=unit_pend,
                  score=xp.zeros(nunits, np.float64) if rule == 2 else unit_pend,
                  hub_slot=hub_slot, hubs=hubs, nhubs=nhubs, Q=_Rounds(be, D, rule != 0))
        return be.keep_all(w)

    w, reused, kept = kept_work(be, graph, sys, (be.device_id, be.sim) + key,
                               PW.work_bytes(n, m, nunits), POWER.keep_work_bytes, make,
                               kind=PW.KIND, owner=ps)
    if reused:
        PW.reset(w, rule)
    stats["gpu_work_kept"] = reused
    L, D, Q, x = w["L"], w["D"], w["Q"], w["x"]
    x[...] = L.b
    stats["priority"] = priority
    stats["proxy_vertices"] = w["nhubs"]
    stats.setdefault("arcs_examined", 0)
    walk_args = (Q.ctl, Q.fctl, D["layer_units"], D["unit_layer"], D["unit_offsets"],
                 D["unit_paths"], D["src"], D["dst"], w["coef"], w["s"], x, w["hub_slot"],
                 w["hubs"], w["nhubs"] > 0, rule, D["unit_heat"], w["score"], w["unit_sent"],
                 w["unit_pend"], Q.unit_total, Q.layer_any, Q.hist, rule != 0)
    control_args = (Q.ctl, Q.fctl, D["layer_units"], Q.layer_any, Q.layer_rounds, Q.hist,
                    rule, settings.select_share, settings.min_priority_units,
                    settings.aging_rounds, settings.stall_rounds, rule != 0)
    per_check = settings.rounds_per_check
    blocks = _walk_blocks(be, nunits)
    cg = PW.rounds_graph(be, w) if kept and not be.sim and POWER.graph_rounds else None

    def rounds(stream=None):
        for _ in range(per_check):
            be.launch(R.path_linear_round, blocks, be.walk_block, *walk_args,
                      stream=stream)
            be.launch(R.path_round_control, 1, R.CT, *control_args, stream=stream)

    def queue():
        if cg is None:
            rounds()
        else:
            PW.replay(cg, rounds, stats)

    # Σx at the start (x = b); later sweeps take it from the last certificate
    st = SimpleNamespace(sx=L.b_total, stalled=False)

    def sweep(factor):
        budget = factor * pending_budget(tol, st.sx, n, L.gammas, sys.normalize)
        left = max_iter - stats["rounds"]
        if left > 0:
            Q.start(left, budget / max(m, 1), budget)
            be.sync()  # the resets above, on the default stream, before the rounds' stream
            c = Q.run(queue, per_check, left)
            Q.counted(stats, c)
            st.stalled = bool(c[R.STALLED])
        return False

    def certify():
        certificate = L.certify(x)
        st.sx = L.x_total
        return certificate

    # the mirrors' rounding floor (see digraph.dispatch.engines.path.cpu): finish by vertex push
    then = find("path", "gpu").after_stall
    end, (bound, r1, _) = driver.budget_sweeps(
        SimpleNamespace(sweep=sweep, certify=certify, floored=lambda c: st.stalled), tol=tol,
        max_iter=max_iter, max_sweeps=settings.max_sweeps, then=then, stats=stats)
    if end == "hand-over":
        Q.per_layer(stats)
        be.release("path")
        return solve_linear(be, graph, sys, tol, max_iter, stats, then == "bsp",
                            (x, L.r.copy(), L))
    converged = end == "converged"
    Q.per_layer(stats)
    if kept:  # the next run's launches stay prepared
        be.retain(PW.work_arrays(w) + [a for a in D.values()
                                       if hasattr(a, "__cuda_array_interface__")], "path",
                  holder=w)
    else:
        be.release("path")
    stats["error_bound"] = float(bound)
    stats["residual_l1"] = float(r1)
    return x, converged


def _proxies(be, graph, proxy, min_in_degree=None):
    """(slot of each vertex or −1, vertex of each slot, slots used): the highest in-degree
    vertices, of in-degree ``min_in_degree`` (default ``gpu.DEFAULT.proxy_min_in_degree``) or
    more; made once a graph and device and kept in its residency (``"cuda-proxies"``: the host's
    stable sort of the in-degrees is not repeated every run).  Measured:
    docs/history/docstring-measurements.md, "digraph.dispatch.engines.path.gpu._proxies"."""
    min_in_degree = (current(GPU_SETTINGS).proxy_min_in_degree if min_in_degree is None
                     else min_in_degree)
    from ....smx.cuda.walks import PROXY_SLOTS
    n = graph.num_vertices

    def build():
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

    key = (be.device_id, be.sim, int(min_in_degree) if proxy else None)
    slot, hubs, count = residency(graph).get("cuda-proxies", key, build)
    return be.keep(slot), be.keep(hubs), count


def _walk_blocks(be, nunits):
    """The walk's blocks: the backend's persistent grid (8 blocks an SM), or fewer when the units
    need fewer (a unit a thread).  Every block pays its fixed part each round (shared
    histogram and proxies cleared and flushed, counters published) whether it holds units or
    not: hence no more blocks than the units fill.  Measured:
    docs/history/benchmarks-notebook.md, "The walk's fixed costs"."""
    return max(1, min(be.walk_blocks, -(-int(nunits) // be.walk_block)))


def _check_pathset(graph, ps):
    if ps is None:
        raise InvalidParameterError("the path modes need a PathSet")
    if ps.num_arcs != graph.num_arcs or ps.num_vertices != graph.num_vertices:
        raise InvalidParameterError("the PathSet was built from another graph")


def path_monotone(be, graph, sys, max_iter, stats, ps, unit_arcs=None, settings=None):
    """The path modes on a min/max system: rounds queued on the GPU over the unfinished layers
    (every unit walked), the control words read every ``settings.rounds_per_check`` rounds."""
    settings = current(GPU_PATH_SETTINGS) if settings is None else settings
    from ....smx.cuda import path_rounds as R
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
    stats.setdefault("arcs_examined", 0)
    Q = _Rounds(be, D, False)
    ctl, fctl = Q.ctl, Q.fctl
    lay_units = D["layer_units"]
    left = max_iter - stats["rounds"]
    if left <= 0:
        return x, D["num_layers"] == 0
    Q.start(left)
    blocks = _walk_blocks(be, D["nunits"])

    def walk():
        be.launch(R.path_monotone_round, blocks, be.walk_block,
                  ctl, fctl, lay_units, D["unit_layer"], D["unit_offsets"], D["unit_paths"],
                  D["src"], D["dst"], val, has, op, combine, s, x, Q.unit_total, Q.layer_any)

    def queue():
        for _ in range(settings.rounds_per_check):
            walk()
            be.launch(R.path_round_control, 1, R.CT, ctl, fctl, lay_units, Q.layer_any,
                      Q.layer_rounds, Q.hist, 0, 1.0, 1, 1, 1 << 62, False)

    c = Q.run(queue, settings.rounds_per_check, left)
    Q.counted(stats, c)
    Q.per_layer(stats)
    return x, bool(c[R.LO] >= D["num_layers"])


def run_on(be, graph, system, *, mode, tol, max_iter, stats, options):
    """Run ``system`` in a path mode on the GPU of ``be``; returns (device state, converged).
    ``options``: ``pathset``, ``priority``, ``proxy``, ``path_settings`` and ``gpu_settings`` of
    :func:`digraph.dispatch.engines.one_gpu.solve`.  k-core runs vertex-async: its dependencies
    are undirected, so no DAG of paths orders them."""
    gpu_settings = options.get("gpu_settings") or current(GPU_SETTINGS)
    if system.family == "hindex":
        from ..push.gpu_monotone import hindex
        stats["note"] = "k-core runs vertex-async: its dependencies are undirected"
        return hindex(be, graph, False, max_iter, stats)
    if system.family == "linear":
        return path_linear(be, graph, system, tol, max_iter, stats, options.get("pathset"),
                           options.get("priority", "pending"), options.get("proxy", True),
                           options.get("path_settings"), gpu_settings)
    return path_monotone(be, graph, system, max_iter, stats, options.get("pathset"),
                         gpu_settings.unit_arcs, options.get("path_settings"))
