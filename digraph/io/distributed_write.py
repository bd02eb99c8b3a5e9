"""An answer written as a partitioned Parquet dataset: :func:`write_parquet`.

The dataset is a folder of ``part-00000.parquet``, ``part-00001.parquet``, ... with the columns
``vertex`` (the original id) and ``value``, in the order of the vertices' internal numbers.  For
a run on a :class:`~digraph.io.distributed.DistributedGraph` read from files, each worker writes
the file of its own range (its labels cut where they are held; the values sent from the client,
where the run's answer is); otherwise this process writes one file a range of
``rows_per_file`` vertices.  Everything is written into a temporary folder beside ``path``,
renamed to ``path`` at the end: the dataset is whole or absent.
"""

import os
import shutil
import uuid

import numpy as np

from ..errors import InvalidParameterError, short_repr

__all__ = ["write_parquet"]


def write_parquet(result, path, *, overwrite=False, rows_per_file=1 << 22):
    """Write every vertex's value of ``result`` as a partitioned Parquet dataset.

    Parameters
    ----------
    result : digraph.Result
        A run's answer (of a :class:`~digraph.io.distributed.DistributedGraph` or a
        :class:`~digraph.Graph`).
    path : str or os.PathLike
        The dataset's folder (created; its parent must exist).  For a run on a cluster the
        workers write into it: the folder must be on a file system they share with this process.
    overwrite : bool
        Replace an existing ``path`` (default: refuse it).
    rows_per_file : int
        Vertices a file when this process writes (a graph of this process).

    Returns
    -------
    list of str
        The files written, in the order of the vertices.

    Raises
    ------
    FileExistsError
        ``path`` exists and ``overwrite`` is False.
    FileNotFoundError
        ``path``'s parent folder does not exist.
    InvalidParameterError
        ``result`` is not a Result, or pyarrow is missing.
    """
    from ..result import Result
    if not isinstance(result, Result):
        raise InvalidParameterError(f"write_parquet writes a digraph.Result, got "
                                    f"{short_repr(result)}")
    from importlib.util import find_spec
    if find_spec("pyarrow") is None:
        raise InvalidParameterError("write_parquet needs pyarrow (pip install pyarrow)")
    path = os.path.abspath(os.fspath(path))
    parent = os.path.dirname(path)
    if not os.path.isdir(parent):
        raise FileNotFoundError(f"write_parquet {path!r}: folder {parent!r} does not exist")
    if os.path.lexists(path) and not overwrite:
        raise FileExistsError(f"write_parquet {path!r} exists (pass overwrite=True to replace "
                              "it)")
    tmp = os.path.join(parent, f".{os.path.basename(path)}.tmp-{uuid.uuid4().hex[:12]}")
    os.mkdir(tmp)
    try:
        handle = getattr(result.graph, "cluster_shards", None)
        values = np.asarray(result.values, np.float64)
        if handle is not None and handle.graph is None:
            names = _by_workers(handle, values, tmp)
        else:
            names = _here(result.graph.vertex_ids, values, tmp, int(rows_per_file))
        if os.path.lexists(path):
            old = f"{tmp}.old"
            os.rename(path, old)
            os.rename(tmp, path)
            shutil.rmtree(old, ignore_errors=True) if os.path.isdir(old) else os.unlink(old)
        else:
            os.rename(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return [os.path.join(path, nm) for nm in names]


def _file(i):
    return f"part-{i:05d}.parquet"


def _by_workers(handle, values, folder):
    """Each worker writes its range's file (labels cut on the worker holding them)."""
    from . import distributed_parts as P
    client, b = handle.client, handle.bounds
    futures = []
    for g, w in enumerate(handle.workers):
        v0, v1 = int(b[g]), int(b[g + 1])
        labels = client.submit(P.take, handle.labels, v0, v1, pure=False)
        vals = client.scatter(values[v0:v1], workers=[w])
        futures.append(client.submit(P.write_part, labels, vals,
                                     os.path.join(folder, _file(g)), workers=[w], pure=False))
    client.gather(futures)
    return [_file(g) for g in range(len(handle.workers))]


def _here(ids, values, folder, rows):
    """This process writes the files, ``rows`` vertices each (one file for an empty answer)."""
    from . import distributed_parts as P
    if rows < 1:
        raise InvalidParameterError(f"rows_per_file must be positive, got {rows!r}")
    starts = range(0, max(values.size, 1), rows)
    for i, v0 in enumerate(starts):
        P.write_part(ids[v0:v0 + rows], values[v0:v0 + rows], os.path.join(folder, _file(i)))
    return [_file(i) for i in range(len(starts))]
