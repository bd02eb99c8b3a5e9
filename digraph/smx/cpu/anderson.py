"""The two vector passes of Anderson acceleration for the CPU power iteration (the host side,
the Gram matrix and the least-squares solve, is :class:`digraph.dispatch.anderson.Anderson`;
the engine is :mod:`digraph.dispatch.engines.power.cpu`).

The differences live in two rings of ``m`` slots, ``dF`` and ``dG`` of shape ``(m, n)`` (slot
``s`` is the row ``dF[s]``: each pass streams whole rows, and the record pass writes one row of
each ring, so no cache line of the other slots is written).

* :func:`record` — the power round's last pass (the teleport term, ``g = G(x)``, ``‖g − x‖₁``
  and ``Σg``) fused with the record: ``f = g − x``, ``ΔF_j = f − f_prev``, ``ΔG_j = g −
  g_prev``, ``f_prev ← f``, and the dots ``a_s = ΔF_j · ΔF_s``, ``b_s = ΔF_s · f`` for the slots
  ``s < cnt`` (``s = j`` included); on a round that has no previous one, ``f_prev ← f`` only.
* :func:`mix` — ``x ← max(g − Σ_s γ_s ΔG_s, 0)``, ``z ← src_scale ∘ x`` (what the pull reads)
  and the sum of ``x``, a compensated (Neumaier) sum of
  non-negative terms, and the mass the clip removed; :func:`rescale` divides by the sum when the
  clip removed some.

Numba 0.68's parfor reductions fail on complex ``prange`` bodies, so each pass is a ``prange``
over fixed chunks whose body is a separate function writing its partial results into its own row
of an array (no reduction at all); the chunks' rows are added on the host.  The dots' rounding
does not matter (they only choose the mix); the sum's does, and is bounded by
:func:`sum_rounding`.
"""

import numpy as np
from numba import njit, prange

from ...numeric import neumaier_add
from .serial import pick, serial_twin

__all__ = ["CHUNK", "chunks", "record", "mix", "rescale", "sum_rounding", "warm_up"]

CHUNK = 1 << 12
"""Vertices a task of a pass (4,096: 32 KiB of each vector): enough tasks for 16 threads on a
graph of 64 Ki vertices, where a pass of larger tasks left most threads idle while the pull,
parallel by vertex, used them all."""


def chunks(n):
    """The number of chunks of ``n`` vertices."""
    return max(1, -(-n // CHUNK))


@njit(cache=True, nogil=True)
def _record_chunk(lo, hi, x, y, v, c, d, sd, gp, fp, dF, dG, j, cnt, out):
    m = dF.shape[0]
    for s in range(2 * m + 2):
        out[s] = 0.0
    diff = 0.0
    total = 0.0
    for i in range(lo, hi):
        gi = y[i] + c * v[i] + sd * d[i]
        y[i] = gi
        f = gi - x[i]
        diff += abs(f)
        total += gi
        if j < 0:
            fp[i] = f
            continue
        df = f - fp[i]
        dF[j, i] = df
        dG[j, i] = gi - gp[i]
        fp[i] = f
        for s in range(cnt):
            e = dF[s, i]
            out[s] += df * e
            out[m + s] += e * f
    out[2 * m] = diff
    out[2 * m + 1] = total


@njit(parallel=True, cache=True, nogil=True)
def _record(x, y, v, c, d, sd, gp, fp, dF, dG, j, cnt, parts):
    n = x.size
    for k in prange(parts.shape[0]):
        lo = k * CHUNK
        hi = min(lo + CHUNK, n)
        _record_chunk(lo, hi, x, y, v, c, d, sd, gp, fp, dF, dG, j, cnt, parts[k])


_record_serial = serial_twin(_record)


def record(x, y, v, c, d, sd, gp, fp, dF, dG, j, cnt, parts):
    """The power round's last pass, ``g = y + c·v + sd·d`` (in ``y``), fused with the record
    pass of slot ``j`` (``cnt`` slots in use, ``j < cnt``; ``j = -1``: ``f_prev ← f`` only):
    see the module docstring; ``x`` the iterate, ``gp`` the previous ``g``, ``fp`` the previous
    ``f`` (overwritten by ``f``); ``parts`` a ``(chunks(n), 2m + 2)`` scratch array.  Returns
    ``(‖g − x‖₁, Σg, a, b)``, ``a`` and ``b`` of ``cnt`` floats (None when storing)."""
    pick(_record, _record_serial, x.size)(x, y, v, c, d, sd, gp, fp, dF, dG, j, cnt, parts)
    tot = parts.sum(axis=0)
    m = dF.shape[0]
    if j < 0:
        return tot[2 * m], tot[2 * m + 1], None, None
    return tot[2 * m], tot[2 * m + 1], tot[:cnt], tot[m:m + cnt]


@njit(cache=True, nogil=True)
def _mix_chunk(lo, hi, gp, dG, gamma, scale, x, z, out):
    cnt = gamma.size
    acc = 0.0
    comp = 0.0
    clipped = 0.0
    for i in range(lo, hi):
        t = gp[i]
        for s in range(cnt):
            t -= gamma[s] * dG[s, i]
        if t < 0.0:
            clipped -= t
            t = 0.0
        x[i] = t
        z[i] = scale[i] * t
        acc, comp = neumaier_add(acc, comp, t)
    out[0] = acc
    out[1] = comp
    out[2] = clipped


@njit(parallel=True, cache=True, nogil=True)
def _mix(gp, dG, gamma, scale, x, z, parts):
    n = x.size
    for c in prange(parts.shape[0]):
        lo = c * CHUNK
        hi = min(lo + CHUNK, n)
        _mix_chunk(lo, hi, gp, dG, gamma, scale, x, z, parts[c])


_mix_serial = serial_twin(_mix)


@njit(cache=True, nogil=True)
def _total(parts):
    """Neumaier sum of the chunks' ``(acc, comp)`` pairs (columns 0 and 1)."""
    acc = 0.0
    comp = 0.0
    for c in range(parts.shape[0]):
        acc, comp = neumaier_add(acc, comp, parts[c, 0])
        acc, comp = neumaier_add(acc, comp, parts[c, 1])
    return acc + comp


def mix(gp, dG, gamma, scale, x, z, parts):
    """``x ← max(gp − Σ_s γ_s dG[s], 0)`` (``gamma``: ``cnt`` coefficients for slots ``0 …
    cnt−1``) and ``z ← scale ∘ x`` (what the pull reads); ``parts``: a ``(chunks(n), 3)``
    scratch array.  Returns (Σx computed, mass the clip removed)."""
    pick(_mix, _mix_serial, x.size)(gp, dG, np.ascontiguousarray(gamma, np.float64), scale, x, z,
                                    parts)
    return _total(parts), float(parts[:, 2].sum())


@njit(cache=True, nogil=True)
def _rescale_chunk(lo, hi, x, z, scale, r, out):
    acc = 0.0
    comp = 0.0
    for i in range(lo, hi):
        t = x[i] * r
        x[i] = t
        z[i] = scale[i] * t
        acc, comp = neumaier_add(acc, comp, t)
    out[0] = acc
    out[1] = comp


@njit(parallel=True, cache=True, nogil=True)
def _rescale(x, z, scale, r, parts):
    n = x.size
    for c in prange(parts.shape[0]):
        lo = c * CHUNK
        hi = min(lo + CHUNK, n)
        _rescale_chunk(lo, hi, x, z, scale, r, parts[c])


_rescale_serial = serial_twin(_rescale)


def rescale(x, z, scale, total, parts):
    """``x ← x / total``, ``z ← scale ∘ x`` (after a clip); returns the new Σx, computed as in
    :func:`mix`."""
    pick(_rescale, _rescale_serial, x.size)(x, z, scale, 1.0 / total, parts)
    return _total(parts)


def sum_rounding(total, n):
    """A bound on ``|Σx − computed Σx|`` for the sums of :func:`mix` and :func:`rescale` (``n``
    non-negative terms): Neumaier's ``2u|S| + O(n u²) Σ|x_i|`` within each chunk, ``u`` for
    each chunk's ``acc + comp``, and ``2u`` more for the sum over the chunks; with every term
    non-negative ``Σ|x_i| = S``, so ``(6u + 2(n + 2 chunks) u²) · S`` covers it."""
    u = np.finfo(np.float64).eps / 2
    return (6.0 * u + 2.0 * (n + 2.0 * chunks(n)) * u * u) * abs(total)


def warm_up():
    """Compile (or load from Numba's cache) every pass on a tiny problem."""
    n, m = 3, 2
    x = np.full(n, 1.0 / n)
    g = np.array([0.5, 0.25, 0.25])
    gp, fp = x.copy(), np.zeros(n)
    dF, dG = np.zeros((m, n)), np.zeros((m, n))
    parts = np.zeros((chunks(n), 2 * m + 2))
    record(x, g.copy(), x, 0.0, x, 0.0, gp, fp, dF, dG, -1, 0, parts)
    record(x, g.copy(), x, 0.0, x, 0.0, gp, fp, dF, dG, 0, 1, parts)
    parts = np.zeros((chunks(n), 3))
    z = np.empty(n)
    total, _ = mix(g, dG, np.array([0.5]), np.ones(n), x, z, parts)
    rescale(x, z, np.ones(n), total, parts)
