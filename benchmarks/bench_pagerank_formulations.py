"""PageRank by its two formulations against the power iteration a user would write in scipy.

* scipy: ``x ← α Pᵀ x + (1 − Σ α Pᵀ x) v`` (dangling mass and teleport by ``v``), stopped by the
  sound bound ``α/(1 − α)·‖x_{k+1} − x_k‖₁ ≤ tol`` (one thread, scipy's SpMV);
* igraph PRPACK (``Graph.pagerank(implementation="prpack")``, one thread), when igraph is
  installed (its own accuracy; the row gives its true error);
* digraph ``mode=None`` (the router's choice, named in the row), ``"scc"`` (the linear system
  without the dangling term, SCC by SCC), ``"power"`` (the Google-matrix iteration) and ``"bsp"``;
* digraph ``first run``: the default on a freshly loaded copy of the graph (kernels compiled, but
  nothing kept on the ``Graph``: the router decides without a condensation; median of
  ``--repeat`` fresh copies, loading not timed).

Median of ``--repeat`` warm runs of the whole ``digraph.run`` on a loaded graph; true L1 error
against ``mode="bsp", tol=1e-13``.

    NUMBA_NUM_THREADS=2 taskset -c 0,1 python benchmarks/bench_pagerank_formulations.py \\
        --graphs wiki-Vote dblp-2010 cnr-2000 rmat18 rmat20 --json out.json
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
import scipy.sparse as sp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import digraph  # noqa: E402
from graphs import load  # noqa: E402


def scipy_power(g, alpha, tol):
    a = g.to_scipy()
    outw = np.asarray(a.sum(axis=1)).ravel()
    inv = np.divide(1.0, outw, out=np.zeros_like(outw), where=outw > 0)
    pt = (sp.diags(inv) @ a).T.tocsr()
    n = g.num_vertices
    v = np.full(n, 1.0 / n)
    x = v.copy()
    k = 0
    while True:
        y = alpha * (pt @ x)
        y += (1.0 - y.sum()) * v
        d = np.abs(y - x).sum()
        x = y
        k += 1
        if alpha / (1 - alpha) * d <= tol:
            return x, k


def power_memory():
    """The Anderson memory the CPU power iteration runs with."""
    from digraph.dispatch import power
    return power.DEFAULT.anderson_memory


def median_time(fn, repeat):
    out, ts = None, []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts), out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphs", nargs="+", default=["wiki-Vote", "dblp-2010", "cnr-2000", "rmat18", "rmat20"])
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--power-memory", type=int, default=None,
                    help="Anderson memory of the CPU power iteration (digraph.dispatch.power."
                         "PowerSettings.anderson_memory; 0: the plain iteration; default: its default)")
    args = ap.parse_args()
    if args.power_memory is not None:
        from digraph.dispatch import power
        power.DEFAULT = power.PowerSettings(anderson_memory=args.power_memory)
    rows = []
    for name in args.graphs:
        g = load(name)
        ref = digraph.run(g, "pagerank", mode="bsp", tol=1e-13).values
        t, (x, k) = median_time(lambda: scipy_power(g, 0.85, args.tol), args.repeat)
        row = {"graph": name, "n": g.num_vertices, "m": g.num_arcs, "method": "scipy power", "ran": "scipy",
               "rounds": k, "time": t, "true_error": float(np.abs(x - ref).sum())}
        rows.append(row)
        print(json.dumps(row), flush=True)
        try:
            import igraph
        except ImportError:
            igraph = None
        if igraph is not None:
            ig = igraph.Graph(n=g.num_vertices, edges=np.column_stack([g.arc_sources, g.out_targets]),
                              directed=True)
            t, x = median_time(lambda: np.array(ig.pagerank(damping=0.85, implementation="prpack")),
                               args.repeat)
            row = {"graph": name, "n": g.num_vertices, "m": g.num_arcs, "method": "igraph prpack",
                   "ran": "prpack", "rounds": None, "time": t, "true_error": float(np.abs(x - ref).sum())}
            rows.append(row)
            print(json.dumps(row), flush=True)
            del ig
        ts, r = [], None
        for _ in range(args.repeat):
            fresh = load(name)
            t0 = time.perf_counter()
            r = digraph.run(fresh, "pagerank", tol=args.tol)
            ts.append(time.perf_counter() - t0)
        row = {"graph": name, "n": g.num_vertices, "m": g.num_arcs, "method": "digraph first run",
               "ran": r.stats["mode"], "rounds": int(r.stats["rounds"]), "time": statistics.median(ts),
               "time_route": float(r.stats["time_route"]), "bound": float(r.stats["error_bound"]),
               "true_error": float(np.abs(r.values - ref).sum()), "route": r.stats["route"]}
        rows.append(row)
        print(json.dumps(row), flush=True)
        for mode in (None, "scc", "power", "bsp"):
            digraph.run(g, "pagerank", mode=mode, tol=args.tol)  # warm-up
            t, r = median_time(lambda: digraph.run(g, "pagerank", mode=mode, tol=args.tol), args.repeat)
            row = {"graph": name, "n": g.num_vertices, "m": g.num_arcs, "method": f"digraph {mode or 'default'}",
                   "ran": r.stats["mode"], "rounds": int(r.stats["rounds"]), "time": t,
                   "anderson_mixes": int(r.stats.get("anderson_mixes", 0)),
                   "bound": float(r.stats["error_bound"]), "true_error": float(np.abs(r.values - ref).sum()),
                   "route": r.stats["route"]}
            rows.append(row)
            print(json.dumps(row), flush=True)
    if args.json:
        meta = {"date": time.strftime("%Y-%m-%d"), "machine": platform.node(), "tol": args.tol,
                "numba_threads": os.environ.get("NUMBA_NUM_THREADS"),
                "power_memory": power_memory()}
        Path(args.json).write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
