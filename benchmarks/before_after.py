"""The same cases on two checkouts, on this machine: is the new one as fast, and still right?

Each side is a directory holding a checkout of the project (``--base`` and ``--new``; or
``--base-commit REV``, checked out for the run with ``git worktree add --detach`` into a
temporary folder and removed after). Both sides run *this* checkout's harness
(:mod:`harness`) with ``DIGRAPH_TREE`` pointing at their tree, so only ``digraph`` differs; the
sides alternate process by process ``--rounds`` times (base, new, base, new, ...), and each
case's times are pooled over its rounds. Every answer is verified on both sides.

The comparison row of each case gives ``ratio`` = new median ÷ base median. The check fails
(exit status 1) when a default case (``mode`` default) is slower by more than ``--threshold``
(5% by default) or when a side returned a wrong answer (exit status 2 of the harness); named
modes are reported, not judged.

    NUMBA_NUM_THREADS=2 taskset -c 0,1 python benchmarks/before_after.py --base ../main-old \\
        --new . --graphs wiki-Vote cit-HepPh dblp-2010 cnr-2000 \\
        --algorithms pagerank adsorption sssp kcore --repeat 7 --rounds 2 \\
        --out benchmarks/results/before_after_cpu2.json
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def side_command(args, out):
    """The harness command line one side runs (without the tree: that is ``DIGRAPH_TREE``)."""
    cmd = [sys.executable, str(HERE / "harness.py"), "--graphs", *args.graphs,
           "--algorithms", *args.algorithms, "--modes", *args.modes, "--device", args.device,
           "--repeat", str(args.repeat), "--tol", repr(args.tol), "--out", str(out)]
    if args.threads:
        cmd += ["--threads", str(args.threads)]
    if args.params:
        cmd += ["--params", *args.params]
    return cmd


def run_side(tree, args, out):
    """Run the cases with ``tree``'s digraph; return the harness' exit status."""
    # PYTHONPATH stays (it may pin a numpy the GPU stack needs); the harness puts the side's
    # tree first on sys.path (benchmarks/graphs.py), so that tree's digraph is the one imported
    env = dict(os.environ, DIGRAPH_TREE=str(Path(tree).resolve()))
    print(f"# {tree}", flush=True)
    return subprocess.run(side_command(args, out), env=env).returncode


def key(row):
    """What identifies a case across the two sides."""
    return (row["graph"], row["algorithm"], row["method"], row["device"], row["threads"],
            json.dumps(row["params"], sort_keys=True), row["tol"])


def compare(base_rows, new_rows, threshold):
    """One comparison dict per case present on both sides (times pooled over rounds).

    Parameters
    ----------
    base_rows, new_rows : list of dict
        Harness rows of each side.
    threshold : float
        A default case is ``slower`` when new ÷ base exceeds ``1 + threshold``.

    Returns
    -------
    list of dict
        ``graph``, ``algorithm``, ``method``, ``base_ms``, ``new_ms`` (medians of the pooled
        warm times), ``ratio``, ``base_mean_ms``, ``new_mean_ms`` and ``mean_ratio`` (their
        means: a graph's first runs, where the router times its candidates, show there), the
        true errors of both sides, and ``verdict``: ``"ok"``, ``"slower"`` (default cases
        only) or ``"reported"`` (named modes).
    """
    def pool(rows):
        out = {}
        for r in rows:
            k = key(r)
            entry = out.setdefault(k, {"times": [], "error": 0.0, "row": r})
            entry["times"] += r["timings"]["times_s"]
            entry["error"] = max(entry["error"], r["accuracy"]["true_error"] or 0.0)
        return out
    base, new = pool(base_rows), pool(new_rows)
    out = []
    for k in base:
        if k not in new:
            continue
        b, n = statistics.median(base[k]["times"]), statistics.median(new[k]["times"])
        row = base[k]["row"]
        ratio = n / b
        default = row["mode"] == "default"
        bm, nm = statistics.mean(base[k]["times"]), statistics.mean(new[k]["times"])
        out.append({"graph": row["graph"], "algorithm": row["algorithm"], "method": row["method"],
                    "device": row["device"], "base_ms": 1e3 * b, "new_ms": 1e3 * n, "ratio": ratio,
                    "base_mean_ms": 1e3 * bm, "new_mean_ms": 1e3 * nm, "mean_ratio": nm / bm,
                    "base_ran": row["ran"], "new_ran": new[k]["row"]["ran"],
                    "base_true_error": base[k]["error"], "new_true_error": new[k]["error"],
                    "verdict": ("slower" if ratio > 1 + threshold else "ok") if default
                    else "reported"})
    return out


def main(argv=None):
    """Command line: see the module docstring and ``--help``."""
    import harness
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    side = ap.add_mutually_exclusive_group(required=True)
    side.add_argument("--base", help="directory of the base checkout")
    side.add_argument("--base-commit", help="commit of this repository to check out as the base")
    ap.add_argument("--new", default=str(HERE.parent), help="directory of the new checkout (default: this one)")
    ap.add_argument("--graphs", nargs="+", default=["wiki-Vote", "cit-HepPh", "dblp-2010", "cnr-2000"])
    ap.add_argument("--algorithms", nargs="+", default=["pagerank", "adsorption", "sssp", "kcore"])
    ap.add_argument("--modes", nargs="+", default=["default"])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int)
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--params", nargs="*", metavar="KEY=VALUE")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=2, help="base/new process pairs (default 2)")
    ap.add_argument("--threshold", type=float, default=0.05, help="allowed slow-down of a default (0.05)")
    ap.add_argument("--out", help="write base rows, new rows and the comparison to this JSON file")
    args = ap.parse_args(argv)

    scratch = Path(tempfile.mkdtemp(prefix="before_after_"))
    worktree = None
    try:
        base = args.base
        if args.base_commit:
            worktree = scratch / "base"
            subprocess.run(["git", "-C", str(HERE.parent), "worktree", "add", "--detach",
                            str(worktree), args.base_commit], check=True)
            base = str(worktree)
        rows = {"base": [], "new": []}
        failed = []
        for i in range(args.rounds):
            for name, tree in (("base", base), ("new", args.new)):
                out = scratch / f"{name}{i}.json"
                rc = run_side(tree, args, out)
                if rc:
                    failed.append(f"{name} (round {i + 1}): exit status {rc}")
                if out.is_file():
                    got = json.loads(out.read_text())["rows"]
                    for r in got:
                        r["side"], r["tree"] = name, str(Path(tree).resolve())
                    rows[name] += got
        comparison = compare(rows["base"], rows["new"], args.threshold)
    finally:
        if worktree is not None:
            subprocess.run(["git", "-C", str(HERE.parent), "worktree", "remove", "--force",
                            str(worktree)], check=False)
        shutil.rmtree(scratch, ignore_errors=True)

    print(f"\n{'graph':<14} {'algorithm':<10} {'method':<24} {'base ms':>9} {'new ms':>9} "
          f"{'ratio':>6} {'means':>6}  verdict")
    for c in comparison:
        print(f"{c['graph']:<14} {c['algorithm']:<10} {c['method']:<24} {c['base_ms']:9.2f} "
              f"{c['new_ms']:9.2f} {c['ratio']:6.3f} {c['mean_ratio']:6.3f}  {c['verdict']}")
    slower = [c for c in comparison if c["verdict"] == "slower"]
    if args.out:
        harness.write_rows(args.out, rows["base"] + rows["new"],
                           note=f"before_after.py: base {base}, new {args.new}")
        data = json.loads(Path(args.out).read_text())
        data.setdefault("comparisons", []).append({"threshold": args.threshold,
                                                   "failed": failed, "cases": comparison})
        Path(args.out).write_text(json.dumps(data, indent=1) + "\n")
        print(f"written to {args.out}")
    if failed:
        print("FAILED: " + "; ".join(failed), file=sys.stderr)
        return 2
    if slower:
        print(f"{len(slower)} default case(s) slower than {1 + args.threshold:.2f}× the base",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
