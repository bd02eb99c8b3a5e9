"""The schedule of the SCC engine on one GPU (:mod:`digraph.dispatch.engines.scc.gpu`): which
components run in the persistent queue kernel and which over the whole GPU, and in what phases.

A component is *heavy* when it has at least ``heavy_arcs`` arcs inside or more vertices than a
block holds (``light_size``); heavy components run in rounds over the whole GPU, light ones a
block each from a device-side ready queue (:mod:`digraph.smx.cuda.scc`).  The two alternate in
phases ``P0, G0, P1, G1, …``: a component's *phase* is the largest number of heavy components on
a chain of components above it (itself not counted), so a light component of phase ``k`` runs in
``Pk`` after every heavy component it depends on (phases below ``k``, run in ``G0 … G(k−1)``),
and a heavy one in ``Gk`` after ``Pk``.  Inside ``Pk`` a light component is queued when its last
predecessor of ``Pk`` finishes: ``pending`` counts those arcs, ``eout_*`` lists each component's
arcs to light components of its own phase (one entry per arc: a successor is queued when its
count reaches 0).

Built in O(n + m) on the host from the :class:`~.condensation.Condensation`, kept
on it per ``(heavy_arcs, light_size)``.  :func:`swept_in_arcs` lists the arcs inside the swept
light components by target (the sweeps' gathers), :func:`hubs_by_component` the positions a warp
serves, :func:`split_by_degree` the heavy vertices a block pushes.
"""

import numpy as np
from numba import njit

__all__ = ["SccSchedule", "scc_schedule", "swept_in_arcs", "heavy_in_arcs", "hubs_by_component",
           "split_by_degree"]


@njit(cache=True, nogil=True)
def _phases(comp_offsets, ein_offsets, comp_of_pos, ein_sources, heavy):
    """Phase of each component (components in topological order)."""
    C = comp_offsets.size - 1
    hd = np.zeros(C, np.int64)
    for c in range(C):
        h = 0
        for k in range(ein_offsets[comp_offsets[c]], ein_offsets[comp_offsets[c + 1]]):
            s = comp_of_pos[ein_sources[k]]
            v = hd[s] + (1 if heavy[s] else 0)
            if v > h:
                h = v
        hd[c] = h
    return hd


@njit(cache=True, nogil=True)
def _same_phase_arcs(comp_offsets, ein_offsets, comp_of_pos, ein_sources, heavy, hd):
    """(pending arcs of each light component, successor CSR by source component) over the arcs
    between light components of one phase."""
    C = comp_offsets.size - 1
    pending = np.zeros(C, np.int32)
    count = np.zeros(C + 1, np.int64)
    for c in range(C):
        if heavy[c]:
            continue
        for k in range(ein_offsets[comp_offsets[c]], ein_offsets[comp_offsets[c + 1]]):
            s = comp_of_pos[ein_sources[k]]
            if not heavy[s] and hd[s] == hd[c]:
                pending[c] += 1
                count[s + 1] += 1
    for c in range(C):
        count[c + 1] += count[c]
    fill = count[:-1].copy()
    succ = np.empty(count[C], np.int32)
    for c in range(C):
        if heavy[c]:
            continue
        for k in range(ein_offsets[comp_offsets[c]], ein_offsets[comp_offsets[c + 1]]):
            s = comp_of_pos[ein_sources[k]]
            if not heavy[s] and hd[s] == hd[c]:
                succ[fill[s]] = c
                fill[s] += 1
    return pending, count, succ


class SccSchedule:
    """Phases of the GPU SCC engine (module docstring).

    Attributes
    ----------
    heavy : bool array, C
        Components run over the whole GPU.
    phase : int64 array, C
        Phase of each component.
    num_phases : int
    light_count : int64 array, P
        Light components of each phase (the queue's length in that phase).
    queue0 : int32 array
        The phases' queues one after another (``queue_offsets``), each starting with the light
        components that have no predecessor in their phase, then -1.
    queue_offsets, first_count : int64 arrays, P+1 and P
        Where each phase's queue starts; how many are queued before its launch.
    pending : int32 array, C
        Arcs from light components of the same phase into each light component.
    eout_offsets, eout_comp : int64 array C+1, int32 array
        Each component's arcs to light components of its phase, by target component.
    heavy_offsets, heavy_positions : int64 array P+1, int32 array
        Positions of the heavy components of each phase, one after another.
    heavy_arcs : int64 array, P
        Arcs inside the heavy components of each phase.
    heavy_in_arcs : int
        Arcs into the heavy components from other components (each pulled once a run).
    """

    def __init__(self, cond, heavy_arcs, light_size):
        sizes = np.diff(cond.comp_offsets)
        C = cond.num_components
        comp_of_pos = np.repeat(np.arange(C, dtype=np.int32), sizes)
        heavy = (cond.comp_arcs >= heavy_arcs) | (sizes > light_size)
        hd = _phases(cond.comp_offsets, cond.ein_offsets, comp_of_pos, cond.ein_sources, heavy)
        P = int(hd.max()) + 1 if C else 0
        self.heavy, self.phase, self.num_phases = heavy, hd, P
        self.pending, self.eout_offsets, self.eout_comp = _same_phase_arcs(
            cond.comp_offsets, cond.ein_offsets, comp_of_pos, cond.ein_sources, heavy, hd)
        self.queues(~heavy)
        hc = np.flatnonzero(heavy)
        self.heavy_lists(cond, hc[np.argsort(hd[hc], kind="stable")])

    def queues(self, light):
        """The phases' queues of the light components where ``light`` (``light_count``,
        ``queue_offsets``, ``first_count``, ``queue0``)."""
        hd, P = self.phase, self.num_phases
        self.light_count = np.bincount(hd[light], minlength=P).astype(np.int64)
        self.queue_offsets = np.zeros(P + 1, np.int64)
        np.cumsum(self.light_count, out=self.queue_offsets[1:])
        ready = np.flatnonzero(light & (self.pending == 0))
        ready = ready[np.argsort(hd[ready], kind="stable")]
        self.first_count = np.bincount(hd[ready], minlength=P).astype(np.int64)
        self.queue0 = np.full(int(self.queue_offsets[-1]), -1, np.int32)
        starts = np.repeat(self.queue_offsets[:-1], self.first_count)
        within = np.arange(ready.size) - np.repeat(np.cumsum(self.first_count) - self.first_count,
                                                   self.first_count)
        self.queue0[starts + within] = ready

    def heavy_lists(self, cond, hc):
        """The heavy lists of the components ``hc`` (sorted by phase): ``heavy_positions``,
        ``heavy_offsets``, ``heavy_comps``, ``heavy_arcs``, ``heavy_in_arcs``."""
        hd, P = self.phase, self.num_phases
        lens = np.diff(cond.comp_offsets)[hc]
        self.heavy_positions = (np.repeat(cond.comp_offsets[hc] - np.cumsum(lens) + lens, lens)
                                + np.arange(int(lens.sum()))).astype(np.int32)
        per = np.bincount(hd[hc], weights=lens, minlength=P).astype(np.int64)
        self.heavy_offsets = np.zeros(P + 1, np.int64)
        np.cumsum(per, out=self.heavy_offsets[1:])
        self.heavy_comps = hc
        self.heavy_arcs = np.bincount(hd[hc], weights=cond.comp_arcs[hc],
                                      minlength=P).astype(np.int64)
        # a component's positions are consecutive: its in-arcs from outside are one range
        self.heavy_in_arcs = int((cond.ein_offsets[cond.comp_offsets[hc + 1]]
                                  - cond.ein_offsets[cond.comp_offsets[hc]]).sum())


def scc_schedule(cond, heavy_arcs, light_size):
    """The :class:`SccSchedule` of ``cond``, kept on it per ``(heavy_arcs, light_size)``."""
    kept = cond.__dict__.setdefault("_gpu_schedules", {})
    key = (int(heavy_arcs), int(light_size))
    if key not in kept:
        kept[key] = SccSchedule(cond, heavy_arcs, light_size)
    return kept[key]


def swept_in_arcs(cond, sch, direct_size, hub):
    """The arcs inside the light components that the queue kernel sweeps (more than
    ``direct_size`` vertices, arcs inside), by target position, for the sweeps' gathers.

    Returns
    -------
    iin_offsets : int64 array, n+1
        Position ``v``'s arcs are ``iin_offsets[v]:iin_offsets[v+1]`` (none outside swept
        components).
    iin_sources : int32 array
        Their source positions.
    iin_arcs : int64 array
        Their index in ``cond.iout_*`` (for per-arc coefficients).
    hub_offsets : int64 array, C+1, and hubs : int32 array
        Per component, the positions with more than ``hub`` such arcs (a warp gathers each).
    """
    sizes = np.diff(cond.comp_offsets)
    swept = np.repeat(~sch.heavy & (sizes > direct_size) & (cond.comp_arcs > 0), sizes)
    arcs = _in_arcs(cond, swept)
    return arcs + hubs_by_component(arcs[0], hub, cond.comp_offsets)


def heavy_in_arcs(cond, sch, phases):
    """The arcs inside the heavy components of the given ``phases`` by target position (the
    Anderson rounds' gathers): (offsets int64 n+1, source positions int32, index in
    ``cond.iout_*`` int64), as :func:`swept_in_arcs`; the other positions' rows are empty."""
    comps = sch.heavy & np.isin(sch.phase, np.asarray(phases, np.int64))
    return _in_arcs(cond, np.repeat(comps, np.diff(cond.comp_offsets)))


def _in_arcs(cond, keep):
    """The arcs inside components into the positions where ``keep``, by target position."""
    n = int(cond.comp_offsets[-1])
    tgt = cond.iout_targets
    e = np.flatnonzero(keep[tgt]) if tgt.size else np.zeros(0, np.int64)
    e = e[np.argsort(tgt[e], kind="stable")].astype(np.int64)
    src = np.repeat(np.arange(n, dtype=np.int32), np.diff(cond.iout_offsets))[e]
    off = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(tgt[e], minlength=n), out=off[1:])
    return off, src, e


def hubs_by_component(offsets, hub, comp_offsets):
    """(hub_offsets int64 C+1, hubs int32): the positions whose rows of the CSR ``offsets`` hold
    more than ``hub`` entries, listed by component (``hubs[hub_offsets[c]:hub_offsets[c+1]]``
    lie in component ``c``: positions are grouped by component)."""
    hubs = np.flatnonzero(np.diff(offsets) > hub).astype(np.int32)
    return np.searchsorted(hubs, comp_offsets).astype(np.int64), hubs


def split_by_degree(positions, offsets, degree, limit):
    """Each slice ``positions[offsets[k]:offsets[k+1]]`` split by ``degree`` (per position):
    (small_offsets, small, big_offsets, big), ``small`` the positions of at most ``limit``,
    ``big`` the others, each keeping its order and grouped by slice as ``positions`` is.

    The heavy rounds push a small vertex with a few threads and a big one with a whole block: a
    round lasts as long as its longest chain of pushes, which one vertex of many out-arcs pushed
    by a few threads sets.  Measured: docs/history/benchmarks-notebook.md, "The heavy rounds
    profiled"."""
    positions = np.asarray(positions)
    big = np.asarray(degree)[positions] > limit
    k = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
    big_offsets = np.zeros(offsets.size, np.int64)
    np.cumsum(np.bincount(k[big], minlength=offsets.size - 1), out=big_offsets[1:])
    return offsets - big_offsets, positions[~big], big_offsets, positions[big]
