"""Cores and connected components: ``core_number``, and ``strongly_connected_components`` and
``weakly_connected_components`` (generators of node sets).
"""

import networkx as nx
import numpy as np

from .common import keyed, run_kwargs
from .convert import as_graph

_SELF_LOOP_MSG = ("Input graph has self loops which is not permitted; "
                  "Consider using G.remove_edges_from(nx.selfloop_edges(G)).")


def core_number(G, **backend_kwargs):
    """networkx's ``core_number`` computed by digraph (h-index iteration; exact).

    Returns
    -------
    dict
        Node -> core number (Python ints).

    Raises
    ------
    networkx.NetworkXNotImplemented
        A multigraph, or a graph with self-loops (networkx's message).
    """
    import digraph

    kw = run_kwargs("core_number", backend_kwargs)
    g = as_graph(G, None)
    if g.is_multigraph():
        raise nx.NetworkXNotImplemented("not implemented for multigraph type")
    gr = g.graph
    if gr.num_arcs and np.any(gr.arc_sources == gr.out_targets):
        raise nx.NetworkXNotImplemented(_SELF_LOOP_MSG)
    if len(g) == 0:
        return {}
    r = digraph.run(gr, "kcore", **kw)
    return keyed(g, slice(None), r.values.tolist())


def strongly_connected_components(G, **backend_kwargs):
    """networkx's ``strongly_connected_components`` computed by digraph (Tarjan; exact).

    Returns
    -------
    generator of sets
        One set of nodes per component, in the order Tarjan's search completes them (its roots
        and each node's successors taken in ``G``'s node order): a reverse topological order of
        the condensation — every component comes after the components it reaches — as
        networkx's own search yields them; networkx scans successors in adjacency order, so
        unrelated components may come in another order.

    Raises
    ------
    networkx.NetworkXNotImplemented
        ``G`` is undirected (networkx's message).
    digraph.errors.NotAvailableError
        ``device`` names a GPU (``can_run`` says so first): digraph labels SCCs on the CPU only.
    """
    from ..components import scc_labels

    kw = run_kwargs("strongly_connected_components", backend_kwargs)
    if not G.is_directed():
        raise nx.NetworkXNotImplemented("not implemented for undirected type")
    g = as_graph(G, None)
    return _component_sets(g, scc_labels(g.graph, order="reverse-topological",
                                         device=kw.get("device", "cpu")))


def weakly_connected_components(G, **backend_kwargs):
    """networkx's ``weakly_connected_components`` computed by digraph (hook and jump; exact).

    Runs on the CPU or, with ``device="cuda"``, on a GPU.

    Returns
    -------
    generator of sets
        One set of nodes per component, in the order of each component's first node in
        ``G``'s node order (networkx's order).

    Raises
    ------
    networkx.NetworkXNotImplemented
        ``G`` is undirected (networkx's message).
    """
    from ..components import wcc_labels

    kw = run_kwargs("weakly_connected_components", backend_kwargs)
    if not G.is_directed():
        raise nx.NetworkXNotImplemented("not implemented for undirected type")
    g = as_graph(G, None)
    return _component_sets(g, wcc_labels(g.graph, device=kw.get("device", "cpu"),
                                         threads=kw.get("threads")))


def _component_sets(g, labels):
    from ..components import component_members
    nodes = g.nodes
    return (set(nodes[m].tolist()) for m in component_members(labels))
