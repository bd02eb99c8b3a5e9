"""When the SCC engine beats the power iteration on one GPU (issue 18 item 1: the router must pick
``mode="scc"`` on a GPU where the condensation says it pays).  PageRank, tol 1e-8.

For each graph, one row with:

* the condensation (built on the host, its time ``cond_ms``): the share of the arcs inside
  components (``inside``), the largest one's (``largest``), components and levels;
* the power iteration's probe (``gpu_power.solve(trip=RouteSettings.probe_share)``): whether it
  trips, at which round and ratio (``probe_*``), and the time it spent;
* whole warm ``digraph.run`` on the GPU, median of ``--repeat`` after a warm-up: ``power`` and
  ``scc`` (``bsp`` with ``--bsp``), time, rounds, arc updates, certified bound, and the first
  run's time (``scc`` builds the condensation then unless ``--keep-cond``).

Graph names as in ``benchmarks/graphs.py`` (files of the datasets folder; ``citK-B``: the
citation-like generator with ``2**K`` papers and a share ``B`` of reversed citations).

    python benchmarks/bench_gpu_scc_route.py --graphs cit-HepPh wiki-Vote cit17-0 cit20-0.0001 \\
        --json $OUT/gpu_scc_route.json
"""

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import digraph  # noqa: E402
from bench_gpu import load_graph  # noqa: E402
from bench_gpu_pagerank import timed, write_gpu_results  # noqa: E402


def _row_of_run(r, t, first):
    s = r.stats
    return {"time_ms": t * 1e3, "first_ms": first * 1e3, "ran": s["mode"], "rounds": int(s["rounds"]),
            "arc_updates": int(s["arc_updates"]), "bound": float(s["error_bound"]),
            "route": s.get("route"), "phases": s.get("scc_phases"),
            "heavy_rounds": s.get("heavy_rounds"), "finished_by": s.get("finished_by")}


def main():
    import cupy as cp
    from digraph.algorithms import PageRank
    from digraph.dispatch import gpu_power
    from digraph.dispatch.route import DEFAULT as ROUTE
    from digraph.paths.condensation import condensation_for
    from digraph.result import RunStats
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphs", nargs="+", required=True)
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--bsp", action="store_true", help="also time mode='bsp'")
    ap.add_argument("--json")
    args = ap.parse_args()
    sync = cp.cuda.Device().synchronize
    rows = []
    for name in args.graphs:
        g, t_load = load_graph(name)
        m = g.num_arcs
        row = {"graph": name, "n": g.num_vertices, "m": m, "load_s": round(t_load, 2)}
        algo = PageRank()
        system = algo.prepare(g, **algo.bind(g, {}))
        st = RunStats.new()
        gpu_power.solve(g, system, tol=args.tol, max_iter=10_000, stats=st, trip=ROUTE.probe_share)
        st = RunStats.new()
        sync()
        t0 = time.perf_counter()
        _x, ok = gpu_power.solve(g, system, tol=args.tol, max_iter=10_000, stats=st,
                                 trip=ROUTE.probe_share)
        sync()
        row.update(probe_tripped=ok is None, probe_ms=(time.perf_counter() - t0) * 1e3,
                   probe_rounds=st.get("probe_rounds"), probe_ratio=st.get("probe_ratio"))
        modes = ["power", "scc"] + (["bsp"] if args.bsp else [])
        for mode in modes:
            t0 = time.perf_counter()
            r0 = digraph.run(g, "pagerank", mode=mode, device="cuda", tol=args.tol)
            first = time.perf_counter() - t0
            t, r = timed(lambda: digraph.run(g, "pagerank", mode=mode, device="cuda",
                                             tol=args.tol), args.repeat, sync)
            row[mode] = _row_of_run(r, t, first)
            if mode == "scc":  # the first run built the condensation
                row["cond_ms"] = float(r0.stats.get("time_condensation", 0.0)) * 1e3
        cond, _ = condensation_for(g, "vertex")  # kept by the scc runs
        a = cond.comp_arcs
        row.update(inside=float(a.sum() / m) if m else 0.0, largest=float(a.max() / m) if m else 0.0,
                   components=int(cond.num_components), levels=int(cond.num_levels),
                   scc_over_power=row["scc"]["time_ms"] / row["power"]["time_ms"])
        rows.append(row)
        print(json.dumps(row), flush=True)
        g = None
        cp.get_default_memory_pool().free_all_blocks()
    write_gpu_results(args.json, rows, args.tol)


if __name__ == "__main__":
    main()
