"""PageRank's power iteration sharded over 1, 2 and 4 GPUs of one host, against the CuPy power
iteration on one GPU a user would write (issue 17, multi-GPU goal: R-MAT 2^25 on four GPUs at
most 0.4x that iteration, and 1 -> 4 GPUs at least 3x).

    python benchmarks/bench_multi_gpu_power.py --graphs rmat22 rmat24 rmat25 --gpus 1 2 4 \\
        --json $OUT/multi_gpu_power.json

Rows per graph: the CuPy power iteration on GPU 0 (``bench_gpu_pagerank.cupy_power``, float64
CSR SpMV, the sound stop ``α/(1 − α)·‖y − x‖₁ ≤ tol``, the answer left on the GPU); digraph's
one-GPU power iteration (``digraph.run(..., device="cuda", mode="power")``); the sharded power
iteration (:func:`digraph.dispatch.multi_gpu_power.solve`) on k GPUs, with the binned pull per
shard and with the grouped one; and ``digraph.run`` with every GPU named and no mode (the
router's choice, ``stats.route``).  Medians of ``--repeat`` runs after a warm-up (compilation,
uploads); true L1 error against the CuPy iteration run to 1e-13.  R-MAT graphs are generated on
the GPU as in ``bench_gpu.py`` (2^S vertices, 16 arcs each, seed S).
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
from bench_gpu_pagerank import cupy_matrix, cupy_power, timed  # noqa: E402


def timed_median_run(fn, repeat, sync, keep):
    """:func:`bench_gpu_pagerank.timed`, with ``keep(output)`` of the run whose time is the median
    (the lower of the two middle ones for an even ``repeat``) besides the median time and the last
    run's output, so that a breakdown read from it (set-up, rounds, gather, busy and wait times)
    belongs to the time reported.  Only the last output is held while the next run goes, as
    ``timed`` does: holding every run's answer (page-locked, 256 MiB on R-MAT 2^25) made each
    run's gather allocate fresh page-locked memory (122 ms of a 213 ms median on one H200)."""
    fn()
    ts, kept, out = [], [], None
    for _ in range(repeat):
        sync()
        t0 = time.perf_counter()
        out = fn()
        sync()
        ts.append(time.perf_counter() - t0)
        kept.append(keep(out))
    mid = sorted(range(len(ts)), key=lambda i: ts[i])[(len(ts) - 1) // 2]
    return statistics.median(ts), out, kept[mid]


def main():
    import cupy as cp
    from digraph.algorithms import PageRank
    from digraph.dispatch import gpu_power, multi_gpu_power
    from digraph.result import RunStats
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphs", nargs="+", default=["rmat22", "rmat24", "rmat25"])
    ap.add_argument("--gpus", nargs="+", type=int, default=[1, 2, 4])
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--pulls", nargs="+", default=["cusparse", "binned", "grouped"])
    ap.add_argument("--pack-shares", nargs="+", type=float,
                    help="PowerGpuSettings.pack_share values to compare (default: the default)")
    ap.add_argument("--anderson", nargs="+", type=int, default=None,
                    help="memories of the Anderson acceleration for the sharded rows "
                         "(default: PowerGpuSettings.anderson)")
    ap.add_argument("--vertex-costs", nargs="+", type=int, default=None,
                    help="PowerGpuSettings.shard_vertex_cost values (default: the setting's)")
    ap.add_argument("--layouts", nargs="+", default=None,
                    help="PowerGpuSettings.shard_layout values (ranges, dealt, auto; default: "
                         "the setting's)")
    ap.add_argument("--push", nargs="+", choices=["on", "off"], default=None,
                    help="PowerGpuSettings.shard_push: the packed exchange by peer writes (on) "
                         "or by copies (off) (default: the setting's)")
    ap.add_argument("--interleave", type=int, default=0,
                    help="then N rounds of digraph.run on one GPU and on all GPUs given, "
                         "alternated (the user's 1 -> k, drift falling on both alike)")
    ap.add_argument("--settle", type=int, default=0,
                    help="sharded runs before the timed ones (each one's time, kernel times "
                         "and arcs per GPU are in the row's 'settle')")
    ap.add_argument("--profile", action="store_true",
                    help="after each sharded variant on 2+ GPUs, one more run under cProfile: "
                         "the host's top functions by own time")
    ap.add_argument("--json")
    args = ap.parse_args()
    ngpu = cp.cuda.runtime.getDeviceCount()
    gpus = [k for k in args.gpus if k <= ngpu]

    def sync():
        for i in range(ngpu):
            with cp.cuda.Device(i):
                cp.cuda.Device(i).synchronize()

    rows = []

    def emit(row):
        rows.append(row)
        print(json.dumps(row), flush=True)

    def save():
        if args.json:
            meta = {"date": time.strftime("%Y-%m-%d"), "machine": platform.node(),
                    "tol": args.tol, "gpus": ngpu,
                    "gpu": cp.cuda.runtime.getDeviceProperties(0)["name"].decode()}
            Path(args.json).write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))

    for name in args.graphs:
        g, t_load = load_graph(name)
        n = g.num_vertices
        base = {"graph": name, "n": n, "m": g.num_arcs}
        A = cupy_matrix(cp, g, 0.85)
        ref, _ = cupy_power(cp, A, n, 0.85, 1e-13)
        ref = cp.asnumpy(ref)
        t, (x, k) = timed(lambda: cupy_power(cp, A, n, 0.85, args.tol), args.repeat, sync)
        peer = t
        emit(dict(base, method="cupy power, one GPU", gpus=1, rounds=k, time_ms=t * 1e3,
                  true_error=float(np.abs(cp.asnumpy(x) - ref).sum()), ratio=1.0))
        del A, x
        cp.get_default_memory_pool().free_all_blocks()
        t, r = timed(lambda: digraph.run(g, "pagerank", mode="power", device="cuda",
                                         tol=args.tol), args.repeat, sync)
        one = t
        emit(dict(base, method="digraph power, one GPU (run)", gpus=1,
                  rounds=int(r.stats["rounds"]), time_ms=t * 1e3, ratio=t / peer,
                  bound=float(r.stats["error_bound"]),
                  true_error=float(np.abs(r.values - ref).sum()), pull=r.stats["power_pull"]))
        algo = PageRank()
        system = algo.prepare(g, **algo.bind(g, {}))
        for kk in gpus:
            devices = [f"cuda:{i}" for i in range(kk)]
            shares = args.pack_shares or [gpu_power.DEFAULT.pack_share]
            mems = args.anderson or [gpu_power.DEFAULT.anderson]
            costs = args.vertex_costs or [gpu_power.DEFAULT.shard_vertex_cost]
            layouts = args.layouts or [gpu_power.DEFAULT.shard_layout]
            pushes = [p == "on" for p in args.push] if args.push else [gpu_power.DEFAULT.shard_push]
            for pull, share, mem, vc, lay, push in [
                    (p, sh, a, c, la, pu) for p in args.pulls for sh in shares for a in mems
                    for c in costs for la in layouts for pu in pushes]:
                settings = dataclasses.replace(
                    gpu_power.DEFAULT, bin_arcs=0 if pull == "binned" else 1 << 62,
                    cusparse_arcs=0 if pull == "cusparse" else 1 << 62,
                    pack_share=share, anderson=mem, shard_vertex_cost=vc, shard_layout=lay,
                    shard_push=push)

                def once():
                    s = RunStats.new()
                    x, ok = multi_gpu_power.solve(g, system, devices=devices, tol=args.tol,
                                                  max_iter=1000, stats=s, settings=settings)
                    return x, ok, s
                settle = []
                for _ in range(args.settle):
                    sync()
                    t0 = time.perf_counter()
                    s = once()[2]
                    sync()
                    settle.append(dict(ms=round((time.perf_counter() - t0) * 1e3, 1),
                                       gpu_arcs=s["gpu_arcs"],
                                       busy_ms=[round(b * 1e3, 2) for b in s["gpu_busy_s"]]))
                # the answer of the last run, the counters and times of the median one
                t, (x, ok, _), s = timed_median_run(once, args.repeat, sync, keep=lambda o: o[2])
                emit(dict(base, method=f"digraph sharded power ({pull})", gpus=kk,
                          pack_share=share, packed=bool(s.get("power_packed")),
                          exchange=s.get("power_exchange"),
                          anderson=int(s.get("power_anderson", 0)),
                          mixes=s.get("anderson_mixes"), vertex_cost=vc,
                          layout=s.get("power_layout"),
                          rounds_past_stop=s.get("power_rounds_past_stop"),
                          rounds=int(s["rounds"]), time_ms=t * 1e3, ratio=t / peer,
                          speedup_vs_one_gpu_run=one / t, bound=float(s["error_bound"]),
                          true_error=float(np.abs(x - ref).sum()),
                          setup_ms=s["time_setup"] * 1e3, rounds_ms=s["time_rounds"] * 1e3,
                          gather_ms=s["time_gather"] * 1e3,
                          busy_ms=[round(b * 1e3, 2) for b in s["gpu_busy_s"]],
                          wait_ms=[round(b * 1e3, 2) for b in s.get("gpu_exchange_wait_s", [])],
                          bytes_between_gpus=int(s.get("bytes_between_gpus", 0)),
                          gpu_arcs=s["gpu_arcs"], gpu_vertices=s["gpu_vertices"],
                          work_kept=bool(s.get("gpu_work_kept")),
                          settle=settle,
                          sync_wait_ms=s.get("time_sync_wait", 0.0) * 1e3))
                save()
                if args.profile and kk >= 2:
                    import cProfile
                    import io
                    import pstats
                    prof = cProfile.Profile()
                    sync()
                    prof.enable()
                    once()
                    sync()
                    prof.disable()
                    buf = io.StringIO()
                    pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(22)
                    print(f"profile, {kk} GPUs, vertex cost {vc}, layout {lay}:\n" + buf.getvalue()[-6000:])
            if kk >= 2:
                dev = "cuda:" + ",".join(str(i) for i in range(kk))
                t, r = timed(lambda: digraph.run(g, "pagerank", device=dev, tol=args.tol),
                             args.repeat, sync)
                emit(dict(base, method="digraph run, GPUs named, no mode", gpus_named=kk,
                          gpus=int(r.stats["gpus"]), engine=r.stats["engine"],
                          rounds=int(r.stats["rounds"]), time_ms=t * 1e3, ratio=t / peer,
                          true_error=float(np.abs(r.values - ref).sum()),
                          route=r.stats["route"],
                          last_run_parts_ms={nm: round(r.stats[nm] * 1e3, 3) for nm in (
                              "time_total", "time_route", "time_compute", "time_transfer",
                              "time_setup", "time_rounds", "time_sync_wait", "time_gather")
                              if r.stats.get(nm) is not None}))
                save()
        if args.interleave and gpus and max(gpus) >= 2:
            kk = max(gpus)
            dev = "cuda:" + ",".join(str(i) for i in range(kk))
            runs = {"cuda": [], dev: []}
            parts = {d: {} for d in runs}  # the run's stats times (ms), where the engine has them
            names = ("time_total", "time_route", "time_compute", "time_transfer", "time_setup",
                     "time_rounds", "time_sync_wait", "time_gather")
            for i in range(args.interleave + 1):  # the first round warms both up
                for d in runs:
                    sync()
                    t0 = time.perf_counter()
                    r = digraph.run(g, "pagerank", device=d, tol=args.tol)
                    sync()
                    if i:
                        runs[d].append(time.perf_counter() - t0)
                        for nm in names:
                            if r.stats.get(nm) is not None:
                                parts[d].setdefault(nm, []).append(r.stats[nm] * 1e3)
                    del r
            t1, tk = (statistics.median(runs[d]) for d in runs)
            medians = {d: {nm: round(statistics.median(v), 3) for nm, v in parts[d].items()}
                       for d in runs}
            emit(dict(base, method=f"digraph run, one GPU and {kk} GPUs alternated",
                      gpus=kk, repeat=args.interleave, one_gpu_ms=t1 * 1e3, gpus_ms=tk * 1e3,
                      speedup=t1 / tk, one_gpu_runs_ms=[round(t * 1e3, 2) for t in runs["cuda"]],
                      gpus_runs_ms=[round(t * 1e3, 2) for t in runs[dev]],
                      one_gpu_parts_ms=medians["cuda"], gpus_parts_ms=medians[dev]))
            save()
        del g, system
        cp.get_default_memory_pool().free_all_blocks()
    save()


if __name__ == "__main__":
    main()
