"""The sharded power iteration's arrays on each GPU and its pull
(:mod:`digraph.dispatch.engines.power.gpus` runs the rounds).

:func:`shard_arrays` uploads a shard's in-arcs (offsets rebased, sources in global numbering,
grouped or binned by in-degree, or a CSR matrix for cuSPARSE's SpMV, :func:`_cusparse_matrix`)
and sets up its run vectors in the work kept between runs
(:mod:`digraph.dispatch.engines.power.gpus_work`): the teleport vector and the scales are made
again only when the system's vectors are not those of the last run
(:func:`~digraph.dispatch.runtime.cuda.common._vector_key`: a personalised PageRank brings
other ones).  :func:`pull` queues a shard's pull of a round, :func:`_retain` keeps its
arrays registered at the end of a run (or forgets them).
"""

import numpy as np

from .gpu_setup import degree_classes, group_size, vertex_vectors
from ...systems import linear_factors
from ...runtime.cuda.common import same_vectors, stored_key, index_dtype
from ...runtime.cuda.spmv import SpMV
from .gpus_work import allocate, device_arrays, work_arrays

__all__ = []


def shard_arrays(s, graph, system, has, settings, group, mem, vkey):
    """Upload shard ``s``'s arcs and set up its vectors for a run (its device current); returns Σ
    of its teleport.  The vectors are those of ``s.w`` (:func:`~.gpus_work._kept_work`), made on
    first use; the teleport vector and the scales are made again only when ``vkey``
    (:func:`~digraph.dispatch.runtime.cuda.common._vector_key`) is not the one they were made for.

    The pull runs over in-degree classes (:attr:`PowerGpuSettings.bins`, or one class of
    ``group`` threads below the heavy in-degree when the shard holds fewer than
    :attr:`PowerGpuSettings.bin_arcs` arcs or ``group`` is given) and a block per vertex above
    them."""
    from ....smx.cuda.common import HEAVY
    be, xp = s.be, s.be.xp
    n = graph.num_vertices
    v0, v1 = s.v0, s.v1
    nl = v1 - v0
    G = int(group or group_size(graph))
    lay, g = s.layout, s.index  # GPU g's vertices, in the engine's order (power_layout)

    def build():
        rows, spans = lay.arc_spans(graph.in_offsets, g)
        arcs = int(rows[-1])
        it = index_dtype(max(n, arcs))
        deg = np.diff(rows)
        binned = group is None and arcs >= settings.bin_arcs
        lists, hubs = degree_classes(be, deg, settings.bins if binned else ((0, HEAVY, G),),
                                     settings.blocks_per_sm)
        src = be.put(lay.gather_arcs(graph.in_sources, spans), it)
        d = {"off": be.put(rows, it), "out_degree": be.put(lay.take(graph.out_degree, g),
                                                             np.float64),
             "bins": lists, "binned": binned, "hubs": hubs, "spans": spans}
        if lay.kind != "ranges":  # sources in the engine's numbering, renumbered here
            d["src"] = lay.renumber(xp, src, xp.asarray(lay.start))
            d["rows"] = be.put(np.asarray(lay.vertices(g), np.int64))  # for the answer
            del src
        else:
            d["src"] = src
        if group is None and not be.sim and arcs >= settings.cusparse_arcs:
            d["sparse"] = _cusparse_matrix(be, d["off"], d["src"], nl, n, arcs, settings)
        return d
    d = s.resident(graph, ("power", lay.key, settings.bins, settings.bin_arcs,
                           settings.blocks_per_sm, settings.cusparse_arcs,
                           None if group is None else G), build)
    for _, verts, _ in d["bins"]:
        be.keep(verts)
    s.d = d
    w = s.w
    if "x" not in w:
        allocate(be, w, n, v0, v1, mem)
    for a in work_arrays(w):  # registered again (another run may have released them)
        be.keep(a)
    if has:
        s.coef = be.put(linear_factors(graph, system)[3][lay.gather_arcs(graph.in_arcs,
                                                                         d["spans"])])
    else:
        s.coef = w["no_coef"]
    sparse = d.get("sparse")
    if sparse is not None and (has or not sparse["ones"]):  # the matrix's values: arc factors
        sparse["coef"][...] = s.coef if has else 1.0
        sparse["ones"] = not has
    if vkey is None or not same_vectors(w.get("vkey"), vkey):
        w["vkey"] = None  # until they are made
        for name, vec in zip(("tele", "src_scale", "dst_scale"),
                             vertex_vectors(be, system, d["out_degree"], n, v0, v1,
                                            rows=lay.vertices(g))):
            w[name][...] = vec  # into the kept vectors: the prepared launches stay valid
        w["tele_sum"] = float(w["tele"].sum()) if nl else 0.0
        w["vkey"] = stored_key(vkey)
    s.tele, s.src_scale, s.dst_scale = w["tele"], w["src_scale"], w["dst_scale"]
    s.x, s.y = w["x"], w["y"]
    s.x[...] = s.tele  # z = src_scale ∘ x: power_exchange._z_vectors, once the exchange is chosen
    s.accbuf, s.acc = w["accbuf"], w["acc"]
    if mem:  # Anderson's rings of the shard's range (cuda_anderson): a slot is written before
        # it is read, as one GPU keeps them (gpu_power._work)
        s.dF, s.dG, s.fprev, s.gprev = w["dF"], w["dG"], w["fprev"], w["gprev"]
    return w["tele_sum"]


def _cusparse_matrix(be, off, src, rows, cols, arcs, settings):
    """{mat, coef, ones}: a shard's in-arcs as a CSR matrix for cuSPARSE (rows: its range,
    columns: every vertex, the shard's own index arrays, values of ones), or None where the
    values do not fit (:attr:`~.gpu_settings.PowerGpuSettings.cusparse_arcs`,
    ``cusparse_memory_share``) or cuSPARSE is missing."""
    xp = be.xp
    try:
        import cupyx.scipy.sparse as csp
        from cupyx import cusparse  # noqa: F401  (its spmv below)
        free = xp.cuda.runtime.memGetInfo()[0]
    except Exception:
        return None
    if off.dtype != np.int32 or src.dtype != np.int32 or \
            8 * arcs > settings.cusparse_memory_share * free:
        return None
    coef = xp.ones(arcs, np.float64)
    mat = csp.csr_matrix((coef, src, off), shape=(rows, cols), copy=False)
    mat.has_canonical_format = True  # sorted sources; parallel arcs are summed as any entry
    return {"mat": mat, "coef": coef, "ones": True, "spmv": SpMV(mat)}


def pull(be, K, HB, s, has, acc):
    """Queue shard ``s``'s pull into ``s.y``, its sums into ``acc``."""
    d = s.d
    tag = s.tag
    sparse = s.pull_sparse  # over s.z's numbering (power_exchange._z_vectors), as s.pull_src
    if sparse is not None:  # y = A z by cuSPARSE, then y ∘= dst_scale and its sums
        sparse["spmv"](s.z, s.y)
        be.launch(K.power_scale_sums, s.grid_tel, HB, s.y, s.dst_scale, d["off"], acc,
                  tag=(tag, "sums", id(acc)))
        return
    for i, (gb, verts, grid) in enumerate(d["bins"]):
        be.launch(K.power_pull_list, grid, HB, gb, verts, d["off"], s.pull_src, s.coef, has,
                  s.z, s.dst_scale, s.y, acc, tag=(tag, i, id(acc)))
    be.heavy(K.power_pull_heavy, d["hubs"], d["off"], s.pull_src, s.coef, has, s.z,
             s.dst_scale, s.y, acc, tag=(tag, "hubs", id(acc)))


def retain_arrays(shards, keep):
    """End of a run: each GPU keeps the kept work's arrays and the shards' graph arrays
    registered, with the launches prepared for them (``keep``), or forgets every array and
    launch."""
    by = {}
    for s in shards:
        arrs = by.setdefault(id(s.be), (s, []))[1]
        if keep:
            d = getattr(s, "d", None) or {}
            arrs += work_arrays(s.w) + device_arrays(
                [d.get("off"), d.get("src"), d.get("out_degree"), d.get("hubs"),
                 (d.get("compact") or {}).get("src")] +
                [verts for _, verts, _ in d.get("bins", ())])
    for s, arrs in by.values():
        if keep:  # the backend's own tables only: no GPU made current (~80 µs a GPU)
            s.be.retain(arrs, "sharded-power", holder=s.w)
        else:
            with s.on():
                s.be.release("sharded-power")
