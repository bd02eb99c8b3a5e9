"""The multi-worker dispatcher (issue 6) with CPU workers: rounds, arc updates, exchange bytes,
idle share and time for 1, 2 and 4 workers, in host threads or one after another.

    python benchmarks/bench_multi.py --graph cnr-2000 --workers 1 2 4
    python benchmarks/bench_multi.py --graph rmat20 --workers 1 2 4 --devices cuda:0 cuda:1 cuda:2 cuda:3

With ``--devices`` the workers are GPU workers (:mod:`digraph.dispatch.gpu_workers`), worker ``w``
on ``devices[w % len(devices)]``; R-MAT graphs (``rmatS``: 2^S vertices, 16 arcs each, fixed seed)
are generated on the host.
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import digraph  # noqa: E402
from digraph.algorithms import get as get_algorithm  # noqa: E402
from digraph.dispatch import multi  # noqa: E402
from digraph.preprocess import preprocess  # noqa: E402
from digraph.result import RunStats  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graph", default="cnr-2000")
    ap.add_argument("--algorithm", default="pagerank")
    ap.add_argument("--workers", nargs="+", type=int, default=[1, 2, 4])
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--devices", nargs="+", help="GPU workers on these devices (e.g. cuda:0 cuda:1)")
    args = ap.parse_args()
    if args.graph.startswith("rmat"):
        from digraph.generators import rmat
        scale = int(args.graph[4:])
        src, dst = rmat(scale, 16, seed=scale)
        g = digraph.load((src, dst), num_vertices=1 << scale)
    else:
        g = digraph.load(ROOT.parent / "shared" / "datasets" / f"{args.graph}.txt.gz")
    ps = preprocess(g)
    A = get_algorithm(args.algorithm)
    params = {"source": g.vertex_ids[int(np.argmax(g.out_degree))]} if args.algorithm == "sssp" else {}
    system = A.prepare(g, **A.bind(g, params))
    print(f"{args.graph} {args.algorithm}: n={g.num_vertices:,} m={g.num_arcs:,}, "
          f"{ps.num_partitions} partitions, {ps.num_layers} layers")
    print("workers threads   time ms  rounds  arc updates  exchange MB  steals  idle share"
          "  h2d MB")
    for w in args.workers:
        for concurrent in ((True, False) if w > 1 else (False,)):
            ts = []
            for _ in range(args.repeat + 1):  # the first run compiles
                st = RunStats.new()
                make = None
                if args.devices:
                    from digraph.dispatch.gpu_workers import gpu_worker_factory
                    make = gpu_worker_factory(args.devices, st)
                t0 = time.perf_counter()
                multi.solve(g, system, pathset=ps, workers=w, tol=args.tol, stats=st,
                            concurrent=concurrent, make_worker=make)
                ts.append(time.perf_counter() - t0)
            idle = np.mean(st["worker_idle_share"])
            print(f"{w:7d} {str(concurrent):7s} {statistics.median(ts[1:]) * 1e3:9.0f} "
                  f"{st['rounds']:7d} {st['arc_updates']:12,d} "
                  f"{st['bytes_between_gpus'] / 1e6:11.1f} {st.get('steals', 0):7d} {idle:10.2f} "
                  f"{st['bytes_h2d'] / 1e6:7.1f}")


if __name__ == "__main__":
    main()
