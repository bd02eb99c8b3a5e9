"""The structure of a loaded path cache (step 3 of :mod:`digraph.paths.validate`): the ``nogil``
Numba passes over the paths (ranges, the graph's arcs, layers that follow the dependencies) and
the vectorised checks of the small arrays; each problem raises
:class:`~digraph.preprocess.errors.CacheError` naming the file."""

import numpy as np
from numba import njit

from ..preprocess.errors import CacheError


@njit(cache=True, nogil=True)
def _check_paths(lo, hi, po, pv, ids, hot, heat, pscc, player, scc_layer, n, m, goff, gtg,
                 has_graph, seen):
    """Check paths ``lo..hi-1``; returns (code, index, value), code 0 when all is well."""
    S = scc_layer.size
    size = pv.size
    for p in range(lo, hi):
        a = po[p]
        b = po[p + 1]
        if a < 0 or b > size or b - a < 2 or a - p < 0 or b - p - 1 > m:
            return 1, p, b - a
        if hot[p] > 1:
            return 2, p, hot[p]
        x = heat[p]
        if not (x >= 0.0 and x < np.inf):
            return 3, p, 0
        s = pscc[p]
        if s < 0 or s >= S:
            return 4, p, s
        if p > 0 and pscc[p - 1] > s:
            return 5, p, s
        if player[p] != scc_layer[s]:
            return 6, p, player[p]
        u = pv[a]
        if u < 0 or u >= n:
            return 7, a, u
        for k in range(a, b - 1):
            e = ids[k - p]
            if e < 0 or e >= m:
                return 8, k - p, e
            v = pv[k + 1]
            if v < 0 or v >= n:
                return 7, k + 1, v
            if has_graph:
                if e < goff[u] or e >= goff[u + 1]:
                    return 9, k - p, e
                if gtg[e] != v:
                    return 10, k - p, e
            seen[e] = True
            u = v
    return 0, 0, 0


@njit(cache=True, nogil=True)
def _layers_follow_dependencies(po, pv, pscc, player, n):
    """Check that every dependency between SCC-vertices goes to a strictly higher layer.

    Path ``p`` writes its non-head vertices and reads its non-tail vertices
    (:mod:`digraph.preprocess.dag`); for every vertex ``x``, each path writing ``x`` and each path
    reading it must share an SCC-vertex or the reader's layer must be higher.  With ``W`` the
    highest writing layer and ``R`` the lowest reading layer of ``x``: ``W < R`` holds it,
    ``W > R`` breaks it, and ``W == R`` holds it only when every writer and reader at that layer is
    in one SCC-vertex.  Two arrays of ``n`` int64.  Returns ``(x, W, R)`` of the first vertex that
    breaks it, ``(-1, 0, 0)`` when it holds, ``(-2, 0, 0)`` when offsets or vertex ids are out of
    range (the paths' own check names those).
    """
    P = po.size - 1
    size = pv.size
    for p in range(P):  # safe on any input: it runs beside the range checks, not after them
        if po[p] < 0 or po[p + 1] < po[p] or po[p + 1] > size:
            return -2, 0, 0
    for k in range(size):
        if pv[k] < 0 or pv[k] >= n:
            return -2, 0, 0
    top_w = np.full(n, -1, np.int64)
    low_r = np.full(n, np.iinfo(np.int64).max, np.int64)
    for p in range(P):
        layer = player[p]
        for k in range(po[p] + 1, po[p + 1]):
            x = pv[k]
            if layer > top_w[x]:
                top_w[x] = layer
        for k in range(po[p], po[p + 1] - 1):
            x = pv[k]
            if layer < low_r[x]:
                low_r[x] = layer
    for x in range(n):
        if top_w[x] >= 0 and top_w[x] >= low_r[x]:
            if top_w[x] > low_r[x]:
                return x, top_w[x], low_r[x]
            low_r[x] = -2 - low_r[x]  # W == R: its writers and readers there must share one SCC
        top_w[x] = -1  # from here: the SCC-vertex seen at x's shared layer (-1: none yet)
    for p in range(P):
        layer = player[p]
        for k in range(po[p], po[p + 1]):
            x = pv[k]
            if low_r[x] == -2 - layer:
                if top_w[x] == -1:
                    top_w[x] = pscc[p]
                elif top_w[x] != pscc[p]:
                    return x, layer, layer
    return -1, 0, 0


_PATH_ERRORS = {
    1: ("path_offsets",
        "path {i}: offsets not increasing by at least 2 or out of range (length {v})"),
    2: ("path_hot", "path {i}: flag byte {v} is not 0 or 1"),
    3: ("path_heat", "path {i}: heat is negative, infinite or NaN"),
    4: ("path_scc", "path {i}: SCC-vertex {v} out of range [0, num_scc)"),
    5: ("path_scc",
        "path {i}: SCC-vertex {v} smaller than the previous path's (not non-decreasing)"),
    6: ("path_layer", "path {i}: layer {v} differs from its SCC-vertex's layer"),
    7: ("path_vertices", "entry {i}: vertex id {v} out of range [0, num_vertices)"),
    8: ("path_arc_ids", "entry {i}: arc id {v} out of range [0, num_arcs)"),
    9: ("path_arc_ids",
        "entry {i}: arc {v} does not leave the path's vertex there (not the graph's arc)"),
    10: ("path_arc_ids",
         "entry {i}: arc {v} does not enter the path's next vertex (not the graph's arc)"),
}


def _offsets(a, first, last, strict, name, fail):
    """``a[0] == first``, ``a[-1] == last``, and non-decreasing (increasing when ``strict``)."""
    if a[0] != first or a[-1] != last:
        fail(name, f"starts at {a[0]} and ends at {a[-1]} (expected {first} and {last})")
    if a.size > 1:
        d = np.diff(a)
        bad = np.flatnonzero(d < (1 if strict else 0))
        if bad.size:
            fail(name, f"not {'increasing' if strict else 'monotone'} at index {bad[0]}")


def _in_range(a, lo, hi, name, fail):
    if a.size and (a.min() < lo or a.max() >= hi):
        i = int(np.flatnonzero((a < lo) | (a >= hi))[0])
        fail(name, f"entry {i} is {a[i]}, out of range [{lo}, {hi})")


def _fail(gdir, name, what):
    raise CacheError(f"{gdir / (name + '.npy')}: {what}")


def check_small(arrays, sizes, gdir):
    """SCC-vertices, layers, DAG sketch, junctions, partitions (arrays of sizes S, J, K)."""
    def fail(name, what):
        _fail(gdir, name, what)

    n, S, P, L, J, K = (sizes[k] for k in ("n", "S", "P", "L", "J", "K"))
    A = {k: np.asarray(v) for k, v in arrays.items()}
    scc_layer = A["scc_layer"]
    lso = A["layer_scc_offsets"]
    _offsets(lso, 0, S, True, "layer_scc_offsets", fail)
    if S > 1:
        bad = np.flatnonzero(np.diff(scc_layer) < 0)
        if bad.size:
            fail("scc_layer", f"not non-decreasing at index {bad[0]}")
    if L:
        r = np.arange(L, dtype=np.int64)
        if not (np.array_equal(scc_layer[lso[:-1]], r)
                and np.array_equal(scc_layer[lso[1:] - 1], r)):
            fail("scc_layer", "disagrees with layer_scc_offsets")
    spo = A["scc_path_offsets"]
    _offsets(spo, 0, P, True, "scc_path_offsets", fail)
    _in_range(A["scc_succ_paths"], 0, P + 1, "scc_succ_paths", fail)
    _offsets(A["dag_offsets"], 0, sizes["T"], False, "dag_offsets", fail)
    _in_range(A["dag_targets"], 0, S + J, "dag_targets", fail)
    _in_range(A["junction_vertex"], 0, n, "junction_vertex", fail)
    _in_range(A["junction_layer"], 0, L, "junction_layer", fail)
    _offsets(A["partition_offsets"], 0, P, True, "partition_offsets", fail)
    po = A["path_offsets"]
    _offsets(po[[0, -1]], 0, A["path_vertices"].size, False, "path_offsets", fail)


class PathCheck:
    """The paths' pass: ``tasks`` (nogil kernel calls, one range of paths each), then ``finish``."""

    def __init__(self, arrays, sizes, graph, chunks):
        n, m, P = sizes["n"], sizes["m"], sizes["P"]
        self.arrays, self.sizes = arrays, sizes
        A = {k: np.asarray(v) for k, v in arrays.items()}
        pv = A["path_vertices"]
        self.seen = np.zeros(m, np.bool_)
        if graph is not None:
            goff = np.asarray(graph.out_offsets, np.int64)
            gtg = np.asarray(graph.out_targets)
        else:
            goff = np.zeros(1, np.int64)
            gtg = np.zeros(0, pv.dtype)
        args = (A["path_offsets"], pv, A["path_arc_ids"], A["path_hot"].view(np.uint8),
                A["path_heat"], A["path_scc"], A["path_layer"], A["scc_layer"], np.int64(n),
                np.int64(m), goff, gtg, graph is not None, self.seen)
        chunks = chunks if P >= 100_000 else 1
        b = np.linspace(0, P, chunks + 1).astype(np.int64)
        self.tasks = [lambda lo=b[i], hi=b[i + 1]: _check_paths(lo, hi, *args)
                      for i in range(chunks)]
        layers = (A["path_offsets"], pv, A["path_scc"], A["path_layer"], np.int64(n))
        self.layers_task = lambda: _layers_follow_dependencies(*layers)

    def finish(self, results, gdir, layers):
        """Raise for the first problem: ``results`` of :attr:`tasks`, ``layers`` of
        :attr:`layers_task`."""
        def fail(name, what):
            _fail(gdir, name, what)

        for code, i, v in results:
            if code:
                name, what = _PATH_ERRORS[code]
                fail(name, what.format(i=i, v=v))
        if self.seen.size and not self.seen.all():
            e = int(np.argmin(self.seen))
            fail("path_arc_ids", f"arc {e} is in no path (another arc is in two): the paths do not "
                                 "cover the graph's arcs exactly once")
        A = {k: np.asarray(v) for k, v in self.arrays.items()}
        S, K = self.sizes["S"], self.sizes["K"]
        if S:  # path_scc is non-decreasing in [0, S): it must change exactly at scc_path_offsets
            pscc, spo = A["path_scc"], A["scc_path_offsets"]
            r = np.arange(S, dtype=np.int64)
            if not (np.array_equal(pscc[spo[:-1]], r) and np.array_equal(pscc[spo[1:] - 1], r)):
                fail("scc_path_offsets", "disagrees with path_scc")
        if K:
            pl, part = A["path_layer"], A["partition_offsets"]
            bad = np.flatnonzero(pl[part[:-1]] != pl[part[1:] - 1])
            if bad.size:
                fail("partition_offsets", f"partition {bad[0]} spans several layers")
        if S:  # the layers are a topological order of the paths' real dependencies
            x, w, r = layers
            if x >= 0:
                fail("path_layer",
                     f"the layers do not follow the paths' dependencies: vertex {x} is "
                     f"written by a path of layer {w} and read by a path of another "
                     f"SCC-vertex of layer {r} (a reader must be in a higher layer)")
