"""Path-based asynchronous execution on CPU cores (``mode="path"`` / ``"path-nopriority"``,
DiGraph §3.1–3.2.3).

Dispatch follows the DAG sketch of the :class:`~digraph.PathSet`: layers run in order, and inside a
layer (whose SCC-vertices never depend on each other) rounds repeat over the partitions that still
hold active paths until none is left.  An SCC-vertex whose paths are all inactive after the lower
layers finished never runs again; a split SCC-vertex (the giant one) stays scheduled as a whole
while any of its partitions is active.  Each round is one kernel pass of
:mod:`digraph.smx.cpu_paths` (``fuse_check=False``: two, a *check* of the pending mass, active
arcs and priority score of every path of the scheduled partitions, then a *walk* of the selected
paths).  A partition that holds
whole SCC-vertices (all of them, except the pieces of a split giant) converges *locally*: its
thread sweeps it until its pending mass is within its share, since its inputs are final once the
lower layers are done (Observation 2); small cyclic SCC-vertices then cost one round, not one
round per sweep (``local_sweeps`` counts the extra sweeps).

Path representation (``short_path_push=K``, default :attr:`PathSettings.short_path_push`): a cold
path of at most ``K`` arcs, or a hot path of one arc, is not walked.  Its arcs are grouped by
(partition, source vertex) — within an SCC-vertex, so layers, local convergence and partition sizes
stay as they were — and a group keeps one mirror for all its arcs: pushing it sends ``x_u − gt``
along each of them (the vertex-async delta push).  Checking a group reads two values instead of one
mirror per arc.  On cnr-2000, 85% of the arcs lie on one-arc paths and group into 10× fewer groups.
``short_path_push=0`` walks every path with per-arc mirrors.

Running ahead (``layer_window=W``, default :attr:`PathSettings.layer_window` = 1, i.e. off; linear
systems): each round walks the lowest unfinished layer and, in the same kernel pass, the split
SCC-vertices of the next ``W − 1`` layers (``0``: every higher layer; ``run_ahead_local``: their
whole-SCC partitions too), on inputs that are not yet final.  Observation 2 is kept as a rule on
finishing: only the lowest unfinished layer can finish, by a round that started after all lower
layers had finished (the same test as layer by layer), and a layer that becomes the lowest has all
its partitions scheduled again.  On cnr-2000 it cuts the rounds (570 → 156–321) but not the time
(docs/benchmarks.md "Running ahead"): a round's cost is the scanning of what it schedules, and the
giants still need ~100 rounds each once their inputs are final.

The check is fused into the walk (``fuse_check``, default :attr:`PathSettings.fuse_check`): a round
scores each path or group on the newest state just before walking it, and walks it at once when its
score reaches the threshold taken from the previous round's histogram.  A round that finds nothing
to walk ends the layer, as a check pass did.

Priority (``priority=``):

* ``"pending"`` (default of ``mode="path"``) — soft priority by pending residual mass: the active
  paths are counted in log2 buckets of their pending mass and the walk takes the highest buckets
  holding at least :attr:`PathSettings.select_share` of them; the rest are deferred.  No sort
  (Groute-like soft priority; an exact sort cost 18–70× in wall time in the prototype,
  docs/design.md §7).
* ``"paper"`` — the paper's ``Pri(p) = α·D̄(p)·N(p) − L(p)``: within one layer ``L`` is constant and
  α a positive scale, so the same bucket selection on ``D̄(p)·N(p)``.  ``N(p)`` counts arcs with
  any pending change, however small, so hub paths would be chosen forever and the rest starve
  (seen on cnr-2000: no convergence in 10,000 rounds); every
  :attr:`PathSettings.aging_rounds`-th round of a layer therefore walks every active path.
* ``"none"`` (``mode="path-nopriority"``, DiGraph-w) — every active path every round.

Priority applies only when a layer has at least :attr:`PathSettings.min_priority_paths` active
paths.  Linear systems: a layer is finished when its pending mass is within its share (by arcs) of
the budget that keeps the error bound at half the tolerance (arcs pending less than budget / m are
skipped) or, where only the L∞ bound applies (adsorption), when every vertex's residual is within
half of its budget; a final check recomputes the residual from the state (the mirrors' running
account drifts by rounding) for the sound error bound; if it is not met, the budget is lowered and
the layers swept again — or, when the mirrors have reached their rounding floor (a pending change
is a difference of two close values; near a damping of 1 one sweep's decay drowns in the rounding
of the adds), the run is finished by vertex-level push from the exact residual
(``stats["finished_by"]``).  k-core (the h-index family) depends on in- *and* out-neighbours, so
the directed DAG sketch does not order it: it runs as ``vertex-async``.
"""

from contextlib import contextmanager
from dataclasses import dataclass

import numba
import numpy as np

from ..errors import InvalidParameterError
from ..smx import cpu_paths as P
from . import driver, vertex_async
from .convergence import certified, certified_bound, linear_contraction, pending_budget
from .systems import linear_factors, monotone_arrays, monotone_start

__all__ = ["solve", "PathSettings", "DEFAULT", "PRIORITIES", "STATES", "check_short_path_push",
           "check_layer_window", "resolve_state"]

PRIORITIES = {"none": 0, "pending": 1, "paper": 2}


@dataclass(frozen=True)
class PathSettings:
    """How the CPU path modes (``mode="path"``, ``"path-nopriority"``) walk the PathSet.

    The measurements are in docs/benchmarks.md, "Measurements behind the CPU engines' thresholds"
    (subsections "Path representation: short paths pushed at vertex level" and "Running ahead
    into the next layers"), with more rows in docs/history/benchmarks-lab-notebook.md.

    Attributes
    ----------
    select_share : float
        Soft priority (``priority="pending"`` or ``"paper"``): the walk takes the highest log2
        buckets of the priority score that hold at least this share of the active paths, the
        rest are deferred.  Measured in the single-thread prototype, not this engine
        (docs/design.md §7, "What a first measurement showed"): the top 20% of cnr-2000's giant's
        paths by pending residual each round gave 0.244x BSP's arc updates, the best seen.  This
        engine's priority against none: docs/benchmarks.md, "Path representation" (cnr-2000, K=2:
        0.213x ``bsp``'s arc updates against ``path-nopriority``'s 0.328x); other shares were not
        measured.
    min_priority_paths : int
        Priority applies only when a layer has at least this many active paths (fewer: every
        active path is walked).  Not measured: chosen by hand.
    max_local_sweeps : int
        Most sweeps a partition of whole SCC-vertices makes in one round to converge locally (it
        also stops after 64 sweeps without progress: the rounding floor).  Not measured: chosen by
        hand as a safety cap.
    aging_rounds : int
        ``priority="paper"``: every ``aging_rounds``-th round of a layer walks every active path.
        The paper's ``N(p)`` counts arcs with any pending change, however small, so hub paths
        would be chosen forever and the rest starve (seen on cnr-2000: no convergence in 10,000
        rounds).  The value 4 was not measured against others: chosen by hand.
    max_sweeps : int
        Sweeps over all the layers (each after a failed final certification, with the budget
        lowered 4x; ``stats["path_sweeps"]``) before the run is finished by vertex-level push from
        the exact residual.  Not measured: chosen by hand.
    stall_rounds : int
        A layer whose pending mass (on the L∞ route: largest residual) has not fallen below 0.999
        of its best for this many rounds has stalled at the mirrors' rounding floor; the run is
        then finished by vertex-level push.  Not measured: chosen by hand.
    length_bins : int
        Bins of ``stats["processed_path_lengths"]`` (the last one: that length or more); a
        reporting resolution, not a speed knob (docs/interface.md documents its last bin as 64
        arcs or more).  Not measured.
    sum_refresh : int
        Normalised systems (PageRank), fused check: rounds between recomputations of ``Σx`` for
        the budget.  ``Σx`` only grows (``b ≥ 0``, ``A ≥ 0``, ``x`` from ``b`` upwards), so a
        stale sum gives a smaller, still sound budget, and one numpy sum per round cost 0.1 ms on
        cnr-2000.  The value 8 was not measured against others: chosen by hand.
    short_path_push : int
        Default of ``short_path_push``: cold paths of at most this many arcs (and hot paths of one
        arc) are pushed at vertex level.  Measured (docs/benchmarks.md, "Path representation",
        cnr-2000 PageRank at 1e-8, 2 threads, minimum of 5): K=2 483 ms (1.27x ``bsp``) against
        K=1's 717 ms; K=4 (502) and K=16 (462) are within noise of K=2.  K=1 leaves the cold
        two-arc paths (14% of cnr-2000's arcs) on mirrors, and paths longer than 2 arcs hold under
        1% of the arcs.
    fuse_check : bool
        Default of ``fuse_check``: score each path (group) just before walking it, in the walk,
        instead of a separate check pass per round (linear systems: the priority threshold then
        lags one round; min/max systems: the walk's own test is the check).  Measured
        (docs/benchmarks.md, "Path representation"; the history's "Path representation" has the
        pairs): cnr-2000 with mirrors on every path 3,600 ms fused against 7,726 separate, with
        K=2 483 against 653.  An ablation switch: ``False`` is the separate check pass that
        ``benchmarks/bench_path_ablation.py``'s "separate check" rows measure.
    layer_window : int
        Default of ``layer_window`` (linear systems, fused check): each round walks the lowest
        unfinished DAG layer and runs ahead into the split SCC-vertices of the next ``W − 1``
        layers (``0``: all higher layers; ``1``: layer by layer).  Measured (docs/benchmarks.md,
        "Running ahead into the next layers"): on cnr-2000 running ahead cuts the rounds (570 →
        158–321) but not the time (W=1 496 ms, W=2 475, all layers 556; a quieter run W=1 454–466,
        W=2 507), so the default is layer by layer.
    run_ahead_local : bool
        Default of ``run_ahead_local``: whether running ahead (``layer_window`` ≠ 1) also takes
        the whole-SCC partitions of the higher layers (one sweep a round, without local
        convergence); by default they run only when their layer is the lowest.  Measured
        (docs/benchmarks.md, "Running ahead into the next layers"): all layers with all partitions
        765 ms against 556 with split SCC-vertices only, on cnr-2000.  An ablation switch:
        ``True`` is what ``benchmarks/bench_path_ablation.py``'s "all partitions" rows measure.
    """

    select_share: float = 0.2
    min_priority_paths: int = 512
    max_local_sweeps: int = 10_000
    aging_rounds: int = 4
    max_sweeps: int = 4
    stall_rounds: int = 16
    length_bins: int = 65
    sum_refresh: int = 8
    short_path_push: int = 2
    fuse_check: bool = True
    layer_window: int = 1
    run_ahead_local: bool = False


DEFAULT = PathSettings()


@contextmanager
def _chunks(size):
    """Numba's parallel chunk size for the kernels called inside: the path kernels run with one
    partition per chunk (dynamic: idle threads take the next one), the per-vertex and per-arc
    set-up and certification kernels with the default static split (0) — one vertex per chunk
    made them 2-4x slower."""
    old = numba.get_parallel_chunksize()
    numba.set_parallel_chunksize(size)
    try:
        yield
    finally:
        numba.set_parallel_chunksize(old)


STATES = ("vertex", "arc")
"""Where a path mode keeps what is pending: one residual per vertex (``"vertex"``,
:mod:`digraph.dispatch.dag_push`; linear systems, the default for them) or per arc (``"arc"``:
per-arc mirrors and short-path groups, this module; every family)."""


def resolve_state(state, family, **arc_options):
    """The state a path mode runs with: ``state`` checked, or by default ``"vertex"`` for linear
    systems unless an option of the arc state is given (``arc_options``: name → value, None when
    absent; ``priority="paper"`` counts as one), ``"arc"`` otherwise."""
    given = sorted(k for k, v in arc_options.items()
                   if v is not None and not (k == "priority" and v != "paper"))
    if state is None:
        return "vertex" if family == "linear" and not given else "arc"
    if state not in STATES:
        raise InvalidParameterError(f"state must be one of {', '.join(STATES)}, got {state!r}")
    if state == "vertex":
        if family != "linear":
            raise InvalidParameterError(
                f"state='vertex' applies to linear algorithms (PageRank, adsorption, a LinearSystem), "
                f"not to the {family} family; use state='arc'")
        if given:
            raise InvalidParameterError(
                f"{', '.join(g + '=' for g in given)} appl{'ies' if len(given) == 1 else 'y'} to "
                "state='arc' (per-arc mirrors), not state='vertex'")
    return state


def check_layer_window(w):
    """``layer_window`` as an int ≥ 0 (None stays None: :attr:`PathSettings.layer_window`), or
    InvalidParameterError."""
    if w is None:
        return None
    if isinstance(w, bool) or not isinstance(w, (int, np.integer)) or w < 0:
        raise InvalidParameterError(f"layer_window must be an integer >= 0, got {w!r}")
    return int(w)


def check_short_path_push(k):
    """``short_path_push`` as an int ≥ 0 (None stays None: :attr:`PathSettings.short_path_push`), or
    InvalidParameterError."""
    if k is None:
        return None
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
        raise InvalidParameterError(f"short_path_push must be an integer >= 0, got {k!r}")
    return int(k)


def solve(graph, system, *, tol, max_iter, stats, pathset=None, priority="pending", dag=True,
          skip=True, short_path_push=None, fuse_check=None, push_hot_arcs=True, layer_window=None,
          run_ahead_local=None, state=None, settings=None):
    """Run ``system`` on the paths of ``pathset``; returns (state, converged).

    ``state`` (:data:`STATES`, default by :func:`resolve_state`): ``"vertex"`` hands a linear
    system to :mod:`digraph.dispatch.dag_push` (component by component of the vertex
    condensation, one residual per vertex; ``pathset`` is not needed); ``"arc"`` runs the path
    engine of this module on ``pathset``.

    ``settings``: a :class:`PathSettings` (default :data:`DEFAULT`); ``short_path_push``,
    ``fuse_check``, ``layer_window`` and ``run_ahead_local`` given here override its fields.

    ``short_path_push=K`` (default ``settings.short_path_push``): cold paths of at most ``K``
    arcs, and hot paths of one arc (nothing to carry along), are not walked with per-arc mirrors
    but pushed at vertex level, one mirror per (partition, source vertex) group of their arcs
    (:func:`digraph.smx.cpu_paths.short_arc_groups`); hot paths of two arcs or more and longer
    paths are walked.  ``0``: every path walked with per-arc mirrors.  ``push_hot_arcs=False``
    (ablation) walks every hot path; ``fuse_check`` (default ``settings.fuse_check``) scores paths
    inside the walk instead of a separate check pass per round (``False``: ablation).

    ``layer_window=W`` (default ``settings.layer_window``; linear systems with the fused check and
    skipping, except the L∞ route, which runs layer by layer): each round walks the lowest
    unfinished layer and runs ahead into the split SCC-vertices of the next ``W − 1`` layers
    (``0``: all of them; ``run_ahead_local=True``, an ablation: their whole-SCC partitions too);
    a layer finishes only as the lowest (:func:`_fused_window`).  Min/max systems run layer by layer.

    ``dag=False`` and ``skip=False`` switch mechanisms off for ablation studies
    (``benchmarks/bench_path_ablation.py``): all partitions form one layer (and none converges
    locally), or every path of the scheduled partitions is walked every round with every arc
    transmitted (linear systems).
    """
    settings = DEFAULT if settings is None else settings
    if priority not in PRIORITIES:
        raise InvalidParameterError(f"priority must be one of {sorted(PRIORITIES)}, got {priority!r}")
    state = resolve_state(state, system.family, short_path_push=short_path_push,
                          layer_window=layer_window, fuse_check=fuse_check, priority=priority,
                          push_hot_arcs=None if push_hot_arcs else False,
                          dag=None if dag else False, skip=None if skip else False)
    if state == "vertex":
        from . import dag_push
        return dag_push.solve(graph, system, tol=tol, max_iter=max_iter, stats=stats,
                              priority=priority)
    stats["state"] = "arc"
    if pathset is None:
        raise InvalidParameterError("state='arc' needs the PathSet (digraph.preprocess)")
    if pathset.num_arcs != graph.num_arcs or pathset.num_vertices != graph.num_vertices:
        raise InvalidParameterError("the PathSet was built from another graph")
    short_path_push = check_short_path_push(short_path_push)
    if short_path_push is None:
        short_path_push = settings.short_path_push
    fuse_check = settings.fuse_check if fuse_check is None else bool(fuse_check)
    layer_window = check_layer_window(layer_window)
    if layer_window is None:
        layer_window = settings.layer_window
    stats["fused_check"] = fuse_check
    stats["layer_window"] = layer_window
    run_ahead_local = settings.run_ahead_local if run_ahead_local is None else bool(run_ahead_local)
    stats["run_ahead_local"] = run_ahead_local
    stats["priority"] = priority
    stats.setdefault("arcs_examined", 0)
    if not (dag and skip):
        stats["ablation"] = {"dag": bool(dag), "skip": bool(skip)}
    if system.family == "hindex":
        stats["note"] = "k-core runs vertex-async: its dependencies are undirected"
        return vertex_async.solve(graph, system, tol=tol, max_iter=max_iter, stats=stats)
    sched = _Schedule(pathset, dag, settings.length_bins)
    rep = _representation(pathset, short_path_push, stats, push_hot_arcs)
    with _chunks(1):
        if system.family == "linear":
            out = _solve_linear(graph, system, tol, max_iter, stats, pathset, sched, rep,
                                PRIORITIES[priority], settings, skip, fuse_check, layer_window,
                                run_ahead_local)
        elif system.family == "monotone":
            out = _solve_monotone(graph, system, max_iter, stats, pathset, sched, rep, settings,
                                  fuse_check)
        else:
            raise InvalidParameterError(f"unknown system family {system.family!r}")
    sched.report(stats)
    return out


class _Schedule:
    """Partitions per layer, groups of partitions that hold one split SCC-vertex, book-keeping
    (``length_bins``: bins of the walked-length histogram, :attr:`PathSettings.length_bins`; None,
    for a caller that walks nothing: no histogram)."""

    def __init__(self, ps, dag=True, length_bins=None):
        self.ps = ps
        off = ps.partition_offsets
        K = off.size - 1
        self.num_parts = K
        if K:
            first = ps.path_scc[off[:-1]]
            last = ps.path_scc[off[1:] - 1]
            part_layer = ps.path_layer[off[:-1]]
        else:
            first = last = part_layer = np.zeros(0, np.int64)
        # a group = partitions that must be scheduled together: an SCC-vertex split over several
        # partitions (its last piece may share a partition with the next small SCC-vertices)
        newgroup = np.ones(K, bool)
        newgroup[1:] = first[1:] != last[:-1]
        self.group = np.cumsum(newgroup) - 1
        # a partition alone in its group holds whole SCC-vertices: it may converge locally
        size = np.bincount(self.group, minlength=int(self.group[-1]) + 1 if K else 0)
        self.local = size[self.group] == 1
        if not dag:  # ablation: one layer, nothing converges locally
            part_layer = np.zeros(K, np.int64)
            self.local[:] = False
        self.num_layers = int(part_layer[-1]) + 1 if K else 0
        self.layer_parts = np.searchsorted(part_layer, np.arange(self.num_layers + 1))
        arc_start = ps.path_offsets[off] - off  # first arc (path order) of each partition
        self.part_arcs = np.diff(arc_start)
        self.scc_last = np.full(max(ps.num_scc, 1), -1, np.int64)
        self.scc_runs = np.zeros(max(ps.num_scc, 1), np.int64)
        self.length_hist = (None if length_bins is None else
                            np.zeros((numba.config.NUMBA_NUM_THREADS, length_bins), np.int64))
        self.layer_rounds = np.zeros(self.num_layers, np.int64)
        self.layer_arcs = np.zeros(self.num_layers, np.int64)

    def layer(self, L):
        return np.arange(self.layer_parts[L], self.layer_parts[L + 1], dtype=np.int64)

    def still_active(self, parts, part_active):
        """Scheduled partitions to keep: the active ones and the rest of their groups."""
        g = self.group[parts]
        live = np.zeros(int(g.max()) + 1 - int(g.min()), bool)
        live[g[part_active > 0] - g.min()] = True
        return parts[live[g - g.min()]]

    def report(self, stats):
        ran = self.scc_runs[:self.ps.num_scc]
        stats["scc_vertices"] = int(self.ps.num_scc)
        stats["scc_ran"] = int((ran > 0).sum())
        stats["scc_ran_once"] = int((ran == 1).sum())
        stats["layer_rounds"] = self.layer_rounds.tolist()
        stats["layer_arc_updates"] = self.layer_arcs.tolist()
        h = self.length_hist.sum(axis=0)
        stats["processed_path_lengths"] = {int(k): int(h[k]) for k in np.flatnonzero(h)}


class _Representation:
    """Which paths are walked with per-arc mirrors, and the short-arc groups pushed per vertex.

    Built once per (PathSet, ``short_path_push``) and kept on the PathSet (it depends on nothing
    else); its build time is reported as ``stats["time_representation"]`` (0 when reused).
    """

    def __init__(self, ps, k, push_hot_arcs=True):
        npaths = ps.num_paths
        lengths = ps.path_lengths
        pushed = np.zeros(npaths, bool)
        if k > 0:
            # a hot path of one arc has nothing to carry along: walking it buys nothing
            walked_hot = np.asarray(ps.path_hot, bool) & ((lengths > 1) | (not push_hot_arcs))
            pushed = ~walked_hot & (lengths <= k)
        self.short_path_push = k
        self.push_hot_arcs = bool(push_hot_arcs)
        self.pushed_paths = int(pushed.sum())
        off = np.asarray(ps.partition_offsets, np.int64)
        if self.pushed_paths:
            self.walk_paths = np.flatnonzero(~pushed).astype(np.int64)
            self.walk_offsets = np.searchsorted(self.walk_paths, off).astype(np.int64)
            (self.arc_ids, self.garc, self.gsrc, gpart, self.gdst, self.gscc) = P.short_arc_groups(
                ps.path_offsets, ps.path_vertices, off, ps.path_scc, pushed, np.int64(ps.num_vertices),
                np.int64(max(ps.num_scc, 1)))
            self.group_offsets = np.searchsorted(gpart, np.arange(off.size)).astype(np.int64)
            arc_path = np.repeat(np.arange(npaths, dtype=np.int64), lengths)
            heat = np.asarray(ps.path_heat, np.float64)[arc_path[self.arc_ids]]
            self.gheat = np.add.reduceat(heat, self.garc[:-1]) / np.diff(self.garc)
        else:
            self.walk_paths = np.arange(npaths, dtype=np.int64)
            self.walk_offsets = off
            self.arc_ids = np.zeros(0, np.int64)
            self.garc = np.zeros(1, np.int64)
            self.gsrc = self.gdst = self.gscc = np.zeros(0, np.int64)
            self.group_offsets = np.zeros(off.size, np.int64)
            self.gheat = np.zeros(0, np.float64)
        self.num_groups = int(self.gsrc.size)
        self.pushed_arcs = int(self.arc_ids.size)
        cum = np.zeros(self.walk_paths.size + 1, np.int64)
        np.cumsum(lengths[self.walk_paths], out=cum[1:])
        # what a check pass reads per partition: the arcs of its walked paths, and its groups
        self.part_walk_arcs = cum[self.walk_offsets[1:]] - cum[self.walk_offsets[:-1]]
        self.part_groups = np.diff(self.group_offsets)

    def group_coefficients(self, ps, src_scale, arc_scale, has_arc, dst_scale):
        """(c_e in group order, Σ c_e and max c_e per group)."""
        gcoef = np.empty(self.pushed_arcs, np.float64)
        gsum = np.empty(self.num_groups, np.float64)
        gmax = np.empty(self.num_groups, np.float64)
        P.group_coefficients(self.garc, self.gsrc, self.gdst, self.arc_ids, ps.path_arc_ids,
                             src_scale, arc_scale, has_arc, dst_scale, gcoef, gsum, gmax)
        return gcoef, gsum, gmax

    def report(self, stats):
        stats["short_path_push"] = self.short_path_push
        stats["pushed_paths"] = self.pushed_paths
        stats["pushed_arcs"] = self.pushed_arcs
        stats["push_groups"] = self.num_groups


def _representation(ps, k, stats, push_hot_arcs=True):
    import time
    t0 = time.perf_counter()
    cache = ps.__dict__.setdefault("_representations", {})
    key = (k, bool(push_hot_arcs))
    if key not in cache:
        cache[key] = _Representation(ps, k, push_hot_arcs)
    rep = cache[key]
    stats["time_representation"] = time.perf_counter() - t0
    rep.report(stats)
    stats.setdefault("vertex_pushes", 0)
    stats.setdefault("groups_examined", 0)
    return rep


def _min_score(hist, share):
    """Smallest score of the highest log2 buckets that hold at least ``share`` of the active paths."""
    total = hist.sum()
    need = share * total
    acc = 0
    for b in range(hist.size - 1, -1, -1):
        acc += hist[b]
        if acc >= need:
            return 2.0 ** (b - 64) if b > 0 else 0.0
    return 0.0


def _aging(rule, layer_rounds, settings):
    """Whether this round of a layer (``layer_rounds`` run so far) walks every active path:
    every :attr:`PathSettings.aging_rounds`-th round under the paper's priority (``rule`` 2)."""
    return rule == 2 and layer_rounds % settings.aging_rounds == settings.aging_rounds - 1


def _walk_arrays(ps, rep):
    return rep.walk_offsets, rep.walk_paths, ps.path_offsets, ps.path_vertices


def _solve_linear(graph, sys, tol, max_iter, stats, ps, sched, rep, rule, settings, skip=True,
                  fuse=True, window=1, ahead_local=False):
    n, m = graph.num_vertices, graph.num_arcs
    with _chunks(0):
        gammas = linear_contraction(graph, sys)
    want_residual = gammas[0] >= 1.0  # only the L∞ route bounds the error: need residual per vertex
    src_scale, dst_scale, has_arc, arc_scale = linear_factors(graph, sys)
    coef = np.zeros(m, np.float64)  # c_j of the walked arcs (pushed arcs: in their groups)
    with _chunks(0):
        P.walked_arc_coefficients(rep.walk_paths, ps.path_offsets, ps.path_vertices,
                                  ps.path_arc_ids, src_scale, arc_scale, has_arc, dst_scale, coef)
        gcoef, gsum, gmax = rep.group_coefficients(ps, src_scale, arc_scale, has_arc, dst_scale)
    b = np.ascontiguousarray(sys.b, dtype=np.float64)
    x = b.copy()
    rvec = np.empty(n, np.float64)
    all_paths = np.ones(0 if skip else ps.num_paths, np.int64)
    s = np.zeros(m, np.float64)
    npaths = ps.num_paths
    score = np.zeros(npaths, np.float64)
    nact = np.zeros(npaths, np.int64)
    heat = np.ascontiguousarray(ps.path_heat, dtype=np.float64)
    residual = np.zeros(n if want_residual else 0, np.float64)
    max_in_degree = max(int(graph.in_degree.max()) if n else 1, 1)
    hist = np.zeros((numba.config.NUMBA_NUM_THREADS, 128), np.int64)
    arrays = _walk_arrays(ps, rep)
    G = rep.num_groups
    gt = np.zeros(G, np.float64)  # x = b, every mirror 0
    gscore = np.zeros(G, np.float64)
    gact = np.zeros(G, np.int64)
    all_groups = np.ones(0 if skip else G, np.int64)
    groups = (rep.group_offsets, rep.gsrc, rep.garc, rep.gdst, gcoef, gsum, gmax)
    factor = 1.0
    converged = False
    out_of_rounds = False
    stalled = False
    while True:
        for L in range(sched.num_layers):
            parts = sched.layer(L)
            share = sched.part_arcs[parts].sum() / max(m, 1)  # the layer's share of the budget
            best, since_best = np.inf, 0
            if fuse and skip and window != 1 and not want_residual:
                if L == 0:
                    out_l, stalled_l = _fused_window(
                        window, ahead_local, factor, stats, sched, rep, groups, x, s, coef, heat,
                        m, n, tol, gammas, sys, max_iter, rule, gt, ps, score, nact, gscore, gact,
                        settings)
                    out_of_rounds = out_of_rounds or out_l
                    stalled = stalled or stalled_l
                continue
            if fuse and skip:
                parts, out_l, stalled_l = _fused_layer(
                    L, parts, share, factor, stats, sched, rep, groups, x, s, coef, heat, hist,
                    residual, want_residual, max_in_degree, m, n, tol, gammas, sys, max_iter,
                    rule, gt, ps, score, nact, gscore, gact, settings)
                out_of_rounds = out_of_rounds or out_l
                stalled = stalled or stalled_l
                continue
            while parts.size and not out_of_rounds:
                budget = factor * pending_budget(tol, float(x.sum()), n, gammas, sys.normalize)
                part_active = np.zeros(parts.size, np.int64)
                hist[:] = 0
                if want_residual:
                    # L∞ route: the budget bounds every vertex's residual, not their sum (a sum
                    # that small would sit below the rounding floor of the mirrors)
                    th = budget / (2.0 * max_in_degree)
                    residual[:] = 0.0
                    P.linear_pending(parts, *arrays, coef, s, x, th, score, nact, part_active,
                                     rule, heat, hist, residual, True, *groups, rep.gheat, gt,
                                     gscore, gact)
                    done = residual.max() <= budget / 2.0
                else:
                    th = budget / max(m, 1)
                    total = P.linear_pending(parts, *arrays, coef, s, x, th, score, nact,
                                             part_active, rule, heat, hist, residual, False,
                                             *groups, rep.gheat, gt, gscore, gact)
                    done = total <= budget * share
                _count_check(stats, rep, parts)
                if done or not part_active.any():
                    break
                if stats["rounds"] >= max_iter:
                    out_of_rounds = True
                    break
                level = residual.max() if want_residual else total
                if level < 0.999 * best:
                    best, since_best = level, 0
                else:
                    since_best += 1
                    if since_best >= settings.stall_rounds:  # the mirrors' rounding floor: below
                        stalled = True
                        break
                min_score = 0.0
                aging = _aging(rule, sched.layer_rounds[L], settings)
                counts = hist.sum(axis=0)
                if rule and counts.sum() >= settings.min_priority_paths and not aging:
                    min_score = _min_score(counts, settings.select_share)
                if skip:
                    parts = sched.still_active(parts, part_active)
                    walk_nact, walk_gact, walk_th = nact, gact, th
                else:  # ablation: walk everything, transmit every change
                    walk_nact, walk_gact, walk_th, min_score = all_paths, all_groups, 0.0, 0.0
                local_budget = budget * sched.part_arcs / max(m, 1)
                res = P.linear_walk(parts, *arrays, coef, s, x, walk_th, walk_nact, score, min_score,
                                    sched.local, local_budget, settings.max_local_sweeps,
                                    ps.path_scc,
                                    sched.scc_last, sched.scc_runs, stats["rounds"],
                                    sched.length_hist, *groups, gt, gscore, walk_gact, rep.gscc,
                                    want_residual)
                _count(stats, sched, L, res, parts)
        # final check: the sound bound, from the residual recomputed from the state
        with _chunks(0):
            bound, r1, floor = certified_bound(graph, sys, x, gammas, rvec)
        if certified(bound, r1, floor, tol, stats):
            converged = True
            break
        if out_of_rounds or stats["rounds"] >= max_iter:
            break
        allp = np.arange(sched.num_parts, dtype=np.int64)
        tracked = P.linear_pending(allp, *arrays, coef, s, x, 0.0, score, nact,
                                   np.zeros(allp.size, np.int64), 0, heat, hist, residual, False,
                                   *groups, rep.gheat, gt, gscore, gact)
        if stalled or r1 > 2.0 * tracked or stats.get("path_sweeps", 1) >= settings.max_sweeps:
            # The mirrors hit their rounding floor: a pending change is a difference of two close
            # values, and at a damping near 1 the decay of one sweep drowns in the rounding of the
            # atomic adds.  Finish with vertex-level push, whose residual δ is stored exactly.
            driver.hand_over(stats, "vertex-async", "the walk's mirrors reached their rounding "
                             "floor" if stalled or r1 > 2.0 * tracked else "the sweeps ran out")
            return vertex_async.finish_linear(graph, sys, tol, max_iter, stats, x0=x,
                                              delta0=rvec)
        factor /= 4.0
        stats["path_sweeps"] = stats.get("path_sweeps", 1) + 1
    return _linear_done(stats, bound, r1, x, converged)


def _fused_layer(L, parts, share, factor, stats, sched, rep, groups, x, s, coef, heat, hist,
                 residual, want_residual, max_in_degree, m, n, tol, gammas, sys, max_iter, rule,
                 gt, ps, score, nact, gscore, gact, settings):
    """Rounds of layer ``L`` with the check fused into the walk (:func:`cpu_paths.linear_round`);
    returns (partitions still scheduled, out of rounds, stalled)."""
    best, since_best = np.inf, 0
    min_score = 0.0  # the first round of a layer walks every active path
    part_counts = np.zeros(7 * parts.size, np.int64)
    part_mass = np.zeros(parts.size, np.float64)
    sum_x, age = 0.0, settings.sum_refresh
    while parts.size:
        if sys.normalize and age >= settings.sum_refresh:
            # Σx only grows (b ≥ 0, A ≥ 0, x from b upwards): a stale sum gives a smaller, still
            # sound budget, and one numpy sum per round cost 0.1 ms on cnr-2000
            sum_x, age = float(x.sum()), 0
        age += 1
        budget = factor * pending_budget(tol, sum_x, n, gammas, sys.normalize)
        if want_residual:
            th = budget / (2.0 * max_in_degree)
            residual[:] = 0.0
        else:
            th = budget / max(m, 1)
        part_active = np.zeros(parts.size, np.int64)
        hist[:] = 0
        if stats["rounds"] >= max_iter:  # out of rounds, unless a plain check finds it done
            total = P.linear_pending(parts, *_walk_arrays(ps, rep), coef, s, x, th, score, nact,
                                     part_active, rule, heat, hist, residual, want_residual,
                                     *groups, rep.gheat, gt, gscore, gact)
            _count_check(stats, rep, parts)
            done = (residual.max() <= budget / 2.0) if want_residual else total <= budget * share
            return parts, not (done or not part_active.any()), False
        local_budget = budget * sched.part_arcs / max(m, 1)
        res = P.linear_round(parts, *_walk_arrays(ps, rep), coef, s, x, th,
                             np.full(parts.size, min_score), np.zeros(parts.size, np.int64), rule,
                             heat, hist[:, None, :], residual, want_residual, part_active,
                             sched.local,
                             local_budget, settings.max_local_sweeps, ps.path_scc, sched.scc_last,
                             sched.scc_runs, stats["rounds"], sched.length_hist, *groups,
                             rep.gheat, gt, rep.gscc, part_counts, part_mass)
        res = part_counts[:7 * parts.size].reshape(parts.size, 7).sum(axis=0)
        total = float(part_mass[:parts.size].sum())
        sent, seen, walked, extra, pushed, scanned, gscanned = (int(v) for v in res)
        stats["arcs_examined"] += int(scanned)
        stats["groups_examined"] += int(gscanned)
        if walked or pushed:
            _count(stats, sched, L, res[:5], parts)
        if want_residual:
            level = residual.max()
            done = level <= budget / 2.0
        else:
            level = total
            done = total <= budget * share
        if done or not part_active.any():
            return parts, False, False
        if level < 0.999 * best:
            best, since_best = level, 0
        else:
            since_best += 1
            if since_best >= settings.stall_rounds:
                return parts, False, True
        min_score = 0.0
        aging = _aging(rule, sched.layer_rounds[L], settings)
        counts = hist.sum(axis=0)
        if rule and counts.sum() >= settings.min_priority_paths and not aging:
            min_score = _min_score(counts, settings.select_share)
        parts = sched.still_active(parts, part_active)
    return parts, False, False


def _fused_window(W, ahead_local, factor, stats, sched, rep, groups, x, s, coef, heat, m, n, tol,
                  gammas, sys, max_iter, rule, gt, ps, score, nact, gscore, gact, settings):
    """All layers with the check fused into the walk, running ahead (``layer_window=W``): each
    round walks the lowest unfinished layer ``lo`` and the split SCC-vertices (non-local
    partitions) of layers ``lo+1 … lo+W−1`` (``W = 0``: of every higher layer) in one kernel pass;
    returns (out of rounds, stalled).

    Finishing rule (Observation 2 kept): only the lowest unfinished layer can finish, by a round
    that started after every lower layer had finished and scored its pending mass within its
    share of the budget (or found nothing active) — the same test, on the same state, as the
    layer-by-layer dispatch.  When a layer becomes the lowest, all its partitions are scheduled
    again, so what was pruned while it ran ahead is checked anew.  Run-ahead is extra work on
    inputs that are not yet final: by default it leaves the whole-SCC (local) partitions alone —
    they run, and converge locally, once, when their layer is the lowest; ``ahead_local`` runs
    them ahead too, one sweep a round, without local convergence (the small SCC-vertices then
    run many times).  Each layer of the window has its own priority threshold (histogram slot),
    so run-ahead mass never starves the lowest layer.  A stalled lowest layer (the mirrors'
    rounding floor) is left as :func:`_fused_layer` leaves it, and the run finishes by vertex push.
    """
    L_n = sched.num_layers
    if W <= 0:
        W = max(L_n, 1)
    T = numba.config.NUMBA_NUM_THREADS
    hist3 = np.zeros((T, W, 128), np.int64)
    min_sc = np.zeros(W, np.float64)
    upper = {}
    # partitions that converge locally: only those of the lowest layer (inputs final)
    local = np.zeros_like(sched.local)
    if L_n:
        local[sched.layer(0)] = sched.local[sched.layer(0)]
    rep_arrays = _walk_arrays(ps, rep)
    lo = 0
    lo_parts = sched.layer(0) if L_n else np.zeros(0, np.int64)
    best, since_best = np.inf, 0
    stalled = False
    sum_x, age = 0.0, settings.sum_refresh
    cap = sched.num_parts
    part_counts = np.zeros(7 * max(cap, 1), np.int64)
    part_mass = np.zeros(max(cap, 1), np.float64)
    dummy_res = np.zeros(0, np.float64)
    while lo < L_n:
        if not lo_parts.size:
            lo += 1
            if lo < L_n:
                lo_parts = sched.layer(lo)
                local[lo_parts] = sched.local[lo_parts]
                upper.pop(lo, None)
                min_sc[lo % W] = 0.0
                best, since_best = np.inf, 0
            continue
        segs = [(lo, lo_parts)]
        for L in range(lo + 1, min(lo + W, L_n)):
            if L not in upper:
                lp = sched.layer(L)
                upper[L] = lp if ahead_local else lp[~sched.local[lp]]
                min_sc[L % W] = 0.0
            if upper[L].size:
                segs.append((L, upper[L]))
        parts = np.concatenate([q for _, q in segs]) if len(segs) > 1 else lo_parts
        slots = np.concatenate([np.full(q.size, L % W, np.int64) for L, q in segs])
        mins = min_sc[slots]
        if sys.normalize and age >= settings.sum_refresh:
            sum_x, age = float(x.sum()), 0
        age += 1
        budget = factor * pending_budget(tol, sum_x, n, gammas, sys.normalize)
        th = budget / max(m, 1)
        share = sched.part_arcs[sched.layer(lo)].sum() / max(m, 1)
        part_active = np.zeros(parts.size, np.int64)
        if stats["rounds"] >= max_iter:  # out of rounds, unless a plain check finds it done
            pa = np.zeros(lo_parts.size, np.int64)
            total = P.linear_pending(lo_parts, *rep_arrays, coef, s, x, th, score, nact, pa, rule,
                                     heat, hist3[:, 0, :], dummy_res, False, *groups, rep.gheat,
                                     gt, gscore, gact)
            _count_check(stats, rep, lo_parts)
            if total <= budget * share or not pa.any():
                lo_parts = np.zeros(0, np.int64)
                continue
            return True, False
        hist3[:] = 0
        local_budget = budget * sched.part_arcs / max(m, 1)
        P.linear_round(parts, *rep_arrays, coef, s, x, th, mins, slots, rule, heat, hist3,
                       dummy_res, False, part_active, local, local_budget,
                       settings.max_local_sweeps,
                       ps.path_scc, sched.scc_last, sched.scc_runs, stats["rounds"],
                       sched.length_hist, *groups, rep.gheat, gt, rep.gscc, part_counts, part_mass)
        counts = part_counts[:7 * parts.size].reshape(parts.size, 7)
        tot = counts.sum(axis=0)
        stats["arcs_examined"] += int(tot[5])
        stats["groups_examined"] += int(tot[6])
        if tot[2] or tot[4]:  # a round walked something
            sent, seen, walked, extra, pushed = (int(v) for v in tot[:5])
            stats["vertex_pushes"] += pushed
            stats["local_sweeps"] = stats.get("local_sweeps", 0) + extra
            stats["arc_updates"] += sent
            stats["vertex_updates"] += sent
            stats["arcs_examined"] += seen
            stats["paths_processed"] += walked
            stats["partitions_processed"] += int(parts.size)
            stats["rounds"] += 1
            stats["run_ahead_arc_updates"] = stats.get("run_ahead_arc_updates", 0) + int(
                counts[lo_parts.size:, 0].sum())
            a = 0
            for L, q in segs:
                c = counts[a:a + q.size]
                if c[:, 2].any() or c[:, 4].any():
                    sched.layer_rounds[L] += 1
                    sched.layer_arcs[L] += int(c[:, 0].sum())
                a += q.size
        # next round's priority threshold per layer of the window
        a = 0
        for L, q in segs:
            h = hist3[:, L % W, :].sum(axis=0)
            aging = _aging(rule, sched.layer_rounds[L], settings)
            min_sc[L % W] = (_min_score(h, settings.select_share)
                             if rule and h.sum() >= settings.min_priority_paths and not aging
                             else 0.0)
            if L != lo:
                upper[L] = sched.still_active(q, part_active[a:a + q.size])
            a += q.size
        n_lo = lo_parts.size
        level = float(part_mass[:n_lo].sum())
        if level <= budget * share or not part_active[:n_lo].any():
            lo_parts = np.zeros(0, np.int64)  # the lowest layer is finished
            continue
        if level < 0.999 * best:
            best, since_best = level, 0
        else:
            since_best += 1
            if since_best >= settings.stall_rounds:  # the mirrors' rounding floor: as _fused_layer
                stalled = True
                lo_parts = np.zeros(0, np.int64)
                continue
        lo_parts = sched.still_active(lo_parts, part_active[:n_lo])
    return False, stalled


def _linear_done(stats, bound, r1, x, converged):
    stats["error_bound"] = float(bound)
    stats["residual_l1"] = float(r1)
    return x, converged


def _count_check(stats, rep, parts):
    """A check pass reads the arcs of the walked paths and two values per short-arc group."""
    stats["arcs_examined"] += int(rep.part_walk_arcs[parts].sum())
    stats["groups_examined"] += int(rep.part_groups[parts].sum())


def _count(stats, sched, L, res, parts):
    sent, seen, walked, extra, pushed = res
    stats["vertex_pushes"] += int(pushed)
    stats["local_sweeps"] = stats.get("local_sweeps", 0) + int(extra)
    stats["arc_updates"] += int(sent)
    stats["vertex_updates"] += int(sent)  # each transmitted arc writes its target's master
    stats["arcs_examined"] += int(seen)
    stats["paths_processed"] += int(walked)
    stats["partitions_processed"] += int(parts.size)
    stats["rounds"] += 1
    sched.layer_rounds[L] += 1
    sched.layer_arcs[L] += int(sent)


def _solve_monotone(graph, sys, max_iter, stats, ps, sched, rep, settings, fuse=True):
    n = graph.num_vertices
    op, combine, has_value, value = monotone_arrays(graph, sys)
    x, active = monotone_start(sys, n)
    identity = np.inf if combine == 0 else -np.inf
    s = np.zeros(graph.num_arcs, np.float64)  # mirrors of the walked arcs (pushed: per group)
    with _chunks(0):
        P.walked_monotone_mirrors(rep.walk_paths, ps.path_offsets, ps.path_vertices, active, x,
                                  identity, s)
    if has_value:
        value = value[ps.path_arc_ids]  # path order
    nact = np.zeros(ps.num_paths, np.int64)
    arrays = _walk_arrays(ps, rep)
    gsrc = rep.gsrc
    gt = np.where(active[gsrc], identity, x[gsrc])
    gact = np.zeros(rep.num_groups, np.int64)
    gvalue = value[rep.arc_ids] if has_value else value
    converged = False
    while True:
        for L in range(sched.num_layers):
            parts = sched.layer(L)
            while parts.size:
                part_active = np.zeros(parts.size, np.int64)
                if not fuse or stats["rounds"] >= max_iter:  # out of rounds: done if idle
                    P.monotone_pending(parts, *arrays, s, x, nact, part_active, rep.group_offsets,
                                       gsrc, rep.garc, gt, gact)
                    _count_check(stats, rep, parts)
                    if not part_active.any():
                        break
                    parts = sched.still_active(parts, part_active)
                    part_active = np.zeros(parts.size, np.int64)
                if stats["rounds"] >= max_iter:
                    return x, False
                res = P.monotone_walk(parts, *arrays, value, has_value, op, combine, s, x, nact,
                                      sched.local, settings.max_local_sweeps, ps.path_scc,
                                      sched.scc_last,
                                      sched.scc_runs, stats["rounds"], sched.length_hist,
                                      rep.group_offsets, gsrc, rep.garc, rep.gdst, gvalue, gt,
                                      gact, rep.gscc, fuse, part_active)
                if fuse:
                    # the walk scanned every path and group: what it read is this round's check
                    stats["groups_examined"] += int(rep.part_groups[parts].sum())
                    if not part_active.any():  # nothing was pending: the layer is done
                        stats["arcs_examined"] += int(res[1])
                        break
                _count(stats, sched, L, res, parts)
                if fuse:
                    parts = sched.still_active(parts, part_active)
        allp = np.arange(sched.num_parts, dtype=np.int64)
        if P.monotone_pending(allp, *arrays, s, x, nact, np.zeros(allp.size, np.int64),
                              rep.group_offsets, gsrc, rep.garc, gt, gact) == 0:
            converged = True
            break
        if stats["rounds"] >= max_iter:
            break
    return x, converged
