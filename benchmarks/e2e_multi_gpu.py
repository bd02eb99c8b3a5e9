"""``digraph.run`` on one GPU against k GPUs, interleaved run by run (issue 6's goal, end to end).

    python benchmarks/e2e_multi_gpu.py --graph rmat25 --gpus 4 --pairs 15 \
        --variants keep_work=False keep_work=True --json $OUT/e2e.json

PageRank, tol 1e-8.  After ``--warmup`` runs of each side with the defaults (compilation,
layouts, learnt ranges), for each variant (fields of
:class:`~digraph.dispatch.multi_gpu.MultiGpuSettings`, as in ``ab_multi_gpu.py``): one untimed
run of each side, then ``--pairs`` pairs, each a one-GPU run
(``device="cuda"``, routed to one shard) and a k-GPU run (``device="cuda:0,..,k-1"``) in
alternating order, so drifts of clocks and temperature fall on both sides.  Reports per side the
median time and its parts (set-up, rounds, certification, the copy back, the rest), and the
speed-up as the ratio of the medians and as the median, lowest and highest of the pairs'
ratios.  Every answer is compared with the first one-GPU answer (L1).

``--block B``: each side of a pair is B + 1 runs in a row, the first untimed, and the pair's
ratio is that of the medians of its two blocks.  A sharded linear run keeps its vectors for the
next run on the same GPUs (``MultiGpuSettings.keep_work``), which strict alternation never lets
happen.

``digraph.run`` takes no engine settings: a variant's runs see ``multi_gpu.DEFAULT`` replaced by
the variant's settings (``dataclasses.replace``), put back when the variant is done, as
``bench_bsp_direction.py`` does with ``bsp.DEFAULT``.
"""
import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import digraph  # noqa: E402
from digraph.dispatch import multi_gpu  # noqa: E402
from ab_multi_gpu import parse_variant, variant_settings  # noqa: E402
from bench_gpu import load_graph  # noqa: E402

PARTS = ("setup", "rounds", "certify", "gather")


def run_once(g, device):
    t0 = time.perf_counter()
    r = digraph.run(g, "pagerank", device=device, tol=1e-8)
    t = time.perf_counter() - t0
    st = r.stats
    parts = {p: float(st.get(f"time_{p}", 0.0)) for p in PARTS}
    parts["rest"] = t - sum(parts.values())
    return t, parts, r.values, st


def summary(runs):
    out = {"time_s": statistics.median(t for t, _ in runs)}
    for p in PARTS + ("rest",):
        out[p] = statistics.median(parts[p] for _, parts in runs)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graph", default="rmat24")
    ap.add_argument("--gpus", type=int, default=4)
    ap.add_argument("--pairs", type=int, default=11)
    ap.add_argument("--warmup", type=int, default=6)
    ap.add_argument("--block", type=int, default=1,
                    help="timed runs in a row per side and pair, after an untimed one (>1)")
    ap.add_argument("--variants", nargs="+", default=[""],
                    help="MultiGpuSettings fields, e.g. keep_work=False (empty: the defaults)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    variants = [(v or "defaults", variant_settings(parse_variant(v))) for v in args.variants]
    defaults = multi_gpu.DEFAULT
    g, t_load = load_graph(args.graph)
    print(f"{args.graph}: n={g.num_vertices:,} m={g.num_arcs:,} (load {t_load:.1f} s)",
          flush=True)
    one, many = "cuda", "cuda:" + ",".join(str(i) for i in range(args.gpus))
    for i in range(args.warmup):
        t1, t2 = run_once(g, one)[0], run_once(g, many)[0]
        print(f"warm-up {i}: 1 GPU {t1 * 1e3:.0f} ms, {args.gpus} GPUs {t2 * 1e3:.0f} ms",
              flush=True)
    ref = run_once(g, one)[2]
    rows = []
    for label, cfg in variants:
        multi_gpu.DEFAULT = cfg  # a benchmark's override of digraph.run's defaults, put back
        try:
            run_once(g, one)
            run_once(g, many)
            sides = {one: [], many: []}
            ratios, l1, rounds, gpus = [], 0.0, set(), {}
            for i in range(args.pairs):
                order = (one, many) if i % 2 == 0 else (many, one)
                got = {}
                for d in order:
                    if args.block > 1:
                        run_once(g, d)
                    ts = []
                    for _ in range(args.block):
                        t, parts, x, st = run_once(g, d)
                        ts.append(t)
                        sides[d].append((t, parts))
                        l1 = max(l1, float(np.abs(x - ref).sum()))
                        rounds.add(st.get("rounds"))
                        gpus[d] = st.get("gpus")
                    got[d] = statistics.median(ts)
                ratios.append(got[one] / got[many])
        finally:
            multi_gpu.DEFAULT = defaults
        s1, sk = summary(sides[one]), summary(sides[many])
        row = dict(graph=args.graph, k=args.gpus, variant=label, pairs=args.pairs,
                   block=args.block,
                   one=s1, many=sk, speedup_of_medians=s1["time_s"] / sk["time_s"],
                   pair_ratio_median=statistics.median(ratios), pair_ratio_min=min(ratios),
                   pair_ratio_max=max(ratios), rounds=sorted(r for r in rounds if r),
                   gpus_used=gpus, l1_vs_first=l1,
                   times_one=[t for t, _ in sides[one]], times_many=[t for t, _ in sides[many]])
        rows.append(row)

        def fmt(s):
            return (f"{s['time_s'] * 1e3:.0f} ms (set-up {s['setup'] * 1e3:.1f}, rounds "
                    f"{s['rounds'] * 1e3:.0f}, certify {s['certify'] * 1e3:.1f}, copy back "
                    f"{s['gather'] * 1e3:.1f}, rest {s['rest'] * 1e3:.1f})")
        print(f"[{label}] 1 GPU {fmt(s1)}; {args.gpus} GPUs {fmt(sk)}; speed-up "
              f"{row['speedup_of_medians']:.2f}x (pairs: median {row['pair_ratio_median']:.2f}, "
              f"{row['pair_ratio_min']:.2f}-{row['pair_ratio_max']:.2f}); rounds {row['rounds']}, "
              f"L1 vs first {l1:.1e}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
