"""Interleaved A/B of the one-GPU power iteration's CUDA-graph rounds (issue 17/18: a round's
launches cost more host time than GPU time on graphs of a few million arcs): ``gpu_power.solve``
with ``PowerGpuSettings.graph_rounds`` off and on, and with Anderson forced on, in rotated order,
medians of ``--repeat``; then whole warm ``digraph.run`` calls.  JSON lines.

    python benchmarks/ab_gpu_power_graphs.py --graphs cnr-2000 dblp-2010 rmat22c --repeat 9
"""

import argparse
import dataclasses
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import digraph  # noqa: E402
from bench_gpu import load_graph  # noqa: E402


def main():
    import cupy as cp
    from digraph.algorithms import PageRank
    from digraph.dispatch import gpu_power
    from digraph.result import RunStats
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--graphs", nargs="+", default=["cnr-2000", "dblp-2010", "rmat22c"])
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--json")
    args = ap.parse_args()
    sync = cp.cuda.Device().synchronize
    D = gpu_power.DEFAULT
    variants = {
        "launches": dataclasses.replace(D, graph_rounds=False),
        "graphs": dataclasses.replace(D, graph_rounds=True),
        "launches + Anderson": dataclasses.replace(D, graph_rounds=False, anderson_arcs=0),
        "graphs + Anderson": dataclasses.replace(D, graph_rounds=True, anderson_arcs=0),
    }
    rows = []
    for name in args.graphs:
        g, _ = load_graph(name)
        algo = PageRank()
        system = algo.prepare(g, **algo.bind(g, {}))
        ref = digraph.run(g, "pagerank", mode="bsp", device="cuda", tol=1e-13).values
        times = {k: [] for k in variants}
        info = {}
        labels = list(variants)
        for rep in range(args.repeat + 1):
            for i in range(len(labels)):
                label = labels[(i + rep) % len(labels)]
                st = RunStats.new()
                sync()
                t0 = time.perf_counter()
                x, ok = gpu_power.solve(g, system, tol=args.tol, max_iter=1000, stats=st,
                                        settings=variants[label])
                sync()
                if rep:  # the first repetition warms (compiles, captures)
                    times[label].append(time.perf_counter() - t0)
                info[label] = dict(rounds=int(st["rounds"]), graphs=st.get("power_graph_launches", 0),
                                   anderson=st.get("power_anderson"), pull=st["power_pull"],
                                   bound=float(st["error_bound"]),
                                   true_error=float(np.abs(x - ref).sum()))
        for label in labels:
            row = dict(graph=name, variant=label, median_ms=1e3 * statistics.median(times[label]),
                       min_ms=1e3 * min(times[label]), **info[label])
            rows.append(row)
            print(json.dumps(row), flush=True)
        ts = []
        for _ in range(args.repeat):
            sync()
            t0 = time.perf_counter()
            r = digraph.run(g, "pagerank", device="cuda", tol=args.tol)
            sync()
            ts.append(time.perf_counter() - t0)
        row = dict(graph=name, variant="digraph.run default", median_ms=1e3 * statistics.median(ts),
                   rounds=int(r.stats["rounds"]), graphs=r.stats.get("power_graph_launches", 0),
                   true_error=float(np.abs(r.values - ref).sum()))
        rows.append(row)
        print(json.dumps(row), flush=True)
    if args.json:
        meta = {"date": time.strftime("%Y-%m-%d"), "argv": sys.argv[1:]}
        Path(args.json).write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
