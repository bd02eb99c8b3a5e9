"""Seeds of small reach (:mod:`digraph.dispatch.reach`): adsorption and personalised PageRank from
the 10 vertices of smallest positive out-degree, the default solving on their reach against the
same run on the whole graph (``RouteSettings.reach_share = 0``), on the CPU or a GPU.

    python benchmarks/bench_reach.py --graphs cnr-2000 cit-HepPh --device cuda --json out.json

Medians of ``--repeat`` warm runs of the whole ``digraph.run``, tol 1e-8; the two answers'
L1 distance is reported (both within their bounds of the exact one).
"""

import argparse
import dataclasses
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
from bench_adsorption import seeds_of  # noqa: E402
from digraph.dispatch import route  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphs", nargs="+", default=["cnr-2000", "cit-HepPh"])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--shares", nargs="+", type=float, default=None,
                    help="instead of the graphs: a random graph (2^18 vertices, 16 arcs each) with "
                         "a closed part of each share of the arcs, adsorption seeded in it, "
                         "restricted (reach_share 1) against whole (0): where the rule pays")
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = []
    default = route.DEFAULT
    if args.shares:
        rng = np.random.default_rng(1)
        n, deg = 1 << 18, 16
        for share in args.shares:
            k = max(2, int(share * n))  # the part: vertices n-k..n-1, arcs inside it only
            src = rng.integers(0, n, n * deg)
            dst = np.where(src >= n - k, n - k + rng.integers(0, k, n * deg),
                           rng.integers(0, n, n * deg))
            g = digraph.Graph.from_arrays(src, dst, num_vertices=n)
            params = {"seeds": [n - 1], "beta": 0.8}
            for label, rs in (("reach", 1.0), ("whole", 0.0)):
                route.DEFAULT = dataclasses.replace(default, reach_share=rs)
                try:
                    digraph.run(g, "adsorption", device=args.device, tol=1e-8, **params)
                    ts = []
                    for _ in range(args.repeat):
                        t0 = time.perf_counter()
                        r = digraph.run(g, "adsorption", device=args.device, tol=1e-8, **params)
                        ts.append(time.perf_counter() - t0)
                finally:
                    route.DEFAULT = default
                row = dict(graph=f"random 2^18 x 16, part {share}", algorithm="adsorption",
                           device=args.device, run=label, arc_share=share,
                           time_ms=statistics.median(ts) * 1e3, mode=r.stats["mode"],
                           rounds=int(r.stats["rounds"]), reach_arcs=r.stats.get("reach_arcs"))
                rows.append(row)
                print(json.dumps(row), flush=True)
        args.graphs = []
    for name in args.graphs:
        g = load(name)
        seeds = [int(v) for v in seeds_of(g, "low")]
        for algo, params in (("adsorption", {"seeds": seeds, "beta": 0.8}),
                             ("pagerank", {"personalization": {v: 1.0 for v in seeds}})):
            out = {}
            for label, share in (("reach", default.reach_share), ("whole", 0.0)):
                route.DEFAULT = dataclasses.replace(default, reach_share=share)
                try:
                    def once():
                        return digraph.run(g, algo, device=args.device, tol=1e-8, **params)
                    once()
                    ts = []
                    for _ in range(args.repeat):
                        t0 = time.perf_counter()
                        r = once()
                        ts.append(time.perf_counter() - t0)
                finally:
                    route.DEFAULT = default
                out[label] = r
                row = dict(graph=name, algorithm=algo, device=args.device, run=label,
                           time_ms=statistics.median(ts) * 1e3, mode=r.stats["mode"],
                           rounds=int(r.stats["rounds"]), bound=float(r.stats["error_bound"]),
                           reach_vertices=r.stats.get("reach_vertices"),
                           reach_arcs=r.stats.get("reach_arcs"))
                rows.append(row)
                print(json.dumps(row), flush=True)
            rows[-1]["l1_between"] = float(np.abs(out["reach"].values - out["whole"].values).sum())
    if args.json:
        meta = {"date": time.strftime("%Y-%m-%d"), "machine": platform.node(),
                "processor": platform.processor()}
        Path(args.json).write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
