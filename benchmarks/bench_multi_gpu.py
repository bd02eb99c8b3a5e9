"""Scaling of the sharded multi-GPU engine (issue 6) over 1, 2 and 4 GPUs of one host.

    python benchmarks/bench_multi_gpu.py --graphs cnr-2000 rmat24 rmat25 --gpus 1 2 4 \\
        --json $OUT/multi.json --markdown $OUT/multi.md

For each graph and algorithm: the one-GPU engine at its default mode (``digraph.run(...,
device="cuda")``, the simple method to beat), then :func:`digraph.dispatch.multi_gpu.solve` on
k = 1, 2, 4 GPUs with each transport (peer-to-peer copies, NCCL).  Times are medians of
``--repeat`` runs after a warm-up run (which compiles and uploads the shards; graph arrays stay
resident as on one GPU); every answer is checked against the one-GPU answer (PageRank: L1
distance; SSSP: exact).  R-MAT graphs (``rmatS``: 2^S vertices, 16 arcs each, a = 0.57,
b = c = 0.19, seed S) are generated on the GPU as in ``bench_gpu.py``.  Counters per row: rounds,
arc updates, bytes between GPUs, per-GPU idle share (1 − kernel time / rounds' wall time).
"""
import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import digraph  # noqa: E402
from digraph.algorithms import get as get_algorithm  # noqa: E402
from digraph.dispatch import multi_gpu  # noqa: E402
from digraph.result import RunStats  # noqa: E402
from bench_gpu import load_graph, median_time  # noqa: E402

MODES = {"pagerank": "bsp", "sssp": "vertex-async", "adsorption": "bsp", "kcore": "vertex-async"}


def params_for(g, algo):
    if algo == "sssp":
        return {"source": g.vertex_ids[int(np.argmax(g.out_degree))]}
    if algo == "adsorption":
        return {"seeds": list(g.vertex_ids[:2])}
    return {}


WARMUP = 1


def timed(fn, repeat, warmup=None, first=None):
    """(median time, last result) of ``repeat`` runs after ``warmup`` runs (default
    :data:`WARMUP`: compile, upload, and the re-cuts of ``MultiGpuSettings.balance``); the warm-up
    runs' times are appended to ``first`` when given."""
    for _ in range(WARMUP if warmup is None else warmup):
        t0 = time.perf_counter()
        fn()
        if first is not None:
            first.append(time.perf_counter() - t0)
    return median_time(fn, repeat)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphs", nargs="+", default=["cnr-2000", "rmat22"])
    ap.add_argument("--algorithms", nargs="+", default=["pagerank", "sssp"])
    ap.add_argument("--gpus", nargs="+", type=int, default=[1, 2, 4])
    ap.add_argument("--exchanges", nargs="+", default=list(multi_gpu.EXCHANGES))
    ap.add_argument("--modes", nargs="+", help="sharded modes (default: the one-GPU default)")
    ap.add_argument("--layouts", nargs="+", default=[multi_gpu.DEFAULT.layout or "none"],
                    help="numberings of linear shards (multi_gpu.LAYOUTS; 'none': vertex order)")
    ap.add_argument("--unrouted", action="store_true",
                    help="also time the one-GPU engine without the one-shard routing of "
                         "bsp on >= GpuSettings.shard_arcs arcs")
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1,
                    help="untimed runs first (sharded runs re-cut their ranges in the first "
                         "few: MultiGpuSettings.balance_recuts + 2 reaches the learnt "
                         "ranges)")
    ap.add_argument("--end-to-end", action="store_true",
                    help="also time digraph.run(..., device='cuda:0,..,k-1')")
    ap.add_argument("--json")
    ap.add_argument("--markdown")
    ap.add_argument("--probe", action="store_true",
                    help="time one PageRank round's kernels per GPU alone, together from one "
                         "host thread and from a thread per GPU, and the all-gathers")
    args = ap.parse_args()
    global WARMUP
    WARMUP = args.warmup
    if args.probe:
        return probe(args)
    from numba import cuda
    avail = len(cuda.gpus)
    name = cuda.get_current_device().name
    name = name.decode() if isinstance(name, bytes) else str(name)
    print(f"{avail} x {name}", flush=True)
    rows = []

    def save():
        if args.json:
            Path(args.json).write_text(json.dumps({"gpu": name, "gpus": avail, "rows": rows},
                                                  indent=1))

    for gname in args.graphs:
        g, t_load = load_graph(gname)
        print(f"{gname}: n={g.num_vertices:,} m={g.num_arcs:,} (load {t_load:.1f} s)", flush=True)
        for algo in args.algorithms:
            A = get_algorithm(algo)
            params = params_for(g, algo)
            tol = args.tol if algo in ("pagerank", "adsorption") else None
            kw = {"tol": tol} if tol else {}
            t1, r1 = timed(lambda: digraph.run(g, algo, device="cuda", **kw, **params),
                           args.repeat)
            system = A.prepare(g, **A.bind(g, params))
            from digraph.dispatch import gpu
            # the raw state of the system (bsp's, comparable with the shards'; a power run's
            # state is already divided by its sum)
            ref_mode = "bsp" if r1.stats.mode == "power" else r1.stats.mode
            ref, _ = gpu.solve(g, system, mode=ref_mode, tol=tol or 1e-8, max_iter=100_000,
                               stats=RunStats.new(), device="cuda:0")
            row = dict(graph=gname, n=g.num_vertices, m=g.num_arcs, algorithm=algo,
                       engine=f"1 GPU, {r1.stats.mode}", gpus=1, exchange="-", time_s=t1,
                       compute_s=r1.stats.time_compute, rounds=r1.stats.rounds,
                       arc_updates=r1.stats.arc_updates, bytes_between_gpus=0,
                       idle_share=[0.0], error_bound=r1.stats.get("error_bound"), check="ref")
            row["engine"] += f" ({r1.stats.get('engine', 'resident')})"
            rows.append(row)
            print(row, flush=True)
            save()
            if args.unrouted and "one shard" in r1.stats.get("route", ""):
                from digraph.dispatch import gpu as gpu_mod
                # digraph.run takes no engine settings: its defaults replaced, then put back
                keep = gpu_mod.DEFAULT
                gpu_mod.DEFAULT = dataclasses.replace(keep, shard_arcs=1 << 62)
                try:
                    t0_, r0 = timed(lambda: digraph.run(g, algo, device="cuda", **kw, **params),
                                    args.repeat)
                finally:
                    gpu_mod.DEFAULT = keep
                rows.append(dict(row, engine=f"1 GPU, {r0.stats.mode} (unrouted)", time_s=t0_,
                                 compute_s=r0.stats.time_compute, rounds=r0.stats.rounds,
                                 arc_updates=r0.stats.arc_updates,
                                 error_bound=r0.stats.get("error_bound"),
                                 check=f"L1 vs routed {np.abs(r0.values - r1.values).sum():.1e}"))
                print(rows[-1], flush=True)
                save()
            for mode, layout in ((md, lay) for md in (args.modes or [MODES[algo]])
                                 for lay in (args.layouts if algo in ("pagerank", "adsorption")
                                             else args.layouts[:1])):
                for k in args.gpus:
                    if k > avail:
                        continue
                    for ex in (args.exchanges if k > 1 else args.exchanges[:1]):
                        devs = [f"cuda:{i}" for i in range(k)]
                        box = {}

                        def once():
                            st = RunStats.new()
                            x, ok = multi_gpu.solve(g, system, devices=devs, mode=mode,
                                                    tol=tol or 1e-8, max_iter=100_000, stats=st,
                                                    exchange=ex, min_arcs_per_gpu=0,
                                                    layout=layout)
                            box["st"], box["ok"] = st, ok
                            return x
                        warm = []
                        try:
                            t, x = timed(once, args.repeat, first=warm)
                        except Exception as e:  # report and go on with the next variant
                            print(f"FAILED {gname} {algo} {mode} {layout} k={k} {ex}: {e!r}",
                                  flush=True)
                            continue
                        st = box["st"]
                        if tol:
                            err = float(np.abs(x - ref).sum())
                            check = f"L1 vs 1 GPU {err:.1e}"
                        else:
                            check = "exact" if np.array_equal(x, ref) else "MISMATCH"
                        row = dict(graph=gname, n=g.num_vertices, m=g.num_arcs, algorithm=algo,
                                   engine=f"sharded {mode}, layout {layout}", gpus=k,
                                   exchange=ex, time_s=t,
                                   rounds=st["rounds"], arc_updates=st["arc_updates"],
                                   bytes_between_gpus=st["bytes_between_gpus"],
                                   idle_share=st.get("gpu_idle_share"),
                                   sends=st.get("gpu_sends"),
                                   setup_s=st.get("time_setup"), rounds_s=st.get("time_rounds"),
                                   certify_s=st.get("time_certify"),
                                   error_bound=st.get("error_bound"), converged=box["ok"],
                                   recuts=st.get("gpu_recuts"),
                                   vertices=st.get("gpu_vertices"),
                                   warmup_s=[round(v, 3) for v in warm], check=check)
                        rows.append(row)
                        print(row, flush=True)
                        save()
                    if args.end_to_end and k > 1 and mode == MODES[algo]:
                        dev = "cuda:" + ",".join(str(i) for i in range(k))
                        t, r = timed(lambda: digraph.run(g, algo, device=dev, **kw, **params),
                                     args.repeat)
                        err = (np.abs(r.values - r1.values).sum() if tol else
                               ("exact" if np.array_equal(r.values, r1.values) else "MISMATCH"))
                        rows.append(dict(graph=gname, n=g.num_vertices, m=g.num_arcs,
                                         algorithm=algo, engine=f"digraph.run, {dev}",
                                         gpus=r.stats.get("gpus", k),
                                         exchange=r.stats.get("exchange", "-"), time_s=t,
                                         rounds=r.stats["rounds"],
                                         arc_updates=r.stats["arc_updates"],
                                         bytes_between_gpus=r.stats.get("bytes_between_gpus", 0),
                                         idle_share=r.stats.get("gpu_idle_share"),
                                         check=(f"L1 vs 1 GPU {err:.1e}" if tol else err)))
                        print(rows[-1], flush=True)
                        save()
        g = None  # frees the graph and its resident GPU arrays before the next one
    if args.markdown:
        lines = ["| graph | algorithm | engine | GPUs | exchange | time | speedup vs 1 GPU engine"
                 " | rounds | arc updates | GB between GPUs | idle share per GPU | check |",
                 "|---|---|---|---:|---|---:|---:|---:|---:|---:|---|---|"]
        base = {}
        for r in rows:
            key = (r["graph"], r["algorithm"])
            if r["engine"].startswith("1 GPU") and key not in base:
                base[key] = r["time_s"]
            sp = base.get(key, r["time_s"]) / r["time_s"]
            idle = " / ".join(f"{v:.2f}" for v in (r["idle_share"] or []))
            lines.append(f"| {r['graph']} | {r['algorithm']} | {r['engine']} | {r['gpus']} | "
                         f"{r['exchange']} | {r['time_s'] * 1e3:,.0f} ms | {sp:.2f}× | "
                         f"{r['rounds']} | {r['arc_updates'] / 1e6:,.1f} M | "
                         f"{r['bytes_between_gpus'] / 1e9:.2f} | {idle} | {r['check']} |")
        Path(args.markdown).write_text("\n".join(lines) + "\n")
        print("\n".join(lines))


def probe(args, rounds=20):
    """Where a sharded PageRank round's and set-up's time goes (see ``--probe``)."""
    from concurrent.futures import ThreadPoolExecutor
    from numba import cuda
    for gname in args.graphs:
        g, _ = load_graph(gname)
        A = get_algorithm("pagerank")
        system = A.prepare(g, **A.bind(g, {}))
        print(f"{gname}: n={g.num_vertices:,} m={g.num_arcs:,}", flush=True)
        for k in args.gpus:
            if k > len(cuda.gpus):
                continue
            for layout in args.layouts:
                st = RunStats.new()
                st["bytes_between_gpus"] = 0
                sh = multi_gpu.make_shards([f"cuda:{i}" for i in range(k)], g.in_offsets, st)
                ex = multi_gpu._Exchange(sh, args.exchanges[-1] if k > 1 else "p2p", st)
                t0 = time.perf_counter()
                multi_gpu.shard_layout(sh, g, layout)
                t_layout = time.perf_counter() - t0
                for _ in range(2):  # the second is timed: layout cached, kernels compiled
                    multi_gpu._sync_all(sh)
                    t0 = time.perf_counter()
                    has, _, _ = multi_gpu.linear_shards(sh, g, system, ex, layout)
                    multi_gpu._sync_all(sh)
                    t_up = time.perf_counter() - t0
                    t0 = time.perf_counter()
                    multi_gpu._contraction(sh, ex, system, has, g.num_arcs)
                    multi_gpu._sync_all(sh)
                    t_con = time.perf_counter() - t0

                for s in sh:
                    with s.on():
                        s.probe_scan = s.be.keep(s.be.xp.zeros(5, np.float64))

                def one_round(s):
                    multi_gpu.linear_round(s, has, 0.0, "send")
                    multi_gpu.linear_round(s, has, 0.0, "local")
                    multi_gpu.linear_round(s, has, 0.0, "pull", s.probe_scan)

                def go(s, r=rounds):
                    with s.on():
                        for _ in range(r):
                            one_round(s)
                        s.be.sync()
                for s in sh:
                    go(s, 2)  # warm-up
                alone = []
                for s in sh:
                    t0 = time.perf_counter()
                    go(s)
                    alone.append((time.perf_counter() - t0) / rounds * 1e3)
                multi_gpu._sync_all(sh)
                t0 = time.perf_counter()
                for _ in range(rounds):
                    for s in sh:
                        with s.on():
                            one_round(s)
                multi_gpu._sync_all(sh)
                one = (time.perf_counter() - t0) / rounds * 1e3
                t0 = time.perf_counter()
                with ThreadPoolExecutor(k) as pool:
                    list(pool.map(go, sh))
                threads = (time.perf_counter() - t0) / rounds * 1e3
                arcs = [int(g.in_offsets[s.v1] - g.in_offsets[s.v0]) for s in sh]
                line = (f"k={k} layout {layout}: arcs per GPU {arcs}, sends {[s.n_send for s in sh]}"
                        f" of {[s.v1 - s.v0 for s in sh]}, heavy {[int(s.heavy.size) for s in sh]};"
                        f" set-up: layout (first run only) {t_layout:.2f} s, vectors "
                        f"{t_up * 1e3:.0f} ms, contraction {t_con * 1e3:.0f} ms; round alone per "
                        f"GPU {[round(a, 2) for a in alone]} ms; together, one thread {one:.2f} "
                        f"ms; a thread per GPU {threads:.2f} ms")
                if k > 1:
                    for name in multi_gpu.EXCHANGES:
                        e = multi_gpu._Exchange(sh, name, st)
                        for label, cnt in (("whole ranges", None),
                                           ("sends", [s.n_send for s in sh])):
                            e.allgather([s.send for s in sh], cnt)
                            multi_gpu._sync_all(sh)
                            t0 = time.perf_counter()
                            for _ in range(rounds):
                                e.allgather([s.send for s in sh], cnt)
                            multi_gpu._sync_all(sh)
                            line += (f"; all-gather {name} {label} "
                                     f"{(time.perf_counter() - t0) / rounds * 1e3:.2f} ms")
                print(line, flush=True)
                for s in sh:
                    s.be.release()


if __name__ == "__main__":
    main()
