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
    """Number of workers: ``None`` or ``-1`` = every core this process may run on (its CPU
    affinity where the system has one), otherwise ``jobs`` (>= 1)."""
    from ..errors import InvalidParameterError
    if isinstance(jobs, bool) or not (jobs is None or isinstance(jobs, (int, np.integer))):
        raise InvalidParameterError("jobs must be an integer >= 1 or -1 (every core), got "
                                    f"{jobs!r:.60}")
    if jobs is None or jobs == -1:
        try:
            return max(1, len(os.sched_getaffinity(0)))
        except (AttributeError, OSError):  # no affinity on this system
            return max(1, os.cpu_count() or 1)
    jobs = int(jobs)
    if not 1 <= jobs <= 2**63 - 1:
        raise InvalidParameterError("jobs must be an integer >= 1 or -1 (every core), got "
                                    f"{str(jobs)[:60]}")
    return jobs


def vertex_ranges(out_offsets, subgraph_arcs):
    """Boundaries ``b`` (int64, first 0, last n) of vertex ranges holding about ``subgraph_arcs``
    arcs each."""
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

    from ..interrupts import check
    out = Parallel(n_jobs=min(jobs, len(arg_tuples)), backend="threading")(
        delayed(func)(*a) for a in arg_tuples)
    check()  # every worker has returned: a Ctrl-C that came meanwhile is raised here
    return out


class Workspace:
    """Reuse of large scratch buffers between the stages of one :func:`digraph.preprocess` call.

    Fresh memory costs a page fault and the kernel's zeroing of every page on first touch; on the
    development machine that was as much system time as the kernels' own user time (and arrays
    above glibc's 32 MiB mmap threshold are fresh on every allocation).  A stage :meth:`release`\\ s
    the buffers it no longer needs and a later stage's :meth:`empty` takes the smallest released
    buffer that is large enough (scratch: at most ``scratch_slack`` times too large; arrays that are
    kept, ``keep=True``: ``slack``), so most arrays of a call reuse pages that are already mapped.
    Arrays handed out are views of byte buffers; results kept in the returned
    :class:`~digraph.paths.PathSet` may be such views (at most ``slack`` times larger than needed).
    Nothing is kept after the call: the workspace dies with it.
    """

    def __init__(self, slack=1.5, scratch_slack=4.0):
        self.slack = float(slack)
        self.scratch_slack = float(scratch_slack)
        self._free = []
        self._owned = set()
        self.fresh_bytes = 0
        self.reused_bytes = 0

    def empty(self, shape, dtype, keep=False):
        dtype = np.dtype(dtype)
        shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        best = -1
        limit = max(nbytes * (self.slack if keep else self.scratch_slack), nbytes + (1 << 20))
        for i, b in enumerate(self._free):
            if nbytes <= b.size <= limit and (best < 0 or b.size < self._free[best].size):
                best = i
        if best >= 0:
            buf = self._free.pop(best)
            self.reused_bytes += nbytes
        else:
            buf = np.empty(max(nbytes, dtype.itemsize), dtype=np.uint8)
            self._owned.add(id(buf))
            self.fresh_bytes += nbytes
        return buf[:nbytes].view(dtype).reshape(shape)

    def full(self, shape, value, dtype, keep=False):
        a = self.empty(shape, dtype, keep)
        a.fill(value)
        return a

    def release(self, *arrays):
        """Give the buffers behind ``arrays`` back (the caller must hold no other view of them)."""
        for a in arrays:
            if a is None:
                continue
            b = a
            while b.base is not None and isinstance(b.base, np.ndarray):
                b = b.base
            if id(b) in self._owned and not any(b is f for f in self._free):
                self._free.append(b)


def workspace_or_numpy(ws):
    """``ws`` or a stand-in with the same methods that allocates plain numpy arrays."""
    return ws if ws is not None else _NumpyAlloc()


class _NumpyAlloc:
    @staticmethod
    def empty(shape, dtype, keep=False):
        return np.empty(shape, dtype=dtype)

    @staticmethod
    def full(shape, value, dtype, keep=False):
        return np.full(shape, value, dtype=dtype)

    @staticmethod
    def release(*arrays):
        pass
