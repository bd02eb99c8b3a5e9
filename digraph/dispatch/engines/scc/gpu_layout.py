"""The GPU SCC engine's device layout (:mod:`digraph.dispatch.engines.scc.gpu`): the
condensation and schedule uploaded once per graph, device and schedule (kept in the graph's
residency, kind ``"cuda-scc"``), and the system's per-arc coefficients in position space.
"""

import numpy as np

from ....paths.scc_schedule import (heavy_in_arcs, hubs_by_component, split_by_degree,
                                    swept_in_arcs)
from ...systems import linear_factors
from ...runtime.cuda.residency import residency

__all__ = []


def heavy_gathers(be, d, cond, sch, phases):
    """The Anderson rounds' gathers (:mod:`digraph.smx.cuda.scc_heavy_anderson`) for the heavy
    groups of ``phases``, kept in the layout ``d`` and made again only when a run asks for a
    group they lack: the groups' inside arcs by target (``hin_off``, ``hin_src``, ``hin_arc``;
    the other groups' rows empty, so a graph whose large groups keep the plain rounds does not
    sort and upload their arcs) and each group's positions split by their in-arcs inside
    (``gs_off``, ``gsmall``: a few lanes each; ``gb_off``, ``gbig``: a block each).
    ``d["hin_for"]``: the phases they cover."""
    from ....smx.cuda.scc_heavy_anderson import BIG_IN
    if not set(phases) <= set(d.get("hin_for", ())):
        off, src, arc = heavy_in_arcs(cond, sch, phases)
        so, small, bo, big = split_by_degree(sch.heavy_positions, sch.heavy_offsets,
                                             np.diff(off), BIG_IN)
        d.update(hin_off=be.put(off), hin_src=be.put(_nonempty(src)),
                 hin_arc=be.put(_nonempty(arc)), gs_off=so, gsmall=be.put(_nonempty(small)),
                 gb_off=bo, gbig=be.put(_nonempty(big)), hin_for=tuple(phases))
        for name in ("hin_off", "hin_src", "hin_arc", "gsmall", "gbig"):
            be.keep(d[name])
    return d


def device_layout(be, graph, cond, sch, heavy_arcs, light_size, tag=()):
    """The condensation and schedule on the GPU (uploaded once per graph, device and schedule;
    kept in the graph's residency, kind ``"cuda-scc"``).  ``tag``: what else tells the schedule
    apart (a GPU's share of the DAG dispatcher's deal,
    :func:`digraph.paths.scc_deal.restricted`)."""
    from ....smx.cuda import scc_blocks
    from ....smx.cuda import scc_heavy
    res = residency(graph)
    key = (be.device_id, be.sim, int(heavy_arcs), int(light_size)) + tuple(tag)
    d = res.peek("cuda-scc", key)
    if d is None:
        P, n = sch.num_phases, graph.num_vertices
        unit = np.repeat((2 * sch.phase + sch.heavy).astype(np.int32),
                         np.diff(cond.comp_offsets))
        inv = np.empty(n, np.int64)  # the answer in the graph's order is x[inv]
        inv[cond.order] = np.arange(n, dtype=np.int64)
        d = {"order": be.put(cond.order, np.int64), "inv": be.put(inv),
             "comp_offsets": be.put(cond.comp_offsets, np.int64),
             "comp_arcs": be.put(cond.comp_arcs, np.int64),
             "iout_off": be.put(cond.iout_offsets, np.int64),
             "iout_tgt": be.put(cond.iout_targets, np.int32),
             "ein_off": be.put(cond.ein_offsets, np.int64),
             "ein_src": be.put(cond.ein_sources, np.int32),
             "queue0": be.put(_nonempty(sch.queue0, -1)),
             "pending0": be.put(sch.pending),
             "eout_off": be.put(sch.eout_offsets, np.int64),
             "eout_comp": be.put(_nonempty(sch.eout_comp)),
             "heavy_pos": be.put(_nonempty(sch.heavy_positions)),
             "unit": be.put(unit), "units": 2 * max(P, 1)}
        so, small, bo, big = split_by_degree(sch.heavy_positions, sch.heavy_offsets,
                                             np.diff(cond.iout_offsets), scc_heavy.BIG_OUT)
        d.update(small_off=so, heavy_small=be.put(_nonempty(small)), big_off=bo,
                 heavy_big=be.put(_nonempty(big)))
        hub_off, hubs = hubs_by_component(cond.ein_offsets, scc_blocks.HUB_PULL, cond.comp_offsets)
        d["hub_off"], d["hub_pos"] = be.put(hub_off), be.put(_nonempty(hubs))
        # each heavy group's largest in-degree inside (its busiest target of pushes)
        inside_in = np.bincount(cond.iout_targets, minlength=graph.num_vertices)
        hp, ho = sch.heavy_positions, sch.heavy_offsets
        d["heavy_in_max"] = [int(inside_in[hp[ho[k]:ho[k + 1]]].max(initial=0)) for k in range(P)]
        off, src, arc, ihub_off, ihubs = swept_in_arcs(cond, sch, scc_blocks.DK,
                                                       scc_blocks.HUB_PUSH)
        d.update(iin_off=be.put(off), iin_src=be.put(_nonempty(src)),
                 iin_arc=be.put(_nonempty(arc)), ihub_off=be.put(ihub_off),
                 ihub_pos=be.put(_nonempty(ihubs)))
        res.put("cuda-scc", key, d)
    else:
        be.keep_all(d)
    return d


def _nonempty(a, fill=0):
    """``a``, or one ``fill`` entry of its dtype when it is empty (a kernel argument)."""
    return a if a.size else np.full(1, fill, a.dtype)


def slice(a, lo, hi):
    """``a[lo:hi]`` of a device array, or its first entry when empty (a kernel argument whose
    count is passed beside it)."""
    return a[lo:hi] if hi > lo else a[:1]


def unit_coefficients(be, graph, system, cond, has_arc):
    """(has_coef, icoef, ecoef) on the GPU: per-arc coefficients when the system has arc or
    target factors, else placeholders (the kernels then use ``vscale``)."""
    from ....smx.cpu import scc as cpu_scc
    if not (has_arc or system.dst_scale is not None):
        z = be.keep(be.xp.zeros(1, np.float64))
        return False, z, z
    src, dst, has_arc, arc = linear_factors(graph, system)
    icoef = np.empty(cond.iout_targets.size, np.float64)
    ecoef = np.empty(cond.ein_sources.size, np.float64)
    cpu_scc.coefficients(cond.order, cond.iout_offsets, cond.iout_targets, cond.iout_arcs,
                         cond.ein_offsets, cond.ein_sources, cond.ein_arcs, src,
                         arc if has_arc else src, has_arc, dst, icoef, ecoef)
    return True, be.put(_nonempty(icoef)), be.put(_nonempty(ecoef))
