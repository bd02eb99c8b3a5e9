"""The converted graph and the conversions networkx calls: :class:`DigraphGraph` (a
:class:`digraph.Graph` plus the node list), ``convert_from_nx``, ``convert_to_nx``, and
``as_graph``, through which every function accepts a networkx graph as well as a converted one.
"""

import networkx as nx
import numpy as np

from ..graph import Graph
from .common import BACKEND


class DigraphGraph:
    """A networkx graph converted for digraph.

    Attributes
    ----------
    graph : digraph.Graph
        Internal vertex ``i`` is the ``i``-th node of the networkx graph (``vertex_ids`` are
        ``0..n-1``); an undirected edge is two arcs (a self-loop one arc).
    nodes : numpy.ndarray of object
        The original node objects, in the networkx graph's order.
    weight : str or None
        The edge attribute the arc weights were read from (missing attribute = 1), None when
        unweighted.
    weight_kind : {"int", "float", "mixed"}
        Python type of every weight (missing = the int 1): networkx's Dijkstra returns sums of
        them, so integer weights give integer distances.
    graph_attrs : dict
        ``G.graph`` (a copy), kept so that :func:`convert_to_nx` can restore it.
    """

    __networkx_backend__ = BACKEND

    def __init__(self, graph, nodes, *, directed, multigraph, weight=None, weight_kind="int",
                 graph_attrs=None):
        self.graph = graph
        self.nodes = nodes
        self.directed = bool(directed)
        self.multigraph = bool(multigraph)
        self.weight = weight
        self.weight_kind = weight_kind
        self.graph_attrs = dict(graph_attrs or {})
        self._index = None

    @property
    def node_index(self):
        """Dict node -> internal index (built on first use; the networkx lookup semantics)."""
        if self._index is None:
            self._index = dict(zip(self.nodes.tolist(), range(self.nodes.size)))
        return self._index

    def index(self, node):
        """Internal index of ``node``, or None when it is not a node (unhashable: None)."""
        try:
            return self.node_index.get(node)
        except TypeError:
            return None

    def is_directed(self):
        return self.directed

    def is_multigraph(self):
        return self.multigraph

    def number_of_nodes(self):
        return int(self.nodes.size)

    def __len__(self):
        return int(self.nodes.size)

    def __contains__(self, node):
        return self.index(node) is not None

    def to_networkx(self):
        """The graph back as a networkx graph of the original class family (node and edge
        attributes other than the weight are not kept)."""
        g = self.graph
        cls = {(True, True): nx.MultiDiGraph, (True, False): nx.DiGraph,
               (False, True): nx.MultiGraph,
               (False, False): nx.Graph}[(self.directed, self.multigraph)]
        out = cls()
        out.graph.update(self.graph_attrs)
        out.add_nodes_from(self.nodes.tolist())
        src, dst = g.arc_sources.astype(np.int64), g.out_targets.astype(np.int64)
        keep = np.ones(src.size, bool) if self.directed else src <= dst  # each edge once
        u = self.nodes[src[keep]].tolist()
        v = self.nodes[dst[keep]].tolist()
        if self.weight is not None and g.weights is not None:
            out.add_weighted_edges_from(zip(u, v, g.weights[keep].tolist()), weight=self.weight)
        else:
            out.add_edges_from(zip(u, v))
        return out

    def __repr__(self):
        return f"<DigraphGraph {self.graph!r}, weight={self.weight!r}>"


def convert_from_nx(G, edge_attrs=None, node_attrs=None, preserve_edge_attrs=False,
                    preserve_node_attrs=False, preserve_graph_attrs=False, name=None,
                    graph_name=None):
    """Convert a networkx graph for digraph (networkx calls this; cached on ``G``).

    Parameters
    ----------
    G : networkx.Graph, DiGraph, MultiGraph or MultiDiGraph
    edge_attrs : dict, optional
        ``{attribute: default}``: at most one attribute (the weight) with default 1.
    node_attrs, preserve_node_attrs, preserve_graph_attrs, name, graph_name
        Accepted for the interface; digraph's functions use no node attributes.
    preserve_edge_attrs : bool
        Must be False (digraph keeps one numeric edge attribute).

    Returns
    -------
    DigraphGraph

    Raises
    ------
    NotImplementedError
        Several edge attributes, all of them, or a default weight other than 1 were asked for.
    """
    from ..io.objects import from_networkx

    if isinstance(G, DigraphGraph):
        return G
    if preserve_edge_attrs is True or (isinstance(preserve_edge_attrs, dict)
                                       and preserve_edge_attrs):
        raise NotImplementedError("the digraph backend keeps one numeric edge attribute, not all")
    weight = None
    if edge_attrs:
        if len(edge_attrs) > 1:
            raise NotImplementedError("the digraph backend keeps one edge attribute, got "
                                      f"{sorted(edge_attrs)}")
        (weight, default), = edge_attrs.items()
        if default != 1:
            raise NotImplementedError("the digraph backend reads missing weights as 1, not "
                                      f"{default!r}")
    loaded = from_networkx(G, weight=weight, weighted=None if weight is not None else False)
    # internal ids 0..n-1, so that lookups go through the node dict (networkx's semantics)
    graph = Graph(num_vertices=loaded.num_vertices, out_offsets=loaded.out_offsets,
                  out_targets=loaded.out_targets, in_offsets=loaded.in_offsets,
                  in_arcs=loaded.in_arcs, weights=loaded.weights,
                  vertex_ids=np.arange(loaded.num_vertices, dtype=np.int64),
                  directed=loaded.directed, name=loaded.name)
    nodes = np.empty(len(G), dtype=object)
    nodes[:] = list(G)  # slice assignment keeps tuples as single objects
    kind = "int"
    if weight is not None and graph.weighted:
        kinds = set(map(type, (d for *_, d in G.edges(data=weight, default=1))))
        kind = "int" if kinds <= {int, bool} else ("float" if kinds <= {float} else "mixed")
    return DigraphGraph(graph, nodes, directed=G.is_directed(), multigraph=G.is_multigraph(),
                        weight=weight, weight_kind=kind, graph_attrs=G.graph)


def convert_to_nx(obj, *, name=None):
    """A :class:`DigraphGraph` back to networkx; any other object (a result dict) unchanged."""
    if isinstance(obj, DigraphGraph):
        return obj.to_networkx()
    return obj


def as_graph(G, weight):
    """The :class:`DigraphGraph` of ``G`` (converted here when called directly)."""
    if isinstance(G, DigraphGraph):
        if weight is not None and G.weight != weight:
            raise NotImplementedError(
                f"graph converted with weight {G.weight!r}, call asks for weight {weight!r}")
        return G
    return convert_from_nx(G, edge_attrs=None if weight is None else {weight: 1})
