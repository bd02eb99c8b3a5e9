"""What the CPU path engine's drivers share: the chunk size of Numba's parallel loops
(:func:`chunks`), the schedule of partitions by DAG layer (:class:`Schedule`), the
representation of the paths (walked with per-arc mirrors, or pushed per vertex in short-arc
groups: :class:`_Representation`, kept on the PathSet), the priority threshold and aging, and the
counters of a check pass and of a round."""

from contextlib import contextmanager

import numba
import numpy as np

from ....smx.cpu import paths_setup

__all__ = []


@contextmanager
def chunks(size):
    """Numba's parallel chunk size for the kernels called inside: the path kernels run with one
    partition per chunk (dynamic: idle threads take the next one), the per-vertex and per-arc
    set-up and certification kernels with the default static split (0) — one vertex per chunk
    made them 2-4x slower."""
    old = numba.get_parallel_chunksize()
    numba.set_parallel_chunksize(size)
    try:
        yield
    finally:
        numba.set_parallel_chunksize(old)


class Schedule:
    """Partitions per layer, groups of partitions that hold one split SCC-vertex, book-keeping
    (``length_bins``: bins of the walked-length histogram, :attr:`PathSettings.length_bins`; None,
    for a caller that walks nothing: no histogram)."""

    def __init__(self, ps, dag=True, length_bins=None):
        self.ps = ps
        off = ps.partition_offsets
        K = off.size - 1
        self.num_parts = K
        if K:
            first = ps.path_scc[off[:-1]]
            last = ps.path_scc[off[1:] - 1]
            part_layer = ps.path_layer[off[:-1]]
        else:
            first = last = part_layer = np.zeros(0, np.int64)
        # a group = partitions that must be scheduled together: an SCC-vertex split over several
        # partitions (its last piece may share a partition with the next small SCC-vertices)
        newgroup = np.ones(K, bool)
        newgroup[1:] = first[1:] != last[:-1]
        self.group = np.cumsum(newgroup) - 1
        # a partition alone in its group holds whole SCC-vertices: it may converge locally
        size = np.bincount(self.group, minlength=int(self.group[-1]) + 1 if K else 0)
        self.local = size[self.group] == 1
        if not dag:  # ablation: one layer, nothing converges locally
            part_layer = np.zeros(K, np.int64)
            self.local[:] = False
        self.num_layers = int(part_layer[-1]) + 1 if K else 0
        self.layer_parts = np.searchsorted(part_layer, np.arange(self.num_layers + 1))
        arc_start = ps.path_offsets[off] - off  # first arc (path order) of each partition
        self.part_arcs = np.diff(arc_start)
        self.scc_last = np.full(max(ps.num_scc, 1), -1, np.int64)
        self.scc_runs = np.zeros(max(ps.num_scc, 1), np.int64)
        self.length_hist = (None if length_bins is None else
                            np.zeros((numba.config.NUMBA_NUM_THREADS, length_bins), np.int64))
        self.layer_rounds = np.zeros(self.num_layers, np.int64)
        self.layer_arcs = np.zeros(self.num_layers, np.int64)

    def layer(self, L):
        return np.arange(self.layer_parts[L], self.layer_parts[L + 1], dtype=np.int64)

    def still_active(self, parts, part_active):
        """Scheduled partitions to keep: the active ones and the rest of their groups."""
        g = self.group[parts]
        live = np.zeros(int(g.max()) + 1 - int(g.min()), bool)
        live[g[part_active > 0] - g.min()] = True
        return parts[live[g - g.min()]]

    def report(self, stats):
        ran = self.scc_runs[:self.ps.num_scc]
        stats["scc_vertices"] = int(self.ps.num_scc)
        stats["scc_ran"] = int((ran > 0).sum())
        stats["scc_ran_once"] = int((ran == 1).sum())
        stats["layer_rounds"] = self.layer_rounds.tolist()
        stats["layer_arc_updates"] = self.layer_arcs.tolist()
        h = self.length_hist.sum(axis=0)
        stats["processed_path_lengths"] = {int(k): int(h[k]) for k in np.flatnonzero(h)}


class _Representation:
    """Which paths are walked with per-arc mirrors, and the short-arc groups pushed per vertex.

    Built once per (PathSet, ``short_path_push``) and kept on the PathSet (it depends on nothing
    else); its build time is reported as ``stats["time_representation"]`` (0 when reused).
    """

    def __init__(self, ps, k, push_hot_arcs=True):
        npaths = ps.num_paths
        lengths = ps.path_lengths
        pushed = np.zeros(npaths, bool)
        if k > 0:
            # a hot path of one arc has nothing to carry along: walking it buys nothing
            walked_hot = np.asarray(ps.path_hot, bool) & ((lengths > 1) | (not push_hot_arcs))
            pushed = ~walked_hot & (lengths <= k)
        self.short_path_push = k
        self.push_hot_arcs = bool(push_hot_arcs)
        self.pushed_paths = int(pushed.sum())
        off = np.asarray(ps.partition_offsets, np.int64)
        if self.pushed_paths:
            self.walk_paths = np.flatnonzero(~pushed).astype(np.int64)
            self.walk_offsets = np.searchsorted(self.walk_paths, off).astype(np.int64)
            (self.arc_ids, self.garc, self.gsrc, gpart, self.gdst,
             self.gscc) = paths_setup.short_arc_groups(
                ps.path_offsets, ps.path_vertices, off, ps.path_scc, pushed,
                np.int64(ps.num_vertices), np.int64(max(ps.num_scc, 1)))
            self.group_offsets = np.searchsorted(gpart, np.arange(off.size)).astype(np.int64)
            arc_path = np.repeat(np.arange(npaths, dtype=np.int64), lengths)
            heat = np.asarray(ps.path_heat, np.float64)[arc_path[self.arc_ids]]
            self.gheat = np.add.reduceat(heat, self.garc[:-1]) / np.diff(self.garc)
        else:
            self.walk_paths = np.arange(npaths, dtype=np.int64)
            self.walk_offsets = off
            self.arc_ids = np.zeros(0, np.int64)
            self.garc = np.zeros(1, np.int64)
            self.gsrc = self.gdst = self.gscc = np.zeros(0, np.int64)
            self.group_offsets = np.zeros(off.size, np.int64)
            self.gheat = np.zeros(0, np.float64)
        self.num_groups = int(self.gsrc.size)
        self.pushed_arcs = int(self.arc_ids.size)
        cum = np.zeros(self.walk_paths.size + 1, np.int64)
        np.cumsum(lengths[self.walk_paths], out=cum[1:])
        # what a check pass reads per partition: the arcs of its walked paths, and its groups
        self.part_walk_arcs = cum[self.walk_offsets[1:]] - cum[self.walk_offsets[:-1]]
        self.part_groups = np.diff(self.group_offsets)

    def group_coefficients(self, ps, src_scale, arc_scale, has_arc, dst_scale):
        """(c_e in group order, Σ c_e and max c_e per group)."""
        gcoef = np.empty(self.pushed_arcs, np.float64)
        gsum = np.empty(self.num_groups, np.float64)
        gmax = np.empty(self.num_groups, np.float64)
        paths_setup.group_coefficients(self.garc, self.gsrc, self.gdst, self.arc_ids,
                                       ps.path_arc_ids, src_scale, arc_scale, has_arc, dst_scale,
                                       gcoef, gsum, gmax)
        return gcoef, gsum, gmax

    def report(self, stats):
        stats["short_path_push"] = self.short_path_push
        stats["pushed_paths"] = self.pushed_paths
        stats["pushed_arcs"] = self.pushed_arcs
        stats["push_groups"] = self.num_groups


def representation(ps, k, stats, push_hot_arcs=True):
    import time
    t0 = time.perf_counter()
    cache = ps.__dict__.setdefault("_representations", {})
    key = (k, bool(push_hot_arcs))
    if key not in cache:
        cache[key] = _Representation(ps, k, push_hot_arcs)
    rep = cache[key]
    stats["time_representation"] = time.perf_counter() - t0
    rep.report(stats)
    stats.setdefault("vertex_pushes", 0)
    stats.setdefault("groups_examined", 0)
    return rep


def _min_score(hist, share):
    """Smallest score of the highest log2 buckets that hold at least ``share`` of the active
    paths."""
    total = hist.sum()
    need = share * total
    acc = 0
    for b in range(hist.size - 1, -1, -1):
        acc += hist[b]
        if acc >= need:
            return 2.0 ** (b - 64) if b > 0 else 0.0
    return 0.0


def aging_due(rule, layer_rounds, settings):
    """Whether this round of a layer (``layer_rounds`` run so far) walks every active path:
    every :attr:`PathSettings.aging_rounds`-th round under the paper's priority (``rule`` 2)."""
    return rule == 2 and layer_rounds % settings.aging_rounds == settings.aging_rounds - 1


def walk_arrays(ps, rep):
    return rep.walk_offsets, rep.walk_paths, ps.path_offsets, ps.path_vertices


def count_check(stats, rep, parts):
    """A check pass reads the arcs of the walked paths and two values per short-arc group."""
    stats["arcs_examined"] += int(rep.part_walk_arcs[parts].sum())
    stats["groups_examined"] += int(rep.part_groups[parts].sum())


def count(stats, sched, L, res, parts):
    sent, seen, walked, extra, pushed = res
    stats["vertex_pushes"] += int(pushed)
    stats["local_sweeps"] = stats.get("local_sweeps", 0) + int(extra)
    stats["arc_updates"] += int(sent)
    stats["vertex_updates"] += int(sent)  # each transmitted arc writes its target's master
    stats["arcs_examined"] += int(seen)
    stats["paths_processed"] += int(walked)
    stats["partitions_processed"] += int(parts.size)
    stats["rounds"] += 1
    sched.layer_rounds[L] += 1
    sched.layer_arcs[L] += int(sent)
