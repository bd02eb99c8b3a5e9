"""The client's calls to the workers of the cluster placement (:mod:`.cluster` and the
engines that share its shards): every worker at once, each call with a timeout, and a lost or
stalled worker named in a :class:`~digraph.errors.WorkerLostError`, never a hang.
"""

import asyncio

import numpy as np

from ....errors import WorkerLostError

__all__ = ["call", "serialized"]


async def _all(client, workers, op, kwargs, timeout, what):
    """Call ``digraph_power_<op>`` on every worker at once (``kwargs(i)``: shard ``i``'s
    arguments) and return their answers in order.  The first call that fails, or whose answer
    says a peer was lost (``{"lost": ...}``), or a call still unanswered after ``timeout`` s
    ends the run at once with :class:`WorkerLostError` naming the worker."""
    tasks = [asyncio.ensure_future(getattr(client.rpc(w), f"digraph_power_{op}")(**kwargs(i)))
             for i, w in enumerate(workers)]
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    pending = set(tasks)
    try:
        while pending:
            done, pending = await asyncio.wait(pending, timeout=max(deadline - loop.time(), 0),
                                               return_when=asyncio.FIRST_COMPLETED)
            if not done:
                late = [w for w, t in zip(workers, tasks) if t in pending]
                raise WorkerLostError(f"{what}: worker {', '.join(late)} did not answer within "
                                      f"{timeout:g} s (lost or stalled)", worker=late[0])
            for w, t in zip(workers, tasks):
                if t in done:
                    _check_answer(t, w, what)
    finally:
        for t in tasks:
            if not t.done():
                t.cancel()
            elif not t.cancelled():
                t.exception()  # read: asyncio logs nothing of a failure already reported
    return [t.result() for t in tasks]


def _check_answer(task, worker, what):
    """Raise :class:`WorkerLostError` when a worker's call failed for a lost connection or
    answered that a peer was lost; re-raise any other error of the call."""
    e = task.exception()
    if e is None:
        got = task.result()
        if isinstance(got, dict) and "lost" in got:
            raise WorkerLostError(f"{what}: {got['lost']}", worker=got["worker"])
        return
    if isinstance(e, WorkerLostError):
        raise WorkerLostError(f"{what}: {e}", worker=e.worker) from None
    if isinstance(e, (OSError, asyncio.TimeoutError)):
        raise WorkerLostError(f"{what}: worker {worker} was lost ({type(e).__name__}: {e})",
                              worker=worker) from None
    raise e


def call(client, workers, op, kwargs, timeout, what):
    return client.sync(_all, client, workers, op, kwargs, timeout, what)


def serialized(a):
    """``a`` contiguous, wrapped for Dask's comms to send as a buffer (not pickled)."""
    from distributed.protocol import to_serialize
    return to_serialize(np.ascontiguousarray(a))
