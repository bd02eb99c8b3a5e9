"""``bsp`` on min/max systems and both modes of h-index (k-core) systems on one GPU:
:func:`monotone_bsp` (Jacobi rounds over the frontier from a snapshot of the values) and
:func:`hindex` (rounds recomputing the h-index of the frontier over the undirected adjacency),
both as worklist rounds of :func:`digraph.dispatch.driver.worklist`.  ``vertex-async`` on min/max
systems is :mod:`~.gpu_worklist`."""

import numpy as np

from ... import driver
from ...systems import monotone_arrays, monotone_start
from ...runtime.cuda.common import kernels as _kernels
from ...runtime.cuda.device_graph import resident_graph, device_undirected

__all__ = []


def monotone_bsp(be, graph, sys, max_iter, stats):
    """``bsp`` on a min/max system: Jacobi rounds over the frontier (a snapshot of the values,
    the improved targets marked); ``vertex-async`` is :mod:`~.gpu_worklist`."""
    K = _kernels()
    xp = be.xp
    g = resident_graph(be, graph)
    n = graph.num_vertices
    op, combine, has, value = monotone_arrays(graph, sys)
    x0, active0 = monotone_start(sys, n)
    x = be.put(x0)
    val = be.put(value)
    active = be.put(active0, np.uint8)
    mark = be.keep(xp.zeros(n, np.uint8))
    xs = be.keep(xp.empty(n, np.float64))
    st = {"active": active, "mark": mark}

    def scan():
        front = xp.flatnonzero(st["active"])
        nf, vol = be.scalars(front.size, g["out_degree"][front].sum() if front.size else 0)
        st.update(front=front, nf=int(nf), vol=int(vol))
        return int(nf)

    def step():
        front, nf = st["front"], st["nf"]
        xs[...] = x
        st["mark"][...] = 0
        args = (xs, g["out_offsets"], g["out_targets"], val, has, op, combine, x, st["mark"])
        be.launch(K.monotone_push, be.grid(nf), be.block, front, *args)
        be.heavy(K.monotone_push_heavy, g["heavy_out"], st["active"], *args)
        st["active"], st["mark"] = st["mark"], st["active"]
        stats["vertex_updates"] += int(be.scalars(st["active"].sum())[0])
        stats["sparse_rounds"] += 1
        stats["arc_updates"] += st["vol"]

    converged = driver.worklist(driver.Rounds(scan, step), max_iter=max_iter, stats=stats)
    return x, converged


def hindex(be, graph, jacobi, max_iter, stats):
    K = _kernels()
    xp = be.xp
    off, nbr, deg, heavy = device_undirected(be, graph)
    n = graph.num_vertices
    est = be.put(deg, np.int64)
    degs = be.put(deg, np.int64)
    front = xp.arange(n, dtype=np.int64)
    infront = be.keep(xp.ones(n, np.uint8))
    mark = be.keep(xp.zeros(n, np.uint8))
    spare = be.keep(est.copy()) if jacobi else est
    st = {"front": front, "est": est, "spare": spare, "mark": mark, "infront": infront}

    def step():
        front, est, spare, mark = st["front"], st["est"], st["spare"], st["mark"]
        mark[...] = 0
        if jacobi:
            spare[...] = est
        write = spare
        be.launch(K.hindex_round, be.grid(front.size), be.block, front, off, nbr, est, write, mark)
        be.heavy(K.hindex_round_heavy, heavy, st["infront"], off, nbr, est, write, mark)
        if jacobi:
            st["est"], st["spare"] = spare, est
        stats["vertex_updates"] += int(front.size)
        stats["arc_updates"] += int(be.scalars(degs[front].sum())[0])
        stats["dense_rounds" if front.size == n else "sparse_rounds"] += 1
        st["front"] = xp.flatnonzero(mark)
        st["infront"], st["mark"] = mark, st["infront"]

    converged = driver.worklist(driver.Rounds(lambda: st["front"].size, step), max_iter=max_iter,
                                stats=stats)
    return st["est"], converged
