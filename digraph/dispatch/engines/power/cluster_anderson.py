"""Anderson acceleration of the power rounds on a Dask cluster's CPU workers
(:mod:`.cluster_worker`): the CPU engine's mixes (:mod:`.cpu_anderson`), each worker mixing its
own range with the coefficients every worker finds alike; for the Google matrix's iteration and
for the affine map's (adsorption), whose bound holds for any non-negative iterate as well.

The mix ``x_{k+1} = max(g_k − Σ_i γ_i ΔG_i, 0)`` is local to a range once ``γ`` is known, and
``γ`` comes from the Gram matrix's new row ``a`` and right-hand side ``b`` (dot products over
every vertex: :class:`digraph.dispatch.anderson.Anderson`).  So a round that records runs, on
each worker,

1. the teleport fused with the record pass of its range (:func:`digraph.smx.cpu.anderson.record`:
   ``g_k``, ``f_k = g_k − x_k``, the rings' new columns and its partial dots);
2. an all-gather of ``(‖g − x‖₁, Σg, a, b)`` among the workers (the round's second; a plain
   round has one), from which every worker finds the same ``γ`` by the same solve on the same
   sums in shard order;
3. the mix of its range (or the plain step ``x_{k+1} = g_k``), then the exchange, the pull and
   the all-gather of the round's sums as in a plain round (:mod:`.cluster_batch`).

When the driver's verdict ends the run at that round, the answer is ``g_k``, a power step, as
everywhere: a round that mixed keeps ``g_k`` as the run's ``answer``.  Recording
starts the round after the first round from the third on whose difference exceeds
:attr:`~.cpu.PowerSettings.anderson_from_ratio` ``· γ1`` times the previous one (the CPU engine
starts in that round itself; a worker learns the round's global difference only at the next
all-gather), and not at all when the first round's rounding floor exceeds ``tol / 8``.

The mix is not divided by its sum after a clip (that would take a third all-gather): the pull
of a mixed iterate reports its computed sum and the sum's rounding (``mixed``, ``sxr``), and
:class:`~.cluster_maps.GoogleRule` counts the mass defect ``2 |Σx − 1|`` in the bound but not in
the rounding floor the stop rule reads, as one GPU's mixed rounds do
(:func:`~.gpu_setup.round_bound`).  The affine map's bound
(:class:`~.cluster_maps.AffineRule`) holds for any non-negative iterate and reads no sum of it;
on its dual route a recording round's sums carry the weighted sums of ``g`` and ``x`` too.
"""

import numpy as np

from ....smx.cpu import anderson as aa
from ...anderson import Anderson

__all__ = ["WorkerAnderson", "anderson_settings"]


def anderson_settings(it, device, tol):
    """What the client sends each worker's start for Anderson's mixes: the run's
    :class:`~.cpu.PowerSettings` (``accelerator`` ``"auto"`` or ``"anderson"``, its
    ``anderson_memory`` and ``anderson_from_ratio``), the map's ``γ1`` and ``tol``, on CPU
    workers; None on GPU workers and with memory 0."""
    from ...settings import current
    from .cpu import DEFAULT as POWER
    ps = current(POWER)
    memory = max(int(ps.anderson_memory), 0) if ps.accelerator in ("auto", "anderson") else 0
    if not memory or device != "cpu":
        return None
    return {"memory": memory, "from_ratio": float(ps.anderson_from_ratio),
            "g1": float(it.g1), "tol": float(tol)}


class WorkerAnderson:
    """One run's Anderson state on one worker (its range of the rings; the host solve, which
    every worker runs alike).

    Parameters
    ----------
    n : int
        Vertices of the range.
    memory : int
        Slots of the rings (``m``).
    from_ratio, g1, tol : float
        The start rule's ratio, the factor the map's bound falls by a round (the rule's ``g1``,
        set again by each batch: the affine map's dual route finds it after the start) and the
        run's tolerance (see the module text).
    """

    def __init__(self, n, memory, from_ratio, g1, tol):
        self.n, self.memory = int(n), int(memory)
        self.from_ratio, self.g1, self.tol = float(from_ratio), float(g1), float(tol)
        self.acc = Anderson(self.memory)
        self.recording = False
        self.off = False
        self.diffs = {}  # round -> its global difference
        self.mixes = 0
        self.bufs = None

    def seen(self, k, diff, delta):
        """Round ``k``'s global difference and rounding floor (each round once, in order):
        whether recording starts with the next round."""
        if k in self.diffs:
            return
        self.diffs[k] = diff
        if k == 1 and delta / (1.0 - self.g1) > self.tol / 8:
            self.off = True  # the floor test reads the plain rounds' differences
        last = self.diffs.get(k - 1)
        if not (self.off or self.recording) and k >= 3 and last is not None \
                and diff > self.from_ratio * self.g1 * last:
            self.recording = True

    def record(self, r, c, sd):
        """The teleport of run state ``r`` fused with the record pass (``r.y`` becomes ``g``;
        ``r.x`` stays the iterate until :meth:`advance`): the sums to all-gather."""
        if self.bufs is None:  # the rings and the third vector, once recording starts
            m, n = self.memory, self.n
            self.fp = np.empty(n)
            self.dF = np.empty((m, n))
            self.dG = np.empty((m, n))
            self.rec = np.empty((aa.chunks(n), 2 * m + 2))
            self.mix_parts = np.empty((aa.chunks(n), 3))
            self.bufs = [r.x, r.y, np.empty(n)]
            self.gp = r.x
        slot = self.acc.record_slot()
        j, cnt = (-1, 0) if slot is None else slot
        diff, sy, a, b = aa.record(r.x, r.y, r.v, float(c), r.d, float(sd), self.gp, self.fp,
                                   self.dF, self.dG, j, cnt, self.rec)
        none = np.empty(0)
        out = {"diff": float(diff), "sy": float(sy),
               "a": none if a is None else np.array(a, np.float64),
               "b": none if b is None else np.array(b, np.float64)}
        if r.zw is not None:  # the affine map's dual route: its weighted sums of g and x
            p1, p2 = r.weighted(r.zw, r.y, r.x)
            out.update(p1=float(p1), p2=float(p2))
        return out

    def advance(self, r, got):
        """After a recording round's all-gather (``got``: every worker's sums, in shard order):
        ``x ← g`` when the solve gives no coefficients, else ``x ← max(g − ΔG γ, 0)``
        (``r.mixed``, ``r.mix_sum``) with ``g`` kept as the run's ``answer`` (the driver may
        stop at this round); ``z_own = src_scale ∘ x`` either way."""
        g = r.y
        free = [b for b in self.bufs if b is not g]
        first = got[0]["a"].size == 0
        diff = sum(x["diff"] for x in got)
        a = None if first else sum(x["a"] for x in got)
        b = None if first else sum(x["b"] for x in got)
        gamma = self.acc.solve(diff, a, b)
        if gamma is not None:
            xm = free[0]
            total, _ = aa.mix(g, self.dG, gamma, r.src_scale, xm, r.z_own, self.mix_parts)
            if np.isfinite(total):
                r.x, r.y, self.gp, r.answer = xm, free[1], g, g
                r.mixed, r.mix_sum = True, float(total)
                self.mixes += 1
                return
        r.x, r.y, self.gp, r.answer = g, free[0], g, None
        np.multiply(r.src_scale, r.x, out=r.z_own)

    def sum_rounding(self, total):
        """The rounding bound of a mix's computed sum (:func:`digraph.smx.cpu.anderson.
        sum_rounding`)."""
        return aa.sum_rounding(total, self.n)
