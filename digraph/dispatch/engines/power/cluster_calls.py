"""The client's calls to the workers of the cluster placement (:mod:`.cluster` and the
engines that share its shards): every worker at once, each call with a timeout, and a lost or
stalled worker named in a :class:`~digraph.errors.WorkerLostError`, never a hang; the run's
end (:func:`drop`), a batch's size (:func:`batch_size`) and the gather of ``x`` (:func:`gather`).
"""

import asyncio

import numpy as np

from ....errors import WorkerLostError

__all__ = ["call", "serialized", "drop", "batch_size", "gather"]


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


def drop(client, workers, run, lost=None):
    """The workers still reachable (``workers`` but ``lost``) forget run ``run`` (none waits
    for the lost one)."""
    try:
        client.sync(_all, client, [w for w in workers if w != lost], "drop",
                    lambda i: {"run": run}, 1.0, "dropping")
    except Exception:
        pass


def batch_size(s, settings, left, ckpt, done):
    """Rounds the next batch asks for: :attr:`ClusterSettings.batch_s` seconds of the rounds so
    far (one while none has run), at most ``left`` and up to the next checkpoint."""
    n = 1 if s.k == 0 or s.wall <= 0 else int(settings.batch_s * s.k / s.wall)
    if ckpt is not None:
        n = min(n, ckpt.every - done % ckpt.every)
    return max(1, min(n, left))


def gather(client, s, op, settings, what):
    """Every worker's range of the run's ``x`` (``op``: ``"snapshot"`` keeps the run,
    ``"answer"`` ends it), concatenated in shard order."""
    wait = settings.round_timeout_s + max(1.0, 0.1 * settings.round_timeout_s)
    parts = call(client, s.workers, op, lambda i: {"run": s.run}, wait, what)
    # in-process workers (inproc comms) hand the wrapper back unserialised
    return np.concatenate([np.asarray(getattr(p, "data", p), np.float64) for p in parts])
