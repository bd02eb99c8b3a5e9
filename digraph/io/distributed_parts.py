"""The tasks of :func:`digraph.load_distributed` that run on the workers of a Dask cluster: each
takes a partition of the edge list, or pieces of it, and returns arrays; none runs on the client.

In the order of the load (:mod:`digraph.io.distributed` drives them):

1. :func:`part_arrays` -- a partition (a pandas DataFrame read by ``dask.dataframe``) checked
   and turned into ``(src, dst, weight)`` numpy arrays of the caller's ids;
2. :func:`part_labels`, then :func:`merge_labels` in a tree -- the sorted distinct ids;
3. :func:`renumber` -- each partition's ids mapped to ``0..n-1`` by ``searchsorted`` against the
   sorted ids (or a dense index when they lie in a range of a few times ``n``); :func:`counts` on each worker, then :func:`add_counts` in a tree -- in-degrees,
   out-degrees, out-weight sums and the weights' smallest value and finiteness;
4. :func:`split` -- a partition's arcs cut by the range of their target (one piece a worker);
5. :func:`build` -- on worker ``g``: its pieces joined into the in-arcs of its range, sorted by
   (target, source), as row offsets and sources (the form
   :class:`~digraph.dispatch.engines.power.cluster_state.Shard` takes), with a digest;
6. :func:`take`, :func:`write_part` -- a range's labels and values written as one Parquet file
   (:func:`digraph.write_parquet`).

k-core's undirected lists (:mod:`digraph.io.distributed_undirected`) take the same path from
3., each renumbered partition first turned into its arcs both ways by :func:`symmetric`.

numpy and pandas vectorised operations only: no Python loop over arcs or vertices.
"""

import hashlib
import os

import numpy as np

__all__ = ["PartError", "part_arrays", "part_labels", "merge_labels", "renumber", "symmetric",
           "counts", "add_counts", "split", "build", "digest_labels", "take", "write_part"]


class PartError(ValueError):
    """A partition's content refused (the client names the file: :mod:`.distributed`)."""


def _ids(df, col):
    """Column ``col`` of ``df`` as int64 ids, or :class:`PartError` saying why not."""
    s = df[col]
    if s.isna().any():
        raise PartError(f"column {col!r} has a missing value (row {int(np.argmax(s.isna()))} of "
                        "its partition)")
    from pandas.api.types import is_bool_dtype, is_float_dtype, is_integer_dtype
    if is_integer_dtype(s.dtype) and not is_bool_dtype(s.dtype):
        a = s.to_numpy(dtype=np.uint64 if s.dtype.kind == "u" else np.int64)
    elif is_float_dtype(s.dtype):
        a = s.to_numpy(dtype=np.float64)
    elif is_bool_dtype(s.dtype):
        a = s.to_numpy(dtype=np.bool_)
    else:
        a = s.to_numpy(dtype=object)
    if a.dtype.kind in "iu":
        if a.dtype.kind == "u" and a.size and a.max() >= np.uint64(2**63):
            raise PartError(f"column {col!r} holds an id of 2**63 or more, beyond int64")
        return a.astype(np.int64, copy=False)
    if a.dtype.kind == "b":
        raise PartError(f"column {col!r} holds booleans, not integer vertex ids")
    if a.dtype.kind == "f":
        bad = np.flatnonzero(~np.isfinite(a) | (a != np.floor(a)))
        if bad.size == 0 and not (a.size and (a.min() < -2.0**63 or a.max() >= 2.0**63)):
            return a.astype(np.int64)
        first = a[bad[0]] if bad.size else a[np.argmax(np.abs(a))]
        raise PartError(f"column {col!r} holds {first!r}, not an integer vertex id")
    first = a[0] if a.size else None
    raise PartError(f"column {col!r} holds {type(first).__name__} values such as {first!r}, "
                    "not integer vertex ids")


def part_arrays(df, src, dst, weight):
    """``(src ids, dst ids, weights or None)`` of one partition, checked: integer ids without
    missing values, real weights without NaN."""
    s, d = _ids(df, src), _ids(df, dst)
    w = None
    if weight is not None:
        col = df[weight]
        try:
            w = col.to_numpy(dtype=np.float64, na_value=np.nan)
        except (TypeError, ValueError):
            raise PartError(f"column {weight!r} holds values that are not numbers") from None
        bad = np.flatnonzero(np.isnan(w))
        if bad.size:
            e = int(bad[0])
            raise PartError(f"arc {s[e]} -> {d[e]} has a NaN or missing weight (column "
                            f"{weight!r})")
    return s, d, w


def _distinct(values):
    """The sorted distinct entries of ``values`` (an int array), in its dtype: a mark per id
    when the ids lie in ``[0, 4·size + 2**20)`` (as :func:`renumber` judges a dense range; a
    pass, not a sort), else :func:`numpy.unique`."""
    if values.size and values.dtype.kind in "iu":
        lo, hi = int(values.min()), int(values.max())
        if lo >= 0 and hi < 4 * values.size + (1 << 20):
            mark = np.zeros(hi + 1, np.bool_)
            mark[values] = True
            return np.flatnonzero(mark).astype(values.dtype, copy=False)
    return np.unique(values)


def part_labels(arcs):
    """The sorted distinct ids of one partition's arcs."""
    s, d, _ = arcs
    return _distinct(np.concatenate([s, d]))


def merge_labels(*parts):
    """The sorted distinct ids of several sorted arrays of distinct ids."""
    return _distinct(np.concatenate(parts))


def renumber(arcs, labels):
    """One partition's arcs with their ids mapped to ``0..n-1`` (``labels`` holds every id;
    int32 numbers below 2**31 vertices)."""
    s, d, w = arcs
    kind = np.int32 if labels.size < 2**31 else np.int64
    if labels.size and labels[0] >= 0 and labels[-1] < 4 * labels.size + (1 << 20):
        # ids in a range of a few times n (as digraph.load judges): a dense index, one gather
        index = np.empty(int(labels[-1]) + 1, kind)
        index[labels] = np.arange(labels.size, dtype=kind)
        return index[s], index[d], w
    return (np.searchsorted(labels, s).astype(kind), np.searchsorted(labels, d).astype(kind), w)


def symmetric(arcs):
    """One renumbered partition's arcs in both directions, self-loops dropped: ``(src, dst,
    None)`` with each arc ``u → v`` (``u ≠ v``) as ``u → v`` and ``v → u`` (k-core's undirected
    multigraph, :mod:`digraph.io.distributed_undirected`)."""
    s, d, _ = arcs
    keep = s != d
    s, d = s[keep], d[keep]
    return np.concatenate([s, d]), np.concatenate([d, s]), None


def counts(n, *parts):
    """``(in-degree, out-degree, out-weight sums or None, smallest weight, every weight finite,
    in-weight sums or None)`` of renumbered partitions (those one worker holds: one array of
    each kind a worker, not a partition), the degree and sum arrays of length ``n``."""
    ind, outd = np.zeros(n, np.int64), np.zeros(n, np.int64)
    weighted = bool(parts) and parts[0][2] is not None
    wsum = np.zeros(n, np.float64) if weighted else None
    win = np.zeros(n, np.float64) if weighted else None
    wmin, finite = np.inf, True
    for s, d, w in parts:  # a worker's partitions, a few
        ind += np.bincount(d, minlength=n)
        outd += np.bincount(s, minlength=n)
        if weighted:
            with np.errstate(over="ignore", invalid="ignore"):
                wsum += np.bincount(s, weights=w, minlength=n)
                win += np.bincount(d, weights=w, minlength=n)
            wmin = min(wmin, float(w.min(initial=np.inf)))
            finite = finite and bool(np.all(np.isfinite(w)))
    return ind, outd, wsum, wmin, finite, win


def add_counts(*parts):
    """The sums of several :func:`counts` answers."""
    ind = np.sum([p[0] for p in parts], axis=0)
    outd = np.sum([p[1] for p in parts], axis=0)
    wsum = win = None
    if parts[0][2] is not None:
        with np.errstate(over="ignore", invalid="ignore"):
            wsum = np.sum([p[2] for p in parts], axis=0)
            win = np.sum([p[5] for p in parts], axis=0)
    return (ind, outd, wsum, min(p[3] for p in parts), all(p[4] for p in parts), win)


def split(arcs, bounds):
    """One renumbered partition's arcs cut by their target's range: a list, one
    ``(src, dst, weight or None)`` piece a range, each in the partition's order."""
    s, d, w = arcs
    b = np.asarray(bounds, np.int64)
    owner = np.searchsorted(b, d, side="right") - 1
    order = np.argsort(owner, kind="stable")
    cut = np.zeros(b.size, np.int64)
    np.cumsum(np.bincount(owner, minlength=b.size - 1), out=cut[1:])
    s, d = s[order], d[order]
    w = None if w is None else w[order]
    return [(s[cut[g]:cut[g + 1]], d[cut[g]:cut[g + 1]],
             None if w is None else w[cut[g]:cut[g + 1]]) for g in range(b.size - 1)]


def build(bounds, g, *pieces):
    """Range ``g``'s in-arcs from its pieces: ``(off, src, weights or None, digest)``; ``off``
    the row offsets from 0 (length ``v1 − v0 + 1``), ``src`` the sources (global numbers), the
    arcs sorted by target then source (the order of :attr:`digraph.Graph.in_arcs`)."""
    v0, v1 = int(bounds[g]), int(bounds[g + 1])
    weighted = bool(pieces) and pieces[0][2] is not None
    narrow = all(p[0].dtype == np.int32 and p[1].dtype == np.int32 for p in pieces)
    if not weighted and narrow:
        # one int64 key an arc, target << 32 | source, filled piece by piece and sorted in
        # place: no joined copies of the sources and targets, no permutation array
        key = np.empty(sum(p[0].size for p in pieces), np.int64)
        at = 0
        for s, d, _ in pieces:  # one piece a partition of the edge list
            part = key[at:at + s.size]
            part[:] = d
            part <<= 32
            part |= s
            at += s.size
        key.sort()
        src = key.astype(np.int32)  # the low 32 bits: the sources
        off = np.searchsorted(key, np.arange(v0, v1 + 1, dtype=np.int64) << 32)
        del key
        w = None
    else:
        s = np.concatenate([p[0] for p in pieces]) if pieces else np.empty(0, np.int64)
        d = np.concatenate([p[1] for p in pieces]) if pieces else np.empty(0, np.int64)
        order = np.lexsort((s, d))
        src = s[order]
        off = np.zeros(v1 - v0 + 1, np.int64)
        np.cumsum(np.bincount(d - v0, minlength=v1 - v0), out=off[1:])
        del s, d
        w = np.concatenate([p[2] for p in pieces])[order] if weighted else None
    off = off.astype(np.int64, copy=False)
    h = hashlib.blake2b(digest_size=16)
    h.update(np.array([v0, v1], np.int64).tobytes())
    h.update(off)  # the arrays' buffers, not copies
    h.update(src)
    if w is not None:
        h.update(w)
    return off, src, w, h.hexdigest()


def digest_labels(labels):
    """A hex digest of the sorted labels."""
    return hashlib.blake2b(np.ascontiguousarray(labels).tobytes(), digest_size=16).hexdigest()


def take(a, v0, v1):
    """``a[v0:v1]``, a copy (a range of the labels, cut where they are held)."""
    return np.array(a[v0:v1])


def write_part(labels, values, path):
    """Write one range's ``labels`` (the original ids) and ``values`` to the Parquet file
    ``path`` (columns ``vertex`` and ``value``): to a temporary name in its folder first, then
    renamed, so that the file is whole or absent."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    table = pa.table({"vertex": pa.array(np.asarray(labels)),
                      "value": pa.array(np.asarray(values, np.float64))})
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        pq.write_table(table, tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return len(table)
