"""Thread scaling of the CPU linear engines (issue 4): ``bsp`` against the vertex state of
``mode="path"`` with its large components kept on one thread or split over the threads (each
exchange kind), PageRank to a certified L1 bound of ``--tol``.

    python benchmarks/bench_cpu_threads.py --graphs cnr-2000 rmat20 --threads 2 4 8 16

Medians (and minima) of ``--repeat`` runs after a warm-up, variants interleaved.  Start Python with
``NUMBA_NUM_THREADS`` at least the largest ``--threads``.
"""
import argparse
import dataclasses
import json
import statistics
import sys
import time
from pathlib import Path

import numba

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import digraph  # noqa: E402
from digraph.dispatch import bsp, dag_push  # noqa: E402
from digraph.result import RunStats  # noqa: E402

# the fields of dag_push.DagPushSettings each variant changes (the engine is called directly, so
# the router's delegation to bsp, RouteSettings.delegate_threads, does not apply)
VARIANTS = {"bsp": None, "vertex (default: auto)": dict(),
            "vertex, no split": dict(split_arcs=1 << 62),
            "vertex, split accumulate": dict(split_kind="accumulate"),
            "vertex, split outbox": dict(split_kind="outbox")}


def load(name):
    if name.startswith("rmat"):
        from digraph.generators import rmat
        s = int(name[4:])
        src, dst = rmat(s, seed=s)
        return digraph.Graph.from_arrays(src, dst, num_vertices=1 << s)
    import os
    root = Path(os.environ.get("DIGRAPH_DATASETS") or ROOT.parent / "shared" / "datasets")
    return digraph.load(root / f"{name}.txt.gz")


def run(g, system, tol, name):
    stats = RunStats.new()
    t0 = time.perf_counter()
    if VARIANTS[name] is None:
        bsp.solve(g, system, tol=tol, max_iter=100_000, stats=stats)
    else:
        dag_push.solve(g, system, tol=tol, max_iter=100_000, stats=stats,
                       settings=dataclasses.replace(dag_push.DEFAULT, **VARIANTS[name]))
    return time.perf_counter() - t0, stats


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphs", nargs="+", default=["cnr-2000"])
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = []
    for gname in args.graphs:
        g = load(gname)
        system = digraph.algorithms.PageRank().prepare(g, alpha=0.85, personalization=None,
                                                       weights=True)
        for T in args.threads:
            numba.set_num_threads(T)
            for name in VARIANTS:
                run(g, system, args.tol, name)
            times = {name: [] for name in VARIANTS}
            last = {}
            for _ in range(args.repeat):
                for name in VARIANTS:
                    t, st = run(g, system, args.tol, name)
                    times[name].append(t)
                    last[name] = st
            for name in VARIANTS:
                st = last[name]
                row = dict(graph=gname, threads=T, variant=name, time_s=statistics.median(times[name]),
                           time_min_s=min(times[name]), arc_updates=st["arc_updates"],
                           rounds=st["rounds"], error_bound=st.get("error_bound"),
                           delegated_to=st.get("delegated_to"))
                rows.append(row)
                print(f"{gname:9} T={T:<3} {name:26} {row['time_s'] * 1e3:8.1f} ms (min "
                      f"{row['time_min_s'] * 1e3:8.1f})  arcs {row['arc_updates']:>13,d}  "
                      f"bound {row['error_bound']:.2g} {row['delegated_to'] or ''}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(dict(rows=rows, date=time.strftime("%Y-%m-%d")), indent=1))


if __name__ == "__main__":
    main()
