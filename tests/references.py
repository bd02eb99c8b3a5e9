"""Graphs and exact references shared by the tests (docs/design.md §4): random directed
multigraphs for hypothesis, and each built-in algorithm's answer computed independently (dense or
sparse solves with numpy/scipy, networkx's Dijkstra, a quadratic core peeling).

``from references import Arcs, multigraphs, pagerank_exact, ...`` (``tests/`` is on the path).
"""

import networkx as nx
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from hypothesis import strategies as st
from scipy.sparse.csgraph import dijkstra

import digraph
from digraph.graph import Graph


class Arcs:
    """Arcs as given to the engine: ``n`` vertices ``0..n-1``, ``src``, ``dst``, ``w`` (or None)."""

    def __init__(self, n, src, dst, w=None):
        self.n = n
        self.src = np.asarray(src, dtype=np.int64)
        self.dst = np.asarray(dst, dtype=np.int64)
        self.w = None if w is None else np.asarray(w, dtype=np.float64)

    @property
    def m(self):
        return self.src.size

    def graph(self, weighted=True, directed=True):
        return Graph.from_arrays(self.src, self.dst, self.w if weighted else None,
                                 num_vertices=self.n, directed=directed)

    def weights_or_ones(self, weighted=True):
        return self.w if (weighted and self.w is not None) else np.ones(self.m)

    def multidigraph(self, weighted=True):
        g = nx.MultiDiGraph()
        g.add_nodes_from(range(self.n))
        w = self.weights_or_ones(weighted)
        g.add_weighted_edges_from(zip(self.src.tolist(), self.dst.tolist(), w.tolist()))
        return g

    def __repr__(self):
        return f"Arcs(n={self.n}, src={self.src.tolist()}, dst={self.dst.tolist()}, w={None if self.w is None else self.w.tolist()})"


@st.composite
def multigraphs(draw, max_n=40, weights="any", zero_weights=False, min_n=1, max_deg=4):
    """Directed multigraphs on ``n`` vertices (all kept, isolated ones included).

    weights: "none", "int" (1..9, or 0..9 with zero_weights), "float", or "any" (one of those).
    Self-loops and parallel arcs are drawn on purpose; a random set of vertices is made dangling
    (no out-arcs).
    """
    n = draw(st.integers(min_n, max_n))
    v = st.integers(0, n - 1)
    m = draw(st.integers(0, max_deg * n))
    arcs = draw(st.lists(st.tuples(v, v), min_size=m, max_size=m))
    loops = draw(st.lists(v, max_size=3))
    arcs += [(u, u) for u in loops]
    if arcs:
        arcs += draw(st.lists(st.sampled_from(arcs), max_size=max(1, len(arcs) // 3)))  # parallel
    sinks = draw(st.sets(v, max_size=max(1, n // 4)))
    arcs = [(a, b) for a, b in arcs if a not in sinks]
    arcs = draw(st.permutations(arcs)) if len(arcs) < 60 else arcs
    src = [a for a, _ in arcs]
    dst = [b for _, b in arcs]
    kind = draw(st.sampled_from(["none", "int", "float"])) if weights == "any" else weights
    if kind == "none":
        w = None
    elif kind == "int":
        w = draw(st.lists(st.integers(0 if zero_weights else 1, 9), min_size=len(arcs), max_size=len(arcs)))
    else:
        lo = 0.0 if zero_weights else 0.01
        elem = st.floats(lo, 10.0, allow_nan=False, allow_infinity=False)
        if zero_weights:
            elem = st.one_of(st.just(0.0), elem)
        w = draw(st.lists(elem, min_size=len(arcs), max_size=len(arcs)))
    return Arcs(n, src, dst, w)


def l1(a, b):
    return float(np.abs(np.asarray(a, float) - np.asarray(b, float)).sum())


def within(err, tol):
    """err ≤ tol up to float64 rounding of the state itself (a bound that lands exactly on tol,
    e.g. 9.9e-7 / 0.99, may leave a true error of tol + 3e-17)."""
    return err <= tol * (1 + 1e-9) + 1e-15


def pagerank_exact(arcs, alpha, personalization=None, weighted=True):
    """Dense solve of ``(I − α Pᵀ) x = p`` (dangling mass dropped), normalised: networkx's answer."""
    n = arcs.n
    w = arcs.weights_or_ones(weighted)
    wout = np.bincount(arcs.src, weights=w, minlength=n)
    P = np.zeros((n, n))
    ok = wout[arcs.src] > 0
    np.add.at(P, (arcs.src[ok], arcs.dst[ok]), w[ok] / wout[arcs.src[ok]])
    if personalization is None:
        p = np.full(n, 1.0 / n)
    else:
        p = np.array([float(personalization.get(i, 0.0)) for i in range(n)])
        p /= p.sum()
    x = np.linalg.solve(np.eye(n) - alpha * P.T, p)
    return x / x.sum()


def adsorption_exact(arcs, seeds, beta, weighted=True):
    """docs/design.md §4: x_v = p_inj(v)·I_v + p_cont(v)·Σ_{u→v} (w_uv / W_in(v))·x_u, by scipy spsolve."""
    n = arcs.n
    w = arcs.weights_or_ones(weighted)
    w_in = np.bincount(arcs.dst, weights=w, minlength=n)
    p_cont = np.where(w_in > 0, beta, 0.0)
    ok = w_in[arcs.dst] > 0
    coef = p_cont[arcs.dst[ok]] * w[ok] / w_in[arcs.dst[ok]]
    M = sp.csc_array((coef, (arcs.dst[ok], arcs.src[ok])), shape=(n, n))  # duplicates summed
    inj = np.zeros(n)
    inj[list(seeds)] = 1.0
    b = (1.0 - beta) * inj  # p_inj = 1 − β at seeds (I = 1), 0 elsewhere
    return np.atleast_1d(spla.spsolve((sp.identity(n, format="csc") - M).tocsc(), b))


def sssp_networkx(arcs, source, weighted=True):
    d = nx.single_source_dijkstra_path_length(arcs.multidigraph(weighted), source, weight="weight")
    out = np.full(arcs.n, np.inf)
    out[list(d)] = list(d.values())
    return out


def sssp_scipy(arcs, source, weighted=True):
    """scipy dijkstra on the lightest of parallel arcs (dense input: zero = no arc, so w > 0 only)."""
    w = arcs.weights_or_ones(weighted)
    assert np.all(w > 0)
    dense = np.full((arcs.n, arcs.n), np.inf)
    np.minimum.at(dense, (arcs.src, arcs.dst), w)
    np.fill_diagonal(dense, np.inf)  # self-loops never shorten a path
    dense[np.isinf(dense)] = 0.0  # scipy's dense convention: 0 = no arc
    return dijkstra(dense, directed=True, indices=source)


def core_peeling(n, src, dst):
    """Batagelj–Zaversnik peeling on the undirected multigraph of the arcs: each non-loop arc u->v
    makes v a neighbour of u and u a neighbour of v (with multiplicity)."""
    nbrs = [[] for _ in range(n)]
    for u, v in zip(list(src), list(dst)):
        if u != v:
            nbrs[u].append(v)
            nbrs[v].append(u)
    deg = [len(a) for a in nbrs]
    core = [0] * n
    removed = [False] * n
    k = 0
    for _ in range(n):
        v = min((d, i) for i, d in enumerate(deg) if not removed[i])[1]  # O(n²): tiny graphs
        k = max(k, deg[v])
        core[v] = k
        removed[v] = True
        for u in nbrs[v]:
            if not removed[u]:
                deg[u] -= 1
    return np.array(core, dtype=np.int64)


def cycles_dag(k, size, seed=0, big=0, extra=2):
    """``k`` cycles of 2…``size`` vertices chained by random forward arcs (a DAG of cycles),
    plus one strongly connected block of ``big`` vertices at the front when ``big``."""
    rng = np.random.default_rng(seed)
    src, dst = [], []
    starts = []
    v = 0
    if big:
        p = rng.permutation(big)
        src += p.tolist()
        dst += np.roll(p, 1).tolist()  # a cycle through all of them
        for _ in range(2 * big):
            a, b = rng.integers(0, big, 2)
            src.append(int(a))
            dst.append(int(b))
        starts.append((0, big))
        v = big
    for _ in range(k):
        s = int(rng.integers(1, size + 1))
        members = list(range(v, v + s))
        if s > 1:
            src += members
            dst += members[1:] + members[:1]
        starts.append((v, v + s))
        v += s
    n = v
    for i, (a, b) in enumerate(starts[1:], 1):  # arcs from earlier groups only: a DAG of groups
        for _ in range(extra):
            j = int(rng.integers(0, i))
            src.append(int(rng.integers(*starts[j])))
            dst.append(int(rng.integers(a, b)))
    return digraph.Graph.from_arrays(np.array(src), np.array(dst), num_vertices=n)
