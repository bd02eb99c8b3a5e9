"""k-core: digraph's peeling (``mode="peel"``) against its h-index iteration and igraph's coreness.

Rows, each the median of ``--repeat`` warm runs of the whole ``digraph.run`` on a loaded graph (the
methods interleaved run by run, so that a noisy neighbour hits them alike):

* ``peel pkc 1t`` / ``peel pkc 2t``: the default (PKC, :mod:`digraph.dispatch.peel`) on 1 and 2 threads;
* ``peel bz 1t``: Batagelj–Zaversnik, forced by raising ``PeelSettings.pkc_threads`` above 1;
* ``peel 2t, first run``: the default on 2 threads with the graph's cached arrays dropped first
  (``in_sources`` built in the run, as on a freshly loaded graph);
* ``vertex-async 2t``: the h-index iteration, the k-core default before peeling;
* ``igraph coreness``: ``Graph.coreness(mode="all")`` on a directed igraph ``Graph`` of the same
  arcs, self-loops left out (one thread; the ``Graph`` is built outside the timing) — the answer
  of the multigraph, as digraph's, checked equal;
* networkx ``core_number`` checks the answer (graphs up to ``--nx-max-arcs`` arcs, without
  parallel arcs: a networkx ``DiGraph`` keeps one of them).

    NUMBA_NUM_THREADS=2 python benchmarks/bench_kcore.py \\
        --graphs cnr-2000 dblp-2010 wiki-Vote rmat18 --json benchmarks/results/kcore_peel_cpu2.json
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
from digraph.dispatch import peel as peel_engine  # noqa: E402
from graphs import load  # noqa: E402


def _run(g, mode, threads, first=False, bz=False):
    def go():
        saved = dict(g._cache)
        if first:  # as on a freshly loaded graph; the other methods get their arrays back after
            g._cache.clear()
        old = peel_engine.DEFAULT
        if bz:  # digraph.run takes no engine settings: its default, for this run
            peel_engine.DEFAULT = dataclasses.replace(old, pkc_threads=threads + 1)
        try:
            return digraph.run(g, "kcore", mode=mode, threads=threads)
        finally:
            peel_engine.DEFAULT = old
            if first:
                g._cache.clear()
                g._cache.update(saved)
    return go


def methods(g, with_igraph, many=0):
    """name -> callable returning the core numbers (np.int64 array) and the digraph stats or None
    (``many``: also PKC and vertex-async on that many threads)."""
    out = {
        "peel pkc 1t": _run(g, "peel", 1),
        "peel pkc 2t": _run(g, "peel", 2),
        "peel bz 1t": _run(g, "peel", 1, bz=True),
        "peel 2t, first run": _run(g, "peel", 2, first=True),
        "vertex-async 2t": _run(g, "vertex-async", 2),
    }
    if many:
        out[f"peel pkc {many}t"] = _run(g, "peel", many)
        out[f"vertex-async {many}t"] = _run(g, "vertex-async", many)
    wrapped = {k: (lambda f=f: (lambda r: (r.values, r.stats))(f())) for k, f in out.items()}
    if with_igraph:
        import igraph as ig
        src = g.arc_sources.astype(np.int64)
        dst = g.out_targets.astype(np.int64)
        keep = src != dst
        G = ig.Graph(n=g.num_vertices, edges=np.column_stack([src[keep], dst[keep]]), directed=True)
        wrapped["igraph coreness"] = lambda: (np.asarray(G.coreness(mode="all"), np.int64), None)
    return wrapped


def nx_check(g, values, max_arcs):
    """'equal' / 'DIFFERENT' against networkx core_number, or why it was not run."""
    if g.num_arcs > max_arcs:
        return "skipped (size)"
    src, dst = g.arc_sources, g.out_targets
    keep = src != dst
    pairs = np.unique(np.stack([src[keep], dst[keep]], 1), axis=0)
    if len(pairs) != int(keep.sum()):
        return "skipped (parallel arcs)"
    import networkx as nx
    G = nx.DiGraph()
    G.add_nodes_from(range(g.num_vertices))
    G.add_edges_from(pairs.tolist())
    ref = nx.core_number(G)
    want = np.array([ref[v] for v in range(g.num_vertices)], np.int64)
    return "equal" if np.array_equal(want, values) else "DIFFERENT"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--graphs", nargs="+", default=["cnr-2000", "dblp-2010", "wiki-Vote", "rmat18"])
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--nx-max-arcs", type=int, default=2_000_000)
    p.add_argument("--no-igraph", action="store_true")
    p.add_argument("--json", default=None)
    p.add_argument("--many", type=int, default=0, help="also time PKC and vertex-async on this many threads")
    args = p.parse_args(argv)
    try:
        import igraph  # noqa: F401
        with_igraph = not args.no_igraph
    except ImportError:
        with_igraph = False
    rows = []
    print(f"{'graph':<10} {'method':<20} {'median ms':>10} {'min ms':>9} {'rounds':>7} {'check':>8}")
    for gname in args.graphs:
        g = load(gname)
        meths = methods(g, with_igraph, args.many)
        for fn in meths.values():  # warm-up: compile, build cached arrays
            fn()
        times = {k: [] for k in meths}
        answers = {}
        for _ in range(args.repeat):
            for name, fn in meths.items():
                t0 = time.perf_counter()
                vals, st = fn()
                times[name].append(time.perf_counter() - t0)
                answers[name] = (vals, st)
        ref = answers["peel pkc 2t"][0]
        for name, ts in times.items():
            vals, st = answers[name]
            row = dict(graph=gname, n=g.num_vertices, m=g.num_arcs, method=name,
                       median_ms=statistics.median(ts) * 1e3, min_ms=min(ts) * 1e3,
                       times_ms=[t * 1e3 for t in ts],
                       check="equal" if np.array_equal(vals, ref) else "DIFFERENT")
            if st is not None:
                row.update(rounds=int(st["rounds"]), arc_updates=int(st["arc_updates"]),
                           compute_ms=st["time_compute"] * 1e3, schedule=st.get("peel"),
                           mode=st["mode"])
            rows.append(row)
            print(f"{gname:<10} {name:<20} {row['median_ms']:>10.1f} {row['min_ms']:>9.1f} "
                  f"{row.get('rounds', ''):>7} {row['check']:>8}", flush=True)
        check = nx_check(g, ref, args.nx_max_arcs)
        rows.append(dict(graph=gname, method="networkx core_number", check=check))
        print(f"{gname:<10} {'networkx check':<20} {check:>38}", flush=True)
        if with_igraph:
            ig_ms = statistics.median(times["igraph coreness"]) * 1e3
            for t in (1, 2):
                peel_ms = statistics.median(times[f"peel pkc {t}t"]) * 1e3
                print(f"{gname:<10} peel {t}t / igraph = {peel_ms / ig_ms:.2f}x", flush=True)
    if args.json:
        import numba
        Path(args.json).write_text(json.dumps(dict(
            rows=rows, date=time.strftime("%Y-%m-%d"), cores=os.cpu_count(),
            numba_threads=numba.config.NUMBA_NUM_THREADS, machine=platform.processor() or platform.machine(),
            load_average=os.getloadavg(), repeat=args.repeat), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
