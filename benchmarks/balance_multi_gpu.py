"""How the shard ranges' balance and the prefaulted host array change sharded PageRank (issue 6).

    python benchmarks/balance_multi_gpu.py --graph rmat25 --gpus 4 2 --costs 0 1 3 6 \
        --json $OUT/balance.json

For each k and each variant (``MultiGpuSettings.vertex_cost`` = c: a range balances arcs + c
per vertex; and the default cost without ``MultiGpuSettings.prefault``; each passed as
``solve(settings=dataclasses.replace(multi_gpu.DEFAULT, ...))``), interleaved over two passes:
a warm-up :func:`digraph.dispatch.multi_gpu.solve` (compiles, builds and caches the ranges'
layout), then the median of ``--repeat`` runs, with the run's parts (set-up, rounds, certify,
the rest) and per GPU: arcs, vertices, arcs into vertices of in-degree >= HEAVY, kernel time
per round and idle share.  The one-GPU engine (``digraph.run(..., device="cuda")``) and
``digraph.run`` on the k GPUs are timed in the same passes.
"""
import argparse
import dataclasses
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import digraph  # noqa: E402
from digraph.algorithms import get as get_algorithm  # noqa: E402
from digraph.dispatch import multi_gpu  # noqa: E402
from digraph.result import RunStats  # noqa: E402
from digraph.smx.cuda_kernels import HEAVY  # noqa: E402
from bench_gpu import load_graph, median_time  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--graph", default="rmat24")
    ap.add_argument("--gpus", nargs="+", type=int, default=[4, 2])
    ap.add_argument("--costs", nargs="+", type=float, default=[0, 1, 3, 6])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--passes", type=int, default=2)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    g, t_load = load_graph(args.graph)
    n, m = g.num_vertices, g.num_arcs
    print(f"{args.graph}: n={n:,} m={m:,} (load {t_load:.1f} s)", flush=True)
    A = get_algorithm("pagerank")
    system = A.prepare(g, **A.bind(g, {}))
    off = np.asarray(g.in_offsets, np.int64)
    deg = np.diff(off)
    heavy_arcs = np.concatenate([[0], np.cumsum(np.where(deg >= HEAVY, deg, 0))])
    default_cost, rows = multi_gpu.DEFAULT.vertex_cost, []

    def timed(fn):
        fn()  # untimed
        return median_time(fn, args.repeat)

    for k in args.gpus:
        devs = [f"cuda:{i}" for i in range(k)]
        dev = "cuda" if k == 1 else "cuda:" + ",".join(str(i) for i in range(k))
        variants = [("solve", c, True) for c in args.costs] + [("solve", default_cost, False),
                                                               ("run 1 GPU", default_cost, True),
                                                               (f"run {dev}", default_cost, True)]
        for p in range(args.passes):
            for what, c, pre in variants:
                if what == "solve":
                    cfg = dataclasses.replace(multi_gpu.DEFAULT, vertex_cost=c, prefault=pre)

                    def fn(cfg=cfg):
                        st = RunStats.new()
                        multi_gpu.solve(g, system, devices=devs, mode="bsp", tol=1e-8,
                                        max_iter=100_000, stats=st, min_arcs_per_gpu=0,
                                        settings=cfg)
                        return st
                else:  # the defaults (digraph.run takes no engine settings)
                    d = "cuda" if what == "run 1 GPU" else dev

                    def fn(d=d):
                        return digraph.run(g, "pagerank", device=d, tol=1e-8).stats
                t, st = timed(fn)
                row = dict(graph=args.graph, k=k, what=what, vertex_cost=c, prefault=pre,
                           pass_=p, time_s=t)
                if what == "solve":
                    b = multi_gpu.shard_ranges(off, k, c)
                    busy = np.asarray(st["gpu_busy_s"]) / st["rounds"]
                    parts = {x: st.get(f"time_{x}", 0.0) for x in ("setup", "rounds", "certify")}
                    row.update(parts, rest=t - sum(parts.values()), rounds=st["rounds"],
                               arcs=[int(off[b[i + 1]] - off[b[i]]) for i in range(k)],
                               vertices=[int(b[i + 1] - b[i]) for i in range(k)],
                               heavy_arcs=[int(heavy_arcs[b[i + 1]] - heavy_arcs[b[i]])
                                           for i in range(k)],
                               sends=st.get("gpu_sends"), busy_ms_per_round=list(busy * 1e3),
                               idle=st["gpu_idle_share"], bound=st["error_bound"])
                    print(f"k={k} c={c:g} prefault {pre:d} pass {p}: {t * 1e3:.0f} ms = set-up "
                          f"{parts['setup'] * 1e3:.0f} + rounds {parts['rounds'] * 1e3:.0f} "
                          f"({st['rounds']}) + certify {parts['certify'] * 1e3:.0f} + rest "
                          f"{row['rest'] * 1e3:.0f}; busy/round "
                          f"{[round(v * 1e3, 3) for v in busy]} ms, idle "
                          f"{[round(v, 2) for v in st['gpu_idle_share']]}, arcs {row['arcs']}, "
                          f"vertices {row['vertices']}, heavy arcs {row['heavy_arcs']}", flush=True)
                else:
                    row.update(engine=st.get("engine"), rounds=st.get("rounds"),
                               gpus=st.get("gpus"))
                    print(f"k={k} {what} pass {p}: {t * 1e3:.0f} ms ({st.get('rounds')} rounds, "
                          f"{st.get('gpus')} GPUs)", flush=True)
                rows.append(row)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
