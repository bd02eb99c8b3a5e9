"""Interleaved A/B of the CPU PageRank engines (issue 17, Anderson acceleration of ``power``): in
one process each repetition runs every variant once, the order rotated, so a shared machine's
load falls on all of them alike.  Prints markdown rows and writes JSON.

    NUMBA_NUM_THREADS=2 python benchmarks/ab_power_anderson.py 7 $OUT/ab.json dblp-2010 cnr-2000

Variants: the ``scc`` engine; ``power`` with memory 0 (the plain iteration), the default (memory 4,
started by the ratio rule) and memory 4 from the first round (``anderson_from_ratio=0``).
"""
import sys, time, json, statistics, numpy as np
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
from graphs import load
import digraph
from digraph.dispatch import power
R = int(sys.argv[1]); out = sys.argv[2]
VARIANTS = [("scc", "scc", power.PowerSettings()), ("power m0", "power", power.PowerSettings(anderson_memory=0)),
            ("power m4 (default)", "power", power.PowerSettings()),
            ("power m4 from round 1", "power", power.PowerSettings(anderson_from_ratio=0.0))]
rows = []
for name in sys.argv[3:]:
    g = load(name)
    ref = digraph.run(g, "pagerank", mode="bsp", tol=1e-13).values
    ts = {v[0]: [] for v in VARIANTS}; info = {}
    for label, mode, st in VARIANTS:
        power.DEFAULT = st; digraph.run(g, "pagerank", mode=mode, tol=1e-8)
    for rep in range(R):
        for i in range(len(VARIANTS)):
            label, mode, st = VARIANTS[(i + rep) % len(VARIANTS)]
            power.DEFAULT = st
            t0 = time.perf_counter(); r = digraph.run(g, "pagerank", mode=mode, tol=1e-8); ts[label].append(time.perf_counter() - t0)
            info[label] = (r.stats["rounds"], r.stats.get("anderson_mixes", 0), float(np.abs(r.values - ref).sum()), float(r.stats["error_bound"]))
    for label, *_ in VARIANTS:
        t = ts[label]; k, mixes, err, bound = info[label]
        row = {"graph": name, "variant": label, "rounds": k, "anderson_mixes": mixes, "min_ms": 1e3 * min(t),
               "median_ms": 1e3 * statistics.median(t), "times_ms": [1e3 * x for x in t], "true_error": err, "bound": bound}
        rows.append(row)
        print(f"| {name} | {label} | {k} | {mixes} | {row['min_ms']:.1f} | {row['median_ms']:.1f} | {err:.1e} |", flush=True)
    power.DEFAULT = power.PowerSettings()
json.dump({"meta": {"date": time.strftime("%Y-%m-%d"), "argv": sys.argv[1:]}, "rows": rows}, open(out, "w"), indent=1)
