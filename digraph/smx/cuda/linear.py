"""The linear (sum) family's CUDA kernels on one GPU (:mod:`digraph.smx.cuda.kernels` re-exports
them): the BSP sparse round (take, push), the vertex-async push, the contraction sums of the
coefficient matrix, the residual ``b + A x − x`` recomputed from the state, the scan of a round's
statistics, and the fused dense round (:func:`linear_dense_batch`, resident or streamed), each
with its ``*_heavy`` companion that gives a vertex of degree >= HEAVY a whole block.  A vertex's
arc loop is one device function (:func:`push_arcs`, :func:`row_sum`, :func:`residual_in`,
:func:`pull_in`) shared by both kernel shapes: one thread walks the arcs with step 1, a block's
threads stride over them with step ``HB`` (the block size of every ``*_heavy`` launch)."""


import math

from numba import cuda, float64

from .common import HB, HEAVY, block_max, block_sum, neumaier

__all__ = []


# ============================================================================ linear (sum) family

@cuda.jit(device=True, inline=True)
def push_arcs(out_targets, arc_coef, has_coef, dst_scale, delta, s, a, b, step):
    """Add ``dst_scale[v]·c·s`` to ``delta[v]`` (atomic) over the out-arcs ``a, a + step, ... < b``
    (a thread alone: step 1; a block's thread: its first arc and step ``HB``)."""
    for e in range(a, b, step):
        v = out_targets[e]
        c = arc_coef[e] if has_coef else 1.0
        cuda.atomic.add(delta, v, dst_scale[v] * c * s)


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
            push_arcs(out_targets, arc_coef, has_coef, dst_scale, delta, s, out_offsets[u],
                       out_offsets[u + 1], 1)


@cuda.jit(cache=True)
def linear_push_heavy(heavy, send, out_offsets, out_targets, arc_coef, has_coef, dst_scale,
                      delta):
    """:func:`linear_push` for the vertices of out-degree >= HEAVY with a send: a block each."""
    for i in range(cuda.blockIdx.x, heavy.size, cuda.gridDim.x):
        u = heavy[i]
        s = send[u]
        if s != 0.0:
            push_arcs(out_targets, arc_coef, has_coef, dst_scale, delta, s,
                       out_offsets[u] + cuda.threadIdx.x, out_offsets[u + 1], HB)
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
            push_arcs(out_targets, arc_coef, has_coef, dst_scale, delta, s, out_offsets[u],
                       out_offsets[u + 1], 1)


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
            push_arcs(out_targets, arc_coef, has_coef, dst_scale, delta, s,
                       out_offsets[u] + cuda.threadIdx.x, out_offsets[u + 1], HB)
        cuda.syncthreads()


@cuda.jit(device=True, inline=True)
def row_sum(v, a0, src_buf, coef_buf, has_coef, src_scale, dst_scale, col, bad, want_col, a, b,
             step):
    """Σ of the coefficients over the in-arcs ``a, a + step, ... < b`` of ``v`` (read from
    ``src_buf``/``coef_buf`` at ``k − a0``), each added atomically into ``col`` at its source
    when ``want_col``; an arc whose coefficient is negative or not finite counts in ``bad[0]``."""
    acc = 0.0
    for k in range(a, b, step):
        u = src_buf[k - a0]
        c = src_scale[u] * (coef_buf[k - a0] if has_coef else 1.0) * dst_scale[v]
        if not (c >= 0.0 and c < math.inf):
            cuda.atomic.add(bad, 0, 1)
        acc += c
        if want_col:
            cuda.atomic.add(col, u, c)
    return acc


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
        row[v] = row_sum(v, a0, src_buf, coef_buf, has_coef, src_scale, dst_scale, col, bad,
                          want_col, in_offsets[v], in_offsets[v + 1], 1)


@cuda.jit(cache=True)
def linear_sums_heavy(heavy, a0, in_offsets, src_buf, coef_buf, has_coef, src_scale, dst_scale,
                      col, row, bad, want_col):
    """:func:`linear_sums` for the listed vertices of in-degree >= HEAVY: a block each."""
    buf = cuda.shared.array(HB, float64)
    for i in range(cuda.blockIdx.x, heavy.size, cuda.gridDim.x):
        v = heavy[i]
        acc = row_sum(v, a0, src_buf, coef_buf, has_coef, src_scale, dst_scale, col, bad,
                       want_col, in_offsets[v] + cuda.threadIdx.x, in_offsets[v + 1], HB)
        acc = block_sum(buf, acc)
        if cuda.threadIdx.x == 0:
            row[v] = acc


@cuda.jit(device=True, inline=True)
def residual_in(in_sources, in_coef, has_coef, src_scale, x, a, b, step):
    """(sum, compensation) of ``c·src_scale[u]·x[u]`` over the in-arcs ``a, a + step, ... < b``
    (Neumaier's compensated summation, in arc order)."""
    acc = 0.0
    comp = 0.0
    for k in range(a, b, step):
        u = in_sources[k]
        c = in_coef[k] if has_coef else 1.0
        acc, comp = neumaier(acc, comp, c * src_scale[u] * x[u])
    return acc, comp


@cuda.jit(cache=True)
def linear_residual(in_offsets, in_sources, in_coef, has_coef, src_scale, dst_scale, b, x, r):
    """``r = b + A x − x`` recomputed from the state alone (the certified error bound uses it)."""
    v = cuda.grid(1)
    if v < x.size and in_offsets[v + 1] - in_offsets[v] < HEAVY:
        acc, comp = residual_in(in_sources, in_coef, has_coef, src_scale, x, in_offsets[v],
                                 in_offsets[v + 1], 1)
        r[v] = b[v] + dst_scale[v] * (acc + comp) - x[v]


@cuda.jit(cache=True)
def linear_residual_heavy(heavy, in_offsets, in_sources, in_coef, has_coef, src_scale, dst_scale,
                          b, x, r):
    """:func:`linear_residual` for the vertices of in-degree >= HEAVY: a block each."""
    buf = cuda.shared.array(HB, float64)
    for i in range(cuda.blockIdx.x, heavy.size, cuda.gridDim.x):
        v = heavy[i]
        acc, comp = residual_in(in_sources, in_coef, has_coef, src_scale, x,
                                 in_offsets[v] + cuda.threadIdx.x, in_offsets[v + 1], HB)
        comp = block_sum(buf, comp)
        acc = block_sum(buf, acc)
        if cuda.threadIdx.x == 0:
            r[v] = b[v] + dst_scale[v] * (acc + comp) - x[v]


@cuda.jit(cache=True)
def linear_residual_norms(r, x, out):
    """The certificate's five scalars in one pass (grid-stride: a grid of a few blocks, which the
    simulator runs in seconds where a thread a vertex took minutes): ``out`` (zero on entry)
    receives Σ|r|, max|r|, Σx, Σ|x| and max|x| (block sums and maxima, one atomic each a
    block): one launch, where a reduction each would cost a launch each, which dominates on a
    small graph."""
    buf = cuda.shared.array(HB, float64)
    r1 = 0.0
    rmax = 0.0
    sx = 0.0
    ax = 0.0
    xmax = 0.0
    for v in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        a = abs(r[v])
        r1 += a
        rmax = max(rmax, a)
        xv = x[v]
        sx += xv
        ax += abs(xv)
        xmax = max(xmax, abs(xv))
    r1 = block_sum(buf, r1)
    rmax = block_max(buf, rmax)
    sx = block_sum(buf, sx)
    ax = block_sum(buf, ax)
    xmax = block_max(buf, xmax)
    if cuda.threadIdx.x == 0:
        cuda.atomic.add(out, 0, r1)
        cuda.atomic.max(out, 1, rmax)
        cuda.atomic.add(out, 2, sx)
        cuda.atomic.add(out, 3, ax)
        cuda.atomic.max(out, 4, xmax)


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
    flush_stats(buf, st, out, 0)


# ============================================================================ dense linear rounds

@cuda.jit(device=True, inline=True)
def pull_in(in_offsets, a0, src_buf, coef_buf, has_coef, src_scale, delta, theta, v, start,
             step):
    """Σ c·src_scale·δ over the in-arcs of ``v`` whose source is in the frontier (|δ| > θ),
    from its ``start``-th arc with step ``step`` (a thread alone: 0 and 1; a block's thread: its
    index and ``HB``); the arcs are read from ``src_buf``/``coef_buf`` at ``in_offsets[v] − a0``."""
    acc = 0.0
    for k in range(in_offsets[v] - a0 + start, in_offsets[v + 1] - a0, step):
        u = src_buf[k]
        d = delta[u]
        if abs(d) > theta:
            c = coef_buf[k] if has_coef else 1.0
            acc += c * src_scale[u] * d
    return acc


@cuda.jit(device=True, inline=True)
def absorb(v, delta, delta_new, x, theta, dst_scale, acc):
    """The target's own part of a dense round: absorb its δ into ``x`` when ``|δ| > θ`` and store
    ``δ' = (δ kept) + dst_scale·acc`` into ``delta_new`` (``delta`` itself for a round in place);
    returns (δ', 1.0 if absorbed else 0.0)."""
    d = delta[v]
    keep = d
    absorbed = 0.0
    if abs(d) > theta:
        x[v] += d
        keep = 0.0
        absorbed = 1.0
    dn = keep + dst_scale[v] * acc
    delta_new[v] = dn
    return dn, absorbed


@cuda.jit(device=True, inline=True)
def own(v, delta, delta_new, x, theta, dst_scale, acc, out_degree, st):
    """:func:`absorb`, then ``st`` = (|δ'|, x, absorbed, out-arcs of absorbed) for the
    statistics (:func:`flush_stats` with ``imax`` 0)."""
    dn, absorbed = absorb(v, delta, delta_new, x, theta, dst_scale, acc)
    st[0] = abs(dn)
    st[1] = x[v]
    st[2] = absorbed
    st[3] = out_degree[v] * absorbed


@cuda.jit(device=True, inline=True)
def flush_stats(buf, st, out, imax):
    """Block sums of st[0..3] and the block max of st[imax] into ``out`` (one atomic each)."""
    s0 = block_sum(buf, st[0])
    s1 = block_sum(buf, st[1])
    s2 = block_sum(buf, st[2])
    s3 = block_sum(buf, st[3])
    top = block_max(buf, st[imax])
    if cuda.threadIdx.x == 0:
        cuda.atomic.add(out, 0, s0)
        cuda.atomic.max(out, 1, top)
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
        acc = pull_in(in_offsets, a0, src_buf, coef_buf, has_coef, src_scale, delta, theta, v,
                       0, 1)
        own(v, delta, delta_new, x, theta, dst_scale, acc, out_degree, st)
    flush_stats(buf, st, out, 0)


@cuda.jit(cache=True)
def linear_dense_batch_heavy(heavy, a0, in_offsets, src_buf, coef_buf, has_coef, src_scale,
                             dst_scale, delta, delta_new, x, theta, out_degree, out):
    """:func:`linear_dense_batch` for the listed vertices of in-degree >= HEAVY: a block each."""
    buf = cuda.shared.array(HB, float64)
    st = cuda.local.array(4, float64)
    for i in range(cuda.blockIdx.x, heavy.size, cuda.gridDim.x):
        v = heavy[i]
        acc = pull_in(in_offsets, a0, src_buf, coef_buf, has_coef, src_scale, delta, theta, v,
                       cuda.threadIdx.x, HB)
        acc = block_sum(buf, acc)
        for j in range(4):
            st[j] = 0.0
        if cuda.threadIdx.x == 0:
            own(v, delta, delta_new, x, theta, dst_scale, acc, out_degree, st)
        flush_stats(buf, st, out, 0)
