"""Several GPUs of one host: the graph sharded by vertex ranges, one shard per GPU, with
the replicated vectors exchanged between rounds by peer-to-peer copies or NCCL.

``digraph.run(..., device="cuda:0,1,2,3")`` runs here for ``bsp`` and ``vertex-async``; the path
modes go to the path dispatcher of :mod:`digraph.dispatch.engines.path.gpus` with one
:class:`~digraph.dispatch.engines.path.gpus_worker.GpuWorker` per GPU.

Why vertex shards.  On one GPU the measured fastest modes are ``bsp`` for linear systems and
``vertex-async`` for min/max and h-index systems (``docs/history/benchmarks-notebook.md``); a round
of either reads each arc at most once and is bandwidth-bound on large graphs, so splitting the arcs
over GPUs divides a round's time, and what crosses between GPUs is one vector slice per GPU and
round.  The path dispatcher, whose walks need more rounds and host book-keeping, serves the path
modes.

Layout.  The vertices are cut into ``k`` consecutive ranges holding equal numbers of arcs (the
in-arcs for pull systems, the out-arcs for push systems, the undirected adjacency for h-index);
GPU ``g`` keeps the arcs of its range (the offsets rebased and clipped, so the single-GPU kernels
of :mod:`digraph.smx.cuda.kernels` run unchanged on a shard) and a full-length replica of every
vector a kernel reads.  Per round:

* **linear** (PageRank, adsorption, user sums): every GPU writes its range's *sends*
  ``src_scale · δ`` of the frontier (:func:`~digraph.smx.cuda.linear_pull.linear_frontier`); the
  sends that other GPUs read are *all-gathered*; every GPU then absorbs and pulls its targets in
  one dense pass (:func:`~digraph.smx.cuda.linear_pull.linear_pull`: one random read per arc, δ kept
  for its own range only).  Each range is renumbered so that the vertices other ranges read come
  first (:func:`~.gpus_layout.shard_layout`): a round all-gathers only
  those, and a pull's random reads crowd
  into the ranges' heads.  With ``overlap`` (:class:`MultiGpuSettings`), each target's arcs
  from its own range come first in its in-arc list, and a round sums them while the sends of
  the other ranges are exchanged.  The error bound is tracked from the per-GPU block statistics
  (40 bytes each) and certified, as on one GPU, from the residual recomputed on every shard after
  an all-gather of the ``x`` that other ranges read.
* **monotone** (SSSP, user min/max): every GPU pushes its active sources over their out-arcs into
  its replica (atomic min/max); the replicas are then *all-reduced* with the system's min/max; a
  vertex is active next round when its value changed.  ``vertex-async`` pushes against each
  vertex's last sent value (Gauss–Seidel inside a GPU), ``bsp`` from a snapshot (Jacobi).
* **h-index** (k-core): every GPU recomputes the h-index of its frontier; estimates are
  all-gathered and the "neighbour dropped" marks all-reduced with max.

Transport (``exchange=``): ``"p2p"`` — ``cudaMemcpyPeerAsync`` of each range to every other GPU
(peer access enabled where the driver allows it; an all-reduce gathers the other replicas' slices
of a range on its owner, reduces there and all-gathers back); ``"nccl"`` — grouped NCCL
broadcasts (one per range) and ``ncclAllReduce``.  Both are measured by
``benchmarks/bench_multi_gpu.py`` and ``benchmarks/ab_multi_gpu.py``; the defaults are the faster
there: peer copies queued on events for linear rounds (``linear_exchange``), NCCL for the
others (``default_exchange``; both :class:`MultiGpuSettings`).  Under Numba's CUDA
simulator every shard shares one simulated device and the exchange is a host copy with the same
byte counts, so the logic is tested in CI.

Host threads: kernel launches and copies are asynchronous, so one host thread keeps every GPU
busy between the per-round synchronisations; the uploads of the shards run in one host thread per
GPU (:class:`concurrent.futures.ThreadPoolExecutor`).  The host's share is kept small: a linear
run's vectors and prepared launches are kept for the next run on the same graph and GPUs
(``keep_work``), the round kernels are found by tag, and the rounds switch GPUs through CuPy
alone (:meth:`~digraph.dispatch.runtime.cuda.shards._Shard.switch`).

Settings.  Every tunable is a field of the frozen :class:`MultiGpuSettings` (``solve(...,
settings=)``, default :data:`DEFAULT`), each citing its measurement; nothing here is a module
switch.

Counters, beside the single-GPU ones: ``gpus``, ``exchange`` (transport), ``bytes_between_gpus``,
``gpu_arcs`` (arcs per shard), ``gpu_busy_s`` and ``gpu_idle_share`` per GPU (kernel time measured
with CUDA events against the rounds' wall time; the arc share under the simulator),
``gpu_vertices`` and ``gpu_recuts`` (how often the ranges were re-cut from the kernel times of
earlier runs on the same graph and GPUs:
:func:`~digraph.dispatch.runtime.cuda.ranges.balanced_ranges`); linear runs add
``gpu_exchange_wait_s``, ``overlapped``, ``time_launch``, ``time_gather`` and
``gpu_work_kept``.

The parts: this module keeps :func:`parse_devices`, :func:`gpus_to_use` and :func:`solve`;
:mod:`.gpus_layout` (a linear system's layout and upload), :mod:`.gpus_rounds` (the linear round
pipeline), :mod:`.gpus_linear` and :mod:`.gpus_monotone` (the engines) are beside it, and the floor
of several GPUs is :mod:`digraph.dispatch.runtime.cuda`
(:mod:`~digraph.dispatch.runtime.cuda.ranges`, :mod:`~digraph.dispatch.runtime.cuda.shards`,
:mod:`~digraph.dispatch.runtime.cuda.exchange`, :mod:`~digraph.dispatch.runtime.cuda.timer`, and the
settings :class:`~digraph.dispatch.runtime.cuda.shard_settings.MultiGpuSettings`); a function called
without ``settings`` takes the run's (:func:`digraph.dispatch.settings.current`).
"""


import numpy as np

from ....errors import InvalidParameterError, NotAvailableError
from ...runtime.cuda.backend import gpu_name
from ...runtime.cuda.shard_settings import DEFAULT
from ...settings import current
from ...runtime.cuda.exchange import EXCHANGES, Exchange
from .gpus_linear import solve_sharded_linear
from .gpus_monotone import hindex, monotone
from ...runtime.cuda.ranges import balanced_ranges, learn_balance, shard_ranges
from ...runtime.cuda.shards import kept_work, retain_shards, drop_work, make_shards
from ...runtime.cuda.timer import Timer

__all__ = ["solve", "parse_devices", "gpus_to_use", "prepare", "warm_up"]



def parse_devices(device):
    """The list of ``"cuda:N"`` devices named by ``"cuda:0,1,..."`` (several, distinct;
    :func:`digraph.dispatch.placement.several`)."""
    from ...placement import several
    return list(several(device))


def gpus_to_use(graph, system, devices, min_arcs_per_gpu=None, settings=None):
    """How many of ``devices`` a sharded run of ``system`` uses: no more GPUs than the graph has
    arcs per ``min_arcs_per_gpu`` (default ``settings.min_arcs_per_gpu``; 0: every GPU named), and
    one for families outside ``settings.shard_families`` unless ``min_arcs_per_gpu`` is given
    (measured: sharded min/max pushes lose to one GPU, docs/history/benchmarks-notebook.md).
    ``digraph.run`` runs the one-GPU engine when this is 1 and the default applies."""
    settings = current(DEFAULT) if settings is None else settings
    per = settings.min_arcs_per_gpu if min_arcs_per_gpu is None else int(min_arcs_per_gpu)
    k = len(devices) if per <= 0 else max(1, min(len(devices), graph.num_arcs // per))
    if system.family not in settings.shard_families and min_arcs_per_gpu is None:
        k = 1
    return k


def solve(graph, system, *, devices, mode, tol, max_iter, stats, exchange=None,
          min_arcs_per_gpu=None, layout=None, divide_by_sum=False, settings=None):
    """Run ``system`` on the GPUs ``devices`` (``["cuda:0", "cuda:1", ...]``) in ``mode``
    (``"bsp"`` or ``"vertex-async"``); returns (host state, converged).

    Parameters
    ----------
    graph : digraph.Graph
    system : LinearSystem, MonotoneSystem or HIndexSystem
    devices : list of str
        One entry per shard; under the CUDA simulator the same device may be named repeatedly.
    mode : {"bsp", "vertex-async"}
        Linear systems run dense Jacobi rounds in both (the measured fastest on one GPU is
        ``bsp``); monotone and h-index systems push Jacobi (``bsp``) or against the last sent
        values (``vertex-async``) inside each GPU.
    exchange : {"p2p", "nccl"}, optional
        Transport between GPUs (default ``settings.linear_exchange`` for linear systems,
        ``settings.default_exchange`` for the others).
    min_arcs_per_gpu : int, optional
        Use no more GPUs than the graph has arcs per this many (default
        ``settings.min_arcs_per_gpu``; 0 uses every GPU named).  With one GPU left it runs as
        one shard; ``digraph.run`` runs the one-GPU engine instead (:func:`gpus_to_use`, the
        simple method it could have used).  Given, families outside ``settings.shard_families``
        are sharded too.
    layout : {"out-degree", "id", "none"}, optional
        How linear shards number their vertices (default ``settings.layout``, see
        :func:`shard_layout`).
    divide_by_sum : bool
        Linear systems: divide ``x`` by its sum on the GPUs before it is copied down, and return
        it as a :class:`~digraph.algorithms.base.SumNormalized` array (for an algorithm whose
        answer is that, :attr:`~digraph.algorithms.base.Algorithm.divides_by_sum`: no two passes
        over ``x`` on the host).  Measured: docs/history/benchmarks-lab-notebook.md, "Four GPUs:
        the exchange overlapped with the pull of each GPU's own arcs"; see also
        docs/history/docstring-measurements.md,
        "digraph.dispatch.engines.push.gpus.solve.divide_by_sum".
    settings : MultiGpuSettings, optional
        Default :data:`DEFAULT`.
    """
    if mode not in ("bsp", "vertex-async"):
        raise InvalidParameterError(f"the sharded multi-GPU engine runs bsp and vertex-async, "
                                    f"not {mode!r}")
    settings = current(DEFAULT) if settings is None else settings
    explicit = exchange is not None
    fam = system.family
    exchange = exchange or (settings.linear_exchange if fam == "linear" and settings.overlap
                            else settings.default_exchange)
    if exchange not in EXCHANGES:
        raise InvalidParameterError(f"exchange must be one of {EXCHANGES}, got {exchange!r}")
    k = gpus_to_use(graph, system, devices, min_arcs_per_gpu, settings)
    stats["gpus_named"] = len(devices)
    devices = list(devices)[:k]
    if divide_by_sum and fam != "linear":
        raise InvalidParameterError("divide_by_sum applies to linear systems")
    if fam == "linear":
        offsets = graph.in_offsets
    elif fam == "monotone":
        offsets = graph.out_offsets
    elif fam == "hindex":
        from ...systems import undirected_adjacency
        und = undirected_adjacency(graph)
        offsets = und[0]
    else:
        raise InvalidParameterError(f"unknown system family {fam!r}")
    cost = settings.vertex_cost if fam == "linear" else 0
    learn = settings.balance and fam == "linear" and k > 1
    balance_key = ("multi-gpu-balance", fam, tuple(devices), cost)
    bounds = (balanced_ranges(graph, balance_key, offsets, k, cost, stats, settings) if learn
              else shard_ranges(offsets, k, cost))
    shards = make_shards(devices, offsets, stats, bounds=bounds)
    if fam == "linear":
        works, stats["gpu_work_kept"] = kept_work(graph, devices, settings.keep_work)
        for s, w in zip(shards, works):
            s.work = w
    else:
        drop_work()
    be0 = shards[0].be
    stats["gpu"] = "CUDA simulator" if be0.sim else gpu_name(be0)
    stats["gpus"] = k
    stats["bytes_between_gpus"] = 0
    off = np.asarray(offsets, np.int64)
    stats["gpu_arcs"] = [int(off[s.v1] - off[s.v0]) for s in shards]
    stats["gpu_vertices"] = [s.v1 - s.v0 for s in shards]
    if k == 1 and not explicit:
        exchange = "p2p"  # nothing crosses: no NCCL communicator for one GPU
    try:
        ex = Exchange(shards, exchange, stats)
    except NotAvailableError:
        if explicit:
            raise
        exchange = "p2p"  # CuPy without NCCL
        ex = Exchange(shards, exchange, stats)
    stats["exchange"] = "host (simulator)" if be0.sim else exchange
    timer = Timer(shards, stats["gpu_arcs"])
    try:
        if fam == "linear":
            x, ok = solve_sharded_linear(shards, ex, timer, graph, system, tol, max_iter, stats,
                                         layout, divide_by_sum, settings)
        elif fam == "monotone":
            x, ok = monotone(shards, ex, timer, graph, system, max_iter, stats, mode == "bsp")
        else:
            x, ok = hindex(shards, ex, timer, graph, und, max_iter, stats, mode == "bsp")
    finally:
        ex.close()
        retain_shards(shards, settings.keep_work and fam == "linear")
    timer.report(stats)
    # the simulator has no clocks; a process's first run on these GPUs loads the kernels while
    # its rounds are timed, which a GPU's events count as kernel time
    first = (fam, tuple(devices)) not in _RAN
    _RAN.add((fam, tuple(devices)))
    if learn and not be0.sim and not first:
        learn_balance(graph, balance_key, bounds, stats["gpu_busy_s"], stats.get("rounds", 0),
                      settings)
    return x, ok


_RAN = set()  # (family, devices) of the runs of this process


def prepare(req, devices):
    """The placement's entry (:mod:`digraph.dispatch.engines.registry`): vertex shards, one a
    GPU, for ``bsp`` and ``vertex-async`` (k-core in every mode): the kernels warm, then a
    function that solves ``req``."""
    from ..common import solve_dual_or
    warm_up(req, devices, req.mode)
    divide = getattr(req.algo, "divides_by_sum", False) and req.system.family == "linear"
    return lambda: solve_dual_or(solve, req.graph, req.system, req.tol, req.max_iter, req.stats,
                                 dict(devices=devices, mode=req.mode, divide_by_sum=divide))


def warm_up(req, devices, shard_mode):
    """The sharded engine's kernels of ``shard_mode`` warm on ``devices``, once a process
    (``time_compile``)."""
    from .. import warm
    from ....result import RunStats
    key = ("multi-gpu", req.plan.placement.device, shard_mode, req.system.family)

    def run_tiny():
        tiny = warm.tiny_graph()
        warm.run_tiny(req.system.family, lambda sys, _: solve(
            tiny, sys, devices=devices, mode=shard_mode, tol=1e-3, max_iter=100,
            stats=RunStats.new(), min_arcs_per_gpu=0), divisors=(None,))
        warm.WARM.add(key)

    if key not in warm.WARM:
        warm.timed(req.stats, run_tiny)
