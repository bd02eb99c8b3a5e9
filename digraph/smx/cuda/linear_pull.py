"""The sharded engine's linear rounds as CUDA kernels (:mod:`digraph.smx.cuda.kernels` re-exports
them): the frontier's sends (:func:`linear_frontier`, the one vertex vector exchanged between GPUs
in a round), the dense pull that reads them with δ updated in place (:func:`linear_pull`), and
the part of that pull over a target's own range that runs while the exchange brings the others'
(:func:`linear_pull_local`), each with its ``*_heavy`` companion.  A target's arc loop is one
device function, :func:`sum_sent`, shared by all four (a thread alone: step 1; a block's
threads: step ``HB``); the target's own part and the statistics are those of the one-GPU dense
round (:func:`~.linear.absorb`, :func:`~.linear.own`,
:func:`~.linear.flush_stats`)."""


from numba import cuda, float64

from .common import HB, HEAVY, block_sum
from .linear import absorb, flush_stats, own

__all__ = []


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
def sum_sent(src_buf, coef_buf, has_coef, send, a, b, step, acc):
    """``acc`` + Σ c·send[u] over the arcs ``a, a + step, ... < b`` (``send`` is zero outside
    the frontier), added in arc order."""
    for k in range(a, b, step):
        if has_coef:
            acc += coef_buf[k] * send[src_buf[k]]
        else:
            acc += send[src_buf[k]]
    return acc


@cuda.jit(device=True, inline=True)
def own_add(v, delta, x, theta, dst_scale, acc, out_degree, st):
    """:func:`~.linear.absorb` with δ updated in place and the statistics
    added into ``st`` (st[4]: the max of |δ'|), for a thread that takes several targets."""
    dn, absorbed = absorb(v, delta, delta, x, theta, dst_scale, acc)
    if absorbed != 0.0:
        st[2] += 1.0
        st[3] += out_degree[v]
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
            acc = sum_sent(src_buf, coef_buf, has_coef, send, a, in_offsets[v + 1], 1, acc)
            own_add(v, delta, x, theta, dst_scale, acc, out_degree, st)
    flush_stats(buf, st, out, 4)


@cuda.jit(cache=True)
def linear_pull_heavy(heavy, v0, in_offsets, mid, part, split, src_buf, coef_buf, has_coef, send,
                      dst_scale, delta, x, theta, out_degree, out):
    """:func:`linear_pull` for the listed vertices of in-degree >= HEAVY: a block each."""
    buf = cuda.shared.array(HB, float64)
    st = cuda.local.array(4, float64)
    for i in range(cuda.blockIdx.x, heavy.size, cuda.gridDim.x):
        v = heavy[i]
        a = mid[v - v0] if split else in_offsets[v]
        acc = sum_sent(src_buf, coef_buf, has_coef, send, a + cuda.threadIdx.x,
                        in_offsets[v + 1], HB, 0.0)
        acc = block_sum(buf, acc)
        if split:
            acc = part[v - v0] + acc
        for j in range(4):
            st[j] = 0.0
        if cuda.threadIdx.x == 0:
            own(v, delta, delta, x, theta, dst_scale, acc, out_degree, st)
        flush_stats(buf, st, out, 0)


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
            part[v - v0] = sum_sent(src_buf, coef_buf, has_coef, send, a, b, 1, 0.0)


@cuda.jit(cache=True)
def linear_pull_local_heavy(heavy, v0, in_offsets, mid, src_buf, coef_buf, has_coef, send, part):
    """:func:`linear_pull_local` for the listed vertices with >= HEAVY own-range arcs."""
    buf = cuda.shared.array(HB, float64)
    for i in range(cuda.blockIdx.x, heavy.size, cuda.gridDim.x):
        v = heavy[i]
        acc = sum_sent(src_buf, coef_buf, has_coef, send, in_offsets[v] + cuda.threadIdx.x,
                        mid[v - v0], HB, 0.0)
        acc = block_sum(buf, acc)
        if cuda.threadIdx.x == 0:
            part[v - v0] = acc
