"""A graph's arrays on one GPU: the CSR and CSC uploaded once per graph and device and kept in the
graph's residency (:func:`_device_graph`, kind ``"cuda"`` of
:class:`~.residency.Residency`, with its heavy vertices:
:func:`_heavy`), the undirected adjacency of k-core (:func:`device_undirected`, kind
``"cuda-undirected"``), and whether ``bsp`` must stream the arcs instead (:func:`too_big`) in
batches of what size (:func:`auto_batch`)."""

import numpy as np

from .common import index_dtype as _index_dtype
from . import residency as _residency

__all__ = []


def resident_graph(be, graph):
    """The graph's arrays on the GPU, uploaded once per graph and device (kept in the graph's
    residency, kind ``"cuda"``)."""
    res = _residency.residency(graph)
    key = (be.device_id, be.sim)
    cache = res.peek("cuda", key)
    if cache is not None:
        return be.keep_all(cache)
    n, m = graph.num_vertices, graph.num_arcs
    it = _index_dtype(max(n, m))
    d = {
        "out_offsets": be.put(graph.out_offsets, it),
        "out_targets": be.put(graph.out_targets, it),
        "in_offsets": be.put(graph.in_offsets, it),
        "in_sources": be.put(graph.in_sources, it),
        "out_degree": be.put(graph.out_degree, np.int64),
        "heavy_in": _heavy(be, graph.in_degree),
        "heavy_out": _heavy(be, graph.out_degree),
    }
    return res.put("cuda", key, d)


def _heavy(be, degree):
    """Vertices of degree >= HEAVY (a block each in the ``*_heavy`` kernels)."""
    from ....smx.cuda.common import HEAVY
    return be.put(np.flatnonzero(np.asarray(degree) >= HEAVY), np.int32)


def device_undirected(be, graph):
    """(offsets, neighbours, degrees on the host, heavy vertices) of k-core's undirected adjacency,
    uploaded once per graph and device (kept in the graph's residency, kind
    ``"cuda-undirected"``)."""
    res = _residency.residency(graph)
    key = (be.device_id, be.sim)
    got = res.peek("cuda-undirected", key)
    if got is not None:
        for a in got[:2] + got[3:]:
            be.keep(a)
        return got
    from ...systems import undirected_adjacency
    off, nbr = undirected_adjacency(graph)
    it = _index_dtype(max(graph.num_vertices, nbr.size))
    return res.put("cuda-undirected", key, (be.put(off, it), be.put(nbr, it), np.diff(off),
                                            _heavy(be, np.diff(off))))


def too_big(be, graph):
    """Whether the graph's resident arrays (CSR + CSC + per-arc factors) exceed 80% of the free
    GPU memory, so ``bsp`` must stream its arcs."""
    if be.sim or _residency.peek(graph, "cuda", (be.device_id, be.sim)) is not None:
        return False
    with be.xp.cuda.Device(be.device_id):  # this GPU's memory, whichever is current
        free, _ = be.xp.cuda.runtime.memGetInfo()
    need = graph.num_arcs * (4 + 4 + 8 + 8) + graph.num_vertices * 8 * 12
    return need > 0.8 * free


def auto_batch(be, graph):
    """Batch size for streaming: an eighth of the free memory per buffer pair, at most m."""
    free, _ = be.xp.cuda.runtime.memGetInfo()
    return max(1 << 20, min(graph.num_arcs, int(free // 8 // 12)))
