"""The set-up of the GPU power iteration (``mode="power"``), shared by the one-GPU engine
(:mod:`digraph.dispatch.engines.power.gpu`) and the sharded one
(:mod:`digraph.dispatch.engines.power.gpus`): the threads per vertex of the grouped pull
(:func:`group_size`), the in-degree classes of the binned pull (:func:`degree_classes`, kept in
the graph's residency by :func:`_bins`), the vertex vectors on the device
(:func:`vertex_vectors`), the Anderson acceleration's state and counters
(:func:`anderson_for`, :func:`anderson_stats`), and a round's sound bound
(:func:`round_bound`)."""

import math

import numpy as np

from ...anderson import Anderson
from ...runtime.cuda import residency as _residency

__all__ = ["group_size", "degree_classes", "vertex_vectors", "anderson_for", "anderson_stats",
           "round_bound"]


def group_size(graph):
    """Threads per vertex of the pull: the power of two nearest half the mean in-degree, 1 to 32.
    A group reads its vertex's in-arcs side by side (coalesced) and sums them by shuffles."""
    if not graph.num_vertices:
        return 1
    mean = graph.num_arcs / graph.num_vertices
    return int(min(32, max(1, 2 ** round(math.log2(max(mean / 2, 1.0))))))


def degree_classes(be, deg, classes, blocks_per_sm):
    """([(threads per vertex, vertex list, grid)] for the in-degree classes ``[lo, hi)`` of
    ``classes`` (``(lo, hi, threads)`` each), the list of vertices of in-degree ``classes[-1][1]``
    or more, a block each), on the device; ``deg``: the in-degrees on the host."""
    from ....smx.cuda.common import HB
    lists = []
    for lo, hi, gb in classes:
        verts = np.flatnonzero((deg >= lo) & (deg < hi)).astype(np.int32)
        if verts.size:
            grid = max(1, min((verts.size * gb + HB - 1) // HB, blocks_per_sm * be.sms))
            lists.append((gb, be.put(verts), grid))
    return lists, be.put(np.flatnonzero(deg >= classes[-1][1]).astype(np.int32))


def vertex_vectors(be, system, out_degree, n, v0=0, v1=None, rows=None):
    """(teleport vector ``b / Σb``, ``src_scale``, ``dst_scale``) of the vertices ``[v0, v1)``
    on the device (default all ``n``); ``out_degree``: theirs, on the device (PageRank's
    ``src_scale = α / out-degree`` is made from it there; ``v = 1/n`` is made there too).
    ``rows`` (a slice or an index array of the graph's vertices, ``v1 − v0`` of them): the
    vertices taken for ``[v0, v1)`` when the engine numbers them otherwise (the sharded power
    iteration's dealt blocks, :mod:`digraph.dispatch.engines.power.gpus_layout`)."""
    xp = be.xp
    v1 = n if v1 is None else v1
    rows = slice(v0, v1) if rows is None else rows
    if getattr(system, "b_constant", None) is not None:  # v = 1/n, made here (no upload)
        tele = be.keep(xp.full(v1 - v0, 1.0 / max(n, 1)))
    else:
        b = np.asarray(system.b, np.float64)
        tele = be.keep(be.put(b[rows]) / (float(b.sum()) if n else 1.0))
    sds = getattr(system, "src_degree_scale", None)
    if sds is not None:  # src_scale = sds / out-degree, made from the out-degrees on the GPU
        deg = out_degree.astype(np.float64)
        src_scale = be.keep(xp.where(deg > 0, sds / xp.maximum(deg, 1.0), 0.0))
    else:
        src_scale = _vertex_factor(be, _part(system.src_scale, rows), v1 - v0)
    return tele, src_scale, _vertex_factor(be, _part(system.dst_scale, rows), v1 - v0)


def _part(a, rows):
    return None if a is None else np.asarray(a, np.float64)[rows]


def degree_bins(be, graph, settings):
    """:func:`degree_classes` of ``settings.bins`` for the graph's in-degrees, kept in the
    graph's residency (kind ``"cuda-power-bins"``)."""
    got = _residency.residency(graph).get(
        "cuda-power-bins", (be.device_id, be.sim, settings.bins, settings.blocks_per_sm),
        lambda: degree_classes(be, np.asarray(graph.in_degree), settings.bins,
                               settings.blocks_per_sm))
    for _, verts, _ in got[0]:
        be.keep(verts)
    be.keep(got[1])
    return got


def anderson_for(settings, g1, n, m, trip, stats):
    """The :class:`~digraph.dispatch.anderson.Anderson` state of a GPU run (one GPU or sharded):
    memory :attr:`PowerGpuSettings.anderson` on graphs of ``anderson_arcs`` arcs or more, 0 for a
    router's probe (``trip``: it measures the plain rate) and below; ``stats["power_anderson"]``
    set."""
    from ....smx.cuda.anderson import MAX_MEMORY
    mem = (min(int(settings.anderson), MAX_MEMORY)
           if trip is None and n and m >= settings.anderson_arcs else 0)
    stats["power_anderson"] = mem
    return Anderson(mem, start_ratio=settings.anderson_ratio * g1,
                    max_restarts=settings.anderson_restarts)


def anderson_stats(aa, mem, stats):
    """A GPU run's Anderson counters into ``stats`` (``mem``: the memory it started with;
    ``power_anderson`` becomes 0 when the third round's ratio switched it off, and stays ``mem``
    when too many restarts did, which ``anderson_gave_up`` says)."""
    if mem:
        stats["anderson_mixes"] = aa.mixes
        stats["anderson_restarts"] = aa.restarts
        stats["anderson_gave_up"] = bool(aa.gave_up)
        if aa.probe_ratio is not None:
            stats["anderson_probe_ratio"] = float(aa.probe_ratio)
        stats["power_anderson"] = mem if aa.gave_up else aa.memory


def _vertex_factor(be, a, n):
    """A vertex factor on the device: ones made there when absent (no host array, no copy)."""
    if a is None:
        return be.keep(be.xp.ones(n, np.float64))
    return be.put(a, np.float64)


def round_bound(g1, s, e, diff, sy, sx, sx_err, blocks, mixed=False):
    """(bound, delta) of a GPU power round: ``s``, ``e`` the pull's sum and rounding bound,
    ``diff = ‖y − x‖₁``, ``sy = Σy`` after the teleport ``c = 1 − s``, ``sx`` the pulled
    iterate's sum (``sx_err`` its rounding when it is Anderson's mix), ``blocks`` the partial
    sums added up.  ``‖y − π‖₁ ≤ (γ1 ‖y − x‖₁ + δ + 2 |Σx − 1|) / (1 − γ1)``
    (:func:`digraph.dispatch.convergence.power_stop`), with the rounding of every sum in δ.

    The ``delta`` returned is what :func:`~digraph.dispatch.convergence.power_stop` reads as the
    rounding floor.  When the round pulled Anderson's mix (``mixed``), the mix's mass defect
    ``2 |Σx − 1|`` widens the bound but is left out of it: a mix clipped at 0 loses mass, which
    the next round's teleport restores, so it is no floor, and counting it as one ended such runs
    early at a bound far above ``tol`` ("floor-limited": the floor test also reads
    ``diff ≥ last_diff``, which a mix's differences need not keep).  Measured:
    docs/history/benchmarks-notebook.md, "When would ``scc`` pay on a GPU? Eighteen graphs"."""
    from ...convergence import ROUNDING_MARGIN
    u = np.finfo(np.float64).eps / 2
    c = 1.0 - s
    floor = u * (e + 2 * (s + abs(c) + sy) + (blocks + 8) * (s + sy)) + sx_err + abs(sy - 1.0)
    defect = 2 * abs(sx - 1.0)
    bound = (g1 * diff + floor + defect) * (1.0 + ROUNDING_MARGIN) / (1.0 - g1)
    return bound, (floor if mixed else floor + defect)
