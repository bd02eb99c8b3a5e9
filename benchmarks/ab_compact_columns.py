"""A/B: a shard's pull reading a full-length replica of ``z`` (columns in the engine's
numbering, ``n`` wide) against a compact vector (its own range, then the entries it reads from
each other GPU, concatenated: the packed exchange's buffers; ``nl + R`` wide), on one GPU.

    python benchmarks/ab_compact_columns.py --graph rmat25 --gpus 2 4 --json $OUT/compact.json

For GPU 0's part of the layout ``digraph.run`` would pick (``power_layout.choose``) on ``k``
GPUs: the cuSPARSE SpMV (:class:`digraph.dispatch.cuda.runtime.spmv.SpMV`) timed by CUDA events
with each numbering, and the packed exchange's scatter (the engine's ``scatter_at`` kernel
before the change, defined here) that the compact numbering makes unnecessary.  Medians of ``--repeat`` calls after a warm-up.
"""

import argparse
import json
import platform
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_gpu import load_graph  # noqa: E402


def timed(cp, fn, repeat):
    fn()
    cp.cuda.Device().synchronize()
    ts = []
    for _ in range(repeat):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(cp.cuda.get_elapsed_time(a, b))
    return statistics.median(ts)


def main():
    import cupy as cp
    import cupyx.scipy.sparse as csp
    from digraph.dispatch.cuda.runtime.spmv import SpMV
    from digraph.dispatch.cuda.sharded import power_layout as PL
    from digraph.dispatch.gpu_power import PowerGpuSettings
    from numba import cuda

    @cuda.jit
    def scatter_at(buf, idx, base, z):  # the engine's scatter before the compact z
        for i in range(cuda.grid(1), idx.size, cuda.gridsize(1)):
            z[base + idx[i]] = buf[i]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graph", default="rmat25")
    ap.add_argument("--gpus", nargs="+", type=int, default=[2, 4])
    ap.add_argument("--repeat", type=int, default=21)
    ap.add_argument("--json")
    a = ap.parse_args()
    g, t_load = load_graph(a.graph)
    n = g.num_vertices
    rows_out = []
    for k in a.gpus:
        lay = PL.choose(g.in_offsets, g.in_sources, k, PowerGpuSettings())
        b0, b1 = int(lay.bounds[0]), int(lay.bounds[1])
        nl = b1 - b0
        rows, spans = lay.arc_spans(g.in_offsets, 0)
        src = cp.asarray(lay.gather_arcs(g.in_sources, spans))
        src = lay.renumber(cp, src) if lay.kind != "ranges" else src
        off = cp.asarray(rows.astype(np.int32))
        m = int(src.size)
        own = (src >= b0) & (src < b1)
        remote = cp.unique(src[~own])
        R = int(remote.size)
        kept = cp.sort(cp.concatenate([remote, cp.arange(b0, b1, dtype=remote.dtype)]))
        csrc = cp.searchsorted(kept, src).astype(np.int32)  # the engine's order kept
        ones = cp.ones(m, np.float64)
        mat_g = csp.csr_matrix((ones, src.astype(np.int32), off), shape=(nl, n), copy=False)
        mat_c = csp.csr_matrix((ones, csrc, off), shape=(nl, nl + R), copy=False)
        mat_g.has_canonical_format = True
        mat_c.has_canonical_format = True
        zg = cp.random.random(n)
        zc = zg[kept]
        yg, yc = cp.empty(nl), cp.empty(nl)
        fg, fc = SpMV(mat_g), SpMV(mat_c)
        t_g = timed(cp, lambda: fg(zg, yg), a.repeat)
        t_c = timed(cp, lambda: fc(zc, yc), a.repeat)
        err = float(cp.abs(yg - yc).max() / cp.abs(yg).max())
        recv = zg[remote].copy()
        idx = (remote - 0).astype(np.int32)
        grid = max(1, min(-(-R // 256), 16 * 132))
        t_s = timed(cp, lambda: scatter_at[grid, 256](recv, idx, 0, zg), a.repeat)
        row = {"graph": a.graph, "gpus": k, "layout": lay.kind, "rows": nl, "arcs": m,
               "remote_read": R, "spmv_full_ms": round(t_g, 4), "spmv_compact_ms": round(t_c, 4),
               "scatter_ms": round(t_s, 4), "max_rel_diff": err}
        print(row, flush=True)
        rows_out.append(row)
        del mat_g, mat_c, fg, fc, zg, zc, src, csrc, ones
        cp.get_default_memory_pool().free_all_blocks()
    if a.json:
        Path(a.json).write_text(json.dumps({"gpu": cp.cuda.runtime.getDeviceProperties(0)[
            "name"].decode(), "host": platform.node(), "rows": rows_out}, indent=1))


if __name__ == "__main__":
    main()
