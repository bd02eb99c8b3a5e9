"""``bsp`` on a linear system whose arcs do not fit on the GPU: :func:`linear_streamed` streams the
in-arcs from pinned host memory in batches of target vertices (:func:`_batches`), two CUDA
streams overlapping the copy of one batch with the pull of the previous one, and certifies the
answer on the host."""

import time

import numpy as np

from ... import driver
from ...convergence import linear_contraction
from ...systems import linear_factors
from ...runtime.cuda.common import (count_dense_round, hb as _hb, index_dtype as _index_dtype,
                                    kernels as _kernels)

__all__ = []


def _batches(in_offsets, batch_arcs):
    """(first vertex, end vertex, first arc, end arc) of consecutive target ranges with at most
    ``batch_arcs`` in-arcs each (a vertex with more is a batch alone)."""
    n = in_offsets.size - 1
    out = []
    v = 0
    while v < n:
        a0 = int(in_offsets[v])
        w = int(np.searchsorted(in_offsets, a0 + batch_arcs, side="right")) - 1
        w = min(max(w, v + 1), n)
        out.append((v, w, a0, int(in_offsets[w])))
        v = w
    return out


def linear_streamed(be, graph, sys, tol, max_iter, stats, batch_arcs):
    """BSP with the in-arcs streamed from pinned host memory in batches of target vertices, two
    CUDA streams overlapping the copy of one batch with the pull of the previous one (DiGraph
    §3.2.2), for graphs whose arcs do not fit on the GPU.  Every round is dense; the answer is
    certified on the host from the residual recomputed there."""
    from ...convergence import certified_bound
    K = _kernels()
    xp = be.xp
    n, m = graph.num_vertices, graph.num_arcs
    gammas = linear_contraction(graph, sys)
    src, dst, has, arc = linear_factors(graph, sys)
    it = _index_dtype(max(n, m))
    in_off_h = np.asarray(graph.in_offsets, dtype=np.int64)
    batches = _batches(in_off_h, batch_arcs)
    cap = max(b[3] - b[2] for b in batches) if batches else 1
    if be.sim:
        host_src = np.asarray(graph.in_sources, dtype=it)
        host_coef = arc[graph.in_arcs] if has else np.zeros(1)
        streams = [None, None]
    else:
        import cupyx
        host_src = cupyx.empty_pinned(m, dtype=it)
        host_src[...] = graph.in_sources
        host_coef = cupyx.empty_pinned(m if has else 1, dtype=np.float64)
        if has:
            host_coef[...] = arc[graph.in_arcs]
        streams = [xp.cuda.Stream(non_blocking=True) for _ in range(2)]
    in_off = be.put(in_off_h)
    from ....smx.cuda.common import HEAVY
    heavy_h = np.flatnonzero(np.diff(in_off_h) >= HEAVY)
    heavy = be.put(heavy_h, np.int64)
    heavy_at = np.searchsorted(heavy_h, [b[0] for b in batches] + [n])  # heavy of batch k
    bufs = [(be.keep(xp.empty(cap, it)), be.keep(xp.empty(cap if has else 1, np.float64)))
            for _ in range(2)]
    src_scale, dst_scale = be.put(src), be.put(dst)
    out_degree = be.put(graph.out_degree, np.int64)
    x = be.keep(xp.zeros(n, np.float64))
    delta = be.keep(be.put(sys.b, np.float64))
    delta_new = be.keep(xp.empty(n, np.float64))
    scan = be.keep(xp.zeros(5, np.float64))
    stats["streamed_batches"] = len(batches)
    mag = np.abs(np.asarray(sys.b, dtype=np.float64))
    rvec = np.empty(n, np.float64)
    # the statistics of the state (the first: x = 0, δ = b) and the two δ buffers
    st = {"r1": float(mag.sum()), "rmax": float(mag.max()) if n else 0.0, "sx": 0.0,
          "delta": delta, "delta_new": delta_new}

    class Streamed:
        def scan(self, theta):
            return st["r1"], st["rmax"], st["sx"], int(st["r1"] != 0.0)

        def certify(self):
            xh = be.get(x)
            bound, r1, floor = certified_bound(graph, sys, xh, gammas, rvec)
            st["delta"][...] = xp.asarray(rvec) if not be.sim else rvec  # carry on from it
            st.update(r1=r1, rmax=float(np.abs(rvec).max()) if n else 0.0, sx=float(xh.sum()))
            return bound, r1, floor

        def step(self, theta):
            delta, delta_new = st["delta"], st["delta_new"]
            scan[...] = 0.0
            be.sync()
            t0 = time.perf_counter()
            for k, (v0, v1, a0, a1) in enumerate(batches):
                sb, cb = bufs[k % 2]
                stream = streams[k % 2]
                h0, h1 = int(heavy_at[k]), int(heavy_at[k + 1])
                hv = heavy[h0:h1]
                hgrid = max(1, min(h1 - h0, 65535))
                if be.sim:
                    sb[:a1 - a0] = host_src[a0:a1]
                    if has:
                        cb[:a1 - a0] = host_coef[a0:a1]
                else:
                    sb[:a1 - a0].set(host_src[a0:a1], stream=stream)
                    if has:
                        cb[:a1 - a0].set(host_coef[a0:a1], stream=stream)
                rest = (a0, in_off, sb, cb, has, src_scale, dst_scale, delta, delta_new, x, theta,
                        out_degree, scan)
                be.launch(K.linear_dense_batch, be.grid_hb(v1 - v0), _hb(), v0, v1, *rest,
                          stream=stream)
                if h1 > h0:
                    be.launch(K.linear_dense_batch_heavy, hgrid, _hb(), hv, *rest, stream=stream)
                stats["bytes_h2d"] += (a1 - a0) * (host_src.itemsize + (8 if has else 0))
            be.sync()
            stats["time_streamed_rounds"] = stats.get("time_streamed_rounds", 0.0) + \
                time.perf_counter() - t0
            r1, rmax, sx, absorbed, _ = (float(v) for v in be.get(scan))
            st.update(r1=r1, rmax=rmax, sx=sx, delta=delta_new, delta_new=delta)
            count_dense_round(stats, m, absorbed)

    outcome = driver.linear(Streamed(), n=n, gammas=gammas, normalize=sys.normalize, tol=tol,
                            max_iter=max_iter, stats=stats)
    return x, outcome == "converged"
