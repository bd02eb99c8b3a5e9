"""What a shard of the sharded power iteration reads from the others: the packed exchange's
layout, on host arrays.

Shard ``h`` holds the vertices ``[bounds[h], bounds[h + 1])`` and their in-arcs; its pull reads
``z = src_scale ∘ x`` only at its in-arcs' sources.  :func:`reads` lists, for each other shard
``g``, the local indices of range ``g`` that ``h`` reads (what ``g`` sends ``h`` each round);
:func:`compact` numbers the entries ``h`` reads into one compact vector: those of range 0, of
range 1, …, ``h``'s own range whole in its place, each part increasing, so that each received
part is copied into its slice as it comes and the pull reads the in-arcs' sources renumbered
into that vector.  This is the layout of the several-GPU engine's packed exchange
(:mod:`digraph.dispatch.engines.power.gpus_exchange`, ``pack`` and ``_compact``, which build it
on the devices); the Dask cluster placement (:mod:`.cluster_worker`) builds it here, each
worker for its own shard.

Pure numpy, ``O(n + m_h)`` for a shard of ``m_h`` in-arcs (a mark a vertex).
"""

import numpy as np

__all__ = ["reads", "compact"]


def reads(sources, bounds, own):
    """``{g: local indices of range g that shard own reads}`` for every shard ``g != own`` (an
    empty array where it reads none).

    Parameters
    ----------
    sources : array of int
        The sources of shard ``own``'s in-arcs (global vertex numbers).
    bounds : array of int, length k + 1
        Shard ``g`` holds ``[bounds[g], bounds[g + 1])``.
    own : int
        The shard whose reads are listed.

    Returns
    -------
    dict of int -> numpy.ndarray of int64, increasing
    """
    b = np.asarray(bounds, np.int64)
    n = int(b[-1])
    mark = np.zeros(n, np.bool_)
    mark[np.asarray(sources)] = True
    return {g: np.flatnonzero(mark[b[g]:b[g + 1]]).astype(np.int64)
            for g in range(b.size - 1) if g != own}


def compact(sources, bounds, own, idx_of):
    """The compact vector of shard ``own``: (its in-arcs' sources renumbered into it, int64;
    ``base``, the offset of each range's part in it, length k + 1, ``base[-1]`` its size).

    ``idx_of`` is :func:`reads`' answer; range ``own`` takes ``bounds[own + 1] − bounds[own]``
    entries (the whole range), range ``g`` the ``idx_of[g].size`` entries it reads, in the
    order of ``idx_of[g]``.
    """
    b = np.asarray(bounds, np.int64)
    k = b.size - 1
    parts = [np.arange(b[g], b[g + 1], dtype=np.int64) if g == own else idx_of[g] + b[g]
             for g in range(k)]
    base = np.zeros(k + 1, np.int64)
    np.cumsum([p.size for p in parts], out=base[1:])
    kept = np.concatenate(parts) if parts else np.empty(0, np.int64)  # increasing
    src = np.searchsorted(kept, np.asarray(sources, np.int64)).astype(np.int64)
    return src, base
