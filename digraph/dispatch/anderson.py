"""Anderson acceleration of the power iteration: the host side, shared by every engine.

For the fixed point ``x = G(x)`` of the power round (``G`` affine, ``Σ G(x) = 1`` whenever
``Σx = 1``), Anderson's type-II update with memory ``m`` (Anderson 1965; Walker and Ni, *SIAM J.
Numer. Anal.* 49(4), 2011) replaces the next iterate ``g_k = G(x_k)`` by

    x_{k+1} = g_k − Σ_i γ_i ΔG_i,    γ = argmin ‖f_k − Σ_i γ_i ΔF_i‖₂,

where ``f_k = g_k − x_k`` and ``ΔF_i``, ``ΔG_i`` are the differences of consecutive ``f`` and ``g``
of the last ``m`` rounds.  The columns of ``ΔG`` sum to zero, so ``x_{k+1}`` keeps ``Σx = 1``; the
engines clip it at zero (measured: no entry was negative on the graphs of the benchmarks) and
count any change of its sum in the bound (the CPU engine divides by the sum after a clip), so
**the stop is unchanged and stays sound**: the power bound holds for any non-negative iterate,
``‖G(x) − π‖₁ ≤ (γ1 ‖G(x) − x‖₁ + rounding + 2 |Σx − 1|) / (1 − γ1)``
(:func:`digraph.dispatch.convergence.power_stop`), and the answer returned is always a power step
``G(x_k)``.

Measured (tol 1e-8, α = 0.85, ``benchmarks/proto_anderson_gpu.py``, one H200, rounds of the
plain iteration → with ``m = 4``): R-MAT 2^22 25 → 11, R-MAT 2^24 27 → 11, dblp-2010 96 → 43,
cnr-2000 99 → 68.  PageRank's ``G`` mixes fast where |λ2| is small, and Anderson then finds the
few slow directions that remain.

This module holds the small dense part: the Gram matrix ``ΔFᵀΔF`` (one new row a round, from
the dots the engine's record pass computes), the least-squares solve, and the safeguard: a round
whose ``‖f‖₁`` grew restarts the history and takes the plain step.  The engine supplies the two
vector passes (record the differences and their dots; mix ``x_{k+1}``), e.g.
:mod:`digraph.smx.cuda.anderson` on a GPU.
"""

import numpy as np

__all__ = ["Anderson"]


class Anderson:
    """The host state of Anderson acceleration with memory ``memory`` (slots ``0 … memory−1``
    of the engine's ``ΔF`` and ``ΔG`` rings).

    A round of the engine, after the power step ``g = G(x)`` and its ``diff = ‖g − x‖₁``:

    1. ``slot = acc.record_slot()``: ``None`` on the first round (store ``f`` and ``g`` only),
       else ``(j, cnt)``: write ``ΔF_j = f − f_prev``, ``ΔG_j = g − g_prev`` and compute, for the
       slots ``i < cnt``, ``a_i = ΔF_j · ΔF_i`` and ``b_i = ΔF_i · f`` (``f_prev, g_prev ← f, g``
       in both cases);
    2. after the bound says go on, ``gamma = acc.solve(diff, a, b)``: ``None`` for the plain step
       (``x ← g``), else the coefficients of the mix ``x ← max(g − Σ_i γ_i ΔG_i, 0)``.

    Parameters
    ----------
    memory : int
        Slots kept (``m``); 0 switches the acceleration off (every :meth:`solve` returns None).
    reg : float
        Tikhonov term added to the Gram matrix's diagonal, relative to its trace (its columns
        are nearly dependent near convergence).
    max_coef : float
        A solve whose ``Σ|γ_i|`` exceeds this is not trusted: restart, plain step.
    start_ratio : float or None
        None: mix from the third round on.  Else the plain rounds decide: at the third
        :meth:`solve`, when ``diff_3 / diff_2`` is below ``start_ratio`` the iteration already
        converges fast, there is little for the mix to remove, and the acceleration switches
        off (``memory`` becomes 0, ``probe_ratio`` keeps the ratio); otherwise the first mix
        follows.  Ratios of the third round (numpy, α = 0.85; plain → memory-4 rounds to
        1e-8): R-MAT 2^16–2^20 without isolated vertices 0.15–0.16 (12–13 → 12–13) and
        p2p-Gnutella25 0.20 (13 → 13) gain nothing; wiki-Vote 0.26 (25 → 18), email-Eu-core
        0.28 (94 → 30), R-MAT with its isolated ids 0.32–0.40 (19–23 → 11–13), cit-HepPh 0.40
        (80 → 31), dblp-2010 0.45 (96 → 43), cnr-2000 0.52 (99 → 68) gain.
    max_restarts : int or None
        After this many restarts the acceleration switches off for the rest of the run
        (``memory`` becomes 0, ``gave_up`` True): its mixes keep overshooting, and each restart
        costs the rounds since the last.  None: never.
    """

    def __init__(self, memory, reg=1e-10, max_coef=1e4, start_ratio=None, max_restarts=None):
        self.start_ratio = start_ratio
        self.max_restarts = max_restarts
        self.gave_up = False
        self.diffs = []
        self.probe_ratio = None
        self.memory = int(memory)
        self.reg = float(reg)
        self.max_coef = float(max_coef)
        self.gram = np.zeros((max(self.memory, 1), max(self.memory, 1)))
        self.count = 0  # slots holding differences of the current history
        self.slot = 0  # the slot the next record writes
        self.started = False  # f_prev, g_prev hold a round
        self.last_diff = np.inf
        self.restarts = 0
        self.mixes = 0

    def record_slot(self):
        """``None`` (store ``f``, ``g`` only) or ``(j, cnt)`` for this round's record pass."""
        if not self.memory or not self.started:
            self.started = True
            return None
        return self.slot, min(self.count + 1, self.memory)

    def solve(self, diff, a, b):
        """The mix's coefficients (a float64 array of ``cnt`` entries), or None for the plain
        step; ``a``, ``b``: the dots of the record pass of this round (ignored after a round
        that stored only)."""
        if not self.memory:
            return None
        deciding = self.start_ratio is not None and self.probe_ratio is None
        if deciding:
            self.diffs.append(diff)
            if len(self.diffs) >= 3:
                self.probe_ratio = self.diffs[-1] / self.diffs[-2] if self.diffs[-2] else 0.0
                if self.probe_ratio < self.start_ratio:
                    self.memory = 0  # fast already: the plain iteration from here on
                    return None
                deciding = False
        grew = diff > self.last_diff
        self.last_diff = diff
        if self.count == 0 and a is None:
            return None  # first round: nothing recorded yet
        j = self.slot
        cnt = min(self.count + 1, self.memory)
        self.slot = (j + 1) % self.memory
        self.count = cnt
        if grew:
            return self._restart()
        a = np.asarray(a, np.float64)[:cnt]
        b = np.asarray(b, np.float64)[:cnt]
        self.gram[j, :cnt] = a
        self.gram[:cnt, j] = a
        h = self.gram[:cnt, :cnt].copy()
        h[np.diag_indices(cnt)] += self.reg * max(float(np.trace(h)), np.finfo(np.float64).tiny)
        try:
            gamma = np.linalg.solve(h, b)
        except np.linalg.LinAlgError:
            return self._restart()
        if not np.all(np.isfinite(gamma)) or float(np.abs(gamma).sum()) > self.max_coef:
            return self._restart()
        if deciding:
            return None  # recorded; the mixes wait for the third round's ratio
        self.mixes += 1
        return gamma

    def _restart(self):
        self.count = 0
        self.slot = 0
        self.restarts += 1
        if self.max_restarts is not None and self.restarts > self.max_restarts:
            self.memory = 0  # the plain iteration from here on
            self.gave_up = True
        return None
