"""PageRank's power iteration (or SSSP's and k-core's ``bsp`` rounds, ``--algorithms``) on a local
Dask cluster against the same rounds in one process.

For each R-MAT scale (or graph of ``benchmarks/graphs.py``, ``--graphs``):
``digraph.run(g, "pagerank", cluster=client)`` on a ``LocalCluster`` of ``--workers`` worker
processes of ``--worker-threads`` threads each (its shards loaded by a first, untimed run),
and ``mode="power"`` in this process on ``--threads`` Numba threads, both the same method
(``PowerSettings(accelerator="anderson")`` for the process: the cluster's workers mix by
Anderson's acceleration where the plain rate slows, and start one round later at most), so that
their rounds agree and the time a round compares.  Medians of ``--repeat`` runs,
interleaved; every cluster answer is checked against the process's within the two bounds.
Adsorption (from the ten vertices of largest out-degree) runs the process's default, its answer
within the two bounds.  SSSP (from the vertex of largest out-degree) and k-core run
``mode="bsp"`` in the process, the same rounds as the cluster's, and their answers must be equal.

    python benchmarks/bench_dask_cluster.py --scales 16 17 18 --repeat 5

``--gpus K`` runs PageRank on K GPU workers instead (``device="cuda"``; one worker process a GPU,
each seeing its own first: dask-cuda's ``LocalCUDACluster`` where it is installed, else workers
started with their ``CUDA_VISIBLE_DEVICES`` set), against ``mode="power"`` in this process on
one GPU (``gpu-1``) and sharded over the K GPUs (``gpus-K``, not under the simulator), each with
its defaults and with plain rounds (``gpu-1-plain``, ``gpus-K-plain``: Anderson off, the
cluster's rounds), and ``--threads`` as before.

``--trees before=DIR after=.`` runs a before/after instead: each tree's ``digraph`` in its own
process, the trees alternated ``--passes`` times, each row's times the medians over the passes.

Prints one row a graph and run kind: rounds, ms a round (the cluster's ``stats["dask"]
["round_s"]``; the process's ``time_compute`` over its rounds), the whole run, bytes between
workers a round, each worker's exchange ms a round and idle share.
"""

import argparse
import itertools
import json
import statistics
import time

import numpy as np


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scales", nargs="+", type=int, default=[16, 17, 18])
    ap.add_argument("--graphs", nargs="+", metavar="NAME",
                    help="graphs of benchmarks/graphs.py instead of R-MAT scales (grid300, ...)")
    ap.add_argument("--algorithms", nargs="+",
                    choices=["pagerank", "adsorption", "sssp", "kcore"], default=["pagerank"],
                    help="PageRank's power rounds (default), adsorption's (from the ten "
                         "vertices of largest out-degree; one process runs its default), "
                         "SSSP's bsp rounds (from the vertex of largest out-degree) or "
                         "k-core's, against one process's same rounds")
    ap.add_argument("--edge-factor", type=int, default=16)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--worker-threads", type=int, default=1,
                    help="threads of each worker (its Numba threads; default 1)")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2],
                    help="Numba threads of the one-process runs (default 1 2)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--json", help="write the rows to this file")
    ap.add_argument("--label", help="the tree's name in each row (``tree``: a before/after)")
    ap.add_argument("--trees", nargs="+", metavar="LABEL=DIR",
                    help="a before/after: each tree's digraph (DIR on PYTHONPATH) in its own "
                         "process, the trees alternated --passes times; medians over the passes")
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--gpus", type=int, default=0,
                    help="PageRank on this many GPU workers, against one process's GPUs")
    args = ap.parse_args(argv)
    if args.trees:
        return _trees(args, argv)

    import dataclasses
    import digraph
    from digraph.dispatch.engines.power import cpu as power
    from digraph.generators import rmat
    from distributed import Client, LocalCluster

    cases = [(f"rmat{k}", k) for k in args.scales] if not args.graphs else \
        [(name, None) for name in args.graphs]
    rows = []
    if args.gpus:
        args.workers, args.algorithms = args.gpus, ["pagerank"]
    with (_gpu_cluster(args.gpus, args.worker_threads) if args.gpus else
          LocalCluster(n_workers=args.workers, threads_per_worker=args.worker_threads,
                       processes=True, dashboard_address=":0", silence_logs=40)) as cluster, \
            Client(cluster) as c:
        c.wait_for_workers(args.workers)
        on = {"device": "cuda"} if args.gpus else {}
        loaded = {}  # the graph of the algorithms in turn, loaded once
        for (name, scale), algo in itertools.product(cases, args.algorithms):
            if name not in loaded:
                import graphs
                loaded.clear()
                loaded[name] = digraph.load(rmat(scale, args.edge_factor, seed=1)) \
                    if scale is not None else graphs.load(name)
            g = loaded[name]
            linear = algo in ("pagerank", "adsorption")
            params = {"tol": args.tol} if linear else {}
            if algo == "adsorption":
                params["seeds"] = list(g.vertex_ids[np.argsort(-g.out_degree,
                                                                kind="stable")[:10]])
            # the one-process run of the same rounds: power rounds with Anderson's mixes where
            # the plain rate slows (no Gauss-Seidel sweeps), or bsp
            one = ({"mode": "power",
                    "settings": [dataclasses.replace(power.DEFAULT, accelerator="anderson")]}
                   if algo == "pagerank" else {} if algo == "adsorption" else {"mode": "bsp"})
            if algo == "sssp":
                params = {"source": g.vertex_ids[int(np.argmax(g.out_degree))]}
            first = digraph.run(g, algo, cluster=c, **params, **on)  # loads the shards
            local = {f"process-{t}": dict(one, threads=t) for t in args.threads}
            if args.gpus:
                local.update(_gpu_runs(args.gpus))
            runs = {"cluster": []}
            runs.update({kind: [] for kind in local})
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                r = digraph.run(g, algo, cluster=c, **params, **on)
                runs["cluster"].append((time.perf_counter() - t0, r))
                for kind, how in local.items():
                    t0 = time.perf_counter()
                    p = digraph.run(g, algo, **params, **how)
                    runs[kind].append((time.perf_counter() - t0, p))
                if linear:
                    err = np.abs(r.values - p.values).sum()
                    assert err <= r.stats.error_bound + p.stats.error_bound, err
                else:  # min/max and h-index rounds: the exact fixed point
                    assert np.array_equal(r.values, p.values)
            for kind, got in runs.items():
                s = got[-1][1].stats
                d = s.get("dask", {})
                per = [x[1].stats["dask"]["round_s"] if kind == "cluster"
                       else x[1].stats.time_compute / max(x[1].stats.rounds, 1) for x in got]
                row = {"graph": name, "scale": scale, "algorithm": algo,
                       "arcs": g.num_arcs, "workers": args.workers,
                       "worker_threads": args.worker_threads,
                       "kind": kind, "rounds": s.rounds, "device": s.get("device", "cpu"),
                       "ms_round": 1e3 * statistics.median(per),
                       "ms_run": 1e3 * statistics.median(x[0] for x in got)}
                if kind == "cluster":
                    row.update(bytes_round=d["bytes_per_round"],
                               exchange_ms=[round(1e3 * e, 2) for e in d["exchange_s"]],
                               idle=[round(i, 2) for i in d["idle_share"]],
                               load_s=first.stats["dask"]["time_setup"],
                               setup_warm_s=d["time_setup"])
                    if "batches" in d:  # the calls that ran the rounds (absent before them)
                        row["batches"] = d["batches"]
                if args.label:
                    row["tree"] = args.label
                rows.append(row)
                print(json.dumps(row))
            _write(args.json, rows)  # after every graph: a run cut short keeps what it measured


def _gpu_cluster(k, threads):
    """A local cluster of ``k`` GPU workers, one a GPU (dask-cuda's where installed)."""
    try:
        from dask_cuda import LocalCUDACluster
        return LocalCUDACluster(n_workers=k, threads_per_worker=threads, dashboard_address=":0",
                                silence_logs=40)
    except ImportError:
        from distributed import Nanny, Scheduler, SpecCluster
        import os
        sim = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
        workers = {i: {"cls": Nanny, "options": {
            "nthreads": threads, "silence_logs": 40,
            "env": {} if sim else {"CUDA_VISIBLE_DEVICES": ",".join(
                str((i + j) % k) for j in range(k))}}} for i in range(k)}
        return SpecCluster(workers=workers, scheduler={
            "cls": Scheduler, "options": {"dashboard_address": ":0"}}, silence_logs=40)


def _gpu_runs(k):
    """The one-process GPU runs a GPU cluster's rows compare with (see the module text)."""
    import dataclasses
    import os
    from digraph.dispatch.engines.power import gpu_settings
    plain = [dataclasses.replace(gpu_settings.POWER_DEFAULT, anderson=0)]
    runs = {"gpu-1": {"mode": "power", "device": "cuda"},
            "gpu-1-plain": {"mode": "power", "device": "cuda", "settings": plain}}
    if k > 1 and os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
        several = "cuda:" + ",".join(str(i) for i in range(k))
        runs.update({f"gpus-{k}": {"mode": "power", "device": several},
                     f"gpus-{k}-plain": {"mode": "power", "device": several,
                                         "settings": plain}})
    return runs


def _trees(args, argv):
    """Run this script once a tree and pass (``--label``), the trees alternated, and pool each
    (graph, algorithm, run, tree) row's ``ms_round`` and ``ms_run`` over the passes (medians; ``passes``:
    each pass's ``ms_run``)."""
    import os
    import subprocess
    import sys
    import tempfile
    argv = list(sys.argv[1:] if argv is None else argv)
    i = argv.index("--trees")
    rest = argv[:i] + argv[i + 1 + len(args.trees):]
    for flag in ("--json", "--passes"):  # this process's own
        if flag in rest:
            j = rest.index(flag)
            del rest[j:j + 2]
    pooled = {}
    with tempfile.TemporaryDirectory() as tmp:
        for p in range(args.passes):
            for spec in args.trees:
                label, tree = spec.split("=", 1)
                out = os.path.join(tmp, f"{label}{p}.json")
                env = dict(os.environ, PYTHONPATH=os.path.abspath(tree),
                           DIGRAPH_TREE=os.path.abspath(tree))
                subprocess.run([sys.executable, __file__, *rest, "--label", label, "--json", out],
                               env=env, check=True, stdout=subprocess.DEVNULL)
                with open(out) as f:
                    for r in json.load(f)["rows"]:
                        key = (r["graph"], r["algorithm"], r["kind"], label)
                        pooled.setdefault(key, []).append(r)
    rows, labels = [], [t.split("=", 1)[0] for t in args.trees]
    for (*_, label), got in sorted(pooled.items(),
                                   key=lambda kv: (kv[0][:3], labels.index(kv[0][3]))):
        r = dict(got[-1], ms_round=statistics.median(x["ms_round"] for x in got),
                 ms_run=statistics.median(x["ms_run"] for x in got),
                 passes=[round(x["ms_run"], 2) for x in got])
        rows.append(r)
        print(json.dumps(r))
    _write(args.json, rows)


def _write(path, rows):
    if not path:
        return
    import datetime
    import sys
    meta = {"schema": "digraph-dask/1", "date": datetime.date.today().isoformat(),
            "command": " ".join(["python", "benchmarks/bench_dask_cluster.py"] + sys.argv[1:])}
    with open(path, "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
