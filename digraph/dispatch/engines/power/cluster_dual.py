"""Verified dual weights of a linear system on a Dask cluster, for the affine map's bound on a
graph whose arcs only the workers hold (:func:`digraph.load_distributed`).

The sweeps are :func:`digraph.dispatch.dual_bound.dual_weights`' (``w ← 1 + Aᵀ w`` from
``w = 1``, stopped once ``s = min (w − Aᵀ w) ≥``
:attr:`~digraph.dispatch.dual_bound.DualSettings.slack`, then ``ẑ = w / s'``), each one call to every worker of a run already started
(:mod:`.cluster_dual_worker`: the sums of ``Aᵀ w`` over its in-arcs, sent back to the sources'
workers).  Only ``s`` and ``max w`` come to the client; ``ẑ`` stays on the workers as the run's
dual weights and is kept on their shards for the next run with the same coefficients.

Rounding: each worker's part of ``(Aᵀ w)_u`` is a compensated sum of products of non-negative
factors (within a few ulps of itself); the owner adds the ``k`` parts in plain floating point,
so ``s`` is lowered by ``(16 + k) eps · max w`` before it is used (one process: ``16 eps``).
"""

import time

import numpy as np

from ...dual_bound import DEFAULT as DUAL
from ...settings import current
from .cluster_checks import memory_limits, memory_words, shard_bytes, short_of_memory

__all__ = ["find", "sweeps"]

_EPS = np.finfo(np.float64).eps


def find(client, graph, session, key, has_coef, timeout, stats, call, extra_vectors=0):
    """:func:`sweeps` on the workers of ``session``, unless a worker's ``memory_limit`` is
    below its shard, the run's vectors (``extra_vectors`` more: Anderson's rings) and the
    sweeps' buffers (:func:`.cluster_checks.shard_bytes` with ``dual``): then none is sought
    and ``stats["dual_skipped"]`` says why (the run keeps the L∞ route)."""
    need = shard_bytes(graph.in_offsets, session.bounds, has_coef, dual=True,
                       extra_vectors=extra_vectors)
    short = short_of_memory(memory_limits(client, session.workers), session.workers, need)
    if short:
        stats["dual_skipped"] = (f"{memory_words(short)} with the dual weights' sweeps, so "
                                 "none were sought: the L-inf bound")
        return None
    return sweeps(client, session, key, timeout, stats, call)


def sweeps(client, session, key, timeout, stats, call):
    """Find verified dual weights on the workers of ``session`` (a started run,
    :class:`.cluster.Session`), or take those kept under ``key``; ``call`` is
    :func:`.cluster.call`.  Returns ``max ẑ``, or None when none was found within
    ``max_sweeps`` (the run then keeps its other route).  Sets ``stats["time_dual"]`` and
    ``stats["dual_sweeps"]`` (0 when the weights were kept)."""
    from .cluster_dual_worker import DualWeights
    settings = current(DUAL)
    slack, max_sweeps = float(settings.slack), int(settings.max_sweeps)
    s, k = session, len(session.workers)
    wait = timeout + max(1.0, 0.1 * timeout)
    t0 = time.perf_counter()
    client.register_plugin(DualWeights())

    def each(op, what, **kw):
        return call(client, s.workers, op, lambda i: {"run": s.run, **kw}, wait, what)
    got = each("dual_begin", "the dual weights' start", key=key)
    if all(r["cached"] for r in got):
        stats["time_dual"] = time.perf_counter() - t0
        stats["dual_sweeps"] = 0
        return max(r["zmax"] for r in got)
    if any(r["cached"] for r in got):  # some workers dropped theirs: every worker sweeps
        each("dual_begin", "the dual weights' start", key=key, fresh=True)
    zmax, done = None, max_sweeps
    for j in range(1, max_sweeps + 1):
        now = each("dual_sweep", f"dual sweep {j}", k=j, swap=j > 1, timeout=timeout)
        if not all(r["finite"] for r in now):
            done = j
            break
        smin, wmax = min(r["s"] for r in now), max(r["wmax"] for r in now)
        # s was measured on w: w / s is a verified super-solution once s > 0
        safe = smin - (16 + k) * _EPS * wmax
        if smin >= slack and safe > 0:
            zmax, done = wmax / safe, j
            break
    each("dual_end", "the dual weights' end", key=key, safe=None if zmax is None else safe)
    stats["time_dual"] = time.perf_counter() - t0
    stats["dual_sweeps"] = int(done)
    return zmax
