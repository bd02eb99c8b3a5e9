"""``digraph.run``: one entry point for every algorithm, mode and device."""

import dataclasses
import time

import numba
import numpy as np

from . import compiling
from .algorithms import get as get_algorithm
from .checks import (check_checkpoint, check_cluster, check_device, check_path_options,
                     check_positive, check_removed, check_threads)
from .dispatch.engines.common import Request
from .dispatch.engines import execute
from .dispatch.placement import of as placement_of, on_cluster
from .dispatch import route as router
from .dispatch.route.modes import MODES, PATH_OPTIONS
from .dispatch.route import check_mode, restricts, route
from .dispatch.route.placing import cpu_threads, place
from .dispatch.settings import check as check_settings, current, using
from .errors import ConvergenceError
from .graph import Graph
from .interrupts import deferring
from .io.distributed import DistributedGraph
from .io.distributed_view import for_run, prepare as prepare_system
from .progress import target as progress_target, with_progress
from .result import Result, RunStats, group_internals

__all__ = ["run", "MODES"]

# validate -> plan (digraph.dispatch.route: the mode, the engine, the placement) -> the engine
# (digraph.dispatch.engines) -> finish: every choice is the router's.


@deferring
@with_progress
def run(graph, algorithm, *, mode=None, device="cpu", threads=None, max_iter=None, tol=None,
        priority=None, cache=None, preprocess=None, batch_arcs=None, short_path_push=None,
        layer_window=None, progress=False, settings=None, cluster=None, checkpoint_every=None,
        **params):
    """Run an iterative algorithm on a directed graph.

    Parameters
    ----------
    graph : Graph, path, networkx graph, arrays, scipy matrix or DistributedGraph
        Anything :func:`digraph.load` accepts; a non-Graph input is loaded first (``time_load``).
        A :class:`~digraph.io.distributed.DistributedGraph` (:func:`digraph.load_distributed`)
        runs on its cluster (``cluster=`` its client), on the workers holding its shards; its
        :attr:`Result.graph` then holds the vertices, not the arcs.
    algorithm : str or Algorithm
        ``"pagerank"``, ``"adsorption"``, ``"sssp"``, ``"kcore"``, or an instance of a subclass of
        :class:`digraph.algorithms.Algorithm`.
    mode : str, optional
        ``None`` (default): the router (:mod:`digraph.dispatch.route`) picks the fastest measured
        mode for the algorithm, device and graph, and says which and why in ``stats["mode"]``,
        ``stats["engine"]`` and ``stats["route"]``.  A named mode runs exactly that mode or raises:
        ``"scc"`` (CPU and one GPU, linear systems: strongly connected components solved one after
        another in the order of their DAG, one residual per vertex; with several GPUs named, each
        unit's components dealt over them, or on the first for graphs the sharded engines would run
        on one; the CPU default for PageRank, adsorption and other linear systems), ``"power"``
        (CPU, normalised linear systems such as PageRank: the Google-matrix power iteration with the
        rank-one dangling/teleport term, chosen automatically when one strongly connected component
        holds most arcs), ``"path"`` (DiGraph: paths walked one per thread, SCC-vertices of the DAG
        sketch in layer order, with priority scheduling; not k-core), ``"path-nopriority"`` (the
        same without priority, DiGraph-w), ``"vertex-async"`` (asynchronous worklist passes with
        atomic pushes, DiGraph-t; the default for SSSP and other min/max systems, and for k-core on
        GPUs), ``"bsp"`` (bulk-synchronous rounds over a frontier, Gunrock-like; the default for
        linear systems on GPUs), ``"peel"`` (k-core only, CPU: one exact peeling pass,
        Batagelj–Zaversnik or the parallel PKC, see :mod:`digraph.dispatch.engines.peel.cpu`; the
        CPU default for k-core) or ``"cluster"`` (SSSP and other min/max systems, one GPU: clusters
        of nearby vertices each relaxed to its local fixpoint in one thread block per round; the GPU
        default on road-like graphs, see :mod:`digraph.dispatch.engines.cluster.gpu`).
    device : str
        ``"cpu"`` (default) or ``"cuda"``/``"cuda:N"``: one NVIDIA GPU (needs numba-cuda and
        CuPy, ``pip install 'digraph-engine[cuda]'``; the same modes, answers and counters, see
        :mod:`digraph.dispatch.engines.one_gpu`).  ``"cuda:0,1,..."``: several GPUs of one host;
        ``bsp`` and ``vertex-async`` shard the graph over them
        (:mod:`digraph.dispatch.engines.push.gpus`), the path modes run the path dispatcher with one
        worker per GPU (:mod:`digraph.dispatch.engines.path.gpus`).
    threads : int, optional
        The most CPU threads the Numba kernels use (default: all of Numba's threads).  A graph
        with too few arcs to share among them runs on fewer, and a run on every core the
        process may use on many cores leaves one free
        (:func:`~digraph.dispatch.route.placing.cpu_threads`; ``stats["threads"]`` the threads
        used, ``stats["threads_asked"]`` the count it could use, ``stats["route"]["placed"]``
        why).
    max_iter : int, optional
        Round limit, from 1 to ``2**63 - 1`` (default: 10,000 for PageRank/adsorption, unlimited
        in practice for the others: ``n + 1`` rounds always suffice for SSSP and k-core).
    tol : float, optional
        PageRank/adsorption: bound on the L1 error of the answer, a positive finite number
        (default 1e-6).  Ignored by the exact algorithms.
    priority : {"pending", "paper", "none"}, optional
        Path modes: which active paths run first (default ``"pending"`` for ``mode="path"``,
        ``"none"`` for ``"path-nopriority"``); see :mod:`digraph.dispatch.engines.path.cpu`.
        ``"scc"``: ``"pending"`` (a soft priority by pending mass, the default) or ``"none"``.
    cache : path, optional
        Path modes: a preprocessing cache folder, reused when it fits the graph and parameters and
        (re)built otherwise.
    preprocess : dict, optional
        Path modes: parameters of :func:`digraph.preprocess` (``dmax``, ``merge``, ...) and
        ``jobs``; unknown keys and values out of range are refused before any work.
    short_path_push : int, optional
        CPU path modes: cold paths of at most this many arcs are not walked with per-arc mirrors
        but pushed at vertex level, one mirror per (partition, source vertex) group of their arcs
        (default 2, chosen by measurement; ``0`` walks every path with per-arc mirrors); hot paths
        and longer paths are always walked.  See :mod:`digraph.dispatch.engines.path.cpu`.
    layer_window : int, optional
        CPU path modes, linear algorithms: each round walks the lowest unfinished DAG layer and
        runs ahead into the next ``layer_window − 1`` layers (``0``: every higher layer; ``1``:
        layer by layer); a layer still finishes only as the lowest one.  Default
        :attr:`digraph.dispatch.engines.path.settings.PathSettings.layer_window` (1), chosen by
        measurement.
    batch_arcs : int, optional
        GPU, ``mode="bsp"``, linear algorithms: stream the in-arcs from host memory in batches of
        at most this many arcs, copy and compute overlapped on two CUDA streams (done
        automatically when the graph does not fit in GPU memory; see ``docs/gpu.md``).
    progress : bool or callable, optional
        ``True``: a progress bar of the rounds (:class:`digraph.progress.RoundBar`, tqdm: a
        widget in notebooks, else on stderr) with, for PageRank-like sums, the current bound on
        the error against ``tol``, and the frontier of worklist rounds; it appears only once the
        run has gone on for a second, and stays on screen at the end.  A callable is called as
        ``callback(rounds, bound, **info)`` each round instead (a ``RoundBar`` of your own
        stream, delay or description, closed at the end; see :mod:`digraph.progress`).
        Default ``False``: nothing is shown.
    cluster : distributed.Client, optional
        Run on the workers of a Dask cluster (``pip install 'digraph-engine[cluster]'``): the
        graph is cut into one vertex range a worker by in-arcs, each worker keeps its shard for
        later runs on the same graph, and each round's values and sums move worker to worker;
        the workers run the rounds in batches and stop where this process's driver stops, to
        which only each round's sums come.  This version runs linear
        systems (PageRank, adsorption: ``mode="power"`` or None), min/max systems (SSSP:
        ``mode="bsp"`` or None, the one-process answer and counters) and k-core (``mode="bsp"``
        or None, the h-index rounds over undirected neighbour lists: the exact core numbers and
        the one-process ``bsp``'s counters) on CPU workers; with ``device="cuda"`` each worker
        runs the power iteration's rounds on the first GPU it sees (start one worker a GPU, as
        dask-cuda does; workers without one are named in the error); other modes, the other
        families on GPUs, ``device="cuda:N"`` and ``threads=`` are refused.  A worker lost mid-run ends it with :class:`~digraph.errors.WorkerLostError` naming the worker (see
        ``docs/distributed.md`` and :mod:`digraph.dispatch.engines.power.cluster`), unless
        ``checkpoint_every`` is given.  Workers whose ``memory_limit`` is below their shard's
        estimated size are refused before anything is sent to them.
    checkpoint_every : int, optional
        With ``cluster=``: every this many rounds the client keeps a copy of the iterate (its
        ranges gathered from the workers; ``stats["dask"]``: ``checkpoints``,
        ``checkpoint_bytes``, ``checkpoint_s``), and a worker lost mid-run makes the run cut the
        graph again among the workers left, load their shards and go on from the last copy
        (``restarts``, ``lost_workers``, ``rounds_redone``); the answer is certified as
        without a restart.  Refused without ``cluster=``.
    settings : settings object or list of them, optional
        Engine settings for this run instead of the engines' defaults: for example
        ``[dataclasses.replace(S.DEFAULT, min_arcs_per_gpu=0)]``, ``S`` being
        :mod:`digraph.dispatch.runtime.cuda.shard_settings`, shards even a small graph over the
        GPUs named.  Each is an instance of an engine's settings class (``BspSettings``,
        ``MultiGpuSettings``, ...; :mod:`digraph.dispatch.settings`), at most one per class; the
        fields are documented on each class, with where their measurements are.
    **params
        The algorithm's parameters (``alpha``, ``personalization``, ``seeds``, ``beta``,
        ``source``, ``weights``); see each algorithm's docstring.

    Returns
    -------
    Result
        ``.values`` aligned with ``graph.vertex_ids``, ``.to_dict()``, ``.stats``, ``.top(k)``.
        A graph of no vertex has the empty answer, exact: converged in 0 rounds, and for linear
        systems ``error_bound`` 0.

    Raises
    ------
    InvalidParameterError, VertexNotFoundError, InvalidWeightError, NotAvailableError
        Bad parameters, unknown source/seed, refused weights, modes/devices not available (a
        ``cluster=`` without workers among the bad parameters).
    WorkerLostError
        ``cluster=``: a worker was lost or stopped answering mid-run (with
        ``checkpoint_every``: no worker left to restart on).
    ConvergenceError
        ``max_iter`` rounds did not reach ``tol``; the partial result is ``err.result``.

    Examples
    --------
    >>> import digraph
    >>> g = digraph.load(([0, 1, 2, 2], [1, 2, 0, 1]))
    >>> r = digraph.run(g, "pagerank", tol=1e-10)
    >>> round(sum(r.values), 6)
    1.0
    >>> digraph.run(g, "sssp", source=0).to_dict()
    {0: 0.0, 1: 1.0, 2: 2.0}
    """
    t_start = time.perf_counter()
    algo = get_algorithm(algorithm)
    mode = check_mode(mode)
    device = check_device(device)
    on = check_cluster(cluster, device, threads)
    checkpoint_every = check_checkpoint(checkpoint_every, cluster)
    threads = check_threads(threads)
    cache, preprocess = check_path_options(cache, preprocess)
    settings = check_settings(settings)
    t0 = time.perf_counter()
    if isinstance(graph, DistributedGraph):  # its shards on its workers: PageRank there
        graph, on = for_run(graph, algo, on)
    elif not isinstance(graph, Graph):
        from .io import load
        graph = load(graph)
    t_load = time.perf_counter() - t0

    check_removed(params)
    bound = algo.bind(graph, params)
    system = prepare_system(algo, graph, bound)
    tol = check_positive("tol", algo.default_tol if tol is None else tol, float)
    if system.family == "linear":
        progress_target(tol)  # a progress bar's 100 % (progress= is handled by @_with_progress)
    if max_iter is None:
        max_iter = algo.default_max_iter if system.family == "linear" else graph.num_vertices + 1
    max_iter = check_positive("max_iter", max_iter, int)

    with using(settings):  # the run's engine settings, if it passed some
        whole, restricted, t_reach = graph, None, 0.0
        if on is None and restricts(mode, system, device):  # the part b reaches: the answer is 0 elsewhere
            from .dispatch.reach import restrict
            t0 = time.perf_counter()
            restricted = restrict(graph, system, current(router.DEFAULT).reach_share)
            t_reach = time.perf_counter() - t0
            if restricted is not None:
                graph, system = restricted.graph, restricted.system

        nthreads = on[2] if on is not None else threads or numba.get_num_threads()
        fewer, threads_asked = None, nthreads
        if on is None and device == "cpu":  # the threads its arcs pay for
            nthreads, fewer = cpu_threads(graph.num_arcs, nthreads)
            threads = nthreads
        options = {"priority": priority, "cache": cache, "preprocess": preprocess,
                   "short_path_push": short_path_push, "layer_window": layer_window,
                   "batch_arcs": batch_arcs, "threads": threads,
                   "checkpoint_every": checkpoint_every}
        t0, c0 = time.perf_counter(), compiling.seconds()
        plan = route(system.family, mode, device, threads=nthreads,
                     graph=graph if system.family == "linear" or (
                         system.family == "monotone" and device != "cpu") else None,
                     path_options=[k for k in PATH_OPTIONS if options[k] is not None],
                     system=system if system.family == "linear" else None,
                     cluster=on is not None)
        placement = placement_of(device, nthreads) if on is None else on_cluster(*on)
        plan = place(plan, graph, system, placement, batch_arcs)
        if fewer is not None:
            plan = dataclasses.replace(plan, placed=plan.placed + (fewer,),
                                       threads_asked=threads_asked)
        c_route = compiling.seconds() - c0  # the one-pass bound's kernel, on a fresh install
        t_route = time.perf_counter() - t0 - c_route  # the condensation, when the choice needed it
        stats = RunStats.new(algorithm=algo.name, mode=plan.mode, device=device, threads=nthreads,
                             converged=False)
        plan.record(stats)
        stats["time_load"] = t_load
        stats["time_route"] = stats["time_preprocess"] = t_route + t_reach
        stats["time_compile"] = c_route
        if restricted is not None:
            stats["route"]["restricted"] = restricted.why(whole)
            stats["reach_vertices"] = int(restricted.vertices.size)
            stats["reach_arcs"] = restricted.arcs
        x, converged, mode = execute(Request(graph, algo, system, plan, tol, max_iter, stats,
                                             options))
        return _finish(graph, algo, bound, system, x, converged, tol, max_iter, mode,
                       plan.placement.device, stats, t_start)


def _finish(graph, algo, bound, system, x, converged, tol, max_iter, mode, device, stats, t_start):
    part = getattr(graph, "_part_of", None)
    if part is not None:  # solved where b reaches (dispatch/reach.py): 0 elsewhere, exactly
        from .dispatch.reach import expand
        x = expand(part, x)
        graph = part[0]
    if system.family == "hindex" and system.halve:
        x = x // 2  # every undirected edge was counted twice
    if system.family == "linear" and system.normalize and not algo.divides_by_sum:
        # LinearSystem(normalize=True) promises x / Σx, and its bound is on that (PageRank-like
        # algorithms whose finalize divides say so with divides_by_sum and do it themselves)
        from .algorithms.base import normalized
        x = normalized(np.array(x, dtype=np.float64))
    values = algo.finalize(graph, x, **bound)
    if graph.num_vertices == 0 and system.family == "linear":
        # the empty answer is exact: bound 0, whatever an engine made of an empty sum (inf)
        stats["error_bound"] = 0.0
        stats.pop("floor_limited", None)
        stats.pop("error_floor", None)
        converged = True
    bound_ = stats.get("error_bound")
    if converged and bound_ is not None and not bound_ <= tol and not stats.get("floor_limited"):
        # the contract of every engine: converged means error_bound <= tol, or floor_limited
        stats["certification_refused"] = True
        converged = False
    stats["converged"] = bool(converged)
    stats["time_total"] = time.perf_counter() - t_start
    group_internals(stats)
    used = dict(bound)
    used.update(tol=tol, max_iter=max_iter, mode=mode, device=device)
    result = Result(np.asarray(values, dtype=algo.value_dtype), graph, algo.name, used, stats)
    if not converged:
        extra = ""
        if "error_bound" in stats:
            extra = f" (error bound {stats['error_bound']:.3g} > tol {tol:.3g})"
        raise ConvergenceError(
            f"{algo.name} did not converge in max_iter={max_iter} rounds{extra}; "
            "raise max_iter or tol; the partial result is in .result", result)
    return result
