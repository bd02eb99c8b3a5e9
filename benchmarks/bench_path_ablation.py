"""Ablation of the path engine (issue 4): which mechanism saves arc updates, and what it costs.

PageRank to an L1 error bound of 1e-8 (``--tol``) with ``mode="path"`` variants: priority by
pending mass / the paper's Pri(p) / none, DAG-layer dispatch off, skipping of converged paths off,
both off; then the *path representation* rows: per-arc mirrors on every path (the engine before
``short_path_push``), short paths pushed at vertex level for several ``K``, hot one-arc paths
walked or pushed, the check pass separate or fused into the walk; the *window* rows: running
ahead into the next DAG layers (``layer_window``, ``run_ahead_local``); the *state* rows: one
residual per vertex, SCC by SCC (``state="vertex"``, the default for linear systems), against the
per-arc state; ``bsp`` and
``vertex-async`` alongside.  One PathSet per graph (built once, untimed; the short-arc groups of each ``K`` are
built on the warm-up run and their build time reported apart).  Every variant runs once as a
warm-up, then ``--repeat`` passes run every variant in turn (interleaved, so that load from other
jobs hits all variants alike); the median and the minimum are reported.  Prints a table and
writes JSON.

    python benchmarks/bench_path_ablation.py --graphs cnr-2000 dblp-2010 --repeat 5
    python benchmarks/bench_path_ablation.py --only representation   # the representation rows
    python benchmarks/bench_path_ablation.py --only window           # the run-ahead rows
    python benchmarks/bench_path_ablation.py --only state            # vertex vs arc state
"""

import argparse
import dataclasses
import json
import os
import statistics
import sys
import time
from pathlib import Path


ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import digraph  # noqa: E402
from digraph.dispatch import bsp, dag_push, paths, vertex_async  # noqa: E402
from digraph.result import RunStats  # noqa: E402

DATASETS = ROOT.parent / "shared" / "datasets"
GRAPHS = {"cnr-2000": ("cnr-2000.txt.gz", None), "dblp-2010": ("dblp-2010.txt.gz", 326186)}
VARIANTS = [
    ("bsp", None),
    ("vertex-async", None),
    ("path: pending priority (arc state)", dict(priority="pending", state="arc")),
    ("path: paper Pri(p)", dict(priority="paper", state="arc")),
    ("path: no priority (path-nopriority, arc state)", dict(priority="none", state="arc")),
    ("path: no priority, DAG off", dict(priority="none", dag=False, state="arc")),
    ("path: no priority, skipping off", dict(priority="none", skip=False, state="arc")),
    ("path: no priority, DAG and skipping off", dict(priority="none", dag=False, skip=False,
                                                     state="arc")),
]
# where what is pending lives (issue 4): per vertex, SCC by SCC (dispatch/dag_push.py), or per arc
STATE = [
    ("state: vertex, pending priority (default)", dict(state="vertex")),
    ("state: vertex, no priority (path-nopriority)", dict(state="vertex", priority="none")),
    ("state: vertex, path order inside components", dict(state="vertex", order="path")),
    ("state: vertex, no component split", dict(state="vertex", split_arcs=1 << 62)),
    ("state: arc (K=2, fused, layer by layer)", dict(state="arc")),
]
# path representation (issue 4, item 3): pending priority unless named
REPRESENTATION = [
    ("repr: mirrors on every path, separate check", dict(short_path_push=0, fuse_check=False)),
    ("repr: mirrors on every path, fused check", dict(short_path_push=0, fuse_check=True)),
    ("repr: push K=1, fused", dict(short_path_push=1)),
    ("repr: push K=2, fused (default)", dict(short_path_push=2)),
    ("repr: push K=2, separate check", dict(short_path_push=2, fuse_check=False)),
    ("repr: push K=2, hot one-arc paths walked", dict(short_path_push=2, push_hot_arcs=False)),
    ("repr: push K=4, fused", dict(short_path_push=4)),
    ("repr: push K=16, fused", dict(short_path_push=16)),
    ("repr: no priority, mirrors, separate check",
     dict(priority="none", short_path_push=0, fuse_check=False)),
    ("repr: no priority, push K=2, fused (default)", dict(priority="none", short_path_push=2)),
]
# running ahead into the next DAG layers (issue 4): layer_window W, whole-SCC partitions too or not
WINDOW = [
    ("window: layer by layer W=1 (default)", dict(layer_window=1)),
    ("window: W=2, split SCC-vertices", dict(layer_window=2)),
    ("window: W=3, split SCC-vertices", dict(layer_window=3)),
    ("window: all layers, split SCC-vertices", dict(layer_window=0)),
    ("window: W=2, all partitions", dict(layer_window=2, run_ahead_local=True)),
    ("window: W=4, all partitions", dict(layer_window=4, run_ahead_local=True)),
    ("window: all layers, all partitions", dict(layer_window=0, run_ahead_local=True)),
    ("window: no priority, W=1 (default)", dict(priority="none", layer_window=1)),
    ("window: no priority, all layers, split", dict(priority="none", layer_window=0)),
    ("window: no priority, all layers, all partitions",
     dict(priority="none", layer_window=0, run_ahead_local=True)),
]


def run_variant(g, ps, system, tol, name, opts):
    stats = RunStats.new()
    t0 = time.perf_counter()
    if name == "bsp":
        x, ok = bsp.solve(g, system, tol=tol, max_iter=100000, stats=stats)
    elif name == "vertex-async":
        x, ok = vertex_async.solve(g, system, tol=tol, max_iter=100000, stats=stats)
    elif "order" in opts or "split_arcs" in opts:
        settings = dataclasses.replace(
            dag_push.DEFAULT, split_arcs=opts.get("split_arcs", dag_push.DEFAULT.split_arcs))
        x, ok = dag_push.solve(g, system, tol=tol, max_iter=100000, stats=stats, pathset=ps,
                               order=opts.get("order", "vertex"), settings=settings)
    else:
        x, ok = paths.solve(g, system, tol=tol, max_iter=100000, stats=stats, pathset=ps, **opts)
    return time.perf_counter() - t0, x, ok, stats


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--graphs", nargs="+", default=["cnr-2000"],
                   help=f"{', '.join(sorted(GRAPHS))} or rmatS (R-MAT, 2^S vertices, 16 arcs each)")
    p.add_argument("--tol", type=float, default=1e-8)
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--json", default=None)
    p.add_argument("--only", choices=["ablation", "representation", "window", "state"], default=None,
                   help="run only the mechanism rows, the representation rows or the run-ahead "
                        "rows (with bsp and vertex-async)")
    args = p.parse_args(argv)
    variants = VARIANTS + STATE + REPRESENTATION + WINDOW
    if args.only == "ablation":
        variants = VARIANTS
    elif args.only == "representation":
        variants = VARIANTS[:2] + REPRESENTATION
    elif args.only == "window":
        variants = VARIANTS[:2] + WINDOW
    elif args.only == "state":
        variants = VARIANTS[:2] + STATE
    rows = []
    for gname in args.graphs:
        if gname.startswith("rmat"):
            from digraph.generators import rmat
            src, dst = rmat(int(gname[4:]), seed=int(gname[4:]))
            g = digraph.Graph.from_arrays(src, dst, num_vertices=1 << int(gname[4:]))
        else:
            fname, nv = GRAPHS[gname]
            if not (DATASETS / fname).exists():
                print(f"skip {gname}: not found", file=sys.stderr)
                continue
            g = digraph.load(DATASETS / fname, num_vertices=nv)
        ps = digraph.preprocess(g)
        algo = digraph.algorithms.PageRank()
        system = algo.prepare(g, alpha=0.85, personalization=None, weights=True)
        build = {}
        for name, opts in variants:  # warm-up: compilation, short-arc groups of each K
            _, _, _, st = run_variant(g, ps, system, args.tol, name, opts)
            build[name] = st.get("time_representation", 0.0) + st.get("time_condensation", 0.0)
        times = {name: [] for name, _ in variants}
        last = {}
        for _ in range(args.repeat):
            for name, opts in variants:
                t, x, ok, st = run_variant(g, ps, system, args.tol, name, opts)
                times[name].append(t)
                last[name] = (ok, st)
        base = last["bsp"][1]["arc_updates"]
        t_bsp = statistics.median(times["bsp"])
        for name, _ in variants:
            ok, st = last[name]
            row = dict(graph=gname, variant=name, time_s=statistics.median(times[name]),
                       time_min_s=min(times[name]), times_s=times[name],
                       vs_bsp_time=statistics.median(times[name]) / t_bsp, converged=bool(ok),
                       rounds=st["rounds"], arc_updates=st["arc_updates"],
                       vs_bsp=st["arc_updates"] / base, arcs_examined=st.get("arcs_examined"),
                       groups_examined=st.get("groups_examined"),
                       vertex_pushes=st.get("vertex_pushes"), pushed_arcs=st.get("pushed_arcs"),
                       push_groups=st.get("push_groups"), build_groups_s=build[name],
                       error_bound=st.get("error_bound"), finished_by=st.get("finished_by"),
                       layer_rounds=st.get("layer_rounds"),
                       run_ahead_arc_updates=st.get("run_ahead_arc_updates"),
                       scc_ran_once=st.get("scc_ran_once"), scc_ran=st.get("scc_ran"))
            rows.append(row)
            print(f"{gname:<10} {name:<46} {row['time_s'] * 1e3:>7.0f} ms (min {row['time_min_s'] * 1e3:>6.0f}, "
                  f"{row['vs_bsp_time']:>5.2f}x bsp) {row['rounds']:>5} rounds "
                  f"{row['arc_updates']:>12,d} arcs {row['vs_bsp']:>6.3f}x  examined "
                  f"{row['arcs_examined'] or 0:>12,d} groups {row['groups_examined'] or 0:>11,d} "
                  f"bound {row['error_bound']:.2g} build {row['build_groups_s'] * 1e3:.0f} ms",
                  flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(dict(rows=rows, date=time.strftime("%Y-%m-%d"),
                                                   cores=os.cpu_count()), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
