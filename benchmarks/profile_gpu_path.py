"""Where the GPU path mode's time goes (issue 18, item 2): per round, the walk kernel's GPU time
(CUDA events around each ``path_linear_walk`` launch; ``path_linear_round`` since the rounds run
on the device, where a kept work's replayed CUDA graph hides them: see
``bench_gpu_path_rounds.py``) against the round's wall time, the host's
top functions (cProfile), rounds and arcs, for ``path``, ``path-nopriority``, ``bsp`` and
``power`` on PageRank.

    python benchmarks/profile_gpu_path.py cnr-2000 dblp-2010 --json $OUT/path_profile.json
"""

import argparse
import cProfile
import io
import json
import platform
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import digraph  # noqa: E402
from bench_gpu import load_graph  # noqa: E402


def main():
    import cupy as cp
    from digraph.dispatch.cuda.runtime import backend as B
    ap = argparse.ArgumentParser()
    ap.add_argument("graphs", nargs="+")
    ap.add_argument("--modes", nargs="+", default=["path", "path-nopriority", "bsp", "power"])
    ap.add_argument("--json")
    args = ap.parse_args()
    walk_ms = []
    plain = B._Backend.launch

    def timed_launch(self, kernel, grid, block, *a, **kw):
        name = str(getattr(kernel, "py_func", "")) + getattr(kernel, "__name__", "")
        if "path_linear_walk" in name or "path_linear_round" in name:
            e0, e1 = cp.cuda.Event(), cp.cuda.Event()
            e0.record()
            plain(self, kernel, grid, block, *a, **kw)
            e1.record()
            e1.synchronize()
            walk_ms.append(cp.cuda.get_elapsed_time(e0, e1))
            return
        return plain(self, kernel, grid, block, *a, **kw)

    rows = []
    for name in args.graphs:
        g, _ = load_graph(name)
        for mode in args.modes:
            digraph.run(g, "pagerank", mode=mode, device="cuda", tol=1e-8)  # warm
            cp.cuda.Device().synchronize()
            t0 = time.perf_counter()
            r = digraph.run(g, "pagerank", mode=mode, device="cuda", tol=1e-8)
            wall = time.perf_counter() - t0
            row = {"graph": name, "mode": mode, "time_ms": wall * 1e3,
                   "rounds": int(r.stats["rounds"]), "arc_updates": int(r.stats["arc_updates"]),
                   "arcs_examined": int(r.stats.get("arcs_examined", 0)),
                   "finished_by": r.stats.get("finished_by"),
                   "path_sweeps": r.stats.get("path_sweeps")}
            if mode.startswith("path"):
                B._Backend.launch = timed_launch
                walk_ms.clear()
                pr = cProfile.Profile()
                t0 = time.perf_counter()
                pr.enable()
                r2 = digraph.run(g, "pagerank", mode=mode, device="cuda", tol=1e-8)
                pr.disable()
                row["profiled_ms"] = (time.perf_counter() - t0) * 1e3
                B._Backend.launch = plain
                row["walks"] = len(walk_ms)
                row["walk_kernel_ms"] = sum(walk_ms)
                row["walk_ms_median"] = sorted(walk_ms)[len(walk_ms) // 2] if walk_ms else None
                s = io.StringIO()
                pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(18)
                row["host_top"] = s.getvalue().splitlines()[-30:]
            rows.append(row)
            print(json.dumps({k: v for k, v in row.items() if k != "host_top"}), flush=True)
            if "host_top" in row:
                print("\n".join(row["host_top"]), flush=True)
    if args.json:
        meta = {"date": time.strftime("%Y-%m-%d"), "machine": platform.node(),
                "gpu": cp.cuda.runtime.getDeviceProperties(0)["name"].decode()}
        Path(args.json).write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
