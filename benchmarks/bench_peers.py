"""CPU peers beside digraph (issue 4): igraph (PRPACK PageRank, coreness, Dijkstra) and networkit
(PageRank), on the same graphs, at equal or better accuracy than digraph's run.

PageRank accuracy is the L1 distance to an exact answer (power iteration to 1e-15); each peer is
run at the loosest of a few settings that reaches digraph's error (so no peer is slowed by needless
accuracy), and its error is printed.  k-core and SSSP answers are checked equal to digraph's.
Peers that are not installed are skipped (``pip install igraph networkit``).

    python benchmarks/bench_peers.py --graphs cnr-2000 dblp-2010
"""

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import digraph  # noqa: E402
from bench_algorithms import DATASETS, GRAPHS, exact_pagerank  # noqa: E402


def median_time(fn, repeat):
    fn()
    ts = []
    out = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts), out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--graphs", nargs="+", default=["cnr-2000", "dblp-2010"], choices=sorted(GRAPHS))
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--tol", type=float, default=1e-8)
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    rows = []

    def add(**r):
        rows.append(r)
        err = f"{r['l1_error']:.2g}" if "l1_error" in r else r.get("check", "")
        print(f"{r['graph']:<10} {r['task']:<9} {r['engine']:<34} {r['time_s'] * 1e3:>9.1f} ms  {err}",
              flush=True)

    for gname in args.graphs:
        fname, nv = GRAPHS[gname]
        if not (DATASETS / fname).exists():
            continue
        g = digraph.load(DATASETS / fname, num_vertices=nv)
        exact = exact_pagerank(g)
        n = g.num_vertices
        src = g.arc_sources.astype(np.int64)
        dst = g.out_targets.astype(np.int64)
        hub = int(np.argmax(g.out_degree))
        # digraph itself (best CPU mode per task as measured in docs/benchmarks.md)
        t, r = median_time(lambda: digraph.run(g, "pagerank", mode="bsp", tol=args.tol), args.repeat)
        ours = float(np.abs(r.values - exact).sum())
        add(graph=gname, task="pagerank", engine="digraph bsp (2 threads)", time_s=t, l1_error=ours)
        # the CPU default for PageRank: mode="path", vertex state (SCC by SCC of the condensation),
        # with the condensation kept on the graph, then built anew each run ("cold")
        t, r = median_time(lambda: digraph.run(g, "pagerank", tol=args.tol), args.repeat)
        err = float(np.abs(r.values - exact).sum())
        ours = min(ours, err)
        add(graph=gname, task="pagerank", engine="digraph path, vertex state (default)", time_s=t,
            l1_error=err, compute_s=r.stats["time_compute"])

        def cold():
            for key in [k for k in g._cache if isinstance(k, tuple) and k[0] == "condensation"]:
                del g._cache[key]
            return digraph.run(g, "pagerank", tol=args.tol)
        t, r = median_time(cold, args.repeat)
        add(graph=gname, task="pagerank", engine="digraph path, cold (condensation built)",
            time_s=t, l1_error=float(np.abs(r.values - exact).sum()),
            preprocess_s=r.stats["time_preprocess"])
        t, core = median_time(lambda: digraph.run(g, "kcore", mode="vertex-async").values, args.repeat)
        add(graph=gname, task="kcore", engine="digraph vertex-async", time_s=t)
        t, dist = median_time(lambda: digraph.run(g, "sssp", source=hub, mode="vertex-async").values,
                              args.repeat)
        add(graph=gname, task="sssp", engine="digraph vertex-async", time_s=t)
        try:
            import igraph as ig
        except ImportError:
            ig = None
        if ig is not None:
            G = ig.Graph(n=n, edges=np.column_stack([src, dst]).tolist(), directed=True)
            t, pr = median_time(lambda: np.asarray(G.pagerank(damping=0.85, directed=True,
                                                              implementation="prpack")), args.repeat)
            add(graph=gname, task="pagerank", engine="igraph PRPACK", time_s=t,
                l1_error=float(np.abs(pr - exact).sum()))
            G2 = G.copy()
            G2.simplify(multiple=False, loops=True)
            t, c = median_time(lambda: np.asarray(G2.coreness(mode="all")), args.repeat)
            add(graph=gname, task="kcore", engine="igraph coreness", time_s=t,
                check="equal" if np.array_equal(c, core) else "DIFFERENT")
            t, d = median_time(lambda: np.asarray(G.distances(source=hub, mode="out")[0], float),
                               args.repeat)
            add(graph=gname, task="sssp", engine="igraph distances (BFS)", time_s=t,
                check="equal" if np.array_equal(d, dist) else "DIFFERENT")
        try:
            import networkit as nk
        except ImportError:
            nk = None
        if nk is not None:
            nk.setNumberOfThreads(2)
            Gk = nk.Graph(n, weighted=False, directed=True)
            Gk.addEdges((src, dst))
            for tol in (1e-9, 1e-10, 1e-11, 1e-12, 1e-13, 1e-14):
                def run_nk():
                    pr_ = nk.centrality.PageRank(Gk, damp=0.85, tol=tol)
                    pr_.run()
                    v = np.asarray(pr_.scores())
                    return v / v.sum()
                t, v = median_time(run_nk, args.repeat)
                err = float(np.abs(v - exact).sum())
                if err <= ours or tol == 1e-14:
                    add(graph=gname, task="pagerank", engine=f"networkit (2 threads, tol={tol:g})",
                        time_s=t, l1_error=err)
                    break
    if args.json:
        Path(args.json).write_text(json.dumps(dict(rows=rows, date=time.strftime("%Y-%m-%d"),
                                                   cores=os.cpu_count()), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
