"""The router: which engine runs a request, where, and why.

:func:`route` takes the algorithm's family, the mode asked for (``None``: automatic), the device
and the options given, and returns a :class:`Plan` naming the mode that will run, the engine that
runs it and the reason.  ``digraph.run`` follows the plan and records it in ``stats``
(``mode``, ``engine``, ``route``, ``requested_mode``).  A named mode runs that mode or raises
:class:`~digraph.errors.InvalidParameterError` naming what does not fit; only ``mode=None`` lets
the router choose.  :func:`place` then decides where: the GPUs of those named that the run uses
(:mod:`.placing`).  No engine calls the router back.

Modes
-----
``"scc"``
    Linear systems, CPU or one GPU: the graph's strongly connected components solved one after
    another in the order of their DAG, one residual per vertex
    (:mod:`digraph.dispatch.engines.scc.cpu`; on a GPU :mod:`digraph.dispatch.engines.scc.gpu`); no
    paths are built.  The CPU default for linear algorithms; on a GPU only when asked for (no
    share of the condensation marks a graph where it beats ``power`` there:
    docs/history/benchmarks-notebook.md, "When would ``scc`` pay on a GPU?").
``"power"``
    Normalised linear systems (PageRank), CPU, one GPU or several: the Google-matrix power
    iteration, with the rank-one dangling/teleport term (:mod:`digraph.dispatch.engines.power.cpu`,
    :mod:`digraph.dispatch.engines.power.gpu`, :mod:`digraph.dispatch.engines.power.gpus`).
    On one GPU also the others with ``b ≥ 0`` (adsorption): the power iteration of the affine
    map ``x ↦ b + A x`` on the same pull (:mod:`digraph.dispatch.engines.power.gpu_affine`).
``"path"``, ``"path-nopriority"``
    DiGraph: paths walked one per thread, SCC-vertices of the DAG sketch in layer order, with or
    without priority (:mod:`digraph.dispatch.engines.path.cpu`,
    :mod:`digraph.dispatch.engines.path.gpu`); they need the PathSet (``cache=``,
    ``preprocess=``).  Directed dependencies only: not k-core.
``"cluster"``
    Min/max systems (SSSP), one GPU: the graph cut into clusters of nearby vertices
    (:mod:`digraph.preprocess.clusters`), each queued cluster relaxed to its local fixpoint in one
    thread block per round (:mod:`digraph.dispatch.engines.cluster.gpu`): a value crosses a whole
    cluster in a round, for road-like graphs (grids, geometric graphs) where a frontier advances
    one hop a round.
``"vertex-async"``, ``"bsp"``
    Vertex worklists with atomic pushes (DiGraph-t, Groute-like), and bulk-synchronous rounds over
    a frontier (Gunrock-like).
``"peel"``
    k-core (the ``"hindex"`` family) only, CPU or one GPU: the core numbers in one peeling pass,
    Batagelj–Zaversnik's buckets or Kabir & Madduri's parallel PKC, by thread count and graph
    size (:mod:`digraph.dispatch.engines.peel.cpu`); on a GPU PKC's levels in one launch
    (:mod:`digraph.dispatch.engines.peel.gpu`).  The default for k-core on the CPU and on one
    GPU.

Automatic choice (``mode=None``), each from a measurement in
``docs/history/benchmarks-notebook.md``; the thresholds are the fields of
:class:`RouteSettings` (``route(..., settings=)``, default :data:`DEFAULT`), each citing its
measurement:

* CPU, normalised linear (PageRank) on graphs of at least :attr:`RouteSettings.probe_min_arcs`
  arcs: ``"power"``, as a *probe*, when the largest component may
  hold at least :attr:`RouteSettings.power_share` of the arcs, else as below.  Whether it may is
  read from the condensation when the graph already keeps one, else from the one-pass bound
  :func:`~digraph.paths.condensation.largest_share_bound` (a graph's first run builds no
  condensation to decide).  The probe keeps going while its differences fall fast, by
  :attr:`RouteSettings.probe_share` × γ (γ = α for PageRank) a round or faster; when they fall
  more slowly, the error is headed for γ's rate (|λ2| near 1, the mark of several closed
  components), where the rank-one term buys nothing, and the run hands over to the SCC engine
  (:func:`after_probe`) — unless the accelerated rounds say otherwise: from the round that
  trips, Anderson's mixing starts, and :attr:`RouteSettings.probe_judge_rounds` rounds later
  :func:`probe_judge` compares the power iteration's time left (its bound, the rate and seconds
  of those rounds, measured) with the SCC engine's or ``bsp``'s estimate in seconds (the rounds
  of the linear system, times the probe's own plain round as the unit); the faster by
  :attr:`RouteSettings.probe_margin` goes on (code ``probe-continued``) or takes over.
  ``stats["route"]`` tells which, with ``probe_rounds``, ``probe_ratio`` and ``probe_rate``;
  later runs on the same graph go to the engine chosen at once.  Where the judge's two times
  lay within :attr:`RouteSettings.probe_measure_band` of each other (the band widened by the
  spread of the probe's own round times, :attr:`RouteSettings.probe_noise_cap`), the verdict is
  the first runs' only: once its engine is timed on the graph, the other runs (the power
  iteration without a probe, or the engine the estimates pick) until it is timed too, and later
  runs take the faster measured (codes ``measuring``, ``measured``).
* CPU, other linear systems (adsorption): where the largest component may hold at least
  :attr:`RouteSettings.bsp_share` of the arcs, the engine of the lower estimate for the thread
  count (below: the SCC engine on few threads, ``bsp`` on many) until it is timed on the graph,
  then the other until it is timed too, and later runs take the faster measured — else as
  below.
* CPU, linear, otherwise: the SCC engine or ``bsp``, by their estimates for the thread count
  (:mod:`.estimates`: the SCC engine's time over ``bsp``'s grows with the share of the arcs in
  components split over the threads and with the threads, as ``(T/2)**β``); where the two lie
  within :attr:`RouteSettings.measure_band` of each other, the seconds measured on the graph
  decide (each engine until it is timed: the least of its runs after its first,
  :data:`.estimates.TIMED_RUNS` of them; then the faster; a run timing an engine after another
  stops at :attr:`RouteSettings.explore_cap` times the other's seconds, code ``over-time`` in
  its steps, and the other answers).  For a normalised system where the probe
  does not run (no giant component) the power iteration is a third candidate, its estimate
  :attr:`RouteSettings.power_ratio` times ``bsp``'s, measured on the graph where it lies within
  :attr:`RouteSettings.power_band` of the lowest (on many threads, where the SCC engine's
  levels cost the most).
* CPU, min/max (SSSP): ``"vertex-async"``; k-core: ``"peel"``.
* GPU, normalised linear (PageRank): ``"power"`` (:mod:`digraph.dispatch.engines.power.gpu`); with
  several GPUs named, sharded over as many as the graph has
  :attr:`~digraph.dispatch.engines.power.gpu_settings.PowerGpuSettings.shard_arcs` arcs per GPU
  (:mod:`digraph.dispatch.engines.power.gpus`), else on the first of them when the graph fits
  there; on one GPU, linear systems that are not normalised with ``b ≥ 0`` (adsorption):
  ``"power"``, the affine map's iteration (``affine-power-on-gpu``; timed against ``bsp`` by
  ``bash benchmarks/device_check.sh adsorption``); other linear systems: ``"bsp"``; k-core:
  ``"peel"`` on one GPU, ``"vertex-async"`` on several; min/max (SSSP):
  ``"cluster"`` on one GPU when a sample of BFS balls keeps at least
  :attr:`RouteSettings.cluster_share` of their arcs inside
  (:func:`~digraph.preprocess.clusters.internal_share_sample`: road-like graphs) and no
  in-degree exceeds :attr:`RouteSettings.cluster_max_in_degree`, else ``"vertex-async"``.
* A system with a dangling vector (PageRank's ``dangling=``, ``LinearSystem.dangling``):
  ``"power"`` without a probe, the only engine that runs the term; a named other mode, the GPUs
  and the path options are refused, naming ``dangling=`` and ``mode='power'``.
* A Dask cluster (``cluster=``, ``route(..., cluster=True)``): ``"power"`` for linear systems
  (:mod:`digraph.dispatch.engines.power.cluster`, code ``cluster-power``), ``"bsp"`` for min/max
  systems (:mod:`digraph.dispatch.engines.push.cluster`, code ``cluster-bsp``) and for k-core
  (:mod:`digraph.dispatch.engines.push.cluster_hindex`, code ``cluster-hindex``); every other
  mode is refused, naming what runs there.
"""

from ..engines.registry import refusal
from ..settings import current
from ...errors import InvalidParameterError
from .modes import CPU_PATH_OPTIONS, MODES, PATH_MODES, PATH_OPTIONS, pathset_key
from .placing import cluster_plan, place, refuse_gpu_workers
from .estimates import choose
from .plans import CODES, Plan
from .measured import candidate, giant_measured, judged_close, probe_measured, share_words
from .probe import CONTINUED, TRIPPED, after_probe, power_decision, probe_judge
from .settings import DEFAULT, RouteSettings

__all__ = ["Plan", "route", "place", "after_probe", "probe_judge", "restricts", "RouteSettings",
           "DEFAULT", "MODES", "PATH_MODES", "PATH_OPTIONS", "CODES"]




def restricts(mode, system, device):
    """Whether a run solves its system where the constant term reaches, when that is a small part
    (:mod:`digraph.dispatch.reach`, :attr:`RouteSettings.reach_share`): the automatic choice of a
    linear system, on the CPU, or on GPUs for systems that are not normalised (PageRank's power
    rounds on a small part cost their launches all the same)."""
    return mode is None and system.family == "linear" and (device == "cpu" or not system.normalize)

_CPU_DEFAULT = {"linear": "scc", "monotone": "vertex-async", "hindex": "peel"}
_GPU_DEFAULT = {"linear": "bsp", "monotone": "vertex-async", "hindex": "peel"}
_WHY_DEFAULT = {
    ("cpu", "linear"): "the SCC engine is the fastest measured for sums on the CPU",
    ("cpu", "monotone"): "vertex-async is the fastest measured for min/max systems on the CPU",
    ("cpu", "hindex"): "one peeling pass is the fastest measured for k-core on the CPU",
    ("gpu", "linear"): "dense bsp rounds are the fastest measured for sums on GPUs",
    ("gpu", "monotone"): "vertex-async (its worklist on the GPU) is the fastest measured for "
                         "min/max systems on GPUs but on road-like graphs",
    ("gpu", "hindex"): "one exact peeling pass, its levels in one launch without a host "
                       "synchronisation, where the h-index rounds iterate",
    ("gpus", "hindex"): "vertex-async is the fastest measured for k-core on several GPUs (the "
                        "peel runs on one)",
}
"""The reasons of the defaults; the figures behind them are in ``docs/benchmarks.md``."""

def check_mode(mode):
    """``mode`` checked (None stays None: automatic)."""
    if mode is None:
        return None
    if mode not in MODES:
        raise InvalidParameterError(f"unknown mode {mode!r}; modes: {', '.join(MODES)} "
                                    "(or None: automatic)")
    return mode


def route(family, mode, device, *, threads=1, graph=None, path_options=(), system=None,
          settings=None, scc_settings=None, cluster=False):
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
    scc_settings : digraph.dispatch.engines.scc.cpu.DagPushSettings, optional
        The SCC engine's settings the run will use, for its ``split_arcs`` (default
        :data:`digraph.dispatch.engines.scc.cpu.DEFAULT`).
    cluster : bool
        The run goes to a Dask cluster's workers (``digraph.run(..., cluster=client)``):
        ``device`` is then ``"cpu"`` or ``"cuda"`` (each worker's GPU: the power iteration
        only), and the engines are the placement ``"cluster"``'s.

    Raises
    ------
    InvalidParameterError
        A mode that does not apply to the family or the device, or path options without a path mode.
    """
    settings = current(DEFAULT) if settings is None else settings
    mode = check_mode(mode)
    where = "dask" if cluster else (
        "cpu" if device == "cpu" else ("multi-gpu" if "," in device else "gpu"))
    path_options = sorted(o for o in path_options if not (o == "priority" and mode == "scc"))
    if cluster and device != "cpu":
        refuse_gpu_workers(family, mode, system)
    if system is not None and getattr(system, "dangling", None) is not None:
        return _dangling_plan(mode, device, where, graph, system, path_options)
    if mode is None:
        if path_options:
            raise InvalidParameterError(
                f"{_apply(path_options)} to the path modes, which walk the PathSet; pass "
                "mode='path' to run one (the automatic choice does not change engine because "
                "of an option)")
        return _automatic(family, where, threads, graph, system, settings, scc_settings)
    if mode == "power" and system is not None:
        from ..engines.power import refusal as power_refusal
        why = power_refusal(graph, system, _KIND[where]) if graph is not None else None
        if why:
            raise InvalidParameterError(f"mode='power' cannot run this system: {why}")
    else:
        why = _refusal(mode, family, where)
        if why:
            raise InvalidParameterError(f"{why}; {_valid_modes(family, where)}")
    if path_options and mode not in PATH_MODES:
        raise InvalidParameterError(f"{_apply(path_options)} to the path modes, not mode={mode!r}")
    if where != "cpu" and set(path_options) & set(CPU_PATH_OPTIONS):
        raise InvalidParameterError("short_path_push= and layer_window= apply to the CPU path "
                                    "modes; the GPU path engine walks every path (docs/gpu.md)")
    return Plan(mode, f"{where}-{mode}", "asked for", mode)


def _automatic(family, where, threads, graph, system, settings, scc_settings):
    """The :class:`Plan` of ``mode=None`` (see the module text)."""
    if where == "dask":
        return cluster_plan(family, graph, system)
    kind = "cpu" if where == "cpu" else "gpu"
    chosen = (_CPU_DEFAULT if where == "cpu" else _GPU_DEFAULT)[family]
    code, reason = "default", _WHY_DEFAULT[(kind, family)]
    if where == "multi-gpu" and family == "hindex":  # no sharded peel: the h-index rounds
        chosen, reason = "vertex-async", _WHY_DEFAULT[("gpus", family)]
    probe, considered, timing = None, [], None
    share_test = "largest component's share of the arcs"
    if chosen == "scc" and graph is not None:
        power, share, is_bound = power_decision(graph, system, settings)
        if share is not None:
            considered.append(candidate("cpu-power", share_test + (" (one-pass bound)" if is_bound
                                                                     else ""),
                                         share, settings.power_share, power == "probe"))
        giant = None
        if (share is None and system is not None and graph.num_arcs
                and not getattr(system, "normalize", False)):
            giant = _giant_share(graph, settings, considered)
        pick = (None if power in ("probe", "continued") or system is None or not graph.num_arcs
                else choose(graph, system, threads, settings, scc_settings,
                            power=power is None and share is not None))
        if pick is not None:
            considered += pick.considered
            timing = pick.timing
        if power == "continued":
            chosen, code = "power", "probe-continued"
            reason = ("an earlier power probe on this graph slowed, but its accelerated rounds "
                      f"were measured to finish sooner ({graph._cache[CONTINUED]}): power "
                      "without a probe")
        elif power == "tripped":
            ratio, k = graph._cache[TRIPPED]
            chosen = pick.mode
            code = "probe-tripped"
            reason = (f"an earlier power probe on this graph tripped (its differences fell by "
                      f"{ratio:.2f} at round {k}: |lambda2| near 1, where the rank-one term buys "
                      f"nothing); {pick.reason}")
        if power in ("continued", "tripped") and judged_close(graph, settings):
            chosen, code, reason, timing = probe_measured(
                graph, system, threads, chosen, code, reason, pick, settings, scc_settings,
                considered)
        elif power == "probe":
            chosen, probe, code = "power", settings.probe_share, "giant-component-probe"
            reason = (f"{share_words(share, is_bound)} (>= {settings.power_share:.0%}): the "
                      f"Google-matrix power iteration, as a probe that continues while its "
                      f"differences fall by {settings.probe_share}*alpha a round or faster")
        elif power == "small":
            considered.append(candidate("cpu-power", "arcs (a probe needs at least)",
                                         graph.num_arcs, settings.probe_min_arcs, False))
            code = "small-graph"
            reason += (f"; {graph.num_arcs:,} arcs (< {settings.probe_min_arcs:,}): no power "
                       "probe, whose rounds could save nothing there")
        elif giant is not None and giant[0] >= settings.bsp_share:
            chosen, code, reason, timing = giant_measured(
                graph, threads, giant, settings, "bsp" if pick is None else pick.model)
        elif pick is not None and (pick.mode != "scc" or pick.timing is not None):
            chosen, code, reason = pick.mode, pick.code, pick.reason
        elif giant is not None or share is not None:
            cut = settings.bsp_share if giant is not None else settings.power_share
            code = "dag-orders-the-rest"
            reason += (f"; {share_words(*(giant or (share, is_bound)))} (< {cut:.0%}: the DAG "
                       "orders the rest)")
    elif where == "gpu" and family == "monotone" and graph is not None:
        cut = _cluster_cut(graph, settings, considered)
        if cut is not None:
            chosen, code, reason = "cluster", "road-like", cut
        elif graph._cache.get(pathset_key()) is not None:
            held = graph.num_arcs >= settings.path_min_arcs
            considered.append(candidate("gpu-path", "arcs, the graph holding its PathSet",
                                         graph.num_arcs, settings.path_min_arcs, held))
            if held:
                chosen, code = "path", "pathset-held"
                reason = (f"the graph holds its PathSet (an earlier path run) and "
                          f"{graph.num_arcs:,} arcs (>= {settings.path_min_arcs:,}): paths walked "
                          "a thread each are the fastest measured for min/max systems on one GPU "
                          "there")
    elif where != "cpu" and family == "linear" and graph is not None and system is not None:
        from ..engines.power.cpu import applies
        from ..engines.power.gpu_affine import applies as affine_applies
        if (graph.num_arcs and not applies(graph, system)
                and getattr(system, "dangling", None) is None):
            chosen, code = "power", "power-on-gpus"
            reason = ("the Google-matrix power iteration is the fastest measured for PageRank on "
                      "GPUs")
        elif (where == "gpu" and graph.num_arcs and not system.normalize
              and affine_applies(graph, system) is None):
            chosen, code = "power", "affine-power-on-gpu"
            reason = ("a sum not normalised, b >= 0, on one GPU: the power iteration of "
                      "x -> b + A x on PageRank's pull")
    return Plan(chosen, f"{where}-{chosen}", f"automatic: {reason}", None, probe, code=code,
                considered=tuple(considered), timing=timing)


_KIND = {"cpu": "cpu", "gpu": "gpu", "multi-gpu": "gpus", "dask": "cluster"}


def _refusal(mode, family, where):
    """Why ``mode`` cannot run a system of ``family`` on ``where`` (``"cpu"``, ``"gpu"``,
    ``"multi-gpu"``), or None when an engine does
    (:func:`digraph.dispatch.engines.registry.refusal`)."""
    return refusal(mode, family, _KIND[where])


_WHERE = {"cpu": "on the CPU", "gpu": "on one GPU", "multi-gpu": "on several GPUs",
          "dask": "on a Dask cluster"}
_ALGOS = {"linear": "PageRank, adsorption", "monotone": "SSSP", "hindex": "k-core"}


def _valid_modes(family, where):
    """Every mode that runs the ``family`` on ``where``, in words (for refusals)."""
    modes = [m for m in MODES if _refusal(m, family, where) is None]
    if not modes:
        return (f"no mode runs the {family} family ({_ALGOS.get(family, family)}) "
                f"{_WHERE[where]} yet")
    listed = ", ".join(repr(m) for m in modes)
    return (f"the modes of the {family} family ({_ALGOS.get(family, family)}) {_WHERE[where]} "
            f"are {listed}, or mode=None for the automatic choice")


def _dangling_plan(mode, device, where, graph, system, path_options):
    """The plan of a system with a dangling vector: the CPU power iteration, or a refusal."""
    if mode not in (None, "power") or where not in ("cpu", "dask"):
        asked = f"mode={mode!r}" if mode not in (None, "power") else f"device={device!r}"
        raise InvalidParameterError(
            f"dangling= is answered by the Google-matrix power iteration only (mode='power', on "
            f"the CPU), not {asked}: the other engines send the dangling mass along the "
            "personalization")
    if path_options:
        raise InvalidParameterError(f"{_apply(path_options)} to the path modes; dangling= runs "
                                    "mode='power'")
    if graph is not None:
        from ..engines.power.cpu import applies
        why = applies(graph, system)
        if why:
            raise InvalidParameterError(f"mode='power' cannot run this system: {why}")
    if mode is None:
        return Plan("power", f"{where}-power", "automatic: dangling= is answered by the "
                    "Google-matrix power iteration only", code="dangling")
    return Plan("power", f"{where}-power", "asked for", "power")


def _cluster_cut(graph, settings, considered):
    """The reason to run a min/max system by clusters on one GPU, or None: a road-like graph (BFS
    balls keeping ``settings.cluster_share`` of their arcs inside) with no in-degree above
    ``settings.cluster_max_in_degree`` (a cluster's thread walks its vertex's in-arcs alone,
    every sweep)."""
    from ...preprocess.clusters import internal_share_sample
    from ...smx.cuda.clusters import CT
    from ..engines.cluster.gpu import DEFAULT as CLUSTER
    size = min(current(CLUSTER).size, CT)
    if not graph.num_arcs:
        return None
    top = int(graph.in_degree.max())
    considered.append(candidate("gpu-cluster", "largest in-degree (at most)", top,
                                 settings.cluster_max_in_degree,
                                 top <= settings.cluster_max_in_degree))
    if top > settings.cluster_max_in_degree:
        return None
    key = ("cluster-share-sample", size)
    share = graph._cache.get(key)
    if share is None:
        share = graph._cache[key] = internal_share_sample(graph, size)
    considered.append(candidate("gpu-cluster",
                                 f"share of arcs inside BFS balls of {size} vertices",
                                 share, settings.cluster_share, share >= settings.cluster_share))
    if share < settings.cluster_share:
        return None
    return (f"BFS balls of {size} vertices keep {share:.0%} of their arcs inside (>= "
            f"{settings.cluster_share:.0%}: a road-like graph) and no in-degree above "
            f"{settings.cluster_max_in_degree:,}: clusters relaxed in shared memory, a value "
            "crossing a whole cluster a round")


def _apply(options):
    """``"cache= applies"`` / ``"cache=, layer_window= apply"``."""
    return f"{', '.join(o + '=' for o in options)} appl{'ies' if len(options) == 1 else 'y'}"


def _giant_share(graph, settings, considered):
    """(share of the arcs in the largest component, whether it is the one-pass bound), for the
    ``bsp_share`` test of a system that is not normalised: the bound decides alone below the
    threshold; above it the condensation is built to look (the bound is loose on web graphs)."""
    share, is_bound = _largest_share(graph)
    if is_bound and share >= settings.bsp_share:
        from ...paths.condensation import condensation_for
        condensation_for(graph)
        share, is_bound = _largest_share(graph)
    considered.append(candidate("cpu-bsp", "largest component's share of the arcs"
                                 + (" (one-pass bound)" if is_bound else ""),
                                 share, settings.bsp_share, share >= settings.bsp_share))
    return share, is_bound


def _largest_share(graph):
    """(share of the arcs in the largest component, whether it is the one-pass bound): from the
    condensation when the graph keeps one, else the bound (nothing is built)."""
    from ...paths.condensation import cached_condensation, largest_share_bound
    cond = cached_condensation(graph)
    if cond is None:
        return largest_share_bound(graph), True
    return (float(cond.comp_arcs.max()) / graph.num_arcs if cond.num_components else 0.0), False
