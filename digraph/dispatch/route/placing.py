"""Where a plan runs: :func:`place` narrows several GPUs named to those a run uses, makes one
GPU's large ``bsp`` run as one shard, and streams in ``bsp`` an automatic affine ``power`` run
whose graph does not fit in the GPU; :func:`cluster_plan` is the automatic plan on a Dask
cluster."""

import dataclasses

from ..engines.registry import find
from ..settings import current
from .modes import PATH_MODES
from .settings import DEFAULT

__all__ = ["place", "cluster_plan", "refuse_gpu_workers", "cpu_threads"]


def cpu_threads(arcs, threads, cores=None):
    """The CPU threads a run over ``arcs`` arcs uses of the ``threads`` it may use, under
    :class:`~.settings.RouteSettings`:

    * one for each ``thread_arcs`` arcs, at least one (``thread_arcs`` 0: no such cap).  Every
      round forks and joins its threads several times; below that many arcs a thread, the fork
      and join cost more than the thread's share of the arcs saves.  The rule is
      SuiteSparse:GraphBLAS's (``GxB_NTHREADS`` the most threads, ``GxB_CHUNK`` the work that
      earns one more; T. A. Davis, ACM TOMS 45(4), 2019);
    * one core left free when the run would take all ``cores`` the process may run on (its CPU
      affinity; None: read here) and ``T * core_stall > 1 / (T - 1)`` for those ``T`` threads.
      A round ends when its slowest thread does, and with every core taken, whatever else the
      host runs stops one of them: each core adds ``core_stall`` of a round's time, against the
      ``1 / (T - 1)`` that one thread fewer costs (``core_stall`` 0: never).

    Returns
    -------
    used : int
    placed : dict or None
        The decision for ``stats["route"]["placed"]`` (``code`` ``"fewer-threads"`` or
        ``"core-left-free"``, ``why``) when fewer threads run; None when all do.
    """
    from ...preprocess._parallel import resolve_jobs  # None: the cores of the CPU affinity
    settings = current(DEFAULT)
    threads = int(threads)
    per = int(settings.thread_arcs)
    used = max(1, -(-int(arcs) // per)) if per > 0 else threads
    if used < threads:
        return used, {"code": "fewer-threads",
                      "why": f"{used} of {threads} threads: one for each "
                             f"RouteSettings.thread_arcs ({per}) of the {arcs} arcs"}
    if threads > 1 and threads * settings.core_stall > 1 / (threads - 1) \
            and threads >= (resolve_jobs(None) if cores is None else cores):
        return threads - 1, {"code": "core-left-free",
                             "why": f"{threads - 1} of {threads} threads: every core the "
                                    "process may run on taken, one left free (RouteSettings."
                                    "core_stall)"}
    return threads, None


def place(plan, graph, system, placement, batch_arcs=None):
    """``plan`` on ``placement``: the GPUs a run uses among those named, and the engine there.

    On the CPU, on a Dask cluster and on one GPU the placement is the one asked for (one GPU:
    an engine whose registry row names the system's family in
    :attr:`~digraph.dispatch.engines.registry.Engine.one_shard`, ``bsp`` on linear systems, runs
    a graph of :attr:`~digraph.dispatch.engines.path.gpu_settings.GpuSettings.shard_arcs` arcs or
    more that fits in the GPU's memory as one shard of the sharded engine,
    :attr:`Plan.as_shard`: a leaner set-up and fused dense rounds; an automatic ``power`` run of
    a system that is not normalised, code ``affine-power-on-gpu``, whose graph does not fit in
    the GPU's memory or with ``batch_arcs`` runs ``bsp`` instead, which streams its arcs).  With
    several GPUs named:

    * ``power``: sharded over as many as the graph has
      :attr:`~digraph.dispatch.engines.power.gpu_settings.PowerGpuSettings.shard_arcs` arcs per
      GPU when that is two or more, else on the first GPU when the graph fits in its memory,
      else over all;
    * ``scc``, ``bsp``, ``vertex-async``: over as many as
      :func:`~digraph.dispatch.engines.push.gpus.gpus_to_use` says (arcs per GPU, families that
      shard), on the first GPU's one-GPU engine when that is one (the simple method it could
      have used; for ``bsp`` and ``vertex-async`` only while
      :attr:`~digraph.dispatch.runtime.cuda.shard_settings.MultiGpuSettings.min_arcs_per_gpu` is
      positive);
    * the path modes: the path dispatcher with one worker per GPU named.

    Parameters
    ----------
    plan : Plan
        From :func:`route`.
    graph : digraph.Graph
    system : LinearSystem, MonotoneSystem or HIndexSystem
    placement : digraph.dispatch.placement.Placement
        As asked for (:func:`digraph.dispatch.placement.of`).
    batch_arcs : int, optional
        ``digraph.run``'s ``batch_arcs=`` (streamed arcs: never as one shard).

    Returns
    -------
    Plan
        With :attr:`Plan.placement`, and ``engine`` and ``reason`` for the GPUs used.

    Raises
    ------
    NotAvailableError
        A GPU named is missing (CUDA, the device).
    """
    if placement.kind in ("cpu", "cluster"):
        return dataclasses.replace(plan, placement=placement)
    from ..runtime.cuda.backend import backend
    from ..runtime.cuda import device_graph
    from ..engines.path import gpu_settings
    if placement.kind == "gpus" and plan.mode not in PATH_MODES:
        plan = _narrow(plan, graph, system, placement)
    else:
        plan = dataclasses.replace(plan, placement=placement)
    if plan.code == "affine-power-on-gpu" and plan.placement.kind == "gpu" and (
            batch_arcs is not None or device_graph.too_big(backend(plan.placement.device), graph)):
        plan = dataclasses.replace(
            plan, mode="bsp", engine=f"{plan.placement.where}-bsp", code="streamed",
            reason="automatic: " + ("batch_arcs= given" if batch_arcs is not None else
                                    "the graph does not fit in the GPU's memory")
            + ": bsp streams its arcs from the host")
    engine = find(plan.mode, plan.placement.kind)
    if engine is not None and system.family in engine.one_shard and batch_arcs is None \
            and graph.num_arcs >= current(gpu_settings.DEFAULT).shard_arcs \
            and not device_graph.too_big(backend(plan.placement.device), graph):
        plan = dataclasses.replace(plan, as_shard=True, placed=plan.placed + (
            {"code": "one-shard", "why": "run as one shard of the sharded engine (GpuSettings."
                                         "shard_arcs arcs or more, and the graph fits)"},))
    return plan


def cluster_plan(family, graph, system):
    """The automatic plan on a Dask cluster (``cluster=``): the power iteration for a linear
    system (the Google matrix's for a normalised one, else the affine map's), ``bsp`` rounds for
    a min/max system (SSSP) and the h-index ``bsp`` rounds for k-core, else
    :class:`~digraph.errors.InvalidParameterError` naming what runs there."""
    from ...errors import InvalidParameterError
    from .plans import Plan
    if family == "monotone":
        return Plan("bsp", "dask-bsp", "automatic: bsp rounds are the engine of min/max systems "
                    "on a Dask cluster (each worker pulls its range, the changed entries move "
                    "worker to worker)", code="cluster-bsp")
    if family == "hindex":
        return Plan("bsp", "dask-bsp", "automatic: the h-index bsp rounds are the engine of "
                    "k-core on a Dask cluster (each worker recomputes its range from its "
                    "undirected neighbour lists, the estimates that fell move worker to "
                    "worker)", code="cluster-hindex")
    why = None
    if family != "linear":
        why = f"the {family} family does not run there yet; run it without cluster="
    elif system is not None and graph is not None:
        from ..engines.power import refusal
        why = refusal(graph, system, "cluster")
        why = why and f"the power iteration cannot run this system: {why}"
    if why:
        raise InvalidParameterError("cluster= runs linear systems (PageRank, adsorption and the "
                                    "like) by mode='power', min/max systems (SSSP and the "
                                    f"like) and k-core by mode='bsp' so far; {why}")
    return Plan("power", "dask-power", "automatic: the power iteration is the engine of linear "
                "systems on a Dask cluster", code="cluster-power")


def refuse_gpu_workers(family, mode, system):
    """:class:`~digraph.errors.InvalidParameterError` for what GPU workers of a Dask cluster
    (``cluster=`` with ``device="cuda"``) do not run: anything but the power iteration of a
    linear system without a dangling vector."""
    from ...errors import InvalidParameterError
    why = None
    if family != "linear":
        why = (f"the {family} family runs on the workers' CPUs only (bsp rounds); pass "
               "device='cpu'")
    elif mode not in (None, "power"):
        why = f"mode={mode!r} does not run there; the power iteration does (mode='power')"
    elif system is not None and getattr(system, "dangling", None) is not None:
        why = "a dangling vector (dangling=) runs on the workers' CPUs only; pass device='cpu'"
    if why:
        raise InvalidParameterError("cluster= with device='cuda' runs the power iteration of "
                                    f"linear systems on each worker's GPU; {why}")


def _narrow(plan, graph, system, placement):
    """The GPUs of ``placement`` (several named) that ``plan`` uses: see :func:`place`."""
    from ..engines.push import gpus as multi_gpu
    from ..engines.power.gpu_settings import POWER_DEFAULT
    from ..runtime.cuda.backend import backend
    from ..runtime.cuda import device_graph
    from ..runtime.cuda import shard_settings
    devices = placement.devices
    for d in devices[1:] + devices[:1]:
        be = backend(d)  # NotAvailableError naming a GPU that is missing; the first last
    n, mode = len(devices), plan.mode
    if mode == "power":
        per = current(POWER_DEFAULT).shard_arcs
        k = n if per <= 0 else min(n, graph.num_arcs // per)
        if k >= 2:
            code, why = "sharded", (f"sharded over {k} of the {n} GPUs named (at least {per:,} "
                                    f"arcs a GPU)" if k < n else f"sharded over the {k} GPUs named")
        elif not device_graph.too_big(be, graph):  # the first GPU's memory
            k, code, why = 1, "first-gpu", (
                f"on the first GPU named: fewer than {per:,} arcs a GPU for two (the sharded "
                "rounds' exchange would cost more than they split)")
        else:
            k, code, why = n, "too-big", ("the graph does not fit in one GPU's memory: sharded "
                                          "over every GPU named")
    else:
        per = current(shard_settings.DEFAULT).min_arcs_per_gpu
        k = multi_gpu.gpus_to_use(graph, system, devices)
        if mode == "scc" and k > 1:
            code, why = "sharded", (f"each unit's components dealt over {k} GPUs (DAG "
                                    f"dispatcher, at least {per:,} arcs a GPU)")
        elif mode == "scc":
            code, why = "first-gpu", (f"on the first GPU named: fewer than {per:,} arcs a GPU for "
                                      "two (the sharded engines would use one GPU too)")
        elif k == 1 and per > 0:
            code, why = "first-gpu", "on the first GPU named: the sharded engine would use one GPU"
        else:  # the sharded engine cuts its own shards among the GPUs named
            k, code, why = n, "sharded", "sharded over the GPUs named"
    used = placement.take(k)
    return dataclasses.replace(plan, placement=used, engine=f"{used.where}-{mode}", gpus_named=n,
                               placed=plan.placed + ({"code": code, "why": why},))
