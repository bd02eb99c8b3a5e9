"""PageRank on one GPU against the CuPy power iteration a user would write (issue 17, GPU goal).

* CuPy: ``y ← α Pᵀ x`` (``cupyx.scipy.sparse`` float64 CSR SpMV, built once, not timed), then
  ``y += (1 − Σy) v`` (dangling mass and teleport by ``v``), stopped by the sound bound
  ``α/(1 − α)·‖y − x‖₁ ≤ tol`` read back every round (the answer left on the GPU; a second row
  adds its copy to the host, which ``digraph.run`` always makes);
* digraph ``mode=None`` (the router's choice: a power probe, or bsp when it trips), ``"power"``
  (:mod:`digraph.dispatch.gpu_power`, and its kernel with ``group`` threads per vertex forced) and
  ``"bsp"``.

Median of ``--repeat`` warm runs (a warm-up first: compilation and uploads not timed); true L1
error against a CuPy power iteration to 1e-13.

    python benchmarks/bench_gpu_pagerank.py --graphs cnr-2000 dblp-2010 rmat22 rmat24 --json $OUT/gpu_pr.json
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
from bench_gpu import load_graph  # noqa: E402


def cupy_matrix(cp, g, alpha):
    import cupyx.scipy.sparse as csp
    out = g.out_degree.astype(np.float64)
    src = cp.asarray(g.in_sources)
    vals = cp.asarray(alpha / np.maximum(out, 1.0))[src]
    return csp.csr_matrix((vals, src.astype(cp.int32), cp.asarray(g.in_offsets)),
                          shape=(g.num_vertices, g.num_vertices))


def cupy_power(cp, A, n, alpha, tol):
    v = cp.full(n, 1.0 / n)
    x = v.copy()
    k = 0
    while True:
        y = A @ x
        y += (1.0 - y.sum()) * v
        d = float(cp.abs(y - x).sum())
        x = y
        k += 1
        if alpha / (1 - alpha) * d <= tol:
            cp.cuda.Device().synchronize()
            return x, k


def write_gpu_results(path, rows, tol):
    """``{"meta": {date, machine, tol, gpu}, "rows": rows}`` into the JSON file ``path`` (None:
    nothing), the GPU named as CUDA names device 0."""
    if not path:
        return
    import cupy as cp
    meta = {"date": time.strftime("%Y-%m-%d"), "machine": platform.node(), "tol": tol,
            "gpu": cp.cuda.runtime.getDeviceProperties(0)["name"].decode()}
    Path(path).write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))


def timed(fn, repeat, sync):
    fn()
    ts, out = [], None
    for _ in range(repeat):
        sync()
        t0 = time.perf_counter()
        out = fn()
        sync()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts), out


def main():
    import cupy as cp
    from digraph.algorithms import PageRank
    from digraph.dispatch import gpu_power
    from digraph.result import RunStats
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphs", nargs="+", default=["cnr-2000", "dblp-2010", "rmat22", "rmat24"])
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--groups", nargs="*", type=int, default=[1, 4, 8, 16, 32])
    ap.add_argument("--anderson", nargs="*", type=int, default=[],
                    help="memories of the Anderson acceleration to time (gpu_power.solve)")
    ap.add_argument("--skip-modes", action="store_true", help="no digraph.run rows but the default")
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
        ref, _ = cupy_power(cp, A, n, 0.85, 1e-13)
        ref = cp.asnumpy(ref)
        base = {"graph": name, "n": n, "m": g.num_arcs}
        t, (x, k) = timed(lambda: cupy_power(cp, A, n, 0.85, args.tol), args.repeat, sync)
        peer = t
        emit(dict(base, method="cupy power", rounds=k, time_ms=t * 1e3,
                  true_error=float(np.abs(cp.asnumpy(x) - ref).sum()), ratio=1.0))
        t, _ = timed(lambda: cp.asnumpy(cupy_power(cp, A, n, 0.85, args.tol)[0]), args.repeat, sync)
        emit(dict(base, method="cupy power, answer copied to the host", rounds=k, time_ms=t * 1e3,
                  ratio=t / peer))
        del A
        cp.get_default_memory_pool().free_all_blocks()
        for mode in (None,) if args.skip_modes else (None, "power", "bsp"):
            t, r = timed(lambda: digraph.run(g, "pagerank", mode=mode, device="cuda", tol=args.tol),
                         args.repeat, sync)
            emit(dict(base, method=f"digraph {mode or 'default'}", ran=r.stats["mode"],
                      rounds=int(r.stats["rounds"]), time_ms=t * 1e3,
                      compute_ms=r.stats["time_compute"] * 1e3, bound=float(r.stats["error_bound"]),
                      true_error=float(np.abs(r.values - ref).sum()), ratio=t / peer,
                      group=r.stats.get("power_group"), route=r.stats["route"]))
        algo = PageRank()
        system = algo.prepare(g, **algo.bind(g, {}))

        def solve_timed(settings):
            """(median time, x, stats of the last run) of ``gpu_power.solve`` with ``settings``."""
            st = RunStats.new()

            def once():
                st.clear()
                st.update(RunStats.new())
                return gpu_power.solve(g, system, tol=args.tol, max_iter=1000, stats=st,
                                       settings=settings)
            t, (x, _) = timed(once, args.repeat, sync)
            return t, x, st

        for mem in args.anderson:
            t, x, st = solve_timed(dataclasses.replace(gpu_power.DEFAULT, anderson=mem))
            emit(dict(base, method=f"power kernel anderson={mem}", time_ms=t * 1e3, ratio=t / peer,
                      rounds=int(st["rounds"]), bound=float(st["error_bound"]),
                      mixes=st.get("anderson_mixes"), restarts=st.get("anderson_restarts"),
                      true_error=float(np.abs(x - ref).sum())))
        for G in args.groups:
            def once():
                return gpu_power.solve(g, system, tol=args.tol, max_iter=1000, stats=RunStats.new(),
                                       group=G)
            t, (x, ok) = timed(once, args.repeat, sync)
            emit(dict(base, method=f"power kernel group={G}", time_ms=t * 1e3, ratio=t / peer,
                      true_error=float(np.abs(x / x.sum() - ref).sum())))
        for pull in ("grouped", "binned", "cusparse"):
            t, x, st = solve_timed(dataclasses.replace(
                gpu_power.DEFAULT, bin_arcs=0 if pull == "binned" else 1 << 62,
                cusparse_arcs=0 if pull == "cusparse" else 1 << 62))
            emit(dict(base, method=f"power kernel {pull}", ran=st["power_pull"],
                      anderson=st["power_anderson"], rounds=int(st["rounds"]),
                      time_ms=t * 1e3, ratio=t / peer, true_error=float(np.abs(x - ref).sum())))
        del g
        cp.get_default_memory_pool().free_all_blocks()
    if args.json:
        meta = {"date": time.strftime("%Y-%m-%d"), "machine": platform.node(), "tol": args.tol,
                "gpu": digraph.run(digraph.load(([0], [1])), "pagerank", device="cuda").stats.get("gpu")}
        Path(args.json).write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
