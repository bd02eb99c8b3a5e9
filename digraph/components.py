"""Strongly and weakly connected component labels.

* :func:`scc_labels` — strongly connected components by Tarjan's algorithm ("Depth-first search
  and linear graph algorithms", SIAM J. Comput. 1972), the iterative Numba implementation of the
  preprocessor (:func:`digraph.preprocess.scc.tarjan_scc`), O(n + m) on the CPU.
* :func:`wcc_labels` — weakly connected components (arc directions ignored) by hooking to the
  smaller root with pointer jumping (Shiloach–Vishkin), in parallel on the CPU
  (:mod:`digraph.smx.cpu.wcc`) or on a GPU (:mod:`digraph.smx.cuda.wcc`).

Labels are canonical by default, so that every device and run gives the same array: components
are numbered ``0, 1, 2, ...`` in the order of their smallest vertex index (component 0 holds
internal vertex 0, component 1 the first vertex not in component 0, ...).  That is also the order
in which networkx's ``weakly_connected_components`` yields them on a graph converted from
networkx.  ``scc_labels(order="reverse-topological")`` numbers the strong components in the order
Tarjan's search completes them instead.
"""

import numpy as np
from numba import njit

from .errors import NotAvailableError
from .io import load

__all__ = ["scc_labels", "wcc_labels", "component_members"]


@njit(cache=True, nogil=True)
def _first_seen(labels, ncomp):
    """Renumber ``labels`` by the order in which vertices 0, 1, ... first meet each label."""
    new = np.full(ncomp, -1, dtype=np.int64)
    out = np.empty(labels.size, dtype=np.int64)
    k = 0
    for v in range(labels.size):
        c = labels[v]
        if new[c] == -1:
            new[c] = k
            k += 1
        out[v] = new[c]
    return out


def scc_labels(graph, *, order="index", device="cpu"):
    """Strongly connected component of every vertex.

    Parameters
    ----------
    graph : digraph.Graph (or anything :func:`digraph.load` reads)
    order : {"index", "reverse-topological"}
        How components are numbered: ``"index"`` (canonical) by their smallest vertex index;
        ``"reverse-topological"`` in the order Tarjan's search completes them (roots and
        out-arcs taken in index order), so that ``label[u] > label[v]`` for every arc
        ``u → v`` between two components.
    device : str
        ``"cpu"`` only; a GPU device raises :class:`~.errors.NotAvailableError`.

    Returns
    -------
    numpy.ndarray of int64 (n)
        Aligned with ``graph.vertex_ids`` (``labels.max() + 1`` components; empty for an empty
        graph).  Self-loops and parallel arcs change nothing; on an undirected graph these are
        the connected components.

    Raises
    ------
    NotAvailableError
        ``device`` names a GPU: digraph has no GPU SCC labelling; call with ``device="cpu"``.
    InvalidParameterError
        ``device`` is not a device string, or ``order`` not one of the two.
    """
    from .checks import check_device as _check_device
    from .errors import InvalidParameterError
    if order not in ("index", "reverse-topological"):
        raise InvalidParameterError(
            f"scc_labels: order must be 'index' or 'reverse-topological', got {order!r}")
    device = _check_device(device)
    if device != "cpu":
        raise NotAvailableError(
            f"scc_labels: strongly connected components are labelled on the CPU only (Tarjan), "
            f"not on device {device!r}; call digraph.components.scc_labels(g, device='cpu') "
            "(weakly connected components run on GPUs: wcc_labels)")
    graph = load(graph)
    n = graph.num_vertices
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    from .preprocess.scc import tarjan_scc
    lab, ncomp = tarjan_scc(graph.out_offsets, graph.out_targets, n)
    if order == "reverse-topological":
        return lab
    return _first_seen(lab, np.int64(ncomp))


def wcc_labels(graph, *, device="cpu", threads=None):
    """Weakly connected component of every vertex (arc directions ignored).

    Parameters
    ----------
    graph : digraph.Graph (or anything :func:`digraph.load` reads)
    device : str
        ``"cpu"``, ``"cuda"`` or ``"cuda:N"`` (``"cuda:0,1,..."``: the first GPU named).
    threads : int, optional
        CPU threads (default: Numba's).

    Returns
    -------
    numpy.ndarray of int64 (n)
        Aligned with ``graph.vertex_ids``: components numbered by their smallest vertex index.

    Raises
    ------
    InvalidParameterError
        A bad device or thread count.
    NotAvailableError
        A GPU was named and none is available.
    """
    from .checks import check_device as _check_device, check_threads as _check_threads
    device = _check_device(device)
    threads = _check_threads(threads)
    graph = load(graph)
    n = graph.num_vertices
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if device != "cpu":
        return _gpu_wcc(graph, device.split(",")[0])
    from .smx.cpu.wcc import wcc_roots
    import numba
    before = numba.get_num_threads()
    if threads is not None:
        numba.set_num_threads(threads)
    try:
        roots = wcc_roots(graph.arc_sources, graph.out_targets, n)
    finally:
        numba.set_num_threads(before)
    rank = np.cumsum(roots == np.arange(n)) - 1
    return rank[roots]


def _gpu_wcc(graph, device):
    """Hook and jump passes of :mod:`digraph.smx.cuda.wcc` until a hook changes nothing; the
    canonical numbering by a prefix sum over the roots, on the GPU."""
    from .dispatch.runtime.cuda.backend import backend
    from .dispatch.runtime.cuda import device_graph
    from .result import RunStats
    from .smx.cuda.wcc import wcc_hook, wcc_jump
    be = backend(device)
    with be.current():
        old, be.stats = be.stats, RunStats.new()
        try:
            xp = be.xp
            dg = device_graph.resident_graph(be, graph)
            n, m = graph.num_vertices, graph.num_arcs
            comp = xp.arange(n, dtype=np.int64)
            changed = xp.zeros(1, dtype=np.int32)
            cap = max(1, be.sms) * 32
            while m:
                changed.fill(0)
                be.launch(wcc_hook, min(be.grid(m), cap), be.block, dg["out_offsets"],
                          dg["out_targets"], comp, changed)
                if not int(be.get(changed)[0]):
                    break
                be.launch(wcc_jump, min(be.grid(n), cap), be.block, comp)
            rank = xp.cumsum(comp == xp.arange(n, dtype=np.int64)) - 1
            labels = rank[comp]
            be.sync()
            out = be.get(labels)
        finally:
            be.release()
            be.stats = old
    return np.asarray(out, dtype=np.int64)


def component_members(labels):
    """The vertex indices of each component, in label order (each in increasing index order).

    Parameters
    ----------
    labels : numpy.ndarray of int
        Canonical labels (:func:`scc_labels`, :func:`wcc_labels`).

    Returns
    -------
    list of numpy.ndarray of int64
    """
    labels = np.asarray(labels)
    if labels.size == 0:
        return []
    order = np.argsort(labels, kind="stable")
    counts = np.bincount(labels)
    return np.split(order, np.cumsum(counts)[:-1])
