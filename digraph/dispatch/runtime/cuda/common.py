"""What the one-GPU engines (:mod:`digraph.dispatch.engines.one_gpu`, :mod:`.one_gpu`) and the
sharded ones (:mod:`digraph.dispatch.engines.push.gpus`, :mod:`digraph.dispatch.engines.power.gpus`)
share, so that neither reaches into the other's private helpers: the kernel
module and its block size, the index dtype, the linear systems' contraction sums and dense-round
counters, and what identifies a system's vectors between runs (:func:`vector_key`: the work an
engine keeps is reused only for the same vectors).
"""

import weakref

import numpy as np

__all__ = ["hb", "kernels", "index_dtype", "contraction_sums", "column_sums_known",
           "count_dense_round"]


def hb():
    """Threads per block of the heavy and scan kernels (:data:`digraph.smx.cuda.common.HB`)."""
    from ....smx.cuda.common import HB
    return HB


def kernels():
    """:mod:`digraph.smx.cuda.kernels` (imported when a GPU is asked for)."""
    from ....smx.cuda import kernels as cuda_kernels
    return cuda_kernels


def index_dtype(limit):
    """int32 for ids and offsets below 2^31 − 1, else int64."""
    return np.int32 if limit < 2**31 - 1 else np.int64


def contraction_sums(be, v0, v1, in_offsets, src, coef, has, src_scale, dst_scale, want_col,
                     heavy=None):
    """(column sums, row sums, bad-arc count) of the coefficient matrix over the in-arcs of the
    targets ``[v0, v1)``, summed on the GPU: the γ1, γ∞ of
    :func:`~digraph.dispatch.convergence.linear_contraction` without its host pass over every
    arc.  Without ``want_col`` the column sums are left at 0
    (see :func:`column_sums_known`).  ``heavy``: the targets of in-degree >= HEAVY, summed by a
    block each (a thread alone on an R-MAT hub's arcs held up the set-up)."""
    K = kernels()
    xp = be.xp
    n = src_scale.size
    col = xp.zeros(n if want_col else 1, np.float64)
    row = xp.zeros(n, np.float64)
    bad = xp.zeros(1, np.int64)
    if v1 > v0:
        be.launch(K.linear_sums, be.grid(v1 - v0), be.block, v0, v1, 0, in_offsets, src, coef,
                  has, src_scale, dst_scale, col, row, bad, want_col, heavy is not None)
        if heavy is not None:
            be.heavy(K.linear_sums_heavy, heavy, 0, in_offsets, src, coef, has, src_scale,
                     dst_scale, col, row, bad, want_col)
    return col, row, bad


def column_sums_known(sys, has):
    """Whether the column sums are ``src_scale · out-degree`` (no arc factors, no target
    factors, as for PageRank on an unweighted graph): then γ1 needs no pass over the arcs."""
    return not has and sys.dst_scale is None


def count_dense_round(stats, m, absorbed):
    """The counters of one dense round over ``m`` arcs that absorbed ``absorbed`` vertices (the
    round itself is counted by the round driver)."""
    stats["arc_updates"] += m
    stats["dense_rounds"] += 1
    stats["vertex_updates"] += int(absorbed)


def vector_key(system):
    """What the teleport vector and the scales of a run are made from: each a recipe's number
    (:attr:`~digraph.algorithms.base.LinearSystem.b_constant`, ``src_degree_scale``), None (ones)
    or the system's array itself, compared by identity (:func:`same_vectors`); None where an
    entry is neither (then they are made every run).  A vector changed in place between runs is
    not noticed (as :func:`digraph.dispatch.engines.power.cpu._gamma` keeps its γ)."""
    from ...systems import stored_field
    key = []
    for name, recipe in (("b", "b_constant"), ("src_scale", "src_degree_scale"),
                         ("dst_scale", None)):
        r = getattr(system, recipe, None) if recipe else None
        if r is not None:
            key.append(("recipe", float(r)))
            continue
        v = stored_field(system, name)
        if v is None:
            key.append(("ones", None))
        elif isinstance(v, np.ndarray):
            key.append(("array", v))
        else:
            return None
    return tuple(key)


def stored_key(vkey):
    """:func:`vector_key`'s key as kept: its arrays by weak reference."""
    if vkey is None:
        return None
    return tuple((kind, weakref.ref(v) if kind == "array" else v) for kind, v in vkey)


def same_vectors(stored, vkey):
    if stored is None or vkey is None or len(stored) != len(vkey):
        return False
    for (k1, v1), (k2, v2) in zip(stored, vkey):
        if k1 != k2 or (v1() is not v2 if k1 == "array" else v1 != v2):
            return False
    return True
