"""Path preprocessing: ``digraph.preprocess`` per graph, and its cache saved and reloaded.

Rows per graph (method):

* ``preprocess``: a build of the PathSet (hot/cold paths, DAG sketch, layers, partitions) with
  ``--jobs`` workers; ``counters`` holds the median run's time per stage (``ps.timings``) and
  the PathSet's statistics (``ps.stats()``);
* ``cache save``: ``PathSet.save`` to a temporary folder;
* ``cache load``: ``PathSet.load`` of that folder with the graph, which checks every array
  (checksums, ranges, paths against the graph's arcs, layers against the dependencies);
* ``scipy csr``: scipy's CSR construction of the same arcs, the yardstick of a linear pass.

Verification: every built PathSet covers exactly the graph's arcs and survives a save and a
checked reload (:meth:`PathSet.load` raises on any inconsistency); a reload must reproduce the
built statistics.

    NUMBA_NUM_THREADS=2 python benchmarks/bench_preprocess.py --graphs cnr-2000 dblp-2010 rmat20 \\
        --jobs 2 --repeat 5 --out benchmarks/results/preprocess_cpu2.json
"""

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import graphs  # noqa: E402
import harness  # noqa: E402


def _row(common, g, name, method, timings, accuracy, counters, jobs):
    return harness.jsonable({**common, "card": None, "graph": name, "vertices": g.num_vertices,
                             "arcs": g.num_arcs, "weighted": bool(g.weighted),
                             "algorithm": "preprocess", "method": method, "mode": None,
                             "ran": method, "device": "cpu", "threads": jobs, "params": {},
                             "tol": None, "accuracy": accuracy, "timings": timings,
                             "counters": counters})


def bench_graph(name, repeat, jobs):
    """The rows of one graph (see the module docstring); raises :class:`harness.WrongAnswer`."""
    import scipy.sparse as sp
    from digraph.paths import PathSet
    from digraph.preprocess import preprocess
    g = graphs.load(name)
    common = harness.common_fields()
    tmp = Path(tempfile.mkdtemp(prefix="bench_preprocess_"))
    try:
        def check(ps):
            if ps.num_arcs != g.num_arcs or ps.num_vertices != g.num_vertices:
                raise harness.WrongAnswer(f"{name}: PathSet of {ps.num_arcs} arcs, graph {g.num_arcs}")
            ps.save(tmp / "check")
            back = PathSet.load(tmp / "check", graph=g, expect_params=ps.params)
            if back.stats()["num_paths"] != ps.stats()["num_paths"]:
                raise harness.WrongAnswer(f"{name}: the reloaded PathSet differs")
            return {"check": "saved and reloaded with every check", "true_error": 0,
                    "error_bound": None, "reference": "PathSet.load validation"}
        builds = []

        def build():
            ps = preprocess(g, jobs=jobs)
            builds.append(ps.timings)
            return ps
        timings, ps, acc = harness.time_function(build, repeat, check=None)
        acc = check(ps)
        stage = {k: float(np.median([b[k] for b in builds[1:]])) for k in builds[-1]}
        stats = {k: v for k, v in ps.stats().items() if not k.startswith("time_")}
        rows = [_row(common, g, name, "preprocess", timings, acc,
                     {"stage_s": stage, **stats}, jobs)]
        t, _, _ = harness.time_function(lambda: ps.save(tmp / "cache"), repeat)
        size = sum(f.stat().st_size for f in (tmp / "cache").rglob("*") if f.is_file())
        rows.append(_row(common, g, name, "cache save", t, acc, {"cache_bytes": size}, jobs))
        t, _, acc_load = harness.time_function(
            lambda: PathSet.load(tmp / "cache", graph=g, expect_params=ps.params), repeat,
            check=lambda back: check(back))
        rows.append(_row(common, g, name, "cache load", t, acc_load, {}, jobs))
        src, dst, n = g.arc_sources, g.out_targets, g.num_vertices
        ones = np.ones(src.size)
        t, _, _ = harness.time_function(
            lambda: sp.csr_matrix((ones, (src, dst)), shape=(n, n)), repeat)
        rows.append(_row(common, g, name, "scipy csr", t,
                         {"check": "not applicable", "true_error": None, "error_bound": None,
                          "reference": None}, {}, 1))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for r in rows:
        print(f"  {name:<14} {r['method']:<12} {1e3 * r['timings']['median_s']:10.1f} ms "
              f"(first {1e3 * r['timings']['first_s']:.1f})")
    return rows


def main(argv=None):
    """Command line: see the module docstring and ``--help``."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphs", nargs="+", default=["cnr-2000", "dblp-2010", "rmat18"])
    ap.add_argument("--jobs", type=int, default=None, help="preprocess(jobs=) (default: its own)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", help="append the rows to this JSON file")
    args = ap.parse_args(argv)
    rows = []
    for name in args.graphs:
        try:
            rows += bench_graph(name, args.repeat, args.jobs)
        except graphs.GraphUnavailable as e:
            print(f"skipped {name}: {e}")
    if args.out and rows:
        print(f"{len(rows)} rows appended to {harness.write_rows(args.out, rows)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
