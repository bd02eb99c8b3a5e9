"""SSSP: digraph's default (``mode=None``: ``vertex-async``) and ``bsp`` against scipy's Dijkstra.

Graphs (any mix):

* ``chainN``: the path ``0 → 1 → … → N−1``, unweighted, from vertex 0 (one long frontier of one
  vertex: the case the one-thread queue phase of ``vertex-async`` is for);
* ``gridK``: a ``K × K`` grid, both directions of every edge, integer weights drawn uniformly from
  [1, 100] (seed 0), from the corner 0;
* a dataset name of ``../shared/datasets`` or ``rmatK`` (``benchmarks/graphs.py``), unit weights,
  from the vertex of largest out-degree (as ``bench_algorithms.py``).

Each row is the median of ``--repeat`` warm runs of the whole ``digraph.run`` (or of
``scipy.sparse.csgraph.dijkstra`` on a CSR of the same arcs, built outside the timing; parallel
arcs keep the lightest, as Dijkstra does), the methods interleaved run by run.  The first run of
each digraph method is an untimed warm-up; its ``time_compile`` (Numba cache misses) is reported
apart.  Every answer is checked equal to scipy's, exactly.  ``bsp`` is left out on chains of more
than :data:`BSP_CHAIN_MAX` vertices (one round per vertex).

    NUMBA_NUM_THREADS=2 taskset -c 0,1 python benchmarks/bench_sssp.py \\
        --graphs chain1000000 grid700 cnr-2000 dblp-2010 --repeat 7 --json benchmarks/results/sssp_cpu2.json
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
from graphs import load  # noqa: E402


BSP_CHAIN_MAX = 10_000
"""``bsp`` is left out on chains longer than this: it needs one round per vertex of the chain."""


def build(name):
    """(graph, source id, description)."""
    if name.startswith("chain"):
        n = int(name[5:])
        src = np.arange(n - 1, dtype=np.int64)
        return digraph.load((src, src + 1), num_vertices=n), 0, f"path of {n:,} vertices, unweighted"
    if name.startswith("grid"):
        k = int(name[4:])
        idx = np.arange(k * k, dtype=np.int64).reshape(k, k)
        a = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel()])
        b = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel()])
        w = np.random.default_rng(0).integers(1, 101, 2 * a.size).astype(np.float64)
        src, dst = np.concatenate([a, b]), np.concatenate([b, a])
        return (digraph.load((src, dst, w), num_vertices=k * k), 0,
                f"{k}x{k} grid, both directions, weights 1..100")
    g = load(name)
    hub = int(np.argmax(g.out_degree))
    return g, g.vertex_ids[hub], "unit weights, from the vertex of largest out-degree"


def scipy_dijkstra(g, s):
    """A callable running scipy's Dijkstra from internal vertex ``s`` (CSR built here, untimed)."""
    import scipy.sparse as sp
    import scipy.sparse.csgraph as cg
    u, v = g.arc_sources.astype(np.int64), g.out_targets.astype(np.int64)
    w = g.arc_weights() if g.weighted else np.ones(u.size)
    first = np.lexsort((w, v, u))  # parallel arcs: the lightest (csr_matrix would add them)
    keep = first[np.r_[True, (np.diff(u[first]) != 0) | (np.diff(v[first]) != 0)]] if u.size else first
    n = g.num_vertices
    A = sp.csr_matrix((w[keep], (u[keep], v[keep])), shape=(n, n))
    return lambda: cg.dijkstra(A, directed=True, indices=s)


def cpu_model():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--graphs", nargs="+", default=["chain1000000", "grid700", "cnr-2000", "dblp-2010"])
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    rows = []
    print(f"{'graph':<14} {'method':<22} {'median ms':>10} {'min ms':>9} {'rounds':>7} "
          f"{'arc updates':>12} {'compile s':>9} {'check':>6}")
    for gname in args.graphs:
        g, source, what = build(gname)
        s = int(g.index_of(source, "source"))
        meths = {"digraph default": lambda: digraph.run(g, "sssp", source=source)}
        if gname.startswith("chain") and g.num_vertices > BSP_CHAIN_MAX:
            print(f"{gname:<14} {'digraph bsp':<22} skipped: a chain takes bsp one round per vertex")
        else:
            meths["digraph bsp"] = lambda: digraph.run(g, "sssp", source=source, mode="bsp")
        meths["scipy dijkstra"] = scipy_dijkstra(g, s)
        compile_s = {}
        for name, fn in meths.items():  # warm-up: compile or load the kernels, build cached arrays
            out = fn()
            if name.startswith("digraph"):
                compile_s[name] = float(out.stats.get("time_compile", 0.0))
        times = {k: [] for k in meths}
        last = {}
        for _ in range(args.repeat):
            for name, fn in meths.items():
                t0 = time.perf_counter()
                last[name] = fn()
                times[name].append(time.perf_counter() - t0)
        ref = last["scipy dijkstra"]
        for name, ts in times.items():
            out = last[name]
            vals = out if isinstance(out, np.ndarray) else out.values
            row = dict(graph=gname, what=what, n=g.num_vertices, m=g.num_arcs, method=name,
                       median_ms=statistics.median(ts) * 1e3, min_ms=min(ts) * 1e3,
                       times_ms=[t * 1e3 for t in ts],
                       check="equal" if np.array_equal(vals, ref) else "DIFFERENT")
            if not isinstance(out, np.ndarray):
                st = out.stats
                row.update(mode=st["mode"], rounds=int(st["rounds"]), arc_updates=int(st["arc_updates"]),
                           queue=st.get("queue"), queue_phases=st.get("queue_phases"),
                           compute_ms=st["time_compute"] * 1e3, compile_s=compile_s[name])
            rows.append(row)
            print(f"{gname:<14} {name + (' (' + row['mode'] + ')' if 'mode' in row and name.endswith('default') else ''):<22} "
                  f"{row['median_ms']:>10.1f} {row['min_ms']:>9.1f} {row.get('rounds', ''):>7} "
                  f"{row.get('arc_updates', ''):>12} {row.get('compile_s', 0.0):>9.2f} {row['check']:>6}",
                  flush=True)
    if args.json:
        import numba
        import scipy
        Path(args.json).write_text(json.dumps(dict(
            meta=dict(date=time.strftime("%Y-%m-%d"), cpu=cpu_model(), cores=os.cpu_count(),
                      numba_threads=numba.config.NUMBA_NUM_THREADS, load_average=os.getloadavg(),
                      repeat=args.repeat, python=platform.python_version(), numba=numba.__version__,
                      numpy=np.__version__, scipy=scipy.__version__),
            rows=rows), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
