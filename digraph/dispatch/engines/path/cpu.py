"""Path-based asynchronous execution on CPU cores (``mode="path"`` / ``"path-nopriority"``,
DiGraph §3.1–3.2.3).

Dispatch follows the DAG sketch of the :class:`~digraph.PathSet`: layers run in order, and inside a
layer (whose SCC-vertices never depend on each other) rounds repeat over the partitions that still
hold active paths until none is left.  An SCC-vertex whose paths are all inactive after the lower
layers finished never runs again; a split SCC-vertex (the giant one) stays scheduled as a whole
while any of its partitions is active.  Each round is one kernel pass of
:mod:`digraph.smx.cpu.paths` (``fuse_check=False``: two, a *check* of the pending mass, active
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
(docs/history/benchmarks-notebook.md "Running ahead"): a round's cost is the scanning of what it
schedules, and the giants still need ~100 rounds each once their inputs are final.

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

The engine's parts are beside this module: :mod:`.settings` (:class:`PathSettings` and the
checks of the options), :mod:`.cpu_schedule` (the layer schedule, the path representation, the
counters), :mod:`.cpu_linear` and :mod:`.cpu_monotone` (the drivers).  This module keeps
:data:`DEFAULT` and :func:`solve`, which reads the run's settings at each call and passes them on.
"""

from ...settings import current, register
from ....errors import InvalidParameterError
from ..push import cpu_vertex_async as vertex_async
from .settings import (PRIORITIES, PathSettings, check_layer_window, check_short_path_push,
                       resolve_state)
from .cpu_schedule import Schedule, chunks, representation
from .cpu_linear import solve_linear
from .cpu_monotone import solve_monotone

__all__ = ["solve", "DEFAULT"]

DEFAULT = register(PathSettings())


def solve(graph, system, *, tol, max_iter, stats, pathset=None, priority="pending", dag=True,
          skip=True, short_path_push=None, fuse_check=None, push_hot_arcs=True, layer_window=None,
          run_ahead_local=None, state=None, settings=None):
    """Run ``system`` on the paths of ``pathset``; returns (state, converged).

    ``state`` (:data:`STATES`, default by :func:`resolve_state`): ``"vertex"`` hands a linear
    system to :mod:`digraph.dispatch.engines.scc.cpu` (component by component of the vertex
    condensation, one residual per vertex; ``pathset`` is not needed); ``"arc"`` runs the path
    engine (``digraph/dispatch/engines/path/cpu_*.py``) on ``pathset``.

    ``settings``: a :class:`PathSettings` (default :data:`DEFAULT`); ``short_path_push``,
    ``fuse_check``, ``layer_window`` and ``run_ahead_local`` given here override its fields.

    ``short_path_push=K`` (default ``settings.short_path_push``): cold paths of at most ``K``
    arcs, and hot paths of one arc (nothing to carry along), are not walked with per-arc mirrors
    but pushed at vertex level, one mirror per (partition, source vertex) group of their arcs
    (:func:`digraph.smx.cpu.paths_setup.short_arc_groups`); hot paths of two arcs or more and longer
    paths are walked.  ``0``: every path walked with per-arc mirrors.  ``push_hot_arcs=False``
    (ablation) walks every hot path; ``fuse_check`` (default ``settings.fuse_check``) scores paths
    inside the walk instead of a separate check pass per round (``False``: ablation).

    ``layer_window=W`` (default ``settings.layer_window``; linear systems with the fused check and
    skipping, except the L∞ route, which runs layer by layer): each round walks the lowest
    unfinished layer and runs ahead into the split SCC-vertices of the next ``W − 1`` layers
    (``0``: all of them; ``run_ahead_local=True``, an ablation: their whole-SCC partitions too);
    a layer finishes only as the lowest (:func:`_fused_window`).  Min/max systems run layer by
    layer.

    ``dag=False`` and ``skip=False`` switch mechanisms off for ablation studies
    (``benchmarks/bench_path_ablation.py``): all partitions form one layer (and none converges
    locally), or every path of the scheduled partitions is walked every round with every arc
    transmitted (linear systems).
    """
    settings = current(DEFAULT) if settings is None else settings
    if priority not in PRIORITIES:
        raise InvalidParameterError(f"priority must be one of {sorted(PRIORITIES)}, "
                                    f"got {priority!r}")
    state = resolve_state(state, system.family, short_path_push=short_path_push,
                          layer_window=layer_window, fuse_check=fuse_check, priority=priority,
                          push_hot_arcs=None if push_hot_arcs else False,
                          dag=None if dag else False, skip=None if skip else False)
    if state == "vertex":
        from ..scc import cpu as dag_push
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
    sched = Schedule(pathset, dag, settings.length_bins)
    rep = representation(pathset, short_path_push, stats, push_hot_arcs)
    with chunks(1):
        if system.family == "linear":
            out = solve_linear(graph, system, tol, max_iter, stats, pathset, sched, rep,
                                PRIORITIES[priority], settings, skip, fuse_check, layer_window,
                                run_ahead_local)
        elif system.family == "monotone":
            out = solve_monotone(graph, system, max_iter, stats, pathset, sched, rep, settings,
                                  fuse_check)
        else:
            raise InvalidParameterError(f"unknown system family {system.family!r}")
    sched.report(stats)
    return out
