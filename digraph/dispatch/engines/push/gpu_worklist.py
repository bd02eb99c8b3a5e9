"""``vertex-async`` on min/max systems (SSSP, widest path, reachability) on one GPU, its worklist
kept on the GPU (:mod:`digraph.smx.cuda.worklist`).

A round pops every vertex of the queue, relaxes its out-arcs with atomic min/max against the
current values (DiGraph-t, Groute-like: what another thread wrote this round is seen at once), and
appends each target it improved to the next round's queue, once.  The kernels keep the queues and
their lengths, so rounds go back to back; the host reads the length every
:attr:`WorklistSettings.rounds_per_check` rounds, the only synchronisation: no round trip to
the host a round, as a frontier compacted by CuPy and its size read back would cost.  Measured:
docs/history/benchmarks-notebook.md, "SSSP on road-like graphs on one GPU" (the worklist on the
GPU against host-driven rounds).

The answer is the fixpoint of Bellman–Ford's relaxation, as every mode's.  Counters: ``rounds``
(rounds whose queue was not empty), ``vertex_updates`` (vertices popped), ``arc_updates`` (their
out-arcs read).
"""

from dataclasses import dataclass

import numpy as np

from ...settings import current, register
from ....errors import InvalidParameterError
from ...systems import monotone_arrays, monotone_start
from ...runtime.cuda.queued import Queues

__all__ = ["WorklistSettings", "DEFAULT", "solve"]


@dataclass(frozen=True)
class WorklistSettings:
    """How the GPU's worklist runs (``solve(..., settings=)``).

    Attributes
    ----------
    rounds_per_check : int
        Rounds queued between two reads of the queue's length; the rounds queued after it
        emptied find nothing to do.  Not measured: chosen by hand, as for the cluster engine.
    blocks_per_sm : int
        Blocks of the light kernel per multiprocessor (grid stride over the queue).
    """

    rounds_per_check: int = 16
    blocks_per_sm: int = 8


DEFAULT = register(WorklistSettings())


def solve(be, graph, system, dg, *, max_iter, stats, settings=None):
    """Run the min/max ``system`` by the GPU worklist on backend ``be`` (``dg``: the graph's
    device arrays, :func:`~digraph.dispatch.runtime.cuda.device_graph._device_graph`); returns
    (state on the device, converged)."""
    from ....smx.cuda.common import HB, HEAVY
    from ....smx.cuda.worklist import queue_push, queue_push_heavy
    settings = current(DEFAULT) if settings is None else settings
    if settings.rounds_per_check < 1 or settings.blocks_per_sm < 1:
        raise InvalidParameterError("WorklistSettings.rounds_per_check and blocks_per_sm must be "
                                    ">= 1")
    xp = be.xp
    n = graph.num_vertices
    op, combine, has, value = monotone_arrays(graph, system)
    x0, active0 = monotone_start(system, n)
    x = be.put(x0)
    val = be.put(value) if has else be.keep(xp.zeros(1, np.float64))
    first = np.flatnonzero(active0).astype(np.int32)
    if first.size == 0 or n == 0:
        return x, True
    Q = Queues(be, n, first, max_iter, settings.rounds_per_check)
    nheavy = int(np.count_nonzero(np.diff(graph.out_offsets) >= HEAVY))
    hq = be.keep(xp.zeros(max(nheavy, 1), np.int32))
    hcount = be.keep(xp.zeros(2, np.int32))
    work = be.keep(xp.zeros(1, np.int64))
    grid = max(1, settings.blocks_per_sm * be.sms)
    hgrid = max(1, min(nheavy, 4 * be.sms))

    def launch(r, qi, qo):
        be.launch(queue_push, grid, be.block, r, qi, Q.counts, qo, Q.mark, Q.hist, hq, hcount,
                  dg["out_offsets"], dg["out_targets"], val, has, op, combine, x, work,
                  tag=("worklist", r % 2))
        if nheavy:
            be.launch(queue_push_heavy, hgrid, HB, r, Q.counts, qo, Q.mark, hq, hcount,
                      dg["out_offsets"], dg["out_targets"], val, has, op, combine, x, work,
                      tag=("worklist-heavy", r % 2))
    r, converged = Q.run(launch, max_iter)
    h = Q.counted(r)
    stats["rounds"] += int(np.count_nonzero(h))
    stats["vertex_updates"] += int(h.sum())
    stats["arc_updates"] += int(be.get(work)[0])
    return x, converged
