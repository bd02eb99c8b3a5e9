"""k-core on the workers of a Dask cluster (``digraph.run(g, "kcore", cluster=client)``,
``mode="bsp"``): the h-index iteration of Lü et al. ("The H-index of a network node and its
relation to degree and coreness", Nature Communications 2016) in the distributed form of
Montresor, De Pellegrini and Miorandi ("Distributed k-core decomposition", IEEE TPDS 2013),

    x_v⁰ = deg(v),     x_v^{t+1} = min(x_v^t, H({x_u^t : u ∈ N(v)})),

``N(v)`` the neighbours of ``v`` in the undirected multigraph of the arcs (self-loops dropped,
with multiplicity) and ``H`` the h-index (the largest ``h`` with at least ``h`` values ``≥ h``),
in Jacobi rounds until no estimate falls.  From any upper bound of the core numbers the
estimates fall to them and stay: the answer is exact, the core numbers of
:class:`~digraph.algorithms.KCore`, round for round those of the one-process ``bsp``
(:mod:`.cpu_bsp`, ``_HIndexRounds``).

Layout.  The client builds the undirected neighbour lists
(:func:`digraph.dispatch.systems.undirected_adjacency`), cuts the vertices into one range a
worker of about equal neighbour entries and sends each worker its range's lists once; the
workers renumber the neighbours into their compact vectors and tell one another which entries
each reads (the power iteration's shard and protocol,
:func:`digraph.dispatch.engines.power.cluster.begin` with ``lists``), kept under the graph's fingerprint and ``"undirected"``, apart from the in-arc
shards of PageRank and SSSP runs, between runs as those are (``ClusterSettings.keep_graphs``).
A run sends nothing but its id: each worker starts from its range's degrees, then sends every
entry another worker reads (:mod:`.cluster_hindex_worker`).

A round (a batch of them a call from the client, as the min/max rounds', :mod:`.cluster`):

1. each worker recomputes its frontier rows: those with a neighbour whose estimate fell in the
   last round (every row in the first round), from its compact vector
   (:func:`digraph.smx.cpu.ranges.hindex_range_round`);
2. it sends each other worker the entries that worker reads whose estimate fell (12 bytes an
   entry), straight to it, and takes those it reads; the others of theirs become inactive;
3. it tells the other workers how many of its estimates fell, and the batch ends where none
   did anywhere; its frontier rows, their neighbour entries and the rows whose estimate fell
   go back to the client with the batch.

The run stops when no estimate fell anywhere.  Counters as the one-process ``bsp`` h-index
rounds': ``rounds``, ``vertex_updates`` (frontier vertices recomputed), ``arc_updates`` (their
neighbour entries), ``dense_rounds`` (every vertex recomputed) and ``sparse_rounds``; the
``dask`` group as the power iteration's (``arcs``: each worker's neighbour entries).

Faults as the min/max rounds' (:mod:`.cluster`): a lost worker ends the run with
:class:`~digraph.errors.WorkerLostError` naming it; with ``checkpoint_every=k`` the client
gathers the estimates every ``k`` rounds, and after a loss the run cuts the graph again among the
workers left and resumes from the last checkpoint with every vertex recomputed in its first
round: a checkpoint's estimates are upper bounds of the core numbers, from which the iteration
falls to them as from the degrees.  A graph loaded on the workers
(:func:`digraph.load_distributed`) never has its arcs on the client: its undirected lists are
built on its workers from its files (:mod:`digraph.io.distributed_undirected`, once a handle),
and a lost worker ends the run (their arcs are nowhere else).
"""

import time

import numpy as np

from ...settings import current
from ...systems import undirected_adjacency
from ....errors import InvalidParameterError
from ..power.cluster import DEFAULT, begin, serialized
from ..power.cluster_checkpoint import Checkpoints
from ..power.cluster_handle import held_by
from .cluster import _Rounds, drive

__all__ = ["solve", "prepare"]


def _plugin(client):
    """Register the workers' plugin of the h-index rounds (the power iteration's, which holds
    the shards, is registered by :func:`~digraph.dispatch.engines.power.cluster.begin`)."""
    from .cluster_hindex_worker import HIndexRounds
    client.register_plugin(HIndexRounds())


class _HIndexRounds(_Rounds):
    """The h-index rounds of one run for :func:`digraph.dispatch.driver.worklist`; the steps,
    checkpoints and restarts are :class:`~.cluster._Rounds`'."""

    def __init__(self, client, graph, workers, settings, stats, checkpoint_every):
        self.client, self.graph, self.settings, self.stats = client, graph, settings, stats
        h = held_by(graph)
        if h is None:
            off, nbr = undirected_adjacency(graph)
        else:  # a graph loaded on the workers: its lists are built there, from its files
            off, nbr = h.undirected(settings.vertex_cost, settings.setup_timeout_s)[0], None
        self.lists = ("undirected", off, nbr)
        self.n = graph.num_vertices
        self.ckpt = None if checkpoint_every is None else Checkpoints(
            checkpoint_every, np.diff(off).astype(np.float64))
        self._counters()
        _plugin(client)
        self.s = self.begin(list(workers), None)

    def begin(self, workers, x):
        """A session on ``workers`` from the estimates ``x`` (None: the degrees; else a
        checkpoint), every vertex recomputed in its first round."""
        def start(i, bounds):
            v0, v1 = int(bounds[i]), int(bounds[i + 1])
            return {"x": None if x is None else serialized(np.asarray(x[v0:v1], np.int64))}
        s = begin(self.client, self.graph, workers, self.settings, self.stats, False, start,
                  op="hindex_start", lists=self.lists)
        self.frontier = self.n
        return s

    rounds_op = "hindex_rounds"

    def _count(self, now):
        front = sum(int(r["front"]) for r in now)  # frontier 0: no estimate fell, done
        self.stats["vertex_updates"] += front
        self.stats["arc_updates"] += sum(int(r["arcs"]) for r in now)
        self.stats["dense_rounds" if front == self.n else "sparse_rounds"] += 1


def solve(graph, system, *, client, workers, max_iter, stats, settings=None,
          checkpoint_every=None):
    """Core numbers of ``graph`` (the h-index ``system``) on the cluster's ``workers`` through
    ``client``; returns (the estimates on the client, int64, converged: False at ``max_iter``
    rounds).

    Counters as the one-process ``bsp`` h-index rounds' (``rounds``, ``vertex_updates``,
    ``arc_updates``, ``dense_rounds``, ``sparse_rounds``; rounds redone after a restart count
    again); ``stats["dask"]`` as :func:`digraph.dispatch.engines.power.cluster.solve` fills it.

    Raises
    ------
    InvalidParameterError
        A system of another family; a worker whose ``memory_limit`` is below its shard's
        estimated bytes (before anything is sent).
    WorkerLostError
        A worker lost, or not answering within
        :attr:`~digraph.dispatch.engines.power.cluster.ClusterSettings.round_timeout_s`; with
        ``checkpoint_every``, only once no worker is left to restart on.
    """
    settings = current(DEFAULT) if settings is None else settings
    if system.family != "hindex":
        raise InvalidParameterError(f"the h-index rounds on a Dask cluster compute core numbers "
                                    f"(k-core), not the {system.family} family")
    if graph.num_vertices == 0:
        return np.zeros(0, np.int64), True
    t_setup = time.perf_counter()
    eng = _HIndexRounds(client, graph, workers, settings, stats, checkpoint_every)
    stats["dask_time_setup"] = time.perf_counter() - t_setup
    x, converged = drive(eng, client, max_iter, stats, settings)
    return x.astype(np.int64), converged


def prepare(req):
    """The placement's entry for k-core (:mod:`.cluster_entry`, the registry's): a function
    of no argument that solves ``req`` on the plan's cluster."""
    p = req.plan.placement
    return lambda: solve(req.graph, req.system, client=p.client, workers=list(p.workers),
                         max_iter=req.max_iter, stats=req.stats,
                         checkpoint_every=req.option("checkpoint_every"))
