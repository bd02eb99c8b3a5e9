"""Adsorption in every mode, on CPU or GPU, at several tolerances: converged?, rounds, time, the
reported bound against the true L1 error (issue 17: the default mode never converged).

Seeds: the 10 vertices of largest out-degree (``high``) or the 10 of smallest positive out-degree
(``low``); beta 0.8.  The reference is 250 Jacobi sweeps in scipy (0.8^250 < 1e-24).  Times are
medians of ``--repeat`` warm runs of the whole ``digraph.run`` (the first run, not timed, compiles
and computes the dual weights, which later runs on the graph reuse: ``time_dual`` of that first
run is reported as ``dual_first``).

    python benchmarks/bench_adsorption.py --graphs wiki-Vote dblp-2010 cnr-2000 rmat18
    python benchmarks/bench_adsorption.py --device cuda --modes bsp vertex-async path --json out.json
"""

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import digraph  # noqa: E402
from graphs import load  # noqa: E402
from digraph.algorithms import Adsorption  # noqa: E402
from digraph.algorithms._reference import coefficient_matrix  # noqa: E402


def seeds_of(g, kind):
    deg = g.out_degree
    has = np.flatnonzero(deg > 0)
    order = np.argsort(-deg[has] if kind == "high" else deg[has], kind="stable")
    return g.vertex_ids[has[order[:10]]]


def reference(g, seeds):
    algo = Adsorption()
    system = algo.prepare(g, **algo.bind(g, {"seeds": seeds, "beta": 0.8}))
    a = coefficient_matrix(g, system)
    x = system.b.copy()
    for _ in range(250):
        x = system.b + a @ x
    return x


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphs", nargs="+", default=["wiki-Vote", "dblp-2010", "cnr-2000", "rmat18"])
    ap.add_argument("--modes", nargs="+", default=["default", "bsp", "vertex-async"])
    ap.add_argument("--tols", nargs="+", type=float, default=[1e-4, 1e-8, 1e-12])
    ap.add_argument("--seeds", nargs="+", default=["high", "low"])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--max-iter", type=int, default=20000)
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = []
    for name in args.graphs:
        g = load(name)
        for kind in args.seeds:
            seeds = seeds_of(g, kind)
            x_star = reference(g, seeds)
            for tol in args.tols:
                for mode in args.modes:
                    kw = dict(seeds=seeds, beta=0.8, tol=tol, max_iter=args.max_iter, device=args.device,
                              mode=None if mode == "default" else mode, threads=args.threads)
                    row = {"graph": name, "n": g.num_vertices, "m": g.num_arcs, "seeds": kind,
                           "tol": tol, "mode": mode, "device": args.device}
                    try:
                        first = digraph.run(g, "adsorption", **kw)
                        ts = []
                        for _ in range(args.repeat):
                            t0 = time.perf_counter()
                            r = digraph.run(g, "adsorption", **kw)
                            ts.append(time.perf_counter() - t0)
                    except digraph.errors.ConvergenceError as e:
                        row.update(converged=False, error=str(e)[:120])
                        rows.append(row)
                        print(json.dumps(row), flush=True)
                        continue
                    st = r.stats
                    row.update(converged=bool(st["converged"]), floor_limited=bool(st.get("floor_limited")),
                               rounds=int(st["rounds"]), time=statistics.median(ts),
                               compute=float(st["time_compute"]), bound=float(st["error_bound"]),
                               true_error=float(np.abs(r.values - x_star).sum()),
                               route=st.get("error_route"), ran=st["mode"],
                               reach_vertices=st.get("reach_vertices"),
                               dual_first=float(first.stats.get("time_dual", 0.0)),
                               dual_sweeps=int(first.stats.get("dual_sweeps", 0)))
                    rows.append(row)
                    print(f"{name:10s} {kind:4s} tol {tol:7.0e} {mode:13s} conv {row['converged']!s:5s}"
                          f" floor {row['floor_limited']!s:5s} rounds {row['rounds']:6d} time {row['time']:.3f} s"
                          f" bound {row['bound']:.2e} true {row['true_error']:.2e} dual_first"
                          f" {row['dual_first']:.3f} s/{row['dual_sweeps']}", flush=True)
    if args.json:
        meta = {"date": time.strftime("%Y-%m-%d"), "machine": platform.node(), "cpu": platform.processor(),
                "threads": args.threads, "device": args.device}
        Path(args.json).write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
