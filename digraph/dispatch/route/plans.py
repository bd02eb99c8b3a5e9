"""What the router decides: a :class:`Plan` (mode, engine, placement, why), and the reason
codes (:data:`CODES`) it records in ``stats["route"]``."""

from dataclasses import dataclass

from ..engines.registry import find

__all__ = ["Plan", "CODES"]

#: the reason codes of ``stats["route"]["code"]`` (a plan) and of its ``placed`` and ``steps``
CODES = {
    "asked": "the mode was named (mode=)",
    "default": "the family's default on this placement",
    "dag-orders-the-rest": "the largest component holds less than the threshold: the SCC engine",
    "small-graph": "PageRank on a graph too small for a power probe to pay: the SCC engine",
    "giant-component-probe": "PageRank, one component may hold most arcs: a power-iteration probe",
    "giant-component-bsp": "a system without the rank-one term, one giant component: bsp "
                           "first (its estimate the lower), then the SCC engine timed too",
    "giant-component-scc": "a system without the rank-one term, one giant component: the SCC "
                           "engine first (its estimate the lower), then bsp timed too",
    "estimated": "CPU linear: the SCC engine, bsp or (PageRank without a giant component) "
                 "power, the lowest estimate for the thread count",
    "measuring": "CPU linear, estimates close: the engine not yet timed on this graph runs",
    "measured": "CPU linear, estimates close: the faster engine measured on this graph",
    "probe-tripped": "a power probe tripped (|lambda2| near 1): the SCC engine or bsp",
    "probe-continued": "a power probe slowed, but its accelerated rounds were measured to "
                       "finish sooner than the SCC engine or bsp would: power to the end",
    "road-like": "min/max on one GPU, BFS balls keep most arcs inside: clusters",
    "pathset-held": "min/max on one GPU, the graph holds its PathSet: the path walk",
    "power-on-gpus": "PageRank on GPUs: the power iteration",
    "affine-power-on-gpu": "a sum not normalised, on one GPU: the power iteration of b + A x",
    "streamed": "one GPU, a graph too big for it or batch_arcs=: bsp streams the arcs",
    "dangling": "dangling= is answered by the power iteration only",
    "cluster-power": "a Dask cluster (cluster=), a linear system: the power iteration (the "
                     "Google matrix's or the affine map's)",
    "cluster-bsp": "a Dask cluster (cluster=), a min/max system: bsp rounds over the workers' "
                   "ranges",
    "cluster-hindex": "a Dask cluster (cluster=), k-core: the h-index bsp rounds over the "
                      "workers' ranges of undirected neighbour lists",
    "one-shard": "one GPU: bsp run by the sharded engine as one shard",
    "sharded": "several GPUs: sharded over the GPUs used",
    "first-gpu": "several GPUs named, one used: the one-GPU engine on the first",
    "too-big": "the graph does not fit in one GPU: sharded over every GPU named",
    "fewer-threads": "CPU threads, too few arcs for them all: one thread for each "
                     "RouteSettings.thread_arcs arcs",
    "core-left-free": "CPU threads on every core the process may run on: one core left free "
                      "(RouteSettings.core_stall)",
    "hand-over": "an engine went on in another from the state reached",
    "over-time": "a run timing an engine passed explore_cap times the faster engine's time "
                 "measured on the graph: the faster answered",
}


@dataclass(frozen=True)
class Plan:
    """What will run: ``mode`` (one of :data:`MODES`), ``engine`` (``"<where>-<mode>"``, e.g.
    ``"cpu-scc"``, ``"gpu-bsp"``, ``"multi-gpu-path"``), ``reason`` (one sentence) and the mode
    asked for (``requested``; None when automatic)."""

    mode: str
    engine: str
    reason: str
    requested: str = None
    probe: float = None
    """For an automatic ``"power"``: :attr:`RouteSettings.probe_share`, the share of γ above which
    a round's ratio of differences hands the run over to :func:`after_probe` (None: run to the
    end)."""
    placement: object = None
    """Where it runs (:class:`~digraph.dispatch.placement.Placement`): set by :func:`place`."""
    as_shard: bool = False
    """One GPU, ``bsp`` on a large linear system: the sharded engine as one shard."""
    gpus_named: int = None
    """GPUs named by ``device=`` when several were (the placement may use fewer)."""
    threads_asked: int = None
    """CPU threads the run could use when fewer run (:func:`.placing.cpu_threads`)."""
    code: str = "asked"
    """Why, as a code of :data:`CODES`."""
    considered: tuple = ()
    """The engines the automatic choice tested: dicts of ``engine``, ``test``, ``value``,
    ``threshold`` and ``held``."""
    placed: tuple = ()
    """The placement's decisions (:func:`place`): dicts of ``code`` and ``why``."""
    timing: tuple = None
    """Where the run records its seconds for later choices (:func:`.estimates.record`), or None."""

    @property
    def exploring(self):
        """Whether the automatic choice is still timing engines on the graph: the run records
        its seconds (:attr:`timing`) and the choice has not settled (code other than
        ``"measured"``), so later runs on the graph may take another engine."""
        return self.timing is not None and self.code != "measured"

    def after_stall(self):
        """The mode a stalled linear run of this plan goes on in, from the state it reached (the
        engine's :attr:`~digraph.dispatch.engines.registry.Engine.after_stall`), or None."""
        if self.placement is None:
            return None
        engine = find(self.mode, self.placement.kind)
        return None if engine is None else engine.after_stall

    def record(self, stats):
        """Write the plan into a run's ``stats``: ``mode``, ``engine``, ``requested_mode`` and
        ``route``, a dict of ``engine``, ``mode``, ``placement`` (in words), ``requested``,
        ``code`` (:data:`CODES`), ``reason`` (one sentence), ``considered``, ``placed``,
        ``restricted`` (the reach, set by ``digraph.run``), ``after_stall`` (:meth:`after_stall`),
        ``exploring`` (:attr:`exploring`) and ``steps`` (hand-overs:
        :func:`digraph.dispatch.driver.hand_over`)."""
        stats["mode"] = self.mode
        stats["engine"] = self.engine
        stats["requested_mode"] = self.requested
        stats["route"] = {
            "engine": self.engine, "mode": self.mode,
            "placement": None if self.placement is None else self.placement.describe(),
            "requested": self.requested, "code": self.code, "reason": self.reason,
            "considered": [dict(c) for c in self.considered],
            "placed": [dict(p) for p in self.placed], "restricted": None,
            "after_stall": self.after_stall(), "exploring": self.exploring, "steps": []}
        if self.threads_asked is not None:
            stats["threads_asked"] = self.threads_asked
        if self.gpus_named is not None:
            stats["gpus_named"] = self.gpus_named
            if self.placement is not None and self.placement.kind == "gpu":
                stats["gpus"] = 1
