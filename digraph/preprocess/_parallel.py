"""Small helpers shared by the preprocessing stages: worker count, subgraph ranges, thread pool.

Subgraphs are contiguous vertex ranges balanced by arc count.  Their number depends only on the
graph and on ``subgraph_arcs`` -- never on the number of workers -- so that every result is
identical for any ``jobs``.  Workers are joblib threads running Numba kernels compiled with
``nogil=True``: nothing is pickled, the arrays are shared.
"""

import os

import numpy as np

__all__ = ["resolve_jobs", "vertex_ranges", "run_parallel"]


def resolve_jobs(jobs):
    """Number of worker threads: ``None`` or ``-1`` = every core, otherwise ``jobs`` (>= 1)."""
    if jobs is None or jobs == -1:
        return max(1, os.cpu_count() or 1)
    jobs = int(jobs)
    if jobs < 1:
        from ..errors import InvalidParameterError
        raise InvalidParameterError(f"jobs must be >= 1 or -1 (every core), got {jobs}")
    return jobs


def vertex_ranges(out_offsets, subgraph_arcs):
    """Boundaries ``b`` (int64, first 0, last n) of vertex ranges holding about ``subgraph_arcs`` arcs each."""
    n = out_offsets.size - 1
    m = int(out_offsets[-1])
    parts = max(1, min(n, -(-m // max(1, int(subgraph_arcs)))))
    targets = (np.arange(1, parts, dtype=np.int64) * m) // parts
    inner = np.searchsorted(out_offsets, targets, side="left").astype(np.int64)
    b = np.concatenate([[0], inner, [n]]).astype(np.int64)
    return np.unique(b) if n > 0 else np.zeros(1, np.int64)


def run_parallel(func, arg_tuples, jobs):
    """``[func(*a) for a in arg_tuples]`` on ``jobs`` joblib threads (in order)."""
    arg_tuples = list(arg_tuples)
    if jobs <= 1 or len(arg_tuples) <= 1:
        return [func(*a) for a in arg_tuples]
    from joblib import Parallel, delayed
    return Parallel(n_jobs=min(jobs, len(arg_tuples)), backend="threading")(
        delayed(func)(*a) for a in arg_tuples)
