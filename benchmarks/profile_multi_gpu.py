"""Where a sharded PageRank run spends its host time (issue 6): cProfile of warm runs.

    python benchmarks/profile_multi_gpu.py --graph rmat24 --gpus 1 2 --out $OUT/profile

For each k: :func:`digraph.dispatch.multi_gpu.solve` on a prepared system (``min_arcs_per_gpu=0``)
and ``digraph.run(g, "pagerank", device=...)`` (one GPU: ``"cuda"``, routed to one shard; k GPUs:
``"cuda:0,..,k-1"``), each warmed up once, then timed once under cProfile (host time: the time a
host thread waits for the GPUs shows where it synchronises).  Writes the top functions by
cumulative and own time and the run's timing counters to ``--out``.

Unless ``--no-ab``, an interleaved A/B of the two host-side ablations first: launches through
Numba's dispatcher or prepared (``BackendSettings.fast_launch``; the backends read
``digraph.dispatch.cuda.runtime.backend.BACKEND``, which the A/B replaces there for its runs and
puts back) and rounds waiting for the host or pipelined (``MultiGpuSettings.pipeline``, passed
as ``solve(settings=)``).
"""
import argparse
import cProfile
import dataclasses
import io
import pstats
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
from bench_gpu import load_graph  # noqa: E402


def profiled(fn, label, out, top, warmup=1):
    for _ in range(warmup):  # warm: compile, resident arrays, layout, re-cut ranges
        fn()
    t0 = time.perf_counter()
    fn()
    plain = time.perf_counter() - t0
    pr = cProfile.Profile()
    t0 = time.perf_counter()
    pr.enable()
    res = fn()
    pr.disable()
    wall = time.perf_counter() - t0
    buf = io.StringIO()
    ps = pstats.Stats(pr, stream=buf)
    ps.sort_stats("cumulative").print_stats(top)
    ps.sort_stats("tottime").print_stats(top)
    text = f"# {label}: {plain * 1e3:.0f} ms plain, {wall * 1e3:.0f} ms profiled\n" + buf.getvalue()
    (out / f"{label}.txt").write_text(text)
    print(f"{label}: {plain * 1e3:.0f} ms plain, {wall * 1e3:.0f} ms profiled", flush=True)
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--graph", default="rmat24")
    ap.add_argument("--gpus", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default="profile")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--no-ab", action="store_true", help="skip the A/B of launches and pipeline")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    g, t_load = load_graph(args.graph)
    print(f"{args.graph}: n={g.num_vertices:,} m={g.num_arcs:,} (load {t_load:.1f} s)", flush=True)
    A = get_algorithm("pagerank")
    t0 = time.perf_counter()
    system = A.prepare(g, **A.bind(g, {}))
    print(f"prepare: {(time.perf_counter() - t0) * 1e3:.0f} ms", flush=True)
    for k in args.gpus:
        devs = [f"cuda:{i}" for i in range(k)]
        box = {}

        def solve(settings=None):
            st = RunStats.new()
            x, ok = multi_gpu.solve(g, system, devices=devs, mode="bsp", tol=1e-8,
                                    max_iter=100_000, stats=st, min_arcs_per_gpu=0,
                                    settings=settings)
            box["st"] = st
            return x
        from digraph.dispatch.cuda.runtime import backend as runtime_backend
        variants = [(False, False), (True, False), (True, True)]  # (prepared launches, pipeline)
        backend = runtime_backend.BACKEND
        for fast, pipe in ([] if args.no_ab else variants + variants):  # interleaved twice
            cfg = dataclasses.replace(multi_gpu.DEFAULT, pipeline=pipe)
            runtime_backend.BACKEND = dataclasses.replace(backend, fast_launch=fast)  # put back
            try:
                solve(cfg)
                ts = []
                for _ in range(args.repeat):
                    t0 = time.perf_counter()
                    solve(cfg)
                    ts.append(time.perf_counter() - t0)
            finally:
                runtime_backend.BACKEND = backend
            st = box["st"]
            print(f"k={k} prepared {fast:d} pipelined {pipe:d}: median "
                  f"{np.median(ts) * 1e3:.0f} ms, rounds {st['time_rounds'] * 1e3:.0f} ms "
                  f"({st['rounds']}), set-up {st['time_setup'] * 1e3:.0f} ms, certify "
                  f"{st['time_certify'] * 1e3:.0f} ms, idle "
                  f"{[round(v, 3) for v in st.get('gpu_idle_share')]}, error bound "
                  f"{st['error_bound']:.2e}", flush=True)
        profiled(solve, f"solve_k{k}", out, args.top, args.warmup)
        st = box["st"]
        keys = sorted(k_ for k_ in st if k_.startswith("time_") or k_ in ("rounds",))
        print({k_: st[k_] for k_ in keys}, flush=True)
        dev = "cuda" if k == 1 else "cuda:" + ",".join(str(i) for i in range(k))
        r = profiled(lambda: digraph.run(g, "pagerank", device=dev, tol=1e-8), f"run_k{k}", out,
                     args.top, args.warmup)
        st = r.stats
        keys = sorted(k_ for k_ in st if k_.startswith("time_") or k_ in ("rounds", "engine"))
        print({k_: st[k_] for k_ in keys}, flush=True)


if __name__ == "__main__":
    main()
