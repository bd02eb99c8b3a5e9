"""The parallel warm-up: :func:`digraph.warmup`'s items compiled by worker processes at once.

Numba compiles in one thread, so on the CPU :func:`digraph.warmup` shares its items among worker
processes (one per core by default, its ``jobs``): each is a fresh interpreter (``python -c``,
never a fork of the caller) that imports this package from the caller's folder and compiles into
the caller's cache folder, taking its next task as it finishes one, the costliest first
(:data:`_COST`).  Items that share most of their kernels (a mode and its int64 twin; the path
modes) make one task, so that one process compiles them.  Each worker reads its tasks as JSON
lines on its standard input and answers each item's entry (or its exception) as a JSON line on
its standard output (:func:`serve`); the caller (:func:`run`) reads them in threads, calls
``progress`` as entries arrive, and checks for Ctrl-C in between (:mod:`digraph.interrupts`).

Numba writes each cache file whole (a temporary file renamed), but adds a kernel's entry to the
kernel's index file by reading, changing and rewriting it, and writes the index before the data
it names: two processes that save two signatures of one kernel at once may lose an entry, or
name one's data with the other's signature.  The workers therefore read and save cache entries
under one lock (:func:`lock_cache_files`).

This module imports nothing of :mod:`digraph.dispatch.engines.warmup`: the worker's code names
it in a string, and :func:`serve` gets the function that compiles an item.
"""

import json
import os
import sys

from .compiling import seconds

__all__ = ["tasks", "run", "serve", "lock_cache_files"]

#: Seconds of each item (int32 indices) compiled alone in a fresh process with an empty Numba
#: cache (``NUMBA_CACHE_DIR`` a new folder, then ``_warm_load()``, ``_warm_route(...)`` or
#: ``_warm_cpu(mode, family, int32)``), measured once on a quiet 2-core x86-64 machine with
#: numba 0.68; the path modes after their family's ``path``, whose kernels they share (and the
#: monotone ``path`` after the linear one).  Only the ratios matter: the parallel warm-up hands
#: out its tasks the costliest first.  An item missing here counts as :data:`_OTHER_COST`.
_COST = {"load": 3.3, "route": 0.9,
         "linear scc": 17.4, "linear path": 16.5, "linear path-nopriority": 0.2,
         "linear bsp": 8.3, "linear power": 7.5, "linear vertex-async": 5.8,
         "monotone path": 4.4, "monotone path-nopriority": 0.1,
         "monotone vertex-async": 5.6, "monotone bsp": 2.7,
         "hindex peel": 11.6, "hindex bsp": 2.6, "hindex vertex-async": 2.1}
_OTHER_COST = 5.0

#: The code a worker process runs: SIGINT ignored (the caller stops the workers), this package
#: imported from the caller's folder (``sys.argv[1]``), then the warm-up's ``serve`` (this
#: module's :func:`serve` with the function that compiles an item).
_WORKER = ("import signal; signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
           "import sys; sys.path.insert(0, sys.argv[1])\n"
           "from digraph.dispatch.engines.warmup import serve\n"
           "sys.exit(serve(sys.argv[2]))\n")


def tasks(items):
    """The items (their indices) grouped into tasks, the costliest task first: a mode with its
    int64 twin, and every path mode of every family together (they share most kernels)."""
    groups = {}
    for i, (what, kind, mode, family, _) in enumerate(items):
        key = what if kind in ("load", "route") else "path" if mode.startswith("path") else (
            family, mode)
        groups.setdefault(key, []).append(i)
    tasks = list(groups.values())

    def cost(task):
        return sum(_COST.get(" ".join(items[i][0].split()[:2]), _OTHER_COST) for i in task)
    return sorted(tasks, key=cost, reverse=True)  # stable: equal costs keep the items' order


def run(items, todo, progress, nworkers):
    """The items compiled by ``nworkers`` worker processes, each taking the next task of
    ``todo`` (lists of indices into ``items``, :func:`tasks`) when it is done with one; their
    entries in the order of ``items``, ``progress`` called as each arrives."""
    import queue
    import subprocess
    import tempfile
    import threading

    import numba

    from .interrupts import check, deferred

    root = os.path.dirname(os.path.dirname(os.path.abspath(sys.modules["digraph"].__file__)))
    env = dict(os.environ, DIGRAPH_QUIET="1")
    if numba.config.CACHE_DIR:  # the folder this process caches in, wherever it was chosen
        env["NUMBA_CACHE_DIR"] = numba.config.CACHE_DIR
    done = [None] * len(items)
    pending = list(todo)
    events = queue.Queue()
    workers = []
    with tempfile.TemporaryDirectory(prefix="digraph-warmup-") as folder, deferred():
        lock = os.path.join(folder, "cache.lock")
        try:
            for w in range(nworkers):
                p = subprocess.Popen([sys.executable, "-c", _WORKER, root, lock], env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, encoding="utf-8")
                tail = []  # its standard error's last lines
                worker = {"process": p, "task": None, "stderr": tail,
                          "threads": [threading.Thread(target=_read_lines, daemon=True,
                                                       args=(p.stdout, w, events)),
                                      threading.Thread(target=_keep_tail, daemon=True,
                                                       args=(p.stderr, tail))]}
                workers.append(worker)
                for thread in worker["threads"]:
                    thread.start()
                _next_task(worker, pending, items)
            while any(e is None for e in done):
                try:
                    w, line = events.get(timeout=0.1)
                except queue.Empty:
                    check()  # a Ctrl-C: raised here, the workers stopped below
                    continue
                worker = workers[w]
                if line is None:  # its output closed: it ended
                    if worker["task"] is not None:
                        raise _lost(worker, items)
                    continue
                msg = json.loads(line)
                if "error" in msg:
                    raise _worker_error(msg)
                if "entry" in msg:
                    entry = msg["entry"]
                    i = next(i for i in worker["task"] if items[i][0] == entry["what"])
                    done[i] = entry
                    if progress is not None:
                        progress(entry["what"], entry["seconds"], entry["compiled"])
                else:  # its task is done
                    _next_task(worker, pending, items)
            check()
        finally:
            _stop(workers)
    return done


def _next_task(worker, pending, items):
    """Hand ``worker`` the next task, or close its input (it exits) when none is left."""
    p = worker["process"]
    worker["task"] = pending.pop(0) if pending else None
    try:
        if worker["task"] is None:
            p.stdin.close()
        else:
            p.stdin.write(json.dumps([items[i] for i in worker["task"]]) + "\n")
            p.stdin.flush()
    except (BrokenPipeError, OSError):  # it is gone: its output's end says so
        pass


def _read_lines(stream, w, events):
    """A reader thread: each line of worker ``w``'s output onto ``events``, then None."""
    try:
        for line in stream:
            events.put((w, line.rstrip("\n")))
    except (OSError, ValueError):
        pass
    events.put((w, None))


def _keep_tail(stream, lines):
    """A reader thread: the last lines of a worker's standard error kept in ``lines``."""
    try:
        for line in stream:
            lines.append(line.rstrip("\n"))
            del lines[:-50]
    except (OSError, ValueError):
        pass


def _stop(workers):
    """Workers still running (an error, a Ctrl-C) are terminated; every one is waited for."""
    import subprocess
    for worker in workers:
        p = worker["process"]
        if p.poll() is None and worker["task"] is not None:
            p.terminate()
        try:
            p.stdin.close()
        except OSError:
            pass
    for worker in workers:
        p = worker["process"]
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def _lost(worker, items):
    """The error of a worker that ended in the middle of a task."""
    p = worker["process"]
    try:
        status = p.wait(timeout=30)
    except Exception:  # noqa: BLE001 - still running: say so
        status = "unknown"
    worker["threads"][1].join(timeout=5)  # its last words
    last = next((line for line in reversed(worker["stderr"]) if line.strip()), "")
    task = ", ".join(repr(items[i][0]) for i in worker["task"])
    return ChildProcessError(f"a warmup worker ended (status {status}) while compiling {task}"
                             + (f": {last.strip()}" if last else ""))


def _worker_error(msg):
    """The exception a worker raised, with the worker's traceback as a note."""
    import base64
    import pickle
    try:
        exc = pickle.loads(base64.b64decode(msg["pickle"]))
    except Exception:  # noqa: BLE001 - not picklable: its type and message
        exc = ChildProcessError(f"{msg['error']}: {msg['message']}")
    if hasattr(exc, "add_note"):
        exc.add_note("in a warmup worker process:\n" + msg["traceback"].rstrip())
    return exc


def serve(lock, timed):
    """A worker process's loop; returns its exit status.

    Each line of standard input is a task (a JSON list of items); ``timed(item)`` compiles an item
    and returns its entry, which goes to standard output as a JSON line; then ``{"done": true}``.
    An exception ends the loop with ``{"error": ...}`` (its type, message, pickle and traceback)
    and status 1.  Anything else written to standard output goes to standard error; Numba's cache
    files are read and written under ``lock`` (:func:`lock_cache_files`)."""
    import base64
    import pickle
    import traceback

    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    lock_cache_files(lock)
    seconds()  # count from here
    for line in sys.stdin:
        try:
            for item in json.loads(line):
                out.write(json.dumps({"entry": timed(tuple(item))}) + "\n")
                out.flush()
        except Exception as e:  # noqa: BLE001 - sent to the caller, raised there
            try:
                data = base64.b64encode(pickle.dumps(e)).decode("ascii")
            except Exception:  # noqa: BLE001 - not picklable
                data = ""
            out.write(json.dumps({"error": type(e).__name__, "message": str(e), "pickle": data,
                                  "traceback": traceback.format_exc()}) + "\n")
            out.flush()
            return 1
        out.write('{"done": true}\n')
        out.flush()
    return 0


def lock_cache_files(lock):
    """In this (worker) process, Numba's cache reads and writes of one kernel's entries hold an
    exclusive lock on the file ``lock``, which every worker of one warm-up shares: an entry is
    read, or its index and data written, while no other worker touches the cache (see the module
    text).  Each takes milliseconds; a Numba without that class, or a system without ``flock``,
    goes unlocked."""
    import functools
    try:
        import fcntl

        from numba.core.caching import IndexDataCacheFile
    except ImportError:  # pragma: no cover - not on Linux, or another Numba
        return
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)

    def locked(method):
        @functools.wraps(method)
        def under_lock(*args, **kwargs):
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                return method(*args, **kwargs)
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        return under_lock

    for name in ("save", "load"):
        if hasattr(IndexDataCacheFile, name):
            setattr(IndexDataCacheFile, name, locked(getattr(IndexDataCacheFile, name)))
