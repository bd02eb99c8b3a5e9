"""Anderson's restart cap on one GPU (``PowerGpuSettings.anderson_restarts``): PageRank, tol
1e-8, plain (``anderson=0``) against memory 4 with each cap, on graphs where Anderson runs (at
least ``anderson_arcs`` arcs).  On citation-like DAGs the mixes overshoot, the history restarts
again and again and the run took more rounds than the plain iteration (cit22-0 on an H200: 49
rounds, 49 ms, against 27 rounds, 20.5 ms).  Median of ``--repeat`` warm runs; true L1 error
against a plain run to 1e-13.

    python benchmarks/ab_gpu_anderson_restarts.py --graphs cit22-0 cit22-0.001 rmat22 rmat24 \\
        --caps none 1 2 4 --json $OUT/anderson_restarts_h200.json
"""

import argparse
import dataclasses
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402

import digraph  # noqa: E402
from bench_gpu import load_graph  # noqa: E402
from bench_gpu_pagerank import write_gpu_results  # noqa: E402


def main():
    import cupy as cp
    from digraph.dispatch import gpu_power
    from digraph.result import RunStats
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphs", nargs="+", required=True)
    ap.add_argument("--caps", nargs="+", default=["none", "1", "2", "4"])
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--json")
    args = ap.parse_args()
    sync = cp.cuda.Device().synchronize
    rows = []
    for name in args.graphs:
        g, _ = load_graph(name)
        algo = digraph.algorithms.PageRank()
        system = algo.prepare(g, **algo.bind(g, {}))
        base = dataclasses.replace(gpu_power.DEFAULT, anderson_arcs=0)
        ref, _ = gpu_power.solve(g, system, tol=1e-13, max_iter=5000, stats=RunStats.new(),
                                 settings=dataclasses.replace(base, anderson=0))
        variants = [("plain", dataclasses.replace(base, anderson=0))] + [
            (f"cap {c}", dataclasses.replace(base, anderson_restarts=None if c == "none" else int(c)))
            for c in args.caps]
        for label, settings in variants:
            ts = []
            for i in range(args.repeat + 1):
                st = RunStats.new()
                sync()
                t0 = time.perf_counter()
                x, ok = gpu_power.solve(g, system, tol=args.tol, max_iter=5000, stats=st,
                                        settings=settings)
                sync()
                if i:
                    ts.append(time.perf_counter() - t0)
            row = {"graph": name, "m": g.num_arcs, "variant": label,
                   "time_ms": statistics.median(ts) * 1e3, "rounds": int(st["rounds"]),
                   "converged": bool(ok), "bound": float(st["error_bound"]),
                   "true_error": float(np.abs(x - ref).sum()),
                   "mixes": st.get("anderson_mixes"), "restarts": st.get("anderson_restarts"),
                   "gave_up": st.get("anderson_gave_up"), "probe_ratio": st.get("anderson_probe_ratio"),
                   "memory": st.get("power_anderson")}
            rows.append(row)
            print(json.dumps(row), flush=True)
        g = None
        cp.get_default_memory_pool().free_all_blocks()
    write_gpu_results(args.json, rows, args.tol)


if __name__ == "__main__":
    main()
