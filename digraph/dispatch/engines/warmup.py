"""Every kernel compiled ahead: :func:`warmup` (``digraph.warmup``, ``digraph warmup``), and
:func:`idle_modes`, the modes asked of it that compile nothing on a device.

Each mode's kernels are compiled as a run's warm-up compiles them (:mod:`.warm`), in every
variant, with the thresholds that switch kernels inside an engine pushed to their other side;
Numba caches them on disk, so that later processes load them.

On the CPU the items are compiled by worker processes at once (:mod:`digraph.warmup_workers`).
"""

import os
import time

from ...compiling import seconds

__all__ = ["warmup", "idle_modes"]

_FAMILIES = ("linear", "monotone", "hindex")
_CPU_MODES = {"linear": ("scc", "power", "bsp", "vertex-async", "path", "path-nopriority"),
              "monotone": ("vertex-async", "bsp", "path", "path-nopriority"),
              "hindex": ("peel", "vertex-async", "bsp")}
_GPU_MODES = {"linear": ("power", "bsp", "vertex-async", "path", "path-nopriority"),
              "monotone": ("vertex-async", "bsp", "path", "path-nopriority", "cluster"),
              "hindex": ("peel", "vertex-async", "bsp")}
_ALGORITHMS = {"linear": ("pagerank", "adsorption"), "monotone": ("sssp",), "hindex": ("kcore",)}


def warmup(modes=None, families=None, *, device="cpu", index_dtypes=("int32",), progress=None,
           jobs=None):
    """Compile every kernel ahead (or load it from Numba's cache), so that no later run compiles.

    A fresh install compiles the kernels a run needs on its first call (a few seconds, once per
    machine: Numba keeps them on disk, see :mod:`digraph.compiling`); ``warmup`` compiles all of
    them at once, for images and clusters (``RUN digraph warmup`` in a Dockerfile).  Called again,
    it only loads them from the cache (well under a second per mode).

    Parameters
    ----------
    modes : iterable of str, optional
        Modes to compile (default: every mode of the device; see :data:`digraph.MODES`).  Modes
        that do not apply to a family are skipped (:func:`idle_modes` says which compile nothing
        at all, and where they do apply).
    families : iterable of str, optional
        ``"linear"`` (PageRank, adsorption), ``"monotone"`` (SSSP), ``"hindex"`` (k-core); default
        all three.
    device : str
        ``"cpu"`` (default) or ``"cuda[:N]"``: that GPU's kernels (raises
        :class:`~digraph.errors.NotAvailableError` without a GPU, unless Numba's CUDA simulator is
        on).  Numba does not cache CUDA kernels on disk: a GPU warm-up lasts for the process, and
        runs in it whatever ``jobs`` says.
    index_dtypes : iterable of str
        Index types of the graphs to compile for: ``"int32"`` (every graph under 2^31 vertices,
        the default) and/or ``"int64"``.
    progress : callable, optional
        Called with ``(what, seconds, compile_seconds)`` after each item (the command line prints
        them), in this process; with several workers, in the order the items finish.
    jobs : int, optional
        Worker processes compiling at once (CPU only): None or -1 (the default), one per core
        this process may run on, at most one per task; 1 compiles everything in this process.
        Each worker is a fresh interpreter importing this package from the same folder, with
        this process's environment and its Numba cache folder; the kernels they compile reach
        this process through that cache.

    Returns
    -------
    list of dict
        One per item compiled, in the order of ``families`` then ``modes`` (after ``"load"`` and
        ``"route"``), whatever ``jobs``: ``what`` (``"load"``, ``"route"`` or
        ``"<family> <mode>"``, with the index type when it is not int32), ``seconds`` (wall
        time) and ``compiled`` (seconds Numba spent compiling in it; 0 when everything came from
        the cache).

    Raises
    ------
    InvalidParameterError
        An unknown mode, family, device or index type, or a ``jobs`` that is not an integer >= 1
        or -1.
    ChildProcessError
        A worker process ended without finishing its items (killed, crashed); an exception
        raised in a worker is raised here as it is, with the worker's traceback as a note.
    KeyboardInterrupt
        Ctrl-C: the workers are stopped first.

    Examples
    --------
    >>> import digraph
    >>> done = digraph.warmup(modes=["power"], families=["linear"])
    >>> [d["what"] for d in done]
    ['load', 'route', 'linear power']
    """
    import numpy as np

    from ...checks import check_device
    from ..route.modes import MODES
    from ...errors import InvalidParameterError

    gpu = check_device(device) != "cpu"
    if gpu and "," in device:
        raise InvalidParameterError("warmup compiles one device's kernels; call it for each GPU")
    table = _GPU_MODES if gpu else _CPU_MODES
    known = sorted({m for ms in table.values() for m in ms})
    modes = known if modes is None else [modes] if isinstance(modes, str) else list(modes)
    families = list(_FAMILIES) if families is None else (
        [families] if isinstance(families, str) else list(families))
    for m in modes:
        if m not in MODES:
            raise InvalidParameterError(f"unknown mode {m!r}; modes: {', '.join(MODES)}")
    for f in families:
        if f not in _FAMILIES:
            raise InvalidParameterError(f"unknown family {f!r}; families: {', '.join(_FAMILIES)}")
    dtypes = [np.dtype(t)
              for t in ([index_dtypes] if isinstance(index_dtypes, str) else index_dtypes)]
    for t in dtypes:
        if t not in (np.int32, np.int64):
            raise InvalidParameterError(f"index_dtypes: int32 or int64, got {t}")
    from ... import warmup_workers as workers
    from ...preprocess._parallel import resolve_jobs
    jobs = resolve_jobs(jobs)
    # (what, kind, mode, family, index type(s)): plain data, sent as JSON to the workers
    items = [("load", "load", None, None, None),
             ("route", "route", None, None, ",".join(t.name for t in dtypes))]
    for family in families:
        for mode in modes:
            if mode not in table[family]:
                continue
            for t in dtypes:
                what = f"{family} {mode}" + ("" if t == np.int32 else f" {t}")
                items.append((what, "gpu" if gpu else "cpu", mode, family, t.name))
    tasks = workers.tasks(items)
    if gpu or jobs == 1 or len(tasks) == 1:
        return _serial(items, progress, device)
    return workers.run(items, tasks, progress, min(jobs, len(tasks)))


def _call(item, device="cpu"):
    """Compile one item in this process."""
    import numpy as np
    what, kind, mode, family, t = item
    if kind == "load":
        _warm_load()
    elif kind == "route":
        _warm_route([np.dtype(n) for n in t.split(",")])
    elif kind == "gpu":
        _warm_gpu(mode, family, device)
    else:
        _warm_cpu(mode, family, np.dtype(t))


def _timed(item, device="cpu"):
    """One item compiled in this process: its entry of :func:`warmup`'s list."""
    t0, c0 = time.perf_counter(), seconds()
    _call(item, device)
    return {"what": item[0], "seconds": time.perf_counter() - t0, "compiled": seconds() - c0}


def _serial(items, progress, device):
    """Every item compiled in this process, in order."""
    seconds()  # count from here
    done = []
    for item in items:
        entry = _timed(item, device)
        done.append(entry)
        if progress is not None:
            progress(entry["what"], entry["seconds"], entry["compiled"])
    return done


def serve(lock):
    """A worker process of the parallel warm-up (:func:`digraph.warmup_workers.serve`)."""
    from ...warmup_workers import serve
    return serve(lock, _timed)


def idle_modes(modes, families=None, *, device="cpu"):
    """The modes asked of :func:`warmup` that compile nothing for ``families`` on ``device``,
    each with where it does run.

    Parameters
    ----------
    modes, families : iterable of str, optional
        As for :func:`warmup` (``modes`` None: every mode of the device, none idle).
    device : str
        ``"cpu"``, or a GPU (``"cuda[:N]"``).

    Returns
    -------
    list of (str, str)
        ``(mode, where)``, ``where`` in words: ``"the monotone family (sssp) on a GPU"``.

    Examples
    --------
    >>> from digraph.dispatch.engines.warmup import idle_modes
    >>> idle_modes(["cluster"], device="cpu")
    [('cluster', 'the monotone family (sssp) on a GPU')]
    """
    if modes is None:
        return []
    table = _CPU_MODES if str(device).strip().lower() == "cpu" else _GPU_MODES
    families = list(_FAMILIES) if families is None else (
        [families] if isinstance(families, str) else list(families))
    out = []
    for mode in [modes] if isinstance(modes, str) else modes:
        if any(mode in table.get(f, ()) for f in families):
            continue
        places = []
        for f in _FAMILIES:
            devs = [dev for dev, runs in (("the CPU", _CPU_MODES), ("a GPU", _GPU_MODES))
                    if mode in runs[f]]
            if devs:
                places.append(f"the {f} family ({', '.join(_ALGORITHMS[f])}) on "
                              f"{' and on '.join(devs)}")
        out.append((mode, "; ".join(places) or "no family"))
    return out


def _run_module():
    """The module :mod:`digraph.run` (the package's ``run`` attribute is the function)."""
    import importlib
    return importlib.import_module("digraph.run")


def _tiny(itype):
    from .warm import tiny_graph
    g = tiny_graph()
    g.out_targets = g.out_targets.astype(itype)
    g._cache.clear()
    return g


def _warm_load():
    """The edge-list parser (with and without weights) and the CSR builder."""
    import tempfile

    from ...graph import warm_up
    from ...io import load
    warm_up()  # the builder of large graphs: the small files below are ordered by numpy
    with tempfile.TemporaryDirectory(prefix="digraph-warmup-") as d:
        for name, text in (("a.el", "0 1\n1 2\n2 0\n"), ("w.el", "0 1 0.5\n1 2 2\n2 0 1\n")):
            path = os.path.join(d, name)
            with open(path, "w", encoding="ascii") as f:
                f.write(text)
            load(path)


def _warm_route(dtypes):
    from ...paths.condensation import largest_share_bound
    from ...preprocess.clusters import internal_share_sample
    for t in dtypes:
        largest_share_bound(_tiny(t))
        internal_share_sample(_tiny(t), 4)  # the GPU's test for road-like graphs (SSSP)


def _warm_cpu(mode, family, itype):
    """A mode's kernels in every variant: the run's warm-up with and without arc factors (both
    peeling schedules), then the same with the thresholds that switch kernels inside an engine
    pushed to their other side, and, for linear systems, a whole ``digraph.run`` (the dual
    weights of adsorption-like systems, the certified bound)."""
    import dataclasses

    from .scc import cpu as dag_push
    from .push import cpu_vertex_async as vertex_async
    from . import warm
    from ..route.modes import PATH_MODES
    from ...errors import ConvergenceError
    R = _run_module()
    g = _tiny(itype)
    warm.cpu(mode, family, g, variants="all")
    settings = {"scc": [{"thin_arcs": 0},  # levels run in parallel
                        {"direct_vertices": 0},  # the serial pass with its (pulled) sweeps
                        {"direct_vertices": 0, "pull_degree": 0.0},  # and its pushed ones
                        {"thin_arcs": 0, "direct_vertices": 0},  # a level's pulled sweeps
                        # components split over threads, however many arcs cross the chunks
                        {"split_arcs": 1, "split_kind": "outbox", "split_cross_cost": 0.0},
                        {"split_arcs": 1, "split_kind": "accumulate", "split_cross_cost": 0.0}],
                "vertex-async": [{"queue_share": 1.0}]}.get(mode, [])  # one-thread queue phases
    module = dag_push if mode == "scc" else vertex_async
    for setting in settings:
        with warm.numba_threads(_threads()):
            warm.WARM.difference_update({k for k in warm.WARM if k[0] == mode})
            warm.cpu(mode, family, _tiny(itype), variants="all",
                     settings=dataclasses.replace(module.DEFAULT, **setting))
    for algo in _ALGORITHMS[family] if mode not in PATH_MODES else ():
        kw = {"adsorption": {"seeds": [0]}, "sssp": {"source": 0}}.get(algo, {})
        if mode == "power" and algo != "pagerank":
            continue
        try:  # a loose tol: the kernels, not the answer (parallel rounds cost a wake-up each)
            R.run(_tiny(itype), algo, mode=mode, tol=1e-2, max_iter=50, **kw)
        except ConvergenceError:
            pass


def _threads():
    import numba
    return min(numba.config.NUMBA_NUM_THREADS, 2)


def _warm_gpu(mode, family, device):
    from ..runtime.cuda.backend import backend
    from . import warm
    warm.gpu(backend(device), mode, family, device)
