"""Checkpoints of the cluster placement's power rounds and the restart after a lost worker
(``digraph.run(..., cluster=client, checkpoint_every=k)``, :mod:`.cluster`).

Every ``k`` rounds (counted on the iterate: rounds redone after a restart do not count twice),
unless the round's bound already meets ``tol``, the client gathers the current iterate's ranges
from the workers (one call to every worker, ``snapshot``: ``8 n`` bytes to the client) and keeps
it; before the first checkpoint the start vector ``x_0`` is the one kept.  When a worker is lost
mid-run (:class:`~digraph.errors.WorkerLostError`: a round, a checkpoint, the answer's
gathering), the run

1. forgets its state on the workers still reachable;
2. asks the scheduler for its workers, waiting at most
   :attr:`~.cluster.ClusterSettings.restart_wait_s` for the lost one to leave its list (a
   nanny's restart of it is not waited for: a worker that has joined meanwhile is used);
3. cuts the graph again among the workers left (every worker lost so far excluded), checks
   their memory, loads the new shards and starts from the last checkpoint
   (:meth:`~.cluster_maps.Google.resume`: divided by its sum for the Google matrix);
4. goes on with the rounds; the rounds since the checkpoint are run again
   (``stats["dask"]["rounds_redone"]``).

A loss during a restart restarts again, while workers remain; with none left the run ends with
:class:`~digraph.errors.WorkerLostError`.  The answer stays certified: the bound of every round
is computed from that round's own input and output (``‖x_{k+1} − x_k‖₁`` and the sums the
workers measured, :mod:`.cluster_maps`), and holds for any non-negative input, so a round whose
input is a checkpoint is bounded as any other.  The driver's stop rule compares a round's
difference with the previous one's only when rounding alone keeps the bound above ``tol``
(``floor_limited``); after a restart that comparison is with the lost round's.
"""

import time

import numpy as np

from ....errors import WorkerLostError

__all__ = ["Checkpoints", "live_workers"]


class Checkpoints:
    """The checkpoints of one run and its restarts.

    Parameters
    ----------
    every : int
        Rounds between two checkpoints.
    start : numpy.ndarray
        ``x_0``, the checkpoint of round 0.

    Attributes
    ----------
    x : numpy.ndarray
        The last checkpointed iterate.
    round : int
        Its round (0: the start vector).
    lost : list of str
        The workers lost so far, in order.
    """

    def __init__(self, every, start):
        self.every = int(every)
        self.x, self.round = start, 0
        self.taken, self.nbytes, self.seconds = 0, 0, 0.0
        self.restarts, self.redone, self.lost = 0, 0, []

    def due(self, done, bound, tol):
        """Whether the iterate of round ``done`` (whose bound is ``bound``) is checkpointed."""
        return done % self.every == 0 and not bound <= tol

    def keep(self, parts, done, seconds):
        """Keep the iterate of round ``done`` from its ranges ``parts`` (in shard order)."""
        self.x = np.concatenate([np.asarray(p, np.float64) for p in parts])
        self.round = done
        self.taken += 1
        self.nbytes += int(self.x.nbytes)
        self.seconds += seconds

    def lose(self, worker, done):
        """Record the loss of ``worker`` at round ``done`` (rounds completed on the iterate);
        returns the round the run resumes from."""
        if worker is not None and worker not in self.lost:
            self.lost.append(worker)
        self.restarts += 1
        self.redone += done - self.round
        return self.round

    def record(self, stats):
        """The checkpoints' and restarts' keys of ``stats`` (``stats["dask"]`` once grouped)."""
        stats["dask_checkpoint_every"] = self.every
        stats["dask_checkpoints"] = self.taken
        stats["dask_checkpoint_bytes"] = self.nbytes
        stats["dask_checkpoint_s"] = self.seconds
        stats["dask_restarts"] = self.restarts
        stats["dask_lost_workers"] = list(self.lost)
        stats["dask_rounds_redone"] = self.redone


def live_workers(client, session, lost, wait_s):
    """The workers to restart on: those the scheduler lists, less every worker in ``lost``
    (sorted).  Waits at most ``wait_s`` seconds for the workers in ``lost`` that were in
    ``session`` to leave the scheduler's list.  Also returns the workers of ``session`` the
    scheduler no longer lists (lost without being named)."""
    deadline = time.monotonic() + wait_s
    while True:
        listed = set(client.nthreads())
        if not listed & set(lost) & set(session) or time.monotonic() >= deadline:
            break
        time.sleep(0.05)
    gone = [w for w in session if w not in listed and w not in lost]
    return sorted(w for w in listed if w not in lost and w not in gone), gone


def restart(ckpt, err, session, client, begin, wait_s, done):
    """Restart the run after ``err`` (a :class:`WorkerLostError` on the workers of
    ``session``) from ``ckpt``'s last checkpoint: ``begin(workers, x0)`` cuts, loads and starts
    on ``workers``; a loss within it restarts again.  Returns (``begin``'s answer, the round the
    run resumed from).

    Raises
    ------
    WorkerLostError
        No worker left, or the lost worker could not be told (the error unnamed and every
        worker of the session still listed).
    """
    while True:
        resumed = ckpt.lose(err.worker, done)
        live, gone = live_workers(client, session, ckpt.lost, wait_s)
        for w in gone:
            ckpt.lost.append(w)
        if err.worker is None and not gone:
            raise err
        if not live:
            raise WorkerLostError(f"{err}; checkpoint_every: no worker left to restart on "
                                  f"(lost: {', '.join(ckpt.lost)})", worker=err.worker) from err
        try:
            return begin(live, ckpt.x), resumed
        except WorkerLostError as e:
            err, session, done = e, live, resumed
