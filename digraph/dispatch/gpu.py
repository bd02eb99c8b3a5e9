"""The GPU engine's host side (``device="cuda"``): residency, launch shapes and the driving loop of
every mode on one GPU, with the kernels of :mod:`digraph.smx.cuda_kernels`.

Arrays live on the GPU as CuPy arrays (reductions, compaction and sorting run in CuPy; the kernels
are Numba's and see the same memory through ``__cuda_array_interface__``).  Under Numba's CUDA
simulator (``NUMBA_ENABLE_CUDASIM=1``, how CI tests these kernels without a GPU) the same code
runs on numpy arrays.  All state is float64: the float32 state of the GPU peers cannot certify an
L1 error of 1e-8 on graphs of 10^5+ vertices.

Residency: a graph's CSR/CSC arrays (int32 indices where they fit) are uploaded once and kept on
the graph object, in its :class:`~digraph.dispatch.cuda.runtime.residency.Residency` (kind
``"cuda"``; ``graph._cache["cuda-residency"]``, which owns every GPU engine's device arrays of the
graph); a :class:`~digraph.PathSet`'s walk arrays likewise on the path set.
``stats["bytes_h2d"]``/``["bytes_d2h"]`` count every byte copied, and ``time_transfer`` the time
spent copying.

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

Where the code is (issue 18, item 5): this module keeps the settings (:class:`GpuSettings`,
:data:`DEFAULT`, :class:`GpuPathSettings`) and :func:`solve`; the engines are in
``digraph/dispatch/cuda/one_gpu/``: :mod:`~.cuda.one_gpu.device_graph` (residency),
:mod:`~.cuda.one_gpu.linear` (linear ``bsp`` / ``vertex-async``), :mod:`~.cuda.one_gpu.streamed`
(``bsp`` with the arcs streamed from the host), :mod:`~.cuda.one_gpu.paths` (the path modes),
:mod:`~.cuda.one_gpu.monotone` (min/max ``bsp`` and h-index), with :mod:`~.cuda.one_gpu.worklist`,
:mod:`~.cuda.one_gpu.cluster` and :mod:`~.cuda.one_gpu.scc`.  Their names are re-exported here
(``gpu._device_graph``, ``gpu._Linear``, ``gpu._too_big``, ``gpu._units``, ...); a function of
those modules called without settings reads ``gpu.DEFAULT`` / ``gpu.PATH_DEFAULT`` at the call
(:mod:`~.cuda.one_gpu.defaults`), so replacing them here still reaches it.
"""

from dataclasses import dataclass

from ..errors import InvalidParameterError
from .paths import PathSettings
# the runtime below the engines, re-exported under its old names (gpu.backend, gpu._Backend, ...);
# BACKEND and _BACKENDS are read from runtime.backend: patch them there, not here
from .cuda.runtime.backend import BACKEND, BackendSettings, _Backend, _BACKENDS  # noqa: F401
from .cuda.runtime.backend import backend, device_index, _gpu_name
from .cuda.runtime.launch import _SCALARS, _PreparedLaunch, _core_launch  # noqa: F401
# the helpers shared with the sharded engines, re-exported (gpu._kernels, gpu.contraction_sums, ...)
from .cuda.common import (column_sums_known, contraction_sums, count_dense_round,  # noqa: F401
                          hb as _hb, index_dtype as _index_dtype, kernels as _kernels)
# the engines (digraph/dispatch/cuda/one_gpu/), re-exported under their old names
# (gpu._device_graph, gpu._too_big, gpu._Linear, gpu._linear, gpu._units, ...)
from .cuda.one_gpu.device_graph import (_auto_batch, _device_graph,  # noqa: F401
                                        _device_undirected, _heavy, _too_big)
from .cuda.one_gpu.linear import _Linear, _LinearRounds, _degree_scaled, _linear  # noqa: F401
from .cuda.one_gpu.monotone import _hindex, _monotone_bsp
from .cuda.one_gpu.paths import (_check_pathset, _device_paths, _group_paths,  # noqa: F401
                                 _path_linear, _path_monotone, _proxies, _Rounds, _units)
from .cuda.one_gpu.streamed import _batches, _linear_streamed  # noqa: F401

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
        (docs/history/benchmarks-notebook.md, "Several GPUs: PageRank sharded over 1, 2 and 4 GPUs", "One shard
        on one GPU").  The crossover between 3.2 M and 268 M arcs was not looked for.
    unit_arcs : int
        Arcs per thread of the path kernels: consecutive short paths of one layer (one partition,
        for :mod:`~digraph.dispatch.gpu_workers`) are grouped into a unit of at least this many
        (DiGraph's Figure 5).  Measured on an H200 (``bench_gpu_path_rounds.py``,
        docs/history/benchmarks-notebook.md, "Rounds queued on the device"): 8 against 1, 2 and 16 arcs,
        cnr-2000 43.8 ms against 70.3 / 53.5 / 44.5, dblp-2010 37.6 against 70.1 / 54.3 / 34.7
        (a thread a path makes each unit's score, histogram and counters an arc's worth of
        work).  Again after the walk's fixed costs were cut, with proxies from 1024: 1, 2 and 4
        arcs gave the small graphs no time (wiki-Vote 3.85 / 3.80 / 3.81 against 3.94 ms) and
        cost dblp-2010 rounds (202 / 183 / 179 against 127).
    proxy_min_in_degree : int
        Vertices with at least this in-degree (the highest
        :data:`~digraph.smx.cuda_kernels.PROXY_SLOTS` of them) get proxies in the path modes
        (``proxy=True``).  A proxy's add is a compare-and-swap loop in shared memory (float64 has
        no shared-memory atomic add on sm_90: ``ATOMS.CAST.SPIN.64`` in the walk's SASS), while
        a plain add to ``x`` is a reduction in L2 (``REDG.E.ADD.F64``) that only queues up when
        thousands of arcs hit one vertex a round.  Measured on an H200
        (``bench_gpu_path_rounds.py``, docs/history/benchmarks-notebook.md, "The walk's fixed costs"), 1024
        against the old 64: wiki-Vote (hubs of in-degree 113–457) 3.88 against 4.37 ms,
        cit-HepPh (169–846) 4.49 against 4.87, dblp-2010 (103–238) 10.8 against 11.5;
        cnr-2000's top 128 all have in-degree 1,311 or more and keep their proxies (18.2 ms;
        26.1 without any).  No graph measured has hubs between 846 and 1,311.
    """

    shard_arcs: int = 32 << 20
    unit_arcs: int = 8
    proxy_min_in_degree: int = 1024


DEFAULT = GpuSettings()


@dataclass(frozen=True)
class GpuPathSettings:
    """How the GPU path modes schedule their units.  ``select_share``, ``aging_rounds``,
    ``max_sweeps`` and ``stall_rounds`` mean what they mean for the CPU path modes and take their
    defaults from :class:`~digraph.dispatch.paths.PathSettings` (one value for both devices).
    ``select_share`` was measured on an H200 (docs/history/benchmarks-notebook.md, "Rounds queued on the
    device"): 0.2 is best on cnr-2000 (22.8 ms against 25.3 / 26.6 at 0.5 / 0.8) and worst on
    dblp-2010 (16.2 against 13.3 / 12.6) and wiki-Vote, so no value wins everywhere and the
    CPU's stays; the others have no GPU measurement.  ``min_priority_units``: below this many
    active units a round walks them all (not measured: chosen as the GPU's counterpart of the
    CPU's ``min_priority_paths``).  ``rounds_per_check``:
    rounds queued on the GPU between two reads of the control words (the rounds' one
    synchronisation; :mod:`digraph.smx.cuda_path_rounds`): a run queues at most this many rounds
    past its last, each a no-op launch pair of a few microseconds; 32 against 8 made no
    difference on cnr-2000 (43.9 against 43.8 ms, H200).  A kept work replays these rounds as
    one CUDA graph (:mod:`digraph.dispatch.cuda.one_gpu.path_work`)."""

    select_share: float = PathSettings.select_share
    min_priority_units: int = 4096
    aging_rounds: int = PathSettings.aging_rounds
    max_sweeps: int = PathSettings.max_sweeps
    stall_rounds: int = PathSettings.stall_rounds
    rounds_per_check: int = 8


PATH_DEFAULT = GpuPathSettings()


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
                                   gpu_settings.unit_arcs, path_settings)
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
