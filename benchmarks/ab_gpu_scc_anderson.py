"""Interleaved A/B of the GPU SCC engine's light sweeps (issue 18 item 1): ``mode="scc"`` with
``GpuSccSettings.light_anderson`` 0 (the soft priority's sweeps) and 1 / 2 (Anderson-accelerated
sweeps, :mod:`digraph.smx.cuda_scc_sweeps`), in rotated order within one process, so that the
host's and the GPU's drift reach every variant alike; medians of ``--repeat`` warm runs of the
whole solve and of each phase (``stats["scc_phase_ms"]``).  JSON lines.

    python benchmarks/ab_gpu_scc_anderson.py --graphs cnr-2000 dblp-2010 --memory 0 2 --repeat 15
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
    ap.add_argument("--memory", nargs="+", type=int, default=[0, 2])
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()
    for name in args.graphs:
        g, _ = load_graph(name)
        algo = PageRank()
        system = algo.prepare(g, **algo.bind(g, {}))
        variants = [GpuSccSettings(light_anderson=m) for m in args.memory]
        times = {m: [] for m in args.memory}
        phases = {m: [] for m in args.memory}
        last = {}
        for i in range(args.repeat + 2):  # two warm-up rounds
            k = i % len(variants)
            for m, settings in zip(args.memory[k:] + args.memory[:k], variants[k:] + variants[:k]):
                st = RunStats.new()
                t0 = time.perf_counter()
                gpu.solve(g, system, mode="scc", tol=args.tol, max_iter=10_000, stats=st,
                          scc_settings=settings)
                dt = time.perf_counter() - t0
                if i >= 2:
                    times[m].append(dt)
                    phases[m].append(st["scc_phase_ms"])
                last[m] = st
        for m in args.memory:
            st = last[m]
            print(json.dumps(dict(
                graph=name, light_anderson=m, time_ms=round(statistics.median(times[m]) * 1e3, 2),
                time_ms_range=[round(min(times[m]) * 1e3, 2), round(max(times[m]) * 1e3, 2)],
                phase_ms=np.median(np.array(phases[m]), axis=0).round(3).tolist(),
                sweeps=int(st["sweeps"]), arcs=int(st["arc_updates"]),
                bound=st["error_bound"], finished_by=st.get("finished_by"))), flush=True)


if __name__ == "__main__":
    main()
