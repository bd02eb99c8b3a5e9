"""Compilation of the Numba kernels: the first-run notice, compile seconds, the cache folder.

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
* compiling every kernel ahead is :func:`digraph.warmup` (``digraph warmup`` on the command
  line, :mod:`digraph.dispatch.engines.warmup`), for images and clusters.

Where the cache lives is Numba's choice (its *cache locators*): a ``__pycache__`` folder next to
the sources when that is writable, else, for an install into a read-only ``site-packages``, a
user-wide folder (``$XDG_CACHE_HOME`` or ``~/.cache``, under ``numba``); ``NUMBA_CACHE_DIR``
overrides both.  With none of them writable, :func:`ensure_cache_location` picks a private folder
under the system's temporary folder and warns.  See ``docs/first_run.md``.
"""

import os
import sys
import time

__all__ = ["seconds", "NOTICE", "set_sink", "ensure_cache_location"]

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
        # this process's only: removed at exit
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
    numba.config.CACHE_DIR = folder
    try:
        sys.stderr.write(f"digraph: warning: neither the package folder nor {user} is writable; "
                         f"Numba caches the kernels in {folder} (set NUMBA_CACHE_DIR to choose)\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):  # no stderr: not an error
        pass
    return folder


def _private_folder(folder):
    """Whether ``folder`` is (made, if absent) a folder of this user's that no one else may
    write."""
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


def work_clock():
    """A clock in seconds that stands still while Numba compiles (``time.perf_counter()`` less
    :func:`seconds`): differences of it around a phase are the phase's own work, so timings
    stored for later (a cache's build times) do not depend on whether the kernels were
    compiled in that process."""
    return time.perf_counter() - seconds()

