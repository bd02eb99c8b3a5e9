"""Breadth-first levels and layers: hop distances from one source (``digraph.run``'s SSSP on
unit weights, any mode or device) or from several at once (one frontier search over the tree
kernels of :mod:`digraph.traversal`), and the vertices at each distance (networkx's
``bfs_layers``).
"""

import numpy as np

from .errors import InvalidParameterError
from .checks import check_device
from .io import load
from .traversal import source_indices, tree_arrays

__all__ = ["bfs_levels", "bfs_layers", "layers_of"]


def bfs_levels(graph, sources, *, device="cpu", mode=None, threads=None):
    """Hop distances from one source, or from the nearest of several.

    Parameters
    ----------
    graph : digraph.Graph (or anything :func:`digraph.load` reads)
    sources : vertex id, or a list / array / set / range of vertex ids
        One source runs ``digraph.run(graph, "sssp", source=..., weights=False, mode=mode,
        device=device, threads=threads)``; several (a tuple is one vertex when the graph's ids
        are objects, several otherwise) run one breadth-first search from all of them
        (:mod:`digraph.smx.cpu.tree`, or :mod:`digraph.smx.cuda.tree` on a GPU).  An empty list
        reaches nothing.
    device : str
        ``"cpu"``, ``"cuda"``, ``"cuda:N"``, ``"cuda:0,1,..."`` (several sources: the first GPU).
    mode : str, optional
        ``digraph.run``'s mode, one source only.
    threads : int, optional
        CPU threads of ``digraph.run`` (one source).

    Returns
    -------
    numpy.ndarray of int64 (n)
        Aligned with ``graph.vertex_ids``; -1 for vertices no source reaches.

    Raises
    ------
    VertexNotFoundError
        A source is not a vertex (the error names it).
    InvalidParameterError
        ``mode`` with several sources; a bad device or thread count.
    NotAvailableError
        A GPU was named and none is available.
    """
    graph = load(graph)
    device = check_device(device)
    src, several = source_indices(graph, sources)
    if not several:
        from .run import run
        r = run(graph, "sssp", source=graph.vertex_ids[src[0]], weights=False, device=device,
                mode=mode, threads=threads)
        d = r.values
        out = np.full(d.size, -1, dtype=np.int64)
        fin = np.isfinite(d)
        out[fin] = d[fin].astype(np.int64)
        return out
    if mode is not None:
        raise InvalidParameterError(
            f"mode={mode!r} applies to one source (digraph.run's SSSP); several sources run one "
            "breadth-first search")
    from .checks import check_threads as _check_threads
    _check_threads(threads)
    if src.size == 0:
        return np.full(graph.num_vertices, -1, dtype=np.int64)
    _, hops = tree_arrays(graph, np.zeros(0), True, False, np.zeros(0), src, device)
    return hops


def layers_of(levels):
    """Internal indices of each level, in increasing index order: a list of int64 arrays."""
    reached = np.flatnonzero(levels >= 0)
    if reached.size == 0:
        return []
    order = reached[np.argsort(levels[reached], kind="stable")]
    counts = np.bincount(levels[reached])
    return np.split(order, np.cumsum(counts)[:-1])


def bfs_layers(graph, sources, *, device="cpu", mode=None, threads=None):
    """The vertices at each hop distance from the sources (networkx's ``bfs_layers``).

    Parameters are those of :func:`bfs_levels`.

    Returns
    -------
    list of numpy.ndarray
        ``layers[k]``: the vertex ids at hop distance ``k`` from the nearest source, in the
        graph's vertex order (``layers[0]``: the sources, each once).  Empty when no source
        was given.
    """
    graph = load(graph)
    levels = bfs_levels(graph, sources, device=device, mode=mode, threads=threads)
    return [graph.vertex_ids[idx] for idx in layers_of(levels)]
