"""Compilation of the Numba kernels: the first-run notice, compile seconds, and :func:`warmup`.

Every CPU kernel is ``@njit(cache=True)``: a process loads a kernel from Numba's on-disk cache in
milliseconds, and compiles it (a fraction of a second to a few seconds) only when the cache holds no
valid copy — the first run on a fresh install, or after an upgrade.  This module

* counts the seconds Numba spends compiling (:func:`seconds`), from Numba's ``"numba:compile"``
  event, which fires only on a cache miss (a kernel loaded from the cache fires none), so that
  ``digraph.run`` reports compilation in ``time_compile`` wherever it happened, never in
  ``time_compute`` or ``time_preprocess``;
* says so while it happens: when a digraph kernel is about to be compiled for the first time in
  the process, one line, :data:`NOTICE`, goes to stderr (once per process; never in a run that
  loads everything from the cache).  ``DIGRAPH_QUIET=1`` silences it, and the command line shows
  it only where it shows progress (:func:`set_sink`);
* compiles every kernel ahead: :func:`warmup` (``digraph warmup`` on the command line), for
  images and clusters.

Where the cache lives is Numba's choice (its *cache locators*): a ``__pycache__`` folder next to
the sources when that is writable, else, for an install into a read-only ``site-packages``, a
user-wide folder (``$XDG_CACHE_HOME`` or ``~/.cache``, under ``numba``); ``NUMBA_CACHE_DIR``
overrides both.  With none of them writable, :func:`ensure_cache_location` picks a private folder
under the system's temporary folder and warns.  See ``docs/first_run.md``.
"""

import os
import sys
import time

__all__ = ["warmup", "idle_modes", "seconds", "NOTICE", "set_sink", "ensure_cache_location"]

NOTICE = ("compiling kernels, first run only (Numba caches them on disk; "
          "`digraph warmup` compiles them all ahead)")
"""The line (after ``"digraph: "``) said once per process when a digraph kernel is compiled."""

_state = {"listener": None, "announced": False, "sink": None}


def ensure_cache_location():
    """Make sure Numba has somewhere to cache the kernels; called by ``import digraph`` first.

    Numba caches beside the sources when their folder is writable, else in the user-wide cache
    folder (``$XDG_CACHE_HOME/numba`` or ``~/.cache/numba``), or in ``NUMBA_CACHE_DIR`` when that is
    set; with none of them writable it refuses to define a ``cache=True`` kernel, and the import
    would fail.  Only then this points Numba at ``<tempdir>/digraph-numba-cache-<uid>`` (kept
    between processes where the temporary folder is; a private folder of this user's, created
    ``0700``, since Numba's cache files are pickles: a folder of that name that another user owns
    or may write into is not used, and a fresh ``mkdtemp`` folder is, for this process only, removed
    when it exits), and
    says so in one line on stderr, ``digraph: warning: ...`` (setting ``NUMBA_CACHE_DIR`` chooses
    the folder and silences it).  Returns the folder chosen, or None when Numba's own choice
    stands."""
    import numba
    if numba.config.CACHE_DIR:
        return None
    here = os.path.dirname(os.path.abspath(__file__))
    if _writable(os.path.join(here, "__pycache__")):
        return None
    try:
        from numba.misc.appdirs import AppDirs
        user = AppDirs(appname="numba", appauthor=False).user_cache_dir
        if _writable(user):
            return None
    except Exception:  # noqa: BLE001 - an unusual Numba: let it choose
        return None
    import tempfile
    uid = os.getuid() if hasattr(os, "getuid") else os.getlogin()
    folder = os.path.join(tempfile.gettempdir(), f"digraph-numba-cache-{uid}")
    if not _private_folder(folder):
        try:
            folder = tempfile.mkdtemp(prefix="digraph-numba-cache-")
        except OSError:  # no writable temporary folder either: Numba's own error will say so
            return None
        import atexit
        import shutil
        atexit.register(shutil.rmtree, folder, ignore_errors=True)  # this process's only: removed at exit
    numba.config.CACHE_DIR = folder
    try:
        sys.stderr.write(f"digraph: warning: neither the package folder nor {user} is writable; "
                         f"Numba caches the kernels in {folder} (set NUMBA_CACHE_DIR to choose)\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):  # no stderr: not an error
        pass
    return folder


def _private_folder(folder):
    """Whether ``folder`` is (made, if absent) a folder of this user's that no one else may write."""
    import stat
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return False
    try:
        st = os.lstat(folder)
    except OSError:
        return False
    if not stat.S_ISDIR(st.st_mode) or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return False
    return not hasattr(os, "getuid") or st.st_uid == os.getuid()


def _writable(folder):
    """Whether ``folder`` is writable, or could be created in its nearest existing parent."""
    folder = os.path.abspath(folder)
    while not os.path.exists(folder):
        parent = os.path.dirname(folder)
        if parent == folder:
            return False
        folder = parent
    return os.path.isdir(folder) and os.access(folder, os.W_OK | os.X_OK)


def _quiet():
    return os.environ.get("DIGRAPH_QUIET", "").strip().lower() not in ("", "0", "false", "no")


def set_sink(sink):
    """Where the notice goes: ``None`` (default) for one line on stderr, or a callable taking the
    text (the command line's progress display; ``lambda text: None`` drops it).  Returns the
    previous sink."""
    old = _state["sink"]
    _state["sink"] = sink
    return old


def _announce():
    if _state["announced"]:
        return
    _state["announced"] = True
    if _quiet():
        return
    sink = _state["sink"]
    if sink is not None:
        sink(NOTICE)
        return
    try:
        sys.stderr.write(f"digraph: {NOTICE}\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):  # no stderr, or a closed one: not an error
        pass


def _make_listener():
    from numba.core import event

    class _CompileListener(event.Listener):
        """Seconds of the outermost ``"numba:compile"`` events (a kernel's callees compile inside
        it), and the notice at the first digraph kernel."""

        def __init__(self):
            self.depth = 0
            self.total = 0.0
            self.t0 = 0.0

        def on_start(self, ev):
            if self.depth == 0:
                self.t0 = time.perf_counter()
                disp = (ev.data or {}).get("dispatcher")
                module = getattr(getattr(disp, "py_func", None), "__module__", "") or ""
                if module.startswith("digraph."):
                    _announce()
            self.depth += 1

        def on_end(self, ev):
            self.depth = max(self.depth - 1, 0)
            if self.depth == 0:
                self.total += time.perf_counter() - self.t0

    return _CompileListener()


def seconds():
    """Seconds Numba has spent compiling in this process since this module first counted (the
    first call installs the counter, process-wide, and returns 0.0).  Compilations of several
    threads are serialised by Numba's compiler lock, so differences of this clock around a phase
    are the compilation inside it (plus any that another thread ran meanwhile)."""
    lst = _state["listener"]
    if lst is None:
        from numba.core import event
        lst = _state["listener"] = _make_listener()
        event.register("numba:compile", lst)
    if lst.depth:  # called from inside a compilation (not by digraph itself): count it so far
        return lst.total + (time.perf_counter() - lst.t0)
    return lst.total


_FAMILIES = ("linear", "monotone", "hindex")
_CPU_MODES = {"linear": ("scc", "power", "bsp", "vertex-async", "path", "path-nopriority"),
              "monotone": ("vertex-async", "bsp", "path", "path-nopriority"),
              "hindex": ("peel", "vertex-async", "bsp")}
_GPU_MODES = {"linear": ("power", "bsp", "vertex-async", "path", "path-nopriority"),
              "monotone": ("vertex-async", "bsp", "path", "path-nopriority", "cluster"),
              "hindex": ("vertex-async", "bsp")}
_ALGORITHMS = {"linear": ("pagerank", "adsorption"), "monotone": ("sssp",), "hindex": ("kcore",)}


def warmup(modes=None, families=None, *, device="cpu", index_dtypes=("int32",), progress=None):
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
        on).  Numba does not cache CUDA kernels on disk: a GPU warm-up lasts for the process.
    index_dtypes : iterable of str
        Index types of the graphs to compile for: ``"int32"`` (every graph under 2^31 vertices,
        the default) and/or ``"int64"``.
    progress : callable, optional
        Called with ``(what, seconds, compile_seconds)`` after each item (the command line prints
        them).

    Returns
    -------
    list of dict
        One per item compiled: ``what`` (``"load"``, ``"route"`` or ``"<family> <mode>"``,
        with the index type when it is not int32), ``seconds`` (wall time) and ``compiled``
        (seconds Numba spent compiling in it; 0 when everything came from the cache).

    Raises
    ------
    InvalidParameterError
        An unknown mode, family, device or index type.

    Examples
    --------
    >>> import digraph
    >>> done = digraph.warmup(modes=["power"], families=["linear"])
    >>> [d["what"] for d in done]
    ['load', 'route', 'linear power']
    """
    import numpy as np

    R = _run_module()
    from .errors import InvalidParameterError

    gpu = R._check_device(device) != "cpu"
    if gpu and "," in device:
        raise InvalidParameterError("warmup compiles one device's kernels; call it for each GPU")
    table = _GPU_MODES if gpu else _CPU_MODES
    known = sorted({m for ms in table.values() for m in ms})
    modes = known if modes is None else [modes] if isinstance(modes, str) else list(modes)
    families = list(_FAMILIES) if families is None else (
        [families] if isinstance(families, str) else list(families))
    for m in modes:
        if m not in R.MODES:
            raise InvalidParameterError(f"unknown mode {m!r}; modes: {', '.join(R.MODES)}")
    for f in families:
        if f not in _FAMILIES:
            raise InvalidParameterError(f"unknown family {f!r}; families: {', '.join(_FAMILIES)}")
    dtypes = [np.dtype(t) for t in ([index_dtypes] if isinstance(index_dtypes, str) else index_dtypes)]
    for t in dtypes:
        if t not in (np.int32, np.int64):
            raise InvalidParameterError(f"index_dtypes: int32 or int64, got {t}")
    seconds()  # count from here
    done = []

    def item(what, fn):
        t0, c0 = time.perf_counter(), seconds()
        fn()
        entry = {"what": what, "seconds": time.perf_counter() - t0, "compiled": seconds() - c0}
        done.append(entry)
        if progress is not None:
            progress(entry["what"], entry["seconds"], entry["compiled"])

    item("load", _warm_load)
    item("route", lambda: _warm_route(dtypes))
    for family in families:
        for mode in modes:
            if mode not in table[family]:
                continue
            for t in dtypes:
                what = f"{family} {mode}" + ("" if t == np.int32 else f" {t}")
                if gpu:
                    item(what, lambda: _warm_gpu(R, mode, family, device))
                else:
                    item(what, lambda: _warm_cpu(R, mode, family, t))
    return done


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
    >>> from digraph.compiling import idle_modes
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
    return importlib.import_module(__package__ + ".run")


def _tiny(itype):
    R = _run_module()
    g = R._tiny_graph()
    g.out_targets = g.out_targets.astype(itype)
    g._cache.clear()
    return g


def _warm_load():
    """The edge-list parser (with and without weights) and the CSR builder."""
    import tempfile

    from .io import load
    with tempfile.TemporaryDirectory(prefix="digraph-warmup-") as d:
        for name, text in (("a.el", "0 1\n1 2\n2 0\n"), ("w.el", "0 1 0.5\n1 2 2\n2 0 1\n")):
            path = os.path.join(d, name)
            with open(path, "w", encoding="ascii") as f:
                f.write(text)
            load(path)


def _warm_route(dtypes):
    from .paths.condensation import largest_share_bound
    from .preprocess.clusters import internal_share_sample
    for t in dtypes:
        largest_share_bound(_tiny(t))
        internal_share_sample(_tiny(t), 4)  # the GPU's test for road-like graphs (SSSP)


def _warm_cpu(R, mode, family, itype):
    """A mode's kernels in every variant: the run's warm-up with and without arc factors (both
    peeling schedules), then the same with the thresholds that switch kernels inside an engine
    pushed to their other side, and, for linear systems, a whole ``digraph.run`` (the dual
    weights of adsorption-like systems, the certified bound)."""
    import dataclasses

    from .dispatch import dag_push, vertex_async
    from .errors import ConvergenceError
    g = _tiny(itype)
    R._warm_up(mode, family, g, variants="all")
    settings = {"scc": [{"thin_arcs": 0},  # levels run in parallel
                        {"split_arcs": 1, "split_kind": "outbox"},  # components split over threads
                        {"split_arcs": 1, "split_kind": "accumulate"}],
                "vertex-async": [{"queue_share": 1.0}]}.get(mode, [])  # one-thread queue phases
    module = dag_push if mode == "scc" else vertex_async
    for setting in settings:
        with R._numba_threads(_threads()):
            R._WARM.difference_update({k for k in R._WARM if k[0] == mode})
            R._warm_up(mode, family, _tiny(itype), variants="all",
                       settings=dataclasses.replace(module.DEFAULT, **setting))
    for algo in _ALGORITHMS[family] if mode not in R.PATH_MODES else ():
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


def _warm_gpu(R, mode, family, device):
    from .dispatch import gpu
    be = gpu.backend(device)
    R._warm_up_gpu(gpu, be, mode, family, device)
