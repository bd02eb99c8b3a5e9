"""``digraph.run``: one entry point for every algorithm, mode and device."""

import functools
import math
import time
from contextlib import contextmanager

import numpy as np

from . import compiling
from .algorithms import get as get_algorithm
from .errors import ConvergenceError, InvalidParameterError, short_repr
from .graph import Graph
from .interrupts import deferring
from .dispatch.route import MODES, PATH_MODES, check_mode, pathset_key, route
from .progress import listening, target as _progress_target
from .result import Result, RunStats

__all__ = ["run", "MODES"]

# Which mode runs, and why, is decided by the router (digraph.dispatch.route).


def _with_progress(run):
    """``run(..., progress=)``: the whole call reports its rounds (:mod:`digraph.progress`) to a
    :class:`~digraph.progress.RoundBar` (``True``) or to the listener given, and a RoundBar is
    closed when the run ends, however it ends."""
    @functools.wraps(run)
    def with_progress(*args, progress=False, **kwargs):
        if isinstance(progress, np.bool_):
            progress = bool(progress)
        if progress is False or progress is None:
            return run(*args, **kwargs)
        from .progress import RoundBar
        if progress is True:
            progress = RoundBar()
        elif not callable(progress):
            raise InvalidParameterError(f"progress must be True, False or a listener "
                                        f"(a digraph.progress.RoundBar), got {short_repr(progress)}")
        bar = progress if isinstance(progress, RoundBar) else None
        try:
            with listening(progress):
                result = run(*args, **kwargs)
            _last_round(bar, result)
            return result
        except ConvergenceError as e:
            _last_round(bar, e.result)
            raise
        finally:
            if bar is not None:
                bar.close()
    return with_progress


def _last_round(bar, result):
    """A RoundBar's last state: the run's rounds and certified bound, which its last report may
    precede (a final certificate)."""
    if bar is not None and result is not None:
        bar(result.stats.get("rounds", 0), result.stats.get("error_bound"))


@deferring
@_with_progress
def run(graph, algorithm, *, mode=None, device="cpu", threads=None, max_iter=None, tol=None,
        priority=None, cache=None, preprocess=None, batch_arcs=None, short_path_push=None,
        layer_window=None, progress=False, **params):
    """Run an iterative algorithm on a directed graph.

    Parameters
    ----------
    graph : Graph, path, networkx graph, arrays or scipy matrix
        Anything :func:`digraph.load` accepts; a non-Graph input is loaded first (``time_load``).
    algorithm : str or Algorithm
        ``"pagerank"``, ``"adsorption"``, ``"sssp"``, ``"kcore"``, or an instance of a subclass of
        :class:`digraph.algorithms.Algorithm`.
    mode : str, optional
        ``None`` (default): the router (:mod:`digraph.dispatch.route`) picks the fastest measured
        mode for the algorithm, device and graph, and says which and why in ``stats["mode"]``,
        ``stats["engine"]`` and ``stats["route"]``.  A named mode runs exactly that mode or
        raises: ``"scc"`` (CPU and one GPU, linear systems: strongly connected components
        solved one after another in the order of their DAG, one residual per vertex; with
        several GPUs named, each unit's components dealt over them, or on the first for graphs
        the sharded engines would run on one; the CPU default for
        PageRank, adsorption and other linear systems), ``"power"`` (CPU, normalised linear
        systems such as PageRank: the Google-matrix power iteration with the rank-one
        dangling/teleport term, chosen automatically when one strongly connected component holds
        most arcs), ``"path"`` (DiGraph: paths walked one per
        thread, SCC-vertices of the DAG sketch in layer order, with priority scheduling; not
        k-core), ``"path-nopriority"`` (the same without priority, DiGraph-w),
        ``"vertex-async"`` (asynchronous worklist passes with atomic pushes, DiGraph-t; the
        default for SSSP and other min/max systems, and for k-core on GPUs), ``"bsp"``
        (bulk-synchronous rounds over a frontier, Gunrock-like; the default for linear systems
        on GPUs), ``"peel"`` (k-core only, CPU: one exact peeling pass, Batagelj–Zaversnik or
        the parallel PKC, see :mod:`digraph.dispatch.peel`; the CPU default for k-core) or
        ``"cluster"`` (SSSP and other min/max systems, one GPU: clusters of nearby vertices each
        relaxed to its local fixpoint in one thread block per round; the GPU default on
        road-like graphs, see :mod:`digraph.dispatch.cuda.one_gpu.cluster`).
    device : str
        ``"cpu"`` (default) or ``"cuda"``/``"cuda:N"``: one NVIDIA GPU (needs numba-cuda and
        CuPy, ``pip install 'digraph-engine[cuda]'``; the same modes, answers and counters, see
        :mod:`digraph.dispatch.gpu`).  ``"cuda:0,1,..."``: several GPUs of one host; ``bsp``
        and ``vertex-async`` shard the graph over them (:mod:`digraph.dispatch.multi_gpu`), the
        path modes run the path dispatcher with one worker per GPU
        (:mod:`digraph.dispatch.multi`).
    threads : int, optional
        CPU threads for the Numba kernels (default: all of Numba's threads).
    max_iter : int, optional
        Round limit, from 1 to ``2**63 - 1`` (default: 10,000 for PageRank/adsorption, unlimited
        in practice for the others: ``n + 1`` rounds always suffice for SSSP and k-core).
    tol : float, optional
        PageRank/adsorption: bound on the L1 error of the answer, a positive finite number
        (default 1e-6).  Ignored by the exact algorithms.
    priority : {"pending", "paper", "none"}, optional
        Path modes: which active paths run first (default ``"pending"`` for ``mode="path"``,
        ``"none"`` for ``"path-nopriority"``); see :mod:`digraph.dispatch.paths`.  ``"scc"``:
        ``"pending"`` (a soft priority by pending mass, the default) or ``"none"``.
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
        and longer paths are always walked.  See :mod:`digraph.dispatch.paths`.
    layer_window : int, optional
        CPU path modes, linear algorithms: each round walks the lowest unfinished DAG layer and
        runs ahead into the next ``layer_window − 1`` layers (``0``: every higher layer; ``1``:
        layer by layer); a layer still finishes only as the lowest one.  Default
        :attr:`digraph.dispatch.paths.PathSettings.layer_window` (1), chosen by measurement.
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
        Bad parameters, unknown source/seed, refused weights, modes/devices not available.
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
    device = _check_device(device)
    threads = _check_threads(threads)
    cache, preprocess = _check_path_options(cache, preprocess)
    t0 = time.perf_counter()
    if not isinstance(graph, Graph):
        from .io import load
        graph = load(graph)
    t_load = time.perf_counter() - t0

    if "state" in params:
        raise InvalidParameterError(
            "state= was removed: mode='scc' is the SCC engine with one residual per vertex (the old "
            "state='vertex'), mode='path' walks the paths (the old state='arc')")
    bound = algo.bind(graph, params)
    system = algo.prepare(graph, **bound)
    if tol is None:
        tol = algo.default_tol
    tol = _check_positive("tol", tol, float)
    if system.family == "linear":
        _progress_target(tol)  # a progress bar's 100 % (progress= is handled by @_with_progress)
    if max_iter is None:
        max_iter = algo.default_max_iter if system.family == "linear" else graph.num_vertices + 1
    max_iter = _check_positive("max_iter", max_iter, int)

    whole, restricted = graph, None
    if mode is None and system.family == "linear" and (device == "cpu" or not system.normalize):
        # the part b reaches: the answer is 0 elsewhere (digraph.dispatch.reach; on GPUs not
        # for PageRank, whose power rounds on a small part cost their launches all the same)
        from .dispatch import route as route_settings
        from .dispatch.reach import restrict
        t0 = time.perf_counter()
        restricted = restrict(graph, system, route_settings.DEFAULT.reach_share)
        t_reach = time.perf_counter() - t0
        if restricted is not None:
            graph, system = restricted.graph, restricted.system

    import numba
    nthreads = threads or numba.get_num_threads()
    given = {"cache": cache, "preprocess": preprocess, "short_path_push": short_path_push,
             "layer_window": layer_window}
    if mode != "scc":  # the SCC engine takes a priority too
        given["priority"] = priority
    t0 = time.perf_counter()
    c0 = compiling.seconds()
    plan = route(system.family, mode, device, threads=nthreads,
                 graph=graph if system.family == "linear" or (
                     system.family == "monotone" and device != "cpu") else None,
                 path_options=[k for k, v in given.items() if v is not None],
                 system=system if system.family == "linear" else None)
    c_route = compiling.seconds() - c0  # the one-pass bound's kernel, on a fresh install
    t_route = time.perf_counter() - t0 - c_route  # the condensation, when the choice needed it
    mode = plan.mode
    stats = RunStats.new(algorithm=algo.name, mode=mode, device=device, threads=nthreads,
                         converged=False)
    plan.record(stats)
    stats["time_load"] = t_load
    stats["time_route"] = t_route
    stats["time_preprocess"] = t_route
    stats["time_compile"] = c_route
    if restricted is not None:
        stats["route"] = f"{restricted.why(whole)}; {stats['route']}"
        stats["reach_vertices"] = int(restricted.vertices.size)
        stats["reach_arcs"] = restricted.arcs
        stats["time_route"] += t_reach
        stats["time_preprocess"] += t_reach
    if device != "cpu":
        if short_path_push is not None or layer_window is not None:
            raise InvalidParameterError("short_path_push= and layer_window= apply to the CPU path modes; "
                                        "the GPU path engine walks every path (docs/gpu.md)")
        return _run_gpu(graph, algo, bound, system, plan, device, tol, max_iter, priority, cache,
                        preprocess, stats, t_start, batch_arcs)
    if batch_arcs is not None:
        raise InvalidParameterError("batch_arcs= applies to device='cuda' only")
    with _numba_threads(threads):
        t0 = time.perf_counter()
        _warm_up(mode, system.family, graph, system)
        stats["time_compile"] += time.perf_counter() - t0
        extra = {}
        t0 = time.perf_counter()
        c0 = compiling.seconds()
        if mode == "scc":
            from .paths.condensation import condensation_for
            condensation_for(graph)
            extra["priority"] = _priority(mode, priority)
            stats["time_preprocess"] += time.perf_counter() - t0
        elif mode in PATH_MODES:
            from .dispatch.paths import check_layer_window, check_short_path_push
            extra["priority"] = _priority(mode, priority)
            extra["state"] = "arc"
            extra["pathset"] = _pathset(graph, cache, preprocess)
            extra["short_path_push"] = check_short_path_push(short_path_push)
            extra["layer_window"] = check_layer_window(layer_window)
            stats["time_preprocess"] += time.perf_counter() - t0
        _move_compile(stats, c0, "time_preprocess")  # the condensation's or preprocessing's kernels
        t0 = time.perf_counter()
        c0 = compiling.seconds()
        if plan.probe is not None:
            x, converged, mode, aside, c_aside = _probe_then(plan, graph, system, tol, max_iter,
                                                             nthreads, stats)
        else:
            x, converged = _solve_dual_or(_engine(mode).solve, graph, system, tol, max_iter, stats, extra)
            aside = c_aside = 0.0
        stats["time_compute"] = time.perf_counter() - t0 - aside
        _move_compile(stats, c0 + c_aside, "time_compute")  # kernels first called mid-run
    return _finish(graph, algo, bound, system, x, converged, tol, max_iter, mode, device, stats,
                   t_start)


def _probe_then(plan, graph, system, tol, max_iter, nthreads, stats):
    """The automatic power probe (:attr:`digraph.dispatch.route.RouteSettings.probe_share`): (x,
    converged, mode that answered, seconds spent routing and compiling, Numba's compile seconds
    among them).  A probe that trips hands over to :func:`~digraph.dispatch.route.after_probe`,
    whose plan is recorded in ``stats``; its compilation counts in ``time_compile``, the
    condensation the SCC engine builds in ``time_preprocess``, the probe's rounds in the counters
    (and ``probe_rounds``)."""
    from .dispatch import power
    from .dispatch.route import after_probe
    x, converged = power.solve(graph, system, tol=tol, max_iter=max_iter, stats=stats, trip=plan.probe)
    if converged is not None:
        return x, converged, plan.mode, 0.0, 0.0
    t0 = time.perf_counter()
    c0 = compiling.seconds()
    new = after_probe(plan, graph, nthreads, stats)
    new.record(stats)
    _warm_up(new.mode, system.family, graph, system)
    t_compile = time.perf_counter() - t0
    stats["time_compile"] += t_compile
    extra = {}
    if new.mode == "scc":
        from .paths.condensation import condensation_for
        t0 = time.perf_counter()
        c1 = compiling.seconds()
        condensation_for(graph)
        t_compile += time.perf_counter() - t0
        stats["time_preprocess"] += time.perf_counter() - t0
        _move_compile(stats, c1, "time_preprocess")
        extra["priority"] = "pending"
    c_aside = compiling.seconds() - c0
    x, converged = _engine(new.mode).solve(graph, system, tol=tol, max_iter=max_iter, stats=stats, **extra)
    return x, converged, new.mode, t_compile, c_aside


def _move_compile(stats, c0, key):
    """Move the seconds Numba compiled since ``c0`` (:func:`digraph.compiling.seconds`) from
    ``stats[key]`` to ``time_compile``: a kernel first called mid-phase is compilation, not work."""
    c = compiling.seconds() - c0
    if c > 0.0:
        c = min(c, stats[key])
        stats[key] -= c
        stats["time_compile"] += c


def _solve_dual_or(solve, graph, system, tol, max_iter, stats, extra):
    """``solve``, on the system rescaled by its dual weights when its columns may sum to 1 or more
    (adsorption: :mod:`digraph.dispatch.dual_bound`; the weights and the final certificate are
    computed on the host)."""
    if system.family == "linear" and not system.normalize:
        from .dispatch.convergence import quick_contraction
        from .dispatch.dual_bound import solve_scaled
        gammas = quick_contraction(graph, system)
        out = solve_scaled(solve, graph, system, gammas, tol=tol, max_iter=max_iter, stats=stats,
                           **extra)
        if out is not None:
            return out
        import copy
        system = copy.copy(system)  # the caller's system stays as it was
        system.error_gammas = gammas  # summed once: the engine need not pass over the arcs again
    return solve(graph, system, tol=tol, max_iter=max_iter, stats=stats, **extra)


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


# ---------------------------------------------------------------------------- checks

def _check_device(device):
    if device is None:
        return "cpu"
    if not isinstance(device, str):
        raise InvalidParameterError(f"device must be a string such as 'cpu' or 'cuda:0', got {device!r}")
    d = device.strip().lower()
    if d == "cpu":
        return d
    if d == "cuda" or d.startswith("cuda:"):
        ids = d[5:]
        if ids and not all(p.strip().isdigit() for p in ids.split(",")):
            raise InvalidParameterError(f"device {device!r}: expected 'cuda', 'cuda:N' or 'cuda:0,1,...'")
        return d.replace(" ", "")
    raise InvalidParameterError(f"unknown device {device!r}; use 'cpu' or 'cuda[:N]'")


def _check_threads(threads):
    if threads is None:
        return None
    import numba
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1:
        raise InvalidParameterError(f"threads must be a positive integer, got {threads!r}")
    if threads > numba.config.NUMBA_NUM_THREADS:
        raise InvalidParameterError(
            f"threads={threads} exceeds the {numba.config.NUMBA_NUM_THREADS} threads Numba was started "
            "with (set NUMBA_NUM_THREADS before importing digraph to allow more)")
    return int(threads)


MAX_COUNT = 2**63 - 1
"""The largest round limit, batch or other count a run accepts: what the engines' int64
counters hold."""


def _check_positive(name, value, kind):
    """``value`` as a positive ``kind``: an ``int`` of at most :data:`MAX_COUNT` (a float that is
    a whole number is taken), or a finite ``float``.  Text, bools, NaN, infinities and values
    too large raise :class:`InvalidParameterError` naming ``name`` and the value."""
    what = "integer (at most 2**63 - 1)" if kind is int else "finite number"
    try:
        if isinstance(value, (bool, np.bool_, str, bytes)):
            raise TypeError
        v = kind(value)
        ok = v > 0 and (math.isfinite(v) if kind is float else (v == value and v <= MAX_COUNT))
    except (TypeError, ValueError, OverflowError):
        ok = False
    if not ok:
        raise InvalidParameterError(f"{name} must be a positive {what}, got {short_repr(value)}")
    return v


def _check_path_options(cache, preprocess):
    """``cache`` (None, or a folder: a str or path) and ``preprocess`` (None, or a dict of
    :func:`digraph.preprocess` parameters and ``jobs``, each checked), as given, or
    :class:`InvalidParameterError` naming the option and the value."""
    import os
    from collections.abc import Mapping
    if cache is not None and not isinstance(cache, (str, os.PathLike)):
        raise InvalidParameterError(f"cache must be a folder path (str or os.PathLike), got "
                                    f"{short_repr(cache)}")
    if preprocess is None:
        return cache, None
    from .preprocess import DEFAULTS, _check_params
    if not isinstance(preprocess, Mapping):
        raise InvalidParameterError(
            f"preprocess must be a dict of digraph.preprocess parameters ({', '.join(DEFAULTS)}, "
            f"jobs), got {short_repr(preprocess)}")
    unknown = [k for k in preprocess if k not in DEFAULTS and k != "jobs"]
    if unknown:
        raise InvalidParameterError(
            f"preprocess: unknown parameter {short_repr(unknown[0])}; accepted: "
            f"{', '.join(DEFAULTS)}, jobs")
    params = dict(preprocess)
    try:
        _check_params(**dict(DEFAULTS, **{k: v for k, v in params.items() if k != "jobs"}))
    except InvalidParameterError as e:
        raise InvalidParameterError(f"preprocess: {e}") from None
    jobs = params.get("jobs")
    if jobs is not None and (isinstance(jobs, (bool, np.bool_)) or not isinstance(
            jobs, (int, np.integer)) or not (jobs == -1 or 1 <= jobs <= MAX_COUNT)):
        raise InvalidParameterError(f"preprocess: jobs must be -1 (every core) or an integer "
                                    f"from 1 to 2**63 - 1, got {short_repr(jobs)}")
    return cache, params


@contextmanager
def _numba_threads(threads):
    import numba
    if threads is None:
        yield
        return
    old = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        yield
    finally:
        numba.set_num_threads(old)


def _engine(mode):
    """The dispatcher module of a mode (each has ``solve(graph, system, tol, max_iter, stats)``)."""
    if mode == "scc":
        from .dispatch import dag_push
        return dag_push
    if mode == "power":
        from .dispatch import power
        return power
    if mode == "bsp":
        from .dispatch import bsp
        return bsp
    if mode == "peel":
        from .dispatch import peel
        return peel
    if mode in PATH_MODES:
        from .dispatch import paths
        return paths
    from .dispatch import vertex_async
    return vertex_async


def _priority(mode, priority):
    from .dispatch.paths import PRIORITIES
    if mode == "path-nopriority":
        if priority not in (None, "none"):
            raise InvalidParameterError(f"mode='path-nopriority' runs without priority, got priority={priority!r}")
        return "none"
    if priority is None:
        return "pending"
    allowed = ("pending", "none") if mode == "scc" else PRIORITIES
    if priority not in allowed:
        raise InvalidParameterError(f"mode={mode!r} takes priority {', '.join(allowed)}, got {priority!r}")
    return priority


def _pathset(graph, cache, params):
    """The PathSet of a path-mode run: from the cache folder ``cache``, else built once per graph
    and ``preprocess=`` parameters and kept with the graph (``jobs`` does not change it).  Built
    again at every run, it was half of a warm GPU path run on cnr-2000 (0.5 of 1.04 s on an H200,
    ``benchmarks/profile_gpu_path.py``), and its device arrays were uploaded again too."""
    from .preprocess import load_or_build, preprocess
    params = dict(params or {})
    if cache is not None:
        return load_or_build(graph, cache, **params)
    key = pathset_key(params)
    ps = graph._cache.get(key)
    if ps is None:
        ps = graph._cache[key] = preprocess(graph, **params)
    return ps


_WARM = set()


def _unheard(fn):
    """``fn`` with no progress listener: the rounds of a warm-up's tiny runs are not the user's."""
    @functools.wraps(fn)
    def unheard(*args, **kwargs):
        with listening(None):
            return fn(*args, **kwargs)
    return unheard


@_unheard
def _warm_up(mode, family, graph, system=None, variants=None, settings=None):
    """Compile (or load from Numba's cache) the kernels of ``mode`` and ``family`` on a tiny graph
    first, so that ``time_compile`` and ``time_compute`` are reported apart.

    Only what the run needs: the variant with or without arc factors that ``system`` has (both when
    ``system`` is None), dense and sparse rounds for ``bsp`` only (no other mode has them), and for
    ``peel`` the schedule :func:`digraph.dispatch.peel.schedule` picks for ``graph`` (both when
    ``variants="all"``, as :func:`digraph.warmup` asks).  Anything a run still compiles later is
    counted by :func:`digraph.compiling.seconds` and moved to ``time_compile`` all the same.
    ``settings``: the engine's settings object for the tiny runs (``scc``, ``vertex-async``; the
    warm-up of :mod:`digraph.compiling` passes thresholds that switch kernels inside an engine)."""
    itype = graph.out_targets.dtype
    if mode == "peel":
        from .dispatch import peel
        wanted = peel.SCHEDULES if variants == "all" else (peel.schedule(graph),)
    elif system is None or variants == "all":
        wanted = (False, True)
    else:
        wanted = (_has_factors(system),)
    wanted = [w for w in wanted if (mode, family, itype.str, w) not in _WARM]
    if not wanted:
        return
    engine = _engine(mode)
    tiny = _tiny_graph()
    tiny.out_targets = tiny.out_targets.astype(itype)
    tiny._cache.clear()
    extra = {}
    if mode in PATH_MODES:
        from .preprocess import preprocess
        extra = {"pathset": preprocess(tiny), "state": "arc"}
    divisors = (10**9, 0) if mode == "bsp" else (None,)
    if mode == "peel":  # the schedules asked for (k-core only)
        from .algorithms.base import HIndexSystem
        for schedule in wanted:
            engine.solve(tiny, HIndexSystem(), stats=RunStats.new(), peel=schedule)
    elif mode == "power":  # normalised systems only
        import dataclasses
        from .smx import cpu_anderson
        cpu_anderson.warm_up()
        _run_tiny(family, lambda sys, _: engine.solve(
            tiny, dataclasses.replace(sys, normalize=True), tol=1e-3, max_iter=100,
            stats=RunStats.new()), wanted, (None,))
    else:
        def solve(sys, bsp_settings):
            s = settings if bsp_settings is None else bsp_settings
            return engine.solve(tiny, sys, tol=1e-3, max_iter=100, stats=RunStats.new(),
                                **(extra if s is None else dict(extra, settings=s)))
        _run_tiny(family, solve, wanted, divisors)
    _WARM.update((mode, family, itype.str, w) for w in wanted)


def _has_factors(system):
    """Whether a system has per-arc (or, linear, per-target) factors: the warm-up's variant."""
    if system.family == "linear":
        return system.arc_scale is not None or system.dst_scale is not None
    if system.family == "monotone":
        return system.arc_value is not None
    return False


def _tiny_graph():
    return Graph.from_arrays(np.array([0, 1, 2, 0]), np.array([1, 2, 0, 2]))


@_unheard
def _run_tiny(family, solve, factors=(False, True), divisors=(10**9, 0)):
    """``solve(system, settings)`` a tiny system of ``family`` without and/or with arc factors
    (``factors``), every round dense and then every round sparse (a
    :class:`~digraph.dispatch.bsp.BspSettings` of each ``dense_divisor`` in ``divisors``;
    ``None``: the defaults), so that the kernels those variants use are compiled."""
    from .algorithms.base import HIndexSystem, LinearSystem, MonotoneSystem
    from .dispatch.bsp import BspSettings
    n, m = 3, 4
    for arc in (np.ones(m) if f else None for f in factors):
        if family == "linear":
            sys = LinearSystem(b=np.ones(n), src_scale=np.full(n, 0.4), arc_scale=arc)
        elif family == "monotone":
            sys = MonotoneSystem(init=np.array([0.0, np.inf, np.inf]), relax="plus", combine="min",
                                 arc_value=arc)
        else:
            sys = HIndexSystem()
        for divisor in divisors:
            solve(sys, None if divisor is None else BspSettings(dense_divisor=divisor,
                                                                monotone_dense_divisor=divisor))


def _run_gpu(graph, algo, bound, system, plan, device, tol, max_iter, priority, cache, preprocess,
             stats, t_start, batch_arcs=None):
    """``device="cuda[:N]"``: the GPU engine of :mod:`digraph.dispatch.gpu`."""
    from .dispatch import gpu
    mode = plan.mode
    if "," in device and mode == "power":  # how many of the GPUs named: by the arcs per GPU
        device = _power_gpus(gpu, graph, device, stats)
    if "," in device:
        return _run_multi_gpu(graph, algo, bound, system, mode, device, tol, max_iter, priority,
                              cache, preprocess, stats, t_start, batch_arcs)
    be = gpu.backend(device)  # NotAvailableError with the reason when there is no GPU
    with be.current():  # its device current for the run, whichever a run before left current
        return _run_one_gpu(gpu, be, graph, algo, bound, system, mode, device, tol, max_iter,
                            priority, cache, preprocess, stats, t_start, batch_arcs)


def _run_one_gpu(gpu, be, graph, algo, bound, system, mode, device, tol, max_iter, priority,
                 cache, preprocess, stats, t_start, batch_arcs):
    """:func:`_run_gpu` on one GPU, ``be``'s device current."""
    stats["threads"] = 0
    t0 = time.perf_counter()
    _warm_up_gpu(gpu, be, mode, system.family, device)
    stats["time_compile"] += time.perf_counter() - t0
    extra = {}
    if mode in PATH_MODES and system.family != "hindex":
        t0 = time.perf_counter()
        extra["pathset"] = _pathset(graph, cache, preprocess)
        extra["priority"] = _priority(mode, priority)
        stats["time_preprocess"] += time.perf_counter() - t0
    elif mode not in PATH_MODES and (priority is not None or cache is not None or
                                     preprocess is not None):
        raise InvalidParameterError(
            f"priority=, cache= and preprocess= apply to the path modes, not mode={mode!r}")
    t0 = time.perf_counter()
    if batch_arcs is not None:
        if mode != "bsp" or system.family != "linear":
            raise InvalidParameterError("batch_arcs= streams the arcs of mode='bsp' on PageRank-like "
                                        f"(linear) algorithms, not mode={mode!r} on {algo.name}")
        extra["batch_arcs"] = _check_positive("batch_arcs", batch_arcs, int)
    if mode == "power":
        from .dispatch import gpu_power
        x, converged = gpu_power.solve(graph, system, tol=tol, max_iter=max_iter, stats=stats,
                                       device=device)
    else:
        x, converged = _one_gpu(gpu, be, graph, algo, system, mode, device, tol, max_iter, stats,
                                extra)
    stats["time_compute"] = time.perf_counter() - t0 - stats["time_transfer"]
    return _finish(graph, algo, bound, system, x, converged, tol, max_iter, mode, device, stats,
                   t_start)


def _one_gpu(gpu, be, graph, algo, system, mode, device, tol, max_iter, stats, extra):
    """A run on one GPU by :func:`digraph.dispatch.gpu.solve`, or, for ``bsp`` on a linear system
    of :attr:`~digraph.dispatch.gpu.GpuSettings.shard_arcs` arcs or more that fits in the GPU's
    memory, by the sharded engine as one shard (a leaner set-up and fused dense rounds; the
    reason joins ``stats["route"]``).  Either engine frees what the other kept."""
    from .dispatch import multi_gpu
    divide = getattr(algo, "divides_by_sum", False)
    if (system.family == "linear" and mode == "bsp" and "batch_arcs" not in extra
            and graph.num_arcs >= gpu.DEFAULT.shard_arcs and not gpu._too_big(be, graph)):
        stats["route"] = f'{stats.get("route", "")}; run as one shard'.lstrip("; ")
        return _solve_dual_or(multi_gpu.solve, graph, system, tol, max_iter, stats, dict(
            devices=[device], mode=mode, min_arcs_per_gpu=0, divide_by_sum=divide))
    multi_gpu.drop_work()  # another engine runs: free what the sharded one kept
    return _solve_dual_or(gpu.solve, graph, system, tol, max_iter, stats, dict(
        extra, mode=mode, device=device))


def _power_gpus(gpu, graph, device, stats):
    """The device string of a power run with several GPUs named: the iteration sharded over as
    many of them as the graph has :attr:`~digraph.dispatch.gpu_power.PowerGpuSettings.shard_arcs`
    arcs per GPU (:mod:`digraph.dispatch.multi_gpu_power`), else the first GPU alone when the
    graph fits in its memory, else sharded over all of them (recorded in ``stats``)."""
    from .dispatch import gpu_power, multi_gpu
    devices = multi_gpu.parse_devices(device)
    for d in devices[1:]:
        gpu.backend(d)  # NotAvailableError naming a GPU that is missing
    be = gpu.backend(devices[0])  # last: its memory is the one asked about
    stats["gpus_named"] = len(devices)
    per = gpu_power.DEFAULT.shard_arcs
    k = len(devices) if per <= 0 else min(len(devices), graph.num_arcs // per)
    ids = ",".join(d[5:] for d in devices)
    if k >= 2:
        stats["engine"] = "multi-gpu-power"
        stats["route"] += (f"; sharded over {k} of the {len(devices)} GPUs named (at least "
                           f"{per:,} arcs a GPU)" if k < len(devices) else
                           f"; sharded over the {k} GPUs named")
        return "cuda:" + ",".join(d[5:] for d in devices[:k])
    if not gpu._too_big(be, graph):
        stats["gpus"] = 1
        stats["engine"] = "gpu-power"
        stats["route"] += (f"; on the first GPU named: fewer than {per:,} arcs a GPU for two "
                           "(the sharded rounds' exchange would cost more than they split)")
        return devices[0]
    stats["engine"] = "multi-gpu-power"
    stats["route"] += "; the graph does not fit in one GPU's memory: sharded over every GPU named"
    return "cuda:" + ids


def _run_multi_gpu(graph, algo, bound, system, mode, device, tol, max_iter, priority, cache,
                   preprocess, stats, t_start, batch_arcs):
    """``device="cuda:0,1,..."``: vertex shards (``bsp``, ``vertex-async``; k-core in every mode)
    or the path dispatcher with a worker per GPU (path modes)."""
    from .dispatch import multi_gpu
    from .dispatch.cuda.runtime.backend import backend
    devices = multi_gpu.parse_devices(device)
    for d in devices:
        backend(d)  # NotAvailableError naming the missing GPU
    if batch_arcs is not None:
        raise InvalidParameterError("batch_arcs= streams the arcs of one GPU; with several GPUs "
                                    "the arcs are sharded over them")
    stats["threads"] = 0
    path = mode in PATH_MODES and system.family != "hindex"
    if not path and (priority is not None or cache is not None or preprocess is not None):
        raise InvalidParameterError(
            f"priority=, cache= and preprocess= apply to the path modes, not mode={mode!r}")
    if mode == "power":
        return _run_power_gpus(graph, algo, bound, system, devices, device, tol, max_iter, stats,
                               t_start)
    if mode == "scc":
        return _run_scc_gpus(graph, algo, bound, system, devices, tol, max_iter, stats, t_start)
    shard_mode = "vertex-async" if mode in PATH_MODES else mode
    t0 = time.perf_counter()
    key = ("multi-gpu", device, shard_mode, system.family)
    if key not in _WARM:
        tiny = _tiny_graph()
        _run_tiny(system.family, lambda sys, _: multi_gpu.solve(
            tiny, sys, devices=devices, mode=shard_mode, tol=1e-3, max_iter=100,
            stats=RunStats.new(), min_arcs_per_gpu=0), divisors=(None,))
        _WARM.add(key)
    stats["time_compile"] += time.perf_counter() - t0
    if path:
        from .dispatch import multi
        from .dispatch.gpu_workers import gpu_worker_factory
        t0 = time.perf_counter()
        ps = _pathset(graph, cache, preprocess)
        stats["time_preprocess"] += time.perf_counter() - t0
        stats["gpus"] = len(devices)
        t0 = time.perf_counter()
        x, converged = _solve_dual_or(multi.solve, graph, system, tol, max_iter, stats, dict(
            pathset=ps, workers=len(devices), make_worker=gpu_worker_factory(devices, stats)))
    elif multi_gpu.gpus_to_use(graph, system, devices) == 1 and \
            multi_gpu.DEFAULT.min_arcs_per_gpu > 0:  # the simple method it could have used
        from .dispatch import gpu
        stats["gpus"] = 1
        stats["gpus_named"] = len(devices)
        be = backend(devices[0])
        t0 = time.perf_counter()
        _warm_up_gpu(gpu, be, shard_mode, system.family, devices[0])
        stats["time_compile"] += time.perf_counter() - t0
        t0 = time.perf_counter()
        x, converged = _one_gpu(gpu, be, graph, algo, system, shard_mode, devices[0], tol,
                                max_iter, stats, {})
    else:
        t0 = time.perf_counter()
        x, converged = _solve_dual_or(multi_gpu.solve, graph, system, tol, max_iter, stats, dict(
            devices=devices, mode=shard_mode, divide_by_sum=getattr(algo, "divides_by_sum", False)
            and system.family == "linear"))
    stats["time_compute"] = time.perf_counter() - t0 - stats["time_transfer"]
    return _finish(graph, algo, bound, system, x, converged, tol, max_iter, mode, device, stats,
                   t_start)


def _run_scc_gpus(graph, algo, bound, system, devices, tol, max_iter, stats, t_start):
    """``mode="scc"`` with several GPUs named: the DAG dispatcher
    (:mod:`digraph.dispatch.cuda.sharded.scc`, each unit's components dealt to the GPUs) over as
    many of them as the sharded engines would use
    (:func:`~digraph.dispatch.multi_gpu.gpus_to_use`: at least
    :attr:`~digraph.dispatch.multi_gpu.MultiGpuSettings.min_arcs_per_gpu` arcs a GPU); with one
    left, the SCC engine on the first GPU named.  The route is recorded in ``stats``."""
    from .dispatch import gpu, multi_gpu
    from .dispatch.cuda.runtime.backend import backend
    from .dispatch.cuda.sharded import scc as dag_gpus
    per = multi_gpu.DEFAULT.min_arcs_per_gpu
    k = multi_gpu.gpus_to_use(graph, system, devices)
    stats["gpus_named"] = len(devices)
    be = backend(devices[0])
    if k == 1:
        stats["gpus"] = 1
        stats["engine"] = "gpu-scc"
        stats["route"] += (f"; on the first GPU named: fewer than {per:,} arcs a GPU for two (the "
                           "sharded engines would use one GPU too)")
        with be.current():
            return _run_one_gpu(gpu, be, graph, algo, bound, system, "scc", devices[0], tol,
                                max_iter, None, None, None, stats, t_start, None)
    devices = list(devices)[:k]
    stats["engine"] = "multi-gpu-scc"
    stats["route"] += (f"; each unit's components dealt over {k} GPUs (DAG dispatcher, at least "
                       f"{per:,} arcs a GPU)")
    stats["threads"] = 0
    t0 = time.perf_counter()
    for d in dict.fromkeys(devices):
        b = backend(d)
        with b.current():
            _warm_up_gpu(gpu, b, "scc", system.family, d)
    stats["time_compile"] += time.perf_counter() - t0
    t0 = time.perf_counter()
    with be.current():
        x, converged = _solve_dual_or(dag_gpus.solve_dag, graph, system, tol, max_iter, stats,
                                      dict(devices=devices))
        stats["time_compute"] = time.perf_counter() - t0 - stats["time_transfer"]
        return _finish(graph, algo, bound, system, x, converged, tol, max_iter, "scc",
                       devices[0], stats, t_start)


def _run_power_gpus(graph, algo, bound, system, devices, device, tol, max_iter, stats, t_start):
    """The power iteration sharded over ``devices`` (:mod:`digraph.dispatch.multi_gpu_power`)."""
    from .dispatch import multi_gpu_power
    t0 = time.perf_counter()
    key = ("multi-gpu-power", device)
    if key not in _WARM:
        import dataclasses
        tiny = _tiny_graph()
        _run_tiny("linear", lambda sys, _: multi_gpu_power.solve(
            tiny, dataclasses.replace(sys, normalize=True), devices=devices, tol=1e-3,
            max_iter=100, stats=RunStats.new()), divisors=(None,))
        _WARM.add(key)
    stats["time_compile"] += time.perf_counter() - t0
    t0 = time.perf_counter()
    x, converged = multi_gpu_power.solve(graph, system, devices=devices, tol=tol,
                                         max_iter=max_iter, stats=stats)
    stats["time_compute"] = time.perf_counter() - t0 - stats["time_transfer"]
    return _finish(graph, algo, bound, system, x, converged, tol, max_iter, "power", device, stats,
                   t_start)


@_unheard
def _warm_up_gpu(gpu, be, mode, family, device):
    """Compile the GPU kernels of ``mode`` and ``family`` on a tiny graph (``time_compile``)."""
    key = ("gpu", be.sim, be.device_id, mode, family)
    if key in _WARM:
        return
    tiny = _tiny_graph()
    extra = {}
    if mode in PATH_MODES:
        from .preprocess import preprocess
        extra = {"pathset": preprocess(tiny), "priority": "pending" if mode == "path" else "none"}
    if mode == "power":  # normalised systems only
        import dataclasses
        from .dispatch import gpu_power
        for forced in (dict(anderson_arcs=0, anderson_ratio=0.0),  # Anderson's passes too
                       dict(cusparse_arcs=0)):  # the pull by cuSPARSE and its sums kernel
            _run_tiny(family, lambda sys, _: gpu_power.solve(
                tiny, dataclasses.replace(sys, normalize=True), tol=1e-8, max_iter=100,
                stats=RunStats.new(), device=device,
                settings=dataclasses.replace(gpu_power.DEFAULT, **forced)), divisors=(None,))
    else:
        _run_tiny(family, lambda sys, settings: gpu.solve(
            tiny, sys, mode=mode, tol=1e-3, max_iter=100, stats=RunStats.new(), device=device,
            settings=settings, **extra))
    _WARM.add(key)
