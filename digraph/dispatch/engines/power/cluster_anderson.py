"""Anderson acceleration of the power rounds on a Dask cluster's CPU workers
(:mod:`.cluster_worker`): the CPU engine's mixes (:mod:`.cpu_anderson`), each worker mixing its
own range with the coefficients every worker finds alike; for the Google matrix's iteration and
for the affine map's (adsorption), whose bound holds for any non-negative iterate as well.

The mix ``x_{k+1} = max(g_k − Σ_i γ_i ΔG_i, 0)`` is local to a range once ``γ`` is known, and
``γ`` comes from the Gram matrix's new row ``a`` and right-hand side ``b`` (dot products over
every vertex: :class:`digraph.dispatch.anderson.Anderson`).  Those dots need ``f_k = g_k −
x_k`` with ``g_k = A x_k + C_k v``, and ``C_k`` (the teleport's coefficient) needs every
worker's pull sums.  They are linear and quadratic in ``C_k``, so each worker sums their pieces
over its range right after its pull (:func:`partials`, ``3m + 5`` numbers), and the pieces ride
on the all-gather of the round's sums that a plain round makes anyway.  A round that records
then runs, on each worker,

1. ``γ`` from every worker's pieces and ``C_k`` (:func:`dots`), by the same solve on the same
   sums in shard order: the same ``γ`` on every worker;
2. the teleport fused with the record pass of its range (:func:`digraph.smx.cpu.anderson.record`:
   ``g_k``, the rings' new columns), and the mix of its range (or the plain step ``x_{k+1} =
   g_k``);
3. the exchange, the pull, the pieces of the next round's dots, and the all-gather of the
   round's sums as in a plain round (:mod:`.cluster_batch`): one all-gather a round.

The pieces are taken around a guess ``c0`` of ``C_k`` (the last round's): near the fixed point
``f`` is a small difference of large terms, which pieces around ``C = 0`` would cancel in the
dots.  The safeguard of :class:`~digraph.dispatch.anderson.Anderson` (a difference that grew
restarts the history) reads the last round's ``‖g − x‖₁``, one round later than one process
does: this round's is known only after its teleport.

When the driver's verdict ends the run at that round, the answer is ``g_k``, a power step, as
everywhere: a round that mixed keeps ``g_k`` as the run's ``answer``.  Recording
starts the round after the first round from the third on whose difference exceeds
:attr:`~.cpu.PowerSettings.anderson_from_ratio` ``· γ1`` times the previous one (the CPU engine
starts in that round itself; a worker learns the round's global difference only at the next
all-gather), and not at all when the first round's rounding floor exceeds ``tol / 8``.

The mix is not divided by its sum after a clip (that would take a second all-gather): the pull
of a mixed iterate reports its computed sum and the sum's rounding (``mixed``, ``sxr``), and
:class:`~.cluster_maps.GoogleRule` counts the mass defect ``2 |Σx − 1|`` in the bound but not in
the rounding floor the stop rule reads, as one GPU's mixed rounds do
(:func:`~.gpu_setup.round_bound`).  The affine map's bound
(:class:`~.cluster_maps.AffineRule`) holds for any non-negative iterate and reads no sum of it;
on its dual route a recording round's sums carry the weighted sums of ``g`` and ``x`` too.
"""

import numpy as np
from numba import njit, prange

from ....smx.cpu import anderson as aa
from ....smx.cpu.serial import pick, serial_twin
from ...anderson import Anderson

__all__ = ["WorkerAnderson", "anderson_settings", "ring_vectors", "partials"]

#: the partial dots a worker sends for the next round's solve, after the ``3m`` per slot
EXTRA = 5  # q·q, q·v, v·v, q·p, v·p


@njit(cache=True, nogil=True)
def _partials_chunk(lo, hi, x, y, v, c0, fp, dF, j, cnt, out):
    m = dF.shape[0]
    for s in range(3 * m + EXTRA):
        out[s] = 0.0
    for i in range(lo, hi):
        p = y[i] + c0 * v[i] - x[i]
        q = p - fp[i]
        vi = v[i]
        for s in range(cnt):
            if s != j:
                e = dF[s, i]
                out[s] += q * e
                out[m + s] += p * e
                out[2 * m + s] += vi * e
        t = 3 * m
        out[t] += q * q
        out[t + 1] += q * vi
        out[t + 2] += vi * vi
        out[t + 3] += q * p
        out[t + 4] += vi * p


@njit(parallel=True, cache=True, nogil=True)
def _partials(x, y, v, c0, fp, dF, j, cnt, parts):
    n = x.size
    for k in prange(parts.shape[0]):
        lo = k * aa.CHUNK
        hi = min(lo + aa.CHUNK, n)
        _partials_chunk(lo, hi, x, y, v, c0, fp, dF, j, cnt, parts[k])


_partials_serial = serial_twin(_partials)


def partials(x, y, v, c0, fp, dF, j, cnt, parts):
    """The next round's dots in pieces that do not depend on its teleport's coefficient ``C``
    beyond a guess ``c0`` of it (``g = y + C v``; ``f = p + δ v`` with ``p = y + c0 v − x`` and
    ``δ = C − c0``; ``ΔF_j = q + δ v`` with ``q = p − f_prev``): for each slot ``s < cnt`` but
    ``j``, ``q·ΔF_s``, ``p·ΔF_s``, ``v·ΔF_s``; then ``q·q``, ``q·v``, ``v·v``, ``q·p``, ``v·p``
    (:data:`EXTRA`), summed over the range; ``parts`` a ``(chunks(n), 3m + EXTRA)``
    scratch array.  With ``c0`` the last round's coefficient ``δ`` is small near the fixed
    point, where ``f`` is a small difference of large terms: the pieces then hold ``f``'s own
    size, and the dots do not cancel."""
    pick(_partials, _partials_serial, x.size)(x, y, v, float(c0), fp, dF, j, cnt, parts)
    return parts.sum(axis=0)


def dots(total, j, cnt, m, C):
    """``(a, b)`` of the round whose global pieces are ``total`` (:func:`partials`,
    summed over the workers), its record slot ``j`` of ``cnt`` and ``C`` the coefficient's
    distance from the pieces' guess (``δ``): the dots the record pass would find (``a_s =
    ΔF_j·ΔF_s``, ``b_s = ΔF_s·f``)."""
    t = 3 * m
    qq, qv, vv, qp, vp = total[t:t + EXTRA]
    a = total[:cnt] + C * total[2 * m:2 * m + cnt]
    b = total[m:m + cnt] + C * total[2 * m:2 * m + cnt]
    a[j] = qq + 2.0 * C * qv + C * C * vv
    b[j] = qp + C * (qv + vp) + C * C * vv
    return a, b


def ring_vectors(settings):
    """The per-vertex vectors the mixes of :func:`anderson_settings`' ``settings`` (None: no
    mixes) add on a worker: the two rings, ``f`` and a third iterate, ``2m + 2``."""
    return 2 * settings["memory"] + 2 if settings else 0


def anderson_settings(it, device, tol):
    """What the client sends each worker's start for Anderson's mixes: the run's
    :class:`~.cpu.PowerSettings` (``accelerator`` ``"auto"`` or ``"anderson"``, its
    ``anderson_memory`` and ``anderson_from_ratio``), the map's ``γ1`` and ``tol``, on CPU
    workers; None on GPU workers, with memory 0, and with a dangling vector (the dots' pieces
    take the teleport as ``C v``)."""
    from ...settings import current
    from .cpu import DEFAULT as POWER
    ps = current(POWER)
    memory = max(int(ps.anderson_memory), 0) if ps.accelerator in ("auto", "anderson") else 0
    if not memory or device != "cpu" or getattr(it, "dangling", None) is not None:
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
        self.bufs = None
        self.slot = None  # the next record's (slot, count), found with its dots' pieces

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

    def _rings(self, r):
        """The rings and the third vector, made when recording starts."""
        if self.bufs is None:
            m, n = self.memory, self.n
            self.fp = np.empty(n)
            self.dF = np.empty((m, n))
            self.dG = np.empty((m, n))
            self.rec = np.empty((aa.chunks(n), 2 * m + 2))
            self.mix_parts = np.empty((aa.chunks(n), 3))
            self.part_buf = np.empty((aa.chunks(n), 3 * m + EXTRA))
            self.bufs = [r.x, r.y, np.empty(n)]
            self.gp = r.x

    def solve(self, prev, C):
        """The mix's coefficients of this round (None: the plain step), from every worker's
        pieces of its dots (``prev``: their answers of the last round, in shard order, each
        with ``aa`` from :meth:`partials`) and its teleport's coefficient ``C``; None on the
        round that starts recording (it stores ``f`` only)."""
        if self.slot is None:
            return None
        j, cnt = self.slot
        total = sum(x["aa"] for x in prev)
        a, b = dots(np.asarray(total, np.float64), j, cnt, self.memory, C - self.c0)
        # the safeguard reads the last round's ‖g − x‖₁ (this round's is not known before
        # its teleport): a difference that grew restarts the history one round later
        return self.acc.solve(sum(x["diff"] for x in prev), a, b)

    def record(self, r, c, sd):
        """The teleport of run state ``r`` fused with the record pass into the slot the dots
        were found for (``r.y`` becomes ``g``; ``r.x`` stays the iterate until
        :meth:`advance`): the teleport's sums."""
        self._rings(r)
        self.c0 = float(c) + float(sd)  # the next round's pieces take it as their guess
        slot = self.slot if self.slot is not None else self.acc.record_slot()
        j = -1 if slot is None else slot[0]
        # no dots here (count 0): they came in pieces before the teleport
        diff, sy, _, _ = aa.record(r.x, r.y, r.v, float(c), r.d, float(sd), self.gp, self.fp,
                                   self.dF, self.dG, j, 0, self.rec)
        out = {"diff": float(diff), "sy": float(sy)}
        if r.zw is not None:  # the affine map's dual route: its weighted sums of g and x
            p1, p2 = r.weighted(r.zw, r.y, r.x)
            out.update(p1=float(p1), p2=float(p2))
        return out

    def advance(self, r, gamma):
        """After the record pass: ``x ← g`` without coefficients, else ``x ← max(g − ΔG γ,
        0)`` (``r.mixed``, ``r.mix_sum``) with ``g`` kept as the run's ``answer`` (the driver
        may stop at this round); ``z_own = src_scale ∘ x`` either way."""
        g = r.y
        free = [b for b in self.bufs if b is not g]
        if gamma is not None:
            xm = free[0]
            total, _ = aa.mix(g, self.dG, gamma, r.src_scale, xm, r.z_own, self.mix_parts)
            if np.isfinite(total):
                r.x, r.y, self.gp, r.answer = xm, free[1], g, g
                r.mixed, r.mix_sum = True, float(total)
                return
        r.x, r.y, self.gp, r.answer = g, free[0], g, None
        np.multiply(r.src_scale, r.x, out=r.z_own)

    def partials(self, r):
        """After the pull of the next iterate: the next round's record slot (kept), and this
        range's pieces of that round's dots (:func:`partials`), which ride on the round's
        all-gather of sums."""
        self.slot = self.acc.record_slot()
        j, cnt = self.slot
        return partials(r.x, r.y, r.v, self.c0, self.fp, self.dF, j, cnt, self.part_buf)

    def sum_rounding(self, total):
        """The rounding bound of a mix's computed sum (:func:`digraph.smx.cpu.anderson.
        sum_rounding`)."""
        return aa.sum_rounding(total, self.n)
