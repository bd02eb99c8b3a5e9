"""Warm-ups: a mode's kernels compiled (or loaded from Numba's cache) on a tiny graph before a
run, so that ``time_compile`` and ``time_compute`` are reported apart, and by
:func:`digraph.warmup` ahead of any run.  Each (mode, family, index type, variant) is warmed once
a process (:data:`WARM`)."""

import functools
import time
from contextlib import contextmanager

import numpy as np

from ...graph import Graph
from ...progress import listening
from ...result import RunStats
from ...smx.cpu.serial import parallel_only
from ..route.modes import PATH_MODES
from .common import cpu_solver

__all__ = ["WARM", "cpu", "gpu", "run_tiny", "tiny_graph", "numba_threads", "has_factors",
           "timed"]

WARM = set()


def unheard(fn):
    """``fn`` with no progress listener: the rounds of a warm-up's tiny runs are not the user's."""
    @functools.wraps(fn)
    def unheard(*args, **kwargs):
        with listening(None):
            return fn(*args, **kwargs)
    return unheard


@unheard
def cpu(mode, family, graph, system=None, variants=None, settings=None):
    """Compile (or load from Numba's cache) the kernels of ``mode`` and ``family`` on a tiny graph
    first, so that ``time_compile`` and ``time_compute`` are reported apart.

    Only what the run needs: the variant with or without arc factors that ``system`` has (both when
    ``system`` is None), dense and sparse rounds for ``bsp`` only (no other mode has them), for
    ``peel`` the schedule :func:`digraph.dispatch.engines.peel.cpu.schedule` picks for ``graph``
    (both when ``variants="all"``, as :func:`digraph.warmup` asks), and for ``power`` not the
    Anderson passes, which a run compiles when it first mixes, nor the compensated pull of tight
    tolerances (both with ``variants="all"``), and only the serial twins of the
    kernels that have one (:mod:`digraph.smx.cpu.serial`) as a small graph's run uses them (all of
    them with ``variants="all"``, and for ``bsp`` on min/max systems and k-core the rounds of a
    Dask worker's range, :mod:`digraph.smx.cpu.ranges`).
    Anything a run still compiles later is counted by :func:`digraph.compiling.seconds` and moved
    to ``time_compile`` all the same.  ``settings``: the engine's settings object for the tiny
    runs (``scc``, ``vertex-async``; the warm-up of :mod:`digraph.compiling` passes thresholds
    that switch kernels inside an engine)."""
    itype = graph.out_targets.dtype
    if mode == "peel":
        from .peel import cpu as peel
        wanted = peel.SCHEDULES if variants == "all" else (peel.schedule(graph),)
    elif system is None or variants == "all":
        wanted = (False, True)
    else:
        wanted = (has_factors(system),)
    full = variants == "all"  # a full warm-up stands for a run's; a run's not for a full one
    wanted = [w for w in wanted if (mode, family, itype.str, w, True) not in WARM
              and (full or (mode, family, itype.str, w, False) not in WARM)]
    if not wanted:
        return

    def runs():
        engine = cpu_solver(mode)
        tiny = tiny_graph()
        tiny.out_targets = tiny.out_targets.astype(itype)
        tiny._cache.clear()
        extra = {}
        if mode in PATH_MODES:
            from ...preprocess import preprocess
            extra = {"pathset": preprocess(tiny), "state": "arc"}
        divisors = (10**9, 0) if mode == "bsp" else (None,)
        if mode == "peel":  # the schedules asked for (k-core only)
            from ...algorithms.base import HIndexSystem
            for schedule in wanted:
                engine(tiny, HIndexSystem(), stats=RunStats.new(), peel=schedule)
        elif mode == "power":  # normalised systems only
            import dataclasses
            if variants == "all":  # a run compiles Anderson's passes when it first mixes,
                from ...smx.cpu import anderson as cpu_anderson  # and the sweeps when it first
                from ...smx.cpu import gauss_seidel  # sweeps (serial and parallel)
                cpu_anderson.warm_up()
                gauss_seidel.warm_up()
            from .power.cpu import PowerSettings
            # the plain pull; with variants="all" the compensated one too (tight tolerances)
            for s in (None, PowerSettings(plain_sum_margin=np.inf))[:2 if variants == "all" else 1]:
                run_tiny(family, lambda sys, _: engine(
                    tiny, dataclasses.replace(sys, normalize=True), tol=1e-3, max_iter=100,
                    stats=RunStats.new(), settings=s), wanted, (None,))
        else:
            if mode == "bsp" and variants == "all" and family in ("monotone", "hindex"):
                from ...smx.cpu import ranges  # a cluster worker's rounds (Dask)
                ranges.warm_up(family)
            def solve(sys, bsp_settings):
                s = settings if bsp_settings is None else bsp_settings
                return engine(tiny, sys, tol=1e-3, max_iter=100, stats=RunStats.new(),
                              **(extra if s is None else dict(extra, settings=s)))
            run_tiny(family, solve, wanted, divisors)

    runs()
    if variants == "all":  # the parallel kernels too, that small graphs' runs leave uncompiled
        with parallel_only():
            runs()
    WARM.update((mode, family, itype.str, w, full) for w in wanted)


def has_factors(system):
    """Whether a system has per-arc (or, linear, per-target) factors: the warm-up's variant."""
    if system.family == "linear":
        return system.arc_scale is not None or system.dst_scale is not None
    if system.family == "monotone":
        return system.arc_value is not None
    return False


def tiny_graph():
    return Graph.from_arrays(np.array([0, 1, 2, 0]), np.array([1, 2, 0, 2]))


@unheard
def run_tiny(family, solve, factors=(False, True), divisors=(10**9, 0)):
    """``solve(system, settings)`` a tiny system of ``family`` without and/or with arc factors
    (``factors``), every round dense and then every round sparse (a
    :class:`~.push.cpu_bsp.BspSettings` of each ``dense_divisor`` in ``divisors``;
    ``None``: the defaults), so that the kernels those variants use are compiled."""
    from ...algorithms.base import HIndexSystem, LinearSystem, MonotoneSystem
    from .push.cpu_bsp import BspSettings
    n, m = 3, 4
    for arc in (np.ones(m) if f else None for f in factors):
        if family == "linear":
            sys = LinearSystem(b=np.ones(n), src_scale=np.full(n, 0.4), arc_scale=arc)
        elif family == "monotone":
            sys = MonotoneSystem(init=np.array([0.0, np.inf, np.inf]), relax="plus", combine="min",
                                 arc_value=arc)
        else:
            sys = HIndexSystem()
        for divisor in divisors:
            solve(sys, None if divisor is None else BspSettings(dense_divisor=divisor,
                                                                monotone_dense_divisor=divisor))




@unheard
def gpu(be, mode, family, device):
    """Compile the GPU kernels of ``mode`` and ``family`` on a tiny graph (``time_compile``)."""
    key = ("gpu", be.sim, be.device_id, mode, family)
    if key in WARM:
        return
    tiny = tiny_graph()
    extra = {}
    if mode in PATH_MODES:
        from ...preprocess import preprocess
        extra = {"pathset": preprocess(tiny), "priority": "pending" if mode == "path" else "none"}
    if mode == "power":  # normalised systems, then the affine map's iteration
        import dataclasses
        from .power import gpu as gpu_power
        from .power.gpu_settings import POWER_DEFAULT
        for forced in (dict(anderson_arcs=0, anderson_ratio=0.0),  # Anderson's passes too
                       dict(cusparse_arcs=0)):  # the pull by cuSPARSE and its sums kernel
            run_tiny(family, lambda sys, _: gpu_power.solve(
                tiny, dataclasses.replace(sys, normalize=True), tol=1e-8, max_iter=100,
                stats=RunStats.new(), device=device,
                settings=dataclasses.replace(POWER_DEFAULT, **forced)), divisors=(None,))
        run_tiny(family, lambda sys, _: gpu_power.solve(
            tiny, sys, tol=1e-8, max_iter=100, stats=RunStats.new(), device=device),
            divisors=(None,))
    else:
        from . import one_gpu
        run_tiny(family, lambda sys, settings: one_gpu.solve(
            tiny, sys, mode=mode, tol=1e-3, max_iter=100, stats=RunStats.new(), device=device,
            settings=settings, **extra))
    WARM.add(key)


@contextmanager
def numba_threads(threads):
    """Numba's thread count set to ``threads`` for the block (None: left as it is)."""
    import numba
    if threads is None:
        yield
        return
    old = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        yield
    finally:
        numba.set_num_threads(old)


def timed(stats, fn):
    """``fn()``, its time in ``stats["time_compile"]`` (a warm-up)."""
    t0 = time.perf_counter()
    fn()
    stats["time_compile"] += time.perf_counter() - t0
