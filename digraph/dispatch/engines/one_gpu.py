"""The one-GPU placement (``device="cuda[:N]"``): :func:`solve` runs a mode's one-GPU engine, its
state resident, with the kernels of :mod:`digraph.smx.cuda.kernels`.

Arrays live on the GPU as CuPy arrays (reductions, compaction and sorting run in CuPy; the kernels
are Numba's and see the same memory through ``__cuda_array_interface__``).  Under Numba's CUDA
simulator (``NUMBA_ENABLE_CUDASIM=1``, how CI tests these kernels without a GPU) the same code
runs on numpy arrays.  All state is float64: the float32 state of the GPU peers cannot certify an
L1 error of 1e-8 on graphs of 10^5+ vertices.

Residency: a graph's CSR/CSC arrays (int32 indices where they fit) are uploaded once and kept on
the graph object, in its :class:`~digraph.dispatch.runtime.cuda.residency.Residency` (kind
``"cuda"``; ``graph._cache["cuda-residency"]``, which owns every GPU engine's device arrays of the
graph); a :class:`~digraph.PathSet`'s walk arrays likewise on the path set.
``stats["bytes_h2d"]``/``["bytes_d2h"]`` count every byte copied, and ``time_transfer`` the time
spent copying.

Modes, as on the CPU (same counters, same convergence rules):

* ``bsp`` — Jacobi rounds, dense pull when the frontier's out-arcs exceed ``m / dense_divisor``
  (:class:`~digraph.dispatch.engines.push.cpu_bsp.BspSettings`, shared with the CPU), sparse push otherwise;
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

Where each mode's one-GPU engine is: ``bsp`` and ``vertex-async`` in :mod:`.push`
(:mod:`~.push.gpu_linear`, :mod:`~.push.gpu_streamed`, :mod:`~.push.gpu_monotone`,
:mod:`~.push.gpu_worklist`), the path modes in :mod:`.path.gpu`, ``cluster`` in
:mod:`.cluster.gpu`, ``scc`` in :mod:`.scc.gpu` and ``power`` in :mod:`.power.gpu` (which
:mod:`.on_gpu` calls itself); the floor they stand on (backend, launch, residency, the graph's
device arrays) is :mod:`digraph.dispatch.runtime.cuda`.  Settings are passed to a run
(:mod:`digraph.dispatch.settings`): :class:`~.path.gpu_settings.GpuSettings` and
:class:`~.path.gpu_settings.GpuPathSettings` for the path modes,
:class:`~digraph.dispatch.runtime.cuda.backend.BackendSettings` for the backend.
"""


from ...errors import InvalidParameterError
from ..runtime.cuda.backend import backend, gpu_name
from ..runtime.cuda.device_graph import auto_batch, resident_graph, too_big
from ..settings import current
from .path.gpu import path_linear, path_monotone
from .path.gpu_settings import DEFAULT
from .push.gpu_linear import solve_linear
from .push.gpu_monotone import hindex, monotone_bsp
from .push.gpu_streamed import linear_streamed

__all__ = ["solve"]


def solve(graph, system, *, mode, tol, max_iter, stats, device="cuda", pathset=None,
          priority="pending", proxy=True, batch_arcs=None, settings=None,
          path_settings=None, gpu_settings=None, cluster_settings=None, scc_settings=None):
    """Run ``system`` on one GPU in ``mode``; returns (host state, converged).

    ``settings``: a :class:`~digraph.dispatch.engines.push.cpu_bsp.BspSettings` for ``bsp``'s direction switch
    (default: the CPU's); ``path_settings``: a :class:`GpuPathSettings` for the path modes;
    ``gpu_settings``: a :class:`GpuSettings` (default :data:`DEFAULT`: the path modes' units and
    proxies); ``cluster_settings``: a
    :class:`~digraph.dispatch.engines.cluster.gpu.ClusterSettings` for ``"cluster"``;
    ``scc_settings``: a :class:`~digraph.dispatch.engines.scc.gpu.GpuSccSettings` for ``"scc"``.

    ``batch_arcs``: stream the in-arcs from host memory in batches of at most this many arcs
    (``bsp`` on linear systems; chosen automatically when the arcs do not fit in free GPU memory).
    ``digraph.run`` sends ``bsp`` on large linear systems to the sharded engine as one shard
    instead (:attr:`GpuSettings.shard_arcs`); this function does not.
    """
    if mode not in ("bsp", "vertex-async", "path", "path-nopriority", "cluster", "scc"):
        raise InvalidParameterError(
            f"the GPU engine runs 'bsp', 'vertex-async', 'scc', 'cluster' and the path modes, not "
            f"mode={mode!r}"
            + (" (mode='power' is digraph.dispatch.engines.power.gpu)" if mode == "power" else ""))
    gpu_settings = current(DEFAULT) if gpu_settings is None else gpu_settings
    be = backend(device)
    be.stats = stats
    stats["gpu"] = "CUDA simulator" if be.sim else gpu_name(be)
    fam = system.family
    streamed = fam == "linear" and mode == "bsp" and bool(batch_arcs or too_big(be, graph))
    if fam == "hindex":
        if mode in ("path", "path-nopriority"):
            stats["note"] = "k-core runs vertex-async: its dependencies are undirected"
        x, ok = hindex(be, graph, mode == "bsp", max_iter, stats)
    elif fam == "linear":
        if mode == "scc":
            from .scc import gpu as scc
            x, ok = scc.solve(be, graph, system, tol=tol, max_iter=max_iter, stats=stats,
                              settings=scc_settings)
        elif mode in ("path", "path-nopriority"):
            x, ok = path_linear(be, graph, system, tol, max_iter, stats, pathset, priority, proxy,
                                 path_settings, gpu_settings)
        elif streamed:
            batch = int(batch_arcs or auto_batch(be, graph))
            x, ok = linear_streamed(be, graph, system, tol, max_iter, stats, batch)
        else:
            x, ok = solve_linear(be, graph, system, tol, max_iter, stats, mode == "bsp",
                            settings=settings)
    elif mode == "cluster":
        from .cluster import gpu as cluster
        x, ok = cluster.solve(be, graph, system, max_iter=max_iter, stats=stats,
                              settings=cluster_settings)
    elif fam == "monotone":
        if mode in ("path", "path-nopriority"):
            x, ok = path_monotone(be, graph, system, max_iter, stats, pathset,
                                   gpu_settings.unit_arcs, path_settings)
        elif mode == "vertex-async":  # the worklist kept on the GPU
            from .push import gpu_worklist as worklist
            x, ok = worklist.solve(be, graph, system, resident_graph(be, graph),
                                   max_iter=max_iter, stats=stats)
        else:
            x, ok = monotone_bsp(be, graph, system, max_iter, stats)
    else:
        raise InvalidParameterError(f"unknown system family {fam!r}")
    be.sync()
    out = be.get(x)
    be.release()
    return out, ok
