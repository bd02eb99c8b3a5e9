"""A tight, sound L1 error bound for linear systems whose columns may sum to 1 or more.

For ``x = b + A x`` with ``A ≥ 0`` and spectral radius below 1, the error of a state ``x`` with
residual ``r = b + A x − x`` is ``x* − x = (I − A)⁻¹ r``, so

    ‖x* − x‖₁ ≤ 1ᵀ (I − A)⁻¹ |r| = zᵀ |r|,        z = 1 + Aᵀ z        (the *dual weights*),

with equality when ``r ≥ 0`` (every push engine's residual is non-negative).  ``z_u`` is the L1
mass that one unit of residual at ``u`` ends up adding to the answer.  When the largest column sum
``γ1`` of ``A`` is below 1, ``z ≤ 1/(1 − γ1)`` everywhere and the classic bound ``‖r‖₁/(1 − γ1)``
follows; but adsorption's columns sum to up to ``β · out-degree / in-degree`` (17 on wiki-Vote,
36 on dblp-2010), and its only classic bound was the L∞ route ``n · ‖r‖∞ / (1 − γ∞)``, which is
``n`` times too loose: tolerances that float64 can reach became unreachable.

:func:`dual_weights` computes an upper bound ``ẑ ≥ z`` that is *verified*, not trusted: any
positive ``w`` with ``s = min_u (w − Aᵀ w)_u > 0`` gives ``ẑ = w / s`` (then
``ẑ − Aᵀ ẑ ≥ 1``, so ``ẑ − z = (I − Aᵀ)⁻¹ (ẑ − Aᵀ ẑ − 1) ≥ 0``).  ``w`` comes from a few Jacobi
sweeps of ``z = 1 + Aᵀ z`` from ``z = 1``, which rise monotonically towards ``z``; they stop once
``s ≥`` :attr:`DualSettings.slack` (then ``ẑ ≤ z / slack``).  ``max ẑ`` plays the part of
``1/(1 − γ1)`` in every engine's budget (an *effective* ``γ1 = 1 − 1 / max ẑ``); the final
certificate uses the whole vector (:func:`digraph.dispatch.convergence.certified_bound`).
"""

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
from numba import njit, prange

from .settings import current, register
from ..numeric import neumaier_add
from .systems import linear_factors
from . import driver

__all__ = ["dual_weights", "cached_dual_weights", "scaled_system", "solve_scaled", "DualSettings",
           "DEFAULT"]


@dataclass(frozen=True)
class DualSettings:
    """When the sweeps of :func:`dual_weights` stop.

    Attributes
    ----------
    slack : float
        Sweeps stop once ``min(w − Aᵀ w) ≥`` this (``ẑ`` within ``1/slack`` of ``z``).  Measured
        (sweeps, seconds and ``ẑ / z`` on four graphs): docs/history/benchmarks-notebook.md,
        "Adsorption on the CPU and on one GPU", and docs/history/docstring-measurements.md.  The
        value 0.5 itself was not measured against others: chosen as a factor of 2 on the bound.
    max_sweeps : int
        Sweeps after which the dual weights are given up (the L∞ route remains).  Not measured:
        chosen as a cap far above the sweeps the graphs measured needed.
    """

    slack: float = 0.5
    max_sweeps: int = 500


DEFAULT = register(DualSettings())

_EPS = np.finfo(np.float64).eps
"""The rounding of the verification sweep: each ``(Aᵀ w)_u`` is a compensated sum of products of
non-negative factors, exact to a few ulps of ``(Aᵀ w)_u ≤ w_u``; ``s`` is lowered by
``16 eps · max w`` before it is used."""


@njit(parallel=True, cache=True, nogil=True)
def _sweep(out_offsets, out_targets, src_scale, arc_scale, has_arc, dst_scale, w, out):
    """``out = 1 + Aᵀ w``; returns ``min_u (w_u − (Aᵀ w)_u)`` (compensated sums)."""
    n = w.size
    smin = np.inf
    for u in prange(n):
        acc = 0.0
        comp = 0.0
        for e in range(out_offsets[u], out_offsets[u + 1]):
            acc, comp = neumaier_add(
                acc, comp,
                (arc_scale[e] if has_arc else 1.0) * dst_scale[out_targets[e]] * w[out_targets[e]])
        y = src_scale[u] * (acc + comp)
        out[u] = 1.0 + y
        smin = min(smin, w[u] - y)
    return smin


def _factors_key(system, settings):
    """A digest of what decides ``A`` (not ``b``), and the settings: runs with other seeds share
    their weights."""
    import hashlib
    h = hashlib.blake2b(digest_size=16)
    for a in (system.src_scale, system.arc_scale, system.dst_scale):
        h.update(b"-" if a is None else np.ascontiguousarray(a, np.float64).tobytes())
    return ("dual_weights", h.hexdigest(), settings)


def cached_dual_weights(graph, system, settings=None):
    """(ẑ, sweeps, reused): :func:`dual_weights`, kept on ``graph`` for the next run with the same
    coefficients and settings (``A`` depends on the factors only: adsorption with other seeds
    reuses it).  ``settings``: a :class:`DualSettings` (default :data:`DEFAULT`)."""
    settings = current(DEFAULT) if settings is None else settings
    key = _factors_key(system, settings)
    hit = graph._cache.get(key)
    if hit is not None:
        return hit[0], hit[1], True
    zhat, sweeps = dual_weights(graph, system, settings=settings)
    graph._cache[key] = (zhat, sweeps)
    return zhat, sweeps, False


def dual_weights(graph, system, *, settings=None):
    """(ẑ, sweeps): verified dual weights of ``system`` (float64, one per vertex), or
    (None, sweeps) when no super-solution was found within ``settings.max_sweeps`` (not a
    contraction in any weighted L1 norm this iteration can find).  ``settings``: a
    :class:`DualSettings` (default :data:`DEFAULT`).

    Costs one pass over the arcs per sweep (:class:`DualSettings` says when they stop).
    """
    settings = current(DEFAULT) if settings is None else settings
    slack, max_sweeps = float(settings.slack), int(settings.max_sweeps)
    n = graph.num_vertices
    src_scale, dst_scale, has_arc, arc = linear_factors(graph, system)
    st = SimpleNamespace(w=np.ones(n, np.float64), nxt=np.empty(n, np.float64), found=False)
    if n == 0:
        return st.w, 0

    def sweep(left):
        s = _sweep(graph.out_offsets, graph.out_targets, src_scale, arc, has_arc, dst_scale, st.w,
                   st.nxt)
        # s was measured on w: w / s is a verified super-solution once s > 0
        if s >= slack:
            safe = s - 16 * _EPS * float(st.w.max())
            if safe > 0:
                st.w *= 1.0 / safe
                st.found = True
                return 1
        st.w, st.nxt = st.nxt, st.w
        return 1 if np.isfinite(st.w).all() else 0

    sweeps, _ = driver.local(lambda: st.found, sweep, max_sweeps=max_sweeps)
    return (st.w, sweeps) if st.found else (None, max_sweeps)


def scaled_system(system, zhat):
    """The system in the variables ``x' = ẑ ∘ x``: ``b' = ẑ ∘ b``, ``A' = diag(ẑ) A diag(ẑ)⁻¹``.

    Its residual is ``r' = ẑ ∘ r``, so ``‖r'‖₁ = ẑᵀ|r|`` bounds the *original* error: the system
    carries ``error_gammas = (0, ∞)``, which every CPU engine's bound then uses
    (``‖r'‖₁ / (1 − 0)``, no L∞ route).  A push on ``x'`` is the same push as on ``x``, scaled; the
    soft priority by pending mass then favours the residuals that weigh most in the bound.
    """
    from ..algorithms.base import LinearSystem
    n = zhat.size
    src = np.ones(n) if system.src_scale is None else np.asarray(system.src_scale, np.float64)
    dst = np.ones(n) if system.dst_scale is None else np.asarray(system.dst_scale, np.float64)
    out = LinearSystem(b=np.asarray(system.b, np.float64) * zhat, src_scale=src / zhat,
                       arc_scale=system.arc_scale, dst_scale=dst * zhat, normalize=False)
    out.error_gammas = (0.0, np.inf)
    return out


def solve_scaled(solve, graph, system, gammas, *, tol, stats, dual_settings=None, **kw):
    """Run ``solve(graph, system', tol=..., stats=..., **kw)`` on :func:`scaled_system` when the
    dual weights pay (``γ1 ≥ 1``: the classic L1 bound does not hold), and certify the answer on
    the original system with ``ẑ``; returns (x, converged), or None when they do not apply (the
    caller runs ``system`` itself).  ``dual_settings``: a :class:`DualSettings` for the weights
    (default :data:`DEFAULT`); ``kw`` goes to ``solve`` (an engine's ``settings=`` among them).
    """
    import time

    from .convergence import certified, certified_bound
    if system.normalize or gammas[0] < 1.0 or getattr(system, "error_gammas", None) is not None:
        return None
    t0 = time.perf_counter()
    zhat, sweeps, reused = cached_dual_weights(graph, system, dual_settings)
    stats["time_dual"] = time.perf_counter() - t0
    stats["dual_sweeps"] = 0 if reused else int(sweeps)
    if zhat is None:
        stats["error_route"] = "linf"
        return None
    stats["error_route"] = "dual"
    stats["dual_max"] = float(zhat.max())
    xs, converged = solve(graph, scaled_system(system, zhat), tol=tol, stats=stats, **kw)
    x = xs / zhat
    rvec = np.empty(graph.num_vertices, np.float64)
    bound, r1, floor = certified_bound(graph, system, x, gammas, rvec, dual=zhat)
    stats["error_bound"] = float(bound)
    stats["residual_l1"] = float(r1)
    stats.pop("floor_limited", None)
    stats.pop("error_floor", None)
    if converged:
        converged = certified(bound, r1, floor, tol, stats)
    return x, converged
