"""The router: which engine runs a request, and why (issue 17, item 1).

:func:`route` takes the algorithm's family, the mode asked for (``None``: automatic), the device
and the options given, and returns a :class:`Plan` naming the mode that will run, the engine that
runs it and the reason.  ``digraph.run`` follows the plan and records it in ``stats``
(``mode``, ``engine``, ``route``, ``requested_mode``).  A named mode runs that mode or raises
:class:`~digraph.errors.InvalidParameterError` naming what does not fit; only ``mode=None`` lets
the router choose.  No engine calls the router back.

Modes
-----
``"scc"``
    Linear systems, CPU or one GPU: the graph's strongly connected components solved one after
    another in the order of their DAG, one residual per vertex (:mod:`digraph.dispatch.dag_push`;
    on a GPU :mod:`digraph.dispatch.cuda.one_gpu.scc`); no paths are built.  The CPU default for
    linear algorithms; on a GPU only when asked for (``power`` measured faster on each of 17
    graphs, real and citation-like, by 1.08× to 6.4× on 2026-11-28, and after the GPU engine's
    fixes of 2026-11-29 ``scc`` took 0.86–6.1× ``power``'s time on nine graphs, below 1 only on
    email-Eu-core and cit-HepPh in one call each, within the calls' noise; with Anderson in its
    sweeps and heavy rounds, 0.80–1.9× on six graphs (below 1 on cit-HepPh in each of three
    calls, dblp-2010 1.09×, cnr-2000 1.2–1.5×): no share of the condensation marks a graph
    where ``scc`` wins; docs/history/benchmarks-notebook.md, "When would ``scc`` pay on a GPU?", "Waits, atomics
    and hub sums" and "Anderson in the heavy rounds").
``"power"``
    Normalised linear systems (PageRank), CPU, one GPU or several: the Google-matrix power
    iteration, with the rank-one dangling/teleport term (:mod:`digraph.dispatch.power`,
    :mod:`digraph.dispatch.gpu_power`, :mod:`digraph.dispatch.multi_gpu_power`).
``"path"``, ``"path-nopriority"``
    DiGraph: paths walked one per thread, SCC-vertices of the DAG sketch in layer order, with or
    without priority (:mod:`digraph.dispatch.paths`, :mod:`digraph.dispatch.gpu`); they need the
    PathSet (``cache=``, ``preprocess=``).  Directed dependencies only: not k-core.
``"cluster"``
    Min/max systems (SSSP), one GPU: the graph cut into clusters of nearby vertices
    (:mod:`digraph.preprocess.clusters`), each queued cluster relaxed to its local fixpoint in one
    thread block per round (:mod:`digraph.dispatch.cuda.one_gpu.cluster`): a value crosses a whole
    cluster in a round, for road-like graphs (grids, geometric graphs) where a frontier advances
    one hop a round.
``"vertex-async"``, ``"bsp"``
    Vertex worklists with atomic pushes (DiGraph-t, Groute-like), and bulk-synchronous rounds over
    a frontier (Gunrock-like).
``"peel"``
    k-core (the ``"hindex"`` family) only, CPU: the core numbers in one peeling pass,
    Batagelj–Zaversnik's buckets or Kabir & Madduri's parallel PKC, by thread count and graph
    size (:mod:`digraph.dispatch.peel`).  The CPU default for k-core.

Automatic choice (``mode=None``), each from a measurement in ``docs/history/benchmarks-notebook.md``; the
thresholds are the fields of :class:`RouteSettings` (``route(..., settings=)``, default
:data:`DEFAULT`), each citing its measurement:

* CPU, normalised linear (PageRank): ``"power"``, as a *probe*, when the largest component may
  hold at least :attr:`RouteSettings.power_share` of the arcs, else as below.  Whether it may is
  read from the condensation when the graph already keeps one, else from the one-pass bound
  :func:`~digraph.paths.condensation.largest_share_bound` (a graph's first run builds no
  condensation to decide).  The probe keeps going while its differences fall fast, by
  :attr:`RouteSettings.probe_share` × γ (γ = α for PageRank) a round or faster; when they fall
  more slowly, the error is headed for γ's rate (|λ2| near 1, the mark of several closed
  components), where the rank-one term buys nothing, and the run hands over to the SCC engine
  (:func:`after_probe`).
  ``stats["route"]`` tells which, with ``probe_rounds`` and ``probe_ratio``; later runs on the
  same graph go to the SCC engine at once.
* CPU, other linear systems (adsorption): ``"bsp"`` when the largest component may hold at least
  :attr:`RouteSettings.bsp_share` of the arcs, else as below.
* CPU, linear: ``"scc"``, except with at least :attr:`RouteSettings.delegate_threads` threads on a
  graph whose components too large for one thread (the SCC engine's
  :attr:`~digraph.dispatch.dag_push.DagPushSettings.split_arcs`) hold more than
  :attr:`RouteSettings.delegate_share` of the arcs (one giant component: nothing for the DAG to
  order), where ``"bsp"``'s dense rounds scale better.
* CPU, min/max (SSSP): ``"vertex-async"``; k-core: ``"peel"``.
* GPU, normalised linear (PageRank): ``"power"`` (:mod:`digraph.dispatch.gpu_power`); with
  several GPUs named, sharded over as many as the graph has
  :attr:`~digraph.dispatch.gpu_power.PowerGpuSettings.shard_arcs` arcs per GPU
  (:mod:`digraph.dispatch.multi_gpu_power`), else on the first of them when the graph fits
  there; other linear systems: ``"bsp"``; k-core: ``"vertex-async"``; min/max (SSSP):
  ``"cluster"`` on one GPU when a sample of BFS balls keeps at least
  :attr:`RouteSettings.cluster_share` of their arcs inside
  (:func:`~digraph.preprocess.clusters.internal_share_sample`: road-like graphs) and no
  in-degree exceeds :attr:`RouteSettings.cluster_max_in_degree`, else ``"vertex-async"``.
* A system with a dangling vector (PageRank's ``dangling=``, ``LinearSystem.dangling``):
  ``"power"`` without a probe, the only engine that runs the term; a named other mode, the GPUs
  and the path options are refused, naming ``dangling=`` and ``mode='power'``.
"""

import dataclasses
from dataclasses import dataclass

from ..errors import InvalidParameterError

__all__ = ["Plan", "route", "place", "after_probe", "restricts", "RouteSettings", "DEFAULT",
           "MODES", "PATH_MODES", "PATH_OPTIONS", "CODES"]

MODES = ("scc", "power", "path", "path-nopriority", "vertex-async", "bsp", "peel", "cluster")


@dataclass(frozen=True)
class RouteSettings:
    """The thresholds of the automatic choice (``mode=None``) on the CPU.

    Attributes
    ----------
    power_share : float
        Automatic choice for normalised linear systems (PageRank) on the CPU: the mass-preserving
        power iteration (``"power"``, as a probe: ``probe_share``) when the largest strongly
        connected component may hold at least this share of the arcs (nothing much for the DAG to
        order, and the rank-one term makes the error fall at α·|λ2| a round).  Measured at tol
        1e-8 on 2 quiet cores (docs/history/benchmarks-notebook.md, "PageRank: two formulations on the CPU, against
        scipy and igraph PRPACK"): R-MAT 2^18 and 2^20 (98% of the arcs in the largest component)
        12 power rounds, 165 and 713 ms, against the SCC engine's 1,216 and 5,725 ms; dblp-2010
        (89%) 609 ms against 666 (on the shared 2-core machine 299 against 273: the crossover
        lies near 89%); cnr-2000 (51%) and wiki-Vote (38%) stay with the SCC engine (cnr-2000:
        309 ms against 852).
    bsp_share : float
        Automatic choice for linear systems that are not normalised (adsorption, a user's Katz) on
        the CPU: ``"bsp"`` when the largest component holds at least this share of the arcs, the
        SCC engine otherwise.  The one-pass bound decides alone when it is below this share;
        above, the condensation is built to look (the bound is loose on web graphs: cnr-2000 93%
        against 51%) and kept for the SCC engine.  Measured (adsorption, seeds of high and of low
        degree, tol 1e-4/1e-8/1e-12, shared 2-core machine,
        ``benchmarks/results/adsorption_cpu2_quiet.json``; docs/history/benchmarks-notebook.md, "Adsorption on the
        CPU and on one GPU"): R-MAT 2^18 (98%) bsp 448–1,551 ms against the SCC engine's
        544–1,604 (low seeds, 1e-12: 732 against 1,344); dblp-2010 (89%) within 10% either way;
        cnr-2000 (51%) the SCC engine 192–642 ms against bsp's 137–911 (2x faster with high
        seeds).
    probe_share : float
        A power-iteration probe keeps going while each round's ``‖x_{k+1} − x_k‖₁`` is at most
        this share of γ (α for PageRank) times the previous one, from the third round on.
        Measured ratios of the first eight rounds (scipy power iteration, α = 0.85, so the probe
        trips above 0.595): R-MAT 2^16–2^18 0.14–0.17 and p2p-Gnutella 0.19–0.28 (12–16 rounds to
        1e-8); wiki-Vote 0.26–0.46 (25 rounds); dblp-2010 0.40, 0.45, 0.55, 0.58, 0.64 and
        cnr-2000 0.45, 0.52, 0.56, 0.64, rising to 0.85 = α (96–99 rounds); email-Eu-core 0.24,
        0.28, 0.43, 0.58, 0.72 (94 rounds).  A probe that never trips needs at most about 35
        rounds to 1e-8.  One that trips has spent 4–5 rounds; after it the SCC engine is faster
        than the plain power iteration's remaining rounds on every graph measured (2 quiet cores,
        tol 1e-8: dblp-2010, 89% of its arcs in the largest component, 427 against 500 ms;
        cnr-2000 383 against 765; email-Eu-core, 97%, 2.1 against 9.4 ms on the shared machine).
        The Anderson-accelerated power iteration beats it on dblp-2010 (259 against 310 ms,
        2026-11-28) but loses on a random giant component with a closed ring (120 against 51 ms),
        with a similar share and ratio, so the hand-over stays (docs/history/benchmarks-notebook.md, "PageRank:
        two formulations on the CPU, against scipy and igraph PRPACK", which also has how the
        probes went on the benchmark graphs).
    delegate_threads : int
        With at least this many threads, a linear system whose components split over the threads
        (at least the SCC engine's :attr:`~digraph.dispatch.dag_push.DagPushSettings.split_arcs`
        inside arcs) hold more than ``delegate_share`` of the arcs (one giant component: nothing
        for the DAG to order) runs ``bsp``'s dense rounds instead of the SCC engine (``mode=None``
        only; the reason is in ``stats["route"]``).  Measured on 16 cores (docs/history/benchmarks-notebook.md,
        "Threads: splitting the large components, and when ``bsp`` is better (16 cores)"): with 8
        and 16 threads ``bsp`` beats the vertex state on R-MAT 2^20 (98% of the arcs in one
        component) and dblp-2010 (89%), not on cnr-2000 (62% in split components); with 2 and 4
        threads the vertex state wins on all three.  One machine of 16 cores: a first cut, not a
        tuned model.
    delegate_share : float
        See ``delegate_threads`` (the same measurement): 0.75 lies between cnr-2000's 62% and
        dblp-2010's 89%.
    cluster_share : float
        Min/max systems (SSSP) on one GPU run ``"cluster"`` when BFS balls of
        :attr:`~digraph.dispatch.cuda.one_gpu.cluster.ClusterSettings.size` vertices keep at
        least this share of their arcs inside
        (:func:`~digraph.preprocess.clusters.internal_share_sample`, 32 balls, a few
        milliseconds) and no in-degree exceeds ``cluster_max_in_degree``: road-like graphs.
        Measured on an H200 (docs/history/benchmarks-notebook.md, "SSSP on road-like graphs on one GPU"), time
        by clusters / by ``vertex-async`` (its worklist on the GPU): the 1000 × 1000 grid (share
        0.94) 29.8 / 94.4 ms, the 2000 × 2000 grid and a geometric graph of 4 M vertices (0.94)
        102 / 2,159 and 106 / 1,916 ms (``vertex-async`` with host-driven rounds then).  Below
        the cut the two are within 15% on the small SNAP graphs and dblp-2010 (share 0.45:
        5.1 / 5.8 ms), and clusters lose 1.5–3.6× on an Erdős–Rényi-like graph of 16.8 M arcs,
        cnr-2000 (0.77) and R-MAT 2^20.
    reach_share : float
        Automatic choice (any device) for a linear system whose constant term is zero but on a few
        vertices (adsorption's seeds, a personalised PageRank): when the vertices it reaches by
        out-arcs have at most this share of the arcs, the system is solved on them alone
        (:mod:`digraph.dispatch.reach`; the answer is exactly 0 elsewhere).  The search gives up
        after reading that many arcs, so a wide reach costs at most this share of one pass.
        The restricted graph is built (and routed: its condensation is not kept between runs)
        in time proportional to its arcs, while any engine on the whole graph reads every arc at
        least once.  Measured where it pays (``benchmarks/bench_reach.py --shares``: a random
        graph of 2^18 vertices and 16 arcs each with a closed part of the given share of the
        arcs, adsorption seeded in it, part against whole): on 2 quiet cores 0.10× at 2%,
        0.35× at 12.5%, 0.68× at 25%, 1.25× at 50%, 1.6× at 90%; on an H200 0.22× at 2%, 0.62×
        at 12.5%, 2.8× at 50%: an eighth is below both crossovers.  Measured (docs/history/benchmarks-notebook.md, "Small reach: solving
        where the seeds reach"; 10 seeds of smallest out-degree, tol 1e-8): on 2 quiet cores,
        adsorption on cnr-2000 197.5 → 7.4 ms, on cit-HepPh 24.0 → 1.4, personalised PageRank
        34.9 → 7.9 and 8.0 → 1.7; on an H200, adsorption (`bsp`) 124.6 → 21.0 and 54.3 → 7.5 ms,
        but personalised PageRank (`power`) 15.6 → 15.9 and 5.6 → 8.1 ms: its rounds are
        launches whatever the size, and the part is a new graph to set up on the GPU, so on GPUs
        only systems that are not normalised are restricted.
    cluster_max_in_degree : int
        See ``cluster_share``.  Graphs with hubs lose by clusters: cnr-2000 (in-degree up to
        18,235) 31.8 / 12.5 ms, R-MAT 2^20 (69,162) 46.8 / 13.0; those up to 846 (p2p-Gnutella,
        wiki-Vote, dblp-2010, cit-HepPh) 0.88–1.07×.
    path_min_arcs : int
        Min/max systems on one GPU that are not road-like run ``"path"`` when the graph already
        holds its PathSet (an earlier path run with the default ``preprocess=``: the walk's
        preprocessing is paid) and has at least this many arcs; otherwise ``"vertex-async"``.
        Measured on an H200 (SSSP from the vertex of largest out-degree, unit weights, warm
        runs, ``bench_gpu_path_rounds.py``; docs/history/benchmarks-notebook.md, "The walk's fixed costs"),
        ``path`` / ``vertex-async``: cnr-2000 6.06 / 10.9 ms, dblp-2010 5.90 / 6.82, cit-HepPh
        4.75 / 5.90, R-MAT 2^18 (compact) 5.14 / 5.39, wiki-Vote (103,689 arcs) 1.99 / 2.33;
        below, its fixed part shows: p2p-Gnutella25 (54,705 arcs) 2.40 / 1.98, p2p-Gnutella04
        2.89 / 2.45, p2p-Gnutella08 2.57 / 2.27, email-Eu-core 2.27 / 2.30.  2^16 lies between
        wiki-Vote and p2p-Gnutella25.
    """

    power_share: float = 0.85
    bsp_share: float = 0.85
    probe_share: float = 0.7
    delegate_threads: int = 8
    delegate_share: float = 0.75
    cluster_share: float = 0.85
    cluster_max_in_degree: int = 2048
    reach_share: float = 0.125
    path_min_arcs: int = 1 << 16


DEFAULT = RouteSettings()

PATH_MODES = ("path", "path-nopriority")

#: ``digraph.run``'s options that only the path modes take (``priority`` the ``scc`` mode too)
PATH_OPTIONS = ("cache", "preprocess", "short_path_push", "layer_window", "priority")
#: those of them that only the CPU's path modes take
CPU_PATH_OPTIONS = ("short_path_push", "layer_window")


def restricts(mode, system, device):
    """Whether a run solves its system where the constant term reaches, when that is a small part
    (:mod:`digraph.dispatch.reach`, :attr:`RouteSettings.reach_share`): the automatic choice of a
    linear system, on the CPU, or on GPUs for systems that are not normalised (PageRank's power
    rounds on a small part cost their launches all the same)."""
    return mode is None and system.family == "linear" and (device == "cpu" or not system.normalize)

_CPU_DEFAULT = {"linear": "scc", "monotone": "vertex-async", "hindex": "peel"}
_GPU_DEFAULT = {"linear": "bsp", "monotone": "vertex-async", "hindex": "vertex-async"}
_WHY_DEFAULT = {
    ("cpu", "linear"): "the SCC engine is the fastest measured for sums on the CPU",
    ("cpu", "monotone"): "vertex-async is the fastest measured for min/max systems on the CPU",
    ("cpu", "hindex"): "one peeling pass is the fastest measured for k-core on the CPU",
    ("gpu", "linear"): "dense bsp rounds are the fastest measured for sums on GPUs",
    ("gpu", "monotone"): "vertex-async (its worklist on the GPU) is the fastest measured for "
                         "min/max systems on GPUs but on road-like graphs",
    ("gpu", "hindex"): "vertex-async is the fastest measured for k-core on GPUs",
}
"""The reasons of the defaults; the figures behind them are in ``docs/benchmarks.md``."""

#: the reason codes of ``stats["route"]["code"]`` (a plan) and of its ``placed`` and ``steps``
CODES = {
    "asked": "the mode was named (mode=)",
    "default": "the family's default on this placement",
    "dag-orders-the-rest": "the largest component holds less than the threshold: the SCC engine",
    "giant-component-probe": "PageRank, one component may hold most arcs: a power-iteration probe",
    "giant-component-bsp": "a system without the rank-one term, one giant component: bsp",
    "giant-component-threads": "many threads and one giant component split over them: bsp",
    "probe-tripped": "a power probe tripped (|lambda2| near 1): the SCC engine or bsp",
    "road-like": "min/max on one GPU, BFS balls keep most arcs inside: clusters",
    "pathset-held": "min/max on one GPU, the graph holds its PathSet: the path walk",
    "power-on-gpus": "PageRank on GPUs: the power iteration",
    "dangling": "dangling= is answered by the power iteration only",
    "one-shard": "one GPU: bsp run by the sharded engine as one shard",
    "sharded": "several GPUs: sharded over the GPUs used",
    "first-gpu": "several GPUs named, one used: the one-GPU engine on the first",
    "too-big": "the graph does not fit in one GPU: sharded over every GPU named",
    "hand-over": "an engine went on in another from the state reached",
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
    code: str = "asked"
    """Why, as a code of :data:`CODES`."""
    considered: tuple = ()
    """The engines the automatic choice tested: dicts of ``engine``, ``test``, ``value``,
    ``threshold`` and ``held``."""
    placed: tuple = ()
    """The placement's decisions (:func:`place`): dicts of ``code`` and ``why``."""

    def record(self, stats):
        """Write the plan into a run's ``stats``: ``mode``, ``engine``, ``requested_mode`` and
        ``route``, a dict of ``engine``, ``mode``, ``placement`` (in words), ``requested``,
        ``code`` (:data:`CODES`), ``reason`` (one sentence), ``considered``, ``placed``,
        ``restricted`` (the reach, set by ``digraph.run``) and ``steps`` (hand-overs:
        :func:`digraph.dispatch.driver.hand_over`)."""
        stats["mode"] = self.mode
        stats["engine"] = self.engine
        stats["requested_mode"] = self.requested
        stats["route"] = {
            "engine": self.engine, "mode": self.mode,
            "placement": None if self.placement is None else self.placement.describe(),
            "requested": self.requested, "code": self.code, "reason": self.reason,
            "considered": [dict(c) for c in self.considered],
            "placed": [dict(p) for p in self.placed], "restricted": None, "steps": []}
        if self.gpus_named is not None:
            stats["gpus_named"] = self.gpus_named
            if self.placement is not None and self.placement.kind == "gpu":
                stats["gpus"] = 1


def check_mode(mode):
    """``mode`` checked (None stays None: automatic)."""
    if mode is None:
        return None
    if mode not in MODES:
        raise InvalidParameterError(f"unknown mode {mode!r}; modes: {', '.join(MODES)} (or None: automatic)")
    return mode


def route(family, mode, device, *, threads=1, graph=None, path_options=(), system=None,
          settings=None, scc_settings=None):
    """The :class:`Plan` for a run.

    Parameters
    ----------
    family : {"linear", "monotone", "hindex"}
    mode : str or None
        The mode asked for (checked), or None for the automatic choice.
    device : str
        ``"cpu"``, ``"cuda[:N]"`` or ``"cuda:0,1,..."``.
    threads : int
        CPU threads the run will use.
    graph : digraph.Graph, optional
        Needed for the automatic choice of a linear CPU run with many threads (its condensation).
    path_options : iterable of str
        Names of the options given that only the path modes take (``cache``, ``preprocess``,
        ``priority``, ...): with ``mode=None`` they are refused, not taken as a hint.
    system : LinearSystem, optional
        The system (the automatic choice of ``"power"`` needs it, with ``graph``).
    settings : RouteSettings, optional
        The thresholds of the automatic choice (default :data:`DEFAULT`).
    scc_settings : digraph.dispatch.dag_push.DagPushSettings, optional
        The SCC engine's settings the run will use, for its ``split_arcs`` (default
        :data:`digraph.dispatch.dag_push.DEFAULT`).

    Raises
    ------
    InvalidParameterError
        A mode that does not apply to the family or the device, or path options without a path mode.
    """
    settings = DEFAULT if settings is None else settings
    mode = check_mode(mode)
    where = "cpu" if device == "cpu" else ("multi-gpu" if "," in device else "gpu")
    path_options = sorted(o for o in path_options if not (o == "priority" and mode == "scc"))
    if system is not None and getattr(system, "dangling", None) is not None:
        return _dangling_plan(mode, device, where, graph, system, path_options)
    if mode is None:
        if path_options:
            raise InvalidParameterError(
                f"{_apply(path_options)} to the path modes, which walk the PathSet; pass mode='path' to "
                "run one (the automatic choice does not change engine because of an option)")
        return _automatic(family, where, threads, graph, system, settings, scc_settings)
    if mode == "power" and system is not None:
        from .power import applies
        why = applies(graph, system) if graph is not None else None
        if why:
            raise InvalidParameterError(f"mode='power' cannot run this system: {why}")
    else:
        why = _refusal(mode, family, where)
        if why:
            raise InvalidParameterError(f"{why}; {_valid_modes(family, where)}")
    if path_options and mode not in PATH_MODES:
        raise InvalidParameterError(f"{_apply(path_options)} to the path modes, not mode={mode!r}")
    if where != "cpu" and set(path_options) & set(CPU_PATH_OPTIONS):
        raise InvalidParameterError("short_path_push= and layer_window= apply to the CPU path modes; "
                                    "the GPU path engine walks every path (docs/gpu.md)")
    return Plan(mode, f"{where}-{mode}", "asked for", mode)


def place(plan, graph, system, placement, batch_arcs=None):
    """``plan`` on ``placement``: the GPUs a run uses among those named, and the engine there.

    On the CPU and on one GPU the placement is the one asked for (one GPU: ``bsp`` on a linear
    system of :attr:`~digraph.dispatch.gpu.GpuSettings.shard_arcs` arcs or more that fits in the
    GPU's memory runs the sharded engine as one shard, :attr:`Plan.as_shard`: a leaner set-up and
    fused dense rounds).  With several GPUs named:

    * ``power``: sharded over as many as the graph has
      :attr:`~digraph.dispatch.gpu_power.PowerGpuSettings.shard_arcs` arcs per GPU when that is
      two or more, else on the first GPU when the graph fits in its memory, else over all;
    * ``scc``, ``bsp``, ``vertex-async``: over as many as
      :func:`~digraph.dispatch.multi_gpu.gpus_to_use` says (arcs per GPU, families that shard),
      on the first GPU's one-GPU engine when that is one (the simple method it could have used;
      for ``bsp`` and ``vertex-async`` only while
      :attr:`~digraph.dispatch.multi_gpu.MultiGpuSettings.min_arcs_per_gpu` is positive);
    * the path modes: the path dispatcher with one worker per GPU named.

    Parameters
    ----------
    plan : Plan
        From :func:`route`.
    graph : digraph.Graph
    system : LinearSystem, MonotoneSystem or HIndexSystem
    placement : digraph.dispatch.placement.Placement
        As asked for (:func:`digraph.dispatch.placement.of`).
    batch_arcs : int, optional
        ``digraph.run``'s ``batch_arcs=`` (streamed arcs: never as one shard).

    Returns
    -------
    Plan
        With :attr:`Plan.placement`, and ``engine`` and ``reason`` for the GPUs used.

    Raises
    ------
    NotAvailableError
        A GPU named is missing (CUDA, the device).
    """
    if placement.kind == "cpu":
        return dataclasses.replace(plan, placement=placement)
    from . import gpu
    if placement.kind == "gpus" and plan.mode not in PATH_MODES:
        plan = _narrow(plan, graph, system, placement)
    else:
        plan = dataclasses.replace(plan, placement=placement)
    if plan.placement.kind == "gpu" and system.family == "linear" and plan.mode == "bsp" \
            and batch_arcs is None and graph.num_arcs >= gpu.DEFAULT.shard_arcs \
            and not gpu._too_big(gpu.backend(plan.placement.device), graph):
        plan = dataclasses.replace(plan, as_shard=True, placed=plan.placed + (
            {"code": "one-shard", "why": "run as one shard of the sharded engine (GpuSettings."
                                         "shard_arcs arcs or more, and the graph fits)"},))
    return plan


def _narrow(plan, graph, system, placement):
    """The GPUs of ``placement`` (several named) that ``plan`` uses: see :func:`place`."""
    from . import gpu, gpu_power, multi_gpu
    devices = placement.devices
    for d in devices[1:] + devices[:1]:
        be = gpu.backend(d)  # NotAvailableError naming a GPU that is missing; the first last
    n, mode = len(devices), plan.mode
    if mode == "power":
        per = gpu_power.DEFAULT.shard_arcs
        k = n if per <= 0 else min(n, graph.num_arcs // per)
        if k >= 2:
            code, why = "sharded", (f"sharded over {k} of the {n} GPUs named (at least {per:,} "
                                    f"arcs a GPU)" if k < n else f"sharded over the {k} GPUs named")
        elif not gpu._too_big(be, graph):  # the first GPU's memory
            k, code, why = 1, "first-gpu", (
                f"on the first GPU named: fewer than {per:,} arcs a GPU for two (the sharded "
                "rounds' exchange would cost more than they split)")
        else:
            k, code, why = n, "too-big", ("the graph does not fit in one GPU's memory: sharded "
                                          "over every GPU named")
    else:
        per = multi_gpu.DEFAULT.min_arcs_per_gpu
        k = multi_gpu.gpus_to_use(graph, system, devices)
        if mode == "scc" and k > 1:
            code, why = "sharded", (f"each unit's components dealt over {k} GPUs (DAG "
                                    f"dispatcher, at least {per:,} arcs a GPU)")
        elif mode == "scc":
            code, why = "first-gpu", (f"on the first GPU named: fewer than {per:,} arcs a GPU for "
                                      "two (the sharded engines would use one GPU too)")
        elif k == 1 and per > 0:
            code, why = "first-gpu", "on the first GPU named: the sharded engine would use one GPU"
        else:  # the sharded engine cuts its own shards among the GPUs named
            k, code, why = n, "sharded", "sharded over the GPUs named"
    used = placement.take(k)
    return dataclasses.replace(plan, placement=used, engine=f"{used.where}-{mode}", gpus_named=n,
                               placed=plan.placed + ({"code": code, "why": why},))


def _candidate(engine, test, value, threshold, held):
    """One engine the automatic choice considered: the test that decides it, the graph's value,
    the threshold (a :class:`RouteSettings` field), and whether the test held."""
    return {"engine": engine, "test": test, "value": value, "threshold": threshold,
            "held": bool(held)}


def _automatic(family, where, threads, graph, system, settings, scc_settings):
    """The :class:`Plan` of ``mode=None`` (see the module text)."""
    kind = "cpu" if where == "cpu" else "gpu"
    chosen = (_CPU_DEFAULT if where == "cpu" else _GPU_DEFAULT)[family]
    code, reason = "default", _WHY_DEFAULT[(kind, family)]
    probe, considered = None, []
    share_test = "largest component's share of the arcs"
    if chosen == "scc" and graph is not None:
        power, share, is_bound = _power(graph, system, settings)
        if share is not None:
            considered.append(_candidate("cpu-power", share_test + (" (one-pass bound)" if is_bound
                                                                     else ""),
                                         share, settings.power_share, power == "probe"))
        delegate = None if power == "probe" else _delegation(graph, threads, settings, scc_settings,
                                                             considered)
        if power == "tripped":
            ratio, k = graph._cache[_TRIPPED]
            chosen = "bsp" if delegate else "scc"
            code = "probe-tripped"
            reason = (f"an earlier power probe on this graph tripped (its differences fell by "
                      f"{ratio:.2f} at round {k}: |lambda2| near 1, where the rank-one term buys "
                      f"nothing){'; ' + delegate if delegate else ''}")
        elif power == "probe":
            chosen, probe, code = "power", settings.probe_share, "giant-component-probe"
            reason = (f"{share_words(share, is_bound)} (>= {settings.power_share:.0%}): the "
                      f"Google-matrix power iteration, as a probe that continues while its "
                      f"differences fall by {settings.probe_share}*alpha a round or faster")
        elif delegate:
            chosen, code, reason = "bsp", "giant-component-threads", delegate
        elif (share is None and system is not None and graph.num_arcs
              and not getattr(system, "normalize", False)):
            share, is_bound = _largest_share(graph)
            if is_bound and share >= settings.bsp_share:  # the bound is loose on web graphs
                from ..paths.condensation import condensation_for
                condensation_for(graph)
                share, is_bound = _largest_share(graph)
            held = share >= settings.bsp_share
            considered.append(_candidate("cpu-bsp", share_test + (" (one-pass bound)" if is_bound
                                                                   else ""),
                                         share, settings.bsp_share, held))
            if held:
                chosen, code = "bsp", "giant-component-bsp"
                reason = (f"{share_words(share, is_bound)} (>= {settings.bsp_share:.0%}): a system "
                          "without the rank-one term runs bsp's dense rounds, as fast as the SCC "
                          "engine there or faster")
            else:
                code = "dag-orders-the-rest"
                reason += (f"; {share_words(share, is_bound)} (< {settings.bsp_share:.0%}: the DAG "
                           "orders the rest)")
        elif share is not None:
            code = "dag-orders-the-rest"
            reason += (f"; {share_words(share, is_bound)} (< {settings.power_share:.0%}: the DAG "
                       "orders the rest)")
    elif where == "gpu" and family == "monotone" and graph is not None:
        cut = _cluster_cut(graph, settings, considered)
        if cut is not None:
            chosen, code, reason = "cluster", "road-like", cut
        elif graph._cache.get(pathset_key()) is not None:
            held = graph.num_arcs >= settings.path_min_arcs
            considered.append(_candidate("gpu-path", "arcs, the graph holding its PathSet",
                                         graph.num_arcs, settings.path_min_arcs, held))
            if held:
                chosen, code = "path", "pathset-held"
                reason = (f"the graph holds its PathSet (an earlier path run) and "
                          f"{graph.num_arcs:,} arcs (>= {settings.path_min_arcs:,}): paths walked "
                          "a thread each are the fastest measured for min/max systems on one GPU "
                          "there")
    elif where != "cpu" and family == "linear" and graph is not None and system is not None:
        from .power import applies
        if graph.num_arcs and not applies(graph, system) and getattr(system, "dangling", None) is None:
            chosen, code = "power", "power-on-gpus"
            reason = "the Google-matrix power iteration is the fastest measured for PageRank on GPUs"
    return Plan(chosen, f"{where}-{chosen}", f"automatic: {reason}", None, probe, code=code,
                considered=tuple(considered))


def _refusal(mode, family, where):
    """Why ``mode`` cannot run a system of ``family`` on ``where`` (``"cpu"``, ``"gpu"``,
    ``"multi-gpu"``), or None when it can (whether the power iteration fits the system itself is
    checked apart: :func:`digraph.dispatch.power.applies`)."""
    if mode == "scc" and family != "linear":
        return (f"mode='scc' solves linear systems (PageRank, adsorption, a LinearSystem), not the "
                f"{family} family")
    if mode == "cluster":
        if family != "monotone":
            return (f"mode='cluster' relaxes min/max systems (SSSP and the like), not the {family} "
                    "family")
        if where != "gpu":
            return "mode='cluster' runs on one GPU (device='cuda' or 'cuda:N')"
    if mode == "power" and family != "linear":
        return f"mode='power' answers normalised linear systems, not the {family} family"
    if mode == "peel":
        if family != "hindex":
            return f"mode='peel' peels k-cores (the hindex family), not the {family} family"
        if where != "cpu":
            return "mode='peel' runs on the CPU"
    if mode in PATH_MODES and family == "hindex":
        return (f"mode={mode!r} walks directed paths, but k-core depends on in- and "
                "out-neighbours alike: no DAG orders it")
    return None


_WHERE = {"cpu": "on the CPU", "gpu": "on one GPU", "multi-gpu": "on several GPUs"}
_ALGOS = {"linear": "PageRank, adsorption", "monotone": "SSSP", "hindex": "k-core"}


def _valid_modes(family, where):
    """Every mode that runs the ``family`` on ``where``, in words (for refusals)."""
    modes = [m for m in MODES if _refusal(m, family, where) is None]
    listed = ", ".join(repr(m) for m in modes)
    return (f"the modes of the {family} family ({_ALGOS.get(family, family)}) {_WHERE[where]} "
            f"are {listed}, or mode=None for the automatic choice")


def _dangling_plan(mode, device, where, graph, system, path_options):
    """The plan of a system with a dangling vector: the CPU power iteration, or a refusal."""
    if mode not in (None, "power") or where != "cpu":
        asked = f"mode={mode!r}" if mode not in (None, "power") else f"device={device!r}"
        raise InvalidParameterError(
            f"dangling= is answered by the Google-matrix power iteration only (mode='power', on the "
            f"CPU), not {asked}: the other engines send the dangling mass along the personalization")
    if path_options:
        raise InvalidParameterError(f"{_apply(path_options)} to the path modes; dangling= runs "
                                    "mode='power'")
    if graph is not None:
        from .power import applies
        why = applies(graph, system)
        if why:
            raise InvalidParameterError(f"mode='power' cannot run this system: {why}")
    if mode is None:
        return Plan("power", "cpu-power", "automatic: dangling= is answered by the Google-matrix "
                                          "power iteration only", code="dangling")
    return Plan("power", "cpu-power", "asked for", "power")


def _cluster_cut(graph, settings, considered):
    """The reason to run a min/max system by clusters on one GPU, or None: a road-like graph (BFS
    balls keeping ``settings.cluster_share`` of their arcs inside) with no in-degree above
    ``settings.cluster_max_in_degree`` (a cluster's thread walks its vertex's in-arcs alone,
    every sweep)."""
    from ..preprocess.clusters import internal_share_sample
    from ..smx.cuda_clusters import CT
    from .cuda.one_gpu.cluster import DEFAULT as CLUSTER
    size = min(CLUSTER.size, CT)
    if not graph.num_arcs:
        return None
    top = int(graph.in_degree.max())
    considered.append(_candidate("gpu-cluster", "largest in-degree (at most)", top,
                                 settings.cluster_max_in_degree, top <= settings.cluster_max_in_degree))
    if top > settings.cluster_max_in_degree:
        return None
    key = ("cluster-share-sample", size)
    share = graph._cache.get(key)
    if share is None:
        share = graph._cache[key] = internal_share_sample(graph, size)
    considered.append(_candidate("gpu-cluster", f"share of arcs inside BFS balls of {size} vertices",
                                 share, settings.cluster_share, share >= settings.cluster_share))
    if share < settings.cluster_share:
        return None
    return (f"BFS balls of {size} vertices keep {share:.0%} of their arcs inside (>= "
            f"{settings.cluster_share:.0%}: a road-like graph) and no in-degree above "
            f"{settings.cluster_max_in_degree:,}: clusters relaxed in shared memory, a value "
            "crossing a whole cluster a round")


def pathset_key(params=None):
    """The key of the PathSet a graph keeps for the path modes' ``preprocess=`` parameters
    (``jobs`` does not change it; :func:`digraph.run`'s ``_pathset``)."""
    return ("pathset", repr(sorted((k, v) for k, v in (params or {}).items() if k != "jobs")))


def _apply(options):
    """``"cache= applies"`` / ``"cache=, layer_window= apply"``."""
    return f"{', '.join(o + '=' for o in options)} appl{'ies' if len(options) == 1 else 'y'}"


def share_words(share, bound=False):
    """The share of the arcs in the largest component (or its bound), in words."""
    if bound:
        return f"at most {share:.0%} of the arcs can lie in one component (one-pass bound)"
    return f"the largest component holds {share:.0%} of the arcs"


def _largest_share(graph):
    """(share of the arcs in the largest component, whether it is the one-pass bound): from the
    condensation when the graph keeps one, else the bound (nothing is built)."""
    from ..paths.condensation import cached_condensation, largest_share_bound
    cond = cached_condensation(graph)
    if cond is None:
        return largest_share_bound(graph), True
    return (float(cond.comp_arcs.max()) / graph.num_arcs if cond.num_components else 0.0), False


def _power(graph, system, settings):
    """(decision, share, is_bound): ``"probe"`` when the power iteration should start as a probe
    (the largest component may hold ``settings.power_share`` of the arcs), else None; the largest
    component's share of the arcs or its one-pass bound (None when not looked at); whether it is
    the bound."""
    if system is None or not graph.num_arcs:
        return None, None, False
    from .power import applies
    if applies(graph, system):
        return None, None, False
    if _TRIPPED in graph._cache:
        return "tripped", None, False
    from ..paths.condensation import cached_condensation, largest_share_bound
    cond = cached_condensation(graph)
    if cond is None:
        share, is_bound = largest_share_bound(graph), True
    else:
        share = float(cond.comp_arcs.max()) / graph.num_arcs if cond.num_components else 0.0
        is_bound = False
    return ("probe" if share >= settings.power_share else None), share, is_bound


_TRIPPED = ("power_probe_tripped",)
"""Key of ``graph._cache``: (ratio, round) of a probe that tripped on the graph.  Kept per graph,
not per system: |λ2| = α whenever the graph has two or more closed components, whatever the
teleport vector or the arc weights (Haveliwala and Kamvar, "The second eigenvalue of the Google
matrix", 2003)."""


def after_probe(plan, graph, threads, stats, settings=None, scc_settings=None):
    """The plan once a power probe has tripped (a round's ratio of differences above
    ``plan.probe`` × γ, ``stats["probe_ratio"]``): the SCC engine from the start, or ``bsp`` where
    :func:`route` would delegate to it (many threads, one giant component).  ``settings`` (a
    :class:`RouteSettings`, default :data:`DEFAULT`) and ``scc_settings`` as for :func:`route`."""
    settings = DEFAULT if settings is None else settings
    seen = (f"the power probe's differences fell by {stats['probe_ratio']:.2f} at round "
            f"{stats['probe_rounds']} (> {plan.probe}*gamma: |lambda2| near 1, where the rank-one term "
            "buys nothing)")
    graph._cache[_TRIPPED] = (stats["probe_ratio"], stats["probe_rounds"])
    delegate = _delegation(graph, threads, settings, scc_settings)
    mode = "bsp" if delegate else "scc"
    why = f"; {delegate}" if delegate else ""
    return Plan(mode, f"cpu-{mode}", f"automatic: {seen}{why}: {mode} from the start",
                code="probe-tripped", placement=plan.placement)


def _delegation(graph, threads, settings, scc_settings, considered=None):
    """The reason to run ``bsp`` instead of ``scc`` (many threads, one giant component), or None;
    ``scc_settings`` None: the SCC engine's defaults."""
    if threads < settings.delegate_threads or not graph.num_arcs:
        return None
    if scc_settings is None:
        from . import dag_push
        scc_settings = dag_push.DEFAULT
    from ..paths.condensation import condensation_for
    cond = condensation_for(graph)[0]
    split = cond.comp_arcs >= scc_settings.split_arcs
    giant = int(cond.comp_arcs[split].sum())
    if considered is not None:
        considered.append(_candidate(
            "cpu-bsp", f"share of the arcs in components split over {threads} threads",
            giant / graph.num_arcs, settings.delegate_share,
            giant > settings.delegate_share * graph.num_arcs))
    if giant <= settings.delegate_share * graph.num_arcs:
        return None
    return (f"{giant / graph.num_arcs:.0%} of the arcs lie in components split over {threads} threads "
            "(one giant component: nothing for the DAG to order), where bsp's dense rounds scale better")
