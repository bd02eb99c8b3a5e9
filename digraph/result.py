"""What a run returns: the answer aligned with the graph's vertex ids, and its statistics."""

import numpy as np

__all__ = ["Result", "RunStats"]

_COUNTERS = ("rounds", "vertex_updates", "arc_updates", "dense_rounds", "sparse_rounds",
             "paths_processed", "partitions_processed", "bytes_h2d", "bytes_d2h", "bytes_d2d")
_TIMES = ("time_load", "time_preprocess", "time_transfer", "time_compile", "time_compute",
          "time_total")


class RunStats(dict):
    """The counters of docs/design.md §5, as a dict with attribute access.

    Keys: ``mode`` (the mode that ran), ``engine`` (``"<where>-<mode>"``), ``route`` (why the
    router chose it, or ``"asked for"``), ``requested_mode`` (None: automatic), ``device``,
    ``threads``, ``converged``, ``rounds``, ``vertex_updates``,
    ``arc_updates``, ``dense_rounds``/``sparse_rounds`` (BSP directions), ``paths_processed``,
    ``partitions_processed``, ``bytes_h2d``/``bytes_d2h``/``bytes_d2d``, and seconds
    ``time_load``, ``time_preprocess``, ``time_transfer``, ``time_compile`` (Numba compilation or
    cache loading on the first call of a process, wherever in the run a kernel was first called:
    :mod:`digraph.compiling`), ``time_compute``, ``time_total``; linear
    algorithms add ``error_bound`` (the bound on the answer's L1 error the run stopped with) and
    ``residual_l1``, and, when ``tol`` lies below what float64 can certify (``error_bound > tol``),
    ``floor_limited`` and ``error_floor`` (the bound the residual's rounding alone allows).
    Linear systems whose columns may sum to 1 or more (adsorption) add ``error_route``
    (``"dual"``, or ``"linf"`` when no dual weights were found), ``dual_sweeps``, ``dual_max``
    and ``time_dual`` (:mod:`digraph.dispatch.dual_bound`).  ``time_route`` is the router's share
    of ``time_preprocess`` (a condensation built to choose).  An automatic PageRank-like run that
    began as a power probe and handed over adds ``probe_rounds`` and ``probe_ratio``
    (:mod:`digraph.dispatch.route`); its counters include the probe's rounds.

    Engine-specific keys: ``formulation`` (``"google"``) and ``gamma`` (γ1) for ``power``, plus
    ``power_group`` and ``power_pull`` (``"grouped"``/``"binned"``) on a GPU and
    ``dangling_vertices`` with ``dangling=``; ``peel`` (``"bz"``/``"pkc"``) and ``peel_scans`` for
    ``peel``; ``queue`` (``"fifo"``/``"heap"``) and ``queue_phases`` for ``vertex-async`` on
    min/max systems (small frontiers run on one thread, each phase one round); ``gpu`` and
    ``dtype`` on GPUs.
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
        for k, v in self.items():
            if isinstance(v, float) and k.startswith("time"):
                rows.append(f"  {k:<22}{v * 1e3:>14.2f} ms")
            elif isinstance(v, float):
                rows.append(f"  {k:<22}{v:>14.3g}")
            elif isinstance(v, (int, np.integer)) and not isinstance(v, bool):
                rows.append(f"  {k:<22}{v:>14,d}")
            else:
                rows.append(f"  {k:<22}{str(v):>14}")
        return "\n".join(rows)


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
    """

    def __init__(self, values, graph, algorithm, params, stats):
        self.values = values
        self.graph = graph
        self.algorithm = algorithm
        self.params = params
        self.stats = stats

    @property
    def vertex_ids(self):
        return self.graph.vertex_ids

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
        return [(ids[i].item() if hasattr(ids[i], "item") else ids[i], self.values[i].item()) for i in part]

    def __repr__(self):
        return (f"<digraph.Result {self.algorithm} on {self.graph.num_vertices} vertices: "
                f"{self.stats.get('rounds', 0)} rounds, mode={self.stats.get('mode')}>")
