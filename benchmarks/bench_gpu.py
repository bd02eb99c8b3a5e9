"""GPU benchmark (issue 5): every algorithm x mode on one GPU beside the CuPy SpMV peer.

    python benchmarks/bench_gpu.py --graphs cnr-2000 dblp-2010 rmat20 rmat22 --json $OUT/gpu.json

Protocol (docs/design.md §6): per (graph, algorithm, mode) a warm-up run (Numba compilation reported as
``compile``, path preprocessing cached on the PathSet), then the median of ``--repeat`` timed runs;
every answer is checked against a reference (CPU engine for SSSP and k-core, exact equality; a
tight CuPy power iteration for PageRank and adsorption, the true L1 error reported).  The CuPy peer
(``cupyx.scipy.sparse`` float64 CSR SpMV, ``x <- b + A x``) stops on the same sound error bound
as digraph (``linear_error_bound`` on its residual), so both are compared at equal certified
accuracy, and their true errors are printed beside.  R-MAT graphs (a=0.57, b=0.19, c=0.19, 16 arcs
per vertex) are generated on the GPU with a fixed seed.  ``bw`` is the achieved bandwidth of a
simple byte model of each mode (see ``bytes_model``) as a fraction of the card's measured copy
bandwidth.
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

import digraph  # noqa: E402
from digraph.algorithms import get as get_algorithm  # noqa: E402
from digraph.dispatch.convergence import linear_contraction, linear_error_bound  # noqa: E402
from digraph.dispatch.systems import linear_factors  # noqa: E402

DATA = [ROOT / ".data", ROOT.parent / "shared" / "datasets"]
MODES = ["bsp", "vertex-async", "path", "path-nopriority"]


def load_graph(name):
    import cupy as cp
    if name.startswith("rmat"):  # "rmat22": 2^22 ids, the isolated ones kept; "rmat22c": dropped
        compact = name.endswith("c")
        scale = int(name[4:].rstrip("c"))
        t0 = time.perf_counter()
        src, dst = gpu_rmat(cp, scale, 16, seed=scale)
        n = 1 << scale
        if compact:  # only the ids that have an arc, renumbered (what digraph.load does)
            ids = cp.unique(cp.concatenate([src, dst]))
            src, dst, n = cp.searchsorted(ids, src), cp.searchsorted(ids, dst), int(ids.size)
            del ids
        g = csr_graph(cp, src, dst, n)
        del src, dst
        cp.get_default_memory_pool().free_all_blocks()
        return g, time.perf_counter() - t0
    if name.startswith(("grid", "geo")):  # road-like: digraph.generators, weights dropped
        import digraph.generators as gen
        t0 = time.perf_counter()
        k = int(name[4:] if name.startswith("grid") else name[3:])
        src, dst = (gen.grid(k, k, weights=None) if name.startswith("grid") else
                    gen.geometric(k, weights=None))
        n = k * k if name.startswith("grid") else k
        return digraph.load((src, dst), num_vertices=n), time.perf_counter() - t0
    if name.startswith("cit") and name[3:].split("-")[0].isdigit():  # "cit20-0.0005": citation
        from graphs import load as load_named
        t0 = time.perf_counter()
        return load_named(name), time.perf_counter() - t0
    for d in DATA:
        p = d / f"{name}.txt.gz"
        if p.exists():
            t0 = time.perf_counter()
            return digraph.load(p), time.perf_counter() - t0
    raise SystemExit(f"graph {name} not found in {DATA}")


def csr_graph(xp, src, dst, n):
    """The :class:`digraph.Graph` that ``digraph.load((src, dst), num_vertices=n)`` builds,
    its two sorts done by ``xp`` (CuPy: on the GPU, seconds instead of the host's two minutes
    for R-MAT 2^25); unweighted arcs only.  ``tests/test_bench_helpers.py`` checks it equals
    ``digraph.load`` with numpy as ``xp``."""
    m = int(src.size)
    host = getattr(xp, "asnumpy", np.asarray)
    src = src.astype(xp.int64, copy=False)
    dst = dst.astype(xp.int64, copy=False)
    order = xp.argsort(src * n + dst)  # ties are parallel arcs: equal, any order
    s, d = src[order], dst[order]
    del order
    out_off = xp.searchsorted(s, xp.arange(n + 1, dtype=xp.int64)).astype(xp.int64)
    in_arcs = xp.argsort(d * m + xp.arange(m, dtype=xp.int64))  # by target, CSR index ascending
    in_off = xp.searchsorted(d[in_arcs], xp.arange(n + 1, dtype=xp.int64)).astype(xp.int64)
    it = np.int32 if n < 2**31 - 1 else np.int64
    g = digraph.Graph(num_vertices=n, out_offsets=host(out_off), out_targets=host(d.astype(it)),
                      in_offsets=host(in_off), in_arcs=host(in_arcs))
    g._cache["in_sources"] = host(s[in_arcs].astype(it))
    return g


def gpu_rmat(cp, scale, ef, a=0.57, b=0.19, c=0.19, seed=0):
    """R-MAT arcs generated on the GPU (one quadrant draw per level and arc)."""
    m = ef << scale
    rng = cp.random.default_rng(seed)
    src = cp.zeros(m, cp.int64)
    dst = cp.zeros(m, cp.int64)
    for _ in range(scale):
        r = rng.random(m, dtype=cp.float32)
        src = (src << 1) | (r >= a + b)
        dst = (dst << 1) | (((r >= a) & (r < a + b)) | (r >= a + b + c))
    return src, dst


def copy_bandwidth(cp):
    x = cp.ones(1 << 28, cp.float32)  # 1 GiB
    y = cp.empty_like(x)
    for _ in range(3):
        y[...] = x
    cp.cuda.Device().synchronize()
    t0 = time.perf_counter()
    for _ in range(10):
        y[...] = x
    cp.cuda.Device().synchronize()
    dt = (time.perf_counter() - t0) / 10
    return 2 * x.nbytes / dt


def peer_linear(cp, graph, system, tol, max_iter=100000):
    """CuPy CSR SpMV iteration ``x <- b + A x`` from 0, stopped on digraph's own sound bound."""
    import cupyx.scipy.sparse as csp
    src, dst, has, arc = linear_factors(graph, system)
    gam = linear_contraction(graph, system)
    n = graph.num_vertices
    rows = graph.out_targets
    cols = graph.arc_sources
    vals = src[cols] * dst[rows] * (arc if has else 1.0)
    A = csp.csr_matrix((cp.asarray(vals), (cp.asarray(rows.astype(np.int32)),
                                           cp.asarray(cols.astype(np.int32)))), shape=(n, n))
    b = cp.asarray(system.b, dtype=cp.float64)
    x = cp.zeros(n, cp.float64)
    it = 0
    while it < max_iter:
        y = b + A @ x
        r = cp.abs(y - x)
        it += 1
        r1, rmax, sx = [float(v) for v in cp.stack([r.sum(), r.max(), x.sum()]).get()]
        if linear_error_bound(r1, rmax, sx, n, gam, system.normalize) <= tol:
            break
        x = y
    out = cp.asnumpy(x)
    return (out / out.sum() if system.normalize else out), it


def median_time(fn, repeat):
    ts = []
    out = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts), out


def bytes_model(mode, stats, n):
    """Bytes a mode must move, by a simple model: per arc examined (index 4 B, gathered source
    value 8 B, coefficient 8 B; the path modes add the mirror 8 B read + 8 B write and target
    index 4 B) and per round over the vertex arrays (3 x 8 B)."""
    arcs = stats.get("arcs_examined", stats["arc_updates"])
    if mode.startswith("path") and "arcs_examined" in stats:  # k-core runs vertex-async
        return arcs * 36 + stats["arc_updates"] * 16 + stats["rounds"] * n * 8
    return arcs * 20 + stats["rounds"] * n * 24


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphs", nargs="+", default=["cnr-2000", "dblp-2010", "rmat20", "rmat22"])
    ap.add_argument("--algorithms", nargs="+", default=["pagerank", "adsorption", "sssp", "kcore"])
    ap.add_argument("--modes", nargs="+", default=MODES)
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json")
    ap.add_argument("--markdown", help="write the table as markdown")
    ap.add_argument("--no-check", action="store_true", help="skip the CPU references")
    ap.add_argument("--no-peer", action="store_true",
                    help="skip the CuPy peer and its tight reference (rows report the certified bound)")
    ap.add_argument("--stream", type=int, metavar="ARCS",
                    help="add a bsp row with the arcs streamed from host memory in batches of ARCS")
    args = ap.parse_args()
    import cupy as cp
    from numba import cuda
    dev = cuda.get_current_device()
    name = dev.name.decode() if isinstance(dev.name, bytes) else dev.name
    bw = copy_bandwidth(cp)
    print(f"# {name}, copy bandwidth {bw / 1e12:.2f} TB/s (read+write), {time.strftime('%Y-%m-%d')}")
    rows = []
    for gname in args.graphs:
        g, t_load = load_graph(gname)
        n, m = g.num_vertices, g.num_arcs
        print(f"\n## {gname}: n={n:,} m={m:,} (load {t_load:.1f} s)")
        for algo in args.algorithms:
            params = {}
            if algo == "sssp":
                params["source"] = g.vertex_ids[int(np.argmax(g.out_degree))]
            if algo == "adsorption":
                params["seeds"] = g.vertex_ids[np.argsort(-g.out_degree)[:10]].tolist()
            tol = {"tol": args.tol} if algo in ("pagerank", "adsorption") else {}
            A = get_algorithm(algo)
            ref = None
            if algo in ("pagerank", "adsorption") and not args.no_peer:
                system = A.prepare(g, **A.bind(g, params))
                tp, (pv, its) = median_time(lambda: peer_linear(cp, g, system, args.tol), args.repeat)
                ref, _ = peer_linear(cp, g, system, 1e-13)
                ref = A.finalize(g, ref if not system.normalize else ref, **A.bind(g, params))
                err = float(np.abs(A.finalize(g, pv, **A.bind(g, params)) - ref).sum())
                row = dict(graph=gname, algorithm=algo, mode="cupy-spmv", time_ms=tp * 1e3,
                           rounds=its, arc_updates=its * m, l1_error=err)
                row["bw_fraction"] = (its * (m * 16 + n * 40)) / tp / bw
                rows.append(row)
                print(f"{algo:<11} {'cupy-spmv':<16} {tp * 1e3:9.2f} ms  rounds {its:6d}  "
                      f"arcs {its * m:>14,d}  L1 err {err:.2e}  bw {row['bw_fraction']:.2f}")
            elif not args.no_check and algo in ("sssp", "kcore"):
                ref = digraph.run(g, algo, mode="vertex-async", **params).values
            modes = list(args.modes)
            if args.stream and algo in ("pagerank", "adsorption"):
                modes.append("bsp-streamed")
            for mode in modes:
                stream = {}
                if mode == "bsp-streamed":
                    mode, stream = "bsp", {"batch_arcs": args.stream}
                t0 = time.perf_counter()
                try:
                    r = digraph.run(g, algo, mode=mode, device="cuda", **tol, **params, **stream)
                except Exception as e:  # keep going: report the failure in the table
                    print(f"{algo:<11} {mode:<16} FAILED {type(e).__name__}: {e}")
                    rows.append(dict(graph=gname, algorithm=algo, mode=mode, error=str(e)))
                    continue
                first = time.perf_counter() - t0
                ps_cache = {}
                if mode.startswith("path") and algo != "kcore":
                    from digraph.preprocess import preprocess
                    t0 = time.perf_counter()
                    ps_cache["ps"] = preprocess(g)
                    t_pre = time.perf_counter() - t0
                else:
                    t_pre = 0.0

                def once():
                    return digraph.run(g, algo, mode=mode, device="cuda", **tol, **params, **stream)
                R = sys.modules["digraph.run"]
                orig = R._pathset
                if ps_cache:  # reuse the PathSet (and its device arrays) across timed runs
                    R._pathset = lambda graph, cache, p: ps_cache["ps"]
                try:
                    tm, r = median_time(once, args.repeat)
                finally:
                    R._pathset = orig
                st = r.stats
                if ref is not None and algo in ("pagerank", "adsorption"):
                    err = float(np.abs(r.values - ref).sum())
                elif ref is not None:
                    err = float(np.sum(r.values != ref))
                else:
                    err = float("nan")
                comp = st["time_compute"]
                label = mode + (f" streamed ({st['streamed_batches']} batches)" if stream else "")
                row = dict(graph=gname, algorithm=algo, mode=label, time_ms=tm * 1e3,
                           compute_ms=comp * 1e3, first_run_s=first, compile_s=st["time_compile"],
                           preprocess_s=t_pre, rounds=st["rounds"],
                           vertex_updates=st["vertex_updates"], arc_updates=st["arc_updates"],
                           arcs_examined=st.get("arcs_examined", st["arc_updates"]),
                           bytes_h2d=st["bytes_h2d"], bytes_d2h=st["bytes_d2h"],
                           error=err, finished_by=st.get("finished_by", ""),
                           error_bound=st.get("error_bound"),
                           floor_limited=bool(st.get("floor_limited", False)))
                row["bw_fraction"] = bytes_model(mode, st, n) / max(tm, 1e-9) / bw
                rows.append(row)
                print(f"{algo:<11} {label:<16} {tm * 1e3:9.2f} ms  rounds {st['rounds']:6d}  "
                      f"arcs {st['arc_updates']:>14,d}  err {err:.2e}  bw {row['bw_fraction']:.2f}  "
                      f"h2d {st['bytes_h2d'] / 1e6:.1f} MB  compile {st['time_compile']:.2f} s"
                      f"{'  ' + row['finished_by'] if row['finished_by'] else ''}"
                      f"{'  bound %.2e' % row['error_bound'] if row['error_bound'] is not None else ''}"
                      f"{'  FLOOR-LIMITED' if row['floor_limited'] else ''}", flush=True)
    if args.markdown:
        lines = ["| graph | algorithm | mode | time ms | rounds | arc updates | arcs examined | "
                 "L1 error / mismatches | bw fraction | h2d MB | compile s |",
                 "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for r in rows:
            if "time_ms" not in r:
                lines.append(f"| {r['graph']} | {r['algorithm']} | {r['mode']} | failed: {r['error']} |")
                continue
            err = r.get("l1_error", r.get("error"))
            lines.append(
                f"| {r['graph']} | {r['algorithm']} | {r['mode']} | {r['time_ms']:.1f} | {r['rounds']} "
                f"| {r['arc_updates']:,} | {r.get('arcs_examined', r['arc_updates']):,} | {err:.2g} "
                f"| {r['bw_fraction']:.3f} | {r.get('bytes_h2d', 0) / 1e6:.1f} | {r.get('compile_s', 0):.2f} |")
        Path(args.markdown).write_text(f"{name}, copy bandwidth {bw / 1e12:.2f} TB/s\n\n" + "\n".join(lines) + "\n")
    if args.json:
        Path(args.json).write_text(json.dumps(dict(gpu=name, copy_bandwidth=bw, rows=rows), indent=1))


if __name__ == "__main__":
    main()
