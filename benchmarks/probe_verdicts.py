"""The power probe's verdict on a graph's first PageRank run, in fresh processes: which engine
the judge chose, what it weighed (its words, with the spread of its rounds' times), and the
route of the runs after it.  A verdict is one measurement; this shows how it varies on a host.

    NUMBA_NUM_THREADS=16 python benchmarks/probe_verdicts.py --graph soc-Slashdot0902 \\
        --threads 16 --processes 4 --runs 8 --out verdicts.json

Each process loads the graph, runs the default ``--runs`` times and reports every run's
seconds, mode and route code, and the first run's route steps.
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ONE = r"""
import json, sys, time
sys.path.insert(0, {bench!r})
import graphs, digraph
g = graphs.load({graph!r})
runs = []
for i in range({runs}):
    t0 = time.perf_counter()
    r = digraph.run(g, "pagerank", tol={tol}, threads={threads})
    s = r.stats
    runs.append({{"s": time.perf_counter() - t0, "mode": s["mode"], "code": s["route"]["code"],
                 "compile_s": s.get("time_compile"), "steps": s["route"]["steps"] if i == 0 else []}})
print(json.dumps(runs))
"""


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graph", required=True)
    ap.add_argument("--threads", type=int, nargs="+", default=[16])
    ap.add_argument("--processes", type=int, default=4)
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    bench = str(Path(__file__).resolve().parent)
    rows = []
    for p in range(a.processes):
        for t in a.threads:
            code = ONE.format(bench=bench, graph=a.graph, runs=a.runs, tol=a.tol, threads=t)
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                 check=True).stdout
            runs = json.loads(out.strip().splitlines()[-1])
            rows.append({"graph": a.graph, "threads": t, "process": p, "runs": runs})
            first = runs[0]["steps"]
            words = first[-1]["why"] if first else runs[0]["code"]
            print(f"process {p} t={t:2d}: first {runs[0]['mode']} ({runs[0]['code']}); then "
                  f"{runs[-1]['mode']} ({runs[-1]['code']}) "
                  f"{1e3 * min(r['s'] for r in runs[1:]):.1f} ms; {words}", flush=True)
    meta = {"date": time.strftime("%Y-%m-%d"), "command": " ".join(sys.argv), "tol": a.tol}
    Path(a.out).write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
