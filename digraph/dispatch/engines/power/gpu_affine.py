"""The power iteration of the affine map ``x ↦ b + A x`` on one GPU (``mode="power"``,
``device="cuda[:N]"``, linear systems that are not normalised: adsorption, a user's
``LinearSystem``): Jacobi's iteration (Varga, *Matrix Iterative Analysis*, 1962, §3.3; Saad,
*Iterative Methods for Sparse Linear Systems*, 2003, §4.1) on the Google-matrix iteration's
machinery (:mod:`digraph.dispatch.engines.power.gpu`): the same pull over the in-arcs, a group of
threads a vertex, in-degree classes or cuSPARSE by size, hubs a block each, no atomics but the
sums (:class:`~.gpu_work.Pull`), then :func:`~digraph.smx.cuda.power.power_affine` for ``y += b``
and the round's sums, the two launched as one CUDA graph, one read-back of the sums a round.

From ``x_0 = b``, a round computes ``y = b + A x + δ`` (``δ`` its rounding).  For ``A ≥ 0`` with
spectral radius below 1 and dual weights ``ẑ ≥ z = 1 + Aᵀ z`` (:mod:`digraph.dispatch.dual_bound`:
``‖x* − v‖₁ ≤ zᵀ |b + A v − v|`` for every ``v``), the residual of ``y`` is
``b + A y − y = A (y − x) − δ``, so

    ‖x* − y‖₁ ≤ (Aᵀ z)ᵀ |y − x| + zᵀ |δ| ≤ Σ_v (ẑ_v − 1) |y_v − x_v| + Σ_v ẑ_v |δ_v|,

since ``Aᵀ z = z − 1 ≤ ẑ − 1``.  The bound is exact up to the factor ``ẑ / z`` and needs no pass
over the arcs beyond the round's own.  Three routes, as the push engines'
(:func:`digraph.dispatch.convergence.linear_error_bound`):

* ``γ1 < 1`` (largest column sum of ``A``): ``ẑ = 1 / (1 − γ1)`` everywhere, the classic
  ``(γ1 ‖y − x‖₁ + ‖δ‖₁) / (1 − γ1)``;
* else the verified dual weights (``stats["error_route"] = "dual"``; computed on the host once
  for the factors of ``A`` and kept on the GPU with them, :func:`_bound_weights`);
* else, when none were found, ``‖x* − y‖₁ ≤ n ‖x* − y‖∞ ≤ n (γ∞ ‖y − x‖₁ + ‖δ‖₁) / (1 − γ∞)``
  (``"linf"``; ``γ∞ < 1``, the largest row sum, else the system is refused).

Rounding (Higham, *Accuracy and Stability of Numerical Algorithms*, 2002, §4.2): with ``b ≥ 0``
every iterate is non-negative, and ``y_v`` (the ``deg_v`` products of the pull summed in any
order, ours or cuSPARSE's, the target factor, ``b_v`` added) is exact to
``|δ_v| ≤ u (deg_v + 3) y_v`` to first order; the kernel sums ``(deg_v + 4) y_v``.  The round's two
sums (a chain a thread, a block tree, an atomic add a block) lose at most ``D u`` of their value,
``D`` their depth; the bound is multiplied by ``1 + (D + 8) u`` and
:data:`~digraph.dispatch.convergence.ROUNDING_MARGIN`.  The part ``Σ ẑ_v |δ_v|`` is the round's
rounding floor: below it the run stops ``floor_limited``
(:func:`~digraph.dispatch.convergence.power_stop`).

Refused (``InvalidParameterError``, naming ``mode='power'``): a ``b`` with negative or
non-finite entries (its bound needs non-negative iterates; ``bsp`` runs any ``b``), a dangling
vector, and a system that is not a contraction (both ``γ1`` and ``γ∞`` at least 1).  Counters as
the Google-matrix iteration's: every round reads every arc (``dense_rounds``).
"""

import time

import numpy as np

from .gpu_settings import POWER_DEFAULT as DEFAULT
from .gpu_work import graph_round, graphs, read_back, resident_pull, work
from ... import driver
from ...convergence import ROUNDING_MARGIN, checked_contraction
from ...settings import current
from ...systems import linear_factors, stored_field
from ...runtime.cuda import residency as _residency
from ...runtime.cuda.backend import backend, gpu_name
from ...runtime.cuda.common import contraction_sums
from ....errors import InvalidParameterError

__all__ = ["solve", "applies", "affine_bound"]

_U = np.finfo(np.float64).eps / 2


def applies(graph, system):
    """Why the affine iteration cannot run ``system`` (a sentence), or None when it can, as far
    as a look at ``b`` tells (whether ``A`` is a contraction is checked by :func:`solve` on the
    GPU).  Kept on the system object for the run (the router asks first, the engine next)."""
    bstore = stored_field(system, "b")
    key = (id(graph), id(bstore), getattr(system, "b_constant", None))
    memo = getattr(system, "_affine_applies", None)
    if memo is not None and memo[0] == key:
        return memo[1]
    why = _why(graph, system)
    try:
        system._affine_applies = (key, why)
    except AttributeError:  # a system class with __slots__ or frozen: no memo
        pass
    return why


def _why(graph, system):
    if system.family != "linear" or system.normalize:
        return "the affine iteration answers linear systems that are not normalised"
    if getattr(system, "dangling", None) is not None:
        return "a dangling vector (dangling=) is run by the CPU power iteration only"
    bc = getattr(system, "b_constant", None)
    if bc is not None:
        ok = 0.0 <= bc < np.inf
    else:
        b = np.asarray(system.b, np.float64)
        if b.shape != (graph.num_vertices,):
            return f"b needs one value per vertex ({graph.num_vertices}), got shape {b.shape}"
        ok = not b.size or (b.min() >= 0.0 and np.isfinite(b.sum()))
    if not ok:
        return ("on one GPU it iterates x -> b + A x for b finite and >= 0 only (its rounding "
                "bound counts non-negative iterates); mode='bsp' runs any b")
    return None


def affine_bound(p1, p2, c_d, c_r, g, depth):
    """``(bound, delta, diff)`` of a round for :func:`digraph.dispatch.driver.power`: ``p1``,
    ``p2`` the round's sums (``Σ w |y − x|`` and ``Σ ŵ (deg + 4) y``, :func:`solve`), ``c_d``,
    ``c_r`` the route's factors of each, ``g`` the factor the bound falls by a round (the route's
    ``γ``), ``depth`` the sums' summation depth.  ``bound = c_d p1 + c_r u p2`` with the sums'
    rounding and :data:`ROUNDING_MARGIN`; ``delta`` and ``diff`` are scaled so that
    :func:`~digraph.dispatch.convergence.power_stop` reads ``delta / (1 − g)`` as the floor
    ``c_r u p2`` and ``g · diff ≤ delta`` as the differences' part down to it."""
    fac = (1.0 + (depth + 8) * _U) * (1.0 + ROUNDING_MARGIN)
    part = c_d * p1 * fac
    floor = c_r * _U * p2 * fac
    diff = part * (1.0 - g) / g if g > 0.0 else part
    return part + floor, floor * (1.0 - g), diff


def solve(graph, system, *, tol, max_iter, stats, device="cuda", group=None, settings=None):
    """Run the affine iteration on one GPU; returns (x on the host, converged).

    ``group``: threads per vertex of the pull (default :func:`~.gpu_setup.group_size`; given, the
    grouped pull even where the binned one would run).  ``settings``: a
    :class:`~.gpu_settings.PowerGpuSettings` (default :data:`DEFAULT`): the pull's choice, the
    CUDA graphs and the kept work are the Google-matrix iteration's (no Anderson acceleration
    here).  ``stats``: ``gamma`` (the factor the bound falls by a round), ``error_route``,
    ``dual_max``, ``dual_sweeps``, ``time_dual`` (the dual route), ``power_map`` ``"affine"``.
    """
    from ....smx.cuda import power as K
    from ....smx.cuda.common import HB
    settings = current(DEFAULT) if settings is None else settings
    why = applies(graph, system)
    if why is not None:
        raise InvalidParameterError(f"mode='power' cannot run this system: {why}")
    be = backend(device)
    be.stats = stats
    stats["gpu"] = "CUDA simulator" if be.sim else gpu_name(be)
    stats["power_map"] = "affine"
    stats.setdefault("dense_rounds", 0)
    n, m = graph.num_vertices, graph.num_arcs
    if n == 0:
        stats["error_bound"] = 0.0
        return np.zeros(0, np.float64), True
    dg, pull = resident_pull(be, graph, settings, group, stats)
    has = system.arc_scale is not None
    w, kept, reused = work(be, graph, n, 0, settings)
    stats["gpu_work_kept"] = reused
    in_coef = be.put(linear_factors(graph, system)[3][graph.in_arcs]) if has else w["no_coef"]
    has_src = _vectors(be, system, dg, w, n)
    b, src_scale, dst_scale = w["tele"], w["src_scale"], w["dst_scale"]
    pull.factors(in_coef, has, dst_scale)
    route = _bound_weights(be, graph, system, dg, w, in_coef, has, has_src, stats)
    has_w = route["zhat"] is not None
    if has_w:
        if "zhat" not in w:  # kept with the work: the CUDA graphs' arrays stay where they are
            w["zhat"] = be.keep(be.xp.empty(n, np.float64))
        w["zhat"][...] = route["zhat"]
    zw = w["zhat"] if has_w else w["no_coef"]
    x, y, z = w["x"], w["y"], w["z"]
    x[...] = b
    if has_src:
        z[...] = src_scale * x
    accs = [w["acc0"], w["acc1"]]
    for acc in accs:
        acc[...] = 0.0
    grid = pull.grid_tel
    depth = -(-n // (grid * HB)) + HB.bit_length() + grid  # the sums' chain, tree and atomics
    c_d, c_r, g = route["c_d"], route["c_r"], route["g"]
    stats["gamma"] = float(g)
    cg = graphs(be, w, kept, settings, pull.sparse is None and not has)
    if cg is not None:
        be.sync()  # the set-up above ran on the default stream
    st = {"x": x, "y": y, "k": 0}

    def step():
        x, y, k = st["x"], st["y"], st["k"]
        acc, nxt = accs[k % 2], accs[(k + 1) % 2]
        stream = None if cg is None else cg["stream"]

        def queue():
            pull.queue(z if has_src else x, y, acc, stream)
            be.launch(K.power_affine, grid, HB, y, b, x, has_src, src_scale, z,
                      dg["in_offsets"], has_w, zw, acc, nxt, stream=stream)
        if cg is None:
            queue()
        else:
            graph_round(cg, ("affine", k % 2, pull.G, pull.bins is None, has_src, has_w), queue,
                        stats)
        got = read_back(be, cg, acc, k, stats)
        st.update(x=y, y=x, k=k + 1)
        return affine_bound(float(got[2]), float(got[3]), c_d, c_r, g, depth)

    rounds, converged = driver.power(step, g1=g, tol=tol, max_iter=max_iter, stats=stats)
    stats["rounds"] += rounds
    stats["dense_rounds"] += rounds
    stats["arc_updates"] += rounds * m
    stats["vertex_updates"] += rounds * n
    be.sync()
    out = be.get(st["x"])
    if kept:  # the next run's launches find these arrays prepared
        keep = [a for a in list(w.values()) + list(dg.values())
                if hasattr(a, "__cuda_array_interface__")]
        if pull.bins is not None:
            keep += [verts for _, verts, _ in pull.bins[0]] + [pull.bins[1]]
        be.retain(keep, "power", holder=w)
    else:
        be.release("power")
    return out, converged


def _vectors(be, system, dg, w, n):
    """``b``, ``src_scale`` and ``dst_scale`` into the kept vectors ``w["tele"]``,
    ``w["src_scale"]``, ``w["dst_scale"]`` (the prepared launches stay valid; recipes made on the
    device, missing factors ones); returns whether the system has source factors."""
    xp = be.xp
    bc = getattr(system, "b_constant", None)
    w["tele"][...] = bc if bc is not None else be.put(system.b, np.float64)
    sds = getattr(system, "src_degree_scale", None)
    src = stored_field(system, "src_scale")
    if sds is not None:  # src_scale = sds / out-degree, made from the out-degrees on the GPU
        deg = dg["out_degree"].astype(np.float64)
        w["src_scale"][...] = xp.where(deg > 0, sds / xp.maximum(deg, 1.0), 0.0)
    elif src is not None:
        w["src_scale"][...] = be.put(src, np.float64)
    else:
        w["src_scale"][...] = 1.0
    dst = system.dst_scale
    w["dst_scale"][...] = 1.0 if dst is None else be.put(dst, np.float64)
    return sds is not None or src is not None


def _signature(be, system, w, in_coef, has, has_src):
    """What ``A`` is made of, to compare with the factors a cached route was made for: per
    factor None (ones), a recipe's number, or the device vector itself."""
    sds = getattr(system, "src_degree_scale", None)
    return (None if not has_src else ("recipe", float(sds)) if sds is not None
            else w["src_scale"],
            None if system.dst_scale is None else w["dst_scale"],
            in_coef if has else None)


def _same(be, a, b):
    """Whether two entries of :func:`_signature` are equal (vectors compared on the device)."""
    if a is None or b is None:
        return a is b
    if isinstance(a, tuple) or isinstance(b, tuple):
        return a == b
    return a.shape == b.shape and bool(be.xp.array_equal(a, b))


def _bound_weights(be, graph, system, dg, w, in_coef, has, has_src, stats):
    """The route of the bound for this system's ``A`` (module text): ``{"c_d", "c_r", "g",
    "zhat"}`` (``zhat`` on the device, or None where the weights are constant).  Kept in the
    graph's residency (kind ``"cuda-power-affine"``) with copies of the factors it was made for,
    and reused while a run's factors are equal to them (compared on the GPU): adsorption with
    other seeds or ``tol`` reuses it.  A new one sums the columns and rows of ``A`` on the GPU
    (refusing a system that is not a contraction) and, where ``γ1 ≥ 1``, takes the dual weights
    (:func:`digraph.dispatch.dual_bound.cached_dual_weights`, on the host)."""
    t0 = time.perf_counter()
    res = _residency.residency(graph)
    key = (be.device_id, be.sim)
    sig = _signature(be, system, w, in_coef, has, has_src)
    got = res.peek("cuda-power-affine", key)
    if got is not None and all(_same(be, a, b) for a, b in zip(sig, got["factors"])):
        _route_stats(got, stats, 0, time.perf_counter() - t0)
        return got
    col, row, bad = contraction_sums(be, 0, graph.num_vertices, dg["in_offsets"],
                                     dg["in_sources"], in_coef, has, w["src_scale"],
                                     w["dst_scale"], True, dg["heavy_in"])
    try:
        g1, ginf = checked_contraction(*be.scalars(col.max(), row.max(), bad[0]))
    except InvalidParameterError as e:
        raise InvalidParameterError(f"mode='power' cannot run this system: {e}") from None
    n = graph.num_vertices
    out = {"zhat": None, "error_route": None, "dual_max": None, "sweeps": 0}
    if g1 < 1.0:
        out.update(c_d=g1 / (1.0 - g1), c_r=1.0 / (1.0 - g1), g=g1)
    else:
        from ...dual_bound import cached_dual_weights
        zhat, sweeps, reused = cached_dual_weights(graph, system)
        out["sweeps"] = 0 if reused else int(sweeps)
        if zhat is not None:
            zmax = float(zhat.max())
            out.update(c_d=1.0, c_r=1.0, g=1.0 - 1.0 / zmax, zhat=be.put(zhat),
                       error_route="dual", dual_max=zmax)
        else:
            out.update(c_d=n * ginf / (1.0 - ginf), c_r=n / (1.0 - ginf), g=ginf,
                       error_route="linf")
    out["factors"] = tuple(a if a is None or isinstance(a, tuple) else a.copy() for a in sig)
    res.put("cuda-power-affine", key, out)
    _route_stats(out, stats, out["sweeps"], time.perf_counter() - t0)
    return out


def _route_stats(route, stats, sweeps, seconds):
    """The dual route's keys of ``stats`` (none on the ``γ1 < 1`` route)."""
    if route["error_route"] is None:
        return
    stats["error_route"] = route["error_route"]
    stats["time_dual"] = seconds
    stats["dual_sweeps"] = sweeps
    if route["dual_max"] is not None:
        stats["dual_max"] = route["dual_max"]
