"""The SCC engine's components dealt to several GPUs (the DAG dispatcher,
:mod:`digraph.dispatch.engines.scc.gpus`), and what then crosses between them.

The one-GPU schedule (:mod:`digraph.paths.scc_schedule`) runs *units* in order, ``P0, G0, P1,
G1, …``: a phase's light components, a block each from a device-side ready queue, then its heavy
components, in rounds over the GPU.  Over several GPUs the units stay in that order, with a
barrier and an exchange between two; inside a unit every GPU runs the components dealt to it:

* a phase's light components in *pieces*: the weakly connected sets of its same-phase arcs (the
  queue's dependencies), so a GPU's queue never waits for another GPU's component;
* a phase's heavy components one by one (two heavy components of one phase never lie on a chain,
  :mod:`~.scc_schedule`), except a *giant*: one that costs more than its unit's
  fair share (``1/k`` of it) and has at least ``giant_arcs`` arcs inside.  A giant runs sharded
  over every GPU (the dispatcher hands it to the sharded engine); it counts as GPU 0's for what
  crosses (its inputs are gathered there, its values sent from there).

Pieces and heavy components go to GPUs by longest processing time first (the largest to the GPU
with the least so far) on their cost: arcs inside plus arcs in from other components plus
vertices (each pulled, pushed or swept once at least).  A unit's time is its slowest GPU's, so
each unit is balanced on its own.

After a unit, each GPU sends another only the values of its finished vertices that have an arc
into a component dealt to that GPU (:func:`crossings`): a vertex's value crosses once to each GPU
that reads it, and never again (its component is final, DiGraph's Observation 2).
"""

import numpy as np
from numba import njit

from .scc_schedule import SccSchedule

__all__ = ["deal", "restricted", "crossings"]


@njit(cache=True, nogil=True)
def _find(parent, a):
    while parent[a] != a:
        parent[a] = parent[parent[a]]
        a = parent[a]
    return a


@njit(cache=True, nogil=True)
def _pieces(eout_offsets, eout_comp, C):
    """Root of each component's weakly connected set over the same-phase arcs."""
    parent = np.arange(C)
    for c in range(C):
        for e in range(eout_offsets[c], eout_offsets[c + 1]):
            a, b = _find(parent, c), _find(parent, eout_comp[e])
            if a != b:
                if a < b:
                    parent[b] = a
                else:
                    parent[a] = b
    for c in range(C):
        parent[c] = _find(parent, c)
    return parent


def _lpt(items, cost, k, load):
    """``items`` dealt to ``k`` bins, the costliest first to the least loaded (ties: the lowest
    bin); ``load`` (k floats) updated; returns the bin of each item."""
    out = np.empty(items.size, np.int32)
    for i in np.argsort(-cost, kind="stable"):
        g = int(np.argmin(load))
        out[i] = g
        load[g] += cost[i]
    return out


def deal(cond, sch, k, giant_arcs=None):
    """The GPU (``0 … k-1``) of each component, and which components are giants (module
    docstring): a phase's light pieces and heavy components each dealt by LPT on their cost.
    ``giant_arcs`` None: no giants.  Kept on ``cond`` per schedule, ``k`` and ``giant_arcs``.

    Returns
    -------
    owner : int32 array, C
    giant : bool array, C
    """
    kept = cond.__dict__.setdefault("_gpu_deals", {})
    key = (id(sch), int(k), giant_arcs)
    if key in kept and kept[key][0] is sch:
        return kept[key][1]
    C = cond.num_components
    owner = np.zeros(C, np.int32)
    giant = np.zeros(C, bool)
    if k > 1 and C:
        sizes = np.diff(cond.comp_offsets)
        ein = np.diff(cond.ein_offsets[cond.comp_offsets])
        cost = (cond.comp_arcs + ein + sizes).astype(np.float64)
        unit = 2 * sch.phase + sch.heavy
        if giant_arcs is not None:
            ucost = np.bincount(unit, weights=cost)
            giant = sch.heavy & (cost > ucost[unit] / k) & (cond.comp_arcs >= giant_arcs)
        root = _pieces(sch.eout_offsets, sch.eout_comp.astype(np.int64), C)
        # an item: a light piece (its root) or a heavy component (itself); one unit each
        item = np.where(sch.heavy, np.arange(C), root)
        dealt = ~giant
        items, inv = np.unique(item[dealt], return_inverse=True)
        icost = np.bincount(inv, weights=cost[dealt])
        iunit = unit[items]
        ibin = np.empty(items.size, np.int32)
        for u in np.unique(iunit):
            sel = np.flatnonzero(iunit == u)
            ibin[sel] = _lpt(sel, icost[sel], k, np.zeros(k))
        owner[dealt] = ibin[inv]
    kept[key] = (sch, (owner, giant))
    return owner, giant


class _Restricted(SccSchedule):
    """A schedule's view for one GPU (:func:`restricted`): the attributes of
    :class:`~.scc_schedule.SccSchedule`, its queues and heavy lists holding only
    that GPU's components."""

    def __init__(self, sch):  # a copy of the whole schedule's attributes, not a new schedule
        self.__dict__.update(sch.__dict__)


def restricted(cond, sch, owner, g, giant=None):
    """The schedule ``sch`` restricted to the components ``owner`` deals to GPU ``g``: each
    phase's queue holds its light components there (the ready ones first), its heavy lists its
    heavy components there but the ``giant`` ones; the predecessor counts and same-phase arcs are
    the whole schedule's (a light piece lies on one GPU, so they stay inside it)."""
    r = _Restricted(sch)
    mine = owner == g
    if giant is not None:
        mine = mine & ~giant
    r.queues(~sch.heavy & mine)
    r.heavy_lists(cond, sch.heavy_comps[mine[sch.heavy_comps]])  # sorted by phase, as before
    r.gpu = int(g)
    return r


def crossings(cond, sch, owner):
    """What each unit's end sends between GPUs: ``{(unit, g, h): positions}``, the sorted positions
    of GPU ``g``'s vertices finished in ``unit`` (``2 × phase + heavy``) with an arc into a
    component dealt to GPU ``h`` ≠ ``g``."""
    n = int(cond.comp_offsets[-1])
    C = cond.num_components
    comp_of_pos = np.repeat(np.arange(C, dtype=np.int64), np.diff(cond.comp_offsets))
    tgt = np.repeat(np.arange(n, dtype=np.int64), np.diff(cond.ein_offsets))
    src = cond.ein_sources.astype(np.int64)
    gs, gt = owner[comp_of_pos[src]], owner[comp_of_pos[tgt]]
    x = gs != gt
    src, gs, gt = src[x], gs[x].astype(np.int64), gt[x].astype(np.int64)
    k = int(owner.max()) + 1 if owner.size else 1
    unit = (2 * sch.phase + sch.heavy)[comp_of_pos[src]]
    code = np.unique(((unit * k + gs) * k + gt) * max(n, 1) + src)
    out = {}
    if code.size:
        pos = code % max(n, 1)
        rest = code // max(n, 1)
        keys, starts = np.unique(rest, return_index=True)
        ends = np.append(starts[1:], code.size)
        for key, a, b in zip(keys.tolist(), starts.tolist(), ends.tolist()):
            u, gg, hh = key // (k * k), (key // k) % k, key % k
            out[(u, gg, hh)] = pos[a:b].astype(np.int64)
    return out
