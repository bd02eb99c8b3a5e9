"""The checks of :func:`digraph.run`'s parameters: each returns the value as the run uses it, or
raises :class:`~.errors.InvalidParameterError` naming the parameter and the value."""

import math

import numpy as np

from .errors import InvalidParameterError, short_repr

__all__ = ["check_device", "check_cluster", "check_checkpoint", "check_threads", "check_positive",
           "check_path_options", "check_removed", "MAX_COUNT"]


def check_device(device):
    """``device`` as ``"cpu"``, ``"cuda"``, ``"cuda:N"`` or ``"cuda:0,1,..."`` (lower case, no
    blanks)."""
    if device is None:
        return "cpu"
    if not isinstance(device, str):
        raise InvalidParameterError(f"device must be a string such as 'cpu' or 'cuda:0', "
                                    f"got {device!r}")
    d = device.strip().lower()
    if d == "cpu":
        return d
    if d == "cuda" or d.startswith("cuda:"):
        ids = d[5:]
        if ids and not all(p.strip().isdigit() for p in ids.split(",")):
            raise InvalidParameterError(f"device {device!r}: expected 'cuda', 'cuda:N' or "
                                        "'cuda:0,1,...'")
        return d.replace(" ", "")
    raise InvalidParameterError(f"unknown device {device!r}; use 'cpu' or 'cuda[:N]'")


def check_cluster(cluster, device, threads):
    """``cluster=`` checked: None, or ``(client, workers, threads, device)`` for a running
    synchronous ``distributed.Client`` with at least one worker (``workers``: their addresses,
    sorted; ``threads``: theirs, summed).  ``threads`` must be None with a cluster, and
    ``device`` (checked) ``"cpu"`` (the workers' CPU threads) or ``"cuda"`` (each worker's GPU:
    every worker is asked whether it sees a CUDA device, and those that do not are named in the
    error).

    Raises
    ------
    NotAvailableError
        ``distributed`` is not installed.
    InvalidParameterError
        Not a ``Client``, a closed or asynchronous one, a cluster without workers, a
        ``device`` naming a GPU by number, workers without a GPU for ``"cuda"``, or
        ``threads=`` with it.
    """
    if cluster is None:
        return None
    try:
        from distributed import Client
    except ImportError:
        from .errors import NotAvailableError
        raise NotAvailableError("cluster= needs Dask's distributed package: pip install "
                                "'digraph-engine[cluster]'") from None
    if not isinstance(cluster, Client):
        raise InvalidParameterError(f"cluster must be a distributed.Client connected to a Dask "
                                    f"cluster, got {short_repr(cluster)}")
    if threads is not None:
        raise InvalidParameterError("threads= sets this process's CPU threads; with cluster= "
                                    "each worker uses its own threads (its nthreads)")
    if cluster.asynchronous:
        raise InvalidParameterError("cluster= needs a synchronous distributed.Client (this one "
                                    "was made with asynchronous=True)")
    if cluster.status != "running":
        raise InvalidParameterError(f"cluster=: the distributed.Client is {cluster.status}, "
                                    "not running")
    nthreads = cluster.nthreads()
    if not nthreads:
        address = getattr(cluster.scheduler, "address", None)
        raise InvalidParameterError(
            f"cluster=: the Dask cluster{f' at {address}' if address else ''} has no worker; "
            "start some (LocalCluster(n_workers=2), dask-worker ADDRESS) or wait for them "
            "(client.wait_for_workers(n))")
    workers = sorted(nthreads)
    if device != "cpu":
        _check_gpus(cluster, workers, device)
    return cluster, workers, sum(int(nthreads[w]) for w in workers), device


def _check_gpus(client, workers, device):
    """``device="cuda"`` with ``cluster=``: each worker runs on the first GPU its process sees
    (dask-cuda starts one worker a GPU); ``"cuda:N"`` is refused, and so is a cluster whose
    workers do not all see a CUDA device (those are named)."""
    from .dispatch.engines.power.cluster_checks import gpu_workers
    if device != "cuda":
        raise InvalidParameterError(
            f"device={device!r} with cluster=: each worker uses the first GPU it sees (start "
            "one worker a GPU, as dask-cuda's LocalCUDACluster or dask-cuda-worker do); pass "
            "device='cuda'")
    seen = gpu_workers(client, workers)
    without = [w for w in workers if not seen[w]]
    if without:
        many = len(without) > 1
        raise InvalidParameterError(
            f"device='cuda' with cluster=: worker{'s' if many else ''} {', '.join(without)} "
            f"see{'' if many else 's'} no CUDA device (numba.cuda finds none in "
            f"{'their processes' if many else 'its process'}); start GPU workers with "
            "dask-cuda, or pass device='cpu' to run on the workers' CPUs")


def check_checkpoint(checkpoint_every, cluster):
    """``checkpoint_every`` as a positive int, or None; it applies to a cluster run only
    (:class:`InvalidParameterError` naming it otherwise)."""
    if checkpoint_every is None:
        return None
    if cluster is None:
        raise InvalidParameterError(
            f"checkpoint_every={short_repr(checkpoint_every)} applies to a run on a Dask cluster "
            "(cluster=client) only: it keeps the iterate on the client every k rounds to restart "
            "from after a lost worker")
    if isinstance(checkpoint_every, float):  # a whole float (2.0) would pass check_positive
        raise InvalidParameterError(f"checkpoint_every must be a positive integer (rounds), "
                                    f"got {short_repr(checkpoint_every)}")
    return check_positive("checkpoint_every", checkpoint_every, int)


def check_threads(threads):
    """``threads`` (None: Numba's count) as an int within the threads Numba was started with."""
    if threads is None:
        return None
    import numba
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1:
        raise InvalidParameterError(f"threads must be a positive integer, got {threads!r}")
    if threads > numba.config.NUMBA_NUM_THREADS:
        raise InvalidParameterError(
            f"threads={threads} exceeds the {numba.config.NUMBA_NUM_THREADS} threads Numba was "
            "started with (set NUMBA_NUM_THREADS before importing digraph to allow more)")
    return int(threads)


MAX_COUNT = 2**63 - 1
"""The largest round limit, batch or other count a run accepts: what the engines' int64
counters hold."""


def check_positive(name, value, kind):
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


def check_path_options(cache, preprocess):
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
    from .preprocess import DEFAULTS, check_params
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
        check_params(**dict(DEFAULTS, **{k: v for k, v in params.items() if k != "jobs"}))
    except InvalidParameterError as e:
        raise InvalidParameterError(f"preprocess: {e}") from None
    jobs = params.get("jobs")
    if jobs is not None and (isinstance(jobs, (bool, np.bool_)) or not isinstance(
            jobs, (int, np.integer)) or not (jobs == -1 or 1 <= jobs <= MAX_COUNT)):
        raise InvalidParameterError(f"preprocess: jobs must be -1 (every core) or an integer "
                                    f"from 1 to 2**63 - 1, got {short_repr(jobs)}")
    return cache, params


def check_removed(params):
    """Refuse the parameters of :func:`digraph.run` that were removed, naming what replaced
    them (:class:`~digraph.errors.InvalidParameterError`)."""
    if "state" in params:
        raise InvalidParameterError(
            "state= was removed: mode='scc' is the SCC engine with one residual per vertex (the "
            "old state='vertex'), mode='path' walks the paths (the old state='arc')")

