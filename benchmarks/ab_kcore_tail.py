"""k-core on many threads (issue 17: 16 threads at most 0.5x igraph's coreness): PKC with its serial
tail (``PeelSettings.pkc_serial_tail``) at several sizes, PKC on fewer threads, BZ and
``vertex-async``, interleaved run by run, medians of ``--repeat``; igraph's coreness beside.

    python benchmarks/ab_kcore_tail.py --graphs dblp-2010 cnr-2000 rmat18 --threads 16 --repeat 9
"""

import argparse
import dataclasses
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import digraph  # noqa: E402
from digraph.dispatch import peel as peel_engine  # noqa: E402
from graphs import load  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--graphs", nargs="+", default=["dblp-2010", "cnr-2000", "rmat18"])
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--json")
    args = ap.parse_args()
    T = args.threads
    D = peel_engine.DEFAULT
    variants = {f"pkc {T}t tail {tail}": (T, "peel", dataclasses.replace(D, pkc_serial_tail=tail))
                for tail in (0, 4096, 65536, 1 << 20)}
    variants.update({f"pkc {t}t": (t, "peel", D) for t in (4, 8) if t < T})
    variants["bz 1t"] = (1, "peel", dataclasses.replace(D, pkc_threads=2))
    variants[f"vertex-async {T}t"] = (T, "vertex-async", D)
    rows = []
    for name in args.graphs:
        g = load(name)
        ref = digraph.run(g, "kcore", mode="peel", threads=1).values
        times = {k: [] for k in variants}
        labels = list(variants)
        for rep in range(args.repeat + 1):
            for i in range(len(labels)):
                label = labels[(i + rep) % len(labels)]
                threads, mode, st = variants[label]
                peel_engine.DEFAULT = st
                try:
                    t0 = time.perf_counter()
                    r = digraph.run(g, "kcore", mode=mode, threads=threads)
                    dt = time.perf_counter() - t0
                finally:
                    peel_engine.DEFAULT = D
                assert np.array_equal(r.values, ref), label
                if rep:
                    times[label].append(dt)
        try:
            import igraph
            src, dst = g.arc_sources, g.out_targets
            keep = src != dst
            ig = igraph.Graph(n=g.num_vertices, edges=np.stack([src[keep], dst[keep]], 1).tolist(),
                              directed=True)
            ts = []
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                ig.coreness(mode="all")
                ts.append(time.perf_counter() - t0)
            times["igraph coreness"] = ts
        except ImportError:
            pass
        for label, ts in times.items():
            row = dict(graph=name, variant=label, median_ms=1e3 * statistics.median(ts),
                       min_ms=1e3 * min(ts), max_ms=1e3 * max(ts))
            rows.append(row)
            print(json.dumps(row), flush=True)
    if args.json:
        meta = {"date": time.strftime("%Y-%m-%d"), "argv": sys.argv[1:]}
        Path(args.json).write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
