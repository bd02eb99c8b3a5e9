"""The sharded min/max and h-index engines: :func:`monotone` (every GPU pushes its active
sources into its replica, the replicas all-reduced with the system's min/max) and :func:`hindex`
(every GPU recomputes its frontier's h-indices; the estimates all-gathered and the marks
all-reduced), both as worklist rounds of :func:`digraph.dispatch.driver.worklist`."""

import numpy as np

from ... import driver
from ...systems import monotone_arrays, monotone_start
from ...runtime.cuda.common import index_dtype, kernels
from ...runtime.cuda.shards import gather_host, heavy_host, parallel

__all__ = []


def monotone(shards, ex, timer, graph, sys, max_iter, stats, jacobi):
    K = kernels()
    n, m = graph.num_vertices, graph.num_arcs
    op, combine, has, value = monotone_arrays(graph, sys)
    x0, active0 = monotone_start(sys, n)
    identity = np.inf if combine == 0 else -np.inf
    it = index_dtype(max(n, m))
    out_off = np.asarray(graph.out_offsets, np.int64)
    heavy_all = heavy_host(graph, "out", out_off)
    sent0 = np.where(active0, identity, x0)

    def upload(s):
        be, xp = s.be, s.be.xp
        a0, a1 = int(out_off[s.v0]), int(out_off[s.v1])
        d = s.resident(graph, "out", lambda: {
            "off": s.rebased(out_off, a0, a1),
            "tgt": be.put(np.asarray(graph.out_targets)[a0:a1], it),
            "heavy": be.put(heavy_all[(heavy_all >= s.v0) & (heavy_all < s.v1)], np.int32),
            "out_degree": be.put(graph.out_degree, np.int64)})
        s.off, s.tgt, s.heavy, s.out_degree = d["off"], d["tgt"], d["heavy"], d["out_degree"]
        s.val = be.put(np.asarray(value)[a0:a1] if has else value)
        s.x = be.put(x0)
        s.xs = be.keep(xp.empty(n, np.float64))
        s.mark = be.keep(xp.zeros(n, np.uint8))
        s.active = be.put(active0, np.uint8)
        s.sent = be.put(sent0)
    parallel(shards, upload)
    reduce_op = "min" if combine == 0 else "max"
    seen = {}

    def active():
        fronts, nf, vol = [], 0, 0
        for s in shards:
            with s.on():
                xp = s.be.xp
                rng = s.active[s.v0:s.v1] if jacobi else s.x[s.v0:s.v1] != s.sent[s.v0:s.v1]
                f = xp.flatnonzero(rng).astype(np.int64) + s.v0
                c, v = s.be.scalars(f.size, s.out_degree[f].sum() if f.size else 0)
                fronts.append(f)
                nf += int(c)
                vol += int(v)
        seen.update(fronts=fronts, nf=nf, vol=vol)
        return nf

    def step():
        fronts, nf, vol = seen["fronts"], seen["nf"], seen["vol"]
        timer.start()
        for s, f in zip(shards, fronts):
            with s.on():
                be = s.be
                s.xs[...] = s.x
                if jacobi:
                    s.mark[...] = 0
                    args = (s.xs, s.off, s.tgt, s.val, has, op, combine, s.x, s.mark)
                    if f.size:
                        be.launch(K.monotone_push, be.grid(f.size), be.block, f, *args)
                    be.heavy(K.monotone_push_heavy, s.heavy, s.active, *args)
                else:
                    args = (s.off, s.tgt, s.val, has, op, combine, s.x, s.sent)
                    if f.size:
                        be.launch(K.monotone_async_push, be.grid(f.size), be.block, f, *args)
                    be.heavy(K.monotone_async_push_heavy, s.heavy, *args)
        timer.stop_kernels()
        ex.allreduce([s.x for s in shards], reduce_op)
        changed = 0
        for s in shards:
            with s.on():
                if jacobi:  # active next round: the range's values that changed this round
                    s.active[...] = 0
                    s.active[s.v0:s.v1] = s.x[s.v0:s.v1] != s.xs[s.v0:s.v1]
                    changed += int(s.be.scalars(s.active[s.v0:s.v1].sum())[0])
        timer.finish()
        stats["vertex_updates"] += changed if jacobi else nf
        stats["arc_updates"] += vol
        stats["sparse_rounds"] += 1

    converged = driver.worklist(driver.Rounds(active, step), max_iter=max_iter, stats=stats)
    return gather_host(shards, [s.x for s in shards]), converged


def hindex(shards, ex, timer, graph, und, max_iter, stats, jacobi):
    K = kernels()
    from ....smx.cuda.common import HEAVY
    off_h, nbr_h = und
    n = graph.num_vertices
    deg = np.diff(off_h)
    it = index_dtype(max(n, nbr_h.size))
    heavy_all = np.flatnonzero(deg >= HEAVY)

    def upload(s):
        be, xp = s.be, s.be.xp
        a0, a1 = int(off_h[s.v0]), int(off_h[s.v1])
        d = s.resident(graph, "undirected", lambda: {
            "off": s.rebased(off_h, a0, a1), "nbr": be.put(nbr_h[a0:a1], it),
            "heavy": be.put(heavy_all[(heavy_all >= s.v0) & (heavy_all < s.v1)], np.int32)})
        s.off, s.nbr, s.heavy = d["off"], d["nbr"], d["heavy"]
        s.est = be.put(deg, np.int64)
        s.deg = be.put(deg, np.int64)
        s.spare = be.keep(s.est.copy())
        s.infront = be.keep(xp.ones(n, np.uint8))
        s.mark = be.keep(xp.zeros(n, np.uint8))
        s.front = xp.arange(s.v0, s.v1, dtype=np.int64)
    parallel(shards, upload)

    def active():
        return sum(int(s.front.size) for s in shards)

    def step():
        nf = active()
        timer.start()
        vol = 0
        for s in shards:
            with s.on():
                be = s.be
                s.mark[...] = 0
                if jacobi:
                    s.spare[...] = s.est
                write = s.spare if jacobi else s.est
                if s.front.size:
                    be.launch(K.hindex_round, be.grid(s.front.size), be.block, s.front, s.off,
                              s.nbr, s.est, write, s.mark)
                    vol += int(be.scalars(s.deg[s.front].sum())[0])
                be.heavy(K.hindex_round_heavy, s.heavy, s.infront, s.off, s.nbr, s.est, write,
                         s.mark)
                if jacobi:
                    s.est, s.spare = s.spare, s.est
        timer.stop_kernels()
        ex.allgather([s.est for s in shards])
        ex.allreduce([s.mark for s in shards], "max")
        for s in shards:
            with s.on():
                xp = s.be.xp
                s.front = xp.flatnonzero(s.mark[s.v0:s.v1]).astype(np.int64) + s.v0
                s.infront, s.mark = s.mark, s.infront
        timer.finish()
        stats["vertex_updates"] += nf
        stats["arc_updates"] += vol
        stats["dense_rounds" if nf == n else "sparse_rounds"] += 1

    converged = driver.worklist(driver.Rounds(active, step), max_iter=max_iter, stats=stats)
    return gather_host(shards, [s.est for s in shards]), converged
