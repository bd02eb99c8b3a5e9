"""Block-level helpers of the SCC engine's CUDA kernels (:mod:`digraph.smx.cuda.scc`): the
sizes of its blocks and shared arrays, the reductions over a block or a warp, a group leader's
value, and the exact solve of a small component (:func:`direct_solve`), the GPU twin of
:func:`digraph.smx.cpu.scc._direct`.  Under Numba's CUDA simulator (no warp shuffles) the warp
operations are shared-memory trees.
"""

from numba import cuda

from .common import block_sum
from .common import SIM, HB

SH = 16 if SIM else 2048
"""The most vertices of a light component (its residuals and values live in shared memory)."""
QB = 8 if SIM else 256
"""Threads per block of the queue kernel (a block per component; under the simulator 8, each
thread a Python thread)."""
assert not SIM or QB == HB  # the simulator's warp sums are block sums of HB threads
DK = 8 if SIM else 32
"""Light components of at most this many vertices are solved exactly, by Gaussian elimination
on ``I − A`` restricted to them (diagonally dominant by columns on the L1 route, by rows on the
L∞ route: no pivoting needed), by the block's first warp in one pass instead of the many sweeps
a rate near α takes."""
G = 2 if SIM else 8
"""Threads per vertex of the heavy rounds (they share its out-arcs)."""
HUB_PULL = 4 if SIM else 32
"""A vertex of a light component of several vertices with more in-arcs from other components
than this is pulled by a warp (lanes over its in-arcs), not by one thread: a thread's pull is a
chain of dependent loads, so a hub pulled by one thread can make the critical path of its phase
(measured: docs/history/benchmarks-notebook.md, "The light phase profiled: one block a
multiprocessor, and hubs walked by one thread")."""
HUB_PUSH = 4 if SIM else 32
"""A vertex of a swept light component with more in-arcs inside it than this gathers them with a
warp in each sweep (lanes over its in-arcs), not with one thread."""
PULLS, PUSHES, VERTEX_PUSHES, SWEEPS, ONCE, CAPPED, RAN, ROUNDS, DIRECT, GATHERED = range(10)
"""Indices of the SCC kernels' counters (``cnt``); see :mod:`digraph.smx.cuda.scc`."""
COUNTERS = 10
WL = min(32, QB)
"""Lanes of a hub's pull (a warp; the block under the simulator)."""
_NW = max(QB // 32, 1)


if SIM:  # no warp shuffles in the simulator: shared-memory trees
    @cuda.jit(device=True, inline=True)
    def sum_max(rbuf, s, t):
        """(Σ s, max t) over the queue kernel's block (every thread gets them)."""
        tid = cuda.threadIdx.x
        rbuf[tid] = s
        rbuf[QB + tid] = t
        cuda.syncthreads()
        off = QB // 2
        while off > 0:
            if tid < off:
                rbuf[tid] += rbuf[tid + off]
                rbuf[QB + tid] = max(rbuf[QB + tid], rbuf[QB + tid + off])
            cuda.syncthreads()
            off //= 2
        a = rbuf[0]
        b = rbuf[QB]
        cuda.syncthreads()
        return a, b

    @cuda.jit(device=True, inline=True)
    def _wsync():
        cuda.syncthreads()

    @cuda.jit(device=True, inline=True)
    def lanes_sum(rbuf, v):
        """Σ v over a hub's lanes (the block here: :data:`WL` is the block, of ``QB`` = ``HB``
        threads), every lane gets it; ``rbuf[:QB]`` is scratch."""
        return block_sum(rbuf, v)

    @cuda.jit(device=True, inline=True)
    def from_leader(gbuf, v):
        """The value of the first thread of each group of ``G`` (every thread of the group)."""
        tid = cuda.threadIdx.x
        if tid % G == 0:
            gbuf[tid] = v
        cuda.syncthreads()
        out = gbuf[tid - tid % G]
        cuda.syncthreads()
        return out
else:
    @cuda.jit(device=True, inline=True)
    def sum_max(rbuf, s, t):
        """(Σ s, max t) over the queue kernel's block (every thread gets them)."""
        off = 16
        while off > 0:
            s += cuda.shfl_xor_sync(0xFFFFFFFF, s, off)
            t = max(t, cuda.shfl_xor_sync(0xFFFFFFFF, t, off))
            off //= 2
        tid = cuda.threadIdx.x
        if tid % 32 == 0:
            rbuf[tid // 32] = s
            rbuf[QB + tid // 32] = t
        cuda.syncthreads()
        s = 0.0
        t = 0.0
        for w in range(_NW):
            s += rbuf[w]
            t = max(t, rbuf[QB + w])
        cuda.syncthreads()
        return s, t

    @cuda.jit(device=True, inline=True)
    def _wsync():
        cuda.syncwarp()

    @cuda.jit(device=True, inline=True)
    def lanes_sum(rbuf, v):
        """Σ v over a hub's lanes (a warp), every lane gets it: shuffles, where one atomic add
        a lane into the hub's shared slot would make 32 float64 atomics on one address."""
        off = 16
        while off > 0:
            v += cuda.shfl_xor_sync(0xFFFFFFFF, v, off)
            off //= 2
        return v

    @cuda.jit(device=True, inline=True)
    def from_leader(gbuf, v):
        """The value of the first thread of each group of ``G`` (every thread of the group)."""
        lane = cuda.threadIdx.x % 32
        return cuda.shfl_sync(0xFFFFFFFF, v, lane - lane % G)


@cuda.jit(device=True, inline=True)
def arc_coef(k, coef, has_coef, vscale, s):
    return coef[k] if has_coef else vscale[s]


@cuda.jit(device=True, inline=True)
def direct_solve(sh, a, k, iout_off, iout_tgt, icoef, has_coef, vscale):
    """Solve ``(I − A) x = r`` on the ``k ≤ DK`` vertices from position ``a`` (``r`` in
    ``sh[DK·DK:]``, ``x`` left there): the matrix in ``sh[i·DK + j]``, Gaussian elimination
    without pivoting, a lane per row (the block's first ``DK`` threads)."""
    lane = cuda.threadIdx.x
    R = DK * DK
    for q in range(lane, DK * DK, DK):
        sh[q] = 0.0
    _wsync()
    if lane < k:
        sh[lane * DK + lane] = 1.0
        for e in range(iout_off[a + lane], iout_off[a + lane + 1]):
            t = iout_tgt[e] - a
            sh[t * DK + lane] -= arc_coef(e, icoef, has_coef, vscale, a + lane)
    _wsync()
    for p in range(k):
        if lane > p and lane < k:
            f = sh[lane * DK + p] / sh[p * DK + p]
            if f != 0.0:
                for c in range(p + 1, k):
                    sh[lane * DK + c] -= f * sh[p * DK + c]
                sh[R + lane] -= f * sh[R + p]
        _wsync()
    for p in range(k - 1, -1, -1):
        if lane == 0:
            sh[R + p] = sh[R + p] / sh[p * DK + p]
        _wsync()
        if lane < p:
            sh[R + lane] -= sh[lane * DK + p] * sh[R + p]
        _wsync()
