"""A Dask worker's pull in two passes, so that the exchange of a round runs while the worker
pulls what it already holds (:mod:`.cluster_batch`).

A shard's in-arcs are kept with each vertex's sources of its own range first
(:func:`split`): the local pass (:func:`pull_local`) sums those, which read only the worker's
own entries of ``z`` (final once its teleport has run), while the entries the other workers send
are on their way; the remote pass (:func:`pull_remote`) continues each vertex's sum over the
other in-arcs once they came, and scales it.  Each vertex's sum is one Neumaier sum over all its
in-arcs, its state (the sum and the compensation) kept between the passes, so the pull's
rounding is the CPU engine's (:func:`digraph.dispatch.engines.power.cpu._pull`, whose bound
does not depend on the order of the terms).
"""

import numpy as np
from numba import njit, prange

from ....numeric import neumaier_add
from ....smx.cpu.serial import serial_twin

__all__ = ["split", "pull_local", "pull_local_serial", "pull_remote", "pull_remote_serial"]


@njit(cache=True, nogil=True)
def _split(off, src, lo, hi, perm, mid):
    for v in range(off.size - 1):
        a = off[v]
        for k in range(off[v], off[v + 1]):  # its own range's sources first, in order
            if lo <= src[k] < hi:
                perm[a] = k
                a += 1
        mid[v] = a
        for k in range(off[v], off[v + 1]):
            if not lo <= src[k] < hi:
                perm[a] = k
                a += 1


def split(off, src, lo, hi):
    """``(perm, mid)``: the order of the in-arcs (``off``, ``src``: a shard's CSR in the compact
    numbering) with each vertex's sources in ``[lo, hi)`` (its own range) first, both parts in
    their order (None where that is already the order), and ``mid[v]``, where vertex ``v``'s
    other in-arcs start in that order."""
    m = int(off[-1]) if off.size else 0
    perm = np.empty(m, np.int64)
    mid = np.empty(max(off.size - 1, 0), np.int64)
    _split(off, src, int(lo), int(hi), perm, mid)
    return (None if np.array_equal(perm, np.arange(m)) else perm), mid


@njit(parallel=True, cache=True, nogil=True)
def pull_local(cuts, off, mid, src, coef, has_coef, z, acc, comp):
    """The first pass: each vertex's Neumaier sum of ``coef · z`` over its in-arcs
    ``[off[v], mid[v])`` (its own range's sources), into ``acc`` and ``comp``."""
    for t in prange(cuts.size - 1):
        for v in range(cuts[t], cuts[t + 1]):
            a = 0.0
            c = 0.0
            for k in range(off[v], mid[v]):
                a, c = neumaier_add(a, c, (coef[k] if has_coef else 1.0) * z[src[k]])
            acc[v] = a
            comp[v] = c


pull_local_serial = serial_twin(pull_local)


@njit(parallel=True, cache=True, nogil=True)
def pull_remote(cuts, off, mid, src, coef, has_coef, z, dst_scale, acc, comp, out):
    """The second pass: each vertex's sum continued over ``[mid[v], off[v + 1])``, then
    ``out[v] = dst_scale[v] · (acc + comp)``; returns ``Σ out``."""
    total = 0.0
    for t in prange(cuts.size - 1):
        part = 0.0
        for v in range(cuts[t], cuts[t + 1]):
            a = acc[v]
            c = comp[v]
            for k in range(mid[v], off[v + 1]):
                a, c = neumaier_add(a, c, (coef[k] if has_coef else 1.0) * z[src[k]])
            y = dst_scale[v] * (a + c)
            out[v] = y
            part += y
        total += part
    return total


pull_remote_serial = serial_twin(pull_remote)
