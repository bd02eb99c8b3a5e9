"""The mass-preserving power iteration (``mode="power"``): PageRank's Google-matrix iteration, for
every normalised linear system (``LinearSystem(normalize=True)``, ``b ≥ 0``, column sums ≤ γ1 < 1).

For ``x = b + A x`` answered as ``π = x* / Σx*``, with ``v = b / Σb`` (PageRank: the teleport and
personalisation vector), one round is

    x ← M x = A x + (1 − Σ(A x)) · v                       (Σx = 1 is kept)

— for PageRank ``A = α Pᵀ`` and the rank-one term puts back the teleport mass ``1 − α`` and the
mass that reached dangling vertices, i.e. the Google matrix (Page et al. 1999; Langville and Meyer,
*Google's PageRank and Beyond*, 2006, §4.5: the normalised linear system and the Google matrix
have the same answer when the dangling mass follows ``v``).  ``M`` is column-stochastic and
``π = M π``.  On vectors that sum to 0, ``M y = A y − (1ᵀ A y) v = γ1 · S y`` with ``S``
column-stochastic and non-negative (column sums of ``A`` at most ``γ1``), so ``‖M y‖₁ ≤ γ1 ‖y‖₁``
and, for the computed ``x_{k+1} = M x_k + δ``,

    ‖x_{k+1} − π‖₁ ≤ (γ1 ‖x_{k+1} − x_k‖₁ + ‖δ‖₁ + 2 |Σx_k − 1|) / (1 − γ1),

the stop used here (the one scipy and CuPy power iterations use, ``α/(1 − α)·‖Δ‖₁``, plus the
rounding).  Why it pays: without the rank-one term the linear system's error falls by about α a
round; with it, by about α·|λ2|, far less on expander-like graphs, while it erases the DAG
structure the SCC engine exploits on web graphs (measured: docs/history/benchmarks-notebook.md,
"PageRank: two formulations on the CPU, against scipy and igraph PRPACK").  The router picks it
from the condensation (:mod:`digraph.dispatch.route`).

Rounding: each entry of ``A x_k`` is a sum of ``deg_v`` non-negative products.  Summed plainly
(the default), it is off by at most ``(deg_v + 2) u`` of itself (the sum's ``deg_v − 1``
additions, the product with ``src_scale`` and the coefficient, the scaling by ``dst_scale``;
Higham, *Accuracy and Stability of Numerical Algorithms*, 2002, §4.2), so the pull adds ``u·E``,
``E = Σ_v (deg_v + 2) y_v``, computed in the same pass, to ``‖δ‖₁``; where that term could reach
the tolerance (``u (max in-degree + 2) / (1 − γ1) > tol /``
:attr:`PowerSettings.plain_sum_margin`), the pull is a compensated (Neumaier) sum, exact to a few
ulps per entry.  Either way ``‖δ‖₁ ≤ u·E + 8u (Σ(A x_k) + |c| + Σx_{k+1})`` (``E = 0`` for the
compensated pull); ``stats["power_sum"]`` says which ran.  When that floor alone, ``‖δ‖₁ /
(1 − γ1)``, exceeds ``tol / 2``, the run goes on until its differences are down to the rounding
(``γ1 ‖x_{k+1} − x_k‖₁ ≤ ‖δ‖₁``) or stop falling, then stops ``floor_limited`` with the bound it
reached (about twice the floor).

A dangling vector (``LinearSystem.dangling = d``, ``dangling_scale = g``; PageRank's
``dangling=``, networkx's semantics: Langville and Meyer 2006 §4.5, where the dangling mass may
follow any distribution ``d``, not only ``v``) adds the rank-one term ``d gᵀ`` to ``A``: with
``A' = A + d gᵀ`` (``d`` scaled to sum 1 and ``g`` by the same factor, which leaves ``d gᵀ`` as
it was) one round is

    x ← A x + σ · d + (1 − Σ(A x) − σ) · v,      σ = gᵀ x,

— PageRank: ``g = α`` on the dangling vertices, so ``α Σ_{dangling} x_u`` goes to ``d`` and the
teleport ``1 − α`` to ``v``, networkx's ``x ← α (Pᵀx + (Σ_{dangling} x_u) d) + (1 − α) v``.  The
bound is the one above with ``A'`` for ``A``: ``A'`` is non-negative and its column sums
``colsum(A)_u + g_u`` are at most ``γ1`` (now their maximum, PageRank's ``α``), so on vectors
``y`` that sum to 0 the update ``A' y − (1ᵀA' y) v = (A' + v (γ1·1 − colsum(A'))ᵀ) y`` is a
non-negative matrix with every column summing to γ1 applied to ``y``: ``‖·‖₁ ≤ γ1 ‖y‖₁``.  The
fixed point is ``π ∝ (I − A')⁻¹ b`` (``π = A'π + c v``).  Rounding: ``σ`` is a Neumaier sum of
non-negative terms, and ``σ d`` loses ``u`` twice more per entry; the scale factor of ``d`` and
``g`` cancels in ``σ d`` and moves ``c`` by a few ulps of ``σ``: ``‖δ‖₁`` gains ``12u σ``.

Anderson acceleration (:class:`PowerSettings`, :mod:`digraph.dispatch.anderson`, the vector
passes in :mod:`digraph.smx.cpu.anderson`): once the differences fall slowly, the iterate fed to
a round may be Anderson's mix of the last power steps instead of the last one.  The bound above
holds for any non-negative ``x_k``, so the stop is unchanged: the answer is always a power step
``G(x_k)``, and the mix (clipped at 0, divided by its sum when the clip removed mass) enters
through ``2 |Σx_k − 1|``, with its computed sum's rounding added.
"""

from dataclasses import dataclass

import numba
import numpy as np
from numba import njit, prange

from ...settings import current, register
from ....algorithms.base import SumNormalized
from ....errors import InvalidParameterError
from ... import driver
from ....numeric import neumaier_add
from ....smx.cpu import gauss_seidel as GS
from ....smx.cpu import relaxation as R
from ....smx.cpu.serial import pick, serial_twin
from ...convergence import ROUNDING_MARGIN, quick_contraction
from ...runtime.cpu_tasks import arc_tasks
from ...systems import linear_factors, stored_field
from .cpu_anderson import Starting, anderson_rounds
from .cpu_sweeps import Factors, accelerator, sweep_rounds

__all__ = ["solve", "applies", "PowerSettings", "DEFAULT"]


@dataclass(frozen=True)
class PowerSettings:
    """The CPU power iteration's settings (``solve(settings=)``, default :data:`DEFAULT`).

    Measured: docs/history/benchmarks-notebook.md, "PageRank: two formulations on the CPU,
    against scipy and igraph PRPACK" (``benchmarks/ab_power_anderson.py``); the prototype's
    rounds and the probe's ratios are in docs/history/docstring-measurements.md.

    Attributes
    ----------
    accelerator : {"auto", "gauss-seidel", "anderson", "none"}
        What speeds the rounds up once the plain rate slows (``anderson_from_ratio``):
        Gauss–Seidel sweeps, each checked by a power round when it looks converged
        (:mod:`.cpu_sweeps`), Anderson's mixes (:mod:`.cpu_anderson`, with
        ``anderson_memory``), or nothing (the plain iteration).  Either way the answer is a
        power step and the stop its bound.  ``"auto"``: the sweeps on one thread, and on several
        where few arcs cross the threads' ranges (``sweep_threads``, ``sweep_cross``: the
        ranges read each other's values of the sweep's start, block Jacobi between them),
        Anderson otherwise (``benchmarks/results/accel_cpu1_dev.json``, ``accel_cpu2_dev.json``,
        ``accel_cpu16_h100_host.json``).
    anderson_memory : int
        Anderson acceleration (type II, :class:`~digraph.dispatch.anderson.Anderson`) with this
        many difference columns; 0 runs the plain iteration (kept as the ablation: exactly the
        plain iteration's rounds and values).  A larger memory was no faster.
    probe_rounds : int
        With Anderson on, a router's probe (``solve(trip=)``) judges the ratio of differences on
        plain rounds 3 … ``probe_rounds`` only; Anderson mixes from the round after (its
        differences do not fall at the plain rate, which is what the probe measures).  The
        default keeps every probe decision of the graphs measured, and a probe that does not
        trip has then done most of its rounds, so Anderson matters little there.  With memory 0
        the probe judges every round.
    anderson_from_ratio : float
        Anderson starts (records, then mixes two rounds later) at the first round from the third
        on whose ``‖x_{k+1} − x_k‖₁`` exceeds this share of γ1 times the previous one; until
        then the rounds are plain and cost nothing extra.  Where the plain iteration already
        contracts fast, Anderson's two extra vector passes a round cost more than the rounds it
        saves.  0 starts at once (the ablation of this rule).
    plain_sum_margin : float
        The pull sums plainly when its rounding term ``u (max in-degree + 2) / (1 − γ1)`` is at
        most ``tol`` over this margin, so that the rounding floor stays far below the tolerance;
        otherwise it uses Neumaier's compensated sum, whose extra additions and branch per arc
        cost about a third of the pull.  ``inf`` always compensates (the ablation).
    sweep_threads, sweep_cross : int or None, float
        See ``accelerator``: the sweeps on at most ``sweep_threads`` threads (``None``: any)
        where at most ``sweep_cross`` of the in-arcs cross the ranges; the cut lies between the
        shares where they won and lost at 2 and 16 threads (history: "Over-relaxed sweeps").
    sweep_relaxation : "auto" or float
        The over-relaxation factor ω of the Gauss–Seidel sweeps (:mod:`digraph.smx.cpu.
        relaxation`, as the SCC engine's ``DagPushSettings.relaxation``): ``"auto"`` measures
        the sweeps' rate at ω = 1 and tries Young's factor for it, kept while it pays; a number
        in (0, 2) fixes ω (``1.0``: the plain sweeps).
    """

    accelerator: str = "auto"
    anderson_memory: int = 4
    probe_rounds: int = 12
    anderson_from_ratio: float = 0.5
    plain_sum_margin: float = 64.0
    sweep_relaxation: object = "auto"
    sweep_threads: object = None
    sweep_cross: float = 0.15


DEFAULT = register(PowerSettings())


@njit(parallel=True, cache=True, nogil=True)
def _pull(cuts, in_offsets, in_sources, in_coef, has_coef, z, dst_scale, out):
    """``out = diag(dst_scale) · Aᵀ-pull of z`` (``z = src_scale ∘ x``); returns ``Σ out``.
    ``cuts``: the vertex ranges of about equal in-arcs a task takes
    (:func:`~digraph.dispatch.runtime.cpu_tasks.arc_tasks`)."""
    total = 0.0
    for t in prange(cuts.size - 1):
        part = 0.0
        for v in range(cuts[t], cuts[t + 1]):
            acc = 0.0
            comp = 0.0
            for k in range(in_offsets[v], in_offsets[v + 1]):
                acc, comp = neumaier_add(acc, comp,
                                         (in_coef[k] if has_coef else 1.0) * z[in_sources[k]])
            y = dst_scale[v] * (acc + comp)
            out[v] = y
            part += y
        total += part
    return total


_pull_serial = serial_twin(_pull)


@njit(parallel=True, cache=True, nogil=True)
def _pull_plain(cuts, in_offsets, in_sources, in_coef, has_coef, z, dst_scale, out):
    """``out`` as :func:`_pull`, each entry a plain sum; returns (``Σ out``, ``E = Σ_v (deg_v
    + 2)·out_v``, the rounding weight of the module text)."""
    total = 0.0
    weight = 0.0
    for t in prange(cuts.size - 1):
        part = 0.0
        part_w = 0.0
        for v in range(cuts[t], cuts[t + 1]):
            acc = 0.0
            lo = in_offsets[v]
            hi = in_offsets[v + 1]
            if has_coef:
                for k in range(lo, hi):
                    acc += in_coef[k] * z[in_sources[k]]
            else:
                for k in range(lo, hi):
                    acc += z[in_sources[k]]
            y = dst_scale[v] * acc
            out[v] = y
            part += y
            part_w += (hi - lo + 2) * y
        total += part
        weight += part_w
    return total, weight


_pull_plain_serial = serial_twin(_pull_plain)


@njit(parallel=True, cache=True, nogil=True)
def _teleport(y, v, c, d, sd, x):
    """``y += c·v + sd·d``; returns (‖y − x‖₁, Σy).  Without a dangling vector ``d`` is ``v`` and
    ``sd`` is 0 (adding ``0.0`` leaves every entry as ``y += c·v`` had it)."""
    diff = 0.0
    total = 0.0
    for i in prange(y.size):
        yi = y[i] + c * v[i] + sd * d[i]
        y[i] = yi
        diff += abs(yi - x[i])
        total += yi
    return diff, total


_teleport_serial = serial_twin(_teleport)


@njit(cache=True, nogil=True)
def _gather_sum(idx, w, x):
    """``Σ_k w[k]·x[idx[k]]``, a Neumaier sum (0.0 for no terms)."""
    acc = 0.0
    comp = 0.0
    for k in range(idx.size):
        acc, comp = neumaier_add(acc, comp, w[k] * x[idx[k]])
    return acc + comp


def applies(graph, system):
    """Why the power iteration cannot run ``system`` (a sentence), or None when it can."""
    return power_gamma(graph, system, dangling_ok=True)[1]


def power_gamma(graph, system, dangling_ok=False):
    """(γ1, None) when the power iteration can run ``system``, else (None, why).  A system with a
    dangling vector is refused unless ``dangling_ok`` (this CPU engine runs it; its GPU twin does
    not yet); γ1 then bounds the column sums of ``A + d gᵀ``.  Kept on the system object for the
    run (the router asks first, the engine next)."""
    key = (id(graph), dangling_ok) + tuple(id(stored_field(system, f)) for f in _FIELDS)
    memo = getattr(system, "_power_gamma", None)
    if memo is not None and memo[0] == key:
        return memo[1]
    out = _gamma_uncached(graph, system, dangling_ok)
    try:
        system._power_gamma = (key, out)
    except AttributeError:  # a system class with __slots__ or frozen: no memo
        pass
    return out


_FIELDS = ("b", "src_scale", "dst_scale", "arc_scale", "normalize", "dangling", "dangling_scale")


def _gamma_uncached(graph, system, dangling_ok):
    if system.family != "linear" or not system.normalize:
        return None, "it answers normalised linear systems (PageRank-like: normalize=True)"
    bc = getattr(system, "b_constant", None)
    if bc is not None:  # a recipe (DegreeScaledSystem): b is not made on the host to be checked
        bad = graph.num_vertices and not bc > 0
    else:
        b = np.asarray(system.b, np.float64)
        bad = b.size and (b.min() < 0 or not b.sum() > 0)
    if bad:
        return None, "it needs b >= 0 with a positive sum (b / Σb is the teleport vector)"
    dangling = _dangling(graph, system) if getattr(system, "dangling", None) is not None else None
    if isinstance(dangling, str):
        return None, dangling
    if dangling is not None and not dangling_ok:
        return None, "a dangling vector (dangling=) is run by the CPU power iteration only"
    g1 = quick_contraction(graph, system)[0]
    if dangling is not None and dangling[0].size:
        idx, g = dangling[0], dangling[2]
        g1 = max(g1, float((_column_sums(graph, system)[idx] + g).max()))
    if g1 >= 1.0:
        return None, "it needs column sums below 1" + (
            " (those of A + dangling·dangling_scaleᵀ)" if dangling is not None else "")
    return g1, None


def _dangling(graph, system):
    """The dangling term in the form a round uses: (indices u with ``g_u > 0``, ``d / Σd``,
    ``g_u·Σd`` at those indices), or why it is refused (a sentence)."""
    n = graph.num_vertices
    d = np.asarray(system.dangling, np.float64)
    g = np.asarray(system.dangling_scale if system.dangling_scale is not None else np.zeros(n),
                   np.float64)
    if d.shape != (n,) or g.shape != (n,):
        return f"dangling and dangling_scale need one value per vertex ({n})"
    if not (np.all(np.isfinite(d)) and np.all(np.isfinite(g))) or d.min(initial=0) < 0 or \
            g.min(initial=0) < 0:
        return "dangling and dangling_scale must be finite and non-negative"
    nz = np.flatnonzero(d)
    total = _gather_sum(nz, np.ones(nz.size), d)
    if n and not total > 0:
        return "dangling sums to 0"
    idx = np.flatnonzero(g)
    return idx, (d / total if n else d), g[idx] * total


def _column_sums(graph, system):
    """Every column sum of ``A`` (one parallel pass over the out-arcs, none without arc or target
    factors)."""
    src_scale, dst_scale, has_arc, arc = linear_factors(graph, system)
    if not has_arc and system.dst_scale is None:
        return src_scale * graph.out_degree
    n = graph.num_vertices
    dense = [np.ascontiguousarray(np.broadcast_to(np.asarray(s, np.float64), (n,)))
             for s in (src_scale, dst_scale)]
    out = np.empty(n, np.float64)
    pick(GS.column_sums, GS.column_sums_serial, graph.num_arcs)(
        arc_tasks(graph, "out_offsets"), graph.out_offsets, graph.out_targets, dense[0],
        np.ascontiguousarray(arc, np.float64) if has_arc else np.empty(0), has_arc, dense[1], out)
    return out


def solve(graph, system, *, tol, max_iter, stats, trip=None, judge=None, settings=None,
          **unused):
    """Run the mass-preserving power iteration; returns (x summing to 1, converged).

    Counters as ``bsp``'s dense rounds: each round reads every arc once (``arc_updates``,
    ``dense_rounds``) and updates every vertex (``vertex_updates``).

    ``trip`` makes the run a *probe* (the router's automatic choice, :mod:`digraph.dispatch.route`):
    from the third round on, a round whose ``‖x_{k+1} − x_k‖₁`` is more than ``trip`` × γ1 times
    the previous one ends the run with ``converged=None`` (handed back undecided) and
    ``stats["probe_ratio"]``, ``stats["probe_rounds"]`` set; with Anderson on, only rounds up to
    :attr:`PowerSettings.probe_rounds` are judged (all of them plain).

    ``judge`` (a :class:`digraph.dispatch.driver.Judge`, with ``trip`` and Anderson on): a
    round that trips starts Anderson's mixing at once, and ``judge.rounds`` rounds later the
    judge decides from what they measured whether the run goes on to the end or ends undecided
    (:func:`digraph.dispatch.driver.power`).

    ``settings``: a :class:`PowerSettings` (default :data:`DEFAULT`).  With
    ``anderson_memory > 0`` the iterate fed to a round may be Anderson's mix (see
    :func:`~.cpu_anderson.anderson_rounds`); the answer is always a power step ``G(x)``, and the stop and the
    bound are the ones above, with the mixed iterate's computed sum (and that sum's rounding) in
    the ``2 |Σx − 1|`` term.  ``stats``: ``power_anderson`` (the memory of the acceleration that
    ran, i.e. that kept a history; 0 when the run stayed the plain iteration: the rates never
    slowed down, or ``tol`` lies near the rounding floor, where the plain iteration's floor
    detection takes over), ``anderson_mixes``, ``anderson_restarts``.
    """
    g1, why = power_gamma(graph, system, dangling_ok=True)
    if why is not None:
        raise InvalidParameterError(f"mode='power' cannot run this system: {why}")
    settings = current(DEFAULT) if settings is None else settings
    n = graph.num_vertices
    src_scale, dst_scale, has_arc, arc = linear_factors(graph, system)
    in_coef = np.ascontiguousarray(arc[graph.in_arcs]) if has_arc else arc
    b = np.asarray(system.b, np.float64)
    v = b / b.sum() if n else b
    if getattr(system, "dangling", None) is not None:
        d_idx, d, d_g = _dangling(graph, system)
        stats["dangling_vertices"] = int(d_idx.size)
    else:  # the same kernels, with no dangling term (σ = 0, d = v)
        d_idx, d, d_g = np.empty(0, np.int64), v, np.empty(0, np.float64)
    x = v.copy()
    y = np.empty(n, np.float64)
    u = np.finfo(np.float64).eps / 2
    stats["gamma"] = float(g1)
    stats.setdefault("dense_rounds", 0)
    state = [x, y]
    teleport = pick(_teleport, _teleport_serial, graph.num_arcs)
    top = int(graph.in_degree.max()) if n else 0
    plain = u * (top + 2) / (1.0 - g1) <= tol / settings.plain_sum_margin
    stats["power_sum"] = "plain" if plain else "compensated"
    if plain:
        pull = pick(_pull_plain, _pull_plain_serial, graph.num_arcs)
    else:
        compensated = pick(_pull, _pull_serial, graph.num_arcs)

        def pull(*args):
            return compensated(*args), 0.0
    zbuf = np.empty(n, np.float64)
    cuts = arc_tasks(graph)

    def power_round(x, y, sx, z=None, record=None):
        """``y ← G(x)``: (bound, delta, diff, rounding floor of the round); ``z``: ``src_scale ∘
        x`` when made already; ``record(y, c, sd) → (diff, Σy)``: the last pass fused with
        Anderson's record (instead of :func:`_teleport`)."""
        if z is None:
            z = np.multiply(src_scale, x, out=zbuf)
        s, weight = pull(cuts, graph.in_offsets, graph.in_sources, in_coef, has_arc, z,
                         dst_scale, y)
        sd = _gather_sum(d_idx, d_g, x)  # σ = gᵀx, the mass sent along d (0.0 without)
        c = 1.0 - s - sd
        diff, sy = teleport(y, v, c, d, sd, x) if record is None else record(y, c, sd)
        floor = u * weight * (1.0 + ROUNDING_MARGIN) + 8 * u * (s + abs(c) + sy) + 12 * u * sd
        delta = floor + 2 * abs(sx - 1.0) + abs(sy - 1.0)
        return (g1 * diff * (1.0 + ROUNDING_MARGIN) + delta) / (1.0 - g1), delta, diff, floor

    def plain_step():
        x, y = state
        bound, delta, diff, _ = power_round(x, y, float(x.sum()))
        state[0], state[1] = y, x
        return bound, delta, diff

    accel = settings.accelerator
    if accel not in ("auto", "gauss-seidel", "anderson", "none"):
        raise InvalidParameterError(f"PowerSettings.accelerator={accel!r}: one of 'auto', "
                                    "'gauss-seidel', 'anderson', 'none'")
    accel = accelerator(graph, numba.get_num_threads(), settings)
    memory = max(int(settings.anderson_memory), 0) if (n and accel == "anderson") else 0
    sweeps = bool(n) and accel == "gauss-seidel"
    window = settings.probe_rounds if (trip is not None and (memory or sweeps)) else None
    # the memory once Anderson starts recording (anderson_rounds), its mixes and restarts
    stats["power_anderson"] = stats["anderson_mixes"] = stats["anderson_restarts"] = 0
    def dense(scale):  # a scale as an array of n
        return np.ascontiguousarray(np.broadcast_to(np.asarray(scale, np.float64), (n,)))

    if memory:
        step = anderson_rounds(state, power_round, memory, window or 0, g1, tol, n, stats, v,
                                d, dense(src_scale), settings.anderson_from_ratio)
    elif sweeps:
        src, dst = dense(src_scale), dense(dst_scale)
        step = sweep_rounds(state, power_round, graph,
                            (graph.in_offsets, graph.in_sources, in_coef, has_arc, src, dst),
                            lambda: Factors(graph, src, dst, in_coef, has_arc,
                                            _column_sums(graph, system), d_idx, d_g),
                            window or 0, g1, tol, n, stats, v, d, settings.anderson_from_ratio,
                            R.params(settings.sweep_relaxation,
                                     owner="PowerSettings.sweep_relaxation"))
    else:
        step = plain_step

    if n == 0:
        rounds, converged = 0, True
    else:
        if judge is not None and (memory or sweeps) and trip is not None:
            judge = Starting(judge, step.begin)
        else:
            judge = None
        rounds, converged = driver.power(step, g1=g1, tol=tol, max_iter=max_iter, stats=stats,
                                         trip=trip, probe_window=window, judge=judge)
    x = state[0]
    stats["rounds"] += rounds
    stats["dense_rounds"] += rounds
    stats["arc_updates"] += (rounds + stats.get("power_checks", 0)) * graph.num_arcs
    stats["vertex_updates"] += rounds * n
    if n == 0:
        stats["error_bound"] = 0.0
    # x sums to 1 up to rounding that the bound counts (the |Σx − 1| terms): no division after
    return x.view(SumNormalized), converged
