"""The GPU path modes with their rounds queued on the device (issue 18, item 2): whole warm
``digraph.run`` calls of ``path`` and ``path-nopriority`` against the fastest GPU modes, on
PageRank (against ``power`` and ``bsp``) and SSSP (against ``vertex-async``), the variants of
``GpuSettings.unit_arcs`` and ``GpuPathSettings.rounds_per_check`` alternated run by run in one
process, medians after a warm-up; and, for one run of each path variant, the walk kernel's GPU
time (CUDA events around each ``path_linear_round`` launch) against the run's wall time.

    python benchmarks/bench_gpu_path_rounds.py --graphs cnr-2000 dblp-2010 --units 8 2 \\
        --checks 8 --repeat 5 --json $OUT/path_rounds.json

A variant is ``mode[:unit_arcs[:rounds_per_check[:select_share[:proxy_min_in_degree]]]]``; every answer is checked against the
CPU's (``bsp``, tol 1e-10, L1 difference; SSSP equal).
"""

import argparse
import cProfile
import dataclasses
import io
import json
import platform
import pstats
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


def _variant(spec):
    """``mode[:unit_arcs[:rounds_per_check[:select_share[:proxy_min_in_degree]]]]`` (an empty
    field: the default)."""
    mode, *rest = spec.split(":")
    rest += [""] * (4 - len(rest))
    unit = int(rest[0]) if rest[0] else None
    check = int(rest[1]) if rest[1] else None
    share = float(rest[2]) if rest[2] else None
    proxy = int(rest[3]) if rest[3] else None
    return mode, unit, (check, share, proxy)


def _settings(unit, more):
    from digraph.dispatch import gpu
    check, share, proxy = more if more else (None, None, None)
    gpu.DEFAULT = dataclasses.replace(
        BASE[0], unit_arcs=unit or BASE[0].unit_arcs,
        proxy_min_in_degree=proxy or BASE[0].proxy_min_in_degree)
    gpu.PATH_DEFAULT = dataclasses.replace(
        BASE[1], rounds_per_check=check or BASE[1].rounds_per_check,
        select_share=share or BASE[1].select_share)


BASE = []


def main():
    import cupy as cp
    from digraph.dispatch import gpu
    from digraph.dispatch.cuda.runtime import backend as B
    BASE[:] = [gpu.DEFAULT, gpu.PATH_DEFAULT]
    ap = argparse.ArgumentParser()
    ap.add_argument("--graphs", nargs="+", required=True)
    ap.add_argument("--variants", nargs="*",
                    default=["path", "path-nopriority", "path:2", "path:1", "bsp", "power"])
    ap.add_argument("--sssp", nargs="*", default=["path", "path:2", "vertex-async", "bsp"])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--profile", action="store_true",
                    help="one more run of each path variant under cProfile: the host's top calls")
    ap.add_argument("--profile-sort", default="tottime", help="cProfile's order (tottime, cumulative)")
    ap.add_argument("--json")
    args = ap.parse_args()
    walk_ms = []
    control_ms = []
    plain = B._Backend.launch

    def timed(self, kernel, grid, block, *a, **kw):
        name = str(getattr(kernel, "py_func", ""))
        into = walk_ms if "path_linear_round" in name else \
            control_ms if "path_round_control" in name else None
        if into is not None:
            e0, e1 = cp.cuda.Event(), cp.cuda.Event()
            e0.record()
            plain(self, kernel, grid, block, *a, **kw)
            e1.record()
            e1.synchronize()
            into.append(cp.cuda.get_elapsed_time(e0, e1))
            return None
        return plain(self, kernel, grid, block, *a, **kw)

    rows = []
    for name in args.graphs:
        g, _ = load_graph(name)
        for algo, variants in (("pagerank", args.variants), ("sssp", args.sssp)):
            if not variants:
                continue
            kw = {"tol": args.tol} if algo == "pagerank" else {}
            if algo == "sssp":
                kw["source"] = int(np.argmax(np.diff(np.asarray(g.out_offsets))))
            ref = digraph.run(g, algo, mode="bsp", **({"tol": 1e-10} if algo == "pagerank"
                                                       else {"source": kw["source"]}))
            refv = np.asarray(ref.values)
            times = {v: [] for v in variants}
            last = {}
            for rep in range(args.repeat + 1):  # the first pass is the warm-up
                for v in variants:
                    mode, unit, check = _variant(v)
                    _settings(unit, check)
                    cp.cuda.Device().synchronize()
                    t0 = time.perf_counter()
                    r = digraph.run(g, algo, mode=mode, device="cuda", **kw)
                    dt = (time.perf_counter() - t0) * 1e3
                    if rep:
                        times[v].append(dt)
                    last[v] = r
            for v in variants:
                mode, unit, check = _variant(v)
                r = last[v]
                vals = np.asarray(r.values)
                fin = np.isfinite(refv)
                err = float(np.abs(vals[fin] - refv[fin]).sum()) if algo == "pagerank" else \
                    int(np.sum(vals[fin] != refv[fin]) + np.sum(np.isfinite(vals[~fin])))
                row = {"graph": name, "algorithm": algo, "variant": v,
                       "median_ms": statistics.median(times[v]), "min_ms": min(times[v]),
                       "times_ms": times[v], "rounds": int(r.stats["rounds"]),
                       "arc_updates": int(r.stats["arc_updates"]),
                       "arcs_examined": int(r.stats.get("arcs_examined", 0)),
                       "finished_by": r.stats.get("finished_by"),
                       "path_sweeps": r.stats.get("path_sweeps"),
                       "gpu_work_kept": r.stats.get("gpu_work_kept"),
                       "path_graph_launches": r.stats.get("path_graph_launches"),
                       "path_graph_failed": r.stats.get("path_graph_failed"),
                       "error_bound": r.stats.get("error_bound"),
                       ("l1_vs_cpu" if algo == "pagerank" else "differ_vs_cpu"): err}
                if mode.startswith("path") and algo == "pagerank":
                    _settings(unit, check)
                    B._Backend.launch = timed
                    walk_ms.clear()
                    control_ms.clear()
                    t0 = time.perf_counter()
                    digraph.run(g, algo, mode=mode, device="cuda", **kw)
                    row["timed_run_ms"] = (time.perf_counter() - t0) * 1e3
                    B._Backend.launch = plain
                    row["walk_launches"] = len(walk_ms)
                    row["walk_kernel_ms"] = sum(walk_ms)
                    row["walk_ms_median"] = sorted(walk_ms)[len(walk_ms) // 2] if walk_ms else None
                    row["control_kernel_ms"] = sum(control_ms)
                    if args.profile:
                        pr = cProfile.Profile()
                        pr.enable()
                        digraph.run(g, algo, mode=mode, device="cuda", **kw)
                        pr.disable()
                        out = io.StringIO()
                        pstats.Stats(pr, stream=out).sort_stats(args.profile_sort).print_stats(30)
                        row["host_top"] = out.getvalue().splitlines()[-38:]
                rows.append(row)
                print(json.dumps({k: (round(x, 3) if isinstance(x, float) else x)
                                  for k, x in row.items() if k not in ("times_ms", "host_top")}),
                      flush=True)
                if "host_top" in row:
                    print("\n".join(row["host_top"]), flush=True)
            _settings(None, None)
    if args.json:
        meta = {"date": time.strftime("%Y-%m-%d"), "machine": platform.node(),
                "gpu": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(),
                "command": " ".join(sys.argv)}
        Path(args.json).write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
