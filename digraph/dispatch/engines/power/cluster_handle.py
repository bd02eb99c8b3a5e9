"""The cluster placement's run (:mod:`.cluster`) on a graph whose shards are already on the
workers: the :class:`~digraph.io.distributed_view.VertexView` of a
:class:`~digraph.io.distributed.DistributedGraph` (:func:`digraph.load_distributed` of
partitioned files), which holds the vertex-sized arrays on the client and no arc.

* :func:`cut`: the shards' bounds and key, the handle's own (``graph.cluster_shards``) or, for a
  graph of this process, the cut of its in-arcs among the workers (cached on the graph) and
  :func:`shard_key`;
* :func:`factors`: the run's scales and arc factors; ``coef="shard"`` when the system's arc
  factors are the weights the shards were built with (``system.shard_weights``), which the
  workers then read there (:class:`.cluster_state.RunState`);
* :func:`check_map`: the affine map (:class:`.cluster_maps.Affine`) needs the arcs on the client
  (its contraction factors, its dual weights): refused on a handle;
* :func:`refuse_restart`: a ``checkpoint_every`` restart cuts the graph again among the workers
  left and loads their shards from the client; a handle's arcs exist only on its workers'
  shards, so its run ends with :class:`~digraph.errors.WorkerLostError` instead.

The pre-flight memory check (:func:`.cluster_checks.check_memory`) needs only ``in_offsets`` and
the bounds, which a handle has.
"""

import hashlib

import numpy as np

from ....errors import InvalidParameterError, WorkerLostError
from ...runtime.cuda.ranges import shard_ranges
from ...systems import linear_factors

__all__ = ["held_by", "shard_key", "cut", "factors", "check_map", "refuse_restart"]


def held_by(graph):
    """The handle whose workers hold ``graph``'s shards (``graph.cluster_shards``), or None for
    a graph of this process."""
    return getattr(graph, "cluster_shards", None)


def shard_key(fingerprint, bounds, workers):
    """The key of a graph's shards on the workers: its fingerprint, the cut and the workers."""
    h = hashlib.blake2b(np.asarray(bounds, np.int64).tobytes(), digest_size=8)
    h.update("\n".join(workers).encode())
    return f"{fingerprint}:{len(workers)}:{h.hexdigest()}"


def cut(graph, workers, vertex_cost, lists=None):
    """``(bounds, key)`` of ``graph``'s shards on ``workers``: a handle's own (its workers only),
    else the cut of the in-arcs into one range a worker (cached on the graph).

    ``lists``: ``(name, offsets, ...)`` of other per-vertex lists than the in-arcs (k-core's
    undirected neighbour lists, ``name = "undirected"``): the cut of their entries, and the key
    of the graph's fingerprint and ``name``, so that their shards and the in-arcs' live apart.
    A handle holds its in-arc shards and, once built on its workers, its undirected lists
    (:meth:`~digraph.io.distributed.DistributedGraph.undirected`)."""
    h = held_by(graph)
    if h is not None:
        if lists is not None and lists[0] != "undirected":
            raise InvalidParameterError(f"{h!r} holds in-arc shards only, not {lists[0]} lists")
        if list(workers) != list(h.workers):
            raise InvalidParameterError(
                f"{h!r} runs on its own workers ({', '.join(h.workers)}), in their order")
        if lists is not None:
            return tuple(h.undirected(vertex_cost)[1:])
        return h.bounds, h.key
    name, offsets = ("in", graph.in_offsets) if lists is None else lists[:2]
    key = ("dask-power-cut", len(workers), vertex_cost) + (() if lists is None else (name,))
    bounds = graph._cache.get(key)
    if bounds is None:
        bounds = graph._cache[key] = shard_ranges(offsets, len(workers), vertex_cost)
    fingerprint = graph.fingerprint() + ("" if lists is None else f":{name}")
    return bounds, shard_key(fingerprint, bounds, workers)


def factors(graph, system):
    """``(src_scale, dst_scale, has, in_coef)`` of a run: ``in_coef`` the arc factors in the
    order of the in-arcs, or ``"shard"`` (``has`` true) when they are the shards' weights."""
    src_scale, dst_scale, has, arc = linear_factors(graph, system)
    if getattr(system, "shard_weights", False):  # the arc factors are the shards' weights
        return src_scale, dst_scale, True, "shard"
    return src_scale, dst_scale, has, (np.ascontiguousarray(arc[graph.in_arcs]) if has else arc)


def check_map(graph, system):
    """Raise :class:`InvalidParameterError` when ``system`` needs the affine map on a handle
    and does not carry its bound's factors (``error_gammas``: computed from the arcs otherwise,
    which only the workers hold)."""
    h = held_by(graph)
    if (h is not None and not getattr(system, "normalize", False)
            and getattr(system, "error_gammas", None) is None):
        raise InvalidParameterError(
            f"mode='power' on {h!r}: the affine map (systems that are not normalised) needs "
            "the arcs in this process for its bound; load the graph with digraph.load")


def refuse_restart(graph, err):
    """With ``checkpoint_every``, after ``err`` (a lost worker): raise
    :class:`WorkerLostError` when ``graph``'s arcs are only on the workers (a handle), whose
    shards cannot be cut again among the workers left; return otherwise."""
    h = held_by(graph)
    if h is None:
        return
    raise WorkerLostError(
        f"{err}; checkpoint_every: {h!r} cannot restart on the workers left: its arcs exist "
        "only in its workers' shards and cannot be cut again from the client; load the graph "
        "again with digraph.load_distributed", worker=err.worker) from err
