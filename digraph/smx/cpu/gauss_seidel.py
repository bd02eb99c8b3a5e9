"""The Gauss–Seidel sweep of the CPU power iteration's accelerator (the engine is
:mod:`digraph.dispatch.engines.power.cpu_sweeps`).

For the Google-matrix map ``M x = A x + σ(x)·d + c(x)·v`` with ``σ(x) = gᵀx`` (the dangling
mass) and ``c(x) = Σx − Σ_u colsum(A)_u x_u − σ(x)`` (what the teleport puts back; ``M`` keeps
``Σx``), a sweep updates every vertex ``w`` in place, in vertex order,

    x_w ← ((A x)_w − A_ww x_w + c·v_w + σ·d_w) / (1 − A_ww),

reading the values of the vertices before ``w`` already swept (Gauss–Seidel, the method of
PRPACK: D. F. Gleich, "PRPACK", and Langville and Meyer, *Google's PageRank and Beyond*, 2006,
§8.4), and solving each vertex's own self-loop ``A_ww`` exactly; ``c`` and ``σ`` are those of
the iterate at the sweep's start.  The fixed point is ``M``'s.  On several threads the vertices
are cut into one range of about equal in-arcs a task: a task reads its own range's new values
and the others' values of the sweep's start (block Jacobi between the ranges, Gauss–Seidel
within each), so the sweep's values do not depend on the threads' timing.

A sweep writes ``x`` and ``z = src_scale ∘ x`` (what the pulls read) and returns, per task, the
sums the next sweep's ``c`` needs (``Σx`` and ``Σ colsum·x`` of the new iterate) and
``‖x_new − x_old‖₁``; ``σ`` is a gather over the dangling vertices (:func:`gather`).  The
sweeps carry no error bound: the engine's stop is a power round ``G(x)`` of the swept iterate.
"""

import numpy as np
from numba import njit, prange

from .serial import serial_twin

__all__ = ["sweep", "sweep_serial", "sums", "gather", "column_sums", "column_sums_serial",
           "crossing_arcs", "warm_up", "PARTS"]

PARTS = 3
"""Per-task sums a sweep writes: ``‖Δx‖₁``, ``Σx`` and ``Σ colsum·x`` of the new values."""


@njit(cache=True, nogil=True)
def _sweep_range(lo, hi, in_offsets, in_sources, in_coef, has_coef, src_scale, dst_scale, diag,
                 has_diag, colsum, v, d, has_d, c, sd, omega, x, zz, out):
    n = x.size
    diff = 0.0
    sx = 0.0
    sa = 0.0
    span = np.uint64(hi - lo)
    whole = lo == 0 and hi == n
    for w in range(lo, hi):
        acc = 0.0
        if whole:  # one task: every source is read as swept so far
            if has_coef:
                for k in range(in_offsets[w], in_offsets[w + 1]):
                    acc += in_coef[k] * zz[n + in_sources[k]]
            else:
                for k in range(in_offsets[w], in_offsets[w + 1]):
                    acc += zz[n + in_sources[k]]
        elif has_coef:  # the live half for this range's sources, else the start's: no branch
            for k in range(in_offsets[w], in_offsets[w + 1]):
                u = in_sources[k]
                acc += in_coef[k] * zz[u + n * (np.uint64(u - lo) < span)]
        else:
            for k in range(in_offsets[w], in_offsets[w + 1]):
                u = in_sources[k]
                acc += zz[u + n * (np.uint64(u - lo) < span)]
        ax = dst_scale[w] * acc
        old = x[w]
        t = ax + c * v[w]
        if has_d:
            t += sd * d[w]
        a = 0.0
        if has_diag:
            a = diag[w]
            t = (t - a * old) / (1.0 - a)
        t = old + omega * (t - old)  # over-relaxed (omega = 1: the plain sweep)
        new = t if t > 0.0 else 0.0  # rounding near 0, or an overshoot (the answer is >= 0)
        x[w] = new
        zz[n + w] = src_scale[w] * new
        diff += abs(new - old)
        sx += new
        sa += colsum[w] * new
    out[0] = diff
    out[1] = sx
    out[2] = sa


@njit(parallel=True, cache=True, nogil=True)
def sweep(cuts, in_offsets, in_sources, in_coef, has_coef, src_scale, dst_scale, diag, has_diag,
          colsum, v, d, has_d, c, sd, omega, x, zz, parts):
    """One sweep over the ranges ``cuts`` (one a task).  ``zz`` holds two copies of ``z =
    src_scale ∘ x``: ``zz[n:]`` the live one the sweep writes, ``zz[:n]`` the sweep's start
    (copied by the caller), read for the other ranges' sources through an index, not a branch;
    ``parts[t]`` gets task ``t``'s :data:`PARTS` sums.  ``has_diag`` / ``has_d``: whether
    there are self-loops and a dangling vector (else ``diag`` and ``d`` are not read);
    ``colsum``: the column sums of ``A``; ``omega``: the over-relaxation factor
    (:mod:`.relaxation`; 1.0 the plain sweep)."""
    for t in prange(cuts.size - 1):
        _sweep_range(cuts[t], cuts[t + 1], in_offsets, in_sources, in_coef, has_coef, src_scale,
                     dst_scale, diag, has_diag, colsum, v, d, has_d, c, sd, omega, x, zz,
                     parts[t])


sweep_serial = serial_twin(sweep)


@njit(cache=True, nogil=True)
def sums(x, colsum):
    """(``Σx``, ``Σ colsum·x``) of an iterate (the sweeps' start from a power round)."""
    sx = 0.0
    sa = 0.0
    for i in range(x.size):
        sx += x[i]
        sa += colsum[i] * x[i]
    return sx, sa


@njit(cache=True, nogil=True)
def gather(idx, w, x):
    """``Σ_k w[k]·x[idx[k]]`` (the dangling mass ``σ = gᵀx``; 0.0 for no terms)."""
    acc = 0.0
    for k in range(idx.size):
        acc += w[k] * x[idx[k]]
    return acc


@njit(parallel=True, cache=True, nogil=True)
def column_sums(cuts, out_offsets, out_targets, src_scale, arc_scale, has_arc, dst_scale, out):
    """``out[u] = src_scale[u] · Σ_{e = u→w} arc_scale[e] · dst_scale[w]``, the column sums of
    ``A`` (``arc_scale`` in CSR order, unread unless ``has_arc``), over the ranges of ``cuts``
    (:func:`digraph.dispatch.runtime.cpu_tasks.task_cuts` of ``out_offsets``) in parallel."""
    for t in prange(cuts.size - 1):
        for u in range(cuts[t], cuts[t + 1]):
            acc = 0.0
            for e in range(out_offsets[u], out_offsets[u + 1]):
                acc += (arc_scale[e] if has_arc else 1.0) * dst_scale[out_targets[e]]
            out[u] = src_scale[u] * acc


column_sums_serial = serial_twin(column_sums)


@njit(cache=True, nogil=True)
def crossing_arcs(cuts, in_offsets, in_sources):
    """In-arcs whose source lies in another range of ``cuts`` than their target: the arcs a
    several-range sweep reads from the sweep's start instead of the live iterate.  One serial
    pass, counted once per graph and thread count."""
    total = 0
    for t in range(cuts.size - 1):
        lo = cuts[t]
        hi = cuts[t + 1]
        for k in range(in_offsets[lo], in_offsets[hi]):
            u = in_sources[k]
            if u < lo or u >= hi:
                total += 1
    return total


def warm_up():
    """Compile (or load from Numba's cache) the sweep, :func:`column_sums` and their serial
    twins, :func:`sums`, :func:`gather` and :func:`crossing_arcs` on a tiny problem: a ring of
    three vertices, swept as one range and as two."""
    n = 3
    off = np.arange(n + 1, dtype=np.int64)
    src = np.array([2, 0, 1], np.int32)
    one = np.ones(n)
    zero = np.zeros(n)
    x = np.full(n, 1.0 / n)
    zz = np.concatenate([x, x])
    for cuts in (np.array([0, n], np.int64), np.array([0, 1, n], np.int64)):
        parts = np.zeros((cuts.size - 1, PARTS))
        for kernel in (sweep, sweep_serial):
            kernel(cuts, off, src, np.empty(0), False, one, one, zero, False, one, x, x, False,
                   0.1, 0.0, 1.0, x, zz, parts)
    sums(x, one)
    gather(np.empty(0, np.int64), np.empty(0), x)
    crossing_arcs(np.array([0, 1, n], np.int64), off, src)
    for kernel in (column_sums, column_sums_serial):
        kernel(np.array([0, n], np.int64), off, src, one, one, True, one, np.empty(n))
