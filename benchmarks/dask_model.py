"""A model of a PageRank power round on ``k`` Dask workers, fitted to measured rounds and
extrapolated to 8–64 workers (``docs/distributed.md``, "What a round costs at scale").

The bytes are exact: for each ``k`` the graph is cut as the cluster cuts it
(:func:`digraph.dispatch.engines.power.cluster_handle.cut`'s ranges of about equal in-arcs) and
each worker's reads are listed (:func:`~digraph.dispatch.engines.power.cluster_reads.reads`):
a round moves 8 bytes for each (vertex, other worker reading it) pair.  The time of a round is

    T(k) = t_arc · A_max(k) + L0 + l · k + 8 · R_max(k) / B,

``A_max`` the most in-arcs of a worker (the pull waits for the slowest), ``R_max`` the most
entries a worker receives or sends, ``t_arc`` the seconds a pull spends on an arc with the
worker's thread count ``T`` (the one-process iteration on ``T`` threads, the files' rows of
kind ``process-T``: its seconds a round over its arcs, per scale, since it grows as the graph
outgrows the caches; a scale not measured takes the nearest measured), ``L0 + l·k`` the
round's calls (client to every worker and back, each worker to the others) and ``B`` the bytes
a second a worker moves.  ``L0``, ``l`` and ``B`` are fitted (least squares, non-negative) to the rounds of
``bench_dask_cluster.py --json`` files of one machine, whose graphs (R-MAT of the same seed and
edge factor) are rebuilt here; ``l`` only where three worker counts or more were measured (with
fewer it cannot be told from the bytes' term, which also grows with ``k``).  The fitted
constants are those of the machine measured (on one host, loopback TCP): on a network, ``L0``,
``l`` and ``B`` are the network's.

    python benchmarks/dask_model.py --measured benchmarks/results/dask_cluster_2w_dev.json \\
        --predict-scale 24 --workers 2 4 8 16 32 64 --out dask_model.json

Predictions take the measured workers' thread count (``--worker-threads`` to choose among
several).
"""

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

#: the most scalars a worker mails another a round besides the entries: the round's sums
#: (:data:`digraph.dispatch.engines.power.cluster_maps.SCALARS`, 12 scalars) and, while
#: Anderson's mixes record, the pieces of the next round's dots (``3m + 5``, ``m`` = 4:
#: ``PowerSettings.anderson_memory``, :func:`~digraph.dispatch.engines.power.cluster_anderson.
#: partials`)
SUMS = 12 + 3 * 4 + 5


def layout(graph, k, vertex_cost=0):
    """``{"k", "arcs_max", "entries_max", "bytes_round"}`` of ``graph`` cut over ``k`` workers:
    the most in-arcs of a worker, the most entries a worker receives or sends a round, and the
    bytes a round moves (8 per entry)."""
    from digraph.dispatch.engines.power.cluster_reads import reads
    from digraph.dispatch.runtime.cuda.ranges import shard_ranges
    off = np.asarray(graph.in_offsets)
    src = np.asarray(graph.in_sources)
    b = np.asarray(shard_ranges(off, k, vertex_cost), np.int64)
    recv = np.zeros(k, np.int64)
    send = np.zeros(k, np.int64)
    arcs = np.diff(off[b])
    for h in range(k):
        got = reads(src[off[b[h]]:off[b[h + 1]]], b, h)
        for g, idx in got.items():
            recv[h] += idx.size
            send[g] += idx.size
    return {"k": int(k), "arcs_max": int(arcs.max()),
            "entries_max": int(max(recv.max(), send.max())),
            "bytes_round": int(8 * recv.sum())}


def rmat_graph(scale, edge_factor=16):
    """The R-MAT graph of ``bench_dask_cluster.py`` (seed 1)."""
    import digraph
    from digraph.generators import rmat
    return digraph.load(rmat(scale, edge_factor, seed=1))


def fit(points):
    """``(L0, l, 1/B)`` ≥ 0 from ``[(k, entries_max, seconds left after the pull)]``, least
    squares on ``L0 + l·k + 8·R/B`` (non-negative by clipping and refitting the rest; ``l = 0``
    when the points have fewer than three worker counts)."""
    X = np.array([[1.0, k, 8.0 * r] for k, r, _ in points])
    y = np.array([s for _, _, s in points])
    # L0 + l·k and 8·R/B both grow with k: l is told apart from B by three counts or more
    free = [0, 1, 2] if len({k for k, _, _ in points}) > 2 else [0, 2]
    coef = np.zeros(3)
    while free:
        c, *_ = np.linalg.lstsq(X[:, free], y, rcond=None)
        if (c >= 0).all():
            coef[free] = c
            break
        free.pop(int(np.argmin(c)))
    return coef


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--measured", nargs="+", required=True,
                    help="bench_dask_cluster.py --json files (their workers in 'workers')")
    ap.add_argument("--predict-scale", type=int, nargs="+", default=[24])
    ap.add_argument("--workers", type=int, nargs="+", default=[2, 4, 8, 16, 32, 64])
    ap.add_argument("--edge-factor", type=int, default=16)
    ap.add_argument("--worker-threads", type=int,
                    help="threads of each predicted worker (default: the measured workers')")
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    rows = []
    for path in a.measured:
        data = json.loads(Path(path).read_text())
        rows += data["rows"] if isinstance(data, dict) else data
    # t_arc by thread count and scale: the one-process iteration on T threads, its seconds a
    # round an arc (it grows with the graph, as its vectors outgrow the caches)
    per = {}
    for r in rows:
        if r["kind"].startswith("process-"):
            per.setdefault((int(r["kind"].split("-")[1]), r["scale"]), []).append(
                r["ms_round"] * 1e-3 / r["arcs"])
    per = {ts: float(np.median(v)) for ts, v in per.items()}
    t_arc = {t: {s: v for (u, s), v in per.items() if u == t} for t, _ in per}

    def arc_s(t, scale):
        """t_arc on ``t`` threads at ``scale``: measured there, else at the nearest scale
        measured (the largest below it first)."""
        got = t_arc[t]
        return got[min(got, key=lambda s: (abs(s - scale), -s))]
    cluster = [r for r in rows if r["kind"] == "cluster"]
    threads = sorted({int(r.get("worker_threads", 1)) for r in cluster})
    missing = [t for t in threads if t not in t_arc]
    if missing:
        ap.error(f"no one-process rows (kind process-T) on {missing} threads, the measured "
                 "workers' thread counts")
    wt = a.worker_threads if a.worker_threads is not None else threads[-1]
    if wt not in t_arc:
        ap.error(f"--worker-threads {wt}: no one-process rows on {wt} threads "
                 f"(measured: {sorted(t_arc)})")
    graphs = {}
    points, checks = [], []
    for r in cluster:
        g = graphs.setdefault(r["scale"], rmat_graph(r["scale"], a.edge_factor))
        lay = layout(g, r["workers"])
        # the model's bytes are the entries', exact; the rounds' sums add a few scalars a pair
        k = lay["k"]
        assert 0 <= r["bytes_round"] - lay["bytes_round"] <= 8 * SUMS * k * (k - 1), (lay, r)
        t = int(r.get("worker_threads", 1))
        rest = r["ms_round"] * 1e-3 - arc_s(t, r["scale"]) * lay["arcs_max"]
        points.append((lay["k"], lay["entries_max"], rest))
        checks.append((r, lay, t))
    graphs.clear()
    L0, l, inv_b = fit(points)

    def model(lay, t, scale):
        return (arc_s(t, scale) * lay["arcs_max"] + L0 + l * lay["k"]
                + 8.0 * lay["entries_max"] * inv_b)

    # as many rows as fitted constants (L0 and B; l too from three worker counts): no check
    counts = len({k for k, _, _ in points})
    out = {"exact_fit": len(points) <= (3 if counts > 2 else 2),
           "t_arc_ns": {f"{t}@{s}": v * 1e9 for (t, s), v in sorted(per.items())},
           "L0_ms": L0 * 1e3, "l_ms_per_worker": l * 1e3,
           "bandwidth_gb_s": (1.0 / inv_b / 1e9) if inv_b > 0 else None,
           "worker_threads": wt, "checked": [], "predicted": []}
    for r, lay, t in checks:
        out["checked"].append({"scale": r["scale"], "workers": lay["k"], "worker_threads": t,
                               "arcs": r["arcs"], "bytes_round": lay["bytes_round"],
                               "measured_ms": r["ms_round"],
                               "model_ms": 1e3 * model(lay, t, r["scale"])})
    for s in a.predict_scale:
        g = rmat_graph(s, a.edge_factor)
        for k in a.workers:
            lay = layout(g, k)
            out["predicted"].append({"scale": s, "workers": k, "arcs": g.num_arcs,
                                     "bytes_round": lay["bytes_round"],
                                     "arcs_max": lay["arcs_max"],
                                     "entries_max": lay["entries_max"],
                                     "pull_ms": 1e3 * arc_s(wt, s) * lay["arcs_max"],
                                     "model_ms": 1e3 * model(lay, wt, s)})
        del g
    print(json.dumps(out, indent=1))
    if a.out:
        import datetime
        meta = {"schema": "digraph-dask-model/1", "date": datetime.date.today().isoformat(),
                "measured": a.measured}
        Path(a.out).write_text(json.dumps({"meta": meta, "rows": [out]}, indent=1))


if __name__ == "__main__":
    main()
