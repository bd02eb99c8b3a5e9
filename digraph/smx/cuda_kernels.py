"""Numba CUDA kernels of the GPU engine (``device="cuda"``): every mode, every system family.

Imported only when a GPU device is asked for (``import digraph`` never loads numba.cuda).  The
kernels take device arrays (CuPy arrays, zero-copy through ``__cuda_array_interface__``) or, under
Numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``, used by CI), numpy arrays.  The launch shape
and the host-side driving loops live in :mod:`digraph.dispatch.gpu`.

Families and modes (the same systems and counters as the CPU kernels of this package):

* ``bsp`` — Jacobi rounds: a dense pull over in-arcs (one thread per target, no atomics) or a
  sparse push from the frontier with atomic adds / min / max;
* ``vertex-async`` — one pass over a worklist, values read while others write (atomic pushes);
* ``path`` — one thread walks a *unit* (one long path alone, or several short consecutive paths,
  DiGraph Figure 5) arc by arc, carrying the value it has just written to the next arc's source, so
  a change at a path's head reaches its tail in the same round.  Blocks are persistent and take
  blockDim units at a time from an atomic cursor over a queue ordered by DAG layer (work
  stealing between SMs: a block that finishes early takes the next units).  *Proxy vertices*: the
  in-arcs of the ``PROXY_SLOTS`` vertices of highest in-degree are accumulated in shared memory
  per block and flushed to the masters when the block's work is done.

Skewed degrees: a thread per vertex leaves a hub's thread working alone long after the others
finish (cnr-2000 has vertices of in-degree 18,000).  Every vertex-centric kernel therefore
skips vertices of degree ``>= HEAVY`` and a companion ``*_heavy`` kernel gives each of those a whole
block (arcs strided over its threads, a shared-memory reduction) over a static list of them.

Per-arc mirror state ``s_j`` (docs/design.md §3): linear ``d = c_j (x_u − s_j); x_v += d; s_j = x_u``
(sent when ``|d| > θ``); monotone: an arc is pending while ``x_u ≠ s_j``.
"""


import math

from numba import config, cuda, float64, int64

from ..dispatch.convergence import neumaier_add
from .relax_codes import FIRST as _FIRST, MAX as _MAX, MIN as _MIN, PLUS as _PLUS, TIMES as _TIMES

__all__ = []

PROXY_SLOTS = 128
"""Shared-memory proxy accumulators per block (the highest in-degree vertices)."""

_SIM = bool(config.ENABLE_CUDASIM)
HEAVY = 4 if _SIM else 256
"""Degree from which a vertex gets a whole block instead of one thread (4 in the simulator, so
that the tests' small graphs exercise the heavy kernels too)."""
HB = 8 if _SIM else 128
"""Threads per block of the heavy and scan kernels (a power of two: tree reductions; the
simulator runs each thread as a Python thread)."""


def _lock_simulated_shared_arrays():
    """Make the CUDA simulator's ``cuda.shared.array`` safe for a block's threads.

    The simulator (numba-cuda's ``kernelapi.FakeCUDAShared.array``) finds a block's shared array
    by the calling line and makes it on first use, a look-up then an insert without a lock: two
    of a block's Python threads that reach the line together each make an array of their own,
    and the block's sums then read another thread's copy (seen as 1 run in 16 of the GPU power
    iteration on a 29-vertex graph ending "converged" far from the answer, and as the shards of
    the sharded engine differing by 1e-8).  The same look-up, under a lock."""
    import sys
    import threading
    import numpy as np
    from numba.core import types
    from numba.np import numpy_support
    from numba.cuda.simulator import kernelapi
    cls = kernelapi.FakeCUDAShared
    if getattr(cls, "_digraph_locked", False):
        return
    plain = cls.array
    lock = threading.Lock()

    def array(self, shape, dtype, alignment=None):
        if alignment is not None or shape == 0:
            return plain(self, shape, dtype, alignment)
        if isinstance(dtype, types.Type):
            dtype = numpy_support.as_dtype(dtype)
        f = sys._getframe(1)
        caller = (f.f_code.co_filename, f.f_lineno)
        with lock:
            res = self._allocations.get(caller)
            if res is None:
                res = self._allocations[caller] = np.empty(shape, dtype)
        return res

    cls.array = array
    cls._digraph_locked = True


if _SIM:
    _lock_simulated_shared_arrays()


_neumaier = cuda.jit(device=True, inline=True)(neumaier_add.py_func)
"""One step of Neumaier's compensated summation: (sum, compensation); the CPU's
:func:`digraph.dispatch.convergence.neumaier_add`, compiled for the device."""


@cuda.jit(device=True, inline=True)
def _block_sum(buf, val):
    """Sum of ``val`` over the block's threads (every thread gets it)."""
    tid = cuda.threadIdx.x
    buf[tid] = val
    cuda.syncthreads()
    step = HB // 2
    while step > 0:
        if tid < step:
            buf[tid] += buf[tid + step]
        cuda.syncthreads()
        step //= 2
    out = buf[0]
    cuda.syncthreads()
    return out


@cuda.jit(device=True, inline=True)
def relax(op, xu, a):
    if op == _PLUS:
        return xu + a
    if op == _MIN:
        return min(xu, a)
    if op == _MAX:
        return max(xu, a)
    if op == _TIMES:
        return xu * a
    return xu


@cuda.jit(device=True, inline=True)
def improve(x, v, c, combine):
    """Atomic min (combine 0) or max (1) of ``x[v]`` with ``c``; True when it improved."""
    if combine == 0:
        if c < x[v]:
            old = cuda.atomic.min(x, v, c)
            return c < old
        return False
    if c > x[v]:
        old = cuda.atomic.max(x, v, c)
        return c > old
    return False


# ============================================================================ linear (sum) family

@cuda.jit(cache=True)
def linear_take(front, delta, x, src_scale, send):
    """BSP sparse round, step 1: frontier vertices absorb their δ (Jacobi: read before any push);
    ``send[u]`` (per vertex, zero elsewhere) is what u pushes."""
    i = cuda.grid(1)
    if i < front.size:
        u = front[i]
        d = delta[u]
        x[u] += d
        delta[u] = 0.0
        send[u] = d * src_scale[u]


@cuda.jit(cache=True)
def linear_push(front, send, out_offsets, out_targets, arc_coef, has_coef, dst_scale, delta):
    """BSP sparse round, step 2: push the sends along the frontier's out-arcs (atomic); vertices of
    out-degree >= HEAVY are left to :func:`linear_push_heavy`."""
    i = cuda.grid(1)
    if i < front.size:
        u = front[i]
        if out_offsets[u + 1] - out_offsets[u] < HEAVY:
            s = send[u]
            send[u] = 0.0
            for e in range(out_offsets[u], out_offsets[u + 1]):
                v = out_targets[e]
                c = arc_coef[e] if has_coef else 1.0
                cuda.atomic.add(delta, v, dst_scale[v] * c * s)


@cuda.jit(cache=True)
def linear_push_heavy(heavy, send, out_offsets, out_targets, arc_coef, has_coef, dst_scale,
                      delta):
    """:func:`linear_push` for the vertices of out-degree >= HEAVY with a send: a block each."""
    for i in range(cuda.blockIdx.x, heavy.size, cuda.gridDim.x):
        u = heavy[i]
        s = send[u]
        if s != 0.0:
            for e in range(out_offsets[u] + cuda.threadIdx.x, out_offsets[u + 1], HB):
                v = out_targets[e]
                c = arc_coef[e] if has_coef else 1.0
                cuda.atomic.add(delta, v, dst_scale[v] * c * s)
        cuda.syncthreads()
        if cuda.threadIdx.x == 0:
            send[u] = 0.0


@cuda.jit(cache=True)
def linear_async_push(work, out_offsets, out_targets, arc_coef, has_coef, src_scale, dst_scale,
                      delta, x):
    """vertex-async pass: each worklist vertex takes its whole pending δ (whatever arrived until
    now) and pushes it along its out-arcs; the mass taken is subtracted atomically, so nothing that
    arrives meanwhile is lost."""
    i = cuda.grid(1)
    if i < work.size:
        u = work[i]
        if out_offsets[u + 1] - out_offsets[u] >= HEAVY:
            return
        d = delta[u]
        if d != 0.0:
            cuda.atomic.add(delta, u, -d)
            x[u] += d  # u occurs once in the worklist: a single writer
            s = d * src_scale[u]
            for e in range(out_offsets[u], out_offsets[u + 1]):
                v = out_targets[e]
                c = arc_coef[e] if has_coef else 1.0
                cuda.atomic.add(delta, v, dst_scale[v] * c * s)


@cuda.jit(cache=True)
def linear_async_push_heavy(heavy, theta, out_offsets, out_targets, arc_coef, has_coef, src_scale,
                            dst_scale, delta, x):
    """:func:`linear_async_push` for the vertices of out-degree >= HEAVY whose |δ| > θ: a block
    each (thread 0 takes δ, all threads push it)."""
    sh = cuda.shared.array(1, float64)
    for i in range(cuda.blockIdx.x, heavy.size, cuda.gridDim.x):
        u = heavy[i]
        if cuda.threadIdx.x == 0:
            d = delta[u]
            if abs(d) > theta:
                cuda.atomic.add(delta, u, -d)
                x[u] += d
                sh[0] = d * src_scale[u]
            else:
                sh[0] = 0.0
        cuda.syncthreads()
        s = sh[0]
        if s != 0.0:
            for e in range(out_offsets[u] + cuda.threadIdx.x, out_offsets[u + 1], HB):
                v = out_targets[e]
                c = arc_coef[e] if has_coef else 1.0
                cuda.atomic.add(delta, v, dst_scale[v] * c * s)
        cuda.syncthreads()


@cuda.jit(cache=True)
def linear_sums(v0, v1, a0, in_offsets, src_buf, coef_buf, has_coef, src_scale, dst_scale, col,
                row, bad, want_col, heavy_apart):
    """Row sums of the coefficient matrix for the targets ``v0 <= v < v1`` into ``row``, their
    contributions to the column sums added atomically into ``col``, and the number of arcs whose
    coefficient is negative or not finite into ``bad[0]`` (the contraction factors γ1 = max col,
    γ∞ = max row of :func:`digraph.dispatch.convergence.linear_contraction`, on the GPU).
    Without ``want_col`` the column sums (one atomic per arc) are left out: the caller knows
    them from the out-degrees.  With ``heavy_apart`` the vertices of in-degree >= HEAVY are left
    to :func:`linear_sums_heavy` (one thread would walk a hub's arcs alone)."""
    v = v0 + cuda.grid(1)
    if v < v1 and not (heavy_apart and in_offsets[v + 1] - in_offsets[v] >= HEAVY):
        acc = 0.0
        for k in range(in_offsets[v], in_offsets[v + 1]):
            u = src_buf[k - a0]
            c = src_scale[u] * (coef_buf[k - a0] if has_coef else 1.0) * dst_scale[v]
            if not (c >= 0.0 and c < math.inf):
                cuda.atomic.add(bad, 0, 1)
            acc += c
            if want_col:
                cuda.atomic.add(col, u, c)
        row[v] = acc


@cuda.jit(cache=True)
def linear_sums_heavy(heavy, a0, in_offsets, src_buf, coef_buf, has_coef, src_scale, dst_scale,
                      col, row, bad, want_col):
    """:func:`linear_sums` for the listed vertices of in-degree >= HEAVY: a block each."""
    buf = cuda.shared.array(HB, float64)
    for i in range(cuda.blockIdx.x, heavy.size, cuda.gridDim.x):
        v = heavy[i]
        acc = 0.0
        for k in range(in_offsets[v] + cuda.threadIdx.x, in_offsets[v + 1], HB):
            u = src_buf[k - a0]
            c = src_scale[u] * (coef_buf[k - a0] if has_coef else 1.0) * dst_scale[v]
            if not (c >= 0.0 and c < math.inf):
                cuda.atomic.add(bad, 0, 1)
            acc += c
            if want_col:
                cuda.atomic.add(col, u, c)
        acc = _block_sum(buf, acc)
        if cuda.threadIdx.x == 0:
            row[v] = acc


@cuda.jit(cache=True)
def linear_residual(in_offsets, in_sources, in_coef, has_coef, src_scale, dst_scale, b, x, r):
    """``r = b + A x − x`` recomputed from the state alone (the certified error bound uses it)."""
    v = cuda.grid(1)
    if v < x.size and in_offsets[v + 1] - in_offsets[v] < HEAVY:
        acc = 0.0
        comp = 0.0
        for k in range(in_offsets[v], in_offsets[v + 1]):
            u = in_sources[k]
            c = in_coef[k] if has_coef else 1.0
            acc, comp = _neumaier(acc, comp, c * src_scale[u] * x[u])
        r[v] = b[v] + dst_scale[v] * (acc + comp) - x[v]


@cuda.jit(cache=True)
def linear_residual_heavy(heavy, in_offsets, in_sources, in_coef, has_coef, src_scale, dst_scale,
                          b, x, r):
    """:func:`linear_residual` for the vertices of in-degree >= HEAVY: a block each."""
    buf = cuda.shared.array(HB, float64)
    for i in range(cuda.blockIdx.x, heavy.size, cuda.gridDim.x):
        v = heavy[i]
        acc = 0.0
        comp = 0.0
        for k in range(in_offsets[v] + cuda.threadIdx.x, in_offsets[v + 1], HB):
            u = in_sources[k]
            c = in_coef[k] if has_coef else 1.0
            acc, comp = _neumaier(acc, comp, c * src_scale[u] * x[u])
        comp = _block_sum(buf, comp)
        acc = _block_sum(buf, acc)
        if cuda.threadIdx.x == 0:
            r[v] = b[v] + dst_scale[v] * (acc + comp) - x[v]


@cuda.jit(cache=True)
def linear_scan(delta, theta, out_degree, x, out):
    """One pass for the round's decisions: ``out`` (zero on entry) receives Σ|δ|, max|δ|, Σx,
    the frontier size (|δ| > θ) and its out-arcs (block sums, then one atomic per block)."""
    buf = cuda.shared.array(HB, float64)
    st = cuda.local.array(4, float64)
    for i in range(4):
        st[i] = 0.0
    u = cuda.grid(1)
    if u < x.size:
        d = abs(delta[u])
        st[0] = d
        st[1] = x[u]
        if d > theta:
            st[2] = 1.0
            st[3] = out_degree[u]
    _flush_stats(buf, st, out)


@cuda.jit(cache=True)
def path_linear_walk(order, nunits, unit_offsets, src, dst, coef, s, x, theta, hub_slot, hubs,
                     use_proxy, unit_sent, unit_pend, cursor):
    """One round of the path engine over the units ``order[:nunits]`` (persistent blocks).

    ``unit_sent[k]``: arcs of unit k transmitted (|d| > θ); ``unit_pend[k]``: the pending mass of
    its arcs when it was walked (sent or not).
    """
    base_sh = cuda.shared.array(1, int64)
    proxy = cuda.shared.array(PROXY_SLOTS, float64)
    tid = cuda.threadIdx.x
    bd = cuda.blockDim.x
    for i in range(tid, PROXY_SLOTS, bd):
        proxy[i] = 0.0
    cuda.syncthreads()
    while True:
        if tid == 0:
            base_sh[0] = cuda.atomic.add(cursor, 0, bd)
        cuda.syncthreads()
        base = base_sh[0]
        cuda.syncthreads()
        if base >= nunits:
            break
        k = base + tid
        if k < nunits:
            unit = order[k]
            sent = 0
            pend = 0.0
            prev_v = -1
            prev_val = 0.0
            for j in range(unit_offsets[unit], unit_offsets[unit + 1]):
                u = src[j]
                if u == prev_v:
                    xu = prev_val  # the value this thread has just written: the path's carry
                else:
                    xu = x[u]
                    if use_proxy:
                        hs = hub_slot[u]
                        if hs >= 0:
                            xu += proxy[hs]
                v = dst[j]
                d = coef[j] * (xu - s[j])
                prev_v = -1
                if abs(d) > theta:
                    s[j] = xu
                    sent += 1
                    hs = hub_slot[v] if use_proxy else -1
                    if hs >= 0:
                        old = cuda.atomic.add(proxy, hs, d)
                        prev_val = x[v] + old + d
                    else:
                        old = cuda.atomic.add(x, v, d)
                        prev_val = old + d
                    prev_v = v
                pend += abs(d)
            unit_sent[unit] = sent
            unit_pend[unit] = pend
    cuda.syncthreads()
    if use_proxy:  # flush the block's proxies to their masters
        for i in range(tid, min(PROXY_SLOTS, hubs.size), bd):
            p = proxy[i]
            if p != 0.0:
                cuda.atomic.add(x, hubs[i], p)


# ============================================================================ monotone (min/max) family

@cuda.jit(cache=True)
def monotone_push(front, xs, out_offsets, out_targets, arc_value, has_value, op, combine, x,
                  mark):
    """Push round from ``front``: each vertex relaxes its out-arcs with ``xs[u]`` (a snapshot for
    BSP's Jacobi rounds, the live state for vertex-async); an improved target is marked."""
    i = cuda.grid(1)
    if i < front.size:
        u = front[i]
        if out_offsets[u + 1] - out_offsets[u] >= HEAVY:
            return
        xu = xs[u]
        for e in range(out_offsets[u], out_offsets[u + 1]):
            v = out_targets[e]
            a = arc_value[e] if has_value else 1.0
            if improve(x, v, relax(op, xu, a), combine):
                mark[v] = 1


@cuda.jit(cache=True)
def monotone_push_heavy(heavy, active, xs, out_offsets, out_targets, arc_value, has_value, op,
                        combine, x, mark):
    """:func:`monotone_push` for the active vertices of out-degree >= HEAVY: a block each."""
    for i in range(cuda.blockIdx.x, heavy.size, cuda.gridDim.x):
        u = heavy[i]
        if active[u]:
            xu = xs[u]
            for e in range(out_offsets[u] + cuda.threadIdx.x, out_offsets[u + 1], HB):
                v = out_targets[e]
                a = arc_value[e] if has_value else 1.0
                if improve(x, v, relax(op, xu, a), combine):
                    mark[v] = 1


@cuda.jit(cache=True)
def monotone_async_push(work, out_offsets, out_targets, arc_value, has_value, op, combine, x,
                        sent):
    """vertex-async pass: each worklist vertex relaxes its out-arcs with its current value and
    records it in ``sent`` (active again while ``x[u] != sent[u]``)."""
    i = cuda.grid(1)
    if i < work.size:
        u = work[i]
        if out_offsets[u + 1] - out_offsets[u] >= HEAVY:
            return
        xu = x[u]
        sent[u] = xu
        for e in range(out_offsets[u], out_offsets[u + 1]):
            v = out_targets[e]
            a = arc_value[e] if has_value else 1.0
            improve(x, v, relax(op, xu, a), combine)


@cuda.jit(cache=True)
def monotone_async_push_heavy(heavy, out_offsets, out_targets, arc_value, has_value, op, combine,
                              x, sent):
    """:func:`monotone_async_push` for the vertices of out-degree >= HEAVY whose value changed
    since they last pushed: a block each."""
    sh = cuda.shared.array(2, float64)
    for i in range(cuda.blockIdx.x, heavy.size, cuda.gridDim.x):
        u = heavy[i]
        if cuda.threadIdx.x == 0:
            xu = x[u]
            sh[0] = xu
            sh[1] = 1.0 if xu != sent[u] else 0.0
            sent[u] = xu
        cuda.syncthreads()
        if sh[1] != 0.0:
            xu = sh[0]
            for e in range(out_offsets[u] + cuda.threadIdx.x, out_offsets[u + 1], HB):
                v = out_targets[e]
                a = arc_value[e] if has_value else 1.0
                improve(x, v, relax(op, xu, a), combine)
        cuda.syncthreads()


@cuda.jit(cache=True)
def path_monotone_walk(order, nunits, unit_offsets, src, dst, value, has_value, op, combine, s, x,
                       unit_sent, cursor):
    """One round of the path engine for a min/max system (persistent blocks, atomic cursor)."""
    base_sh = cuda.shared.array(1, int64)
    tid = cuda.threadIdx.x
    bd = cuda.blockDim.x
    while True:
        if tid == 0:
            base_sh[0] = cuda.atomic.add(cursor, 0, bd)
        cuda.syncthreads()
        base = base_sh[0]
        cuda.syncthreads()
        if base >= nunits:
            break
        k = base + tid
        if k < nunits:
            unit = order[k]
            sent = 0
            prev_v = -1
            prev_val = 0.0
            for j in range(unit_offsets[unit], unit_offsets[unit + 1]):
                u = src[j]
                xu = x[u]
                if u == prev_v:  # what this thread has just written (or better, from another)
                    xu = min(xu, prev_val) if combine == 0 else max(xu, prev_val)
                prev_v = -1
                if xu != s[j]:
                    s[j] = xu
                    sent += 1
                    v = dst[j]
                    c = relax(op, xu, value[j] if has_value else 1.0)
                    improve(x, v, c, combine)
                    prev_v = v
                    prev_val = c
            unit_sent[unit] = sent


# ============================================================================ h-index family (k-core)

@cuda.jit(device=True)
def _hindex(offsets, nbr, est, v, k):
    """Largest h ≤ k with at least h neighbours whose estimate is ≥ h (binary search)."""
    lo = 0
    hi = k
    while lo < hi:
        mid = (lo + hi + 1) // 2
        cnt = 0
        for j in range(offsets[v], offsets[v + 1]):
            if est[nbr[j]] >= mid:
                cnt += 1
                if cnt >= mid:
                    break
        if cnt >= mid:
            lo = mid
        else:
            hi = mid - 1
    return lo


@cuda.jit(cache=True)
def hindex_round(front, offsets, nbr, est_read, est_write, mark):
    """Each frontier vertex recomputes its h-index from ``est_read`` into ``est_write``; a drop marks
    its neighbours (BSP: ``est_read`` is the previous round's copy; vertex-async: the same array)."""
    i = cuda.grid(1)
    if i < front.size:
        v = front[i]
        k = est_read[v]
        if k > 0 and offsets[v + 1] - offsets[v] < HEAVY:
            h = _hindex(offsets, nbr, est_read, v, k)
            if h < k:
                est_write[v] = h
                for j in range(offsets[v], offsets[v + 1]):
                    mark[nbr[j]] = 1


@cuda.jit(cache=True)
def hindex_round_heavy(heavy, infront, offsets, nbr, est_read, est_write, mark):
    """:func:`hindex_round` for the frontier vertices of degree >= HEAVY: a block each, every probe
    of the binary search counted by all of its threads."""
    buf = cuda.shared.array(HB, float64)
    for i in range(cuda.blockIdx.x, heavy.size, cuda.gridDim.x):
        v = heavy[i]
        k = est_read[v]
        if infront[v] and k > 0:  # uniform over the block: every thread reads the same values
            lo = 0
            hi = k
            while lo < hi:
                mid = (lo + hi + 1) // 2
                cnt = 0.0
                for j in range(offsets[v] + cuda.threadIdx.x, offsets[v + 1], HB):
                    if est_read[nbr[j]] >= mid:
                        cnt += 1.0
                cnt = _block_sum(buf, cnt)
                if cnt >= mid:
                    lo = mid
                else:
                    hi = mid - 1
            if lo < k:
                if cuda.threadIdx.x == 0:
                    est_write[v] = lo
                for j in range(offsets[v] + cuda.threadIdx.x, offsets[v + 1], HB):
                    mark[nbr[j]] = 1
        cuda.syncthreads()


# ============================================================================ dense linear rounds

@cuda.jit(device=True, inline=True)
def _pull_in(in_offsets, a0, src_buf, coef_buf, has_coef, src_scale, delta, theta, v, start,
             step):
    """Σ c·src_scale·δ over the in-arcs of ``v`` whose source is in the frontier (|δ| > θ);
    the arcs are read from ``src_buf``/``coef_buf`` at ``in_offsets[v] − a0``."""
    acc = 0.0
    for k in range(in_offsets[v] - a0 + start, in_offsets[v + 1] - a0, step):
        u = src_buf[k]
        d = delta[u]
        if abs(d) > theta:
            c = coef_buf[k] if has_coef else 1.0
            acc += c * src_scale[u] * d
    return acc


@cuda.jit(device=True, inline=True)
def _own(v, delta, delta_new, x, theta, dst_scale, acc, out_degree, st):
    """The target's own part of a fused round: absorb its δ, store the new one, fill ``st`` with
    (|δ'|, x, absorbed, out-arcs of absorbed, |δ'|) for the statistics."""
    d = delta[v]
    keep = d
    absorbed = 0.0
    if abs(d) > theta:
        x[v] += d
        keep = 0.0
        absorbed = 1.0
    dn = keep + dst_scale[v] * acc
    delta_new[v] = dn
    st[0] = abs(dn)
    st[1] = x[v]
    st[2] = absorbed
    st[3] = out_degree[v] * absorbed


@cuda.jit(device=True, inline=True)
def _flush_stats(buf, st, out):
    """Block sums of st[0..3] and the block max of st[0] into ``out`` (one atomic each)."""
    s0 = _block_sum(buf, st[0])
    s1 = _block_sum(buf, st[1])
    s2 = _block_sum(buf, st[2])
    s3 = _block_sum(buf, st[3])
    tid = cuda.threadIdx.x
    buf[tid] = st[0]
    cuda.syncthreads()
    step = HB // 2
    while step > 0:
        if tid < step:
            buf[tid] = max(buf[tid], buf[tid + step])
        cuda.syncthreads()
        step //= 2
    if tid == 0:
        cuda.atomic.add(out, 0, s0)
        cuda.atomic.max(out, 1, buf[0])
        cuda.atomic.add(out, 2, s1)
        cuda.atomic.add(out, 3, s2)
        cuda.atomic.add(out, 4, s3)
    cuda.syncthreads()


@cuda.jit(cache=True)
def linear_dense_batch(v0, v1, a0, in_offsets, src_buf, coef_buf, has_coef, src_scale, dst_scale,
                       delta, delta_new, x, theta, out_degree, out):
    """A whole BSP dense round in one pass (Jacobi, double-buffered δ) for the targets
    ``v0 <= v < v1``: each absorbs its own δ when ``|δ| > θ`` and pulls the frontier's δ over its
    in-arcs into ``delta_new``; ``out`` (zero on entry) receives Σ|δ'|, max|δ'|, Σx, the
    vertices absorbed and their out-arcs.  The in-arcs are read from ``src_buf``/``coef_buf``
    from CSC position ``a0`` on: the whole CSC for a resident graph (``a0 = 0``), a streamed
    batch otherwise.  Vertices of in-degree >= HEAVY are left to
    :func:`linear_dense_batch_heavy`."""
    buf = cuda.shared.array(HB, float64)
    st = cuda.local.array(4, float64)
    for i in range(4):
        st[i] = 0.0
    v = v0 + cuda.grid(1)
    if v < v1 and in_offsets[v + 1] - in_offsets[v] < HEAVY:
        acc = _pull_in(in_offsets, a0, src_buf, coef_buf, has_coef, src_scale, delta, theta, v,
                       0, 1)
        _own(v, delta, delta_new, x, theta, dst_scale, acc, out_degree, st)
    _flush_stats(buf, st, out)


@cuda.jit(cache=True)
def linear_dense_batch_heavy(heavy, a0, in_offsets, src_buf, coef_buf, has_coef, src_scale,
                             dst_scale, delta, delta_new, x, theta, out_degree, out):
    """:func:`linear_dense_batch` for the listed vertices of in-degree >= HEAVY: a block each."""
    buf = cuda.shared.array(HB, float64)
    st = cuda.local.array(4, float64)
    for i in range(cuda.blockIdx.x, heavy.size, cuda.gridDim.x):
        v = heavy[i]
        acc = _pull_in(in_offsets, a0, src_buf, coef_buf, has_coef, src_scale, delta, theta, v,
                       cuda.threadIdx.x, HB)
        acc = _block_sum(buf, acc)
        for j in range(4):
            st[j] = 0.0
        if cuda.threadIdx.x == 0:
            _own(v, delta, delta_new, x, theta, dst_scale, acc, out_degree, st)
        _flush_stats(buf, st, out)


# ============================================================================ sharded linear rounds


@cuda.jit(cache=True)
def linear_frontier(v0, v1, delta, src_scale, theta, send):
    """``send[v] = src_scale[v]·δ[v]`` where ``|δ[v]| > θ``, else 0, for ``v0 <= v < v1``: what
    a pull of the sharded engine reads of a source (:func:`linear_pull`), one random read per arc
    instead of two; it is the only vertex vector exchanged between GPUs in a round."""
    v = v0 + cuda.grid(1)
    if v < v1:
        d = delta[v]
        send[v] = src_scale[v] * d if abs(d) > theta else 0.0


@cuda.jit(device=True, inline=True)
def _sum_sent(src_buf, coef_buf, has_coef, send, a, b, step, acc):
    """``acc`` + Σ c·send[u] over the arcs ``a, a + step, ... < b`` (``send`` is zero outside
    the frontier), added in arc order."""
    for k in range(a, b, step):
        if has_coef:
            acc += coef_buf[k] * send[src_buf[k]]
        else:
            acc += send[src_buf[k]]
    return acc


@cuda.jit(device=True, inline=True)
def _own_add(v, delta, x, theta, dst_scale, acc, out_degree, st):
    """:func:`_own` with δ updated in place and the statistics added into ``st`` (st[4]: the
    max of |δ'|), for a thread that takes several targets."""
    d = delta[v]
    keep = d
    if abs(d) > theta:
        x[v] += d
        keep = 0.0
        st[2] += 1.0
        st[3] += out_degree[v]
    dn = keep + dst_scale[v] * acc
    delta[v] = dn
    st[0] += abs(dn)
    st[1] += x[v]
    st[4] = max(st[4], abs(dn))


@cuda.jit(cache=True)
def linear_pull(v0, v1, in_offsets, mid, part, split, src_buf, coef_buf, has_coef, send,
                dst_scale, delta, x, theta, out_degree, out):
    """:func:`linear_dense_batch` reading the frontier's sends (:func:`linear_frontier`) instead
    of δ and the source factors, with δ updated in place (a target reads only its own δ): each
    target ``v0 <= v < v1`` absorbs its δ when ``|δ| > θ`` and adds ``dst_scale · Σ c·send``.
    Without arc factors the terms are those of :func:`linear_dense_batch` (``1.0 · s · δ ==
    s · δ``).  Threads stride over the targets (a grid smaller than the range takes several
    each and reduces its statistics once per block); vertices of in-degree >= HEAVY are left to
    :func:`linear_pull_heavy`.

    ``split``: each target's in-arcs from its own range come first and were summed by
    :func:`linear_pull_local` into ``part[v - v0]`` while the other ranges' sends were still
    being exchanged; this pass adds the arcs from ``mid[v - v0]`` on (and "in-degree" is the
    count of those)."""
    buf = cuda.shared.array(HB, float64)
    st = cuda.local.array(5, float64)
    for i in range(5):
        st[i] = 0.0
    for v in range(v0 + cuda.grid(1), v1, cuda.gridsize(1)):
        a = in_offsets[v]
        acc = 0.0
        if split:
            a = mid[v - v0]
            acc = part[v - v0]
        if in_offsets[v + 1] - a < HEAVY:
            acc = _sum_sent(src_buf, coef_buf, has_coef, send, a, in_offsets[v + 1], 1, acc)
            _own_add(v, delta, x, theta, dst_scale, acc, out_degree, st)
    s0 = _block_sum(buf, st[0])
    s1 = _block_sum(buf, st[1])
    s2 = _block_sum(buf, st[2])
    s3 = _block_sum(buf, st[3])
    tid = cuda.threadIdx.x
    buf[tid] = st[4]
    cuda.syncthreads()
    step = HB // 2
    while step > 0:
        if tid < step:
            buf[tid] = max(buf[tid], buf[tid + step])
        cuda.syncthreads()
        step //= 2
    if tid == 0:
        cuda.atomic.add(out, 0, s0)
        cuda.atomic.max(out, 1, buf[0])
        cuda.atomic.add(out, 2, s1)
        cuda.atomic.add(out, 3, s2)
        cuda.atomic.add(out, 4, s3)


@cuda.jit(cache=True)
def linear_pull_heavy(heavy, v0, in_offsets, mid, part, split, src_buf, coef_buf, has_coef, send,
                      dst_scale, delta, x, theta, out_degree, out):
    """:func:`linear_pull` for the listed vertices of in-degree >= HEAVY: a block each."""
    buf = cuda.shared.array(HB, float64)
    st = cuda.local.array(4, float64)
    for i in range(cuda.blockIdx.x, heavy.size, cuda.gridDim.x):
        v = heavy[i]
        a = mid[v - v0] if split else in_offsets[v]
        acc = _sum_sent(src_buf, coef_buf, has_coef, send, a + cuda.threadIdx.x,
                        in_offsets[v + 1], HB, 0.0)
        acc = _block_sum(buf, acc)
        if split:
            acc = part[v - v0] + acc
        for j in range(4):
            st[j] = 0.0
        if cuda.threadIdx.x == 0:
            _own(v, delta, delta, x, theta, dst_scale, acc, out_degree, st)
        _flush_stats(buf, st, out)


@cuda.jit(cache=True)
def linear_pull_local(v0, v1, in_offsets, mid, src_buf, coef_buf, has_coef, send, part):
    """``part[v - v0]`` = Σ c·send over the in-arcs of ``v`` from its own range ``[v0, v1)``:
    the arcs ``in_offsets[v] .. mid[v - v0]``, which read only sends this GPU wrote, so the
    sum runs while the exchange brings the other ranges' (:func:`linear_pull` with ``split``
    adds the rest).  Vertices with >= HEAVY such arcs are left to
    :func:`linear_pull_local_heavy`."""
    for v in range(v0 + cuda.grid(1), v1, cuda.gridsize(1)):
        a = in_offsets[v]
        b = mid[v - v0]
        if b - a < HEAVY:
            part[v - v0] = _sum_sent(src_buf, coef_buf, has_coef, send, a, b, 1, 0.0)


@cuda.jit(cache=True)
def linear_pull_local_heavy(heavy, v0, in_offsets, mid, src_buf, coef_buf, has_coef, send, part):
    """:func:`linear_pull_local` for the listed vertices with >= HEAVY own-range arcs."""
    buf = cuda.shared.array(HB, float64)
    for i in range(cuda.blockIdx.x, heavy.size, cuda.gridDim.x):
        v = heavy[i]
        acc = _sum_sent(src_buf, coef_buf, has_coef, send, in_offsets[v] + cuda.threadIdx.x,
                        mid[v - v0], HB, 0.0)
        acc = _block_sum(buf, acc)
        if cuda.threadIdx.x == 0:
            part[v - v0] = acc
