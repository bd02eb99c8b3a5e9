"""How many sweeps the GPU SCC engine's swept light components need, and how many an accelerated
solver would (issue 18, item 1: `scc` on cnr-2000 took 46 ms on one H200 against `bsp`'s 23.5,
15.9 ms of it in the light phase, where a chain of four swept components of ~150 sweeps each
holds the phase up; docs/benchmarks.md, "PageRank by components on one GPU").

    NUMBA_NUM_THREADS=1 python benchmarks/proto_scc_light.py --graphs cnr-2000 dblp-2010 \\
        cit-HepPh wiki-Vote --json benchmarks/results/scc_light_sweeps.json

A model on the CPU, not the engine: for every cyclic component that the GPU engine sweeps in one
thread block (more than 32 vertices, so not solved exactly; fewer than ``--heavy`` inside arcs
and at most 2,048 vertices), PageRank's system restricted to it, ``x = f + M x`` with
``M = α Pᵀ`` on its inside arcs and ``f`` the teleport (the upstream inputs only shift ``f``),
is solved from ``x = f`` to ``‖f + M x − x‖₁ ≤ tol · ‖x‖₁`` by

* Jacobi sweeps (what a round of pulls does),
* Gauss–Seidel sweeps in the component's vertex order (each vertex reads the values just
  written, as a block's shared-memory sweep can),
* Anderson acceleration of memory 4 on the Jacobi map (the one-GPU `power` engine's method,
  :class:`digraph.dispatch.anderson.Anderson`'s recipe: least squares on the last differences),

and its spectral radius estimated from the Jacobi rate.  The phase's critical path is then the
longest chain of the condensation's DAG, each swept component weighing its sweeps (the others
one).  Prints a row per graph and method.

With ``--largest K`` it models the K components with the most arcs inside instead (the heavy
ones, which the engine runs in push rounds over the whole GPU): the rounds each method takes and
the arcs that rounds of pulls would read.
"""
import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import digraph  # noqa: E402
from digraph.paths.condensation import condensation_for  # noqa: E402

DATA = ROOT.parent / "shared" / "datasets"
ALPHA = 0.85


def _component_matrix(cond, out_degree, c):
    """``M = α Pᵀ`` on component ``c``'s inside arcs (positions local to the component)."""
    p0, p1 = int(cond.comp_offsets[c]), int(cond.comp_offsets[c + 1])
    a0, a1 = int(cond.iout_offsets[p0]), int(cond.iout_offsets[p1])
    src = np.repeat(np.arange(p1 - p0), np.diff(cond.iout_offsets[p0:p1 + 1]))
    dst = cond.iout_targets[a0:a1].astype(np.int64) - p0
    w = ALPHA / out_degree[cond.order[p0 + src]]
    return sp.csr_matrix((w, (dst, src)), shape=(p1 - p0, p1 - p0))


def jacobi(M, f, tol, cap):
    x = f.copy()
    for k in range(1, cap + 1):
        y = f + M @ x
        if np.abs(y - x).sum() <= tol * np.abs(y).sum():
            return k, y
        x = y
    return cap, x


def jacobi_rescaled(M, f, tol, cap):
    """Jacobi with the mass balance restored before each sweep: ``x ← s x`` with ``s`` such that
    the scaled iterate's residual sums to zero, ``s = Σf / (Σx − Σ Mx)`` (a one-dimensional
    correction along the slow mode of a nearly closed component; two sums a sweep)."""
    x = f.copy()
    sf = f.sum()
    for k in range(1, cap + 1):
        mx = M @ x
        den = x.sum() - mx.sum()
        s = sf / den if den > 0 else 1.0
        y = f + s * mx
        if np.abs(y - x).sum() <= tol * np.abs(y).sum():
            return k, y
        x = y
    return cap, x


def gauss_seidel(M, f, tol, cap):
    L = sp.tril(M, k=-1, format="csr")
    U = sp.triu(M, k=0, format="csr")
    A = (sp.identity(M.shape[0], format="csr") - L).tocsr()
    x = f.copy()
    for k in range(1, cap + 1):
        y = sp.linalg.spsolve_triangular(A, f + U @ x, lower=True)
        r = f + M @ y - y
        if np.abs(r).sum() <= tol * np.abs(y).sum():
            return k, y
        x = y
    return cap, x


def anderson(M, f, tol, cap, mem=4):
    x = f.copy()
    F, G = [], []
    for k in range(1, cap + 1):
        g = f + M @ x
        r = g - x
        if np.abs(r).sum() <= tol * np.abs(g).sum():
            return k, g
        F.append(r)
        G.append(g)
        if len(F) > mem + 1:
            F.pop(0)
            G.pop(0)
        if len(F) >= 2:
            dF = np.array([F[i + 1] - F[i] for i in range(len(F) - 1)]).T
            dG = np.array([G[i + 1] - G[i] for i in range(len(G) - 1)]).T
            gam, *_ = np.linalg.lstsq(dF, r, rcond=None)
            x = g - dG @ gam
        else:
            x = g
    return cap, x


def longest_chain(cond, weight):
    """The heaviest path of the condensation's DAG, each component weighing ``weight``."""
    C = cond.num_components
    comp_of = np.repeat(np.arange(C), np.diff(cond.comp_offsets))
    heads = np.repeat(np.arange(cond.ein_offsets.size - 1), np.diff(cond.ein_offsets))
    cs, cd = comp_of[cond.ein_sources.astype(np.int64)], comp_of[heads]
    keep = cs != cd
    cs, cd = cs[keep], cd[keep]
    dist = weight.astype(np.float64).copy()
    level_of = np.repeat(np.arange(cond.num_levels), np.diff(cond.level_offsets))
    lvl = level_of[cd]
    order = np.argsort(lvl, kind="stable")
    cs, cd, lvl = cs[order], cd[order], lvl[order]
    cuts = np.searchsorted(lvl, np.arange(cond.num_levels + 1))
    for L in range(cond.num_levels):
        s, d = cs[cuts[L]:cuts[L + 1]], cd[cuts[L]:cuts[L + 1]]
        if s.size:
            best = np.zeros(C)
            np.maximum.at(best, d, dist[s])
            u = np.unique(d)
            dist[u] = weight[u] + best[u]
    return float(dist.max()) if C else 0.0


def _largest(name, g, cond, out_degree, args):
    """Rows for the ``args.largest`` components with the most arcs inside: the rounds of pulls
    (Jacobi), Gauss–Seidel and Anderson-4 to ``args.tol`` and the arcs they would read."""
    rows = []
    for c in np.argsort(cond.comp_arcs)[::-1][:args.largest]:
        M = _component_matrix(cond, out_degree, c)
        f = np.full(M.shape[0], (1 - ALPHA) / g.num_vertices)
        arcs = int(cond.comp_arcs[c])
        for m, fn in (("jacobi", jacobi), ("gauss-seidel", gauss_seidel), ("anderson-4", anderson)):
            k = int(fn(M, f, args.tol, args.cap)[0])
            row = {"graph": name, "component": int(c), "vertices": int(M.shape[0]),
                   "arcs_inside": arcs, "graph_arcs": int(g.num_arcs), "method": m,
                   "rounds": k, "arcs_read": k * arcs}
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphs", nargs="+", default=["cnr-2000", "dblp-2010"])
    ap.add_argument("--tol", type=float, default=1e-9,
                    help="relative L1 residual a component stops at (the engine's share of the "
                         "1e-8 budget is of this order)")
    ap.add_argument("--heavy", type=int, default=16384)
    ap.add_argument("--cap", type=int, default=2000)
    ap.add_argument("--largest", type=int, default=0,
                    help="model the components with the most arcs inside instead (the heavy "
                         "ones, which the engine runs in push rounds over the GPU): the rounds "
                         "and arcs read that pulls would take")
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = []
    for name in args.graphs:
        g = digraph.load(DATA / f"{name}.txt.gz")
        cond, _ = condensation_for(g)
        sizes = np.diff(cond.comp_offsets)
        out_degree = np.asarray(g.out_degree, np.float64)
        if args.largest:
            rows += _largest(name, g, cond, out_degree, args)
            continue
        swept = np.flatnonzero((sizes > 32) & (sizes <= 2048) & (cond.comp_arcs > 0) &
                               (cond.comp_arcs < args.heavy))
        methods = {"jacobi": jacobi, "jacobi-rescaled": jacobi_rescaled,
                   "gauss-seidel": gauss_seidel, "anderson-4": anderson}
        sweeps = {m: np.zeros(cond.num_components) for m in methods}
        rho = []
        t0 = time.perf_counter()
        for c in swept:
            M = _component_matrix(cond, out_degree, c)
            f = np.full(M.shape[0], (1 - ALPHA) / g.num_vertices)
            for m, fn in methods.items():
                sweeps[m][c] = fn(M, f, args.tol, args.cap)[0]
            k = int(sweeps["jacobi"][c])
            rho.append(args.tol ** (1.0 / max(k, 1)))
        base = np.ones(cond.num_components)
        for m in methods:
            w = np.where(sweeps[m] > 0, sweeps[m], base)
            row = {"graph": name, "method": m, "swept_components": int(swept.size),
                   "swept_vertices": int(sizes[swept].sum()),
                   "sweeps_total": int(sweeps[m][swept].sum()),
                   "sweeps_max": int(sweeps[m][swept].max()) if swept.size else 0,
                   "critical_path_sweeps": longest_chain(cond, w),
                   "levels": int(cond.num_levels),
                   "rho_median": float(np.median(rho)) if rho else None,
                   "rho_max": float(np.max(rho)) if rho else None,
                   "seconds": round(time.perf_counter() - t0, 2)}
            rows.append(row)
            print(json.dumps(row), flush=True)
    if args.json:
        meta = {"date": time.strftime("%Y-%m-%d"), "tol": args.tol, "heavy": args.heavy,
                "alpha": ALPHA}
        Path(args.json).write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
