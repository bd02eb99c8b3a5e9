"""The SCC engine on one GPU (``mode="scc"``, issue 18 item 1) against ``bsp``, the default
(``power``) and the CuPy power iteration, PageRank at equal certified accuracy.

Rows per graph: the CuPy power iteration (``bench_gpu_pagerank.cupy_power``, its own sound stop),
``digraph.run`` with ``mode=None``, ``"bsp"`` and ``"scc"`` (whole warm runs: the answer on the
host), then ``gpu.solve(mode="scc")`` with each ``--heavy`` threshold
(:attr:`~digraph.dispatch.cuda.one_gpu.scc.GpuSccSettings.heavy_arcs`) and priority share.  Median
of ``--repeat`` warm runs after a warm-up (compilation and uploads not timed; the first run's
time is reported as ``first_ms``); arc updates and rounds from ``stats``; true L1 error against a
CuPy power iteration to 1e-13.

    python benchmarks/bench_gpu_scc.py --graphs cnr-2000 cit-HepPh dblp-2010 wiki-Vote --json $OUT/gpu_scc.json
"""

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import digraph  # noqa: E402
from bench_gpu import load_graph  # noqa: E402
from bench_gpu_pagerank import cupy_matrix, cupy_power, timed  # noqa: E402


def main():
    import cupy as cp
    from digraph.algorithms import PageRank
    from digraph.dispatch import gpu
    from digraph.dispatch.cuda.one_gpu.scc import GpuSccSettings
    from digraph.result import RunStats
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphs", nargs="+", default=["cnr-2000", "cit-HepPh", "dblp-2010", "wiki-Vote"])
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--heavy", nargs="*", type=int, default=[4096, 16384, 65536])
    ap.add_argument("--prio", nargs="*", type=float, default=[0.5])
    ap.add_argument("--json")
    args = ap.parse_args()
    sync = cp.cuda.Device().synchronize
    rows = []

    def emit(row):
        rows.append(row)
        print(json.dumps(row), flush=True)

    for name in args.graphs:
        g, _ = load_graph(name)
        n = g.num_vertices
        A = cupy_matrix(cp, g, 0.85)
        ref = cp.asnumpy(cupy_power(cp, A, n, 0.85, 1e-13)[0])
        base = {"graph": name, "n": n, "m": g.num_arcs}
        peer, xh = timed(lambda: cp.asnumpy(cupy_power(cp, A, n, 0.85, args.tol)[0]), args.repeat,
                         sync)
        emit(dict(base, method="cupy power (answer on the host)", time_ms=peer * 1e3,
                  true_error=float(np.abs(xh - ref).sum())))
        A = None
        bsp_arcs = None
        for mode in ("bsp", None, "scc"):
            t0 = time.perf_counter()
            digraph.run(g, "pagerank", mode=mode, device="cuda", tol=args.tol)
            first = time.perf_counter() - t0
            t, r = timed(lambda: digraph.run(g, "pagerank", mode=mode, device="cuda", tol=args.tol),
                         args.repeat, sync)
            s = r.stats
            if mode == "bsp":
                bsp_arcs, bsp_t = int(s["arc_updates"]), t
            emit(dict(base, method=f"digraph {mode or 'default'}", ran=s["mode"],
                      time_ms=t * 1e3, first_ms=first * 1e3, ratio_cupy=t / peer,
                      ratio_bsp=t / bsp_t, rounds=int(s["rounds"]),
                      arc_updates=int(s["arc_updates"]), arcs_vs_bsp=s["arc_updates"] / bsp_arcs,
                      bound=float(s["error_bound"]), true_error=float(np.abs(r.values - ref).sum()),
                      route=s.get("route"), phases=s.get("scc_phases"), heavy=s.get("scc_heavy"),
                      heavy_rounds=s.get("heavy_rounds"), finished_by=s.get("finished_by")))
        algo = PageRank()
        system = algo.prepare(g, **algo.bind(g, {}))
        for heavy in args.heavy:
            for prio in args.prio:
                st = RunStats.new()
                settings = GpuSccSettings(heavy_arcs=heavy, priority_share=prio)

                def once():
                    st.clear()
                    st.update(RunStats.new())
                    return gpu.solve(g, system, mode="scc", tol=args.tol, max_iter=10_000,
                                     stats=st, scc_settings=settings)
                t, (x, ok) = timed(once, args.repeat, sync)
                emit(dict(base, method=f"gpu.solve scc heavy={heavy} prio={prio}",
                          time_ms=t * 1e3, ratio_bsp=t / bsp_t, converged=bool(ok),
                          rounds=int(st["rounds"]), arc_updates=int(st["arc_updates"]),
                          arcs_vs_bsp=st["arc_updates"] / bsp_arcs, sweeps=int(st["sweeps"]),
                          phases=st["scc_phases"], heavy=st["scc_heavy"],
                          heavy_rounds=st["heavy_rounds"], bound=float(st["error_bound"]),
                          finished_by=st.get("finished_by"),
                          true_error=float(np.abs(x / x.sum() - ref).sum())))
        g = None
        cp.get_default_memory_pool().free_all_blocks()
    if args.json:
        meta = {"date": time.strftime("%Y-%m-%d"), "machine": platform.node(), "tol": args.tol,
                "gpu": digraph.run(digraph.load(([0], [1])), "pagerank", device="cuda").stats.get("gpu")}
        Path(args.json).write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
