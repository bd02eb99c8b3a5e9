"""Ablation of the path engine (issue 4): which mechanism saves arc updates, and what it costs.

PageRank to an L1 error bound of 1e-8 (``--tol``) with ``mode="path"`` variants: priority by
pending mass / the paper's Pri(p) / none, DAG-layer dispatch off, skipping of converged paths off,
both off; ``bsp`` and ``vertex-async`` alongside.  One PathSet per graph (built once, untimed);
the time is the median of ``--repeat`` runs after a warm-up.  Prints a table and writes JSON.

    python benchmarks/bench_path_ablation.py --graphs cnr-2000 dblp-2010
"""

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path


ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import digraph  # noqa: E402
from digraph.dispatch import bsp, paths, vertex_async  # noqa: E402
from digraph.result import RunStats  # noqa: E402

DATASETS = ROOT.parent / "shared" / "datasets"
GRAPHS = {"cnr-2000": ("cnr-2000.txt.gz", None), "dblp-2010": ("dblp-2010.txt.gz", 326186)}
VARIANTS = [
    ("bsp", None),
    ("vertex-async", None),
    ("path: pending priority (default)", dict(priority="pending")),
    ("path: paper Pri(p)", dict(priority="paper")),
    ("path: no priority (path-nopriority)", dict(priority="none")),
    ("path: no priority, DAG off", dict(priority="none", dag=False)),
    ("path: no priority, skipping off", dict(priority="none", skip=False)),
    ("path: no priority, DAG and skipping off", dict(priority="none", dag=False, skip=False)),
]


def run_variant(g, ps, system, tol, name, opts):
    stats = RunStats.new()
    t0 = time.perf_counter()
    if name == "bsp":
        x, ok = bsp.solve(g, system, tol=tol, max_iter=100000, stats=stats)
    elif name == "vertex-async":
        x, ok = vertex_async.solve(g, system, tol=tol, max_iter=100000, stats=stats)
    else:
        x, ok = paths.solve(g, system, tol=tol, max_iter=100000, stats=stats, pathset=ps, **opts)
    return time.perf_counter() - t0, x, ok, stats


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--graphs", nargs="+", default=["cnr-2000"], choices=sorted(GRAPHS))
    p.add_argument("--tol", type=float, default=1e-8)
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    rows = []
    for gname in args.graphs:
        fname, nv = GRAPHS[gname]
        if not (DATASETS / fname).exists():
            print(f"skip {gname}: not found", file=sys.stderr)
            continue
        g = digraph.load(DATASETS / fname, num_vertices=nv)
        ps = digraph.preprocess(g)
        algo = digraph.algorithms.PageRank()
        system = algo.prepare(g, alpha=0.85, personalization=None, weights=True)
        base = None
        for name, opts in VARIANTS:
            run_variant(g, ps, system, args.tol, name, opts)  # warm-up (compilation)
            ts = []
            for _ in range(args.repeat):
                t, x, ok, st = run_variant(g, ps, system, args.tol, name, opts)
                ts.append(t)
            if base is None:
                base = st["arc_updates"]
            row = dict(graph=gname, variant=name, time_s=statistics.median(ts), converged=bool(ok),
                       rounds=st["rounds"], arc_updates=st["arc_updates"],
                       vs_bsp=st["arc_updates"] / base, arcs_examined=st.get("arcs_examined"),
                       error_bound=st.get("error_bound"), finished_by=st.get("finished_by"))
            rows.append(row)
            print(f"{gname:<10} {name:<42} {row['time_s'] * 1e3:>9.0f} ms {row['rounds']:>6} rounds "
                  f"{row['arc_updates']:>12,d} arcs {row['vs_bsp']:>6.3f}x  bound {row['error_bound']:.2g}",
                  flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(dict(rows=rows, date=time.strftime("%Y-%m-%d"),
                                                   cores=os.cpu_count()), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
