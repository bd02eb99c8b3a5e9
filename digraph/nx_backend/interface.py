"""The digraph networkx backend: the object behind the ``networkx.backends`` entry point.

networkx (>= 3.2) dispatches a call such as ``nx.pagerank(G, backend="digraph")`` here:

1. ``can_run(name, args, kwargs)`` says whether digraph computes exactly networkx's answer for
   these arguments (a string gives the reason when it does not; networkx then falls back to its
   own implementation where configured to, or raises ``NotImplementedError``);
2. ``convert_from_nx(G, edge_attrs=...)`` turns the networkx graph into a :class:`DigraphGraph`
   (a :class:`digraph.Graph` plus the node list), through :func:`digraph.load`; networkx caches
   the result on ``G.__networkx_cache__``;
3. the function of the same name runs :func:`digraph.run` and maps the answer back to a dict
   keyed by the original node objects, with networkx's value types and exceptions.

This is a thin layer (graphblas-algorithms' and nx-cugraph's habit): every answer comes from
:func:`digraph.run` (paths from its result's shortest-path tree, :meth:`digraph.Result.path`),
:mod:`digraph.components`, :mod:`digraph.traversal` or :mod:`digraph.bfs`; only the translation of
arguments, results and errors lives here.

Keywords of :func:`digraph.run` pass through: ``mode=``, ``device=``, ``threads=``; their defaults
come from ``nx.config.backends.digraph`` when the backend is installed through its entry points.

The backend object is this module; the code lives in modules beside it, whose public names this
one re-exports: :mod:`.convert` (:class:`DigraphGraph`, ``convert_from_nx``, ``convert_to_nx``),
:mod:`.checks` (what ``can_run`` checks per function), :mod:`.link_analysis` (``pagerank``),
:mod:`.shortest_paths` (the shortest-path functions and ``bfs_layers``), :mod:`.components`
(``core_number`` and the connected components) and :mod:`.common` (helpers they share).
"""

import inspect

import networkx as nx

from .info import FUNCTIONS
# networkx finds the backend's functions on this module by name
from .checks import CHECKS
from .common import RUN_KEYWORDS
from .components import core_number, strongly_connected_components, weakly_connected_components
from .convert import DigraphGraph, convert_from_nx, convert_to_nx
from .link_analysis import pagerank, pagerank_error_bound, pagerank_extra_rounds
from .shortest_paths import (bfs_layers, shortest_path_length, single_source_dijkstra,
                             single_source_dijkstra_path, single_source_dijkstra_path_length,
                             single_source_shortest_path_length)

__all__ = [
    "DigraphGraph",
    "convert_from_nx",
    "convert_to_nx",
    "can_run",
    "should_run",
    "pagerank",
    "core_number",
    "single_source_dijkstra_path_length",
    "single_source_shortest_path_length",
    "shortest_path_length",
    "single_source_dijkstra",
    "single_source_dijkstra_path",
    "strongly_connected_components",
    "weakly_connected_components",
    "bfs_layers",
    "pagerank_error_bound",
    "pagerank_extra_rounds",
]


def can_run(name, args, kwargs):
    """Whether digraph computes networkx's exact answer for this call.

    Returns
    -------
    bool or str
        True, or a string saying why not (networkx logs it and falls back or raises).
    """
    func = globals().get(name) if name in FUNCTIONS else None
    if func is None:
        return False
    try:
        bound = inspect.signature(func).bind(*args, **kwargs)
    except TypeError as e:
        return f"arguments do not fit {name}: {e}"
    a = bound.arguments
    extra = set(a.get("backend_kwargs", {})) - set(RUN_KEYWORDS)
    if extra:
        return f"unknown keyword(s) {sorted(extra)}; digraph accepts {', '.join(RUN_KEYWORDS)}"
    G = a["G"]
    if not isinstance(G, (nx.Graph, DigraphGraph)):
        return "the input is not a graph"
    return CHECKS[name](G, a)


def should_run(name, args, kwargs):
    """Always True: whoever names or prioritises the backend wants it to run."""
    return True
