"""Where the GPU SCC engine's light phases spend their time (issue 18 item 1), from a trace the
queue kernel writes (``GpuSccSettings(trace_light=True)``, ``stats["scc_light_trace"]``: per
component the global timer when its block took a queue slot, got the component, wrote its
values and queued its successors).

For each light phase it prints: the components, the blocks, the phase's span; each component's
wait for its slot, its work (pull, solve, fence) and its publishing (successors' counters and
queue); how long a component sat ready (its last same-phase predecessor had published) before a
block got it; the share of block time spent working; and the critical path through the phase's
DAG with each component's measured cost, the least the phase could take with as many blocks as
it likes.  A span far above the critical path with blocks mostly waiting points at the queue;
a span near it points at the components' own cost.

    python benchmarks/profile_gpu_scc_light.py --graphs cit20-0 cnr-2000 --json out.json
"""

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_gpu import load_graph  # noqa: E402


def _critical_path(comps, cost, eout_off, eout_comp, level_of):
    """Longest chain of ``cost`` through the same-phase arcs among ``comps`` (ns)."""
    finish = np.zeros(level_of.size, np.int64)
    ready = np.zeros(level_of.size, np.int64)
    lv = level_of[comps]
    for L in np.unique(lv):
        cs = comps[lv == L]
        finish[cs] = ready[cs] + cost[cs]
        cnt = eout_off[cs + 1] - eout_off[cs]
        total = int(cnt.sum())
        if total:  # the arcs of cs, one run per component
            idx = np.repeat(eout_off[cs] - (np.cumsum(cnt) - cnt), cnt) + np.arange(total)
            np.maximum.at(ready, eout_comp[idx], np.repeat(finish[cs], cnt))
    return int(finish[comps].max()) if comps.size else 0


def _predecessors(eo, ec, ncomp):
    """(offsets, sources): the same-phase arcs by target component."""
    src = np.repeat(np.arange(ncomp), np.diff(eo))[np.argsort(ec, kind="stable")]
    off = np.zeros(ncomp + 1, np.int64)
    np.cumsum(np.bincount(ec, minlength=ncomp), out=off[1:])
    return off, src


def _chain(cs, claim, got, pub, preds):
    """The chain that ended the phase, walked back from its last component through the
    predecessor that published last: its length, the time its components worked and the time
    between a predecessor's publishing and the next one's start (ms)."""
    roff, rs = preds
    c = int(cs[np.argmax(pub[cs])])
    chain = [c]
    while roff[c + 1] > roff[c]:
        ps = rs[roff[c]:roff[c + 1]]
        c = int(ps[np.argmax(pub[ps])])
        chain.append(c)
    chain = np.array(chain[::-1])
    return dict(length=int(chain.size), work_ms=round(float((pub - got)[chain].sum()) / 1e6, 3),
                gaps_ms=round(float((got[chain[1:]] - pub[chain[:-1]]).sum()) / 1e6, 3),
                start_ms=round(float(got[chain[0]] - claim[cs].min()) / 1e6, 3))


def analyse(tr, sch, cond):
    """Per light phase figures from a trace (rows of ``TRACE`` entries per component)."""
    claim, got, done, pub, slot, block, sm, sweeps = (tr[:, i] for i in range(8))
    traced = pub > 0
    ncomp = cond.num_components
    level_of = np.repeat(np.arange(cond.num_levels), np.diff(cond.level_offsets))
    eo, ec = np.asarray(sch.eout_offsets), np.asarray(sch.eout_comp).astype(np.int64)
    ready = np.zeros(ncomp, np.int64)
    cnt = np.diff(eo)
    src = np.repeat(np.arange(ncomp), cnt)
    np.maximum.at(ready, ec, pub[src])
    size = np.diff(cond.comp_offsets)
    ein_deg = np.diff(cond.ein_offsets)
    preds = _predecessors(eo, ec, ncomp)
    out = []
    # phases: components traced, grouped by the launch they ran in (a gap-free span of slots)
    order = np.argsort(claim[traced])
    ids = np.flatnonzero(traced)[order]
    if not ids.size:
        return out
    # a new launch begins where the slot numbering restarts at 0
    starts = np.flatnonzero(slot[ids] == 0)
    bounds = list(starts) + [ids.size]
    if bounds[0] != 0:
        bounds = [0] + bounds
    for i in range(len(bounds) - 1):
        cs = ids[bounds[i]:bounds[i + 1]]
        if not cs.size:
            continue
        t0, t1 = int(claim[cs].min()), int(pub[cs].max())
        work = pub[cs] - got[cs]
        cost = np.zeros(ncomp, np.int64)
        cost[cs] = pub[cs] - got[cs]
        blocks = np.unique(block[cs]).size
        rd = np.where(ready[cs] > 0, ready[cs], t0)
        sat = np.maximum(got[cs] - np.maximum(rd, claim[cs]), 0)
        single = size[cs] == 1
        cyc = cond.comp_arcs[cs] > 0
        out.append(dict(
            components=int(cs.size), singletons=int(single.sum()), cyclic=int(cyc.sum()),
            blocks=int(blocks), sms=int(np.unique(sm[cs]).size),
            span_ms=round((t1 - t0) / 1e6, 3),
            critical_path_ms=round(_critical_path(cs, cost, eo, ec, level_of) / 1e6, 3),
            busy_share=round(float(work.sum()) / max(blocks * (t1 - t0), 1), 3),
            wait_us_median=round(float(np.median(got[cs] - claim[cs])) / 1e3, 2),
            work_us=dict(
                median=round(float(np.median(done[cs] - got[cs])) / 1e3, 2),
                p99=round(float(np.percentile(done[cs] - got[cs], 99)) / 1e3, 2),
                singleton_median=round(float(np.median((done[cs] - got[cs])[single])) / 1e3, 2)
                if single.any() else None,
                cyclic_median=round(float(np.median((done[cs] - got[cs])[cyc])) / 1e3, 2)
                if cyc.any() else None,
                total_ms=round(float((done[cs] - got[cs]).sum()) / 1e6, 2)),
            publish_us_median=round(float(np.median(pub[cs] - done[cs])) / 1e3, 2),
            ready_to_got_us=dict(median=round(float(np.median(sat)) / 1e3, 2),
                                 p90=round(float(np.percentile(sat, 90)) / 1e3, 2)),
            finished_per_us=round(cs.size / max((t1 - t0) / 1e3, 1e-9), 2),
            chain=_chain(cs, claim, got, pub, preds),
            slowest=[dict(component=int(c), vertices=int(size[c]), arcs=int(cond.comp_arcs[c]),
                          in_arcs=int(ein_deg[cond.comp_offsets[c]:cond.comp_offsets[c + 1]].sum()),
                          sweeps=int(sweeps[c]), us=round((pub[c] - got[c]) / 1e3, 1))
                     for c in cs[np.argsort(work)[::-1][:5]]],
        ))
    return out


def main():
    from digraph.algorithms import PageRank
    from digraph.dispatch import gpu
    from digraph.dispatch.cuda.one_gpu.scc import GpuSccSettings
    from digraph.paths.condensation import condensation_for
    from digraph.paths.scc_schedule import scc_schedule
    from digraph.result import RunStats
    from digraph.smx import cuda_scc as K
    ap = argparse.ArgumentParser()
    ap.add_argument("--graphs", nargs="+", default=["cit20-0", "cnr-2000"])
    ap.add_argument("--blocks", nargs="+", type=int, default=[2])
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--warm", type=int, default=2)
    ap.add_argument("--json", default=None)
    ap.add_argument("--save", default=None,
                    help="a folder for the raw traces (GRAPH_bB.npy; GRAPH_bB_mM.npy with M given)")
    ap.add_argument("--light-anderson", nargs="+", type=int, default=[-1],
                    help="GpuSccSettings.light_anderson values (-1: the default)")
    args = ap.parse_args()
    rows = []
    for name in args.graphs:
        g, _ = load_graph(name)
        algo = PageRank()
        system = algo.prepare(g, **algo.bind(g, {}))
        cond, _ = condensation_for(g, "vertex")
        for blocks, la in ((b, m) for b in args.blocks for m in args.light_anderson):
            for tracing in (False, True):
                kw = dict(light_anderson=la) if la >= 0 else {}
                settings = GpuSccSettings(blocks_per_sm=blocks, trace_light=tracing, **kw)
                for _ in range(args.warm + 1):
                    st = RunStats.new()
                    gpu.solve(g, system, mode="scc", tol=args.tol, max_iter=10_000, stats=st,
                              scc_settings=settings)
                row = dict(graph=name, blocks=blocks, light_anderson=la, trace=tracing, phase_ms=st["scc_phase_ms"],
                           phases=st["scc_phases"], bound=st["error_bound"],
                           finished_by=st.get("finished_by"))
                if tracing:
                    sch = scc_schedule(cond, settings.heavy_arcs, K.SH)
                    tr = np.asarray(st["scc_light_trace"])
                    row["light"] = analyse(tr, sch, cond)
                    if args.save:
                        Path(args.save).mkdir(parents=True, exist_ok=True)
                        m = f"_m{la}" if la >= 0 else ""
                        np.save(Path(args.save) / f"{name}_b{blocks}{m}.npy", tr)
                rows.append(row)
                o = next(iter(K.scc_light_phase.overloads.values()))
                row["kernel"] = dict(regs=o.regs_per_thread, smem=o.shared_mem_per_block,
                                     local=o.local_mem_per_thread,
                                     resident=o.max_cooperative_grid_blocks(K.QB))
                print(json.dumps(row), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(dict(rows=rows), indent=1))


if __name__ == "__main__":
    main()
