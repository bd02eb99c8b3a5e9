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
        runs the one-GPU engine): dense rounds over the CSC only, vertex factors that are absent made on
        the GPU, the answer copied into one host array.  Measured on an H100
        (``bench_multi_gpu.py --unrouted``, 2026-11-26, ``digraph.run`` PageRank to 1e-8): R-MAT
        2^24 890 ms routed against 1,278 ms here, 2^25 1,637 against 2,638 ms; on cnr-2000
        (3.2 M arcs) this engine was faster (43 against 90 ms, an earlier session).  Last
        measured on an H200: R-MAT 2^25 921 ms as one shard against 2,102 ms here
        (docs/history/benchmarks-notebook.md, "Several GPUs: PageRank sharded over 1, 2 and 4 GPUs", "One shard
        on one GPU").  The crossover between 3.2 M and 268 M arcs was not looked for.
    unit_arcs : int
        Arcs per thread of the path kernels: consecutive short paths of one layer (one partition,
        for :mod:`~.gpus_worker`) are grouped into a unit of at least this many
        (DiGraph's Figure 5).  Measured on an H200 (``bench_gpu_path_rounds.py``,
        docs/history/benchmarks-notebook.md, "Rounds queued on the device"): 8 against 1, 2 and 16 arcs,
        cnr-2000 43.8 ms against 70.3 / 53.5 / 44.5, dblp-2010 37.6 against 70.1 / 54.3 / 34.7
        (a thread a path makes each unit's score, histogram and counters an arc's worth of
        work).  Again after the walk's fixed costs were cut, with proxies from 1024: 1, 2 and 4
        arcs gave the small graphs no time (wiki-Vote 3.85 / 3.80 / 3.81 against 3.94 ms) and
        cost dblp-2010 rounds (202 / 183 / 179 against 127).
    proxy_min_in_degree : int
        Vertices with at least this in-degree (the highest
        :data:`~digraph.smx.cuda.walks.PROXY_SLOTS` of them) get proxies in the path modes
        (``proxy=True``).  A proxy's add is a compare-and-swap loop in shared memory (float64 has
        no shared-memory atomic add on sm_90: ``ATOMS.CAST.SPIN.64`` in the walk's SASS), while
        a plain add to ``x`` is a reduction in L2 (``REDG.E.ADD.F64``) that only queues up when
        thousands of arcs hit one vertex a round.  Measured on an H200
        (``bench_gpu_path_rounds.py``, docs/history/benchmarks-notebook.md, "The walk's fixed costs"), 1024
        against the old 64: wiki-Vote (hubs of in-degree 113–457) 3.88 against 4.37 ms,
        cit-HepPh (169–846) 4.49 against 4.87, dblp-2010 (103–238) 10.8 against 11.5;
        cnr-2000's top 128 all have in-degree 1,311 or more and keep their proxies (18.2 ms;
        26.1 without any).  No graph measured has hubs between 846 and 1,311.
    """

    shard_arcs: int = 32 << 20
    unit_arcs: int = 8
    proxy_min_in_degree: int = 1024


DEFAULT = register(GpuSettings())


@dataclass(frozen=True)
class GpuPathSettings:
    """How the GPU path modes schedule their units.  ``select_share``, ``aging_rounds``,
    ``max_sweeps`` and ``stall_rounds`` mean what they mean for the CPU path modes and take their
    defaults from :class:`~.settings.PathSettings` (one value for both devices).
    ``select_share`` was measured on an H200 (docs/history/benchmarks-notebook.md, "Rounds queued on the
    device"): 0.2 is best on cnr-2000 (22.8 ms against 25.3 / 26.6 at 0.5 / 0.8) and worst on
    dblp-2010 (16.2 against 13.3 / 12.6) and wiki-Vote, so no value wins everywhere and the
    CPU's stays; the others have no GPU measurement.  ``min_priority_units``: below this many
    active units a round walks them all (not measured: chosen as the GPU's counterpart of the
    CPU's ``min_priority_paths``).  ``rounds_per_check``:
    rounds queued on the GPU between two reads of the control words (the rounds' one
    synchronisation; :mod:`digraph.smx.cuda.path_rounds`): a run queues at most this many rounds
    past its last, each a no-op launch pair of a few microseconds; 32 against 8 made no
    difference on cnr-2000 (43.9 against 43.8 ms, H200).  A kept work replays these rounds as
    one CUDA graph (:mod:`digraph.dispatch.engines.path.gpu_work`)."""

    select_share: float = PathSettings.select_share
    min_priority_units: int = 4096
    aging_rounds: int = PathSettings.aging_rounds
    max_sweeps: int = PathSettings.max_sweeps
    stall_rounds: int = PathSettings.stall_rounds
    rounds_per_check: int = 8


PATH_DEFAULT = register(GpuPathSettings())
