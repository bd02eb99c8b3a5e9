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
:mod:`digraph.components`, :mod:`digraph.traversal` or :mod:`digraph.bfs`; only the translation of arguments,
results and errors lives here.

Keywords of :func:`digraph.run` pass through: ``mode=``, ``device=``, ``threads=``; their defaults
come from ``nx.config.backends.digraph`` when the backend is installed through its entry points.
"""

import inspect
import math
import numbers

import networkx as nx
import numpy as np

from ..errors import ConvergenceError
from ..graph import Graph
from .info import FUNCTIONS

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

BACKEND = "digraph"
RUN_KEYWORDS = ("mode", "device", "threads")

_SELF_LOOP_MSG = ("Input graph has self loops which is not permitted; "
                  "Consider using G.remove_edges_from(nx.selfloop_edges(G)).")


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
               (False, True): nx.MultiGraph, (False, False): nx.Graph}[(self.directed, self.multigraph)]
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


# ---------------------------------------------------------------------------- conversions

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
    if preserve_edge_attrs is True or (isinstance(preserve_edge_attrs, dict) and preserve_edge_attrs):
        raise NotImplementedError("the digraph backend keeps one numeric edge attribute, not all")
    weight = None
    if edge_attrs:
        if len(edge_attrs) > 1:
            raise NotImplementedError(f"the digraph backend keeps one edge attribute, got {sorted(edge_attrs)}")
        (weight, default), = edge_attrs.items()
        if default != 1:
            raise NotImplementedError(f"the digraph backend reads missing weights as 1, not {default!r}")
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


# ---------------------------------------------------------------------------- can_run / should_run

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
    return _CHECKS[name](G, a)


def should_run(name, args, kwargs):
    """Always True: whoever names or prioritises the backend wants it to run."""
    return True


def _number(x):
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(x)


def _weights_ok(G, weight):
    """True, or why the weights differ from what digraph accepts (finite, >= 0, numeric)."""
    if weight is None:
        return True
    if callable(weight):
        return "weight is a function; digraph reads a numeric edge attribute"
    if isinstance(G, DigraphGraph):
        if G.weight != weight and G.graph.weighted:
            return f"graph converted with weight {G.weight!r}, call asks for {weight!r}"
        w = G.graph.weights
        if w is None:
            return True if G.weight == weight else f"graph converted without weight {weight!r}"
    else:
        try:
            w = np.fromiter((d for *_, d in G.edges(data=weight, default=1)), dtype=np.float64,
                            count=G.number_of_edges())
        except (TypeError, ValueError):
            return f"edge attribute {weight!r} holds values that are not real numbers"
    if w.size and not np.all(np.isfinite(w)):
        return f"edge attribute {weight!r} holds NaN or infinite values"
    if w.size and np.any(w < 0):
        return f"edge attribute {weight!r} holds negative values"
    return True


def _check_pagerank(G, a):
    alpha, tol, max_iter = a.get("alpha", 0.85), a.get("tol", 1e-6), a.get("max_iter", 100)
    if a.get("nstart") is not None:
        return "nstart is not supported (digraph starts from its own residual state)"
    dangling = a.get("dangling")
    if dangling is not None:
        if not isinstance(dangling, dict):
            return "dangling must be a dict"
        if not all(_number(v) and v >= 0 for v in dangling.values()):
            return "dangling values must be finite and non-negative"
        try:
            kw = _run_kwargs("pagerank", a.get("backend_kwargs", {}))
        except TypeError as e:
            return str(e)
        if kw.get("mode") not in (None, "power") or kw.get("device", "cpu") != "cpu":
            return ("dangling is answered by digraph's CPU power iteration only (mode='power' or "
                    "None, device='cpu')")
    if not (_number(alpha) and 0 < alpha < 1):
        return "alpha must be a number in (0, 1)"
    if not (_number(tol) and tol > 0):
        return "tol must be a positive number"
    if not isinstance(max_iter, numbers.Integral) or isinstance(max_iter, bool):
        return "max_iter must be an integer"
    p = a.get("personalization")
    if p is not None:
        if not isinstance(p, dict):
            return "personalization must be a dict"
        if not all(_number(v) and v >= 0 for v in p.values()):
            return "personalization values must be finite and non-negative"
    weight = a.get("weight", "weight")
    ok = _weights_ok(G, weight)
    if ok is True and weight is not None and not _out_sums_finite(G, weight):
        return ("a node's out-edge weights sum to more than float64 holds (digraph refuses them; "
                "networkx counts that node as dangling)")
    return ok


def _out_sums_finite(G, weight):
    """Whether every node's out-edge weight sum fits float64 (digraph refuses those that do not)."""
    if isinstance(G, DigraphGraph):
        g = G.graph
        if not g.weighted:
            return True
        sums = np.bincount(g.arc_sources, weights=g.weights, minlength=g.num_vertices)
        return bool(np.all(np.isfinite(sums)))
    deg = G.out_degree(weight=weight) if G.is_directed() else G.degree(weight=weight)
    return all(math.isfinite(float(d)) for _, d in deg)


def _check_core_number(G, a):
    return True


def _check_dijkstra(G, a):
    cutoff = a.get("cutoff")
    if cutoff is not None and not (isinstance(cutoff, numbers.Real) and not math.isnan(cutoff)):
        return "cutoff must be a number"
    return _weights_ok(G, a.get("weight", "weight"))


def _check_bfs(G, a):
    cutoff = a.get("cutoff")
    if cutoff is not None and not (isinstance(cutoff, numbers.Real) and not math.isnan(cutoff)):
        return "cutoff must be a number"
    return True


def _check_scc(G, a):
    try:
        kw = _run_kwargs("strongly_connected_components", a.get("backend_kwargs", {}))
    except TypeError as e:
        return str(e)
    if kw.get("device", "cpu") != "cpu":
        return ("digraph labels strongly connected components on the CPU only (Tarjan), not on "
                f"device {kw['device']!r}")
    return True


def _check_any(G, a):
    return True


def _check_spl(G, a):
    method = a.get("method", "dijkstra")
    if method not in ("dijkstra", "bellman-ford"):
        return f"method {method!r} is not one networkx knows (it raises ValueError itself)"
    if a.get("source") is None:
        return "lengths from every node (source=None) run in networkx; digraph answers one source"
    return _weights_ok(G, a.get("weight"))


_CHECKS = {
    "pagerank": _check_pagerank,
    "shortest_path_length": _check_spl,
    "core_number": _check_core_number,
    "single_source_dijkstra_path_length": _check_dijkstra,
    "single_source_shortest_path_length": _check_bfs,
    "single_source_dijkstra": _check_dijkstra,
    "single_source_dijkstra_path": _check_dijkstra,
    "strongly_connected_components": _check_scc,
    "weakly_connected_components": _check_any,
    "bfs_layers": _check_any,
}


# ---------------------------------------------------------------------------- helpers

def _as_graph(G, weight):
    """The :class:`DigraphGraph` of ``G`` (converted here when called directly)."""
    if isinstance(G, DigraphGraph):
        if weight is not None and G.weight != weight:
            raise NotImplementedError(
                f"graph converted with weight {G.weight!r}, call asks for weight {weight!r}")
        return G
    return convert_from_nx(G, edge_attrs=None if weight is None else {weight: 1})


def _run_kwargs(name, backend_kwargs):
    """The keywords for :func:`digraph.run`: given ones, else ``nx.config.backends.digraph``."""
    unknown = sorted(set(backend_kwargs) - set(RUN_KEYWORDS))
    if unknown:
        raise TypeError(f"{name}() got unexpected keyword argument(s) {', '.join(unknown)} "
                        f"(the digraph backend accepts {', '.join(RUN_KEYWORDS)})")
    try:
        cfg = nx.config.backends[BACKEND]
    except (KeyError, AttributeError, TypeError):
        cfg = None
    out = {}
    for k in RUN_KEYWORDS:
        v = backend_kwargs.get(k, cfg.get(k) if cfg is not None else None)
        if v is not None:
            out[k] = v
    return out


def _keyed(g, idx, values):
    """{node: value} for internal indices ``idx`` (original node objects as keys)."""
    return dict(zip(g.nodes[idx].tolist(), values))


# ---------------------------------------------------------------------------- functions

def pagerank_error_bound(n, alpha, tol):
    """digraph's L1 error bound for networkx's ``tol``: ``n * tol * min(1, alpha / (1 - alpha))``.

    networkx stops when one power iteration moves the vector by less than ``n * tol`` (L1); the
    iteration contracts differences by ``alpha``, so its answer is within
    ``alpha / (1 - alpha) * n * tol`` of the exact one.  The bound returned is never larger than
    that guarantee, nor than ``n * tol``.
    """
    return n * tol * min(1.0, alpha / (1.0 - alpha))


def pagerank_extra_rounds(alpha, bound):
    """Rounds a bulk-synchronous sweep needs at worst to certify ``bound``: the pending residual
    starts at ``1 - alpha`` (L1), shrinks at least by ``alpha`` a round, and the run stops when
    ``2 R / ((1 - alpha) sum(x)) <= bound`` with ``sum(x) >= 1 - alpha``."""
    return max(0, math.ceil(math.log(2.0 / ((1.0 - alpha) * bound)) / math.log(1.0 / alpha)))


def pagerank(G, alpha=0.85, personalization=None, max_iter=100, tol=1.0e-6, nstart=None,
             weight="weight", dangling=None, **backend_kwargs):
    """networkx's ``pagerank`` computed by digraph.

    Parameters are networkx's.  ``tol`` is mapped to digraph's bound on the L1 error of the answer
    as ``n * tol * min(1, alpha / (1 - alpha))``: networkx stops once one power iteration changes
    the vector by less than ``n * tol`` in L1, which guarantees an L1 error below
    ``alpha / (1 - alpha) * n * tol`` (the iteration contracts differences by ``alpha``), so the
    answer returned here is never less accurate than networkx's guarantee, nor than ``n * tol``.
    digraph certifies that bound from its pending residual, whose L1 norm a round shrinks by a
    factor alpha in the worst case, while networkx's step size often shrinks much faster: the
    two round counts are not comparable.  ``max_iter < 1`` raises as in networkx; otherwise
    digraph gets ``max_iter + K`` rounds, ``K = ceil(log(2 / ((1 - alpha) t)) / log(1 / alpha))``
    for the error bound ``t`` (the rounds a bulk-synchronous sweep needs at worst), and the
    exception is raised only when even these do not reach the bound.

    Returns
    -------
    dict
        Node -> PageRank (Python floats), summing to 1.

    Raises
    ------
    networkx.PowerIterationFailedConvergence
        ``max_iter`` < 1, or the round limit was reached before the error bound.
    ZeroDivisionError
        The personalization sums to 0 over the graph's nodes (as networkx).
    NotImplementedError
        ``nstart`` given (``can_run`` says so first).

    ``dangling`` is networkx's: the mass of the nodes without out-edges (out-weight 0) follows it
    instead of the personalization (keys that are not nodes are ignored, as networkx does; a
    dangling dict summing to 0 over the nodes raises ``PowerIterationFailedConvergence``, as
    networkx's NaN iteration does).  It is answered by digraph's Google-matrix power iteration
    (``mode="power"``, the only mode that runs it; ``can_run`` refuses another mode or a GPU),
    with the same error bound.
    """
    import digraph

    if nstart is not None:
        raise NotImplementedError(
            "pagerank: the digraph backend does not support nstart= (digraph starts from its own "
            "state; the answer does not depend on it); call networkx's own pagerank for it")
    kw = _run_kwargs("pagerank", backend_kwargs)
    g = _as_graph(G, weight)
    n = len(g)
    if n == 0:
        return {}
    if max_iter < 1:
        raise nx.PowerIterationFailedConvergence(max_iter)
    p = None
    if personalization is not None:
        index = g.node_index
        hits = [(index[k], v) for k, v in personalization.items() if g.index(k) is not None]
        p = np.zeros(n, dtype=np.float64)
        if hits:
            idx, vals = zip(*hits)
            p[list(idx)] = np.asarray(vals, dtype=np.float64)
        if not p.sum() > 0:
            raise ZeroDivisionError("personalization sums to 0 over the graph's nodes")
    d = None
    if dangling is not None:
        index = g.node_index
        d = np.zeros(n, dtype=np.float64)
        for k, v in dangling.items():
            if g.index(k) is not None:
                d[index[k]] += float(v)
        if not d.sum() > 0:  # networkx divides by 0 and its NaN iteration never converges
            raise nx.PowerIterationFailedConvergence(max_iter)
    bound = pagerank_error_bound(n, alpha, tol)
    try:
        r = digraph.run(g.graph, "pagerank", alpha=alpha, personalization=p, dangling=d,
                        weights=weight is not None, tol=bound,
                        max_iter=int(max_iter) + pagerank_extra_rounds(alpha, bound), **kw)
    except ConvergenceError:
        raise nx.PowerIterationFailedConvergence(max_iter) from None
    return _keyed(g, slice(None), r.values.tolist())


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

    kw = _run_kwargs("core_number", backend_kwargs)
    g = _as_graph(G, None)
    if g.is_multigraph():
        raise nx.NetworkXNotImplemented("not implemented for multigraph type")
    gr = g.graph
    if gr.num_arcs and np.any(gr.arc_sources == gr.out_targets):
        raise nx.NetworkXNotImplemented(_SELF_LOOP_MSG)
    if len(g) == 0:
        return {}
    r = digraph.run(gr, "kcore", **kw)
    return _keyed(g, slice(None), r.values.tolist())


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
    kw = _run_kwargs(name, backend_kwargs)
    if callable(weight):
        raise NotImplementedError("the digraph backend reads a numeric edge attribute, not a function")
    g = _as_graph(G, weight)
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
    return _keyed(g, idx, lengths)


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
    return _keyed(g, idx, lengths), _tree_paths(g, idx, pred, hops)


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

    kw = _run_kwargs("single_source_shortest_path_length", backend_kwargs)
    g = _as_graph(G, None)
    s = g.index(source)
    if s is None:
        raise nx.NodeNotFound(f"Source {source} is not in G")
    r = digraph.run(g.graph, "sssp", source=s, weights=False, **kw)
    idx, d = _distances(g, s, r.values, cutoff, lambda v: v - 1 < cutoff)  # exact: no cutoff + 1 rounding
    return _keyed(g, idx, d.astype(np.int64).tolist())


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
            g = _as_graph(G, None)
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


# ---------------------------------------------------------------------------- components, BFS

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

    kw = _run_kwargs("strongly_connected_components", backend_kwargs)
    if not G.is_directed():
        raise nx.NetworkXNotImplemented("not implemented for undirected type")
    g = _as_graph(G, None)
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

    kw = _run_kwargs("weakly_connected_components", backend_kwargs)
    if not G.is_directed():
        raise nx.NetworkXNotImplemented("not implemented for undirected type")
    g = _as_graph(G, None)
    return _component_sets(g, wcc_labels(g.graph, device=kw.get("device", "cpu"),
                                         threads=kw.get("threads")))


def _component_sets(g, labels):
    from ..components import component_members
    nodes = g.nodes
    return (set(nodes[m].tolist()) for m in component_members(labels))


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

    kw = _run_kwargs("bfs_layers", backend_kwargs)
    g = _as_graph(G, None)
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
