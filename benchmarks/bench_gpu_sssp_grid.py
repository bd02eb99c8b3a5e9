"""SSSP on one GPU on road-like and other graphs: the cluster engine (``mode="cluster"``, several
cluster sizes), ``vertex-async``, ``bsp`` and the router's choice, against scipy's Dijkstra on one
core of the same host (issue 18, item 3: the 2000 x 2000 grid at most 0.3x Dijkstra, with at
least 5x fewer rounds than ``vertex-async``).

Graphs (any mix):

* ``gridK``: ``digraph.generators.grid(K, K)``, both directions, integer weights 1-100 (seed 0),
  from the corner 0;
* ``geoN``: ``digraph.generators.geometric(N)`` (6 nearest neighbours, both directions, weights
  1-100), from vertex 0;
* a dataset of ``$DIGRAPH_DATASETS`` (``cnr-2000``, ...) or ``rmatK`` (``benchmarks/graphs.py``),
  unit weights, from the vertex of largest out-degree.

Each row: the median of ``--repeat`` warm runs of the whole ``digraph.run`` (answer on the host)
after one warm-up run (compilation, uploads, the clusters' preprocessing: reported apart as
``first_s``); scipy's ``dijkstra`` on a CSR built outside the timing.  Every answer is checked
equal to scipy's, exactly (integer weights).

    python benchmarks/bench_gpu_sssp_grid.py --graphs grid2000 geo4000000 cnr-2000 \\
        --sizes 256 512 1024 --json $OUT/sssp_gpu.json
"""

import argparse
import dataclasses
import json
import os
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
import digraph.generators as gen  # noqa: E402


def make(name):
    """(graph, source's internal index, source's label, scipy CSR; parallel arcs, found in the
    unweighted datasets only, as one arc of weight 1)."""
    import scipy.sparse as sp
    if name.startswith("grid"):
        k = int(name[4:])
        src, dst, w = gen.grid(k, k)
        n, s = k * k, 0
    elif name.startswith("geo"):
        n = int(name[3:])
        src, dst, w = gen.geometric(n)
        s = 0
    else:
        from graphs import load
        g = load(name)
        src = np.repeat(np.arange(g.num_vertices), np.diff(g.out_offsets))
        dst = np.asarray(g.out_targets, np.int64)
        w = None
        n = g.num_vertices
        s = int(np.argmax(np.diff(g.out_offsets)))
    g = digraph.Graph.from_arrays(src, dst, w, num_vertices=n) if w is not None else g
    A = sp.csr_matrix((np.ones(src.size) if w is None else w, (src, dst)), shape=(n, n))
    A.sum_duplicates()
    if w is None:
        A.data[:] = 1.0
    return g, s, g.vertex_ids[s], A


def main():
    import cupy as cp
    from scipy.sparse.csgraph import dijkstra
    from digraph.dispatch.cuda.one_gpu import cluster
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphs", nargs="+", default=["grid2000"])
    ap.add_argument("--sizes", nargs="*", type=int, default=[1024])
    ap.add_argument("--hops", nargs="*", type=float, default=[cluster.DEFAULT.priority_hops],
                    help="ClusterSettings.priority_hops values (0: no priority)")
    ap.add_argument("--modes", nargs="*", default=["vertex-async", "bsp"])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = []

    def emit(row):
        rows.append(row)
        print(json.dumps(row), flush=True)
        if args.json:
            meta = {"date": time.strftime("%Y-%m-%d"), "machine": platform.node(),
                    "gpu": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(),
                    "cpu_count": os.cpu_count()}
            Path(args.json).write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))

    for name in args.graphs:
        t0 = time.perf_counter()
        g, s, label, A = make(name)
        base = {"graph": name, "n": g.num_vertices, "m": g.num_arcs, "source": s,
                "build_s": time.perf_counter() - t0}
        ts = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            ref = dijkstra(A, indices=s)
            ts.append(time.perf_counter() - t0)
        dk = statistics.median(ts)
        emit(dict(base, method="scipy dijkstra (one core)", time_ms=dk * 1e3, ratio=1.0))
        runs = ([(m, None, None) for m in args.modes] +
                [("cluster", z, h) for z in args.sizes for h in args.hops] + [(None, None, None)])
        for mode, size, hops in runs:
            kw = {}
            if size is not None:
                kw["cluster_settings"] = dataclasses.replace(cluster.DEFAULT, size=size,
                                                             priority_hops=hops)

            def once():
                if size is None:
                    return digraph.run(g, "sssp", source=label, device="cuda", mode=mode)
                return _cluster_run(g, label, kw["cluster_settings"])
            t0 = time.perf_counter()
            r = once()
            first = time.perf_counter() - t0
            tt = []
            for _ in range(args.repeat):
                cp.cuda.Device().synchronize()
                t0 = time.perf_counter()
                r = once()
                tt.append(time.perf_counter() - t0)
            t = statistics.median(tt)
            st = r.stats if hasattr(r, "stats") else r[1]
            vals = r.values if hasattr(r, "values") else r[0]
            row = dict(base, method=("default: " + st["engine"]) if mode is None else
                       (f"cluster {size}, hops {hops:g}" if size else mode),
                       time_ms=t * 1e3, ratio=t / dk, first_s=first,
                       rounds=int(st["rounds"]), arc_updates=int(st["arc_updates"]),
                       equal=bool(np.array_equal(vals, ref)))
            for k in ("clusters", "clusters_run", "cluster_sweeps", "cluster_internal_share",
                      "cluster_delta", "route"):
                if k in st:
                    row[k] = st[k]
            emit(row)
        del g, A


def _cluster_run(g, s, settings):
    """The cluster engine with ``settings`` (``digraph.dispatch.gpu.solve``) from the vertex
    labelled ``s``, its answer on the host: (values, stats)."""
    from digraph.algorithms import get as get_algorithm
    from digraph.dispatch import gpu
    from digraph.result import RunStats
    algo = get_algorithm("sssp")
    system = algo.prepare(g, **algo.bind(g, {"source": s}))
    stats = RunStats.new()
    x, _ = gpu.solve(g, system, mode="cluster", tol=0.0, max_iter=g.num_vertices + 1,
                     stats=stats, cluster_settings=settings)
    return x, stats


if __name__ == "__main__":
    main()
