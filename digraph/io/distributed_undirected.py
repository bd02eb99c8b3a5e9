"""k-core's undirected neighbour lists of a :class:`~digraph.io.distributed.DistributedGraph`,
built on its workers from its files: the arcs never reach the client.

The h-index rounds of the cluster placement (:mod:`digraph.dispatch.engines.push.cluster_hindex`)
read, for each vertex ``v`` of a worker's range, ``N(v)``: the neighbours of ``v`` in the
undirected multigraph of the arcs, self-loops dropped, with multiplicity
(:func:`digraph.dispatch.systems.undirected_adjacency` on a graph of this process).  A handle's
in-arc shards hold each arc once, at its target's worker, so its out-neighbours are elsewhere.
:func:`build` reads the partitions once more (the load's delayed readers, renumbered with its
labels), turns each into its arcs in both directions without self-loops
(:func:`~digraph.io.distributed_parts.symmetric`), counts each vertex's entries (the
offsets reach the client: ``O(n)``), cuts the vertices into one range a worker of about
equal entries, moves the pieces to their range's worker and builds each range's lists there
(:func:`~digraph.io.distributed_parts.split`, :func:`~digraph.io.distributed_parts.build`: the
load's own shuffle), which the worker's plugin then pins as a shard under the handle's
fingerprint and ``"undirected"``, until :meth:`~digraph.io.distributed.DistributedGraph.release`.
"""

import numpy as np

__all__ = ["build"]


def build(handle, vertex_cost, timeout):
    """``(offsets, bounds, key)`` of ``handle``'s undirected lists on its workers (built once
    a ``vertex_cost``, then kept on the handle; another cost releases them and builds anew):
    the running sum of each vertex's entries (length n + 1), the
    ranges' bounds and the shards' key.

    Raises
    ------
    InvalidParameterError
        A handle without files to read (one scattered from this process runs k-core from its
        :class:`~digraph.Graph`); a worker whose ``memory_limit`` is below its range's lists'
        estimated bytes (before any piece moves).
    WorkerLostError
        A worker left while its range was built, or the build took over ``timeout``.
    """
    kept = handle._undirected
    if kept is not None and kept[3] == vertex_cost:
        return kept[:3]
    from ..errors import InvalidParameterError
    parts = handle._parts
    if parts is None:
        raise InvalidParameterError(f"{handle!r} has no files to build its undirected lists from")
    from dask import delayed

    from ..dispatch.engines.power.cluster import shard_key
    from ..dispatch.engines.power.cluster_checks import check_memory
    from ..dispatch.runtime.cuda.ranges import shard_ranges
    from . import distributed_parts as P
    from .distributed_tasks import adopt, per_worker, shuffle, tree
    client, workers, n = handle.client, list(handle.workers), handle.num_vertices
    if kept is not None:  # another cut: the lists of the old one leave the workers first
        from ..dispatch.engines.power.cluster import call
        call(client, workers, "release", lambda i: {"key": kept[2]}, 30.0, "releasing the lists")
        handle._undirected = None
    sym = client.compute([delayed(P.symmetric)(delayed(P.renumber)(a, handle.labels))
                          for a in parts])
    degree = client.gather(tree(client, P.add_counts, per_worker(client, P.counts, n, sym)))[0]
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(degree, out=offsets[1:])
    bounds = shard_ranges(offsets, len(workers), vertex_cost)
    check_memory(client, workers, offsets, bounds, False)  # before anything moves
    built = shuffle(client, sym, bounds, workers, timeout)
    del sym
    key = shard_key(handle.fingerprint + ":undirected", bounds, workers)
    adopt(client, workers, key, bounds, built, timeout)
    handle._undirected = (offsets, bounds, key, vertex_cost)
    return offsets, bounds, key
