"""Tasks of a load on the workers that :mod:`digraph.io.distributed` and
:mod:`digraph.io.distributed_undirected` share: a tree of merges, one task a worker over the
partitions it holds, the wait for tasks bound to workers, and the adoption of the built ranges
as pinned shards by the workers' plugin, and the shuffle of renumbered partitions into one
range a worker."""

import operator
import time

__all__ = ["adopt", "shuffle", "wait_pinned", "per_worker", "tree"]


def adopt(client, workers, key, bounds, built, timeout):
    """Have each worker's plugin take its built range as a pinned shard (the read lists are
    exchanged worker to worker, as for a graph loaded from the client)."""
    import uuid

    from ..dispatch.engines.power import cluster as C
    C._plugin(client)
    wire = f"{key}:wire:{uuid.uuid4().hex}"
    C.call(client, list(workers), "load", lambda i: {
        "key": key, "wire": wire, "index": i, "bounds": [int(b) for b in bounds],
        "peers": list(workers), "local": built[i].key, "keep": C.current(C.DEFAULT).keep_graphs,
        "timeout": timeout}, timeout, "adopting the shards")


def shuffle(client, parts, bounds, workers, timeout):
    """The futures of each range's build (:func:`~.distributed_parts.build`) on its worker from
    the renumbered partitions ``parts`` (futures), each cut by its arcs' targets
    (:func:`~.distributed_parts.split`) and its pieces moved worker to worker; waited for
    (:func:`wait_pinned`)."""
    from . import distributed_parts as P
    pieces = client.map(P.split, parts, bounds=bounds, pure=False)
    built = [client.submit(P.build, bounds, g,
                           *[client.submit(operator.getitem, p, g, pure=False) for p in pieces],
                           workers=[w], allow_other_workers=False, pure=False)
             for g, w in enumerate(workers)]
    del pieces
    wait_pinned(client, built, workers, timeout)
    return built


def wait_pinned(client, futures, workers, timeout):
    """Wait for tasks bound to ``workers`` (one each): a worker that leaves meanwhile (out of
    memory, killed) would leave its task waiting for ever, so it ends the load with
    :class:`~digraph.errors.WorkerLostError` naming it; so does ``timeout``."""
    from ..errors import WorkerLostError
    deadline = time.monotonic() + timeout
    while not all(f.done() for f in futures):
        gone = [w for w in workers if w not in client.nthreads()]
        if gone:
            raise WorkerLostError(f"loading the shards: worker {', '.join(gone)} left the "
                                  "cluster (out of memory, or stopped); its range cannot be "
                                  "built elsewhere", worker=gone[0])
        if time.monotonic() > deadline:
            raise WorkerLostError(f"loading the shards took over {timeout:g} s", worker=None)
        time.sleep(0.2)
    for f in futures:
        e = f.exception()
        if e is not None:
            raise e


def per_worker(client, fn, first, futures):
    """``fn(first, *the futures a worker holds)`` on each worker that holds some: one task a
    worker, its partitions read where they are."""
    for f in futures:  # done first: where each is held is known then
        e = f.exception()
        if e is not None:
            raise e
    held = client.who_has(futures)
    mine = {}
    for f in futures:
        mine.setdefault(held[f.key][0], []).append(f)
    return [client.submit(fn, first, *fs, workers=[w], allow_other_workers=True, pure=False)
            for w, fs in mine.items()]


def tree(client, fn, futures, fan=8):
    """``fn`` over ``futures`` in a tree of tasks, ``fan`` at a time; the root's future."""
    while len(futures) > 1:
        futures = [client.submit(fn, *futures[i:i + fan], pure=False)
                   for i in range(0, len(futures), fan)]
    return futures[0]
