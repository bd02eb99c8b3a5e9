"""Time load + run of every algorithm on real graphs, beside simple scipy baselines.

Prints a table and writes JSON.  Protocol (docs/design.md §6): the first run of each algorithm is a
warm-up (Numba compilation or cache loading, reported separately as ``compile``); the time shown is
the median of ``--repeat`` runs after it; PageRank is compared at equal accuracy (the L1 error to
an exact answer is reported for both engines).

    python benchmarks/bench_algorithms.py                       # cnr-2000 and dblp-2010
    python benchmarks/bench_algorithms.py --graphs cnr-2000 --repeat 5 --json out.json
    python benchmarks/bench_algorithms.py --modes bsp path path-nopriority

Path modes read their PathSet from a cache in the temporary folder (built on the warm-up run), so
their time excludes preprocessing, which is timed on its own row.
"""

import argparse
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

import digraph  # noqa: E402

DATASETS = ROOT.parent / "shared" / "datasets"
GRAPHS = {  # name: (file, num_vertices or None)
    "cnr-2000": ("cnr-2000.txt.gz", None),
    "dblp-2010": ("dblp-2010.txt.gz", 326186),
    "cit-HepPh": ("cit-HepPh.txt.gz", None),
    "wiki-Vote": ("wiki-Vote.txt.gz", None),
}


def timed(fn, repeat):
    out = None
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts), out


def exact_pagerank(g, alpha=0.85):
    """Power iteration in float64 with scipy until the L1 change is below 1e-15 (reference)."""
    a = g.to_scipy().T.tocsr()
    outw = np.asarray(g.to_scipy().sum(axis=1)).ravel()
    inv = np.divide(alpha, outw, out=np.zeros_like(outw), where=outw > 0)
    n = g.num_vertices
    x = np.full(n, 1.0 / n)
    b = np.full(n, (1 - alpha) / n)
    for _ in range(2000):
        nx_ = b + a @ (inv * x)
        done = np.abs(nx_ - x).sum() < 1e-15
        x = nx_
        if done:
            break
    return x / x.sum()


def scipy_pagerank(a_t, inv, n, alpha, rounds):
    """scipy CSR power iteration (unnormalised form, as the engine solves it) for ``rounds`` rounds."""
    b = np.full(n, (1 - alpha) / n)
    x = b.copy()
    for _ in range(rounds):
        x = b + a_t @ (inv * x)
    return x / x.sum()


def rounds_to_reach(a_t, inv, n, alpha, target_err, exact):
    """Fewest power-iteration rounds whose answer is within ``target_err`` (L1) of ``exact``."""
    b = np.full(n, (1 - alpha) / n)
    x = b.copy()
    for k in range(1, 10001):
        x = b + a_t @ (inv * x)
        if np.abs(x / x.sum() - exact).sum() <= target_err:
            return k
    return 10000


def bench_graph(name, repeat, threads, tol, modes):
    fname, nv = GRAPHS[name]
    path = DATASETS / fname
    if not path.exists():
        print(f"skip {name}: {path} not found", file=sys.stderr)
        return []
    rows = []
    t_load, g = timed(lambda: digraph.load(path, num_vertices=nv), repeat)
    rows.append(dict(graph=name, task="load", engine="digraph", time_s=t_load,
                     detail=f"{g.num_vertices} vertices, {g.num_arcs} arcs"))
    hub = int(np.argmax(g.out_degree))
    source = g.vertex_ids[hub].item()
    seeds = g.vertex_ids[np.argsort(-g.out_degree, kind="stable")[:10]].tolist()
    exact = exact_pagerank(g)
    runs = [("pagerank", dict(tol=tol)), ("adsorption", dict(seeds=seeds, tol=tol)),
            ("sssp", dict(source=source)), ("kcore", {})]
    ps = digraph.preprocess(g)  # path modes reuse one PathSet; its time is measured apart
    t_pre, ps = timed(lambda: digraph.preprocess(g), repeat)
    rows.append(dict(graph=name, task="preprocess", engine="digraph", time_s=t_pre,
                     detail=f"{ps.num_paths} paths, {ps.num_scc} SCC-vertices"))
    for algo, params in runs:
        for mode in modes:
            extra = {}
            if mode.startswith("path"):
                extra = {"cache": _cache_dir(name)}
            t0 = time.perf_counter()
            first = digraph.run(g, algo, threads=threads, mode=mode, **extra, **params)
            t_first = time.perf_counter() - t0
            t_run, r = timed(lambda: digraph.run(g, algo, threads=threads, mode=mode, **extra,
                                                 **params), repeat)
            row = dict(graph=name, task=algo, engine=f"digraph {mode}", time_s=t_run,
                       compute_s=r.stats["time_compute"], compile_s=first.stats["time_compile"],
                       first_call_s=t_first, rounds=r.stats["rounds"],
                       vertex_updates=r.stats["vertex_updates"], arc_updates=r.stats["arc_updates"])
            if algo == "pagerank":
                row["l1_error"] = float(np.abs(r.values - exact).sum())
            if algo in ("pagerank", "adsorption"):
                row["error_bound"] = r.stats["error_bound"]
            rows.append(row)
        if algo == "pagerank":
            row = [r_ for r_ in rows if r_["task"] == "pagerank" and r_["graph"] == name][0]
        if algo == "pagerank":
            a_t = g.to_scipy().T.tocsr()
            outw = np.asarray(g.to_scipy().sum(axis=1)).ravel()
            inv = np.divide(0.85, outw, out=np.zeros_like(outw), where=outw > 0)
            k = rounds_to_reach(a_t, inv, g.num_vertices, 0.85, row["l1_error"], exact)
            t_sp, x = timed(lambda: scipy_pagerank(a_t, inv, g.num_vertices, 0.85, k), repeat)
            rows.append(dict(graph=name, task=algo, engine="scipy power iteration (1 thread)",
                             time_s=t_sp, rounds=k, l1_error=float(np.abs(x - exact).sum()),
                             detail="the fewest rounds reaching the same L1 error (found in an untimed pass)"))
        if algo == "sssp":
            from scipy.sparse.csgraph import dijkstra
            a = g.to_scipy()
            t_sp, d = timed(lambda: dijkstra(a, indices=hub), repeat)
            assert np.array_equal(d, r.values)
            rows.append(dict(graph=name, task=algo, engine="scipy dijkstra (1 thread)", time_s=t_sp))
    return rows


def _cache_dir(name):
    import tempfile
    return Path(tempfile.gettempdir()) / f"digraph-bench-{name}"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--graphs", nargs="+", default=["cnr-2000", "dblp-2010"], choices=sorted(GRAPHS))
    p.add_argument("--repeat", type=int, default=3, help="timed runs after the warm-up (median)")
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--tol", type=float, default=1e-8, help="PageRank/adsorption error bound")
    p.add_argument("--json", default=None, help="write the rows here")
    p.add_argument("--modes", nargs="+", default=["bsp", "vertex-async", "path"],
                   choices=["bsp", "vertex-async", "path", "path-nopriority"])
    args = p.parse_args(argv)
    rows = []
    for name in args.graphs:
        rows += bench_graph(name, args.repeat, args.threads, args.tol, args.modes)
    print(f"\nmachine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, digraph {digraph.__version__}")
    hdr = (f"{'graph':<10} {'task':<11} {'engine':<34} {'time ms':>9} {'compile ms':>10} {'rounds':>7} "
           f"{'arc updates':>12} {'L1 err':>9}")
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        err = f"{r['l1_error']:.2g}" if "l1_error" in r else ""
        comp = f"{r['compile_s'] * 1e3:.0f}" if "compile_s" in r else ""
        print(f"{r['graph']:<10} {r['task']:<11} {r['engine']:<34} {r['time_s'] * 1e3:>9.1f} {comp:>10} "
              f"{r.get('rounds', ''):>7} {r.get('arc_updates', ''):>12} {err:>9}")
    if args.json:
        Path(args.json).write_text(json.dumps(dict(rows=rows, date=time.strftime("%Y-%m-%d"),
                                                   cores=os.cpu_count()), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
