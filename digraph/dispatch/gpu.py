"""The GPU engine's host side (``device="cuda"``): residency, launch shapes and the driving loop of
every mode on one GPU, with the kernels of :mod:`digraph.smx.cuda_kernels`.

Arrays live on the GPU as CuPy arrays (reductions, compaction and sorting run in CuPy; the kernels
are Numba's and see the same memory through ``__cuda_array_interface__``).  Under Numba's CUDA
simulator (``NUMBA_ENABLE_CUDASIM=1``, how CI tests these kernels without a GPU) the same code
runs on numpy arrays.  All state is float64: the float32 state of the GPU peers cannot certify an
L1 error of 1e-8 on graphs of 10^5+ vertices.

Residency: a graph's CSR/CSC arrays (int32 indices where they fit) are uploaded once and kept on
the graph object (``graph._cache["cuda"]``); a :class:`~digraph.PathSet`'s walk arrays likewise on
the path set.  ``stats["bytes_h2d"]``/``["bytes_d2h"]`` count every byte copied, and
``time_transfer`` the time spent copying.

Modes, as on the CPU (same counters, same convergence rules):

* ``bsp`` — Jacobi rounds, dense pull when the frontier's out-arcs exceed ``m / dense_divisor``
  (:class:`~digraph.dispatch.bsp.BspSettings`, shared with the CPU), sparse push otherwise;
* ``vertex-async`` — passes over the worklist of active vertices with atomic pushes;
* ``path`` / ``path-nopriority`` — rounds over *units* (a long path alone, several short
  consecutive paths together, at least ``unit_arcs`` arcs: :class:`GpuSettings`) of the DAG
  layers from the lowest unfinished one, in layer order, taken by persistent blocks from an
  atomic cursor (work stealing).  A layer is *finished* — and never walked again — once a round
  that walked all of it, after every lower layer had finished, transmitted nothing (Observation
  2).  With priority, units whose pending mass (``"pending"``) or ``D̄·N`` (``"paper"``) at their
  last walk is below the score of the top ``select_share`` of active units are deferred, except
  every ``aging_rounds``-th round, which walks everything (:class:`GpuPathSettings`).  k-core
  runs vertex-async (its dependencies are undirected), as on the CPU.

Settings are frozen objects whose fields cite their measurements: :class:`GpuSettings`
(``solve(gpu_settings=)``), :class:`GpuPathSettings` (``solve(path_settings=)``) and, for the
backend below the engines, :class:`~digraph.dispatch.cuda.runtime.backend.BackendSettings`
(:data:`~digraph.dispatch.cuda.runtime.backend.BACKEND`).  The backend itself (:func:`backend`,
``_Backend``) and the prepared-launch fast path live in :mod:`digraph.dispatch.cuda.runtime`
and are re-exported here under their old names.
"""

import time

import numpy as np
from numba import njit

from ..errors import InvalidParameterError
from .convergence import linear_contraction, linear_error_bound, pending_budget
from .convergence import ROUNDING_MARGIN, certified, rounding_floor
from .convergence import checked_contraction
from .systems import linear_factors, monotone_arrays, monotone_start
from dataclasses import dataclass

from . import driver
from .paths import PathSettings
# the runtime below the engines, re-exported under its old names (gpu.backend, gpu._Backend, ...);
# BACKEND and _BACKENDS are read from runtime.backend: patch them there, not here
from .cuda.runtime.backend import BACKEND, BackendSettings, _Backend, _BACKENDS  # noqa: F401
from .cuda.runtime.backend import backend, device_index, _gpu_name
from .cuda.runtime.launch import _SCALARS, _PreparedLaunch, _core_launch  # noqa: F401
from .cuda.common import (column_sums_known, contraction_sums, count_dense_round,
                          hb as _hb, index_dtype as _index_dtype, kernels as _kernels)

__all__ = ["solve", "backend", "device_index", "GpuSettings", "DEFAULT", "BackendSettings",
           "BACKEND"]


@dataclass(frozen=True)
class GpuSettings:
    """What the one-GPU engine hands to the sharded one and how its path modes cut their work
    (``solve(..., gpu_settings=)``; default :data:`DEFAULT`).

    Attributes
    ----------
    shard_arcs : int
        ``digraph.run``: ``bsp`` on a linear system with at least this many arcs (that fits in
        the GPU's memory) runs as one shard of :mod:`.multi_gpu` (:func:`solve` itself always
        runs the one-GPU engine): dense rounds over the CSC only, vertex factors that are absent made on
        the GPU, the answer copied into one host array.  Measured on an H100
        (``bench_multi_gpu.py --unrouted``, 2026-11-26, ``digraph.run`` PageRank to 1e-8): R-MAT
        2^24 890 ms routed against 1,278 ms here, 2^25 1,637 against 2,638 ms; on cnr-2000
        (3.2 M arcs) this engine was faster (43 against 90 ms, an earlier session).  Last
        measured on an H200: R-MAT 2^25 921 ms as one shard against 2,102 ms here
        (docs/benchmarks.md, "Several GPUs: PageRank sharded over 1, 2 and 4 GPUs", "One shard
        on one GPU").  The crossover between 3.2 M and 268 M arcs was not looked for.
    unit_arcs : int
        Arcs per thread of the path kernels: consecutive short paths of one layer (one partition,
        for :mod:`~digraph.dispatch.gpu_workers`) are grouped into a unit of at least this many
        (DiGraph's Figure 5).  Not measured: chosen by hand, and no benchmark varies it.
    proxy_min_in_degree : int
        Vertices with at least this in-degree (the highest
        :data:`~digraph.smx.cuda_kernels.PROXY_SLOTS` of them) get proxies in the path modes
        (``proxy=True``).  Not measured: chosen by hand, and no benchmark varies it.
    """

    shard_arcs: int = 32 << 20
    unit_arcs: int = 8
    proxy_min_in_degree: int = 64


DEFAULT = GpuSettings()


@dataclass(frozen=True)
class GpuPathSettings:
    """How the GPU path modes schedule their units.  ``select_share``, ``aging_rounds``,
    ``max_sweeps`` and ``stall_rounds`` mean what they mean for the CPU path modes and take their
    defaults from :class:`~digraph.dispatch.paths.PathSettings` (one value for both devices; no
    GPU-specific measurement of them exists).  ``min_priority_units``: below this many active
    units a round walks them all (a histogram of scores costs a copy to the host; not measured,
    chosen as the GPU's counterpart of the CPU's ``min_priority_paths``)."""

    select_share: float = PathSettings.select_share
    min_priority_units: int = 4096
    aging_rounds: int = PathSettings.aging_rounds
    max_sweeps: int = PathSettings.max_sweeps
    stall_rounds: int = PathSettings.stall_rounds


PATH_DEFAULT = GpuPathSettings()


# ---------------------------------------------------------------------------- backend
# The backend below the engines lives in digraph.dispatch.cuda.runtime (issue 18, item 5); its
# names are imported above and re-exported here for the callers of gpu.backend, gpu._Backend, ...
# The helpers shared with the sharded engines live in digraph.dispatch.cuda.common.


# ---------------------------------------------------------------------------- residency


def _device_graph(be, graph):
    """The graph's arrays on the GPU, uploaded once per graph and device."""
    key = ("cuda", be.device_id, be.sim)
    cache = graph._cache.get(key)
    if cache is not None:
        return be.keep_all(cache)
    n, m = graph.num_vertices, graph.num_arcs
    it = _index_dtype(max(n, m))
    d = {
        "out_offsets": be.put(graph.out_offsets, it),
        "out_targets": be.put(graph.out_targets, it),
        "in_offsets": be.put(graph.in_offsets, it),
        "in_sources": be.put(graph.in_sources, it),
        "out_degree": be.put(graph.out_degree, np.int64),
        "heavy_in": _heavy(be, graph.in_degree),
        "heavy_out": _heavy(be, graph.out_degree),
    }
    graph._cache[key] = d
    return d


def _heavy(be, degree):
    """Vertices of degree >= HEAVY (a block each in the ``*_heavy`` kernels)."""
    from ..smx.cuda_kernels import HEAVY
    return be.put(np.flatnonzero(np.asarray(degree) >= HEAVY), np.int32)


def _device_undirected(be, graph):
    key = ("cuda-undirected", be.device_id, be.sim)
    if key in graph._cache:
        for a in graph._cache[key][:2] + graph._cache[key][3:]:
            be.keep(a)
    else:
        from .bsp import undirected_adjacency
        off, nbr = undirected_adjacency(graph)
        it = _index_dtype(max(graph.num_vertices, nbr.size))
        graph._cache[key] = (be.put(off, it), be.put(nbr, it), np.diff(off),
                             _heavy(be, np.diff(off)))
    return graph._cache[key]


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
    ``DEFAULT.unit_arcs``)."""
    unit_arcs = DEFAULT.unit_arcs if unit_arcs is None else int(unit_arcs)
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


# ---------------------------------------------------------------------------- solve


def solve(graph, system, *, mode, tol, max_iter, stats, device="cuda", pathset=None,
          priority="pending", proxy=True, batch_arcs=None, settings=None,
          path_settings=None, gpu_settings=None, cluster_settings=None, scc_settings=None):
    """Run ``system`` on one GPU in ``mode``; returns (host state, converged).

    ``settings``: a :class:`~digraph.dispatch.bsp.BspSettings` for ``bsp``'s direction switch
    (default: the CPU's); ``path_settings``: a :class:`GpuPathSettings` for the path modes;
    ``gpu_settings``: a :class:`GpuSettings` (default :data:`DEFAULT`: the path modes' units and
    proxies); ``cluster_settings``: a
    :class:`~digraph.dispatch.cuda.one_gpu.cluster.ClusterSettings` for ``"cluster"``;
    ``scc_settings``: a :class:`~digraph.dispatch.cuda.one_gpu.scc.GpuSccSettings` for ``"scc"``.

    ``batch_arcs``: stream the in-arcs from host memory in batches of at most this many arcs
    (``bsp`` on linear systems; chosen automatically when the arcs do not fit in free GPU memory).
    ``digraph.run`` sends ``bsp`` on large linear systems to the sharded engine as one shard
    instead (:attr:`GpuSettings.shard_arcs`); this function does not.
    """
    if mode not in ("bsp", "vertex-async", "path", "path-nopriority", "cluster", "scc"):
        raise InvalidParameterError(
            f"the GPU engine runs 'bsp', 'vertex-async', 'scc', 'cluster' and the path modes, not "
            f"mode={mode!r}"
            + (" (mode='power' is digraph.dispatch.gpu_power)" if mode == "power" else ""))
    gpu_settings = DEFAULT if gpu_settings is None else gpu_settings
    be = backend(device)
    be.stats = stats
    stats["gpu"] = "CUDA simulator" if be.sim else _gpu_name(be)
    fam = system.family
    streamed = fam == "linear" and mode == "bsp" and bool(batch_arcs or _too_big(be, graph))
    if fam == "hindex":
        if mode in ("path", "path-nopriority"):
            stats["note"] = "k-core runs vertex-async: its dependencies are undirected"
        x, ok = _hindex(be, graph, mode == "bsp", max_iter, stats)
    elif fam == "linear":
        if mode == "scc":
            from .cuda.one_gpu import scc
            x, ok = scc.solve(be, graph, system, tol=tol, max_iter=max_iter, stats=stats,
                              settings=scc_settings)
        elif mode in ("path", "path-nopriority"):
            x, ok = _path_linear(be, graph, system, tol, max_iter, stats, pathset, priority, proxy,
                                 path_settings, gpu_settings)
        elif streamed:
            batch = int(batch_arcs or _auto_batch(be, graph))
            x, ok = _linear_streamed(be, graph, system, tol, max_iter, stats, batch)
        else:
            x, ok = _linear(be, graph, system, tol, max_iter, stats, mode == "bsp",
                            settings=settings)
    elif mode == "cluster":
        from .cuda.one_gpu import cluster
        x, ok = cluster.solve(be, graph, system, max_iter=max_iter, stats=stats,
                              settings=cluster_settings)
    elif fam == "monotone":
        if mode in ("path", "path-nopriority"):
            x, ok = _path_monotone(be, graph, system, max_iter, stats, pathset,
                                   gpu_settings.unit_arcs)
        elif mode == "vertex-async":  # the worklist kept on the GPU
            from .cuda.one_gpu import worklist
            x, ok = worklist.solve(be, graph, system, _device_graph(be, graph),
                                   max_iter=max_iter, stats=stats)
        else:
            x, ok = _monotone_bsp(be, graph, system, max_iter, stats)
    else:
        raise InvalidParameterError(f"unknown system family {fam!r}")
    be.sync()
    out = be.get(x)
    be.release()
    return out, ok


def _too_big(be, graph):
    """Whether the graph's resident arrays (CSR + CSC + per-arc factors) exceed 80% of the free
    GPU memory, so ``bsp`` must stream its arcs."""
    if be.sim or ("cuda", be.device_id, be.sim) in graph._cache:
        return False
    with be.xp.cuda.Device(be.device_id):  # this GPU's memory, whichever is current
        free, _ = be.xp.cuda.runtime.memGetInfo()
    need = graph.num_arcs * (4 + 4 + 8 + 8) + graph.num_vertices * 8 * 12
    return need > 0.8 * free


def _auto_batch(be, graph):
    """Batch size for streaming: an eighth of the free memory per buffer pair, at most m."""
    free, _ = be.xp.cuda.runtime.memGetInfo()
    return max(1 << 20, min(graph.num_arcs, int(free // 8 // 12)))


# ---------------------------------------------------------------------------- linear


def _degree_scaled(sys):
    """(``b``'s constant, ``src_scale``'s numerator) of a system whose vectors are recipes
    (:class:`~digraph.algorithms.base.DegreeScaledSystem`: PageRank without personalization or
    weights), or None: such vectors are made on the GPU from its out-degrees, not built on the
    host and uploaded."""
    c = getattr(sys, "b_constant", None)
    s = getattr(sys, "src_degree_scale", None)
    if c is None or s is None or sys.arc_scale is not None or sys.dst_scale is not None:
        return None
    return float(c), float(s)


class _Linear:
    """A linear system's arrays on the device and its certified error bound."""

    def __init__(self, be, graph, sys):
        xp = be.xp
        self.be = be
        self.g = _device_graph(be, graph)
        self.n, self.m = graph.num_vertices, graph.num_arcs
        g = self.g
        made = _degree_scaled(sys)
        if made:  # PageRank without personalization: the vectors made here, not uploaded
            n, s = self.n, made[1]
            has = False
            deg = g["out_degree"]
            self.src_scale = be.keep(xp.where(deg > 0, s / xp.maximum(deg, 1), 0.0))
            self.dst_scale = be.keep(xp.ones(n, np.float64))
            self.arc = be.put(np.empty(0, np.float64))
        else:
            src, dst, has, arc = linear_factors(graph, sys)
            self.src_scale = be.put(src)
            self.dst_scale = be.put(dst)
            self.arc = be.put(arc)
        self.has = has
        self.in_coef = be.put(arc[graph.in_arcs]) if has else self.arc
        known = column_sums_known(sys, has)
        col, row, bad = contraction_sums(be, 0, self.n, g["in_offsets"], g["in_sources"],
                                         self.in_coef, has, self.src_scale, self.dst_scale,
                                         not known, g["heavy_in"])
        if known:
            col = self.src_scale * g["out_degree"]
        self.gammas = checked_contraction(*be.scalars(col.max(), row.max(), bad[0])) \
            if self.m else (0.0, 0.0)
        if getattr(sys, "error_gammas", None) is not None:  # rescaled by dual weights
            self.gammas = sys.error_gammas
        if made:
            self.b = be.keep(xp.full(self.n, made[0], np.float64))
            self.bmax = abs(made[0]) if self.n else 0.0
            self.bsum = abs(made[0]) * self.n
        else:
            self.b = be.put(sys.b, np.float64)
            self.bmax = float(np.abs(sys.b).max()) if self.n else 0.0
            self.bsum = float(np.abs(sys.b).sum())
        self.normalize = sys.normalize
        self.r = be.keep(xp.empty(self.n, np.float64))

    def certify(self, x):
        """(bound, ‖r‖₁, floor) from the residual recomputed from ``x`` (left in ``self.r``)."""
        K = _kernels()
        be, g = self.be, self.g
        args = (g["in_offsets"], g["in_sources"], self.in_coef, self.has, self.src_scale,
                self.dst_scale, self.b, x, self.r)
        be.launch(K.linear_residual, be.grid(self.n), be.block, *args)
        be.heavy(K.linear_residual_heavy, g["heavy_in"], *args)
        xp = be.xp
        mag = xp.abs(self.r)
        if self.n:
            r1, rmax, sx, xsum, xmax = be.scalars(mag.sum(), mag.max(), x.sum(), xp.abs(x).sum(),
                                                  xp.abs(x).max())
        else:
            r1 = rmax = sx = xsum = xmax = 0.0
        e1, emax = rounding_floor(self.bsum, self.bmax, xsum, xmax, r1, rmax)
        bound = linear_error_bound(r1 + e1, rmax + emax, sx, self.n, self.gammas, self.normalize)
        floor = linear_error_bound(e1, emax, sx, self.n, self.gammas, self.normalize)
        return bound * (1.0 + ROUNDING_MARGIN), r1, floor


class _LinearRounds:
    """BSP (``jacobi``: Jacobi rounds, a fused dense pull or a sparse push by the frontier's
    out-arcs) or vertex-async passes on the GPU, for :func:`digraph.dispatch.driver.linear`."""

    def __init__(self, be, L, stats, jacobi, settings, state=None):
        xp = be.xp
        self.be, self.L, self.stats, self.jacobi = be, L, stats, jacobi
        self.divisor = settings.dense_divisor
        n = L.n
        self.x = be.keep(xp.zeros(n, np.float64) if state is None else state[0])
        self.delta = be.keep(L.b.copy() if state is None else state[1])
        self.send = be.keep(xp.zeros(n, np.float64))  # sparse rounds: zero except during a push
        self.scan_out = be.keep(xp.zeros(5, np.float64))
        self.delta_new = be.keep(xp.empty(n, np.float64)) if jacobi else None
        self.known = None  # the statistics a fused dense round returned for the state it left
        self.nf = self.vol = 0

    def scan(self, theta):
        if self.known is None:
            be, L = self.be, self.L
            self.scan_out[...] = 0.0
            be.launch(_kernels().linear_scan, be.grid_hb(L.n), _hb(), self.delta, theta,
                      L.g["out_degree"], self.x, self.scan_out)
            r1, rmax, sx, nf, vol = (float(v) for v in be.get(self.scan_out))
        else:
            r1, rmax, sx, nf, vol = self.known
            self.known = None
        self.nf, self.vol = nf, vol
        return r1, rmax, sx, nf

    def certify(self):
        bound, r1, floor = self.L.certify(self.x)
        self.delta[...] = self.L.r  # carry on from the exact residual
        self.known = None
        return bound, r1, floor

    def step(self, theta):
        K = _kernels()
        be, L, stats = self.be, self.L, self.stats
        g, m, xp = L.g, L.m, be.xp
        if self.jacobi and self.vol * self.divisor > m:
            # one fused pass: absorb, pull, and the statistics of the state it leaves
            self.scan_out[...] = 0.0
            args = (0, g["in_offsets"], g["in_sources"], L.in_coef, L.has, L.src_scale,
                    L.dst_scale, self.delta, self.delta_new, self.x, theta, g["out_degree"],
                    self.scan_out)
            be.launch(K.linear_dense_batch, be.grid_hb(L.n), _hb(), 0, L.n, *args)
            be.heavy(K.linear_dense_batch_heavy, g["heavy_in"], *args)
            r1n, rmaxn, sxn, absorbed, absorbed_vol = (float(v) for v in be.get(self.scan_out))
            self.delta, self.delta_new = self.delta_new, self.delta
            count_dense_round(stats, m, absorbed)
            # this round's frontier stands in for the next one while it stays dense; near the
            # switch to sparse rounds the next frontier is scanned exactly
            if absorbed_vol * self.divisor > 2 * m:
                self.known = (r1n, rmaxn, sxn, absorbed, absorbed_vol)
            return
        front = xp.flatnonzero(xp.abs(self.delta) > theta)
        if self.jacobi:
            be.launch(K.linear_take, be.grid(front.size), be.block, front, self.delta, self.x,
                      L.src_scale, self.send)
            args = (self.send, g["out_offsets"], g["out_targets"], L.arc, L.has, L.dst_scale,
                    self.delta)
            be.launch(K.linear_push, be.grid(front.size), be.block, front, *args)
            be.heavy(K.linear_push_heavy, g["heavy_out"], *args)
            stats["sparse_rounds"] += 1
        else:
            args = (g["out_offsets"], g["out_targets"], L.arc, L.has, L.src_scale, L.dst_scale,
                    self.delta, self.x)
            be.launch(K.linear_async_push, be.grid(front.size), be.block, front, *args)
            be.heavy(K.linear_async_push_heavy, g["heavy_out"], theta, *args)
        stats["arc_updates"] += int(self.vol)
        stats["vertex_updates"] += int(self.nf)


def _linear(be, graph, sys, tol, max_iter, stats, jacobi, state=None, settings=None,
            fallback=True):
    """BSP (``jacobi``) or vertex-async rounds from ``x = 0, δ = b`` (or ``state = (x, δ[, L])``);
    a stalled run is finished by the other of the two from the state it reached (unless
    ``fallback`` is False)."""
    from .bsp import DEFAULT
    settings = DEFAULT if settings is None else settings
    L = state[2] if state is not None and len(state) > 2 else _Linear(be, graph, sys)
    eng = _LinearRounds(be, L, stats, jacobi, settings, state)
    outcome = driver.linear(eng, n=L.n, gammas=L.gammas, normalize=sys.normalize, tol=tol,
                            max_iter=max_iter, stats=stats)
    if outcome == "stalled" and fallback:
        other = "vertex-async" if jacobi else "bsp"
        driver.hand_over(stats, other, f"{'bsp' if jacobi else 'vertex-async'}'s bound stopped "
                         "falling")
        return _linear(be, graph, sys, tol, max_iter, stats, not jacobi,
                       (eng.x, eng.delta, L), settings, fallback=False)
    return eng.x, outcome == "converged"


def _batches(in_offsets, batch_arcs):
    """(first vertex, end vertex, first arc, end arc) of consecutive target ranges with at most
    ``batch_arcs`` in-arcs each (a vertex with more is a batch alone)."""
    n = in_offsets.size - 1
    out = []
    v = 0
    while v < n:
        a0 = int(in_offsets[v])
        w = int(np.searchsorted(in_offsets, a0 + batch_arcs, side="right")) - 1
        w = min(max(w, v + 1), n)
        out.append((v, w, a0, int(in_offsets[w])))
        v = w
    return out


def _linear_streamed(be, graph, sys, tol, max_iter, stats, batch_arcs):
    """BSP with the in-arcs streamed from pinned host memory in batches of target vertices, two
    CUDA streams overlapping the copy of one batch with the pull of the previous one (DiGraph
    §3.2.2), for graphs whose arcs do not fit on the GPU.  Every round is dense; the answer is
    certified on the host from the residual recomputed there."""
    from .convergence import certified_bound
    K = _kernels()
    xp = be.xp
    n, m = graph.num_vertices, graph.num_arcs
    gammas = linear_contraction(graph, sys)
    src, dst, has, arc = linear_factors(graph, sys)
    it = _index_dtype(max(n, m))
    in_off_h = np.asarray(graph.in_offsets, dtype=np.int64)
    batches = _batches(in_off_h, batch_arcs)
    cap = max(b[3] - b[2] for b in batches) if batches else 1
    if be.sim:
        host_src = np.asarray(graph.in_sources, dtype=it)
        host_coef = arc[graph.in_arcs] if has else np.zeros(1)
        streams = [None, None]
    else:
        import cupyx
        host_src = cupyx.empty_pinned(m, dtype=it)
        host_src[...] = graph.in_sources
        host_coef = cupyx.empty_pinned(m if has else 1, dtype=np.float64)
        if has:
            host_coef[...] = arc[graph.in_arcs]
        streams = [xp.cuda.Stream(non_blocking=True) for _ in range(2)]
    in_off = be.put(in_off_h)
    from ..smx.cuda_kernels import HEAVY
    heavy_h = np.flatnonzero(np.diff(in_off_h) >= HEAVY)
    heavy = be.put(heavy_h, np.int64)
    heavy_at = np.searchsorted(heavy_h, [b[0] for b in batches] + [n])  # heavy of batch k
    bufs = [(be.keep(xp.empty(cap, it)), be.keep(xp.empty(cap if has else 1, np.float64)))
            for _ in range(2)]
    src_scale, dst_scale = be.put(src), be.put(dst)
    out_degree = be.put(graph.out_degree, np.int64)
    x = be.keep(xp.zeros(n, np.float64))
    delta = be.keep(be.put(sys.b, np.float64))
    delta_new = be.keep(xp.empty(n, np.float64))
    scan = be.keep(xp.zeros(5, np.float64))
    stats["streamed_batches"] = len(batches)
    mag = np.abs(np.asarray(sys.b, dtype=np.float64))
    rvec = np.empty(n, np.float64)
    # the statistics of the state (the first: x = 0, δ = b) and the two δ buffers
    st = {"r1": float(mag.sum()), "rmax": float(mag.max()) if n else 0.0, "sx": 0.0,
          "delta": delta, "delta_new": delta_new}

    class Streamed:
        def scan(self, theta):
            return st["r1"], st["rmax"], st["sx"], int(st["r1"] != 0.0)

        def certify(self):
            xh = be.get(x)
            bound, r1, floor = certified_bound(graph, sys, xh, gammas, rvec)
            st["delta"][...] = xp.asarray(rvec) if not be.sim else rvec  # carry on from it
            st.update(r1=r1, rmax=float(np.abs(rvec).max()) if n else 0.0, sx=float(xh.sum()))
            return bound, r1, floor

        def step(self, theta):
            delta, delta_new = st["delta"], st["delta_new"]
            scan[...] = 0.0
            be.sync()
            t0 = time.perf_counter()
            for k, (v0, v1, a0, a1) in enumerate(batches):
                sb, cb = bufs[k % 2]
                stream = streams[k % 2]
                h0, h1 = int(heavy_at[k]), int(heavy_at[k + 1])
                hv = heavy[h0:h1]
                hgrid = max(1, min(h1 - h0, 65535))
                if be.sim:
                    sb[:a1 - a0] = host_src[a0:a1]
                    if has:
                        cb[:a1 - a0] = host_coef[a0:a1]
                else:
                    sb[:a1 - a0].set(host_src[a0:a1], stream=stream)
                    if has:
                        cb[:a1 - a0].set(host_coef[a0:a1], stream=stream)
                rest = (a0, in_off, sb, cb, has, src_scale, dst_scale, delta, delta_new, x, theta,
                        out_degree, scan)
                be.launch(K.linear_dense_batch, be.grid_hb(v1 - v0), _hb(), v0, v1, *rest,
                          stream=stream)
                if h1 > h0:
                    be.launch(K.linear_dense_batch_heavy, hgrid, _hb(), hv, *rest, stream=stream)
                stats["bytes_h2d"] += (a1 - a0) * (host_src.itemsize + (8 if has else 0))
            be.sync()
            stats["time_streamed_rounds"] = stats.get("time_streamed_rounds", 0.0) + \
                time.perf_counter() - t0
            r1, rmax, sx, absorbed, _ = (float(v) for v in be.get(scan))
            st.update(r1=r1, rmax=rmax, sx=sx, delta=delta_new, delta_new=delta)
            count_dense_round(stats, m, absorbed)

    outcome = driver.linear(Streamed(), n=n, gammas=gammas, normalize=sys.normalize, tol=tol,
                            max_iter=max_iter, stats=stats)
    return x, outcome == "converged"


def _path_linear(be, graph, sys, tol, max_iter, stats, ps, priority, proxy, settings=None,
                 gpu_settings=None):
    settings = PATH_DEFAULT if settings is None else settings
    gpu_settings = DEFAULT if gpu_settings is None else gpu_settings
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
    in-degree ``min_in_degree`` (default ``DEFAULT.proxy_min_in_degree``) or more."""
    min_in_degree = DEFAULT.proxy_min_in_degree if min_in_degree is None else min_in_degree
    from ..smx.cuda_kernels import PROXY_SLOTS
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


# ---------------------------------------------------------------------------- monotone


def _monotone_bsp(be, graph, sys, max_iter, stats):
    """``bsp`` on a min/max system: Jacobi rounds over the frontier (a snapshot of the values,
    the improved targets marked); ``vertex-async`` is :mod:`.cuda.one_gpu.worklist`."""
    K = _kernels()
    xp = be.xp
    g = _device_graph(be, graph)
    n = graph.num_vertices
    op, combine, has, value = monotone_arrays(graph, sys)
    x0, active0 = monotone_start(sys, n)
    x = be.put(x0)
    val = be.put(value)
    active = be.put(active0, np.uint8)
    mark = be.keep(xp.zeros(n, np.uint8))
    xs = be.keep(xp.empty(n, np.float64))
    st = {"active": active, "mark": mark}

    def scan():
        front = xp.flatnonzero(st["active"])
        nf, vol = be.scalars(front.size, g["out_degree"][front].sum() if front.size else 0)
        st.update(front=front, nf=int(nf), vol=int(vol))
        return int(nf)

    def step():
        front, nf = st["front"], st["nf"]
        xs[...] = x
        st["mark"][...] = 0
        args = (xs, g["out_offsets"], g["out_targets"], val, has, op, combine, x, st["mark"])
        be.launch(K.monotone_push, be.grid(nf), be.block, front, *args)
        be.heavy(K.monotone_push_heavy, g["heavy_out"], st["active"], *args)
        st["active"], st["mark"] = st["mark"], st["active"]
        stats["vertex_updates"] += int(be.scalars(st["active"].sum())[0])
        stats["sparse_rounds"] += 1
        stats["arc_updates"] += st["vol"]

    converged = driver.worklist(driver.Rounds(scan, step), max_iter=max_iter, stats=stats)
    return x, converged


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


# ---------------------------------------------------------------------------- h-index


def _hindex(be, graph, jacobi, max_iter, stats):
    K = _kernels()
    xp = be.xp
    off, nbr, deg, heavy = _device_undirected(be, graph)
    n = graph.num_vertices
    est = be.put(deg, np.int64)
    degs = be.put(deg, np.int64)
    front = xp.arange(n, dtype=np.int64)
    infront = be.keep(xp.ones(n, np.uint8))
    mark = be.keep(xp.zeros(n, np.uint8))
    spare = be.keep(est.copy()) if jacobi else est
    st = {"front": front, "est": est, "spare": spare, "mark": mark, "infront": infront}

    def step():
        front, est, spare, mark = st["front"], st["est"], st["spare"], st["mark"]
        mark[...] = 0
        if jacobi:
            spare[...] = est
        write = spare
        be.launch(K.hindex_round, be.grid(front.size), be.block, front, off, nbr, est, write, mark)
        be.heavy(K.hindex_round_heavy, heavy, st["infront"], off, nbr, est, write, mark)
        if jacobi:
            st["est"], st["spare"] = spare, est
        stats["vertex_updates"] += int(front.size)
        stats["arc_updates"] += int(be.scalars(degs[front].sum())[0])
        stats["dense_rounds" if front.size == n else "sparse_rounds"] += 1
        st["front"] = xp.flatnonzero(mark)
        st["infront"], st["mark"] = mark, st["infront"]

    converged = driver.worklist(driver.Rounds(lambda: st["front"].size, step), max_iter=max_iter,
                                stats=stats)
    return st["est"], converged
