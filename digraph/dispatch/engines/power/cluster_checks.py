"""The cluster placement's pre-flight checks: what the workers of a Dask cluster must have before
a run sends them anything (:mod:`.cluster`, :func:`digraph.checks.check_cluster`).

* :func:`gpu_workers`: which workers see a CUDA device (asked of the workers themselves with
  ``client.run``), for ``device="cuda"`` with ``cluster=``: the error names the workers that
  have no GPU; :func:`gpu_free`, each one's free GPU memory for :func:`check_memory`;
* :func:`shard_bytes` and :func:`check_memory`: each worker's ``memory_limit`` (the scheduler's
  record of it; 0 or None is no limit) against an estimate of the bytes its shard and the run's
  vectors take there, checked after the cut and before any shard is loaded.

The workers' side (:func:`sees_gpu`) is a plain function of this module, which every worker
imports as ``digraph`` is installed there.
"""

import numpy as np

from ....errors import InvalidParameterError

__all__ = ["sees_gpu", "gpu_workers", "gpu_free", "shard_bytes", "check_memory",
           "short_of_memory", "memory_words", "memory_limits", "RUN_VECTORS"]

#: the per-vertex float64 vectors a run keeps on a worker, besides the shard's offsets: ``x``,
#: ``y``, the teleport or ``b`` vector, the dangling vector, ``src_scale``, ``dst_scale`` and the
#: bound's weights (:class:`.cluster_state.RunState`)
RUN_VECTORS = 7


def sees_gpu():
    """On a worker: the number of CUDA devices this process sees (0 without CUDA, numba-cuda or
    a device).  Never raises."""
    try:
        from numba import cuda
        return len(cuda.gpus) if cuda.is_available() else 0
    except Exception:
        return 0


def gpu_free():
    """On a worker: the free bytes of the first GPU its process sees (CUDA's count, before the
    run's arrays), or 0 where unknown (no GPU, the simulator).  Never raises."""
    import os
    if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") == "1":
        return 0
    try:
        from numba import cuda
        return int(cuda.current_context().get_memory_info()[0]) if cuda.is_available() else 0
    except Exception:
        return 0


def gpu_workers(client, workers, timeout=10.0):
    """``{address: number of CUDA devices it sees}`` for ``workers``, asked of each with
    ``client.run`` (a worker that does not answer within ``timeout`` s counts 0)."""
    return _ask(client, workers, sees_gpu, timeout)


def _ask(client, workers, fn, timeout):
    """``{address: fn() on that worker}`` (an int; 0 for a worker that fails or does not answer
    within ``timeout`` s)."""
    import asyncio

    async def ask():
        return await asyncio.wait_for(client._run(fn, workers=list(workers),
                                                  on_error="return"), timeout)
    try:
        got = client.sync(ask)
    except Exception:
        return {w: 0 for w in workers}
    return {w: int(got[w]) if isinstance(got.get(w), (int, np.integer)) else 0
            for w in workers}


def shard_bytes(in_offsets, bounds, has_coef, dual=False, extra_vectors=0):
    """The estimated bytes of each worker's shard and run vectors, an int64 array (one a shard).

    For shard ``i`` of ``n_i`` vertices and ``m_i`` in-arcs, in a graph of ``n`` vertices::

        8 · (m_i · (1 + a) + (n_i + 1) + RUN_VECTORS · n_i + r_i),   r_i = min(m_i, n − n_i)

    the in-arcs' sources (8 bytes each as they arrive), their factors (``a`` = 1 when the system
    has arc factors, else 0), the row offsets, the run's per-vertex vectors
    (:data:`RUN_VECTORS` of them) and the entries of the other ranges it reads (at most one an
    in-arc, at most the other ranges' vertices).  With ``dual``, the dual weights' sweeps
    (:mod:`.cluster_dual_worker`) on top: ``12 m_i + 16 (n_i + r_i + 1) + 16 n_i`` (the arcs by
    source, their offsets and the sums over the compact vector, ``w`` and the next ``w``);
    ``extra_vectors`` per-vertex vectors more (Anderson's rings, :mod:`.cluster_anderson`).  A
    lower estimate, not a peak: the worker's own memory and Python's objects come on top.
    """
    b = np.asarray(bounds, np.int64)
    off = np.asarray(in_offsets, np.int64)
    n = int(b[-1])
    nv = np.diff(b)
    m = off[b[1:]] - off[b[:-1]]
    a = 1 if has_coef else 0
    r = np.minimum(m, n - nv)
    need = 8 * (m * (1 + a) + (nv + 1) + (RUN_VECTORS + extra_vectors) * nv + r)
    if dual:
        need = need + 12 * m + 16 * (nv + r + 1) + 16 * nv
    return need


def memory_limits(client, workers):
    """``{address: memory_limit in bytes or 0}`` from the scheduler's record of the workers (0 or
    None: no limit)."""
    info = client.scheduler_info().get("workers", {})
    return {w: int(info.get(w, {}).get("memory_limit") or 0) for w in workers}


def short_of_memory(limits, workers, need):
    """``[(worker, memory_limit, bytes needed)]`` of the ``workers`` whose limit (``limits``:
    :func:`memory_limits`; 0 is none) is below their ``need`` (one a worker)."""
    return [(w, limits[w], int(need[i])) for i, w in enumerate(workers)
            if limits[w] and limits[w] < need[i]]


def memory_words(short, what="memory_limit"):
    """:func:`short_of_memory`'s workers in words (``what``: the limit they are short of)."""
    return "; ".join(f"worker {w} has {what} {_mib(lim)} but its shard needs about "
                     f"{_mib(est)}" for w, lim, est in short)


def check_memory(client, workers, in_offsets, bounds, has_coef, gpu=False, extra_vectors=0):
    """Raise :class:`InvalidParameterError` naming each worker whose ``memory_limit`` is smaller
    than its shard's estimated bytes (:func:`shard_bytes`); workers without a limit pass.  With
    ``gpu`` (GPU workers), each worker's free GPU memory too (:func:`gpu_free`; unknown, as
    under the simulator, passes); ``extra_vectors`` as in :func:`shard_bytes`.  Returns the estimates (a list of int, one a worker)."""
    need = shard_bytes(in_offsets, bounds, has_coef, extra_vectors=extra_vectors)
    short = short_of_memory(memory_limits(client, workers), workers, need)
    where = "memory_limit"
    if not short and gpu:
        short = short_of_memory(_ask(client, workers, gpu_free, 10.0), workers, need)
        where = "free GPU memory"
    if short:
        said = memory_words(short, where)
        raise InvalidParameterError(
            f"cluster=: {said} (in-arcs, offsets and the run's vectors; nothing was loaded). "
            f"Start workers with more {where}, or more workers so that each shard is smaller")
    return [int(x) for x in need]


def _mib(nbytes):
    return f"{nbytes / 2**20:.2f} MiB ({nbytes:,} bytes)"
