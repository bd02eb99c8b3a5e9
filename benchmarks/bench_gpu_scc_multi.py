"""The DAG dispatcher over several GPUs (``mode="scc"`` with ``device="cuda:0,1,..."``, issue 18
item 4) against one GPU's ``scc`` and ``power`` and the sharded ``bsp`` and ``power``.

    python benchmarks/bench_gpu_scc_multi.py --graphs cnr-2000 dblp-2010 rmat22 --gpus 2 4 \\
        --repeat 5 --json $OUT/scc_multi.json

``--virtual``: the k "GPUs" are the first GPU named k times (a machine with one GPU): the
dispatcher's deal, exchange (peer copies within the GPU) and giants run for real and are checked,
but the times say nothing about several GPUs.  The sharded rows then run as well, on the one GPU.

PageRank (α = 0.85) at ``--tol``; medians of ``--repeat`` warm runs after one warm-up; every
answer compared with a CPU reference at tol 1e-12 (L1 distance of the normalised answers, next to
the run's certified bound).  Graphs as in ``bench_gpu.py`` (``rmatS``: R-MAT 2^S on the GPU).
"""
import argparse
import datetime
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import digraph  # noqa: E402
from digraph.algorithms import get as get_algorithm  # noqa: E402
from digraph.dispatch import gpu, multi_gpu  # noqa: E402
from digraph.dispatch.cuda.sharded.scc import solve_dag  # noqa: E402
from digraph.result import RunStats  # noqa: E402
from bench_gpu import load_graph, median_time  # noqa: E402

KEEP = ("rounds", "arc_updates", "bytes_between_gpus", "error_bound", "finished_by",
        "gpu_components", "gpu_arcs", "scc_giants", "scc_phases", "scc_heavy", "gpus", "engine")


def _host(x):
    x = x.get() if hasattr(x, "get") else np.asarray(x)
    return np.asarray(x, np.float64)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graphs", nargs="+", default=["cnr-2000", "dblp-2010"])
    ap.add_argument("--gpus", nargs="+", type=int, default=[2])
    ap.add_argument("--virtual", action="store_true")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--min-arcs-per-gpu", type=int, default=None,
                    help="MultiGpuSettings.min_arcs_per_gpu for the dispatcher's giants "
                         "(default: the engine's)")
    ap.add_argument("--json")
    args = ap.parse_args()
    import dataclasses
    if args.min_arcs_per_gpu is not None:
        multi_gpu.DEFAULT = dataclasses.replace(multi_gpu.DEFAULT,
                                                min_arcs_per_gpu=args.min_arcs_per_gpu)
    rows = []
    algo = get_algorithm("pagerank")

    def emit(row):
        rows.append(row)
        print(json.dumps(row, default=str), flush=True)

    for name in args.graphs:
        g, _ = load_graph(name)
        system = algo.prepare(g, **algo.bind(g, {}))
        ref = _host(digraph.run(g, "pagerank", tol=1e-12, device="cpu").values)
        base = {"graph": name, "n": g.num_vertices, "m": g.num_arcs}

        def check(x):
            x = _host(x)
            return float(np.abs(x / x.sum() - ref).sum())

        def one(label, fn):
            fn()  # warm-up: compile, upload, kept work
            t, (x, st) = median_time(fn, args.repeat)
            emit(dict(base, method=label, ms=round(t * 1e3, 3), error=check(x),
                      **{k: st[k] for k in KEEP if k in st}))

        def run(mode, device):
            def fn():
                r = digraph.run(g, "pagerank", mode=mode, device=device, tol=args.tol)
                return r.values, r.stats
            return fn
        one("1 GPU scc", run("scc", "cuda"))
        one("1 GPU power", run("power", "cuda"))
        for k in args.gpus:
            devices = ["cuda:0"] * k if args.virtual else [f"cuda:{i}" for i in range(k)]
            tag = f"{k} {'virtual ' if args.virtual else ''}GPUs"

            def dag(devices=devices):
                st = RunStats.new()
                x, _ = solve_dag(g, system, devices=devices, tol=args.tol, max_iter=10_000,
                                 stats=st)
                return x, st
            one(f"{tag} scc (DAG dispatcher)", dag)

            def sharded(devices=devices):
                st = RunStats.new()
                x, _ = multi_gpu.solve(g, system, devices=devices, mode="bsp", tol=args.tol,
                                       max_iter=10_000, stats=st, min_arcs_per_gpu=0)
                return x, st
            one(f"{tag} bsp (sharded)", sharded)
            if not args.virtual:
                one(f"{tag} power (sharded)", run("power", "cuda:" + ",".join(
                    str(i) for i in range(k))))
    if args.json:
        import cupy as cp
        meta = {"date": datetime.date.today().isoformat(), "host": platform.node(),
                "gpu": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(),
                "gpus": cp.cuda.runtime.getDeviceCount(), "tol": args.tol,
                "virtual": args.virtual, "command": " ".join(sys.argv)}
        Path(args.json).write_text(json.dumps({"meta": meta, "rows": rows}, indent=1,
                                              default=str))


if __name__ == "__main__":
    main()
