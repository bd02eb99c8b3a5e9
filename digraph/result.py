"""What a run returns: the answer aligned with the graph's vertex ids, and its statistics."""

import numpy as np

from .errors import InvalidParameterError
from .stats_keys import STATS_FIELDS, STATS_GROUPS, STATS_KEYS, group_internals, stats_table

__all__ = ["Result", "RunStats", "STATS_KEYS", "STATS_GROUPS", "STATS_FIELDS", "group_internals",
           "stats_table", "flat_items"]

_COUNTERS = ("rounds", "vertex_updates", "arc_updates", "dense_rounds", "sparse_rounds",
             "paths_processed", "partitions_processed", "bytes_h2d", "bytes_d2h")
_TIMES = ("time_load", "time_preprocess", "time_transfer", "time_compile", "time_compute",
          "time_total")


class RunStats(dict):
    """The statistics of one run (docs/design.md §5): a dict with attribute access.

    Every key an engine may write is one of :data:`STATS_KEYS` (key → one-line meaning, in the
    groups of :data:`STATS_GROUPS`); docs/interface.md, "Run statistics", has the same table
    (:func:`stats_table`).  Every run has the keys of the first group; the others appear only
    where the run's algorithm, mode or device write them.  An engine's internals sit under their
    group's key (``stats["scc"]["split"]``; :data:`STATS_FIELDS`), the rest at the top.
    """

    @classmethod
    def new(cls, **kw):
        s = cls({k: 0 for k in _COUNTERS})
        s.update({k: 0.0 for k in _TIMES})
        s.update(kw)
        return s

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __str__(self):
        rows = []
        for k, v in flat_items(self):
            if isinstance(v, float) and k.startswith("time"):
                rows.append(f"  {k:<22}{v * 1e3:>14.2f} ms")
            elif isinstance(v, float):
                rows.append(f"  {k:<22}{v:>14.3g}")
            elif isinstance(v, (int, np.integer)) and not isinstance(v, bool):
                rows.append(f"  {k:<22}{v:>14,d}")
            else:
                rows.append(f"  {k:<22}{str(v):>14}")
        return "\n".join(rows)


def flat_items(stats):
    """``(key, value)`` pairs of a stats dict for a two-column table: a dict value (the route
    record) as one ``key.field`` pair a field that is given (not None, ``[]`` or ``""``), a list
    (the route's steps, hand-overs) as one string ``k=v, k=v; k=v, ...``."""
    def text(x):
        return f"{x:.4g}" if isinstance(x, float) else str(x)

    for k, v in stats.items():
        for f, x in (v.items() if isinstance(v, dict) else [(None, v)]):
            if f is not None and x in (None, [], ""):
                continue
            if isinstance(x, list):
                x = "; ".join(", ".join(f"{a}={text(b)}" for a, b in e.items())
                              if isinstance(e, dict) else text(e) for e in x)
            yield (k if f is None else f"{k}.{f}"), x


_DEFAULT = object()


def _is_vertex(graph, x):
    """Whether ``x`` is one of the graph's vertex ids (False for anything unhashable or of
    another kind)."""
    try:
        graph.index_of([x])
    except Exception:
        return False
    return True


class Result:
    """The answer of :func:`digraph.run`.

    Attributes
    ----------
    values : numpy.ndarray
        One value per vertex, aligned with ``graph.vertex_ids``.
    graph : digraph.Graph
    algorithm : str
    params : dict
        The parameters the run used (defaults filled in), including ``tol`` and ``max_iter``.
    stats : RunStats

    SSSP results also give shortest paths: :meth:`predecessors`, :meth:`predecessor_indices`
    and :meth:`path` (docs/results.md).
    """

    def __init__(self, values, graph, algorithm, params, stats):
        self.values = values
        self.graph = graph
        self.algorithm = algorithm
        self.params = params
        self.stats = stats
        self._trees = {}

    @property
    def vertex_ids(self):
        return self.graph.vertex_ids

    # ------------------------------------------------------------------ SSSP: paths
    def _tree(self, device):
        """(pred, hops) of the run's shortest-path tree, built once per device
        (:func:`digraph.traversal.shortest_path_tree`)."""
        if self.algorithm != "sssp":
            raise InvalidParameterError(
                f"predecessors and paths belong to SSSP results (digraph.run(g, 'sssp', "
                f"source=...)); this result is of {self.algorithm!r}")
        from .checks import check_device as _check_device
        from .traversal import shortest_path_tree
        dev = _check_device(self.params.get("device", "cpu") if device is None else device)
        got = self.__dict__.setdefault("_trees", {}).get(dev)
        if got is None:
            pred, hops = shortest_path_tree(self.graph, self.values, self.params["source"],
                                            weights=bool(self.params.get("weights", True)),
                                            device=dev)
            pred.flags.writeable = False
            hops.flags.writeable = False
            got = self._trees[dev] = (pred, hops)
        return got

    def predecessor_indices(self, device=None):
        """Each vertex's predecessor on a shortest path from the source, as an internal index.

        The canonical shortest-path tree over *tight* arcs (``d(u) + w == d(v)`` in float64):
        the parent of ``v`` is the smallest index ``u`` among its tight in-neighbours with one
        tree arc fewer from the source (docs/results.md).  SSSP results only.

        Parameters
        ----------
        device : str, optional
            Where to build the tree: ``"cpu"`` or a GPU (``"cuda"``, ``"cuda:N"``); default the
            run's device.  Every device gives the same array.

        Returns
        -------
        numpy.ndarray of int64 (n), read-only
            Aligned with ``vertex_ids``; -1 for the source and the vertices it does not reach.

        Raises
        ------
        InvalidParameterError
            The result is not of ``"sssp"``, or its distances are not the exact answer (the
            partial result of an unconverged run).
        NotAvailableError
            A GPU was named and none is available.
        """
        return self._tree(device)[0]

    def predecessors(self, missing=_DEFAULT, device=None):
        """Each vertex's predecessor on a shortest path from the source, as a vertex id.

        Parameters
        ----------
        missing : optional
            The entry of the source and of the vertices it does not reach: default -1 when the
            vertex ids are integers (an int64 array), None otherwise (an object array).  An
            integer with integer ids gives an int64 array; anything else an object array.
        device : str, optional
            As in :meth:`predecessor_indices`.

        Returns
        -------
        numpy.ndarray (n)
            ``vertex_ids[predecessor_indices()]``, ``missing`` where there is none.

        Raises
        ------
        InvalidParameterError
            As in :meth:`predecessor_indices`; ``missing`` is a vertex id of the graph (pass
            another, or use :meth:`predecessor_indices`).
        """
        pred = self._tree(device)[0]
        ids = self.graph.vertex_ids
        int_ids = np.issubdtype(ids.dtype, np.integer)
        if missing is _DEFAULT:
            missing = -1 if int_ids else None
        ints = int_ids and isinstance(missing, (int, np.integer)) \
            and not isinstance(missing, (bool, np.bool_))
        if (np.any(ids == missing) if ints else _is_vertex(self.graph, missing)):
            raise InvalidParameterError(
                f"missing={missing!r} is a vertex id of this graph: pass another missing= or use "
                "predecessor_indices()")
        has = pred >= 0
        if ints:
            out = np.full(pred.size, missing, dtype=np.int64)
        else:
            out = np.empty(pred.size, dtype=object)
            out.fill(missing)
        out[has] = ids[pred[has]]
        return out

    def path(self, target, device=None):
        """The vertex ids of a shortest path from the source to ``target``.

        The path of the canonical tree (:meth:`predecessor_indices`): its arcs are tight, so the
        sum of their weights, added in order in float64, is ``values`` of ``target``.

        Parameters
        ----------
        target : vertex id
        device : str, optional
            As in :meth:`predecessor_indices`.

        Returns
        -------
        list
            ``[source, ..., target]`` (``[source]`` when ``target`` is the source); ``[]`` when
            the source does not reach ``target``.

        Raises
        ------
        VertexNotFoundError
            ``target`` is not a vertex (the error names it).
        InvalidParameterError
            As in :meth:`predecessor_indices`.
        """
        from .traversal import one_vertex, tree_path
        t = one_vertex(self.graph, target, "target")
        pred, hops = self._tree(device)
        return self.graph.vertex_ids[tree_path(pred, hops, t)].tolist()

    def to_dict(self):
        """{original vertex id: value} (plain Python numbers)."""
        return dict(zip(self.graph.vertex_ids.tolist(), self.values.tolist()))

    def __getitem__(self, vertex):
        """The value of one vertex, by its original id."""
        return self.values[self.graph.index_of(vertex)].item()

    def top(self, k=10, largest=True):
        """The ``k`` vertices with the largest (or smallest) finite values: list of (id, value)."""
        v = self.values.astype(np.float64)
        idx = np.flatnonzero(np.isfinite(v))
        k = min(int(k), idx.size)
        if k <= 0:
            return []
        key = -v[idx] if largest else v[idx]
        part = idx[np.argpartition(key, k - 1)[:k]] if k < idx.size else idx
        part = part[np.lexsort((part, -v[part] if largest else v[part]))]
        ids = self.graph.vertex_ids
        return [(ids[i].item() if hasattr(ids[i], "item") else ids[i], self.values[i].item())
                for i in part]

    def __repr__(self):
        return (f"<digraph.Result {self.algorithm} on {self.graph.num_vertices} vertices: "
                f"{self.stats.get('rounds', 0)} rounds, mode={self.stats.get('mode')}>")
