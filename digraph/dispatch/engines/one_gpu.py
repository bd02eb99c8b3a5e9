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
  (:class:`~.push.cpu_bsp.BspSettings`, shared with the CPU), sparse push otherwise;
* ``vertex-async`` — passes over the worklist of active vertices with atomic pushes;
* ``peel`` — k-core by PKC's levels in one launch (:mod:`.peel.gpu`);
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
from .registry import find

__all__ = ["solve"]


def solve(graph, system, *, mode, tol, max_iter, stats, device="cuda", **options):
    """Run ``system`` on one GPU in ``mode``; returns (host state, converged).

    ``options``, each taken by the modes it names: ``settings`` (a
    :class:`~.push.cpu_bsp.BspSettings` for ``bsp``'s direction switch,
    default the CPU's); ``batch_arcs`` (``bsp`` on linear systems: stream the in-arcs from host
    memory in batches of at most this many arcs, chosen automatically when the arcs do not fit in
    free GPU memory); ``pathset``, ``priority``, ``proxy``, ``path_settings`` (a
    :class:`~.path.gpu_settings.GpuPathSettings`) and ``gpu_settings`` (a
    :class:`~.path.gpu_settings.GpuSettings`: units and proxies) for the
    path modes; ``cluster_settings`` (a
    :class:`~.cluster.gpu.ClusterSettings`) for ``"cluster"``;
    ``scc_settings`` (a :class:`~.scc.gpu.GpuSccSettings`) for ``"scc"``.
    ``digraph.run`` sends ``bsp`` on large linear systems to the sharded engine as one shard
    instead (:attr:`~.path.gpu_settings.GpuSettings.shard_arcs`); this
    function does not.
    """
    engine = find(mode, "gpu")
    if engine is None or not engine.resident:
        raise InvalidParameterError(
            f"the GPU engine runs 'bsp', 'vertex-async', 'scc', 'cluster', 'peel' and the path "
            f"modes, not "
            f"mode={mode!r}" + ("" if engine is None else
                                f" (mode={mode!r} is digraph.dispatch.engines."
                                f"{engine.entry.split(':')[0]})"))
    be = backend(device)
    be.stats = stats
    stats["gpu"] = "CUDA simulator" if be.sim else gpu_name(be)
    x, ok = engine.load()(be, graph, system, mode=mode, tol=tol, max_iter=max_iter, stats=stats,
                          options=options)
    be.sync()
    out = be.get(x)
    be.release()
    return out, ok
