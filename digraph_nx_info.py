"""Metadata of the digraph networkx backend (the ``networkx.backend_info`` entry point).

networkx imports every backend's ``backend_info`` entry point whenever it is imported itself.
This module is top-level, outside the ``digraph`` package, so that importing it runs no
``digraph/__init__.py`` (which loads Numba and the engine): it imports nothing at all, and
``import networkx`` costs about what it costs without digraph installed.  The backend object
(``digraph.nx_backend.interface``) is loaded on the first call networkx dispatches to it.
"""

__all__ = ["get_info", "FUNCTIONS"]

_KEYWORDS = {
    "mode : str, optional": "digraph execution mode: 'scc', 'power', 'bsp', 'vertex-async', "
                            "'path', 'path-nopriority' or, for core_number, 'peel' (default: the "
                            "fastest measured for the algorithm).",
    "device : str, optional": "'cpu' (default), 'cuda' or 'cuda:N' (one GPU), 'cuda:0,1,...' (several).",
    "threads : int, optional": "CPU threads of the Numba kernels (default: all).",
}

FUNCTIONS = {
    "pagerank": {
        "additional_docs": (
            "Solved by digraph with an L1 error bound of n*tol*min(1, alpha/(1-alpha)), never\n"
            "larger than the error networkx's own stopping rule guarantees; the round limit is\n"
            "max_iter plus the few rounds that stricter stop needs. dangling runs digraph's\n"
            "power iteration (mode='power'). Falls back to networkx for nstart, callable or\n"
            "negative/non-finite weights, alpha outside (0, 1)."),
        "additional_parameters": _KEYWORDS,
    },
    "core_number": {
        "additional_docs": "One peeling pass in digraph on the CPU (the h-index iteration on GPUs); exact.",
        "additional_parameters": _KEYWORDS,
    },
    "single_source_dijkstra_path_length": {
        "additional_docs": (
            "Label-correcting shortest paths in digraph; exact. Falls back to networkx for\n"
            "callable weights and negative or non-finite weights."),
        "additional_parameters": _KEYWORDS,
    },
    "single_source_shortest_path_length": {
        "additional_docs": "Unit-weight shortest paths in digraph; exact.",
        "additional_parameters": _KEYWORDS,
    },
    "single_source_dijkstra": {
        "additional_docs": (
            "Lengths exact (as single_source_dijkstra_path_length); each path is a shortest path\n"
            "of digraph's canonical tree over tight arcs (d(u) + w == d(v)), which may differ\n"
            "from networkx's where shortest paths tie. Falls back to networkx for callable\n"
            "weights and negative or non-finite weights."),
        "additional_parameters": _KEYWORDS,
    },
    "single_source_dijkstra_path": {
        "additional_docs": (
            "The paths of single_source_dijkstra: shortest paths of digraph's canonical tree\n"
            "over tight arcs. Falls back to networkx for callable, negative or non-finite weights."),
        "additional_parameters": _KEYWORDS,
    },
    "strongly_connected_components": {
        "additional_docs": (
            "Tarjan's algorithm in digraph (CPU); exact, yielded in a reverse topological order\n"
            "of the condensation, as networkx's. Falls back to networkx when a GPU device is named."),
        "additional_parameters": _KEYWORDS,
    },
    "weakly_connected_components": {
        "additional_docs": (
            "Hooking and pointer jumping in digraph, on the CPU or a GPU; exact, in networkx's order."),
        "additional_parameters": _KEYWORDS,
    },
    "bfs_layers": {
        "additional_docs": (
            "Hop levels from digraph (one source: its SSSP on unit weights; several: one\n"
            "breadth-first search); the same layers as networkx, each after the first in G's\n"
            "node order."),
        "additional_parameters": _KEYWORDS,
    },
    "shortest_path_length": {
        "additional_docs": (
            "One source (with or without a target) in digraph, hop counts or weighted; exact.\n"
            "Falls back to networkx for source=None and for callable, negative or non-finite weights."),
        "additional_parameters": _KEYWORDS,
    },
}


def get_info():
    """The backend's description for networkx (``networkx.utils.backends.backend_info``).

    Returns
    -------
    dict
        ``backend_name``, ``project``, ``package``, ``short_summary``,
        ``default_config`` (``mode``, ``device``, ``threads``; read by every call, so
        ``nx.config.backends.digraph.mode = "vertex-async"`` changes the default) and
        ``functions`` (name -> ``additional_docs`` / ``additional_parameters``).
    """
    return {
        "backend_name": "digraph",
        "project": "digraph-engine",
        "package": "digraph",
        "short_summary": "Path-based iterative analytics on CPU cores (Numba), DiGraph re-created.",
        "default_config": {"mode": None, "device": "cpu", "threads": None},
        "functions": {name: dict(v) for name, v in FUNCTIONS.items()},
    }
