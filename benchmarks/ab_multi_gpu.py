"""Interleaved A/B of the sharded engine's settings on one graph (issue 6).

    python benchmarks/ab_multi_gpu.py --graph rmat25 --gpus 4 2 1 \
        --variants overlap=False overlap=True "overlap=True,comm_priority=0" --json $OUT/ab.json

A variant changes fields of :class:`digraph.dispatch.multi_gpu.MultiGpuSettings`
(``field=VALUE``, comma separated; VALUE is a Python literal), passed to each run as
``settings=dataclasses.replace(multi_gpu.DEFAULT, ...)``.  For each k: ``--warmup`` runs with the
defaults first (compilation, layouts, the re-cuts of ``MultiGpuSettings.balance``), then
``--passes`` passes over the variants, each a warm-up and the median of ``--repeat`` runs of
:func:`digraph.dispatch.multi_gpu.solve` (PageRank, tol 1e-8), with the run's parts (set-up,
rounds, certification, the rest), per GPU and round the kernel time, the time its pull waited
for the exchange, and the host's time queueing a round; every answer is compared with the first
variant's (L1).  ``--end-to-end`` adds ``digraph.run`` on one GPU and on the k GPUs.
"""
import argparse
import ast
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


def parse_variant(text):
    """``{field: value}`` of a variant ``"field=VALUE,..."`` (field names of
    :class:`~digraph.dispatch.multi_gpu.MultiGpuSettings`, in any case)."""
    fields = {f.name for f in dataclasses.fields(multi_gpu.MultiGpuSettings)}
    out = {}
    for part in filter(None, text.split(",")):
        name, _, value = part.partition("=")
        name = name.strip().lower()
        if name not in fields:
            raise SystemExit(f"MultiGpuSettings has no field {name!r} (fields: {sorted(fields)})")
        out[name] = ast.literal_eval(value)
    return out


def variant_settings(fields):
    """The engine's defaults with a variant's ``fields`` changed."""
    return dataclasses.replace(multi_gpu.DEFAULT, **fields)


def timed(fn, repeat):
    """(median time, last result) of ``repeat`` runs after one untimed run."""
    fn()
    return median_time(fn, repeat)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graph", default="rmat24")
    ap.add_argument("--gpus", nargs="+", type=int, default=[4, 2])
    ap.add_argument("--variants", nargs="+", default=["overlap=False", "overlap=True"])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--passes", type=int, default=2)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--relearn", type=int, default=0,
                    help="before each variant: forget the learnt ranges and run this many "
                         "untimed runs with the variant's settings (for the balance_* fields)")
    ap.add_argument("--end-to-end", action="store_true")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    variants = [(v, variant_settings(parse_variant(v))) for v in args.variants]
    g, t_load = load_graph(args.graph)
    print(f"{args.graph}: n={g.num_vertices:,} m={g.num_arcs:,} (load {t_load:.1f} s)",
          flush=True)
    A = get_algorithm("pagerank")
    system = A.prepare(g, **A.bind(g, {}))
    rows = []
    for k in args.gpus:
        devs = [f"cuda:{i}" for i in range(k)]
        dev = "cuda" if k == 1 else "cuda:" + ",".join(str(i) for i in range(k))

        def solve(settings=None):
            st = RunStats.new()
            x, ok = multi_gpu.solve(g, system, devices=devs, mode="bsp", tol=1e-8,
                                    max_iter=100_000, stats=st, min_arcs_per_gpu=0,
                                    settings=settings)
            assert ok
            return x, st
        for i in range(args.warmup):
            t0 = time.perf_counter()
            _, st = solve()
            print(f"k={k} warm-up {i}: {(time.perf_counter() - t0) * 1e3:.0f} ms, recuts "
                  f"{st.get('gpu_recuts')}, vertices {st.get('gpu_vertices')}, busy/round "
                  f"{np.round(np.asarray(st['gpu_busy_s']) / st['rounds'] * 1e3, 3).tolist()} ms",
                  flush=True)
        ref = None
        for p in range(args.passes):
            for label, cfg in variants:
                if args.relearn:
                    for key in [c for c in g._cache if isinstance(c, tuple) and c
                                and c[0] == "multi-gpu-balance"]:
                        del g._cache[key]
                    for _ in range(args.relearn):
                        solve(cfg)
                t, (x, st) = timed(lambda: solve(cfg), args.repeat)
                ref = x if ref is None else ref
                r = st["rounds"]
                parts = {n: st.get(f"time_{n}", 0.0) for n in ("setup", "rounds", "certify")}
                parts = {"setup": parts["setup"], "rounds_s": parts["rounds"],
                         "certify": parts["certify"]}
                busy = np.asarray(st["gpu_busy_s"]) / r * 1e3
                wait = np.asarray(st.get("gpu_exchange_wait_s", [0.0] * k)) / r * 1e3
                row = dict(graph=args.graph, k=k, variant=label, pass_=p, time_s=t, rounds=r,
                           **parts, rest=t - sum(parts.values()),
                           round_ms=parts["rounds_s"] / r * 1e3, busy_ms=busy.tolist(),
                           wait_ms=wait.tolist(), launch_ms=st.get("time_launch", 0.0) / r * 1e3,
                           idle=st["gpu_idle_share"], overlapped=st.get("overlapped"),
                           recuts=st.get("gpu_recuts"), vertices=st.get("gpu_vertices"),
                           l1_vs_first=float(np.abs(x - ref).sum()), bound=st["error_bound"])
                rows.append(row)
                print(f"k={k} [{label}] pass {p}: {t * 1e3:.0f} ms = set-up "
                      f"{parts['setup'] * 1e3:.0f} + rounds {parts['rounds_s'] * 1e3:.0f} ({r}, "
                      f"{row['round_ms']:.3f} ms each) + certify {parts['certify'] * 1e3:.0f} + "
                      f"rest {row['rest'] * 1e3:.0f}; per round: busy "
                      f"{np.round(busy, 3).tolist()} ms, exchange wait "
                      f"{np.round(wait, 3).tolist()} ms, host queueing "
                      f"{row['launch_ms']:.3f} ms; overlapped {row['overlapped']}, "
                      f"L1 vs first {row['l1_vs_first']:.1e}", flush=True)
        if args.end_to_end:
            for d in (["cuda"] if k == 1 else ["cuda", dev]):
                t, st = timed(lambda: digraph.run(g, "pagerank", device=d, tol=1e-8).stats,
                              args.repeat)
                rows.append(dict(graph=args.graph, k=k, variant=f"digraph.run {d}", time_s=t,
                                 rounds=st.get("rounds"), gpus=st.get("gpus")))
                print(f"k={k} digraph.run(device={d!r}): {t * 1e3:.0f} ms "
                      f"({st.get('rounds')} rounds, {st.get('gpus')} GPUs)", flush=True)
        if args.json:
            Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
