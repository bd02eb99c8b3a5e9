"""Loading: ``digraph.load`` of an edge-list file, against numpy's ``loadtxt`` of the same file.

Rows per dataset (method): ``digraph.load`` (read, gunzip, parse, build CSR and CSC; the first
call, which loads or compiles the parser's kernels, is ``first_s``), and ``numpy loadtxt`` (the
parse alone, no graph built). Verification: the graph's arcs, mapped back to the file's ids,
are the file's arcs (as a multiset).

    python benchmarks/bench_load.py --graphs cnr-2000 dblp-2010 --repeat 5 \\
        --out benchmarks/results/load_cpu2.json
"""

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import graphs  # noqa: E402
import harness  # noqa: E402

import digraph  # noqa: E402


def file_arcs(path):
    """The arcs of an edge-list file, by numpy (comments ``#`` and ``%``), sorted."""
    a = np.loadtxt(path, dtype=np.int64, comments=("#", "%"), usecols=(0, 1), ndmin=2)
    return a[np.lexsort((a[:, 1], a[:, 0]))]


def bench_file(name, repeat):
    """The rows of one dataset; raises :class:`graphs.GraphUnavailable` when it is absent."""
    path = graphs.DATASETS / f"{name}.txt.gz"
    if not path.is_file():
        raise graphs.GraphUnavailable(f"{path} not found (set DIGRAPH_DATASETS)")
    want = file_arcs(path)

    def check(g):
        got = np.column_stack([g.vertex_ids[g.arc_sources], g.vertex_ids[g.out_targets]])
        got = got[np.lexsort((got[:, 1], got[:, 0]))]
        if not np.array_equal(got, want):
            raise harness.WrongAnswer(f"{name}: the loaded arcs differ from the file's")
        return {"check": "equal", "true_error": 0, "error_bound": None, "reference": "numpy loadtxt"}
    common = harness.common_fields()
    rows = []
    t, g, acc = harness.time_function(lambda: digraph.load(path), repeat, check=check)
    t_np, _, _ = harness.time_function(lambda: np.loadtxt(path, dtype=np.int64, comments=("#", "%"),
                                                          usecols=(0, 1), ndmin=2), min(repeat, 3))
    for method, timings, accuracy in (("digraph.load", t, acc), ("numpy loadtxt", t_np, acc)):
        rows.append(harness.jsonable({
            **common, "card": None, "graph": name, "vertices": g.num_vertices, "arcs": g.num_arcs,
            "weighted": bool(g.weighted), "algorithm": "load", "method": method, "mode": None,
            "ran": method, "device": "cpu", "threads": None, "params": {"file": path.name},
            "tol": None, "accuracy": accuracy, "timings": timings,
            "counters": {"file_bytes": path.stat().st_size}}))
        print(f"  {name:<14} {method:<14} {1e3 * timings['median_s']:10.1f} ms "
              f"(first {1e3 * timings['first_s']:.1f})")
    return rows


def main(argv=None):
    """Command line: see the module docstring and ``--help``."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphs", nargs="+", default=["cnr-2000", "dblp-2010"])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", help="append the rows to this JSON file")
    args = ap.parse_args(argv)
    rows = []
    for name in args.graphs:
        try:
            rows += bench_file(name, args.repeat)
        except graphs.GraphUnavailable as e:
            print(f"skipped {name}: {e}")
    if args.out and rows:
        print(f"{len(rows)} rows appended to {harness.write_rows(args.out, rows)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
