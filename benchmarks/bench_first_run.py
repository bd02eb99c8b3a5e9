"""The first answer on a fresh install: each measurement one new process with an empty Numba
cache folder, timing ``import digraph``, the load and one ``digraph.run`` (with the run's own
``time_compile``), and the whole process from its start.  Several checkouts alternate
(``--trees``: the digraph each imports, as ``DIGRAPH_TREE`` does for the harness), so a change
is compared on the same machine in the same minutes.

    NUMBA_NUM_THREADS=2 python benchmarks/bench_first_run.py --trees . ../base --repeat 3 \\
        --out benchmarks/results/first_run_cpu2.json

Cases: PageRank and SSSP on the small graph of ``docs/first_run.md`` (6 arcs) and on R-MAT
``rmat(12, 8, seed=1)`` (32,768 arcs).  One row per case and tree: the median of ``--repeat``
processes (``method`` "digraph first run", ``params.tree`` the tree's commit or folder).
``--cases all:warmup`` times ``digraph.warmup()`` the same way.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import harness  # noqa: E402

CHILD = r"""
import json, os, sys, time
t0 = time.perf_counter()
sys.path.insert(0, os.environ["TREE"])
import digraph
from digraph import generators
t_import = time.perf_counter() - t0
graph, algorithm = sys.argv[1], sys.argv[2]
if algorithm == "warmup":  # digraph warmup: every CPU kernel, as the command line runs it
    t2 = time.perf_counter()
    done = digraph.warmup()
    print(json.dumps({"import_s": t_import, "load_s": 0.0, "run_s": time.perf_counter() - t2,
                      "time_compile": sum(d["compiled"] for d in done),
                      "ran": f"{len(done)} items", "vertices": 0, "arcs": 0,
                      "total_s": time.perf_counter() - t0}))
    sys.exit(0)
t1 = time.perf_counter()
arcs = (([0, 1, 2, 2, 3, 4], [1, 2, 0, 3, 4, 3]) if graph == "small"
        else generators.rmat(12, 8, seed=1))
g = digraph.load(arcs)
t_load = time.perf_counter() - t1
kw = {"source": g.vertex_ids[0]} if algorithm == "sssp" else {}
t2 = time.perf_counter()
r = digraph.run(g, algorithm, **kw)
t_run = time.perf_counter() - t2
print(json.dumps({"import_s": t_import, "load_s": t_load, "run_s": t_run,
                  "time_compile": r.stats["time_compile"], "ran": r.stats["mode"],
                  "vertices": g.num_vertices, "arcs": g.num_arcs,
                  "total_s": time.perf_counter() - t0}))
"""

CASES = [("small", "pagerank"), ("small", "sssp"), ("rmat12", "pagerank"), ("rmat12", "sssp"),
         ("all", "warmup")]
"""(graph, algorithm): ``("all", "warmup")`` times ``digraph.warmup()`` (every CPU kernel, its
worker processes included) instead of a run; its ``time_compile`` sums the items' compilation."""


def once(tree, graph, algorithm):
    """One fresh process with an empty cache folder: its timings (a dict), wall time added."""
    with tempfile.TemporaryDirectory(prefix="digraph-first-run-") as cache:
        env = dict(os.environ, TREE=str(tree), NUMBA_CACHE_DIR=cache, DIGRAPH_QUIET="1")
        t = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", CHILD, graph, algorithm], env=env,
                             capture_output=True, text=True, check=True)
        wall = time.perf_counter() - t
    row = json.loads(out.stdout.strip().splitlines()[-1])
    row["wall_s"] = wall
    return row


def tree_name(tree):
    """The tree's commit (short) when it is the top of a git checkout, else its folder (a tree
    unpacked inside another checkout is not that checkout's commit)."""
    try:
        top, head = subprocess.run(["git", "-C", str(tree), "rev-parse", "--show-toplevel",
                                    "--short", "HEAD"], capture_output=True, text=True,
                                   check=True).stdout.split()
    except (OSError, ValueError, subprocess.CalledProcessError):
        return str(tree)
    return head if Path(top).resolve() == Path(tree).resolve() else str(tree)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trees", nargs="+", default=[str(HERE.parent)])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cases", nargs="+", metavar="GRAPH:ALGORITHM",
                    default=[f"{g}:{a}" for g, a in CASES[:4]],
                    help="cases to time (default: the four runs; all:warmup times the warm-up)")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    trees = [Path(t).resolve() for t in args.trees]
    cases = [tuple(c.split(":", 1)) for c in args.cases]
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        ap.error(f"unknown cases {unknown}; choose among {[':'.join(c) for c in CASES]}")
    got = {(t, c): [] for t in trees for c in cases}
    for _ in range(args.repeat):  # trees and cases alternate: the same minutes for each
        for c in cases:
            for t in trees:
                got[t, c].append(once(t, *c))
    rows = []
    common = harness.common_fields()
    for t in trees:
        name = tree_name(t)
        for c in cases:
            runs = got[t, c]
            med = {k: statistics.median(r[k] for r in runs)
                   for k in ("import_s", "load_s", "run_s", "time_compile", "total_s", "wall_s")}
            print(f"{name:>10} {c[0]:>7} {c[1]:<9} ran {runs[0]['ran']:<13} total "
                  f"{med['total_s']:5.2f} s (import {med['import_s']:.2f}, load "
                  f"{med['load_s']:.2f}, run {med['run_s']:.2f}, of it compile "
                  f"{med['time_compile']:.2f}); process {med['wall_s']:.2f} s")
            rows.append({**common, "graph": c[0], "vertices": runs[0]["vertices"],
                         "arcs": runs[0]["arcs"], "weighted": False, "algorithm": c[1],
                         "method": f"digraph first run ({name})", "mode": "default",
                         "ran": runs[0]["ran"], "device": "cpu", "threads": None,
                         "params": {"tree": name}, "tol": None,
                         "timings": {"median_s": med["total_s"], "min_s": min(
                             r["total_s"] for r in runs), "max_s": max(r["total_s"] for r in runs),
                             "repeat": len(runs), "parts_median_s": med,
                             "times_s": [r["total_s"] for r in runs]}})
    if args.out:
        harness.write_rows(args.out, rows, note="bench_first_run.py: fresh process and empty "
                           "Numba cache per measurement; timings.median_s is the process's "
                           "time from its start to the answer")
    return 0


if __name__ == "__main__":
    sys.exit(main())
