"""Prototype (issue 17): Anderson-accelerated power iteration in CuPy against the plain one, and
the CSR SpMV in a degree-sorted vertex order.  Rows as JSON lines.

    python benchmarks/proto_anderson_gpu.py dblp-2010 cnr-2000 rmat22 rmat24

Measured (2026-11-27, one H200, tol 1e-8; the rounds are cited by
:mod:`digraph.dispatch.anderson`): plain → memory 2 / 3 / 4 / 6 rounds: dblp-2010 96 → 50 / 52 /
43 / 35, cnr-2000 99 → 85 / 76 / 68 / 69, R-MAT 2^22 25 → 11 / 12 / 11 / 11, R-MAT 2^24 27 → 11 /
12 / 11 / 11.  Sorting the vertices by degree changed cuSPARSE's SpMV by 0.88–0.96× on R-MAT
and 1.0–1.14× on the web graphs: not pursued."""
import json, sys, time, statistics
from pathlib import Path
import numpy as np
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import digraph
from bench_gpu import load_graph
from bench_gpu_pagerank import cupy_matrix, cupy_power, timed


def anderson(cp, A, n, alpha, tol, m, reg=1e-12):
    v = cp.full(n, 1.0 / n)
    x = v.copy()
    dF = cp.zeros((m, n)); dG = cp.zeros((m, n))
    H = np.zeros((m, m)); cnt = 0; j = 0
    fprev = gprev = None
    k = 0
    last = np.inf
    while True:
        g = A @ x
        g += (1.0 - g.sum()) * v
        f = g - x
        k += 1
        d = float(cp.abs(f).sum())
        if alpha / (1 - alpha) * d <= tol or k > 500:
            return g, k
        if d > last:  # restart
            cnt = 0
        last = d
        if fprev is not None:
            dF[j] = f - fprev; dG[j] = g - gprev
            cnt = min(cnt + 1, m)
            a = cp.asnumpy(dF[:cnt] @ dF[j]) if True else None
            H[j, :cnt] = a; H[:cnt, j] = a
            jj = j
            j = (j + 1) % m
        fprev, gprev = f, g
        if cnt:
            # slots in use: the last cnt written
            idx = [(jj - i) % m for i in range(cnt)]
            Hs = H[np.ix_(idx, idx)].copy()
            Hs += reg * np.trace(Hs) * np.eye(cnt)
            b = cp.asnumpy(dF[idx] @ f)
            gam = np.linalg.solve(Hs, b)
            x = g - cp.asarray(gam) @ dG[idx]
            x = cp.maximum(x, 0)
        else:
            x = g


def main():
    import cupy as cp
    sync = cp.cuda.Device().synchronize
    alpha, tol = 0.85, 1e-8
    for name in sys.argv[1:]:
        g, _ = load_graph(name)
        n = g.num_vertices
        A = cupy_matrix(cp, g, alpha)
        ref, _ = cupy_power(cp, A, n, alpha, 1e-13)
        t, (x, k) = timed(lambda: cupy_power(cp, A, n, alpha, tol), 3, sync)
        print(json.dumps(dict(graph=name, method="power", ms=t * 1e3, rounds=k,
                              err=float(cp.abs(x - ref).sum()))), flush=True)
        for m in (2, 3, 4, 6):
            t, (x, k) = timed(lambda: anderson(cp, A, n, alpha, tol, m), 3, sync)
            print(json.dumps(dict(graph=name, method=f"anderson m={m}", ms=t * 1e3, rounds=k,
                                  err=float(cp.abs(x - ref).sum()))), flush=True)
        xv = cp.full(n, 1.0 / n)
        def spmv(B):
            for _ in range(10):
                y = B @ xv
            return y
        t0, _ = timed(lambda: spmv(A), 3, sync)
        outdeg = cp.asarray(g.out_degree)
        for key, deg in (("out", outdeg), ("in", cp.asarray(g.in_degree))):
            perm = cp.argsort(-deg.astype(cp.int64), kind="stable") if False else cp.argsort(-deg.astype(cp.int64))
            # new id of old vertex: rank
            B = A[perm][:, perm].tocsr()
            B.sort_indices()
            t1, _ = timed(lambda: spmv(B), 3, sync)
            print(json.dumps(dict(graph=name, method=f"spmv sorted by {key}-degree", ms_orig=t0 * 100, ms_sorted=t1 * 100)), flush=True)
            del B
        res = digraph.run(g, "pagerank", device="cuda", tol=tol)
        t, r = timed(lambda: digraph.run(g, "pagerank", device="cuda", tol=tol), 3, sync)
        print(json.dumps(dict(graph=name, method="digraph default", ms=t * 1e3, rounds=r.stats["rounds"])), flush=True)
        del A, ref, g
        cp.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    main()
