"""The workers' side of k-core's h-index rounds on a Dask cluster (:mod:`.cluster_hindex` drives
them from the client).

:class:`HIndexRounds` is a ``distributed`` worker plugin beside the power iteration's
(:class:`~digraph.dispatch.engines.power.cluster_worker.PowerShards`) and the min/max rounds'
(:class:`~.cluster_worker.BspRounds`, whose start and exchange it inherits).  Its shards are the
power plugin's :class:`~digraph.dispatch.engines.power.cluster_state.Shard` built from the
range's *undirected neighbour lists* (the arcs of both directions, self-loops dropped, with
multiplicity) instead of its in-arcs, kept under their own key; the neighbours are renumbered
into the compact vector (the range whole, the entries it reads of the other ranges), and each
worker knows which of its entries each other worker reads, exactly as for in-arcs
(:mod:`digraph.dispatch.engines.power.cluster_reads`).  It adds two handlers
(``digraph_power_<op>``):

* ``hindex_start``: the run's state (:class:`HIndexRun`: its range's estimates, the undirected
  degrees or a checkpoint's values, every row active), then the first exchange (every entry
  another worker reads);
* ``hindex_rounds``: a batch of rounds (:meth:`~.cluster_worker.BspRounds.rounds`: the batch
  ends after a round where no estimate fell anywhere), each one round of the range
  (:func:`digraph.smx.cpu.ranges.hindex_range_round`: a row with a neighbour whose estimate
  fell in the last round, or every row in a run's first round, takes
  ``min(x_v, H(neighbours' estimates))``), then the exchange of the estimates that fell
  (:func:`~.cluster_worker.pack`: 12 bytes an entry); answers each round's frontier rows, their
  neighbour entries and the rows whose estimate fell.

The estimates are integers (int64 here; the mail carries them as float64, exact below 2**53).
"""

import time

import numpy as np

from ....smx.cpu.ranges import hindex_range_round, hindex_range_round_serial
from ....smx.cpu.serial import pick
from ...runtime.cpu_tasks import task_cuts
from .cluster_worker import BspRounds

__all__ = ["HIndexRounds", "HIndexRun", "OPS"]

#: the handlers :class:`HIndexRounds` adds to a worker (``digraph_power_<op>``)
OPS = ("hindex_start", "hindex_rounds")


class HIndexRun:
    """One k-core run's state on one shard of undirected neighbour lists: the compact vector
    ``z`` of estimates (its range whole, the entries it reads of the others) with its activity
    flags ``act`` (the estimates that fell in the last round); ``x`` is its range's part.

    Parameters
    ----------
    shard : digraph.dispatch.engines.power.cluster_state.Shard
        Built from the range's undirected neighbour lists.
    x : numpy.ndarray, optional
        The range's start estimates (a checkpoint: upper bounds of the core numbers); None:
        the undirected degrees.
    """

    def __init__(self, shard, x=None):
        self.shard = shard  # kept for the run, even if a newer graph evicts it from the worker
        n = shard.v1 - shard.v0
        size = max(int(shard.base[-1]), 1)
        self.z = np.zeros(size, np.int64)
        self.act = np.zeros(size, np.bool_)
        self.lo = int(shard.base[shard.index])
        self.hi = self.lo + n
        self.x = self.z[self.lo:self.hi]
        self.x[:] = np.diff(shard.off) if x is None else np.asarray(getattr(x, "data", x))
        self.act[self.lo:self.hi] = True  # the first exchange sends every entry read
        self.every = True  # a run's first round recomputes every row
        self.new_x = np.empty(n, np.int64)
        self.new_act = np.empty(n, np.bool_)
        self.pull = pick(hindex_range_round, hindex_range_round_serial, shard.arcs)
        self.cuts = task_cuts(shard.off)
        self.busy = 0.0

    def changed(self):
        """The range's activity flags (the rows whose estimate fell in the last round)."""
        return self.act[self.lo:self.hi]

    def step(self):
        """One round of the range (nothing to do after the first when no entry it reads fell);
        returns ``{"front": frontier rows, "arcs": their neighbour entries, "changed": rows whose
        estimate fell}``."""
        t = time.perf_counter()
        front = arcs = fell = 0
        if self.every or self.act.any():
            s = self.shard
            front, arcs, fell = self.pull(self.cuts, s.off, s.src, self.z, self.act, self.lo,
                                          self.every, self.new_x, self.new_act)
            self.x[:] = self.new_x
            self.act[self.lo:self.hi] = self.new_act
            self.every = False
        self.busy += time.perf_counter() - t
        return {"front": int(front), "arcs": int(arcs), "changed": int(fell)}


class HIndexRounds(BspRounds):
    """The worker plugin of the cluster placement's k-core rounds (module docstring)."""

    name = "digraph-hindex-rounds"
    idempotent = True
    ops = OPS

    async def _hindex_start(self, key=None, run=None, x=None, timeout=60.0):
        """Start run ``run`` on the neighbour lists' shard ``key`` from ``x`` (None: the
        degrees), then the first exchange."""
        return await self._start_run(key, run, lambda shard: HIndexRun(shard, x), timeout)

    async def _hindex_rounds(self, key=None, run=None, k=None, n=None, timeout=60.0):
        """Rounds ``k`` to ``k + n − 1`` (:meth:`BspRounds.rounds`): each the h-index round of
        the range, then the exchange; answers each round's ``front``, ``arcs`` and ``changed``
        (the rows whose estimate fell)."""
        return await self.rounds(run, k, n, timeout)
