"""Work proportional to what is active (issue 17, item 6): the CPU linear push engines (``bsp``,
``vertex-async``) with and without their residual set.

Each case runs ``digraph.run`` in both variants, interleaved run by run: ``set`` (the defaults:
while the residual is non-zero on at most ``set_share`` of the vertices, the scans read only
those, :class:`digraph.dispatch.bsp.Touched`) and ``full`` (``set_share=0``: every scan reads
every vertex, as the engines did before the set, except that ``bsp``'s push round now finds
its frontier without branches, 0.2 ms instead of 1.4 on cnr-2000).  A warm-up run of each variant (compilation, the dual
weights of adsorption), then ``--repeat`` timed runs (the variants' order alternating); the
median wall time of the whole ``digraph.run`` (``median_ms``; ``cpu_ms``: the process's CPU
time) is reported with the counters (rounds, vertex and arc updates, vertices
scanned), the certified bound and the L1 distance between the variants' answers.

Cases (``--cases``):

* ``adsorption-low`` / ``adsorption-high``: adsorption (beta 0.8) seeded on the 3 vertices of
  smallest positive out-degree / the 10 of largest, on each of ``--graphs``;
* ``chain``: PageRank personalised at the head of a chain of ``--chain`` vertices (the residual
  walks down the chain one vertex a round);
* ``pagerank``: uniform PageRank on each of ``--dense-graphs`` (the residual is everywhere: no
  set is built until the very end; this checks that the dense case did not get slower).

On code without the residual set (a checkout from before it, to time the engines as they
were: ``--label head``), only the variant ``head`` runs.

    NUMBA_NUM_THREADS=2 python benchmarks/bench_frontier.py --graphs cnr-2000 dblp-2010 \\
        --dense-graphs cnr-2000 rmat18 --json benchmarks/results/frontier_cpu2.json
"""

import argparse
import dataclasses
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
from digraph.dispatch import bsp, vertex_async  # noqa: E402
from digraph.graph import Graph  # noqa: E402
from graphs import load  # noqa: E402

MODULES = {"bsp": bsp, "vertex-async": vertex_async}
HAS_SET = hasattr(bsp.DEFAULT, "set_share")
KEYS = ("rounds", "dense_rounds", "sparse_rounds", "vertex_updates", "arc_updates",
        "vertices_scanned", "error_bound", "converged", "time_compute", "finished_by")


def seeds_of(g, kind):
    """The 10 vertices of largest out-degree (``high``) or the 3 of smallest positive one."""
    deg = g.out_degree
    has = np.flatnonzero(deg > 0)
    order = np.argsort(-deg[has] if kind == "high" else deg[has], kind="stable")
    return g.vertex_ids[has[order[:10 if kind == "high" else 3]]]


def chain(n):
    return Graph.from_arrays(np.arange(n - 1), np.arange(1, n), num_vertices=n)


def _once(g, name, mode, params, variant):
    mod = MODULES[mode]
    old = mod.DEFAULT
    if variant == "full":
        mod.DEFAULT = dataclasses.replace(old, set_share=0.0)  # a benchmark's override, restored
    try:
        t0, c0 = time.perf_counter(), time.process_time()
        r = digraph.run(g, name, mode=mode, **params)
        return time.perf_counter() - t0, time.process_time() - c0, r
    finally:
        mod.DEFAULT = old


def cases(a):
    """(graph label, graph, algorithm, params) for every case asked for."""
    for case in a.cases:
        if case == "chain":
            yield f"chain{a.chain}", chain(a.chain), "pagerank", {"personalization": {0: 1.0}}
            continue
        for gname in a.dense_graphs if case == "pagerank" else a.graphs:
            g = load(gname)
            if case == "pagerank":
                yield gname, g, "pagerank", {}
            else:
                kind = case.split("-")[1]
                yield gname, g, "adsorption", {"seeds": seeds_of(g, kind), "beta": 0.8,
                                               "_case": f"adsorption-{kind}"}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", nargs="+", default=["cnr-2000", "dblp-2010"],
                    help="graphs of the adsorption cases")
    ap.add_argument("--dense-graphs", nargs="+", default=["cnr-2000", "rmat18"],
                    help="graphs of the uniform PageRank case")
    ap.add_argument("--cases", nargs="+", default=["adsorption-low", "adsorption-high", "chain",
                                                   "pagerank"])
    ap.add_argument("--modes", nargs="+", default=["bsp", "vertex-async"])
    ap.add_argument("--chain", type=int, default=10**6)
    ap.add_argument("--tol", type=float, help="default: each algorithm's own (1e-6)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--label", default="", help="a tag stored in every row (e.g. the checkout)")
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    import numba
    variants = ("set", "full") if HAS_SET else ("head",)
    rows = []
    load0 = os.getloadavg()
    for gname, g, name, params in cases(a):
        case = params.pop("_case", "chain" if gname.startswith("chain") else name)
        if a.tol is not None:
            params["tol"] = a.tol
        for mode in a.modes:
            for v in variants:  # warm-up: compilation, dual weights, first touch
                _once(g, name, mode, params, v)
            times = {v: [] for v in variants}
            cpu = {v: [] for v in variants}
            last = {}
            for i in range(a.repeat):
                for v in variants if i % 2 == 0 else variants[::-1]:  # no variant always first
                    t, c, r = _once(g, name, mode, params, v)
                    times[v].append(t)
                    cpu[v].append(c)
                    last[v] = r
            ref = last[variants[-1]].values
            for v in variants:
                s = last[v].stats
                row = dict(case=case, graph=gname, n=g.num_vertices, m=g.num_arcs,
                           algorithm=name, mode=mode, variant=v, label=a.label,
                           method=f"{case} {mode} {v}", tol=float(last[v].params["tol"]),
                           median_ms=1e3 * statistics.median(times[v]),
                           all_ms=[1e3 * t for t in times[v]],
                           cpu_ms=1e3 * statistics.median(cpu[v]),
                           l1_vs_last_variant=float(np.abs(last[v].values - ref).sum()),
                           **{k: (s.get(k).item() if hasattr(s.get(k), "item") else s.get(k))
                              for k in KEYS})
                rows.append(row)
                print(f"{case:16s} {gname:12s} {mode:12s} {v:5s} {row['median_ms']:9.1f} ms  rounds "
                      f"{row['rounds']:4d} dense {row['dense_rounds']:3d} arcs "
                      f"{row['arc_updates']:>12,}  scanned {row['vertices_scanned'] or 0:>12,}  "
                      f"bound {row['error_bound']:.2e}", flush=True)
    meta = dict(date=time.strftime("%Y-%m-%d"), machine=platform.node(),
                processor=platform.processor() or platform.machine(), cpus=os.cpu_count(),
                threads=numba.get_num_threads(), repeat=a.repeat,
                load_average_start=load0, load_average_end=os.getloadavg(),
                command="benchmarks/bench_frontier.py " + " ".join(argv or sys.argv[1:]))
    if a.json:
        Path(a.json).write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    return rows


if __name__ == "__main__":
    main()
