"""The vertex ranges of the sharded engine (:mod:`digraph.dispatch.engines.push.gpus`): ``k``
consecutive ranges of equal arcs cut from CSR offsets (:func:`shard_ranges`), re-cut from the
kernel time measured per range (:func:`recut_ranges`), and the balance learnt over the runs on a
graph (:func:`balanced_ranges`, :func:`learn_balance`; host state in ``graph._cache``), dropping
the device arrays of the ranges re-cut away from the graph's residency (:func:`forget_ranges`).
Pure numpy on host arrays, the graph's cache and its
:class:`~.residency.Residency` (imported only to drop arrays):
importable and tested without CUDA or its simulator."""

import numpy as np

from ....errors import InvalidParameterError
from ...settings import current
from .shard_settings import DEFAULT as MULTI_GPU

__all__ = ["shard_ranges", "recut_ranges", "balanced_ranges", "learn_balance"]


def shard_ranges(offsets, k, vertex_cost=0):
    """Boundaries ``b[0] = 0 <= ... <= b[k] = n`` of ``k`` consecutive vertex ranges holding about
    ``m / k`` arcs each (CSR ``offsets`` of length n + 1), a vertex counting as ``vertex_cost``
    arcs besides its own."""
    offsets = np.asarray(offsets)
    n = offsets.size - 1
    c = int(vertex_cost)
    m = int(offsets[-1]) + c * n
    return _cuts(offsets, c, (np.arange(1, k, dtype=np.int64) * m) // k)


def _cuts(offsets, c, targets):
    """``[0, i_1, ..., i_{k-1}, n]``: ``i_q`` the first vertex with ``offsets[i] + c·i >=
    targets[q]`` (a bisection over all targets at once: no temporary the size of the graph)."""
    n = offsets.size - 1
    targets = np.asarray(targets, np.int64)
    lo = np.zeros(targets.size, np.int64)
    hi = np.full(targets.size, n + 1, np.int64)
    while np.any(lo < hi):
        mid = (lo + hi) // 2
        low = (offsets[np.minimum(mid, n)].astype(np.int64) + c * mid) < targets
        go = lo < hi
        lo = np.where(go & low, mid + 1, lo)
        hi = np.where(go & ~low, mid, hi)
    b = np.concatenate([[0], np.clip(lo, 0, n), [n]]).astype(np.int64)
    return np.maximum.accumulate(b)


def recut_ranges(offsets, bounds, busy, vertex_cost=0):
    """Boundaries re-cut so that each range gets an equal share of the measured kernel time.

    Range ``j`` of ``bounds`` took ``busy[j]`` (seconds a round, say); inside a range that time
    is taken as spread over its vertices in proportion to their weight (arcs + ``vertex_cost``
    per vertex, the weight :func:`shard_ranges` balances).  The cumulative time is then
    piecewise linear in the weight, and the new boundaries are where it crosses ``q / k`` of
    the total, ``q = 1 .. k − 1``.  With measured times equal the boundaries stay (up to
    rounding); a range of zero weight takes none.

    Parameters
    ----------
    offsets : array of int, length n + 1
        CSR offsets of the sharded arcs (in-arcs for linear systems).
    bounds : array of int, length k + 1
        The boundaries the times were measured on.
    busy : array of float, length k
        Kernel time of each range.
    vertex_cost : int
        Arcs a vertex counts as besides its own.

    Returns
    -------
    numpy.ndarray of int64, length k + 1
    """
    offsets = np.asarray(offsets)
    b = np.asarray(bounds, np.int64)
    busy = np.maximum(np.asarray(busy, np.float64), 0.0)
    k = b.size - 1
    if busy.size != k:
        raise InvalidParameterError(f"{busy.size} times for {k} ranges")
    c = int(vertex_cost)
    W = offsets[b].astype(np.int64) + c * b  # weight before each boundary
    w = np.diff(W).astype(np.float64)
    if busy.sum() <= 0 or k == 1:
        return b.copy()
    cum = np.concatenate([[0.0], np.cumsum(busy)])
    t = np.arange(1, k) * (cum[-1] / k)
    j = np.clip(np.searchsorted(cum, t, side="right") - 1, 0, k - 1)
    frac = np.where(busy[j] > 0, (t - cum[j]) / np.where(busy[j] > 0, busy[j], 1.0), 0.0)
    target = W[j] + np.floor(np.clip(frac, 0.0, 1.0) * w[j]).astype(np.int64)
    return _cuts(offsets, c, target)


def balanced_ranges(graph, key, offsets, k, vertex_cost, stats, settings=None):
    """Shard boundaries for a run: :func:`shard_ranges` on a graph's first run, then re-cut by
    :func:`recut_ranges` from the per-GPU kernel time :func:`learn_balance` kept (cached on the
    graph under ``key``) in the following runs while that time is uneven (by more than
    ``settings.balance_tol``), at most ``settings.balance_recuts`` times
    (:class:`~.shard_settings.MultiGpuSettings`, default
    :data:`~.shard_settings.DEFAULT`).  The first run found even (or the last re-cut)
    settles the ranges for good: from then on the ranges that gave the smallest busiest-GPU
    time, so that a noisy measurement later never costs a new layout (seconds on large
    graphs).
    ``stats["gpu_recuts"]`` counts the re-cuts made."""
    settings = current(MULTI_GPU) if settings is None else settings
    st = graph._cache.get(key)
    if st is None:
        bounds = shard_ranges(offsets, k, vertex_cost)
    elif (not st["settled"] and st["recuts"] < settings.balance_recuts
          and _imbalance(st["busy"]) > settings.balance_tol):
        bounds = recut_ranges(offsets, st["bounds"], st["busy"], vertex_cost)
        if np.array_equal(bounds, st["bounds"]):
            st["settled"] = True  # no vertex left to move
        else:
            st["recuts"] += 1
            forget_ranges(graph, st["bounds"], keep=st["best"][1])
    else:  # even, or the re-cuts used up: settled for good, so noise never re-cuts later
        st["settled"] = True
        bounds = st["best"][1]
        if not np.array_equal(bounds, st["bounds"]):
            forget_ranges(graph, st["bounds"], keep=bounds)
    stats["gpu_recuts"] = 0 if st is None else st["recuts"]
    return np.asarray(bounds, np.int64)


def learn_balance(graph, key, bounds, busy, rounds, settings=None):
    """Keep the kernel time per round of each range of ``bounds`` for the next run's ranges
    (nothing from a run of fewer than ``settings.balance_min_rounds`` rounds)."""
    settings = current(MULTI_GPU) if settings is None else settings
    if rounds < settings.balance_min_rounds:
        return
    per = np.asarray(busy, np.float64) / rounds
    bounds = np.asarray(bounds, np.int64)
    st = graph._cache.setdefault(key, {"recuts": 0, "settled": False, "best": (np.inf, bounds)})
    st["bounds"], st["busy"] = bounds, per
    if per.max() < st["best"][0] or np.array_equal(bounds, st["best"][1]):
        forget_ranges(graph, st["best"][1], keep=bounds)  # the former best's arrays
        st["best"] = (float(per.max()), bounds)


def _imbalance(busy):
    busy = np.asarray(busy, np.float64)
    mean = busy.mean()
    return float(busy.max() / mean - 1.0) if mean > 0 else 0.0


def forget_ranges(graph, bounds, keep):
    """Drop the device arrays kept for the ranges ``bounds`` unless they are those of ``keep``:
    from the graph's residency, a shard's resident arrays (kind ``"multi-gpu"``) of a range of
    ``bounds`` not in ``keep``, and a layout (``"multi-gpu-layout"``) over a range of ``bounds``
    and a range not in ``keep``.  Re-cut ranges would otherwise hold GPU memory for good."""
    if np.array_equal(bounds, keep):
        return
    from .residency import residency  # here: importing this module loads no runtime
    res = residency(graph, create=False)
    if res is None:
        return
    ranges = set(zip(np.asarray(bounds)[:-1].tolist(), np.asarray(bounds)[1:].tolist()))
    kept = set(zip(np.asarray(keep)[:-1].tolist(), np.asarray(keep)[1:].tolist()))

    def stale(r):
        return bool(r & ranges) and not r <= kept
    # "multi-gpu": (family, device, sim, v0, v1); "multi-gpu-layout": (order, shards, split)
    res.forget("multi-gpu", where=lambda key: stale({(key[-2], key[-1])}))
    res.forget("multi-gpu-layout", where=lambda key: stale({(t[2], t[3]) for t in key[1]}))
