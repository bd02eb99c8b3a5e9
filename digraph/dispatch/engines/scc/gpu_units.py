"""One GPU's launches of the SCC engine's units (:mod:`digraph.dispatch.engines.scc.gpu`): a
phase's light components in the persistent queue kernel, a phase's heavy group in rounds over the
whole GPU, and what the counters say once they are done.  The one-GPU engine runs every unit on
its GPU; the DAG dispatcher over several GPUs (:mod:`digraph.dispatch.engines.scc.gpus`) runs
on each GPU the units' components dealt to it (a schedule restricted by
:func:`digraph.paths.scc_deal.restricted`).
"""

import numpy as np

from ... import driver
from .gpu_grid import heavy_grid, resident
from .gpu_layout import slice

__all__ = []

TRACE_ROUNDS = 4096
"""Rounds of a heavy group that :attr:`GpuSccSettings.trace_heavy` records."""
CTL = 8
"""Control words a heavy group (``ctl`` of :mod:`digraph.smx.cuda.scc_heavy`: the rounds' masses,
the outcome, the rounds run)."""


class Units:
    """The launches of one GPU's units for a run: ``be`` its backend, ``d`` its device layout
    (:func:`~.gpu_layout._device_layout` of ``sch``), ``w`` its run
    arrays, ``anderson`` the phases whose heavy group runs Anderson rounds."""

    def __init__(self, be, settings, cond, sch, d, w, anderson, linf, prio, max_iter):
        from ....smx.cuda import scc as K
        self.be, self.settings, self.cond, self.sch, self.d, self.w = be, settings, cond, sch, d, w
        self.anderson, self.linf, self.prio, self.max_iter = anderson, linf, prio, max_iter
        xp = be.xp
        self.trace = (xp.zeros(K.TRACE * max(cond.num_components, 1), np.int64)
                      if settings.trace_light else w["cnt"][:1])  # one entry: off
        self.groups = []  # (phase, rounds: None when the control words say)
        self.heavy_mem = []  # the Anderson memory of each heavy group's rounds (0: plain)
        self.heavy_trace = []
        self.done_rounds = 0
        self.capped = False

    def has(self, k, heavy):
        """Whether unit ``(k, heavy)`` has components on this GPU."""
        sch = self.sch
        return bool(sch.heavy_offsets[k + 1] > sch.heavy_offsets[k] if heavy
                    else sch.light_count[k] > 0)

    def light(self, k, per_arc, vmax):
        """Phase ``k``'s light components, a block each from the device-side ready queue."""
        from ....smx.cuda import scc as K
        from ....smx.cuda import scc_blocks
        be, d, w, sch, s = self.be, self.d, self.w, self.sch, self.settings
        count = int(sch.light_count[k])
        be.launch(K.scc_light_phase, min(resident(be, s), count), scc_blocks.QB, w["queue"],
                  int(sch.queue_offsets[k]), w["ctl"], 2 * k, count, d["comp_offsets"],
                  d["comp_arcs"], d["ein_off"], d["ein_src"], w["ecoef"],
                  d["iout_off"], d["iout_tgt"], w["icoef"], w["has_coef"], w["vscale"], w["b"],
                  w["x"], per_arc, vmax, self.linf, self.prio, int(s.light_anderson),
                  self.max_iter, d["eout_off"], d["eout_comp"], w["pending"], w["comp_sweeps"],
                  w["cnt"], d["hub_off"], d["hub_pos"], d["iin_off"], d["iin_src"], d["iin_arc"],
                  d["ihub_off"], d["ihub_pos"], self.trace)

    def heavy(self, k, per_arc, vmax):
        """Phase ``k``'s heavy group: its in-arcs from outside pulled once, then its rounds."""
        from ....smx.cuda import scc_blocks
        from ....smx.cuda import scc_heavy
        from ....smx.cuda import scc_heavy_anderson as HA
        be, d, w, sch, settings = self.be, self.d, self.w, self.sch, self.settings
        xp = be.xp
        icoef, has_coef, vscale, x, r, cnt = (w["icoef"], w["has_coef"], w["vscale"], w["x"],
                                              w["r"], w["cnt"])
        h0, h1 = int(sch.heavy_offsets[k]), int(sch.heavy_offsets[k + 1])
        s0, s1 = int(d["small_off"][k]), int(d["small_off"][k + 1])
        b0, b1 = int(d["big_off"][k]), int(d["big_off"][k + 1])
        if k not in w["pos"]:  # slices of a phase, kept: the prepared rounds read them
            w["pos"][k] = (d["heavy_pos"][h0:h1], slice(d["heavy_small"], s0, s1),
                           slice(d["heavy_big"], b0, b1), w["ctlh"][CTL * k:CTL * (k + 1)],
                           w["bar"][k:k + 1], w["sums"][HA.SUMS * k:HA.SUMS * (k + 1)])
        pos, small, big, ctl_k, bar_k, sums_k = w["pos"][k]
        nsmall, nbig = s1 - s0, b1 - b0
        for a in w["pos"][k]:
            be.keep(a)
        arcs = int(sch.heavy_arcs[k])
        be.launch(scc_heavy.scc_pull_list, be.grid(h1 - h0), be.block, pos, d["ein_off"],
                  d["ein_src"], w["ecoef"], has_coef, vscale, w["b"], x, r)
        budget_g = per_arc * arcs
        threads = max(nsmall * scc_blocks.G, nbig * scc_heavy.TB)
        self.heavy_mem.append(int(settings.heavy_anderson) if k in self.anderson else 0)
        if k in self.anderson:  # Anderson-accelerated rounds in one launch, gathers by target
            gs0, gs1 = int(d["gs_off"][k]), int(d["gs_off"][k + 1])
            gb0, gb1 = int(d["gb_off"][k]), int(d["gb_off"][k + 1])
            gkey = ("g", k, d["hin_for"])  # slices of the gathers made for those groups
            if gkey not in w["pos"]:
                stale = [q for q in w["pos"] if isinstance(q, tuple) and q[:2] == gkey[:2]]
                for q in stale:  # slices of gathers made for other groups
                    del w["pos"][q]
                w["pos"][gkey] = (slice(d["gsmall"], gs0, gs1), slice(d["gbig"], gb0, gb1))
            gsmall, gbig = w["pos"][gkey]
            be.keep(gsmall)
            be.keep(gbig)
            be.launch(HA.scc_heavy_anderson,
                      heavy_grid(be, settings,
                                 max((gs1 - gs0) * scc_blocks.G, (gb1 - gb0) * scc_heavy.TB),
                                 HA.scc_heavy_anderson), scc_heavy.TB,
                      gsmall, gs1 - gs0, gbig, gb1 - gb0, d["hin_off"], d["hin_src"],
                      d["hin_arc"], icoef, has_coef, vscale, x, r, w["dpos"], w["hist"],
                      sums_k, ctl_k, bar_k, budget_g, arcs, int(settings.heavy_anderson),
                      self.max_iter, cnt)
            self.groups.append((k, None))
            return
        hgrid = heavy_grid(be, settings, threads)
        if settings.heavy_one_launch:  # no synchronisation: the outcome is read at the end
            rtrace = (xp.zeros(3 * (TRACE_ROUNDS + 1), np.int64) if settings.trace_heavy
                      else cnt[:1])  # one entry: off
            be.launch(scc_heavy.scc_heavy_rounds, hgrid, scc_heavy.TB, small, nsmall, big, nbig,
                      d["iout_off"], d["iout_tgt"], icoef, has_coef, vscale, x, r, ctl_k,
                      bar_k, budget_g, arcs, vmax, self.linf, self.prio, self.max_iter, cnt,
                      rtrace)
            self.groups.append((k, None))
            if settings.trace_heavy:
                self.heavy_trace.append(rtrace)
            return
        def queue(q0):
            for q in range(q0, q0 + settings.rounds_per_check):
                be.launch(scc_heavy.scc_round, hgrid, scc_heavy.TB, q, small, nsmall, big, nbig,
                          d["iout_off"], d["iout_tgt"], icoef, has_coef, vscale, x,
                          r, ctl_k, budget_g, arcs, vmax, self.linf, self.prio, cnt,
                          tag=("scc-round", k))

        def done(q):
            return be.get(ctl_k[6:7])[0] > 0  # a round found the group done

        _, finished = driver.queued(queue, done, per_check=settings.rounds_per_check,
                                    max_rounds=self.max_iter)
        self.capped = self.capped or not finished
        ran = int(be.get(cnt[scc_blocks.ROUNDS:scc_blocks.ROUNDS + 1])[0]) - self.done_rounds
        self.done_rounds += ran
        self.groups.append((k, ran))

    def outcome(self):
        """(counters, sweeps of each component, rounds of each heavy group run, capped) once the
        GPU is done; the heavy components' sweeps are their group's rounds."""
        from ....smx.cuda import scc_blocks
        be, w, sch = self.be, self.w, self.sch
        c = be.get(w["cnt"])
        sweeps = be.get(w["comp_sweeps"])[:self.cond.num_components]
        hctl = be.get(w["ctlh"]).reshape(-1, CTL)
        heavy_rounds = []
        capped = self.capped
        for k, ran in self.groups:  # the one-launch groups wrote their rounds and outcome
            if ran is None:
                ran = int(hctl[k, 7])
                capped = capped or bool(hctl[k, 6] < 0)
            heavy_rounds.append(ran)
            sweeps[sch.heavy_comps[sch.phase[sch.heavy_comps] == k]] = ran
        return c, sweeps, heavy_rounds, capped or bool(c[scc_blocks.CAPPED])


def record(stats, cond, sch, c, sweeps, heavy_rounds, heavy_mem):
    """The SCC engine's counters in ``stats`` (``c``: :mod:`digraph.smx.cuda.scc`'s counters,
    ``sweeps`` per component, ``heavy_rounds`` per heavy group run; ``sch`` the whole
    schedule)."""
    from ....smx.cuda import scc_blocks
    L_ = cond.num_levels
    layer_rounds = (np.maximum.reduceat(sweeps, cond.level_offsets[:-1]) if L_
                    else np.zeros(0, np.int64))
    stats["rounds"] += int(layer_rounds.sum())
    stats["arc_updates"] += int(c[scc_blocks.PULLS] + c[scc_blocks.PUSHES]) + sch.heavy_in_arcs
    stats["vertex_updates"] += int(c[scc_blocks.VERTEX_PUSHES])
    stats["sweeps"] = int(sweeps.sum())
    stats["scc_vertices"] = cond.num_components
    stats["scc_ran"] = int(c[scc_blocks.RAN]) + int(sch.heavy.sum())
    stats["scc_ran_once"] = int(c[scc_blocks.ONCE])
    stats["layers"] = L_
    stats["layer_rounds"] = layer_rounds.tolist()
    stats["scc_phases"] = sch.num_phases
    stats["scc_heavy"] = int(sch.heavy.sum())
    stats["heavy_rounds"] = heavy_rounds
    stats["scc_heavy_anderson"] = heavy_mem
    stats["scc_direct"] = int(c[scc_blocks.DIRECT])
    stats["scc_sweep_reads"] = int(c[scc_blocks.GATHERED])
