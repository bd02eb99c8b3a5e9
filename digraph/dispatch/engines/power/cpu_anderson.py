"""Anderson acceleration of the CPU power iteration (:mod:`.cpu`): the round function that mixes
the iterate fed to each power round (:func:`anderson_rounds`), and the probe judge's start of
the mixing (:class:`Starting`).  The vector passes are :mod:`digraph.smx.cpu.anderson`; the
host's least-squares solve is :class:`digraph.dispatch.anderson.Anderson`."""

import numpy as np

from ... import driver
from ...anderson import Anderson

__all__ = ["anderson_rounds", "Starting"]


class Starting(driver.Judge):
    """A judge whose ``begin`` also starts Anderson's mixing (``start(round)``)."""

    def __init__(self, judge, start):
        self.judge, self.start, self.rounds = judge, start, judge.rounds

    def begin(self, round):
        self.start(round)
        self.judge.begin(round)

    def verdict(self, measure):
        return self.judge.verdict(measure)


def anderson_rounds(state, power_round, memory, start, g1, tol, n, stats, v, d, src_scale,
                     from_ratio):
    """The round function of the Anderson-accelerated iteration (``driver.power``'s ``step``).

    Round ``k`` (from 1): when the previous round recorded, the host solve
    (:meth:`Anderson.solve`, lazily here: the round that converged never solves nor mixes) gives
    γ, and ``x ← max(g_{k−1} − Σ γ_i ΔG_i, 0)`` (:func:`digraph.smx.cpu.anderson.mix`), divided
    by its sum when the clip removed mass (so ``Σx = 1`` up to rounding); without γ, ``x =
    g_{k−1}`` as in the plain iteration.  Then the power round ``g_k = G(x)`` and its bound, with
    the mix's computed sum and :func:`~digraph.smx.cpu.anderson.sum_rounding` in the ``2|Σx −
    1|`` term, and the record pass (``f_k = g_k − x``, the ring's new column and its dots).

    Recording starts at the first round ``k ≥ 3`` whose difference exceeds ``from_ratio · γ1``
    times the previous one (:attr:`PowerSettings.anderson_from_ratio`; that round stores ``f``),
    and not before round ``start − 1``; mixing after round ``start`` (a probe judges rounds ≤
    ``start`` on plain rounds).  When the first round's rounding floor alone exceeds ``tol / 8``
    (of the ``tol / 2`` at which :func:`stop` starts looking for the floor), Anderson is off for
    the run: the floor detection reads ``diff ≥ last_diff``, which a mix's differences need not
    keep.  Three vectors rotate: the last ``g`` (the answer, and ``g_prev`` of the next record),
    the iterate and the next ``g``."""
    from ....smx.cpu import anderson as aa

    acc = Anderson(memory)
    fp = np.empty(n)
    dF = np.empty((memory, n))
    dG = np.empty((memory, n))
    rec_parts = np.empty((aa.chunks(n), 2 * memory + 2))
    mix_parts = np.empty((aa.chunks(n), 3))
    z = np.empty(n)
    bufs = [state[0], state[1], np.empty(n)]
    rnd = {"k": 0, "on": True, "pending": None, "recording": False, "last": None,
           "start": start, "record_from": max(1, start - 1)}

    def step():
        rnd["k"] += 1
        k = rnd["k"]
        gprev = bufs[0]
        x = gprev
        mixed = False
        pending, rnd["pending"] = rnd["pending"], None
        if pending is not None:
            gamma = acc.solve(*pending)
            if gamma is not None and k > rnd["start"]:
                xm = bufs[1]
                total, clipped = aa.mix(gprev, dG, gamma, src_scale, xm, z, mix_parts)
                if clipped > 0.0 and np.isfinite(total) and total > 0.0:
                    total = aa.rescale(xm, z, src_scale, total, mix_parts)
                if np.isfinite(total) and total > 0.0:
                    x, mixed, sx = xm, True, total
                    stats["anderson_mixes"] += 1
        y = bufs[2] if mixed else bufs[1]
        record = None
        if rnd["recording"]:
            slot = acc.record_slot()
            j, cnt = (-1, 0) if slot is None else slot

            def record(y, c, sd):
                diff, sy, a, b = aa.record(x, y, v, c, d, sd, gprev, fp, dF, dG, j, cnt,
                                           rec_parts)
                rnd["pending"] = (diff, a, b)
                return diff, sy
        if mixed:
            bound, delta, diff, floor = power_round(x, y, sx, z, record)
            extra = 2.0 * aa.sum_rounding(sx, n)
            delta += extra
            bound += extra / (1.0 - g1)
            bufs[0], bufs[1], bufs[2] = y, gprev, x
        else:
            bound, delta, diff, floor = power_round(x, y, float(x.sum()), None, record)
            bufs[0], bufs[1] = y, gprev
        state[0], state[1] = bufs[0], bufs[1]
        if k == 1 and floor / (1.0 - g1) > tol / 8:
            rnd["on"] = False
        last, rnd["last"] = rnd["last"], diff
        if rnd["on"] and not rnd["recording"] \
                and k >= max(rnd["record_from"], 3 if from_ratio > 0 else 1) \
                and (from_ratio <= 0 or diff > from_ratio * g1 * last):
            rnd["recording"] = True  # this round stores f (the fused pass ran without a record)
            stats["power_anderson"] = memory  # it runs: the stat says so, as on the GPU
            np.subtract(y, x, out=fp)
            acc.record_slot()
            rnd["pending"] = (diff, None, None)
        stats["anderson_restarts"] = acc.restarts
        return bound, delta, diff

    def begin(k):
        """Record from the next round on and mix from the one after (a probe's judge)."""
        rnd["start"], rnd["record_from"] = k, k + 1

    step.begin = begin
    return step
