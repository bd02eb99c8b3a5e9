"""The spread of warm run times at several thread counts: whether a case's runs on a host fall
in two modes (a fast one and one several times slower), and at which counts.  The thread counts
run round-robin, one run of each in turn, so that a host's drift reaches them all alike.

    NUMBA_NUM_THREADS=16 python benchmarks/bench_spread.py \\
        --cases cit-HepPh:pagerank:default soc-Slashdot0902:adsorption:bsp \\
        --threads 16 15 8 --runs 15 --out spread.json

A case is ``GRAPH:ALGORITHM:MODE`` (``default``: the router's choice, warmed past its timing
window first; a peer's name of :data:`peers.PEERS`, e.g. ``igraph-prpack``, times that peer,
with its own threads whatever the count, as the host's witness).  Parameters are the
harness's (:func:`harness.resolve_params`).  Each row gives the times, their median and least,
and the share of runs slower than 1.5x the least.
"""

import argparse
import json
import sys
import time
from pathlib import Path

import numba
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import graphs  # noqa: E402
import harness  # noqa: E402
import peers  # noqa: E402

import digraph  # noqa: E402

WARM = 8
"""Untimed runs of a case and variant before its timed ones: past the router's timing window
(two engines, three runs each)."""


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", nargs="+", required=True, metavar="GRAPH:ALGORITHM:MODE")
    ap.add_argument("--threads", nargs="+", type=int, default=[numba.config.NUMBA_NUM_THREADS])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--settings", metavar="Class.field=value,...",
                    help="engine settings of every digraph run (harness.settings_of), e.g. "
                         "RouteSettings.thread_arcs=0: every run on the threads named")
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    settings = harness.settings_of(a.settings) if a.settings else None
    rows = []
    name = g = None
    for case in a.cases:
        if case.split(":")[0] != name:  # one graph held at a time
            g = graphs.load(case.split(":")[0])
        name, alg, mode = case.split(":")
        params = harness.resolve_params(g, alg, {})
        variants = a.threads
        peer = peers.PEERS[mode][1](g, params, a.tol) if mode in peers.PEERS else None

        def call(threads):
            if peer is not None:
                t0 = time.perf_counter()
                peer()
                return time.perf_counter() - t0, None
            t0 = time.perf_counter()
            r = digraph.run(g, alg, mode=None if mode == "default" else mode, threads=threads,
                            tol=a.tol, settings=settings, **params)
            return time.perf_counter() - t0, r

        for v in variants:
            for _ in range(WARM):
                call(v)
        times = {v: [] for v in variants}
        ran = {}
        for _ in range(a.runs):
            for v in variants:
                dt, r = call(v)
                times[v].append(dt)
                ran[v] = (mode, None, None) if r is None else (
                    r.stats["route"]["engine"], r.stats.get("rounds"), r.stats["threads"])
        for t, ts in times.items():
            ts = np.array(ts)
            row = {"graph": name, "algorithm": alg, "mode": mode, "threads": t,
                   "threads_used": ran[t][2],
                   "engine": ran[t][0], "rounds": ran[t][1],
                   "times_s": ts.tolist(), "median_s": float(np.median(ts)),
                   "min_s": float(ts.min()), "slow_share": float((ts > 1.5 * ts.min()).mean())}
            rows.append(row)
            print(f"{name:18s} {alg:10s} {mode:8s} t={t:2d} {row['engine']:10s} "
                  f"median {1e3 * row['median_s']:8.2f} min {1e3 * row['min_s']:8.2f} "
                  f"slow {row['slow_share']:.2f}", flush=True)
    meta = {"schema": "digraph-spread/1", "date": time.strftime("%Y-%m-%d"),
            "command": " ".join(sys.argv),
            "machine": harness.machine_info(), "threading_layer": numba.threading_layer(),
            "tol": a.tol, "runs": a.runs, "warm": WARM, "settings": a.settings}
    Path(a.out).write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
