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
client's ``c`` and ``σ``.
"""

import numpy as np

from ....algorithms.base import SumNormalized
from ....errors import InvalidParameterError
from ...convergence import ROUNDING_MARGIN
from .cpu import _dangling, power_gamma

__all__ = ["Google", "iteration"]

_U = np.finfo(np.float64).eps / 2


def iteration(graph, system, stats):
    """The map of ``system`` on the cluster (:class:`Google`), or
    :class:`~digraph.errors.InvalidParameterError` saying why the power iteration cannot run it."""
    return Google(graph, system, stats)


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

    def __init__(self, graph, system, stats):
        g1, why = power_gamma(graph, system, dangling_ok=True)
        if why is not None:
            raise InvalidParameterError(f"mode='power' cannot run this system: {why}")
        self.g1 = float(g1)
        stats["gamma"] = self.g1
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
        floor = 8 * _U * (s + abs(c) + sy) + 12 * _U * sd + k * _U * (s + sd + sx + sy)
        delta = floor + 2 * abs(sx - 1.0) + abs(sy - 1.0)
        g1 = self.g1
        return (g1 * diff * (1.0 + ROUNDING_MARGIN) + delta) / (1.0 - g1), delta, diff

    def answer(self, x):
        """The run's answer from the gathered ``x`` (sums to 1 up to the bound's terms)."""
        return x.view(SumNormalized)

    def empty(self, stats):
        """The answer of a graph of no vertex (exact)."""
        stats["error_bound"] = 0.0
        return np.empty(0, np.float64).view(SumNormalized)
