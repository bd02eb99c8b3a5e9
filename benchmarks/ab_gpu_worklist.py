"""SSSP on one GPU: ``vertex-async`` (its worklist kept on the GPU,
:mod:`digraph.dispatch.cuda.one_gpu.worklist`), the cluster engine and the router's choice,
interleaved; medians of ``--repeat`` warm runs, answers checked equal to scipy's Dijkstra.

``benchmarks/results/gpu_worklist_ab_h200.json`` also holds the host-driven ``vertex-async``
rounds the worklist replaced (CuPy compaction and a read-back a round, ``gpu._monotone(...,
jacobi=False)`` of commit 8cc1b02, deleted since; check that commit out to run them again).

    python benchmarks/ab_gpu_worklist.py --graphs p2p-Gnutella04 dblp-2010 cnr-2000 rmat20 er20 \\
        grid1000 --json $OUT/ab_worklist.json
"""

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import digraph  # noqa: E402
from bench_gpu_sssp_grid import make  # noqa: E402


def main():
    import cupy as cp
    from scipy.sparse.csgraph import dijkstra
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphs", nargs="+", required=True)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = []
    for name in args.graphs:
        g, s, label, A = make(name)
        ref = dijkstra(A, indices=s)

        def run(mode):
            def f():
                r = digraph.run(g, "sssp", source=label, device="cuda", mode=mode)
                return r.values, r.stats
            return f
        methods = {"vertex-async, GPU worklist (new)": run("vertex-async"),
                   "cluster": run("cluster"), "default": run(None)}
        times = {k: [] for k in methods}
        out = {}
        for k, f in methods.items():
            out[k] = f()  # warm-up
        for _ in range(args.repeat):
            for k, f in methods.items():  # interleaved
                cp.cuda.Device().synchronize()
                t0 = time.perf_counter()
                out[k] = f()
                times[k].append(time.perf_counter() - t0)
        for k in methods:
            vals, st = out[k]
            row = {"graph": name, "n": g.num_vertices, "m": g.num_arcs, "method": k,
                   "time_ms": statistics.median(times[k]) * 1e3, "rounds": int(st["rounds"]),
                   "arc_updates": int(st["arc_updates"]),
                   "equal": bool(np.array_equal(np.asarray(vals), ref)),
                   "engine": st.get("engine")}
            rows.append(row)
            print(json.dumps(row), flush=True)
    if args.json:
        meta = {"date": time.strftime("%Y-%m-%d"), "machine": platform.node(),
                "gpu": cp.cuda.runtime.getDeviceProperties(0)["name"].decode()}
        Path(args.json).write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
