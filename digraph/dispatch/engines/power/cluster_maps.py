"""The maps the cluster placement's power rounds iterate (:mod:`.cluster`), each with its vectors
for the workers, the round's coefficients and its certified bound; the protocol of a round (one
call to every worker, the exchange worker to worker) is the same for both.

:class:`Google`: the Google-matrix iteration of normalised linear systems (PageRank), the CPU
engine's (:mod:`.cpu`): ``x ← A x + σ d + (1 − Σ(A x) − σ) v``, its bound
``‖x_{k+1} − π‖₁ ≤ (γ1 ‖x_{k+1} − x_k‖₁ + ‖δ‖₁ + 2 |Σx_k − 1|) / (1 − γ1)``, the rounding term
counting the ``k`` partial sums added on the client.  It holds for any non-negative ``x_k``:
a run resumed from a checkpoint (:mod:`.cluster_checkpoint`) starts from the checkpointed
iterate divided by its sum, and the workers' measured ``Σx_k`` enters the bound.

The worker's round is the same for both maps: ``y ← pull(x)``, then ``y += c·v + σ·d`` with the
round's ``c`` and ``σ``, which every worker and the client find alike from the workers' sums
(:class:`GoogleRule`, :class:`AffineRule`).

:class:`Affine`: linear systems that are not normalised (adsorption, a user's
``LinearSystem``), the affine map ``x ← b + A x`` from ``x_0 = b`` (the worker's round with
``v = b``, ``c = 1``, ``σ = 0``), with the bound of one GPU's affine iteration
(:mod:`.gpu_affine`): for the computed ``y = b + A x + δ`` and dual weights ``ẑ ≥ 1 + Aᵀ ẑ``,

    ‖x* − y‖₁ ≤ Σ_v (ẑ_v − 1) |y_v − x_v| + Σ_v ẑ_v |δ_v|,

for any ``x`` (a checkpoint too: it restarts as it is).  Its three routes: ``γ1 < 1`` (the
largest column sum, ``ẑ = 1 / (1 − γ1)``: ``(γ1 ‖y − x‖₁ + ‖δ‖₁) / (1 − γ1)``); else the
verified dual weights (:func:`digraph.dispatch.dual_bound.cached_dual_weights`, sent to the
workers with the run's vectors; on a graph whose arcs only the workers hold, found there once
the run has started, :mod:`.cluster_dual`), whose rounds then also return ``Σ (ẑ − 1)|y − x|``
and ``Σ ẑ y``: ``stats["error_route"] = "dual"``; else ``n (γ∞ ‖y − x‖₁ + ‖δ‖₁) / (1 − γ∞)``
(``"linf"``).  Rounding: with ``b ≥ 0`` every iterate is non-negative; the workers' compensated
pull and the addition of ``b`` leave ``|δ_v| ≤ 8u (p_v + b_v + y_v) ≤ 16u (1 + u) y_v``
(``p_v`` the pull's value: the Google-matrix iteration's constant, :mod:`.cpu`), and the
round's sums (a chain and a tree on a worker, ``k`` parts on the client) lose at most
``(n + k) u`` of their value (:func:`~.gpu_affine.affine_bound`).

GPU workers (:mod:`.cluster_gpu_worker`) pull without compensation: their answers carry the
pull's own rounding terms, which both rules read in place of the CPU pull's constants, as one
GPU's rounds do (``e`` and ``blocks``: :func:`~.gpu_setup.round_bound`; ``q``: :mod:`.gpu_affine`).
"""

import time
from dataclasses import asdict, dataclass

import numpy as np
from numba import njit, prange

from ....algorithms.base import SumNormalized
from ....errors import InvalidParameterError
from ....smx.cpu.serial import serial_twin
from ...convergence import ROUNDING_MARGIN
from .cluster_handle import held_by
from .cpu import _dangling, power_gamma

__all__ = ["Google", "Affine", "GoogleRule", "AffineRule", "rule_of", "scalars", "SCALARS",
           "iteration", "affine_refusal", "weighted_sums",
           "weighted_sums_serial"]

_U = np.finfo(np.float64).eps / 2


def iteration(graph, system, stats):
    """The map of ``system`` on the cluster (:class:`Google` for normalised systems, else
    :class:`Affine`), or :class:`~digraph.errors.InvalidParameterError` saying why the power
    iteration cannot run it."""
    return (Google if getattr(system, "normalize", False) else Affine)(graph, system, stats)


def affine_refusal(graph, system):
    """Why :class:`Affine` cannot run ``system`` (a sentence), or None, as far as ``b`` tells
    (whether ``A`` is a contraction is checked when the run starts)."""
    if system.family != "linear" or system.normalize:
        return "the affine iteration answers linear systems that are not normalised"
    if getattr(system, "dangling", None) is not None:
        return "a dangling vector (dangling=) is run by the CPU power iteration only"
    b = np.asarray(system.b, np.float64)
    if b.shape != (graph.num_vertices,):
        return f"b needs one value per vertex ({graph.num_vertices}), got shape {b.shape}"
    if b.size and not (b.min() >= 0.0 and np.isfinite(b.sum())):
        return ("on a cluster it iterates x -> b + A x for b finite and >= 0 only (its "
                "rounding bound counts non-negative iterates)")
    return None


@njit(parallel=True, cache=True, nogil=True)
def weighted_sums(zw, y, x):
    """``(Σ (zw − 1)|y − x|, Σ zw·y)``: the affine bound's sums on the dual route (a worker's
    range)."""
    p1 = 0.0
    p2 = 0.0
    for i in prange(y.size):
        p1 += (zw[i] - 1.0) * abs(y[i] - x[i])
        p2 += zw[i] * y[i]
    return p1, p2


weighted_sums_serial = serial_twin(weighted_sums)


@dataclass(frozen=True)
class GoogleRule:
    """:class:`Google`'s round in scalars: its coefficients and bound from the workers'
    answers (dicts in shard order), which the client and every worker evaluate alike
    (:meth:`as_dict`, :func:`rule_of`)."""

    g1: float

    def coefficients(self, prev):
        """The round's ``(c, σ)`` from the workers' last answers."""
        s = sum(r["s"] for r in prev)
        sd = sum(r["sd"] for r in prev)
        return 1.0 - s - sd, sd

    def bound(self, prev, now):
        """``(bound, delta, diff)`` of the round whose answers are ``now`` (``prev`` those of
        the round before, whose pull it completed)."""
        k = len(now)
        s = sum(r["s"] for r in prev)
        sd = sum(r["sd"] for r in prev)
        sx = sum(r["sx"] for r in prev)
        c = 1.0 - s - sd
        diff = sum(r["diff"] for r in now)
        sy = sum(r["sy"] for r in now)
        if "e" in prev[0]:  # GPU workers: one GPU's rounding terms (gpu_setup.round_bound)
            e = sum(r["e"] for r in prev)
            blocks = sum(r["blocks"] for r in prev)
            floor = _U * (e + 2 * (s + abs(c) + sy) + (blocks + 8 + k) * (s + sx + sy))
        else:
            floor = 8 * _U * (s + abs(c) + sy) + 12 * _U * sd + k * _U * (s + sd + sx + sy)
        # a pulled Anderson mix (cluster_anderson): its sum's rounding is floor; its mass
        # defect widens the bound but is no floor (gpu_setup.round_bound's mixed rounds)
        floor += 2 * sum(r.get("sxr", 0.0) for r in prev) + abs(sy - 1.0)
        defect = 2 * abs(sx - 1.0)
        mixed = any(r.get("mixed") for r in prev)
        g1 = self.g1
        bound = (g1 * diff * (1.0 + ROUNDING_MARGIN) + floor + defect) / (1.0 - g1)
        return bound, (floor if mixed else floor + defect), diff

    def as_dict(self):
        return {"map": "google", **asdict(self)}


@dataclass(frozen=True)
class AffineRule:
    """:class:`Affine`'s round in scalars (``c = 1``, ``σ = 0``; the bound of its route),
    evaluated alike on the client and the workers."""

    dual: bool
    c_d: float
    c_r: float
    g1: float
    n: int

    def coefficients(self, prev):
        """``(c, σ) = (1, 0)``: the worker's ``y += c·v + σ·d`` adds ``b``."""
        return 1.0, 0.0

    def bound(self, prev, now):
        """``(bound, delta, diff)`` of the round whose answers are ``now``
        (:func:`~.gpu_affine.affine_bound` of its sums)."""
        from .gpu_affine import affine_bound
        p1 = sum(r["p1" if self.dual else "diff"] for r in now)
        if "q" in now[0]:  # GPU workers: the pull's own rounding term (gpu_affine's)
            rounding = sum(r["q"] for r in now)
        else:
            rounding = 16.0 * (1.0 + _U) * sum(r["p2" if self.dual else "sy"] for r in now)
        return affine_bound(p1, rounding, self.c_d, self.c_r, self.g1, self.n + len(now))

    def as_dict(self):
        return {"map": "affine", **asdict(self)}


#: the sums of a worker's answer that a round's coefficients and bound read
SCALARS = ("s", "sd", "sx", "diff", "sy", "p1", "p2", "e", "blocks", "q", "mixed", "sxr", "aa")


def scalars(answer):
    """The sums of a worker's answer (:data:`SCALARS`, those it has) that the rules read."""
    return {k: answer[k] for k in SCALARS if k in answer}


def rule_of(d):
    """The rule :meth:`GoogleRule.as_dict` or :meth:`AffineRule.as_dict` wrote (a plain dict:
    Dask's messages carry it as it is)."""
    d = dict(d)
    return (GoogleRule if d.pop("map") == "google" else AffineRule)(**d)


class Google:
    """The Google-matrix iteration of a normalised linear system (module text).

    Attributes
    ----------
    g1 : float
        The factor the bound falls by a round (the driver's ``g1``).
    start : numpy.ndarray
        ``x_0 = v = b / Σb``.
    """

    map = "google"
    #: the key of dual weights to find on the workers (:mod:`.cluster_dual`): none here
    on_workers = None

    def __init__(self, graph, system, stats):
        g1, why = power_gamma(graph, system, dangling_ok=True)
        if why is not None:
            raise InvalidParameterError(f"mode='power' cannot run this system: {why}")
        self.g1 = float(g1)
        stats["gamma"] = self.g1
        stats["power_map"] = "google"
        b = np.asarray(system.b, np.float64)
        self.v = b / b.sum() if b.size else b
        self.start = self.v
        self.dangling = None
        if getattr(system, "dangling", None) is not None:
            self.dangling = _dangling(graph, system)
            stats["dangling_vertices"] = int(self.dangling[0].size)

    def vectors(self, v0, v1):
        """Range ``[v0, v1)`` of the run's own vectors, as the workers' ``start`` takes them
        (``v``, and the dangling term ``d``, ``didx``, ``dg``)."""
        out = {"v": self.v[v0:v1], "d": None, "didx": np.empty(0, np.int64),
               "dg": np.empty(0, np.float64)}
        if self.dangling is not None:
            idx, d, g = self.dangling
            lo, hi = np.searchsorted(idx, [v0, v1])
            out.update(d=d[v0:v1], didx=idx[lo:hi] - v0, dg=g[lo:hi])
        return out

    def resume(self, x):
        """The vector a run resumed from checkpoint ``x`` starts from: ``x / Σx``."""
        return x / x.sum()

    def rule(self):
        """The round's coefficients and bound, as the workers evaluate them too
        (:class:`GoogleRule`)."""
        return GoogleRule(float(self.g1))

    def answer(self, x):
        """The run's answer from the gathered ``x`` (sums to 1 up to the bound's terms)."""
        return x.view(SumNormalized)

    def empty(self, stats):
        """The answer of a graph of no vertex (exact)."""
        stats["error_bound"] = 0.0
        return np.empty(0, np.float64).view(SumNormalized)


class Affine:
    """The affine map ``x ← b + A x`` of a linear system that is not normalised (module text).

    Attributes
    ----------
    g1 : float
        The factor the bound falls by a round (its route's: ``γ1``, ``1 − 1/max ẑ`` or
        ``γ∞``).
    start : numpy.ndarray
        ``x_0 = b``.
    """

    map = "affine"

    def __init__(self, graph, system, stats):
        from ...convergence import linear_contraction
        why = affine_refusal(graph, system)
        if why is not None:
            raise InvalidParameterError(f"mode='power' cannot run this system: {why}")
        try:
            g1, ginf = linear_contraction(graph, system)
        except InvalidParameterError as e:
            raise InvalidParameterError(f"mode='power' cannot run this system: {e}") from None
        n = graph.num_vertices
        self.n, self.zw, self.dual, self.on_workers = n, None, False, None
        stats["power_map"] = "affine"
        if g1 < 1.0:
            self.c_d, self.c_r, self.g1 = g1 / (1.0 - g1), 1.0 / (1.0 - g1), float(g1)
        elif held_by(graph) is not None:
            # the dual weights' sweeps need the arcs, which only the workers hold: they run
            # there once the run has started (.cluster_dual, under the key on_workers); until
            # then, and where they find none, the L∞ route
            from ...dual_bound import DEFAULT as DUAL, _factors_key
            from ...settings import current
            self.on_workers = repr(_factors_key(system, current(DUAL)))
            self.c_d, self.c_r = n * ginf / (1.0 - ginf), n / (1.0 - ginf)
            self.g1 = float(ginf)
            stats["error_route"] = "linf"
        else:
            from ...dual_bound import cached_dual_weights
            t0 = time.perf_counter()
            zhat, sweeps, reused = cached_dual_weights(graph, system)
            stats["time_dual"] = time.perf_counter() - t0
            stats["dual_sweeps"] = 0 if reused else int(sweeps)
            if zhat is not None:
                self.zw = np.ascontiguousarray(zhat, np.float64)
                self.take_dual(float(zhat.max()), stats)
            else:
                self.c_d, self.c_r = n * ginf / (1.0 - ginf), n / (1.0 - ginf)
                self.g1 = float(ginf)
                stats["error_route"] = "linf"
        stats["gamma"] = self.g1
        self.start = np.ascontiguousarray(np.asarray(system.b, np.float64))

    def take_dual(self, zmax, stats):
        """The dual route, with weights of largest value ``zmax``."""
        self.dual = True
        self.c_d, self.c_r, self.g1 = 1.0, 1.0, 1.0 - 1.0 / zmax
        stats["error_route"], stats["dual_max"], stats["gamma"] = "dual", zmax, self.g1

    def vectors(self, v0, v1):
        """Range ``[v0, v1)`` of the run's own vectors: ``v = b``, no dangling term, and the
        dual weights ``zw`` (None off the dual route, and where the workers find them)."""
        return {"v": self.start[v0:v1], "d": None, "didx": np.empty(0, np.int64),
                "dg": np.empty(0, np.float64),
                "zw": None if self.zw is None else self.zw[v0:v1]}

    def resume(self, x):
        """A checkpoint restarts as it is (the bound holds from any ``x``)."""
        return x

    def rule(self):
        """The round's coefficients and bound, as the workers evaluate them too
        (:class:`AffineRule`; after :meth:`take_dual`, the dual route's)."""
        return AffineRule(bool(self.dual), float(self.c_d), float(self.c_r), float(self.g1),
                          int(self.n))

    def answer(self, x):
        """The run's answer: the gathered ``x`` as it is."""
        return x

    def empty(self, stats):
        """The answer of a graph of no vertex (exact)."""
        stats["error_bound"] = 0.0
        return np.zeros(0, np.float64)
