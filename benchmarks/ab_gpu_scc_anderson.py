"""Interleaved A/B of the GPU SCC engine's Anderson acceleration (issue 18 item 1): ``mode="scc"``
with ``GpuSccSettings.light_anderson`` (the light components' sweeps,
:mod:`digraph.smx.cuda_scc_sweeps`) and ``heavy_anderson`` (the heavy rounds,
:mod:`digraph.smx.cuda_scc_heavy_anderson`), 0 for the soft priority's plain sweeps and rounds, in
rotated order within one process, so that the host's and the GPU's drift reach every variant
alike; medians of ``--repeat`` warm runs of the whole solve and of each phase
(``stats["scc_phase_ms"]``).  JSON lines.

    python benchmarks/ab_gpu_scc_anderson.py --graphs cnr-2000 dblp-2010 --memory 0 2 --repeat 15
    python benchmarks/ab_gpu_scc_anderson.py --variants 2:0 2:2 2:2:4 default  # light:heavy:blocks
"""

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_gpu import load_graph  # noqa: E402


def main():
    from digraph.algorithms import PageRank
    from digraph.dispatch import gpu
    from digraph.dispatch.cuda.one_gpu.scc import GpuSccSettings
    from digraph.result import RunStats
    ap = argparse.ArgumentParser()
    ap.add_argument("--graphs", nargs="+", default=["cnr-2000", "dblp-2010"])
    ap.add_argument("--memory", nargs="+", type=int, default=[0, 2],
                    help="light_anderson values (heavy_anderson the default)")
    ap.add_argument("--variants", nargs="+", default=None,
                    help="LIGHT[:HEAVY[:HEAVY_BLOCKS_PER_SM]] (a heavy memory in every group, "
                         "whatever its arcs) or 'default', instead of --memory")
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()
    for name in args.graphs:
        g, _ = load_graph(name)
        algo = PageRank()
        system = algo.prepare(g, **algo.bind(g, {}))
        names = args.variants or [str(m) for m in args.memory]
        variants = []
        for v in names:  # LIGHT[:HEAVY[:HEAVY_BLOCKS]]; a HEAVY memory runs in every group
            if v == "default":
                variants.append(GpuSccSettings())
                continue
            parts = [int(p) for p in v.split(":")]
            kw = dict(light_anderson=parts[0])
            if len(parts) > 1:
                kw.update(heavy_anderson=parts[1], heavy_anderson_arcs=1 << 62,
                          heavy_anderson_in=1 << 62)
            if len(parts) > 2:
                kw["heavy_blocks_per_sm"] = parts[2]
            variants.append(GpuSccSettings(**kw))
        times = {m: [] for m in names}
        phases = {m: [] for m in names}
        last = {}
        for i in range(args.repeat + 2):  # two warm-up rounds
            k = i % len(variants)
            for m, settings in zip(names[k:] + names[:k], variants[k:] + variants[:k]):
                st = RunStats.new()
                t0 = time.perf_counter()
                gpu.solve(g, system, mode="scc", tol=args.tol, max_iter=10_000, stats=st,
                          scc_settings=settings)
                dt = time.perf_counter() - t0
                if i >= 2:
                    times[m].append(dt)
                    phases[m].append(st["scc_phase_ms"])
                last[m] = st
        for m in names:
            st = last[m]
            print(json.dumps(dict(
                graph=name, variant=m, heavy_rounds=st["heavy_rounds"],
                heavy_anderson=st["scc_heavy_anderson"], time_ms=round(statistics.median(times[m]) * 1e3, 2),
                time_ms_range=[round(min(times[m]) * 1e3, 2), round(max(times[m]) * 1e3, 2)],
                phase_ms=np.median(np.array(phases[m]), axis=0).round(3).tolist(),
                sweeps=int(st["sweeps"]), arcs=int(st["arc_updates"]),
                bound=st["error_bound"], finished_by=st.get("finished_by"))), flush=True)


if __name__ == "__main__":
    main()
