"""CUDA kernels of the Google-matrix power iteration (``mode="power"`` on a GPU,
:mod:`digraph.dispatch.engines.power.gpu`).

One round of ``x ← A x + (1 − Σ A x) v`` in two launches and one read-back (Page et al. 1999;
Langville and Meyer, *Google's PageRank and Beyond*, 2006, §4.5):

* :func:`power_pull` (and :func:`power_pull_heavy` for vertices of in-degree ``>= HEAVY``):
  ``y[v] = dst_scale[v] · Σ_{u→v} coef · z[u]`` with ``z = src_scale ∘ x``, a group of ``G``
  threads per vertex (coalesced reads of ``in_sources``, a shuffle reduction), and the block sums
  of ``y`` and of ``(in-degree + 3) · y`` (the rounding bound of the pull) added to ``acc[0:2]``;
* :func:`power_teleport`: ``y += (1 − acc[0]) · v``, ``z = src_scale ∘ y`` for the next round,
  and the block sums of ``|y − x|`` and ``y`` added to ``acc[2:4]``; it also zeroes the other
  accumulator (``nxt``) for the next round, so no launch is spent on it.

The arcs carry no values unless the system has arc factors (``has_coef``): an unweighted round
reads 4 bytes per arc where a CSR SpMV reads 12 (a 4-byte index and an 8-byte value).

The power iteration of the affine map ``x ← b + A x`` (Jacobi; systems that are not normalised,
:mod:`digraph.dispatch.engines.power.gpu_affine`) pulls the same way and then runs
:func:`power_affine` instead of the teleport.
"""

from numba import cuda, float64

from .common import SIM, HB, HEAVY, block_sum

__all__ = ["power_pull", "power_pull_list", "power_pull_heavy", "power_scale_sums",
           "power_teleport", "power_affine", "power_teleport_given", "power_teleport_rows",
           "gather_at"]


if SIM:  # the simulator has no warp shuffles: a shared-memory tree over each group
    @cuda.jit(device=True, inline=True)
    def group_sum(gbuf, s, group):
        tid = cuda.threadIdx.x
        gbuf[tid] = s
        cuda.syncthreads()
        off = group // 2
        while off > 0:
            if tid % group < off:
                gbuf[tid] += gbuf[tid + off]
            cuda.syncthreads()
            off //= 2
        out = gbuf[tid - tid % group]
        cuda.syncthreads()
        return out
else:
    @cuda.jit(device=True, inline=True)
    def group_sum(gbuf, s, group):
        off = group // 2
        while off > 0:
            s += cuda.shfl_xor_sync(0xFFFFFFFF, s, off)
            off //= 2
        return s


@cuda.jit(device=True, inline=True)
def _in_sum(in_offsets, in_sources, in_coef, has_coef, z, v, start, step):
    """Σ coef·z[u] over ``v``'s in-arcs from ``start`` (0 … step−1) on, every ``step``-th one."""
    s = 0.0
    lo = in_offsets[v]
    for k in range(lo + start, in_offsets[v + 1], step):
        if has_coef:
            s += in_coef[k] * z[in_sources[k]]
        else:
            s += z[in_sources[k]]
    return s


@cuda.jit(device=True, inline=True)
def _flush(buf, val, err, acc):
    """The block's sums of ``val`` and ``err`` added to acc[0], acc[1] (one atomic each)."""
    tot = block_sum(buf, val)
    e = block_sum(buf, err)
    if cuda.threadIdx.x == 0:
        cuda.atomic.add(acc, 0, tot)
        cuda.atomic.add(acc, 1, e)


@cuda.jit(cache=True)
def power_pull(group, in_offsets, in_sources, in_coef, has_coef, z, dst_scale, y, acc):
    """``y`` over the vertices of in-degree < HEAVY, ``group`` threads each (a power of two up to
    32; blocks of HB threads).  The grid strides over the vertices (a few blocks per
    multiprocessor), and each block adds its statistics to ``acc`` once."""
    buf = cuda.shared.array(HB, float64)
    n = y.size
    total = n * group
    total += (32 - total % 32) % 32  # whole warps: every lane takes part in the shuffles
    val = 0.0
    err = 0.0
    for t in range(cuda.grid(1), total, cuda.gridsize(1)):
        v = t // group
        lane = t % group
        s = 0.0
        deg = 0
        light = False
        if v < n:
            deg = in_offsets[v + 1] - in_offsets[v]
            light = deg < HEAVY
            if light:
                s = _in_sum(in_offsets, in_sources, in_coef, has_coef, z, v, lane, group)
        s = group_sum(buf, s, group)
        if light and lane == 0:
            yv = dst_scale[v] * s
            y[v] = yv
            val += yv
            err += (deg + 3) * yv
    _flush(buf, val, err, acc)


@cuda.jit(cache=True)
def power_pull_list(group, verts, in_offsets, in_sources, in_coef, has_coef, z, dst_scale, y, acc):
    """:func:`power_pull` over the listed vertices only (one in-degree class), ``group`` threads
    each, whatever their in-degree."""
    buf = cuda.shared.array(HB, float64)
    nv = verts.size
    total = nv * group
    total += (32 - total % 32) % 32  # whole warps: every lane takes part in the shuffles
    val = 0.0
    err = 0.0
    for t in range(cuda.grid(1), total, cuda.gridsize(1)):
        i = t // group
        lane = t % group
        s = 0.0
        v = 0
        deg = 0
        if i < nv:
            v = verts[i]
            deg = in_offsets[v + 1] - in_offsets[v]
            s = _in_sum(in_offsets, in_sources, in_coef, has_coef, z, v, lane, group)
        s = group_sum(buf, s, group)
        if i < nv and lane == 0:
            yv = dst_scale[v] * s
            y[v] = yv
            val += yv
            err += (deg + 3) * yv
    _flush(buf, val, err, acc)


@cuda.jit(cache=True)
def power_pull_heavy(heavy, in_offsets, in_sources, in_coef, has_coef, z, dst_scale, y, acc):
    """``y`` of the listed vertices (in-degree >= HEAVY), a block each (grid-strided)."""
    buf = cuda.shared.array(HB, float64)
    for i in range(cuda.blockIdx.x, heavy.size, cuda.gridDim.x):
        v = heavy[i]
        s = block_sum(buf, _in_sum(in_offsets, in_sources, in_coef, has_coef, z, v,
                                    cuda.threadIdx.x, HB))
        if cuda.threadIdx.x == 0:
            val = dst_scale[v] * s
            y[v] = val
            cuda.atomic.add(acc, 0, val)
            cuda.atomic.add(acc, 1, (in_offsets[v + 1] - in_offsets[v] + 3) * val)


@cuda.jit(cache=True)
def power_scale_sums(y, dst_scale, in_offsets, acc):
    """After a library SpMV ``y = A z``: ``y ∘= dst_scale``, and the block sums of ``y`` and of
    ``(in-degree + 3) · y`` (the pull's rounding bound, as :func:`power_pull`) added to
    ``acc[0:2]``."""
    buf = cuda.shared.array(HB, float64)
    val = 0.0
    err = 0.0
    for v in range(cuda.grid(1), y.size, cuda.gridsize(1)):
        yv = dst_scale[v] * y[v]
        y[v] = yv
        val += yv
        err += (in_offsets[v + 1] - in_offsets[v] + 3) * yv
    _flush(buf, val, err, acc)


@cuda.jit(cache=True)
def power_teleport(y, tele, x, src_scale, z, acc, nxt):
    """``y += (1 − acc[0]) · tele``, ``z = src_scale ∘ y``; Σ|y − x| and Σy into acc[2], acc[3];
    ``nxt`` zeroed (HB threads a block, the grid striding over the vertices)."""
    buf = cuda.shared.array(HB, float64)
    _teleport(buf, 1.0 - acc[0], y, tele, x, src_scale, z, acc, nxt)


@cuda.jit(cache=True)
def power_teleport_given(c, y, tele, x, src_scale, z, acc, nxt):
    """:func:`power_teleport` with the teleport mass ``c`` given (several GPUs: ``1 − Σ_g s_g``
    of every shard's pull, summed on the host)."""
    buf = cuda.shared.array(HB, float64)
    _teleport(buf, c, y, tele, x, src_scale, z, acc, nxt)


@cuda.jit(cache=True)
def power_teleport_rows(rows, y, tele, x, src_scale, z, acc, nxt):
    """:func:`power_teleport` with the teleport mass ``c = 1 − Σ_g rows[g, 0]``: every GPU's pull
    sum, copied into the table ``rows`` on each GPU (the sharded rounds queued with no host
    wait, :mod:`digraph.dispatch.engines.power.gpus_queued`)."""
    buf = cuda.shared.array(HB, float64)
    s = 0.0
    for g in range(rows.shape[0]):
        s += rows[g, 0]
    _teleport(buf, 1.0 - s, y, tele, x, src_scale, z, acc, nxt)


@cuda.jit(device=True, inline=True)
def _teleport(buf, c, y, tele, x, src_scale, z, acc, nxt):
    i0 = cuda.grid(1)
    for i in range(i0, nxt.size, cuda.gridsize(1)):  # Anderson's slots too (cuda_anderson)
        nxt[i] = 0.0
    d = 0.0
    ys = 0.0
    for i in range(i0, y.size, cuda.gridsize(1)):
        yi = y[i] + c * tele[i]
        y[i] = yi
        z[i] = src_scale[i] * yi
        d += abs(yi - x[i])
        ys += yi
    d = block_sum(buf, d)
    ys = block_sum(buf, ys)
    if cuda.threadIdx.x == 0:
        cuda.atomic.add(acc, 2, d)
        cuda.atomic.add(acc, 3, ys)


@cuda.jit(cache=True)
def power_affine(y, b, x, has_src, src_scale, z, in_offsets, has_w, zhat, acc, nxt):
    """After the pull ``y = A x``: ``y += b`` and, with ``has_src``, ``z = src_scale ∘ y`` (the
    next pull's input; without, the next pull reads ``y`` itself); into ``acc[2]`` the block sums
    of ``w_v |y_v − x_v|`` and into ``acc[3]`` those of ``ŵ_v (in-degree_v + 4) y_v`` (the
    rounding bound of the round's ``y_v``), ``w = ẑ − 1`` and ``ŵ = ẑ`` with ``has_w``, both 1
    without; ``nxt`` zeroed (HB threads a block, the grid striding over the vertices)."""
    buf = cuda.shared.array(HB, float64)
    i0 = cuda.grid(1)
    for i in range(i0, nxt.size, cuda.gridsize(1)):
        nxt[i] = 0.0
    d = 0.0
    r = 0.0
    for i in range(i0, y.size, cuda.gridsize(1)):
        yi = y[i] + b[i]
        y[i] = yi
        if has_src:
            z[i] = src_scale[i] * yi
        a = abs(yi - x[i])
        q = (in_offsets[i + 1] - in_offsets[i] + 4) * yi
        if has_w:
            w = zhat[i]
            a *= w - 1.0
            q *= w
        d += a
        r += q
    d = block_sum(buf, d)
    r = block_sum(buf, r)
    if cuda.threadIdx.x == 0:
        cuda.atomic.add(acc, 2, d)
        cuda.atomic.add(acc, 3, r)


@cuda.jit(cache=True)
def gather_at(src, idx, out):
    """``out[i] = src[idx[i]]`` (several GPUs: the entries of a range of ``z`` another GPU reads,
    written into its compact ``z`` through peer access, or packed to be copied there)."""
    for i in range(cuda.grid(1), idx.size, cuda.gridsize(1)):
        out[i] = src[idx[i]]

