"""Shortest-path trees: the results cuGraph, NetworKit and networkx users
expect beside the distances.

* :func:`shortest_path_tree` — predecessors (and tree depths) from the distances of an SSSP run,
  on the CPU (:mod:`digraph.smx.cpu.tree`) or the GPU (:mod:`digraph.smx.cuda.tree`).  An arc
  ``u → v`` of weight ``w`` is *tight* when ``d(v) < inf`` and ``d(u) + w == d(v)`` in float64;
  the tree is the breadth-first tree over tight arcs from the source, each vertex's parent the
  smallest-index tight in-neighbour one level up.  Exact: the engines compute every ``d(v)`` as
  ``fl(d(u) + w)`` for some arc, and on the least fixed point every vertex of finite distance is
  reached over tight arcs (``docs/results.md``).  :meth:`digraph.Result.predecessors` and
  :meth:`digraph.Result.path` use it.

Breadth-first levels and layers are :mod:`digraph.bfs`, on the same tree kernels.
"""

import numpy as np

from .errors import InvalidParameterError, VertexNotFoundError
from .checks import check_device
from .io import load

__all__ = ["shortest_path_tree", "tree_path", "one_vertex", "source_indices", "tree_arrays"]


# ---------------------------------------------------------------------------- arguments



def one_vertex(graph, vertex, what):
    """The internal index of one vertex id (a tuple is one vertex when the ids are objects)."""
    if isinstance(vertex, tuple) and graph.vertex_ids.dtype == object:
        try:
            return int(graph.index_of([vertex], what)[0])
        except VertexNotFoundError:
            pass
    if isinstance(vertex, (list, np.ndarray, set, frozenset, range)):
        raise InvalidParameterError(f"{what} must be one vertex id, got a {type(vertex).__name__}")
    return int(graph.index_of(vertex, what))


def source_indices(graph, sources):
    """(internal indices int64, whether several were given)."""
    if isinstance(sources, (list, np.ndarray, set, frozenset, range)) or (
            isinstance(sources, tuple) and graph.vertex_ids.dtype != object):
        seq = list(sources)
        if not seq:
            return np.zeros(0, np.int64), True
        if graph.vertex_ids.dtype == object:  # tuples are vertices there
            return np.array([one_vertex(graph, s, "source") for s in seq], np.int64), True
        return np.asarray(graph.index_of(seq, "source"), np.int64), True
    return np.array([one_vertex(graph, sources, "source")], np.int64), False


def _first_gpu(device):
    """One GPU's device string: the first of ``"cuda:0,1,..."``."""
    return device.split(",")[0] if device.startswith("cuda:") else device


# ---------------------------------------------------------------------------- the tree

def shortest_path_tree(graph, distances, source, *, weights=True, device="cpu"):
    """The canonical shortest-path tree of exact SSSP distances.

    Parameters
    ----------
    graph : digraph.Graph
    distances : array_like of float64 (n)
        Distances from ``source`` aligned with ``graph.vertex_ids`` (+inf: unreachable), as
        ``digraph.run(graph, "sssp", source=source, weights=weights).values`` returns them.
    source : vertex id
    weights : bool
        Whether the distances used the graph's arc weights (False, or an unweighted graph: every
        arc weighs 1).
    device : str
        ``"cpu"`` or ``"cuda"``/``"cuda:N"`` (``"cuda:0,1,..."``: the first GPU named); on a GPU
        the tree is built there.

    Returns
    -------
    pred : numpy.ndarray of int64 (n)
        Internal index of each vertex's predecessor: the smallest index ``u`` with
        ``hops[u] = hops[v] - 1`` and ``u → v`` tight; -1 for the source and unreachable vertices.
    hops : numpy.ndarray of int64 (n)
        Arcs on the tree path from the source (the fewest tight arcs); -1 when unreachable.

    Raises
    ------
    VertexNotFoundError
        ``source`` is not a vertex.
    InvalidParameterError
        ``distances`` of the wrong length, ``distances[source] != 0``, or distances that are not
        the exact fixed point (a vertex of finite distance that no chain of tight arcs from the
        source reaches, as in the partial answer of an unconverged run).
    NotAvailableError
        A GPU was named and none is available.

    Notes
    -----
    Every vertex on the tree path to ``v`` has a distance of at most ``d(v)``, and the sum of
    the path's weights, added in order in float64, is ``d(v)``.  The same tree comes out of every
    device (the parent is chosen by index, not by which thread was first).
    """
    graph = load(graph)
    device = check_device(device)
    dist = np.asarray(distances, dtype=np.float64)
    n = graph.num_vertices
    if dist.shape != (n,):
        raise InvalidParameterError(
            f"distances must have one entry per vertex ({n}), got shape {dist.shape}")
    s = one_vertex(graph, source, "source")
    if dist[s] != 0.0:
        raise InvalidParameterError(
            f"distances[{_id(graph, s)!r}] (the source) is {float(dist[s])!r}, not 0: they are not "
            "distances from this source")
    unit = not (bool(weights) and graph.weighted)
    w = graph.weights if not unit else np.zeros(0, np.float64)
    pred, hops = tree_arrays(graph, w, unit, True, dist, np.array([s], np.int64), device)
    lost = np.flatnonzero((hops < 0) & np.isfinite(dist))
    if lost.size:
        v = int(lost[0])
        raise InvalidParameterError(
            f"vertex {_id(graph, v)!r} has distance {float(dist[v])!r} but no chain of tight arcs "
            f"(d(u) + w == d(v)) from the source reaches it ({lost.size} such vertices): the "
            "distances are not the exact answer of this graph and weights (an unconverged run?)")
    return pred, hops


def _id(graph, i):
    v = graph.vertex_ids[i]
    return v.item() if isinstance(v, np.generic) else v


def tree_arrays(graph, w, unit, tight, dist, sources, device):
    if device == "cpu":
        from .smx.cpu.tree import tight_tree
        return tight_tree(graph.out_offsets, graph.out_targets, w, unit, tight,
                          dist if tight else np.zeros(0, np.float64), sources)
    return _gpu_tree(graph, w, unit, tight, dist, sources, _first_gpu(device))


def _gpu_tree(graph, w, unit, tight, dist, sources, device):
    """:func:`digraph.smx.cuda.tree.tree_level` once per level, the frontier kept on the GPU."""
    from collections import defaultdict

    from .dispatch.runtime.cuda.backend import backend
    from .dispatch.runtime.cuda import device_graph
    from .smx.cuda.tree import tree_level
    be = backend(device)
    with be.current():
        old, be.stats = be.stats, defaultdict(float)  # the copies' bytes and time: not a run's
        try:
            xp = be.xp
            dg = device_graph.resident_graph(be, graph)
            n = graph.num_vertices
            dw = be.put(w) if tight and not unit else be.put(np.zeros(1))
            dd = be.put(dist) if tight else be.put(np.zeros(1))
            src = np.unique(sources)
            hops = xp.full(n, -1, dtype=np.int64)
            pred = xp.full(n, n, dtype=np.int64)
            front = xp.zeros(max(n, 1), dtype=np.int64)
            nxt = xp.zeros(max(n, 1), dtype=np.int64)
            dsrc = be.put(src)
            front[:src.size] = dsrc
            hops[dsrc] = 0
            count = xp.zeros(1, dtype=np.int64)
            nf, level = int(src.size), 0
            cap = max(1, be.sms) * 32
            while nf:
                count.fill(0)
                be.launch(tree_level, min(be.grid(nf), cap), be.block, dg["out_offsets"],
                          dg["out_targets"], dw, bool(unit), bool(tight), dd, front, np.int64(nf),
                          np.int64(level), hops, pred, nxt, count)
                nf = int(be.get(count)[0])
                level += 1
                front, nxt = nxt, front
            pred = xp.where(pred == n, -1, pred)
            be.sync()
            out = be.get(pred), be.get(hops)
        finally:
            be.release()
            be.stats = old
    return np.asarray(out[0], np.int64), np.asarray(out[1], np.int64)


def tree_path(pred, hops, t):
    """Internal indices of the tree path from the root to ``t`` (empty when unreached)."""
    from .smx.cpu.tree import tree_path as walk
    return walk(pred, hops, np.int64(t))
