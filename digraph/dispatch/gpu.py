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
(``gpu._device_graph``, ``gpu._Linear``, ``gpu._too_big``, ``gpu._units``, ...).  The settings
(:class:`GpuSettings`, :class:`GpuPathSettings`) are defined in :mod:`~.cuda.one_gpu.settings`
and re-exported here; a function called without settings takes the run's
(:func:`digraph.dispatch.settings.current`).
"""


from ..errors import InvalidParameterError
from .cuda.one_gpu.settings import DEFAULT, PATH_DEFAULT, GpuPathSettings, GpuSettings
from .settings import current
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

__all__ = ["solve", "backend", "device_index", "GpuSettings", "DEFAULT", "GpuPathSettings",
           "PATH_DEFAULT", "BackendSettings", "BACKEND"]




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
    gpu_settings = current(DEFAULT) if gpu_settings is None else gpu_settings
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
