"""cuSPARSE's SpMV through ``cupyx.cusparse.spmv`` (descriptors and buffer made at every call)
against :class:`digraph.dispatch.cuda.runtime.spmv.SpMV` (made once): the host time a call costs,
the GPU time of a call, and whether the products are equal bit for bit.

    python benchmarks/ab_cusparse_spmv.py --graphs rmat16 rmat20 rmat22 --json $OUT/spmv.json
"""

import argparse
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

from bench_gpu import load_graph  # noqa: E402


def main():
    import cupy as cp
    import cupyx.scipy.sparse as csp
    from cupyx import cusparse
    from digraph.dispatch.cuda.runtime.spmv import SpMV
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphs", nargs="+", default=["rmat16", "rmat20", "rmat22"])
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = []
    for name in args.graphs:
        g, _ = load_graph(name)
        n = g.num_vertices
        off = cp.asarray(np.asarray(g.in_offsets, np.int32))
        src = cp.asarray(np.asarray(g.in_sources, np.int32))
        mat = csp.csr_matrix((cp.ones(g.num_arcs, cp.float64), src, off), shape=(n, n),
                             copy=False)
        mat.has_canonical_format = True
        x = cp.asarray(np.random.default_rng(1).random(n))
        y1, y2 = cp.empty(n), cp.empty(n)
        cached = SpMV(mat)
        for label, fn, y in (("cupyx.cusparse.spmv", lambda y: cusparse.spmv(mat, x, y=y), y1),
                             ("SpMV, made once", lambda y: cached(x, y), y2)):
            fn(y)
            cp.cuda.Device().synchronize()
            host, wall = [], []
            for _ in range(5):
                t0 = time.perf_counter()
                for _ in range(args.calls):
                    fn(y)
                t1 = time.perf_counter()
                cp.cuda.Device().synchronize()
                t2 = time.perf_counter()
                host.append((t1 - t0) / args.calls)
                wall.append((t2 - t0) / args.calls)
            rows.append({"graph": name, "n": n, "m": g.num_arcs, "method": label,
                         "host_us_per_call": statistics.median(host) * 1e6,
                         "wall_us_per_call": statistics.median(wall) * 1e6})
            print(json.dumps(rows[-1]), flush=True)
        rows.append({"graph": name, "equal": bool(cp.array_equal(y1, y2))})
        print(json.dumps(rows[-1]), flush=True)
    if args.json:
        meta = {"date": time.strftime("%Y-%m-%d"), "machine": platform.node(),
                "gpu": cp.cuda.runtime.getDeviceProperties(0)["name"].decode()}
        Path(args.json).write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
