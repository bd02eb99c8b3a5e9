"""The one-GPU path modes' settings: :class:`GpuSettings` (their units and proxies, and the size
from which ``bsp`` on one GPU runs as one shard) and :class:`GpuPathSettings` (their schedule),
with their defaults.  The engines read them with :func:`digraph.dispatch.settings.current`, which
gives a run's own settings when it passed some."""

from dataclasses import dataclass

from .settings import PathSettings
from ...settings import register

__all__ = ["GpuSettings", "DEFAULT", "GpuPathSettings", "PATH_DEFAULT"]


@dataclass(frozen=True)
class GpuSettings:
    """What the one-GPU engine hands to the sharded one and how its path modes cut their work
    (``solve(..., gpu_settings=)``; default :data:`DEFAULT`).

    Attributes
    ----------
    shard_arcs : int
        ``digraph.run``: ``bsp`` on a linear system with at least this many arcs (that fits in
        the GPU's memory) runs as one shard of :mod:`.multi_gpu` (:func:`solve` itself always
        runs the one-GPU engine): dense rounds over the CSC only, vertex factors that are absent
        made on the GPU, the answer copied into one host array.  Well below it this engine is
        faster; the crossover was not looked for.  Measured:
        docs/history/benchmarks-notebook.md, "Several GPUs: PageRank sharded over 1, 2 and 4
        GPUs", "One shard on one GPU".
    unit_arcs : int
        Arcs per thread of the path kernels: consecutive short paths of one layer (one partition,
        for :mod:`~.gpus_worker`) are grouped into a unit of at least this many
        (DiGraph's Figure 5): a thread a path makes each unit's score, histogram and counters an
        arc's worth of work.  Measured: docs/history/benchmarks-notebook.md, "Rounds queued on
        the device" and "The walk's fixed costs".
    proxy_min_in_degree : int
        Vertices with at least this in-degree (the highest
        :data:`~digraph.smx.cuda.walks.PROXY_SLOTS` of them) get proxies in the path modes
        (``proxy=True``).  A proxy's add is a compare-and-swap loop in shared memory (float64 has
        no shared-memory atomic add on sm_90: ``ATOMS.CAST.SPIN.64`` in the walk's SASS), while
        a plain add to ``x`` is a reduction in L2 (``REDG.E.ADD.F64``) that only queues up when
        thousands of arcs hit one vertex a round.  Measured: docs/history/benchmarks-notebook.md,
        "The walk's fixed costs".
    """

    shard_arcs: int = 32 << 20
    unit_arcs: int = 8
    proxy_min_in_degree: int = 1024


DEFAULT = register(GpuSettings())


@dataclass(frozen=True)
class GpuPathSettings:
    """How the GPU path modes schedule their units.  ``select_share``, ``aging_rounds``,
    ``max_sweeps`` and ``stall_rounds`` mean what they mean for the CPU path modes and take their
    defaults from :class:`~.settings.PathSettings` (one value for both devices): no value of
    ``select_share`` wins on every graph on the GPU (measured:
    docs/history/benchmarks-notebook.md, "Rounds queued on the device"), so the CPU's stays.
    ``min_priority_units``: below this many active units a round walks them all (chosen as the
    GPU's counterpart of the CPU's ``min_priority_paths``, not measured).  ``rounds_per_check``:
    rounds queued on the GPU between two reads of the control words (the rounds' one
    synchronisation; :mod:`digraph.smx.cuda.path_rounds`): a run queues at most this many rounds
    past its last, each a no-op launch pair of a few microseconds (measured: same section).  A
    kept work replays these rounds as one CUDA graph
    (:mod:`digraph.dispatch.engines.path.gpu_work`)."""

    select_share: float = PathSettings.select_share
    min_priority_units: int = 4096
    aging_rounds: int = PathSettings.aging_rounds
    max_sweeps: int = PathSettings.max_sweeps
    stall_rounds: int = PathSettings.stall_rounds
    rounds_per_check: int = 8


PATH_DEFAULT = register(GpuPathSettings())
