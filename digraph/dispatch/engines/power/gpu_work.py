"""The device work of a GPU power run on one GPU (:mod:`digraph.dispatch.engines.power.gpu` and
:mod:`digraph.dispatch.engines.power.gpu_affine` run it): a round's pull (:class:`Pull`, made by
:func:`pull_for`), the run's vectors, kept in the graph's residency for the next run (:func:`work`,
:class:`Work`; kind ``"cuda-power-work"`` of
:class:`~digraph.dispatch.runtime.cuda.residency.Residency`), the in-arc CSR matrix for
cuSPARSE's SpMV (:func:`cusparse_matrix`, kind ``"cuda-power-csr"``; :func:`_spmv`), and the
CUDA graphs a round's pull and teleport are launched as (:func:`graphs`, :func:`graph_round`),
dropped at exit before CUDA's own teardown (:func:`_drop_kept_graphs`)."""

import atexit
import weakref

import numpy as np

from ...runtime.cuda import residency as _residency
from ...runtime.cuda.spmv import SpMV

__all__ = []


class Pull:
    """A round's pull on one GPU, ``y_v = dst_scale_v · Σ_{u→v} coef · z_u``, with the block sums
    of ``y`` and of ``(in-degree + 3) · y`` (the pull's rounding bound) added to ``acc[0:2]``:
    cuSPARSE's SpMV then :func:`~digraph.smx.cuda.power.power_scale_sums` (``sparse``), a list of
    vertices a class of in-degrees (``bins``), or ``G`` threads a vertex; in-degree hubs a block
    each.  Made by :func:`pull_for`; :meth:`factors` gives it a run's arc and target factors."""

    def __init__(self, be, dg, G, sparse, bins, grid_pull, grid_tel):
        self.be, self.dg, self.G, self.sparse, self.bins = be, dg, G, sparse, bins
        self.grid_pull, self.grid_tel = grid_pull, grid_tel
        self.in_coef, self.has, self.dst_scale = None, False, None

    @property
    def name(self):
        """``"cusparse"``, ``"binned"`` or ``"grouped"`` (``stats["power_pull"]``)."""
        return ("cusparse" if self.sparse is not None else
                "binned" if self.bins is not None else "grouped")

    def factors(self, in_coef, has, dst_scale):
        """The run's arc factors in in-arc order (``has``) and target factors, on the device
        (cuSPARSE's matrix takes the arc factors as its values)."""
        self.in_coef, self.has, self.dst_scale = in_coef, has, dst_scale
        sparse = self.sparse
        if sparse is not None and (has or not sparse["ones"]):
            sparse["coef"][...] = in_coef if has else 1.0
            sparse["ones"] = not has

    def queue(self, z, y, acc, stream=None):
        """Queue the pull of ``z`` into ``y`` and its sums into ``acc`` (on ``stream``; cuSPARSE
        on the default one)."""
        from ....smx.cuda import power as K
        from ....smx.cuda.common import HB
        be, dg = self.be, self.dg
        args = (dg["in_offsets"], dg["in_sources"], self.in_coef, self.has, z, self.dst_scale, y,
                acc)
        if self.sparse is not None:  # y = A z by cuSPARSE, then y ∘= dst_scale and its sums
            spmv_into(self.sparse, z, y)
            be.launch(K.power_scale_sums, self.grid_tel, HB, y, self.dst_scale, dg["in_offsets"],
                      acc)
        elif self.bins is None:
            be.launch(K.power_pull, self.grid_pull, HB, self.G, *args, stream=stream)
            be.heavy(K.power_pull_heavy, dg["heavy_in"], *args, stream=stream)
        else:
            for gb, verts, grid in self.bins[0]:
                be.launch(K.power_pull_list, grid, HB, gb, verts, *args, stream=stream)
            be.heavy(K.power_pull_heavy, self.bins[1], *args, stream=stream)


def resident_pull(be, graph, settings, group, stats):
    """``(dg, pull)``: ``graph``'s device arrays and the :class:`Pull` of a run on them
    (:func:`pull_for`), ``group`` threads a vertex when given (default
    :func:`~.gpu_setup.group_size`); sets ``stats["power_group"]`` and ``stats["power_pull"]``.

    Raises
    ------
    InvalidParameterError
        ``group`` not a power of two from 1 to 32 (at most a block).
    """
    from .gpu_setup import group_size
    from ...runtime.cuda import device_graph
    from ....errors import InvalidParameterError
    from ....smx.cuda.common import HB
    G = int(group or group_size(graph))
    if G & (G - 1) or not 1 <= G <= min(32, HB):
        raise InvalidParameterError(f"group must be a power of two from 1 to {min(32, HB)}, "
                                    f"got {G}")
    stats["power_group"] = G
    dg = device_graph.resident_graph(be, graph)
    pull = pull_for(be, graph, dg, settings, G, group is not None)
    stats["power_pull"] = pull.name
    return dg, pull


def pull_for(be, graph, dg, settings, G, given):
    """The :class:`Pull` of a run on ``graph`` (``dg``: its device arrays) with ``G`` threads a
    vertex when grouped: cuSPARSE's from :attr:`PowerGpuSettings.cusparse_arcs` arcs on, the
    binned one from ``bin_arcs`` on, the grouped one below or when the group was ``given``."""
    from .gpu_setup import degree_bins
    from ....smx.cuda.common import HB
    n, m = graph.num_vertices, graph.num_arcs
    sparse = None
    if not given and not be.sim and m >= settings.cusparse_arcs:
        sparse = cusparse_matrix(be, graph, dg, settings)
    bins = (degree_bins(be, graph, settings) if not given and sparse is None and
            m >= settings.bin_arcs else None)
    grid_pull = max(1, min((n * G + HB - 1) // HB, settings.blocks_per_sm * be.sms))
    grid_tel = max(1, min(be.grid_hb(n), settings.blocks_per_sm * be.sms))
    return Pull(be, dg, G, sparse, bins, grid_pull, grid_tel)


def cusparse_matrix(be, graph, dg, settings):
    """{mat, coef, ones, spmv}: the in-arc CSR matrix for cuSPARSE and its values on the device, or
    None where it does
    not fit (``8 · m`` bytes of values beside the graph's indices, which it shares) or cuSPARSE
    is missing.  The values are ones (``coef``, overwritten by a weighted run's arc factors);
    kept in the graph's residency (kind ``"cuda-power-csr"``; a None is not kept: asked again
    next run)."""
    res = _residency.residency(graph)
    key = (be.device_id,)
    got = res.peek("cuda-power-csr", key)
    if got is None:
        xp = be.xp
        m = graph.num_arcs
        try:
            import cupyx.scipy.sparse as csp
            from cupyx import cusparse  # noqa: F401  (its spmv below)
            free = xp.cuda.runtime.memGetInfo()[0]
        except Exception:
            return None
        if dg["in_offsets"].dtype != np.int32 or 8 * m > settings.cusparse_memory_share * free:
            return None
        coef = xp.ones(m, np.float64)
        mat = csp.csr_matrix((coef, dg["in_sources"], dg["in_offsets"]),
                             shape=(graph.num_vertices, graph.num_vertices), copy=False)
        # each vertex's in-arcs are sorted by source; parallel arcs repeat a source, which a
        # row's sum adds as it would any entry (cupyx's spmv asks the flag, not cuSPARSE)
        mat.has_canonical_format = True
        got = res.put("cuda-power-csr", key,
                      {"mat": mat, "coef": coef, "ones": True, "spmv": SpMV(mat)})
    return got


def spmv_into(sparse, x, y):
    """``y = mat · x`` into ``y`` (cuSPARSE's generic SpMV, its descriptors and buffer made once:
    :class:`~digraph.dispatch.runtime.cuda.spmv.SpMV`) for ``sparse`` of
    :func:`cusparse_matrix`."""
    sparse["spmv"](x, y)


def graphs(be, w, kept, settings, capturable):
    """The CUDA-graph state of a run (``{"stream", "pinned", "graphs", "primed"}``, kept in the
    work vectors ``w`` when they are kept), or None: under the simulator, with
    :attr:`PowerGpuSettings.graph_rounds` off, for cuSPARSE's pull (it allocates its buffer per
    call) and for arc factors (a new array each run)."""
    if be.sim or not settings.graph_rounds or not capturable:
        return None
    cg = w.get("cuda_graphs") if kept else None
    if cg is None:
        import cupyx
        xp = be.xp
        size = int(w["acc0"].size)
        cg = {"stream": xp.cuda.Stream(non_blocking=True),
              "pinned": [cupyx.empty_pinned(size, np.float64) for _ in range(2)],
              "graphs": {}, "primed": set()}
        if kept:
            w["cuda_graphs"] = cg
            KEPT_GRAPHS.append(weakref.ref(w))
    return cg


class Work(dict):
    """A run's device vectors by name (a dict that can be referred to weakly)."""

    __slots__ = ("__weakref__",)


KEPT_GRAPHS = []
"""Weak references to the work vectors that hold CUDA graphs (:func:`graphs`): they are
dropped at exit before CUDA's own teardown (a graph, stream or page-locked buffer freed after
the context was destroyed crashed the interpreter at exit: "double free or corruption")."""


@atexit.register
def _drop_kept_graphs():
    for ref in KEPT_GRAPHS:
        w = ref()
        if w is not None:
            cg = w.pop("cuda_graphs", None)
            if cg is not None:
                try:
                    cg["stream"].synchronize()
                except Exception:
                    pass
                cg.clear()
    KEPT_GRAPHS.clear()
    import gc
    gc.collect()


def read_back(be, cg, acc, k, stats):
    """Round ``k``'s sums ``acc`` on the host: through :meth:`~.backend._Backend.get`, or with
    CUDA graphs (``cg``) into the page-locked buffer of the round's parity on the rounds' stream,
    then that stream only."""
    if cg is None:
        return be.get(acc)
    stream = cg["stream"]
    pin = cg["pinned"][k % 2]
    acc.get(out=pin, stream=stream, blocking=False)
    stream.synchronize()
    stats["bytes_d2h"] += int(acc.nbytes)
    return pin.copy()


def graph_round(cg, key, queue, stats, name="power"):
    """Run a round's pull and teleport (``key``: its parity and pull) through its CUDA graph:
    queued plainly on the rounds' stream the first time (its launches then prepared for that
    stream), captured the second, launched as one graph from then on
    (``stats["power_graph_launches"]``; ``name`` ``"path"``: the GPU path modes' rounds, counted
    in ``stats["path_graph_launches"]`` and ``["path_graph_failed"]``)."""
    stream = cg["stream"]
    graph = cg["graphs"].get(key)
    if graph is None:
        if key not in cg["primed"]:
            queue()
            cg["primed"].add(key)
            return
        if cg.get("failed"):
            queue()
            return
        stream.begin_capture()
        try:
            queue()
            graph = stream.end_capture()
        except Exception as e:  # not capturable here: plain launches from now on
            try:
                stream.end_capture()
            except Exception:
                pass
            cg["failed"] = f"{type(e).__name__}: {e}"
            stats["power_graph_failed" if name == "power" else "path_graph_failed"] = cg["failed"]
            stream.synchronize()
            queue()
            return
        cg["graphs"][key] = graph
    graph.launch(stream)
    key = "power_graph_launches" if name == "power" else "path_graph_launches"
    stats[key] = stats.get(key, 0) + 1


def work(be, graph, n, mem, settings):
    """(the run's device vectors, kept, reused): ``x``, ``y``, ``z``, the vertex factors, the two
    accumulators and Anderson's rings; kept in the graph's residency (kind ``"cuda-power-work"``)
    for the next run when they take at most :attr:`PowerGpuSettings.keep_work_bytes` (the same
    arrays again: the launches prepared for them stay valid,
    :meth:`digraph.dispatch.runtime.cuda.backend._Backend.retain`)."""
    res = _residency.residency(graph)
    key = (be.device_id, be.sim, n, mem)
    w = res.peek("cuda-power-work", key)
    kept = reused = w is not None
    if w is None:
        xp = be.xp
        size = 6 + (2 * mem + 2 if mem else 0)
        kept = size * 8 * n <= settings.keep_work_bytes
        w = Work((k, xp.empty(n, np.float64))
                  for k in ("x", "y", "z", "tele", "src_scale", "dst_scale"))
        w["acc0"] = xp.zeros(5 + 2 * mem, np.float64)
        w["acc1"] = xp.zeros(5 + 2 * mem, np.float64)
        w["no_coef"] = xp.zeros(1, np.float64)
        if mem:
            w["dF"] = xp.zeros((mem, n), np.float64)
            w["dG"] = xp.zeros((mem, n), np.float64)
            w["fprev"] = xp.empty(n, np.float64)
            w["gprev"] = xp.empty(n, np.float64)
        if kept:
            res.put("cuda-power-work", key, w)
    for a in w.values():
        if hasattr(a, "__cuda_array_interface__") or be.sim and isinstance(a, np.ndarray):
            be.keep(a)
    return w, kept, reused
