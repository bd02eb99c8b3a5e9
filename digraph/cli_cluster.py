"""``digraph run --scheduler ADDRESS``: the run on the workers of a Dask cluster
(``digraph.run(..., cluster=client)``), from :mod:`digraph.cli_run`.

The client connects to the scheduler at ADDRESS (:func:`connect`; a scheduler that cannot be
reached is one line of error, not a traceback).  An INPUT that is a folder, a glob pattern or a
``.parquet``/``.pq`` file is read by the workers (:func:`digraph.load_distributed`, ``--columns``
naming its source, target and optional weight columns); any other INPUT is loaded here and its
shards sent to the workers.  ``--out NAME.parquet`` of a graph read by the workers is a
partitioned dataset, a folder ``NAME.parquet`` of one file a worker, written by the workers
(:func:`digraph.write_parquet`); ``.csv`` and ``.npy`` are written here as without a cluster.
"""

import glob
import os

__all__ = ["SCHEDULER_TIMEOUT_S", "connect", "close", "read_by_workers", "load",
           "write_dataset"]

#: seconds the command line waits for the scheduler to answer
SCHEDULER_TIMEOUT_S = 10.0


def connect(address):
    """A ``distributed.Client`` connected to ``address``, or InvalidParameterError in one line
    (distributed missing, an address that does not parse, a scheduler not answering)."""
    from .errors import InvalidParameterError
    try:
        from distributed import Client
    except ImportError:
        raise InvalidParameterError("--scheduler needs Dask's distributed package: pip install "
                                    "'digraph-engine[cluster]'") from None
    try:
        return Client(address, timeout=SCHEDULER_TIMEOUT_S, set_as_default=False)
    except Exception as e:  # OSError, TimeoutError, ValueError of a malformed address, ...
        why = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise InvalidParameterError(f"--scheduler {address!r}: cannot connect to a Dask "
                                    f"scheduler there ({why})") from None


def read_by_workers(path, fmt):
    """Whether INPUT ``path`` is for the workers to read: a folder, a glob pattern, or a
    Parquet file (``--format`` csv or tsv with a folder or pattern: those files)."""
    if path == "-" or fmt in ("edgelist", "mtx"):
        return False
    return (os.path.isdir(path) or glob.has_magic(path)
            or path.lower().endswith((".parquet", ".pq")))


def load(args, client):
    """The handle of INPUT read by the workers (``--columns``, ``--format``, ``--header``)."""
    import digraph
    from .errors import InvalidParameterError
    if args.num_vertices is not None:
        raise InvalidParameterError("--num-vertices applies to a graph loaded here, not to one "
                                    "the workers read (their ids are renumbered)")
    cols = [c.strip() for c in (args.columns or "src,dst").split(",")]
    if len(cols) not in (2, 3) or not all(cols):
        raise InvalidParameterError(f"--columns {args.columns!r}: give SRC,DST or "
                                    "SRC,DST,WEIGHT")
    handle = digraph.load_distributed(args.input, client, format=args.format,
                                      columns=cols[:2],
                                      weight=cols[2] if len(cols) > 2 else None,
                                      header=args.header != "no")
    _loaded.setdefault(id(client), []).append(handle)
    return handle


#: the graphs each client of the command line loaded on the workers (released by close)
_loaded = {}


def close(client):
    """Release the shards the command loaded on the workers, then close ``client``."""
    try:
        for handle in _loaded.pop(id(client), []):
            try:
                handle.release()
            except Exception:  # a worker gone: nothing of it to release
                pass
    finally:
        client.close()


def write_dataset(path, result):
    """``--out NAME.parquet`` of a graph read by the workers: the partitioned dataset (an
    existing regular file of that name is replaced, as ``--out`` replaces files)."""
    import digraph
    digraph.write_parquet(result, path, overwrite=os.path.isfile(path))
