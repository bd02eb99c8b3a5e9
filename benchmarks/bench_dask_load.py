"""PageRank on a graph that no process holds whole: an R-MAT edge list written as partitioned
Parquet, read by the workers of a local Dask cluster (``digraph.load_distributed``), run there
(``digraph.run(handle, "pagerank", cluster=client)``) and written back as partitioned Parquet
(``digraph.write_parquet``).

The files are written by a child process, so that this process (the client) never holds the
arcs; its peak resident memory is reported beside the arcs' bytes.  Each worker's
``memory_limit`` is by default its own footprint (``--worker-base-mb``: the interpreter, Numba,
Dask, pandas) plus ``--limit-share`` (0.6) of the whole graph's CSR as :class:`digraph.Graph`
holds it (``16 m + 16 n`` bytes with int32 ids): above a quarter of it, below the whole once the
graph is large enough (the JSON says whether both held).  With ``--check`` (default: when the graph is small enough) the answer is
compared, after every measurement, with the one-process power iteration on the same arcs within
the two certified bounds.

    python benchmarks/bench_dask_load.py --scale 16                 # small, on a laptop
    python benchmarks/bench_dask_load.py --scale 16 --kcore         # k-core on the handle too
    python benchmarks/bench_dask_load.py --scale 18 --adsorption    # and adsorption, twice
    python benchmarks/bench_dask_load.py --scale 26 --workers 4 --files 64 --json load.json

Prints one line a stage (seconds, bytes) and writes them as JSON with ``--json`` (``{meta,
rows}``, schema ``digraph-dask-load/1``, one row).
"""

import argparse
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

import numpy as np


def write_files(folder, scale, edge_factor, files, seed):
    """The R-MAT arcs as ``files`` Parquet files (columns src, dst); returns (m, bytes)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from digraph.generators import rmat
    s, d = rmat(scale, edge_factor, seed=seed)
    cut = np.linspace(0, s.size, files + 1).astype(np.int64)
    for i in range(files):
        pq.write_table(pa.table({"src": s[cut[i]:cut[i + 1]], "dst": d[cut[i]:cut[i + 1]]}),
                       os.path.join(folder, f"part-{i:05d}.parquet"))
    size = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
    return int(s.size), int(size)


def _peak_rss():
    """This process's peak resident memory, bytes (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _worker_peak(dask_worker=None):
    return {"peak_rss": _peak_rss(), "limit": dask_worker.memory_manager.memory_limit}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=int, default=22, help="log2 of the R-MAT vertex ids")
    ap.add_argument("--edge-factor", type=int, default=16)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--threads", type=int, default=1, help="threads a worker")
    ap.add_argument("--files", type=int, default=16, help="Parquet files of the edge list")
    ap.add_argument("--worker-base-mb", type=float, default=1024.0,
                    help="a worker's own footprint, added to its share of the CSR (default "
                         "1024)")
    ap.add_argument("--limit-share", type=float, default=0.6,
                    help="share of the whole CSR added to the base (default 0.6)")
    ap.add_argument("--memory-limit", type=float, default=None,
                    help="each worker's memory_limit in MB (default: base + share of the CSR)")
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--check", choices=("auto", "yes", "no"), default="auto",
                    help="compare with the one-process run (auto: below 2**24 arcs)")
    ap.add_argument("--kcore", action="store_true",
                    help="then k-core on the handle, twice (the first builds the undirected "
                         "lists on the workers), checked with the PageRank answer")
    ap.add_argument("--adsorption", action="store_true",
                    help="also run adsorption on the handle (seeds: the 10 vertices of largest "
                         "out-degree, then the next 10: the second run reuses its bound's dual "
                         "weights), with --max-iter rounds at most")
    ap.add_argument("--max-iter", type=int, default=1000)
    ap.add_argument("--dir", help="folder for the files (default: a temporary one, removed)")
    ap.add_argument("--json", help="write the measurements to this file")
    args = ap.parse_args(argv)

    import digraph
    from distributed import Client, LocalCluster

    root = args.dir or tempfile.mkdtemp(prefix="bench_dask_load_")
    arcs_dir, out_dir = os.path.join(root, "arcs"), os.path.join(root, "ranks.parquet")
    os.makedirs(arcs_dir, exist_ok=True)
    row = {"scale": args.scale, "edge_factor": args.edge_factor, "workers": args.workers,
           "threads_per_worker": args.threads, "files": args.files, "tol": args.tol}
    try:
        t0 = time.perf_counter()
        with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool:
            m, size = pool.submit(write_files, arcs_dir, args.scale, args.edge_factor,
                                  args.files, args.seed).result()
        row.update(arcs=m, parquet_bytes=size, time_write_files=time.perf_counter() - t0)
        csr = 16 * m + 16 * 2**args.scale
        limit = (args.memory_limit * 2**20 if args.memory_limit is not None
                 else args.worker_base_mb * 2**20 + args.limit_share * csr)
        row.update(csr_bytes=csr, memory_limit=int(limit), limit_below_whole_csr=limit < csr,
                   limit_above_quarter_csr=limit > csr / 4)
        _say(f"{m:,} arcs in {args.files} files ({size / 2**20:.1f} MiB); whole CSR "
             f"{csr / 2**20:.1f} MiB; worker memory_limit {limit / 2**20:.1f} MiB")
        with LocalCluster(n_workers=args.workers, threads_per_worker=args.threads,
                          processes=True, memory_limit=int(limit), dashboard_address=":0",
                          silence_logs=40) as cluster, Client(cluster) as client:
            client.wait_for_workers(args.workers)
            t0 = time.perf_counter()
            h = digraph.load_distributed(arcs_dir, client)
            row.update(time_load=time.perf_counter() - t0, vertices=h.num_vertices,
                       load_steps=h.timings)
            _say(f"load_distributed: {h.num_vertices:,} vertices in {row['time_load']:.2f} s ("
                 + ", ".join(f"{k} {v:.2f}" for k, v in h.timings.items()) + ")")
            runs = []
            for _ in range(2):  # the first compiles the workers' kernels, or loads them
                r = digraph.run(h, "pagerank", cluster=client, tol=args.tol)
                s = r.stats
                runs.append({"time_total": s["time_total"], "time_compute": s["time_compute"],
                             "rounds": s["rounds"], "error_bound": s["error_bound"],
                             "round_s": s["dask"]["round_s"],
                             "bytes_per_round": s["dask"]["bytes_per_round"],
                             "arcs_per_worker": s["dask"]["arcs"]})
                _say(f"pagerank: {s['rounds']} rounds, {s['time_total']:.2f} s "
                     f"({s['dask']['round_s'] * 1e3:.1f} ms a round), bound "
                     f"{s['error_bound']:.2g}")
            row["runs"] = runs
            cores = None
            if args.kcore:
                row["kcore_runs"] = []
                for _ in range(2):  # the first builds the undirected lists on the workers
                    k = digraph.run(h, "kcore", cluster=client)
                    s = k.stats
                    row["kcore_runs"].append({"time_total": s["time_total"],
                                              "time_compute": s["time_compute"],
                                              "time_setup": s["dask"]["time_setup"],
                                              "rounds": s["rounds"],
                                              "entries_per_worker": s["dask"]["arcs"]})
                    _say(f"kcore: {s['rounds']} rounds, {s['time_total']:.2f} s (set-up "
                         f"{s['dask']['time_setup']:.2f} s), max core {int(k.values.max())}")
                cores = k.values
            if args.adsorption:
                row["adsorption_runs"] = _adsorption(digraph, h, client, args)
            t0 = time.perf_counter()
            digraph.write_parquet(r, out_dir, overwrite=True)
            row["time_write_parquet"] = time.perf_counter() - t0
            peaks = client.run(_worker_peak)
            row["worker_peak_rss"] = [int(p["peak_rss"]) for p in peaks.values()]
            row["worker_memory_limit"] = [int(p["limit"] or 0) for p in peaks.values()]
            row["client_peak_rss"] = _peak_rss()  # before the check loads the arcs here
            row["arcs_bytes_int64"] = 16 * m
            _say(f"write_parquet {row['time_write_parquet']:.2f} s; peak RSS: client "
                 f"{row['client_peak_rss'] / 2**20:.0f} MiB, workers "
                 f"{', '.join(f'{p / 2**20:.0f}' for p in row['worker_peak_rss'])} MiB")
            values, bound, labels = r.values, r.stats["error_bound"], r.vertex_ids
            h.release()
        if args.check == "yes" or (args.check == "auto" and m < 2**24):
            row["check"] = _check(arcs_dir, labels, values, bound, args.tol, cores)
            _say(f"check against one process: L1 {row['check']['l1']:.3g} <= "
                 f"{row['check']['bounds']:.3g}"
                 + (f", core numbers equal {row['check']['kcore_equal']}"
                    if "kcore_equal" in row["check"] else "") + f": {row['check']['ok']}")
    finally:
        if not args.dir:
            shutil.rmtree(root, ignore_errors=True)
    if args.json:
        import datetime
        meta = {"schema": "digraph-dask-load/1", "date": datetime.date.today().isoformat(),
                "command": " ".join(["python", "benchmarks/bench_dask_load.py"] + sys.argv[1:])}
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "rows": [row]}, f, indent=1)
    return 0 if row.get("check", {"ok": True})["ok"] else 1


def _adsorption(digraph, h, client, args):
    """Adsorption on the handle, the seeds the 10 vertices of largest out-degree, then the next
    10: rounds, time, the bound's route and its dual sweeps, each run."""
    order = np.argsort(-h.out_degree, kind="stable")
    ids = h.vertex_ids
    out = []
    for seeds in (ids[order[:10]], ids[order[10:20]]):
        a = digraph.run(h, "adsorption", cluster=client, seeds=seeds.tolist(), tol=args.tol,
                        max_iter=args.max_iter)
        s = a.stats
        out.append({"time_total": s["time_total"], "time_compute": s["time_compute"],
                    "rounds": s["rounds"], "converged": bool(s["converged"]),
                    "error_bound": s["error_bound"], "error_route": s.get("error_route"),
                    "dual_sweeps": s.get("dual_sweeps"), "time_dual": s.get("time_dual"),
                    "dual_max": s.get("dual_max"), "round_s": s["dask"]["round_s"]})
        _say(f"adsorption: {s['rounds']} rounds, {s['time_total']:.2f} s, converged "
             f"{s['converged']}, bound {s['error_bound']:.2g} ({s.get('error_route')}; dual "
             f"sweeps {s.get('dual_sweeps')}, {s.get('time_dual') or 0:.2f} s)")
    return out


def _check(folder, labels, values, bound, tol, cores=None):
    """The one-process power iteration on the same arcs (read here, after the measurements),
    and its core numbers against ``cores`` when given."""
    import pyarrow.parquet as pq

    import digraph
    t = pq.read_table(folder)
    g = digraph.load((t["src"].to_numpy(), t["dst"].to_numpy()))
    one = digraph.run(g, "pagerank", mode="power", tol=tol)
    same = bool(np.array_equal(g.vertex_ids, labels))
    l1 = float(np.abs(one.values - values).sum()) if same else float("inf")
    both = bound + one.stats["error_bound"]
    out = {"l1": l1, "bounds": both, "labels_equal": same, "ok": same and l1 <= both}
    if cores is not None:
        out["kcore_equal"] = same and bool(np.array_equal(digraph.run(g, "kcore").values, cores))
        out["ok"] = out["ok"] and out["kcore_equal"]
    return out


def _say(text):
    print(text, file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
