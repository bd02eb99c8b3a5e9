"""The Google-matrix power iteration on one GPU (``mode="power"``, ``device="cuda[:N]"``): the GPU
twin of :mod:`digraph.dispatch.power`, same round, same sound stop, same counters.

A round is two launches (three with in-degree hubs) and one read-back of four scalars
(:mod:`digraph.smx.cuda_power`).  The stop: for the computed ``x_{k+1} = M x_k + δ``,

    ‖x_{k+1} − π‖₁ ≤ (γ1 ‖x_{k+1} − x_k‖₁ + ‖δ‖₁ + 2 |Σx_k − 1|) / (1 − γ1),

with ``‖δ‖₁ ≤ u (E + 2 (s + |c| + Σx_{k+1}) + (B + 8)(s + Σx_{k+1}))``: ``E = Σ_v (deg_v + 3) y_v``
bounds the rounding of the pulls (a sum of ``deg_v`` non-negative terms in any order, the scaling
and the product ``src_scale ∘ x``), ``c = 1 − s`` the teleport, ``B`` the blocks whose sums were
added atomically in any order.  Plain sums, not Neumaier's: the bound pays for their rounding.
"""

import math

import numpy as np

from ..errors import InvalidParameterError
from .convergence import ROUNDING_MARGIN
from .power import _gamma
from .systems import linear_factors

__all__ = ["solve", "group_size", "BLOCKS_PER_SM"]

BLOCKS_PER_SM = 16
"""Blocks of HB threads per multiprocessor for the pull and the teleport: the grid strides over
the vertices and each block adds its sums to the accumulator once (a block per 128 vertices
sent 65 k atomic additions to the same two words a round on R-MAT 2^22; the sharded ``bsp``
pull measured the same limit, :data:`digraph.dispatch.multi_gpu.PULL_BLOCKS_PER_SM`)."""


def group_size(graph):
    """Threads per vertex of the pull: the power of two nearest half the mean in-degree, 1 to 32.
    A group reads its vertex's in-arcs side by side (coalesced) and sums them by shuffles."""
    if not graph.num_vertices:
        return 1
    mean = graph.num_arcs / graph.num_vertices
    return int(min(32, max(1, 2 ** round(math.log2(max(mean / 2, 1.0))))))


def _vertex_factor(be, a, n):
    """A vertex factor on the device: ones made there when absent (no host array, no copy)."""
    if a is None:
        return be.keep(be.xp.ones(n, np.float64))
    return be.put(a, np.float64)


def solve(graph, system, *, tol, max_iter, stats, device="cuda", group=None):
    """Run the power iteration on one GPU; returns (x on the host, summing to 1, converged).

    ``group``: threads per vertex of the pull (default :func:`group_size`).
    """
    from . import gpu
    from ..smx import cuda_power as K
    from ..smx.cuda_kernels import HB
    g1, why = _gamma(graph, system, dangling_ok=True)  # the router's call: kept on the system
    if why is None and getattr(system, "dangling", None) is not None:
        why = "a dangling vector (dangling=) is run by the CPU power iteration only"
    if why is not None:
        raise InvalidParameterError(f"mode='power' cannot run this system: {why}")
    be = gpu.backend(device)
    be.stats = stats
    stats["gpu"] = "CUDA simulator" if be.sim else gpu._gpu_name(be)
    stats["dtype"] = "float64"
    stats["formulation"] = "google"
    stats["gamma"] = float(g1)
    stats.setdefault("dense_rounds", 0)
    xp = be.xp
    n, m = graph.num_vertices, graph.num_arcs
    G = int(group or group_size(graph))
    if G & (G - 1) or not 1 <= G <= min(32, HB):
        raise InvalidParameterError(f"group must be a power of two from 1 to {min(32, HB)}, got {G}")
    stats["power_group"] = G
    dg = gpu._device_graph(be, graph)
    has = system.arc_scale is not None
    in_coef = be.put(linear_factors(graph, system)[3][graph.in_arcs]) if has else be.put(np.zeros(1))
    b = np.asarray(system.b, np.float64)
    bsum = float(b.sum()) if n else 1.0
    tele = be.put(b) / bsum
    be.keep(tele)
    src_scale = _vertex_factor(be, system.src_scale, n)
    dst_scale = _vertex_factor(be, system.dst_scale, n)
    x = be.keep(tele.copy())
    y = be.keep(xp.empty(n, np.float64))
    z = be.keep(xp.empty(n, np.float64))
    z[...] = src_scale * x
    accs = [be.keep(xp.zeros(4, np.float64)), be.keep(xp.zeros(4, np.float64))]
    heavy = dg["heavy_in"]
    u = np.finfo(np.float64).eps / 2
    grid_pull = max(1, min((n * G + HB - 1) // HB, BLOCKS_PER_SM * be.sms))
    grid_tel = max(1, min(be.grid_hb(n), BLOCKS_PER_SM * be.sms))
    blocks = grid_pull + min(int(heavy.size), 65535) + grid_tel
    sx = float(tele.sum()) if n else 0.0
    bound = np.inf
    converged = n == 0
    rounds = 0
    last_diff = np.inf
    while not converged and rounds < max_iter:
        acc, nxt = accs[rounds % 2], accs[(rounds + 1) % 2]
        be.launch(K.power_pull, grid_pull, HB, G, dg["in_offsets"], dg["in_sources"], in_coef, has,
                  z, dst_scale, y, acc)
        be.heavy(K.power_pull_heavy, heavy, dg["in_offsets"], dg["in_sources"], in_coef, has, z,
                 dst_scale, y, acc)
        be.launch(K.power_teleport, grid_tel, HB, y, tele, x, src_scale, z, acc, nxt)
        s, e, diff, sy = (float(t) for t in be.get(acc))
        rounds += 1
        c = 1.0 - s
        delta = (u * (e + 2 * (s + abs(c) + sy) + (blocks + 8) * (s + sy))
                 + 2 * abs(sx - 1.0) + abs(sy - 1.0))
        bound = (g1 * diff + delta) * (1.0 + ROUNDING_MARGIN) / (1.0 - g1)
        x, y = y, x
        sx = sy
        if bound <= tol:
            converged = True
        elif delta / (1.0 - g1) > tol / 2 and (g1 * diff <= delta or diff >= last_diff):
            # rounding alone exceeds what tol allows, and the differences have come down to the
            # rounding (or stopped falling): no further round can lower the bound
            stats["floor_limited"] = True
            stats["error_floor"] = float(delta / (1.0 - g1))
            converged = True
        last_diff = diff
    stats["rounds"] += rounds
    stats["dense_rounds"] += rounds
    stats["arc_updates"] += rounds * m
    stats["vertex_updates"] += rounds * n
    stats["error_bound"] = float(bound) if n else 0.0
    be.sync()
    out = be.get(x)
    be.release()
    return out, converged
