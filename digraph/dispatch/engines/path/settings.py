"""The CPU path modes' settings and the checks of their options: :class:`PathSettings`, the
priority rules (:data:`PRIORITIES`), the states a path mode keeps (:data:`STATES`,
:func:`resolve_state`) and the checks of ``layer_window`` and ``short_path_push``.  The default
settings (:data:`digraph.dispatch.engines.path.cpu.DEFAULT`) stay in
:mod:`digraph.dispatch.engines.path.cpu`, read there at each call of :func:`~.cpu.solve`, which
passes them on."""

from dataclasses import dataclass

import numpy as np

from ....errors import InvalidParameterError

__all__ = ["PathSettings", "PRIORITIES", "STATES", "check_short_path_push", "check_layer_window",
           "resolve_state"]

PRIORITIES = {"none": 0, "pending": 1, "paper": 2}


@dataclass(frozen=True)
class PathSettings:
    """How the CPU path modes (``mode="path"``, ``"path-nopriority"``) walk the PathSet.

    Measured: docs/history/benchmarks-notebook.md, "Measurements behind the CPU engines'
    thresholds" (subsections "Path representation: short paths pushed at vertex level" and
    "Running ahead into the next layers"), with more rows in
    docs/history/benchmarks-lab-notebook.md.

    Attributes
    ----------
    select_share : float
        Soft priority (``priority="pending"`` or ``"paper"``): the walk takes the highest log2
        buckets of the priority score that hold at least this share of the active paths, the
        rest are deferred.  Chosen from the single-thread prototype, not this engine
        (docs/design.md §7, "What a first measurement showed"); this engine's priority against
        none: docs/history/benchmarks-notebook.md, "Path representation".  Other shares were not
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
        would be chosen forever and the rest starve.  The value 4 was not measured against
        others: chosen by hand.
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
        stale sum gives a smaller, still sound budget, and saves a numpy sum per round.  The
        value 8 was not measured against others: chosen by hand.
    short_path_push : int
        Default of ``short_path_push``: cold paths of at most this many arcs (and hot paths of one
        arc) are pushed at vertex level.  K=1 would leave the cold two-arc paths on mirrors;
        longer paths hold few arcs.  Measured: docs/history/benchmarks-notebook.md, "Path
        representation: short paths pushed at vertex level".
    fuse_check : bool
        Default of ``fuse_check``: score each path (group) just before walking it, in the walk,
        instead of a separate check pass per round (linear systems: the priority threshold then
        lags one round; min/max systems: the walk's own test is the check).  Measured:
        docs/history/benchmarks-notebook.md, "Path representation: short paths pushed at vertex
        level"; the pairs in docs/history/benchmarks-lab-notebook.md, "Path representation".  An
        ablation switch: ``False`` is the separate check pass that
        ``benchmarks/bench_path_ablation.py``'s "separate check" rows measure.
    layer_window : int
        Default of ``layer_window`` (linear systems, fused check): each round walks the lowest
        unfinished DAG layer and runs ahead into the split SCC-vertices of the next ``W − 1``
        layers (``0``: all higher layers; ``1``: layer by layer).  Running ahead cuts the rounds
        but not the time, so the default is layer by layer.  Measured:
        docs/history/benchmarks-notebook.md, "Running ahead into the next layers".
    run_ahead_local : bool
        Default of ``run_ahead_local``: whether running ahead (``layer_window`` ≠ 1) also takes
        the whole-SCC partitions of the higher layers (one sweep a round, without local
        convergence); by default they run only when their layer is the lowest.  Measured:
        docs/history/benchmarks-notebook.md, "Running ahead into the next layers".  An ablation
        switch: ``True`` is what ``benchmarks/bench_path_ablation.py``'s "all partitions" rows
        measure.
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


STATES = ("vertex", "arc")
"""Where a path mode keeps what is pending: one residual per vertex (``"vertex"``,
:mod:`digraph.dispatch.engines.scc.cpu`; linear systems, the default for them) or per arc
(``"arc"``: per-arc mirrors and short-path groups, :mod:`digraph.dispatch.engines.path.cpu`;
every family)."""


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
                f"state='vertex' applies to linear algorithms (PageRank, adsorption, a "
                f"LinearSystem), not to the {family} family; use state='arc'")
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
    """``short_path_push`` as an int ≥ 0 (None stays None:
    :attr:`PathSettings.short_path_push`), or InvalidParameterError."""
    if k is None:
        return None
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
        raise InvalidParameterError(f"short_path_push must be an integer >= 0, got {k!r}")
    return int(k)
