"""Rounds queued back to back on one GPU, their worklist kept there (the cluster engine and
``vertex-async`` on min/max systems share it).

Round ``r``'s kernel reads ``queues[r % 2]`` with ``counts[r % 3]`` entries, appends to
``queues[(r + 1) % 2]`` at ``counts[(r + 1) % 3]`` (an entry once a round: ``mark`` holds the last
round it was queued for), zeroes ``counts[(r + 2) % 3]`` and writes its count into ``hist[r]``
(:mod:`digraph.smx.cuda.worklist`, :mod:`digraph.smx.cuda.clusters`).  The host reads the next
count every ``per_check`` rounds, the one synchronisation.
"""

import numpy as np

from ... import driver

__all__ = ["Queues"]


class Queues:
    """The device arrays of the queued rounds over ``size`` entries, ``first`` queued for round
    0, at most ``max_iter`` rounds checked every ``per_check``."""

    def __init__(self, be, size, first, max_iter, per_check):
        xp = be.xp
        q0 = np.zeros(size, np.int32)
        q0[:first.size] = first
        self.be = be
        self.per_check = per_check
        self.queues = [be.put(q0), be.keep(xp.zeros(size, np.int32))]
        self.counts = be.put(np.array([first.size, 0, 0], np.int32))
        self.mark = be.keep(xp.zeros(size, np.int32))
        self.hist = be.keep(xp.zeros(max_iter + per_check, np.int32))

    def run(self, launch, max_iter):
        """``launch(r, queue_in, queue_out)`` round after round until a checked count is 0
        (True) or ``max_iter`` rounds were queued (False); returns (rounds queued, converged)."""
        def queue(r0):
            for r in range(r0, r0 + self.per_check):
                launch(r, self.queues[r % 2], self.queues[(r + 1) % 2])

        def done(r):
            return int(self.be.get(self.counts[r % 3:r % 3 + 1])[0]) == 0

        return driver.queued(queue, done, per_check=self.per_check, max_rounds=max_iter)

    def counted(self, r):
        """Each of the first ``r`` rounds' entries, on the host."""
        return self.be.get(self.hist[:r])
