"""A graph whose arcs live on the workers of a Dask cluster: :func:`load_distributed` reads a
partitioned edge list there, or scatters a :class:`~digraph.Graph` of this process, and returns a
:class:`DistributedGraph` that ``digraph.run(handle, "pagerank", cluster=client)`` runs.

Reading partitioned files (the tasks are :mod:`.distributed_parts`'; every arc array stays on the
workers, the client holds futures and arrays of one entry a vertex at most):

1. each file is opened by ``dask.dataframe`` (``read_parquet``, ``read_csv``), its columns checked
   against its schema (Parquet) or header (CSV: ``dask.dataframe`` reads a sample of the first
   bytes to set up the columns);
2. each partition is read on a worker and checked (integer ids, no missing value, no NaN
   weight); its sorted distinct ids are merged in a tree of tasks and stay on a worker (the
   labels); the partitions are then read a second time, each mapping its ids to ``0..n-1`` by
   ``searchsorted`` against the labels (two reads of the files, so that no worker holds the
   read arcs of all its partitions while the labels are merged);
3. in-degrees, out-degrees and out-weight sums are added up on each worker (one array of
   each a worker), then in a tree of tasks, and come to the client (``O(n)``): it cuts the vertices into one range a worker of about equal in-arcs
   (:func:`~digraph.dispatch.runtime.cuda.ranges.shard_ranges` on the running sum of the
   in-degrees), as the cluster placement cuts a graph of this process;
4. each partition is cut by its arcs' target range; worker ``g`` gathers its pieces from the
   workers that hold them and sorts them into its range's in-arcs; the power iteration's worker
   plugin (:mod:`digraph.dispatch.engines.power.cluster_worker`) adopts them as a pinned shard.
"""

import hashlib
import operator
import time

import numpy as np

from ..errors import GraphFormatError, InvalidParameterError, NotAvailableError
from ..graph import Graph
from .distributed_tasks import (adopt as _adopt, per_worker as _per_worker, shuffle as _shuffle,
                                tree as _tree)
from .distributed_files import (columns as _columns, files as _files, name as _name,
                                open_frame, why as _why)

__all__ = ["DistributedGraph", "load_distributed"]

class DistributedGraph:
    """A graph held in shards by the workers of a Dask cluster (:func:`load_distributed`).

    Attributes
    ----------
    num_vertices, num_arcs : int
    bounds : numpy.ndarray of int64, length k + 1
        Worker ``workers[g]`` holds the in-arcs of the vertices ``[bounds[g], bounds[g + 1])``
        (internal numbers: the labels' ranks).
    workers : tuple of str
        The workers' addresses, one shard each, in the order of the ranges.
    key : str
        The shards' key on the workers (the fingerprint, the cut, the workers).
    fingerprint : str
        A digest of the arcs, the weights and the labels.
    weighted : bool
    source : str
        Where the arcs came from (the files, or ``"memory"``).
    labels : distributed.Future or numpy.ndarray
        The original vertex id of each vertex, sorted (int64): a future of a worker's array for
        files (:attr:`vertex_ids` brings it to the client), the graph's ``vertex_ids`` for a
        scattered graph.
    in_offsets, out_degree : numpy.ndarray of int64
        The running sum of the in-degrees (length n + 1) and the out-degrees, on the client.
    timings : dict of str -> float
        Seconds of each step of the load: ``labels``, ``renumber``, ``degrees``, ``cut``,
        ``shuffle`` (the pieces moved and each range built), ``adopt``.
    out_weight, in_weight : numpy.ndarray of float64 or None
        The out- and in-weight sums (weighted graphs).
    """

    def __init__(self, client, *, n, m, bounds, workers, key, fingerprint, weighted, source,
                 labels, in_offsets, out_degree, out_weight=None, weight_min=np.inf,
                 weight_finite=True, graph=None, in_weight=None):
        self.client = client
        self.num_vertices, self.num_arcs = int(n), int(m)
        self.bounds = np.asarray(bounds, np.int64)
        self.workers = tuple(workers)
        self.key, self.fingerprint = key, fingerprint
        self.weighted, self.source, self.labels = bool(weighted), source, labels
        self.in_offsets, self.out_degree, self.out_weight = in_offsets, out_degree, out_weight
        self.in_weight = in_weight
        self.weight_min, self.weight_finite = float(weight_min), bool(weight_finite)
        self.graph = graph  # a scattered Graph of this process, else None
        self._ids = None
        self.timings = {}  # seconds of each step of the load (load_distributed)
        self._parts = None  # the partitions' delayed readers (load_distributed)
        self._undirected = None  # k-core's lists on the workers (distributed_undirected)

    @property
    def vertex_ids(self):
        """The original vertex ids, sorted, on the client (gathered once: ``O(n)``)."""
        if self._ids is None:
            self._ids = (self.labels if isinstance(self.labels, np.ndarray)
                         else np.asarray(self.client.gather(self.labels)))
        return self._ids

    @property
    def cluster_shards(self):
        """What the cluster engine reads of a graph whose shards are on the workers."""
        return self

    def lost(self, where):
        """Raise: the shards of ``where`` (addresses) are gone, and their arcs with them."""
        from ..errors import WorkerLostError
        raise WorkerLostError(
            f"the shards of {self!r} are no longer on worker {', '.join(where)} (restarted, or "
            "released); load the graph again with digraph.load_distributed", worker=where[0])

    def undirected(self, vertex_cost=0, timeout=300.0):
        """``(offsets, bounds, key)`` of k-core's undirected neighbour lists, built on the
        workers from the files and pinned there (:mod:`.distributed_undirected`; once)."""
        from .distributed_undirected import build
        return build(self, vertex_cost, timeout)

    def release(self):
        """Drop the shards from the workers (a later run on this handle is refused)."""
        from ..dispatch.engines.power.cluster import call
        keys = [self.key] + ([self._undirected[2]] if self._undirected is not None else [])
        for key in keys:
            call(self.client, list(self.workers), "release", lambda i, k=key: {"key": k}, 30.0,
                  "releasing the shards")
        self._undirected = None

    def __repr__(self):
        return (f"<digraph.DistributedGraph {self.source}: {self.num_vertices} vertices, "
                f"{self.num_arcs} arcs, {'weighted' if self.weighted else 'unweighted'}, "
                f"{len(self.workers)} workers>")


def load_distributed(source, client, *, format=None, columns=("src", "dst"), weight=None,
                     sep=None, header=True, vertex_cost=0, timeout=300.0):
    """Load a graph onto the workers of a Dask cluster, in one shard a worker.

    Parameters
    ----------
    source : str, os.PathLike, list of them, or Graph
        Parquet files, CSV or TSV files: a file, a folder (its ``.parquet``/``.pq``, ``.csv``
        or ``.tsv`` files), a glob pattern, or a list of these, read through ``dask.dataframe``
        by the workers (the paths must be readable where the workers run).  Or a
        :class:`~digraph.Graph` of this process, scattered: its shards are those
        ``digraph.run(graph, ..., cluster=client)`` loads, under the same key.
    client : distributed.Client
        A running synchronous client; every worker it knows gets one shard.
    format : {"parquet", "csv", "tsv"}, optional
        The files' format (default: told by their names).
    columns : (str, str)
        The source and target columns (CSV/TSV without a header line: the names given to the
        first two fields).  Ids must be integers (int64; negative ones allowed, as
        :func:`digraph.load` allows them); they are renumbered to ``0..n-1`` in increasing order
        and kept as :attr:`DistributedGraph.labels`.
    weight : str, optional
        The weight column (float64, NaN refused); None: unweighted.
    sep : str, optional
        CSV/TSV field separator (default ``","``, or a tab for ``.tsv``).
    header : bool
        CSV/TSV: the first line of each file names the columns (default True).
    vertex_cost : int
        Arcs a vertex counts as in the cut into ranges.
    timeout : float
        Seconds the ranges' build, and then the shards' adoption, may each take.

    Returns
    -------
    DistributedGraph

    Notes
    -----
    What reaches the client: futures, the columns' names, and arrays of one entry a vertex (the
    in-degrees' running sum, the out-degrees, the out-weight sums, and the labels when asked
    for); the running sum of the in-degrees is cut there, ``O(n)`` work.  Arc arrays never do.
    The shards are pinned on the workers until :meth:`DistributedGraph.release`.

    Raises
    ------
    GraphFormatError
        A file missing or unreadable, a column missing, ids that are not integers, a missing id,
        a NaN weight, or no arc at all (each naming the file).
    InvalidParameterError, NotAvailableError
        A bad ``client``, format or option; dask's dataframe (pandas) or pyarrow missing.
    WorkerLostError
        A worker left the cluster while its range was being built (out of memory, say), or the
        build took over ``timeout``.
    """
    from ..checks import check_cluster
    client, workers = check_cluster(client, "cpu", None)[:2]
    if isinstance(source, Graph):
        return _scatter(source, client, workers, vertex_cost)
    cols = _columns(columns, weight)
    files, fmt = _files(source, format)
    try:
        import dask.dataframe as dd
    except ImportError as e:
        raise NotAvailableError(f"load_distributed needs dask.dataframe ({e}): pip install "
                                "'digraph-engine[cluster]'") from None
    from . import distributed_parts as P
    parts, where = [], []
    for f in files:
        frame = open_frame(dd, f, fmt, cols, sep, header)
        for d in frame.to_delayed():
            parts.append(d)
            where.append(f)
    from dask import delayed
    arrays = [delayed(P.part_arrays)(d, cols[0], cols[1], cols[2] if len(cols) > 2 else None)
              for d in parts]
    # first pass: each partition's distinct ids (its arcs dropped as soon as they are listed)
    clock = _Clock()
    ids = client.compute([delayed(P.part_labels)(a) for a in arrays])
    _raise_first(client, ids, where)
    labels = _tree(client, P.merge_labels, ids)
    del ids
    n = int(client.submit(len, labels, pure=False).result())
    clock.lap("labels")
    # second pass: the files read again and renumbered; only the renumbered arcs are kept
    ren = client.compute([delayed(P.renumber)(a, labels) for a in arrays])
    _raise_first(client, ren, where)
    clock.lap("renumber")
    ind, outd, wsum, wmin, finite, win = client.gather(
        _tree(client, P.add_counts, _per_worker(client, P.counts, n, ren)))
    m = int(ind.sum())
    clock.lap("degrees")
    if m == 0:
        raise GraphFormatError("the edge list holds no arc (a distributed graph needs at least "
                               "one; digraph.load reads an empty graph)", path=_name(files))
    in_offsets = np.zeros(n + 1, np.int64)
    np.cumsum(ind, out=in_offsets[1:])
    from ..dispatch.runtime.cuda.ranges import shard_ranges
    bounds = shard_ranges(in_offsets, len(workers), vertex_cost)
    clock.lap("cut")
    built = _shuffle(client, ren, bounds, workers, timeout)
    del ren
    # each digest read where its range was built: a task placed elsewhere would copy the shard
    # there, and Dask's memory manager may then drop the copy the shard's worker adopts
    digests = client.gather([client.submit(operator.getitem, b, 3, workers=[w],
                                           allow_other_workers=False, pure=False)
                             for b, w in zip(built, workers)])
    clock.lap("shuffle")
    fp = hashlib.blake2b(digest_size=16)
    fp.update(np.array([n, m, weight is not None], np.int64).tobytes())
    fp.update("".join(digests).encode())
    fp.update(client.submit(P.digest_labels, labels, pure=False).result().encode())
    from ..dispatch.engines.power.cluster import shard_key
    key = shard_key(fp.hexdigest(), bounds, workers)
    _adopt(client, workers, key, bounds, built, timeout)
    clock.lap("adopt")
    graph = DistributedGraph(client, n=n, m=m, bounds=bounds, workers=workers, key=key,
                             fingerprint=fp.hexdigest(), weighted=weight is not None,
                             source=_name(files), labels=labels, in_offsets=in_offsets,
                             out_degree=outd, out_weight=wsum, weight_min=wmin,
                             weight_finite=finite, in_weight=win)
    graph.timings = clock.laps
    graph._parts = arrays  # the delayed readers: k-core's lists read the files again
    return graph


class _Clock:
    """Seconds between successive :meth:`lap` calls, by name."""

    def __init__(self):
        self.t, self.laps = time.perf_counter(), {}

    def lap(self, name):
        now = time.perf_counter()
        self.laps[name], self.t = now - self.t, now


def _scatter(graph, client, workers, vertex_cost):
    """The handle of a graph of this process, its shards loaded as ``digraph.run`` loads them."""
    from ..dispatch.engines.power import cluster as C
    from ..dispatch.runtime.cuda.ranges import shard_ranges
    if graph.num_vertices == 0:
        raise InvalidParameterError("load_distributed: the graph has no vertex")
    k = len(workers)
    cut = ("dask-power-cut", k, int(vertex_cost))
    bounds = graph._cache.get(cut)
    if bounds is None:
        bounds = graph._cache[cut] = shard_ranges(graph.in_offsets, k, vertex_cost)
    key = C.shard_key(graph.fingerprint(), bounds, workers)
    C._plugin(client)
    settings = C.current(C.DEFAULT)
    held = C.call(client, workers, "has", lambda i: {"key": key}, settings.round_timeout_s,
                   "looking for the shards")
    if not all(r["has"] for r in held):
        C._load(client, graph, workers, key, bounds, settings, {})
    w = graph.weights
    return DistributedGraph(
        client, n=graph.num_vertices, m=graph.num_arcs, bounds=bounds, workers=workers,
        key=key, fingerprint=graph.fingerprint(), weighted=graph.weighted, source="memory",
        labels=graph.vertex_ids, in_offsets=graph.in_offsets, out_degree=graph.out_degree,
        out_weight=None if w is None else np.bincount(graph.arc_sources, weights=w,
                                                      minlength=graph.num_vertices),
        in_weight=None if w is None else np.bincount(graph.out_targets, weights=w,
                                                     minlength=graph.num_vertices),
        weight_min=np.inf if w is None else float(w.min(initial=np.inf)),
        weight_finite=w is None or bool(np.all(np.isfinite(w))), graph=graph)


def _raise_first(client, futures, where):
    """Wait for ``futures``; the first that failed raises :class:`GraphFormatError` naming its
    file (``where``, by position)."""
    for f, path in zip(futures, where):
        e = f.exception()  # waits for the task; its result stays on the worker
        if e is not None:
            raise GraphFormatError(_why(e) if type(e).__name__ == "PartError"
                                   else f"cannot be read ({type(e).__name__}: {_why(e)})",
                                   path=path)
