"""digraph as a networkx backend (networkx >= 3.2 dispatching).

Installed with the package, two entry points register it:

* ``networkx.backends``: ``digraph = digraph.nx_backend.interface`` -- the backend object (a
  module) with ``convert_from_nx``, ``convert_to_nx``, ``can_run``, ``should_run`` and the
  functions it implements, by their networkx names;
* ``networkx.backend_info``: ``digraph = digraph_nx_info:get_info`` -- its metadata, which
  networkx reads whenever it is imported: a top-level module that imports nothing (not this
  package, whose ``__init__`` loads Numba), so that ``import networkx`` costs about what it costs
  without digraph.  The backend object is loaded on the first call dispatched to it.

Then::

    import networkx as nx
    nx.pagerank(G, backend="digraph")                       # one call
    nx.pagerank(G, backend="digraph", mode="vertex-async")  # digraph's own keywords pass through
    nx.config.backend_priority.algos = ["digraph"]          # every call it can run

Implemented: ``pagerank``, ``core_number``, ``single_source_dijkstra_path_length``,
``single_source_shortest_path_length`` and ``shortest_path_length`` (one source),
``single_source_dijkstra`` and ``single_source_dijkstra_path``, ``strongly_connected_components``,
``weakly_connected_components`` and ``bfs_layers``.  Each returns exactly what networkx returns
(same keys, value types and exceptions); where digraph's semantics differ, ``can_run`` says no and
networkx runs instead.  ``docs/networkx.md`` has the details, the PageRank tolerance mapping and the
results of networkx's own tests run against this backend.
"""

from .info import get_info

__all__ = ["get_info"]
