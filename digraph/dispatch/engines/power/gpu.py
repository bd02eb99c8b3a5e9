"""The Google-matrix power iteration on one GPU (``mode="power"``, ``device="cuda[:N]"``): the GPU
twin of :mod:`digraph.dispatch.engines.power.cpu`, same round, same sound stop, same counters.
Systems that are not normalised run the power iteration of the affine map ``x ↦ b + A x``
(:mod:`digraph.dispatch.engines.power.gpu_affine`) on the same pull and CUDA graphs.

A round is two launches (three with in-degree hubs; the pull by cuSPARSE's SpMV and a pass for
the sums on graphs of :attr:`PowerGpuSettings.cusparse_arcs` arcs or more) and one read-back of
the sums (:mod:`digraph.smx.cuda.power`); from :attr:`PowerGpuSettings.anderson_arcs` arcs on,
Anderson acceleration (:mod:`digraph.dispatch.anderson`) adds its record pass to the round and
its mix at the start of the next, in the same read-back.  The stop: for the computed ``x_{k+1} =
M x_k + δ``,

    ‖x_{k+1} − π‖₁ ≤ (γ1 ‖x_{k+1} − x_k‖₁ + ‖δ‖₁ + 2 |Σx_k − 1|) / (1 − γ1),

with ``‖δ‖₁ ≤ u (E + 2 (s + |c| + Σx_{k+1}) + (B + 8)(s + Σx_{k+1}))``: ``E = Σ_v (deg_v + 3) y_v``
bounds the rounding of the pulls (a sum of ``deg_v`` non-negative terms in any order, ours or
cuSPARSE's; the scaling and the product ``src_scale ∘ x``), ``c = 1 − s`` the teleport, ``B`` the
blocks whose sums were added atomically in any order.  Plain sums, not Neumaier's: the bound
pays for their rounding.  A round with a CUDA graph (:attr:`PowerGpuSettings.graph_rounds`)
launches its pull and teleport as one.

The set-up (degree classes, vertex vectors, Anderson's state) is in
:mod:`digraph.dispatch.engines.power.gpu_setup`, the device work (the run's vectors, cuSPARSE's
matrix, the CUDA graphs) in :mod:`digraph.dispatch.engines.power.gpu_work`; its settings are
:class:`~.gpu_settings.PowerGpuSettings`; this module keeps
:func:`solve`, which reads the run's settings at each call and passes them on.
"""


import numpy as np

from .gpu_settings import POWER_DEFAULT as DEFAULT
from ...settings import current
from ....algorithms.base import SumNormalized
from ....errors import InvalidParameterError
from ...runtime.cuda.backend import backend, gpu_name
from ... import driver
from ...convergence import power_stop
from .cpu import power_gamma
from ...systems import linear_factors
from .gpu_setup import anderson_for, anderson_stats, round_bound, vertex_vectors
from .gpu_work import graph_round, graphs, read_back, resident_pull, work

__all__ = ["solve"]




def solve(graph, system, *, tol, max_iter, stats, device="cuda", group=None, trip=None,
          settings=None):
    """Run the power iteration on one GPU; returns (x on the host, summing to 1, converged).
    A system that is not normalised runs the affine map's iteration instead
    (:func:`digraph.dispatch.engines.power.gpu_affine.solve`: its answer, not summing to 1).

    ``group``: threads per vertex of the pull (default :func:`~.gpu_setup.group_size`; given,
    the grouped pull even where the binned one would run).  ``trip``: run as a probe, as
    :func:`digraph.dispatch.engines.power.cpu.solve` (``converged`` None when it trips).
    ``settings``: a :class:`PowerGpuSettings` (default :data:`DEFAULT`).
    """
    if system.family == "linear" and not system.normalize:  # the affine map's iteration
        from .gpu_affine import solve as affine
        return affine(graph, system, tol=tol, max_iter=max_iter, stats=stats, device=device,
                      group=group, settings=settings)
    settings = current(DEFAULT) if settings is None else settings
    from ....smx.cuda import power as K
    from ....smx.cuda import anderson as A
    from ....smx.cuda.common import HB
    g1, why = power_gamma(graph, system, dangling_ok=True)  # the router's call: kept on the system
    if why is None and getattr(system, "dangling", None) is not None:
        why = "a dangling vector (dangling=) is run by the CPU power iteration only"
    if why is not None:
        raise InvalidParameterError(f"mode='power' cannot run this system: {why}")
    be = backend(device)
    be.stats = stats
    stats["gpu"] = "CUDA simulator" if be.sim else gpu_name(be)
    stats["gamma"] = float(g1)
    stats["power_map"] = "google"
    stats.setdefault("dense_rounds", 0)
    n, m = graph.num_vertices, graph.num_arcs
    dg, pull = resident_pull(be, graph, settings, group, stats)
    has = system.arc_scale is not None
    sparse = pull.sparse
    aa = anderson_for(settings, g1, n, m, trip, stats)
    mem = aa.memory
    w, kept, reused = work(be, graph, n, mem, settings)
    stats["gpu_work_kept"] = reused
    in_coef = be.put(linear_factors(graph, system)[3][graph.in_arcs]) if has else w["no_coef"]
    for name, vec in zip(("tele", "src_scale", "dst_scale"),
                         vertex_vectors(be, system, dg["out_degree"], n)):
        w[name][...] = vec  # into the kept vectors: the prepared launches stay valid
    tele, src_scale, dst_scale = w["tele"], w["src_scale"], w["dst_scale"]
    pull.factors(in_coef, has, dst_scale)
    x, y, z = w["x"], w["y"], w["z"]
    x[...] = tele
    z[...] = src_scale * x
    if mem:  # the rings ΔF, ΔG and the last f, g (cuda_anderson)
        dF, dG, fprev, gprev = w["dF"], w["dG"], w["fprev"], w["gprev"]
    sum_slot = 4 + 2 * mem  # acc: the pull's and teleport's 4 sums, the dots, Σ of a mix
    accs = [w["acc0"], w["acc1"]]
    for acc in accs:
        acc[...] = 0.0
    heavy = dg["heavy_in"]
    u = np.finfo(np.float64).eps / 2
    grid_tel = pull.grid_tel
    blocks = (2 * grid_tel if sparse is not None else
              pull.grid_pull + min(int(heavy.size), 65535) + grid_tel)
    grid_aa = max(1, min(be.grid_hb(n), settings.anderson_blocks_per_sm * be.sms))
    # a mix's Σ: a block tree, a chain per thread and an atomic add per block (its rounding)
    mix_terms = grid_aa + 8 + -(-n // (grid_aa * HB)) if n else 0
    st = {"x": x, "y": y, "sx": float(tele.sum()) if n else 0.0, "k": 0, "mix": None,
          "last_diff": np.inf}

    def pull_teleport(x, y, acc, nxt, stream):
        """Queue the pull into ``y`` and the teleport (the part of a round a CUDA graph holds)."""
        pull.queue(z, y, acc, stream)
        be.launch(K.power_teleport, grid_tel, HB, y, tele, x, src_scale, z, acc, nxt,
                  stream=stream)

    # CUDA graphs: a round's pull and teleport in one launch (two graphs, one per parity of the
    # swapped buffers), captured after a first plain round of each parity has prepared the
    # launches on the rounds' stream; kept with the run's vectors
    cg = graphs(be, w, kept, settings, sparse is None and not has)
    if cg is not None:
        be.sync()  # the set-up above ran on the default stream

    def step():
        x, y, k = st["x"], st["y"], st["k"]
        acc, nxt = accs[k % 2], accs[(k + 1) % 2]
        stream = None if cg is None else cg["stream"]
        gamma = st["mix"]
        if gamma is not None:  # x ← max(x − Σ γ_i ΔG_i, 0) in place, z from it, Σx into acc
            be.launch(A.anderson_mix, grid_aa, HB, x, dG, *A.mix_scalars(gamma), src_scale, z,
                      acc, sum_slot, stream=stream)
        if cg is None:
            pull_teleport(x, y, acc, nxt, None)
        else:
            graph_round(cg, (k % 2, pull.G, pull.bins is None),
                         lambda: pull_teleport(x, y, acc, nxt, stream), stats)
        slot = aa.record_slot() if aa.memory else None
        if aa.memory:
            j, cnt = slot if slot is not None else (0, 0)
            be.launch(A.anderson_record, grid_aa, HB, x, y, fprev, gprev, dF, dG,
                      int(slot is not None), j, cnt, acc, 4, stream=stream)
        got = read_back(be, cg, acc, k, stats)
        s, e, diff, sy = (float(t) for t in got[:4])
        sx, sx_err = st["sx"], 0.0
        if gamma is not None:  # the iterate pulled is a mix: its own sum, with its rounding
            sx = float(got[sum_slot])
            sx_err = 2 * u * mix_terms * sx
        bound, delta = round_bound(g1, s, e, diff, sy, sx, sx_err, blocks, gamma is not None)
        st["mix"] = None
        # a round follows: its mix
        if aa.memory and k + 1 < max_iter and not power_stop(bound, delta, diff, st["last_diff"],
                                                              g1, tol, {}):
            dots = None if slot is None else got[4:4 + slot[1]]
            dotf = None if slot is None else got[4 + mem:4 + mem + slot[1]]
            st["mix"] = aa.solve(diff, dots, dotf)
        st.update(x=y, y=x, sx=sy, k=k + 1, last_diff=diff)
        return bound, delta, diff

    if n == 0:
        rounds, converged = 0, True
    else:
        rounds, converged = driver.power(step, g1=g1, tol=tol, max_iter=max_iter, stats=stats,
                                         trip=trip)
    x = st["x"]
    anderson_stats(aa, mem, stats)
    stats["rounds"] += rounds
    stats["dense_rounds"] += rounds
    stats["arc_updates"] += rounds * m
    stats["vertex_updates"] += rounds * n
    if n == 0:
        stats["error_bound"] = 0.0
    be.sync()
    out = be.get(x)
    if kept:  # the next run's launches find these arrays prepared
        keep = [a for a in list(w.values()) + list(dg.values())
                if hasattr(a, "__cuda_array_interface__")]
        if pull.bins is not None:
            keep += [verts for _, verts, _ in pull.bins[0]] + [pull.bins[1]]
        be.retain(keep, "power", holder=w)
    else:
        be.release("power")
    # x sums to 1 up to rounding that the bound counts: the host divides nothing
    return out.view(SumNormalized), converged
