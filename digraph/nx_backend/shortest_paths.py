"""Shortest paths and breadth-first layers from one source: Dijkstra lengths and paths
(``single_source_dijkstra*``), hop counts (``single_source_shortest_path_length``),
``shortest_path_length`` (one source) and ``bfs_layers``.
"""

import networkx as nx
import numpy as np

from .common import keyed, run_kwargs
from .convert import as_graph


def _distances(g, s, values, cutoff, reach_limit):
    """{node: distance} of the reached vertices, nearest first (the source always)."""
    reach = np.isfinite(values)
    if cutoff is not None:
        reach &= reach_limit(values)
    reach[s] = True
    idx = np.flatnonzero(reach)
    idx = idx[np.argsort(values[idx], kind="stable")]
    return idx, values[idx]


def _dijkstra_source(name, G, source, weight, backend_kwargs):
    """(run keywords, converted graph, source index) of a Dijkstra call, or networkx's errors."""
    kw = run_kwargs(name, backend_kwargs)
    if callable(weight):
        raise NotImplementedError("the digraph backend reads a numeric edge attribute, not a "
                                  "function")
    g = as_graph(G, weight)
    s = g.index(source)
    if s is None:
        raise nx.NodeNotFound(f"Node {source} not found in graph")
    return kw, g, s


def _dijkstra_run(kw, g, s, weight):
    import digraph

    return digraph.run(g.graph, "sssp", source=s, weights=weight is not None, **kw)


def _dijkstra_lengths(g, s, r, cutoff, weight):
    """(reached indices nearest first, their lengths with networkx's value types)."""
    idx, d = _distances(g, s, r.values, cutoff, lambda v: v <= cutoff)
    if _int_lengths(g, weight):
        return idx, d.astype(np.int64).tolist()
    lengths = d.tolist()
    lengths[int(np.flatnonzero(idx == s)[0])] = 0
    return idx, lengths


def _int_lengths(g, weight):
    return g.weight_kind == "int" or weight is None


def single_source_dijkstra_path_length(G, source, cutoff=None, weight="weight", **backend_kwargs):
    """networkx's ``single_source_dijkstra_path_length`` computed by digraph (exact).

    Distances are the least fixed point of ``d(v) = min_u d(u) + w_uv`` in float64, which is what
    Dijkstra computes, so they are equal to networkx's bit for bit.  Integer weights (missing
    weights count as the int 1) give int distances, as in networkx; float weights float ones;
    with a mix, every distance is a float except the source's 0 (networkx's types then depend on
    the path).

    Raises
    ------
    networkx.NodeNotFound
        ``source`` is not a node.
    """
    kw, g, s = _dijkstra_source("single_source_dijkstra_path_length", G, source, weight,
                                backend_kwargs)
    idx, lengths = _dijkstra_lengths(g, s, _dijkstra_run(kw, g, s, weight), cutoff, weight)
    return keyed(g, idx, lengths)


def single_source_dijkstra(G, source, target=None, cutoff=None, weight="weight",
                           **backend_kwargs):
    """networkx's ``single_source_dijkstra`` computed by digraph: lengths (exact) and paths.

    Lengths are those of :func:`single_source_dijkstra_path_length`.  Each path is the one of
    digraph's canonical shortest-path tree (:meth:`digraph.Result.path`: the tree over the tight
    arcs ``d(u) + w == d(v)``, each vertex's parent the smallest-index node, in the graph's node
    order, one tree arc closer to the source).  It is a shortest path — its edges exist and
    their weights, added in order, give the length — with the fewest edges among the shortest
    paths, but where several of those exist it may differ from the one networkx's heap order
    picks.  The tree is built on the run's device.

    Returns
    -------
    (dict, dict), or (length, list) when ``target`` is given
        Node -> length (nearest first) and node -> path ``[source, ..., node]``; with a
        ``target``, its length and path (``(0, [source])`` when ``target == source``).

    Raises
    ------
    networkx.NodeNotFound
        ``source`` is not a node.
    networkx.NetworkXNoPath
        ``target`` is not reached from ``source`` within ``cutoff`` (or is not a node).
    """
    kw, g, s = _dijkstra_source("single_source_dijkstra", G, source, weight, backend_kwargs)
    if target in {source}:
        return (0, [target])
    r = _dijkstra_run(kw, g, s, weight)
    pred, hops = r._tree(None)
    if target is not None:
        t = g.index(target)
        d = r.values[t] if t is not None else np.inf
        if not (np.isfinite(d) and (cutoff is None or d <= cutoff)):
            raise nx.NetworkXNoPath(f"No path to {target}.")
        from ..traversal import tree_path
        length = int(d) if _int_lengths(g, weight) else float(d)
        return length, g.nodes[tree_path(pred, hops, t)].tolist()
    idx, lengths = _dijkstra_lengths(g, s, r, cutoff, weight)
    return keyed(g, idx, lengths), _tree_paths(g, idx, pred, hops)


def _tree_paths(g, idx, pred, hops):
    """{node: [source, ..., node]} for the reached indices ``idx`` (in that order): each path
    is its parent's plus the node, parents first (by tree depth)."""
    nodes = g.nodes.tolist()
    order = idx[np.argsort(hops[idx], kind="stable")].tolist()
    paths = {}
    root = order[0]
    paths[root] = [nodes[root]]
    for v, p in zip(order[1:], pred[order[1:]].tolist()):
        paths[v] = paths[p] + [nodes[v]]
    return {nodes[v]: paths[v] for v in idx.tolist()}


def single_source_dijkstra_path(G, source, cutoff=None, weight="weight", **backend_kwargs):
    """networkx's ``single_source_dijkstra_path`` computed by digraph: node -> a shortest path
    ``[source, ..., node]`` (the paths of :func:`single_source_dijkstra`).

    Raises
    ------
    networkx.NodeNotFound
        ``source`` is not a node.
    """
    return single_source_dijkstra(G, source, cutoff=cutoff, weight=weight, **backend_kwargs)[1]


def single_source_shortest_path_length(G, source, cutoff=None, **backend_kwargs):
    """networkx's ``single_source_shortest_path_length`` computed by digraph (exact hop counts).

    ``cutoff`` keeps what networkx's breadth-first search yields: levels ``L`` with
    ``L - 1 < cutoff`` (so ``L <= cutoff`` for an integer cutoff), and the source always.

    Raises
    ------
    networkx.NodeNotFound
        ``source`` is not a node.
    """
    import digraph

    kw = run_kwargs("single_source_shortest_path_length", backend_kwargs)
    g = as_graph(G, None)
    s = g.index(source)
    if s is None:
        raise nx.NodeNotFound(f"Source {source} is not in G")
    r = digraph.run(g.graph, "sssp", source=s, weights=False, **kw)
    # exact: no cutoff + 1 rounding
    idx, d = _distances(g, s, r.values, cutoff, lambda v: v - 1 < cutoff)
    return keyed(g, idx, d.astype(np.int64).tolist())


def shortest_path_length(G, source=None, target=None, weight=None, method="dijkstra",
                         **backend_kwargs):
    """networkx's ``shortest_path_length`` for one source, computed by digraph (exact).

    With ``target=None`` the lengths to every node reached (a dict, as networkx returns), else the
    length to ``target``.  ``weight=None`` counts hops (:func:`single_source_shortest_path_length`),
    otherwise :func:`single_source_dijkstra_path_length`; ``method="bellman-ford"`` gives the same
    answer on the non-negative weights digraph accepts.  ``source=None`` (every source, or every
    node to a target) is left to networkx (:func:`can_run` says so).

    Raises
    ------
    ValueError
        ``method`` is neither ``"dijkstra"`` nor ``"bellman-ford"``.
    networkx.NodeNotFound
        ``source`` (or, counting hops, ``target``) is not a node.
    networkx.NetworkXNoPath
        ``target`` is not reached from ``source``.
    NotImplementedError
        ``source=None``.
    """
    if method not in ("dijkstra", "bellman-ford"):
        raise ValueError(f"method not supported: {method}")
    if source is None:
        raise NotImplementedError("lengths from every node (source=None) run in networkx")
    if weight is None:
        if target is not None:
            g = as_graph(G, None)
            if g.index(source) is None or g.index(target) is None:
                raise nx.NodeNotFound(f"Either source {source} or target {target} is not in G")
        lengths = single_source_shortest_path_length(G, source, **backend_kwargs)
        if target is None:
            return lengths
        if target not in lengths:
            raise nx.NetworkXNoPath(f"No path between {source} and {target}.")
        return lengths[target]
    lengths = single_source_dijkstra_path_length(G, source, weight=weight, **backend_kwargs)
    if target is None:
        return lengths
    if target not in lengths:
        raise nx.NetworkXNoPath(f"Node {target} not reachable from {source}")
    return lengths[target]


def bfs_layers(G, sources, **backend_kwargs):
    """networkx's ``bfs_layers`` computed by digraph (exact layers).

    ``sources`` is a node or an iterable of nodes, as in networkx.  One source runs digraph's
    SSSP on unit weights (``mode``, ``device``, ``threads`` pass through); several run one
    breadth-first search from all of them (on the CPU, or the GPU of ``device``).

    Returns
    -------
    generator of lists
        The first layer is networkx's (``list(set(sources))``); each later one holds the same
        nodes as networkx's, in ``G``'s node order (networkx lists them in its search's order).

    Raises
    ------
    networkx.NetworkXError
        A source is not a node (raised when the generator is first advanced, as networkx does).
    """
    from ..bfs import bfs_levels, layers_of

    kw = run_kwargs("bfs_layers", backend_kwargs)
    g = as_graph(G, None)
    if sources in g:
        sources = [sources]
    first = list(set(sources))
    for x in first:
        if x not in g:
            return _raising(nx.NetworkXError(f"The node {x} is not in the graph."))
    if not first:
        return iter(())
    idx = [g.index(x) for x in first]
    if len(idx) == 1:
        levels = bfs_levels(g.graph, idx[0], **kw)
    else:
        levels = bfs_levels(g.graph, idx, device=kw.get("device", "cpu"))
    nodes = g.nodes
    return _layers(first, [nodes[layer].tolist() for layer in layers_of(levels)[1:]])


def _layers(first, rest):
    yield first
    yield from rest


def _raising(err):
    """A generator that raises ``err`` when first advanced, as networkx's generators do."""
    raise err
    yield
