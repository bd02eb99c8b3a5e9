"""The sweeps of a light component in one block (:func:`digraph.smx.cuda.scc.scc_light_phase`):
the gather that applies the inside arcs to the pushed shares, and Anderson-accelerated sweeps.

A component's residuals live in shared memory (``sh[j]``, ``j < k``), the shares its vertices
push in ``sh[SH + j]``; :func:`_gather` adds to each vertex the shares of its in-arcs inside the
component (``r ← r + A δ``), a thread a vertex and a warp a hub.

Anderson acceleration (Walker & Ni, "Anderson acceleration for fixed-point iterations", SIAM J.
Numer. Anal. 49(4), 2011; the ``power`` engine's method, :mod:`digraph.dispatch.anderson`) of the
Jacobi sweep ``x ← x + r`` on ``x = f + A x``, in residual form: with the last ``m`` steps
``ΔX_i = δ_i`` and residual changes ``ΔF_i = r_{i+1} − r_i``, each sweep takes

    δ = r − Σ_i γ_i (ΔX_i + ΔF_i),   γ = argmin ‖r − ΔF γ‖₂,
    x ← x + δ,   r ← r − δ + A δ,

so a sweep is still one gather; ``γ`` comes from the Gram matrix ``ΔFᵀΔF`` and ``ΔFᵀr``, summed
over the block in the same reduction as the stop test's ``Σ|r|`` and solved by every thread
(regularised as :class:`~digraph.dispatch.anderson.Anderson`; an untrusted solve drops the
history, and the next sweep is a plain one).  The residual is kept exactly as the plain sweeps
keep it, so the stop (``Σ|r| ≤`` the component's budget) and the engine's certificate are
unchanged.

The components the GPU engine sweeps are nearly closed (a Jacobi rate near α), the case
Anderson's few differences capture: they cut the sweeps and the light phases' time.  A sweep
costs more (its sums, every vertex pushing): memory 4, with a Gram matrix of ten sums in local
memory, cut the sweeps further but made the phase slower, hence at most two differences here,
kept in registers and local arrays indexed alike by every thread (measured:
docs/history/benchmarks-notebook.md, "Anderson in the light sweeps").
"""

from numba import cuda, float64

from .common import block_sum
from .common import SIM
from .scc_blocks import HUB_PUSH, QB, SH, WL, lanes_sum, sum_max

__all__ = ["AM", "ACC"]

AM = 2
"""The most memory of the light sweeps' Anderson acceleration
(:attr:`digraph.dispatch.engines.scc.gpu.GpuSccSettings.light_anderson`)."""
ACC = SH // QB
"""Vertices of a swept component per thread (vertex ``tid + m·QB`` is the thread's ``m``-th)."""
_NW = max(QB // 32, 1)
_REG = 1e-10  # Anderson's regularisation, a share of the Gram matrix's trace
_MAX_COEF = 1e4  # a larger coefficient: the solve is not trusted


@cuda.jit(device=True, inline=True)
def _gather(sh, rbuf, a, k, i0, i1, iin_off, iin_src, iin_arc, icoef, has_coef, ihub_pos):
    """Each of the component's ``k`` vertices from position ``a`` adds its in-arcs' shares
    ``sh[SH + u]`` to its residual ``sh[j]``: a thread a vertex, a warp each for the hubs
    ``ihub_pos[i0:i1]`` (more in-arcs inside than ``HUB_PUSH``); returns the arcs this thread
    read."""
    tid = cuda.threadIdx.x
    lane = tid % WL
    reads = 0
    for j in range(tid, k, QB):
        lo = iin_off[a + j]
        hi = iin_off[a + j + 1]
        if hi - lo <= HUB_PUSH:
            g = 0.0
            e = lo
            if not has_coef:  # four loads in flight: a sweep waits on their latency
                while e + 4 <= hi:
                    u0 = iin_src[e]
                    u1 = iin_src[e + 1]
                    u2 = iin_src[e + 2]
                    u3 = iin_src[e + 3]
                    g += (sh[SH + u0 - a] + sh[SH + u1 - a]) + (sh[SH + u2 - a] + sh[SH + u3 - a])
                    e += 4
            while e < hi:
                u = iin_src[e] - a
                g += (icoef[iin_arc[e]] * sh[SH + u]) if has_coef else sh[SH + u]
                e += 1
            sh[j] += g
            reads += hi - lo
    for h in range(i0 + tid // WL, i1, QB // WL):  # hubs: a warp each
        p = ihub_pos[h]
        g = 0.0
        e = iin_off[p] + lane
        hi = iin_off[p + 1]
        if not has_coef:  # four loads in flight a lane (hubs of a site's pages: most of a
            while e + 3 * WL < hi:  # web graph's sweep time)
                u0 = iin_src[e]
                u1 = iin_src[e + WL]
                u2 = iin_src[e + 2 * WL]
                u3 = iin_src[e + 3 * WL]
                g += (sh[SH + u0 - a] + sh[SH + u1 - a]) + (sh[SH + u2 - a] + sh[SH + u3 - a])
                e += 4 * WL
        while e < hi:
            u = iin_src[e] - a
            g += (icoef[iin_arc[e]] * sh[SH + u]) if has_coef else sh[SH + u]
            e += WL
        g = lanes_sum(rbuf, g)
        if lane == 0:  # the hub's slot is this warp's alone
            sh[p - a] += g
            reads += iin_off[p + 1] - iin_off[p]
    return reads


if SIM:  # no warp shuffles in the simulator: a block sum each
    @cuda.jit(device=True, inline=True)
    def _block_sums(rbuf, s0, s1, s2, s3, s4, s5):
        """The six values summed over the block (every thread gets the sums; ``rbuf`` is
        scratch)."""
        return (block_sum(rbuf, s0), block_sum(rbuf, s1), block_sum(rbuf, s2),
                block_sum(rbuf, s3), block_sum(rbuf, s4), block_sum(rbuf, s5))
else:
    @cuda.jit(device=True, inline=True)
    def _block_sums(rbuf, s0, s1, s2, s3, s4, s5):
        """The six values summed over the block (every thread gets the sums, added in the same
        order: the same values; ``rbuf[:6·warps]`` is scratch)."""
        tid = cuda.threadIdx.x
        s0 = lanes_sum(rbuf, s0)  # a warp's shuffles
        s1 = lanes_sum(rbuf, s1)  # a warp's shuffles
        s2 = lanes_sum(rbuf, s2)  # a warp's shuffles
        s3 = lanes_sum(rbuf, s3)  # a warp's shuffles
        s4 = lanes_sum(rbuf, s4)  # a warp's shuffles
        s5 = lanes_sum(rbuf, s5)  # a warp's shuffles
        if tid % 32 == 0:
            w = tid // 32
            rbuf[w] = s0
            rbuf[_NW + w] = s1
            rbuf[2 * _NW + w] = s2
            rbuf[3 * _NW + w] = s3
            rbuf[4 * _NW + w] = s4
            rbuf[5 * _NW + w] = s5
        cuda.syncthreads()
        s0 = s1 = s2 = s3 = s4 = s5 = 0.0
        for w in range(_NW):
            s0 += rbuf[w]
            s1 += rbuf[_NW + w]
            s2 += rbuf[2 * _NW + w]
            s3 += rbuf[3 * _NW + w]
            s4 += rbuf[4 * _NW + w]
            s5 += rbuf[5 * _NW + w]
        cuda.syncthreads()
        return s0, s1, s2, s3, s4, s5


@cuda.jit(device=True, inline=True)
def coefficients(cnt, c0, c1, h00, h01, h11):
    """Anderson's ``γ`` from the block's sums: the regularised normal equations ``(ΔFᵀΔF + reg·I)
    γ = ΔFᵀr`` of ``cnt`` (1 or 2) differences, ``ΔFᵀΔF = [[h00, h01], [h01, h11]]``, ``ΔFᵀr =
    (c0, c1)``.  Returns (trusted, γ0, γ1): not trusted when the matrix is not positive definite
    or a coefficient is not finite or beyond :data:`_MAX_COEF`."""
    if cnt == 1:
        h = h00 * (1.0 + _REG)
        if not h > 0.0:
            return False, 0.0, 0.0
        g0 = c0 / h
        return abs(g0) <= _MAX_COEF, g0, 0.0
    reg = _REG * max(h00 + h11, 1e-300)
    p = h00 + reg
    q = h11 + reg
    det = p * q - h01 * h01
    if not det > 0.0:
        return False, 0.0, 0.0
    g0 = (q * c0 - h01 * c1) / det
    g1 = (p * c1 - h01 * c0) / det
    return abs(g0) <= _MAX_COEF and abs(g1) <= _MAX_COEF, g0, g1


@cuda.jit(device=True, inline=True)
def anderson_sweeps(sh, rbuf, acc, a, k, arcs, mem, budget, max_sweeps, vscale, has_coef, icoef,
                     i0, i1, iin_off, iin_src, iin_arc, ihub_pos):
    """Sweep the component of ``k ≤ SH`` vertices and ``arcs`` arcs inside from position ``a``
    (residuals in ``sh[:k]``) with Anderson acceleration of memory ``mem`` (1 or 2) until
    ``Σ|r| ≤ budget`` or ``max_sweeps`` sweeps; the values summed into this thread's ``acc``.
    Returns (sweeps, capped, arcs pushed, vertices pushed, arcs gathered), the last three this
    thread's share of the block's."""
    tid = cuda.threadIdx.x
    dx0 = cuda.local.array(ACC, float64)  # ΔX and ΔF of the older step held (slot 0) ...
    df0 = cuda.local.array(ACC, float64)
    dx1 = cuda.local.array(ACC, float64)  # ... and of the newer (slot 1)
    df1 = cuda.local.array(ACC, float64)
    rold = cuda.local.array(ACC, float64)
    cnt = 0  # steps held
    g0 = 0.0
    g1 = 0.0
    sweeps = 0
    capped = 0
    pushes = 0
    vpushes = 0
    reads = 0
    mass = 0.0
    for m in range(ACC):
        acc[m] = 0.0
        j = tid + m * QB
        if j < k:
            mass += abs(sh[j])
    mass, _t = sum_max(rbuf, mass, 0.0)
    while mass > budget:
        if sweeps >= max_sweeps:
            capped = 1
            break
        sweeps += 1
        full = cnt == mem  # the oldest step held leaves
        for m in range(ACC):  # δ, pushed by every vertex
            j = tid + m * QB
            if j < k:
                r = sh[j]
                d = r
                if cnt > 0:
                    d -= g0 * (dx0[m] + df0[m])
                if cnt > 1:
                    d -= g1 * (dx1[m] + df1[m])
                acc[m] += d
                rold[m] = r
                sh[j] = r - d
                sh[SH + j] = d if has_coef else d * vscale[a + j]
                if full and mem == 2:
                    dx0[m] = dx1[m]
                    df0[m] = df1[m]
                    dx1[m] = d
                elif full or cnt == 0:
                    dx0[m] = d
                else:
                    dx1[m] = d
        cuda.syncthreads()
        reads += _gather(sh, rbuf, a, k, i0, i1, iin_off, iin_src, iin_arc, icoef, has_coef,
                         ihub_pos)
        cuda.syncthreads()
        if not full:
            cnt += 1
        s0 = s1 = s2 = s3 = s4 = s5 = 0.0  # Σ|r|, ΔFᵀr, the Gram matrix
        for m in range(ACC):
            j = tid + m * QB
            if j < k:
                r = sh[j]
                f = r - rold[m]
                if cnt == 1:
                    df0[m] = f
                else:
                    df1[m] = f
                f0 = df0[m]
                s0 += abs(r)
                s1 += f0 * r
                s3 += f0 * f0
                if cnt == 2:
                    s2 += f * r
                    s4 += f0 * f
                    s5 += f * f
        mass, c0, c1, h00, h01, h11 = _block_sums(rbuf, s0, s1, s2, s3, s4, s5)
        ok, g0, g1 = coefficients(cnt, c0, c1, h00, h01, h11)
        if not ok:  # the history dropped: a plain sweep next
            cnt = 0
    if tid == 0:  # every vertex pushed along all its arcs in each sweep
        pushes = sweeps * arcs
        vpushes = sweeps * k
    return sweeps, capped, pushes, vpushes, reads


@cuda.jit(device=True, inline=True)
def priority_sweeps(sh, rbuf, acc, a, k, arcs, per_arc, vmax, linf, prio, max_sweeps, iout_off,
                     vscale, has_coef, icoef, i0, i1, iin_off, iin_src, iin_arc, ihub_pos):
    """Sweep the component of ``k ≤ SH`` vertices and ``arcs`` arcs inside from position ``a``
    with the CPU engine's soft priority (a vertex pushes when ``|r_v| > deg_v · max(prio · mass
    / arcs, per_arc)``; on the L∞ route when ``|r_v| > vmax``) until its mass is within
    ``per_arc · arcs`` (L∞: its largest residual within ``vmax``) or ``max_sweeps`` sweeps.
    Returns what :func:`anderson_sweeps` returns."""
    tid = cuda.threadIdx.x
    budget = per_arc * arcs
    sweeps = 0
    capped = 0
    pushes = 0
    vpushes = 0
    reads = 0
    for m in range(ACC):
        acc[m] = 0.0
    while True:
        mass = 0.0
        top = 0.0
        for j in range(tid, k, QB):
            v = abs(sh[j])
            mass += v
            top = max(top, v)
        mass, top = sum_max(rbuf, mass, top)
        if (top <= vmax) if linf else (mass <= budget):
            break
        if sweeps >= max_sweeps:
            capped = 1
            break
        sweeps += 1
        theta = 0.0 if linf else max(prio * mass / arcs, per_arc)
        for m in range(ACC):  # which vertices push: their share in sh[SH + j]
            j = tid + m * QB
            if j < k:
                d = sh[j]
                deg = iout_off[a + j + 1] - iout_off[a + j]
                ad = abs(d)
                if ad > theta * deg and ad > vmax:
                    acc[m] += d
                    sh[j] = 0.0
                    sh[SH + j] = d if has_coef else d * vscale[a + j]
                    pushes += deg
                    vpushes += 1
                else:
                    sh[SH + j] = 0.0
        cuda.syncthreads()
        reads += _gather(sh, rbuf, a, k, i0, i1, iin_off, iin_src, iin_arc, icoef, has_coef,
                         ihub_pos)
        cuda.syncthreads()
    return sweeps, capped, pushes, vpushes, reads
