#!/usr/bin/env python
"""Benchmark of the preprocessing stage (digraph.preprocess): time per stage, path statistics,
cache save / reload, peak memory, against scipy's CSR construction of the same graph.

Graphs: cnr-2000 and dblp-2010 (num_vertices=326186) from ../shared/datasets, and R-MAT graphs
2^18..2^20 with 16 arcs per vertex (a=0.57, b=0.19, c=0.19, seed 0, digraph.generators.rmat).
Every timing is the median of ``--repeat`` runs after one warm-up; the first call of the process
(Numba compilation, or loading compiled kernels from Numba's cache) is reported separately.
``rss0MB`` is the resident size before the first preprocess (graph, degrees, the scipy runs'
leftovers), ``rssMB`` the process' peak; run one graph per process to read a graph's own peak.

Examples::

    python benchmarks/bench_preprocess.py --graphs cnr-2000 dblp-2010 --jobs 2 --json out.json
    python benchmarks/bench_preprocess.py --graphs cnr-2000 --jobs 1 --clock thread   # CPU time per stage
"""

import argparse
import gc
import gzip
import json
import platform
import resource
import shutil
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DATASETS = ROOT.parent / "shared" / "datasets"
REAL = {"cnr-2000": None, "dblp-2010": 326186}
STAGES = ("decompose", "merge", "label", "scc", "dag", "order", "total")


def read_edges(name, datasets):
    path = Path(datasets) / f"{name}.txt.gz"
    with gzip.open(path, "rb") as f:
        a = np.array(f.read().split(), dtype=np.int64).reshape(-1, 2)
    return a[:, 0].copy(), a[:, 1].copy()


def make_graph(name, datasets):
    from digraph.graph import Graph
    if name in REAL:
        s, d = read_edges(name, datasets)
        nv = REAL[name]
    elif name.startswith("rmat"):
        from digraph.generators import rmat
        scale = int(name[4:])
        s, d = rmat(scale, 16, seed=0)
        nv = 1 << scale
    else:
        raise SystemExit(f"unknown graph {name!r} (cnr-2000, dblp-2010, rmat18, rmat19, rmat20, ...)")
    t = time.perf_counter()
    g = Graph.from_arrays(s, d, num_vertices=nv, name=name)
    t_graph = time.perf_counter() - t
    return g, s, d, t_graph


def current_rss_mb():
    """Resident set size of this process now (Linux /proc; None elsewhere)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * resource.getpagesize() / 2**20
    except OSError:
        return None


CLOCK = time.perf_counter


def use_thread_clock():
    """Time stages (and scipy) by the calling thread's CPU time: with ``--jobs 1`` every kernel
    runs on that thread, so the figures do not grow when other jobs preempt it."""
    global CLOCK
    import importlib
    import types
    CLOCK = time.thread_time
    shim = types.SimpleNamespace(perf_counter=time.thread_time)
    for mod in ("digraph.preprocess", "digraph.preprocess.dag"):
        importlib.import_module(mod).time = shim


def median_time(fn, repeat):
    ts = []
    for _ in range(repeat):
        t = CLOCK()
        fn()
        ts.append(CLOCK() - t)
    return float(np.median(ts))


def scipy_csr_time(s, d, n, repeat):
    import scipy.sparse as sp
    data = np.ones(s.size)
    sp.csr_array((data, (s, d)), shape=(n, n))                       # warm-up
    t_sorted = median_time(lambda: sp.csr_array((data, (s, d)), shape=(n, n)), repeat)
    perm = np.random.default_rng(0).permutation(s.size)
    ss, dd = s[perm], d[perm]
    t_shuffled = median_time(lambda: sp.csr_array((data, (ss, dd)), shape=(n, n)), repeat)
    return t_sorted, t_shuffled


def bench_graph(name, args):
    from digraph.paths import PathSet
    from digraph.preprocess import preprocess

    g, s, d, t_graph = make_graph(name, args.datasets)
    params = dict(dmax=args.dmax, merge=args.merge, max_path_length=args.max_path_length or None,
                  hot_ratio=args.hot_ratio, partition_arcs=args.partition_arcs)
    row = {"graph": name, "vertices": g.num_vertices, "arcs": g.num_arcs, "params": params,
           "jobs": args.jobs, "graph_build_s": t_graph}
    row["scipy_csr_s"], row["scipy_csr_shuffled_s"] = scipy_csr_time(s, d, g.num_vertices, args.repeat)
    del s, d
    g.fingerprint()
    g.in_degree, g.out_degree
    gc.collect()
    row["rss_before_mb"] = current_rss_mb()        # graph + inputs, before any preprocessing
    preprocess(g, jobs=args.jobs, **params)                               # warm-up
    runs = []
    for _ in range(args.repeat):
        gc.collect()
        ps = preprocess(g, jobs=args.jobs, **params)
        runs.append(ps.timings)
    row["time_s"] = {k: float(np.median([r[k] for r in runs])) for k in STAGES}
    row["vs_scipy_csr"] = row["time_s"]["total"] / row["scipy_csr_s"]
    # peak memory of one run (numpy allocations via tracemalloc; Numba's own allocations are not
    # traced, so the process' peak RSS is given too)
    gc.collect()
    tracemalloc.start()
    preprocess(g, jobs=args.jobs, **params)
    row["tracemalloc_peak_mb"] = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    row["max_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    stats = ps.stats()
    row["stats"] = {k: v for k, v in stats.items() if not k.startswith("time_")}
    tmp = Path(tempfile.mkdtemp(prefix="bench_pp_"))
    try:
        row["cache_save_s"] = median_time(lambda: ps.save(tmp / "cache"), args.repeat)
        row["cache_reload_s"] = median_time(lambda: PathSet.load(tmp / "cache", graph=g, expect_params=ps.params),
                                            args.repeat)
        row["cache_mb"] = sum(f.stat().st_size for f in (tmp / "cache").iterdir()) / 2**20
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return row


def first_call_time(jobs):
    """Seconds of the first preprocess of the process: compilation or loading cached kernels."""
    from digraph.graph import Graph
    from digraph.preprocess import preprocess
    g = Graph.from_arrays([0, 1, 2, 2, 3], [1, 2, 0, 3, 3])
    t = time.perf_counter()
    for merge in ("constrained", "trails"):
        preprocess(g, jobs=jobs, merge=merge)
    return time.perf_counter() - t


def table(rows):
    cols = [("graph", "{}"), ("arcs", "{:,}"), ("paths", "{:,}"), ("mean", "{:.3f}"), ("arcw", "{:.2f}"),
            ("bound", "{}"), ("scc", "{:,}"), ("giantP", "{:.3f}"), ("giantA", "{:.3f}"), ("layers", "{}"),
            ("bal", "{:.2f}")] + [(s, "{:.3f}") for s in STAGES] + [("csr", "{:.3f}"), ("x csr", "{:.1f}"),
                                                                       ("reload", "{:.4f}"), ("rss0MB", "{:.0f}"),
                                                                       ("rssMB", "{:.0f}")]
    lines = []
    head = [c for c, _ in cols]
    body = []
    for r in rows:
        st = r["stats"]
        ub = st["mean_length_upper_bound"]
        vals = [r["graph"], r["arcs"], st["num_paths"], st["mean_length"], st["arc_weighted_mean_length"],
                "-" if ub is None else f"{ub:.3f}", st["num_scc"], st["giant_scc_path_share"],
                st["giant_scc_arc_share"], st["num_layers"], st["partition_balance"]]
        vals += [r["time_s"][s] for s in STAGES]
        vals += [r["scipy_csr_s"], r["vs_scipy_csr"], r["cache_reload_s"], r["rss_before_mb"] or 0, r["max_rss_mb"]]
        body.append([fmt.format(v) if not isinstance(v, str) else v for (c, fmt), v in zip(cols, vals)])
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(head)]
    lines.append("  ".join(h.rjust(w) for h, w in zip(head, widths)))
    for b in body:
        lines.append("  ".join(v.rjust(w) for v, w in zip(b, widths)))
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphs", nargs="+", default=["cnr-2000", "dblp-2010", "rmat18", "rmat19", "rmat20"],
                    help="graphs to run (default: %(default)s)")
    ap.add_argument("--datasets", default=str(DATASETS), help="folder of the .txt.gz files (default: %(default)s)")
    ap.add_argument("--jobs", type=int, default=2, help="worker threads (default: %(default)s)")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per graph, median reported (default: %(default)s)")
    ap.add_argument("--dmax", type=int, default=16)
    ap.add_argument("--merge", default="constrained", choices=["constrained", "trails", "none"])
    ap.add_argument("--max-path-length", type=int, default=16, help="0 = no cap")
    ap.add_argument("--hot-ratio", type=float, default=0.1)
    ap.add_argument("--partition-arcs", type=int, default=4096)
    ap.add_argument("--json", default="bench_preprocess.json", help="output JSON file (default: %(default)s)")
    ap.add_argument("--clock", choices=["wall", "thread"], default="wall",
                    help="wall: perf_counter; thread: CPU time of the calling thread, meant for --jobs 1 "
                         "on a machine shared with other jobs (default: %(default)s)")
    args = ap.parse_args(argv)
    if args.clock == "thread":
        if args.jobs != 1:
            raise SystemExit("--clock thread measures one thread: use it with --jobs 1")
        use_thread_clock()

    first = first_call_time(args.jobs)
    rows = []
    for name in args.graphs:
        if name in REAL and not (Path(args.datasets) / f"{name}.txt.gz").is_file():
            print(f"skipping {name}: not in {args.datasets}", file=sys.stderr)
            continue
        rows.append(bench_graph(name, args))
        print(f"done {name}", file=sys.stderr)
    print(table(rows))
    print(f"first call (Numba compile or cache load): {first:.2f} s")
    import digraph
    out = {"date": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": platform.platform(),
           "processor": platform.processor(), "python": platform.python_version(),
           "digraph": getattr(digraph, "__version__", "?"), "args": vars(args),
           "first_call_s": first, "graphs": rows}
    with open(args.json, "w") as f:
        json.dump(out, f, indent=1, default=float)
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
