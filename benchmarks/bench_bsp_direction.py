"""``bsp``'s direction switch: a round pulls over every in-arc when the frontier's out-arcs exceed
``m / dense_divisor`` (:class:`digraph.dispatch.bsp.BspSettings`), else pushes from the frontier.

For each graph, algorithm and divisor, the median of ``--repeat`` warm runs of the whole
``digraph.run(mode="bsp")`` with that setting (the divisors interleaved run by run), with rounds,
dense rounds and arc updates.  PageRank at ``--tol``; SSSP from the vertex of largest
out-degree (unit weights: BFS levels, where the frontier grows and shrinks, the case the switch
is for).  ``0`` never pulls; ``10**9`` always pulls.

    NUMBA_NUM_THREADS=2 taskset -c 0,1 python benchmarks/bench_bsp_direction.py \\
        --graphs wiki-Vote dblp-2010 cnr-2000 rmat18 --json benchmarks/results/bsp_direction_cpu2.json
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import digraph  # noqa: E402
from digraph.dispatch import bsp  # noqa: E402
from graphs import load  # noqa: E402

DIVISORS = (0, 5, 10, 20, 40, 80, 10**9)


def _once(g, name, params, divisor):
    old = bsp.DEFAULT
    bsp.DEFAULT = bsp.BspSettings(dense_divisor=divisor)  # a benchmark's override, restored
    try:
        t0 = time.perf_counter()
        r = digraph.run(g, name, mode="bsp", **params)
        return time.perf_counter() - t0, r
    finally:
        bsp.DEFAULT = old


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", nargs="+", default=["wiki-Vote", "dblp-2010", "cnr-2000", "rmat18"])
    ap.add_argument("--divisors", nargs="+", type=int, default=list(DIVISORS))
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    import numba
    rows = []
    for gname in a.graphs:
        g = load(gname)
        src = int(np.argmax(g.out_degree))
        for name, params in (("pagerank", {"tol": a.tol}), ("sssp", {"source": src})):
            times = {d: [] for d in a.divisors}
            last = {}
            for d in a.divisors:  # warm-up (compilation) of each variant
                _once(g, name, params, d)
            for _ in range(a.repeat):
                for d in a.divisors:
                    t, r = _once(g, name, params, d)
                    times[d].append(t)
                    last[d] = r
            ref = last[a.divisors[0]].values
            for d in a.divisors:
                s = last[d].stats
                with np.errstate(invalid="ignore"):
                    diff = float(np.nanmax(np.abs(np.where(np.isinf(ref), 0, ref - last[d].values))))
                row = dict(graph=gname, algorithm=name, divisor=d,
                           ms=1e3 * statistics.median(times[d]), rounds=s["rounds"],
                           dense_rounds=s["dense_rounds"], arc_updates=s["arc_updates"],
                           error_bound=s.get("error_bound"), max_diff_vs_first=diff)
                rows.append(row)
                print(f"{gname:12s} {name:8s} div {d:>10} {row['ms']:9.1f} ms  rounds "
                      f"{s['rounds']:4d} dense {s['dense_rounds']:4d} arcs {s['arc_updates']:,}",
                      flush=True)
    meta = dict(date=time.strftime("%Y-%m-%d"), machine=platform.processor() or platform.machine(),
                cpus=os.cpu_count(), threads=numba.get_num_threads(), tol=a.tol,
                repeat=a.repeat, command="benchmarks/bench_bsp_direction.py " + " ".join(argv or sys.argv[1:]))
    if a.json:
        Path(a.json).write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    return rows


if __name__ == "__main__":
    main()
