"""Would walking paths cut the rounds of PageRank's pull iteration?  A CPU model of a GPU round
that pulls every vertex (Jacobi, the power iteration's round) and then walks chains of paths,
each vertex of a chain pulled again from the values just written before it (Gauss–Seidel along
the chain: a new value crosses the chain in one round, DiGraph's point).

Rounds to the sound bound ``‖b + A x − x‖₁ / (1 − α) ≤ tol`` of the linear system ``x = b + A x``
(``A = α Pᵀ``, no dangling term, ``b = (1 − α)/n``), for:

* ``jacobi``: pulls only (what ``bsp``'s dense rounds do);
* ``paths ≥ L``: pulls, then every path of the :class:`~digraph.PathSet` with at least ``L`` arcs
  walked, its vertices of in-degree at most ``cap`` pulled again (a vertex on several paths is
  pulled once per path);
* ``chains``: the same with a vertex-disjoint cover (each vertex pulled at most once more a round:
  the cover takes the paths in layer order and a vertex is claimed by the first path that reaches
  it);
* ``gs``: Gauss–Seidel over all vertices in the paths' order (the limit of walking everything).

``walk`` is the arcs the walks read a round, as a share of ``m``: the extra work of a round.

    NUMBA_NUM_THREADS=2 python benchmarks/proto_path_walk.py --graphs cit-HepPh cnr-2000 \\
        dblp-2010 wiki-Vote grid300 --json benchmarks/results/path_walk_rounds.json
"""

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import digraph  # noqa: E402
from graphs import load  # noqa: E402


@njit(cache=True)
def _pull(io, isrc, ss, b, x, y):
    for v in range(b.size):
        acc = 0.0
        for k in range(io[v], io[v + 1]):
            acc += ss[isrc[k]] * x[isrc[k]]
        y[v] = b[v] + acc


@njit(cache=True)
def _walk(io, isrc, ss, b, y, wo, wv, cap):
    arcs = 0
    for w in range(wo.size - 1):
        for i in range(wo[w] + 1, wo[w + 1]):
            v = wv[i]
            if io[v + 1] - io[v] > cap:
                continue
            acc = 0.0
            for k in range(io[v], io[v + 1]):
                acc += ss[isrc[k]] * y[isrc[k]]
            arcs += io[v + 1] - io[v]
            y[v] = b[v] + acc
    return arcs


@njit(cache=True)
def _cover(po, pv, lens, minlen, indeg, cap, n):
    """Vertex-disjoint chains (offsets, vertices) from the paths of at least ``minlen`` arcs."""
    claimed = np.zeros(n, np.bool_)
    wo = np.zeros(pv.size + 1, np.int64)
    wv = np.empty(pv.size, np.int64)
    nw = 0
    top = 0
    for p in range(lens.size):
        if lens[p] < minlen:
            continue
        start = top
        for i in range(po[p], po[p + 1]):
            v = pv[i]
            if claimed[v] or indeg[v] > cap:
                if top - start >= 2:
                    nw += 1
                    wo[nw] = top
                else:
                    top = start
                start = top
                continue
            claimed[v] = True
            wv[top] = v
            top += 1
        if top - start >= 2:
            nw += 1
            wo[nw] = top
        else:
            top = start
    return wo[:nw + 1].copy(), wv[:top].copy()


def rounds(g, walks, cap, alpha, tol, max_rounds=5000):
    n = g.num_vertices
    io, isrc = np.asarray(g.in_offsets), np.asarray(g.in_sources)
    od = np.asarray(g.out_degree, np.float64)
    ss = np.where(od > 0, alpha / np.maximum(od, 1), 0.0)
    b = np.full(n, (1 - alpha) / n)
    x, y, r = np.zeros(n), np.empty(n), np.empty(n)
    walked = 0
    for k in range(1, max_rounds + 1):
        _pull(io, isrc, ss, b, x, y)
        if walks is not None:
            walked += _walk(io, isrc, ss, b, y, walks[0], walks[1], cap)
        x, y = y, x
        _pull(io, isrc, ss, b, x, r)
        if np.abs(r - x).sum() / (1 - alpha) <= tol:
            return k, walked / k / max(g.num_arcs, 1)
    return None, walked / max_rounds / max(g.num_arcs, 1)


def gs_rounds(g, order, alpha, tol, max_rounds=5000):
    n = g.num_vertices
    io, isrc = np.asarray(g.in_offsets), np.asarray(g.in_sources)
    od = np.asarray(g.out_degree, np.float64)
    ss = np.where(od > 0, alpha / np.maximum(od, 1), 0.0)
    b = np.full(n, (1 - alpha) / n)
    x, r = np.zeros(n), np.empty(n)
    missing = np.setdiff1d(np.arange(n), order)  # vertices on no path: pulled last
    chain = np.concatenate([[-1], order, missing]).astype(np.int64)  # a walk skips its head
    wo = np.array([0, chain.size], np.int64)
    for k in range(1, max_rounds + 1):
        _walk(io, isrc, ss, b, x, wo, chain, 1 << 62)
        _pull(io, isrc, ss, b, x, r)
        if np.abs(r - x).sum() / (1 - alpha) <= tol:
            return k
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphs", nargs="+", default=["cit-HepPh", "cnr-2000", "dblp-2010",
                                                    "wiki-Vote", "grid300"])
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--cap", type=int, default=64)
    ap.add_argument("--json")
    args = ap.parse_args()
    alpha = 0.85
    rows = []
    for name in args.graphs:
        if name.startswith("grid"):
            k = int(name[4:])
            from digraph.generators import grid
            src, dst, _ = grid(k, k)
            g = digraph.load((src, dst))  # unweighted: PageRank by out-degrees
        else:
            g = load(name)
        ps = digraph.preprocess(g)
        po, pv = np.asarray(ps.path_offsets), np.asarray(ps.path_vertices)
        lens = np.diff(po) - 1
        indeg = np.diff(np.asarray(g.in_offsets))
        m = max(g.num_arcs, 1)
        base = {"graph": name, "n": g.num_vertices, "m": g.num_arcs, "paths": int(lens.size),
                "arcs_on_paths_of_2_plus": float(lens[lens >= 2].sum() / m),
                "arcs_on_paths_of_4_plus": float(lens[lens >= 4].sum() / m)}

        def emit(method, r, walk=0.0, **more):
            rows.append(dict(base, method=method, rounds=r, walk=walk, **more))
            print(json.dumps(rows[-1]), flush=True)
        emit("jacobi", rounds(g, None, args.cap, alpha, args.tol)[0])
        for L in (2, 4):
            sel = np.flatnonzero(lens >= L)
            segs = [pv[po[p]:po[p + 1]] for p in sel]
            if segs:
                wo = np.concatenate([[0], np.cumsum([s.size for s in segs])]).astype(np.int64)
                wv = np.concatenate(segs).astype(np.int64)
                r, w = rounds(g, (wo, wv), args.cap, alpha, args.tol)
                emit(f"paths >= {L}", r, w, cap=args.cap)
            wo, wv = _cover(po, pv, lens, L - 1, indeg, args.cap, g.num_vertices)
            r, w = rounds(g, (wo, wv), args.cap, alpha, args.tol)
            emit(f"chains from paths >= {L - 1}", r, w, cap=args.cap, chains=int(wo.size - 1),
                 mean_chain=float(wv.size / max(wo.size - 1, 1)))
        order = pv[np.sort(np.unique(pv, return_index=True)[1])]
        emit("gs, paths' order", gs_rounds(g, order.astype(np.int64), alpha, args.tol))
    if args.json:
        meta = {"date": time.strftime("%Y-%m-%d"), "machine": platform.node(), "tol": args.tol,
                "alpha": alpha, "cap": args.cap}
        Path(args.json).write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
