"""Road-like generators (issue 18): ``digraph.generators.grid`` and ``geometric``."""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components, dijkstra

import digraph
from digraph.errors import InvalidParameterError
from digraph.generators import geometric, grid


def grid_arcs(rows, cols, diagonal=False):
    m = rows * (cols - 1) + cols * (rows - 1)
    if diagonal:
        m += 2 * (rows - 1) * (cols - 1)
    return 2 * m


def arc_set(src, dst):
    return set(zip(src.tolist(), dst.tolist()))


def check_simple_symmetric(src, dst, n):
    assert src.dtype == np.int64 and dst.dtype == np.int64
    assert src.shape == dst.shape
    assert src.min() >= 0 and dst.min() >= 0 and src.max() < n and dst.max() < n
    assert not np.any(src == dst), "self-loop"
    arcs = arc_set(src, dst)
    assert len(arcs) == src.size, "parallel arcs"
    assert arcs == arc_set(dst, src), "an arc without its reverse"


def check_weights(w, m, lo, hi):
    assert w.dtype == np.float64 and w.shape == (m,)
    if m == 0:
        return
    assert w.min() >= lo and w.max() <= hi
    assert np.array_equal(w, np.round(w))


@pytest.mark.parametrize("rows, cols", [(1, 1), (1, 5), (5, 1), (2, 2), (3, 4), (17, 9)])
@pytest.mark.parametrize("diagonal", [False, True])
def test_grid_sizes_and_symmetry(rows, cols, diagonal):
    src, dst, w = grid(rows, cols, diagonal=diagonal)
    assert src.size == grid_arcs(rows, cols, diagonal)
    check_weights(w, src.size, 1, 100)
    if src.size:
        check_simple_symmetric(src, dst, rows * cols)


def test_grid_joins_exactly_the_neighbours():
    rows, cols = 4, 5
    src, dst = grid(rows, cols, weights=None)
    want = set()
    for r in range(rows):
        for c in range(cols):
            for dr, dc in ((0, 1), (1, 0), (0, -1), (-1, 0)):
                if 0 <= r + dr < rows and 0 <= c + dc < cols:
                    want.add((r * cols + c, (r + dr) * cols + c + dc))
    assert arc_set(src, dst) == want
    src, dst = grid(rows, cols, weights=None, diagonal=True)
    r, c = np.divmod(src, cols)
    r2, c2 = np.divmod(dst, cols)
    assert np.all(np.maximum(abs(r - r2), abs(c - c2)) == 1)


def test_grid_weights_range_seed_and_directions():
    src, dst, w = grid(30, 30, weights=(5, 9), seed=3)
    check_weights(w, src.size, 5, 9)
    assert set(np.unique(w).tolist()) == {5.0, 6.0, 7.0, 8.0, 9.0}     # lo and hi both drawn
    assert np.array_equal(w, grid(30, 30, weights=(5, 9), seed=3)[2])
    assert not np.array_equal(w, grid(30, 30, weights=(5, 9), seed=4)[2])
    half = src.size // 2                 # the two directions draw their own weights
    assert np.array_equal(src[:half], dst[half:]) and not np.array_equal(w[:half], w[half:])
    assert np.all(grid(3, 3, weights=(7, 7))[2] == 7.0)


def test_grid_sssp_equals_scipy_dijkstra():
    rows, cols = 12, 15
    n = rows * cols
    src, dst, w = grid(rows, cols, seed=2)
    g = digraph.Graph.from_arrays(src, dst, w, num_vertices=n)
    got = digraph.run(g, "sssp", source=0).values
    want = dijkstra(sp.csr_matrix((w, (src, dst)), shape=(n, n)), indices=0)
    assert np.allclose(got, want)
    # unweighted: hops are Manhattan distances from the corner
    g1 = digraph.load(grid(rows, cols, weights=None))
    hops = digraph.run(g1, "sssp", source=0).to_dict()
    assert all(hops[v] == v // cols + v % cols for v in range(n))


def test_geometric_simple_symmetric_and_deterministic():
    n = 3000
    src, dst, w = geometric(n, degree=6, seed=5)
    check_simple_symmetric(src, dst, n)
    check_weights(w, src.size, 1, 100)
    out = np.bincount(src, minlength=n)
    assert out.min() >= 6 and 6 < out.mean() < 1.5 * 6
    again = geometric(n, degree=6, seed=5)
    assert all(np.array_equal(a, b) for a, b in zip((src, dst, w), again))
    other = geometric(n, degree=6, seed=6)
    assert other[0].size != src.size or not np.array_equal(other[1], dst)


def test_geometric_is_the_knn_graph_and_local():
    n, k = 2000, 5
    src, dst, xy = geometric(n, degree=k, weights=None, seed=1, positions=True)
    assert xy.shape == (n, 2) and xy.min() >= 0 and xy.max() < 1
    # brute force: u-v joined iff v among u's k nearest or u among v's
    d = np.hypot(xy[:, None, 0] - xy[None, :, 0], xy[:, None, 1] - xy[None, :, 1])
    np.fill_diagonal(d, np.inf)
    nearest = np.argsort(d, axis=1)[:, :k]
    want = {(u, int(v)) for u in range(n) for v in nearest[u]}
    want |= {(v, u) for u, v in want}
    assert arc_set(src, dst) == want
    # locality: no arc longer than a few times the typical k-th neighbour distance
    r = math.sqrt(k / (math.pi * n))
    length = np.hypot(*(xy[src] - xy[dst]).T)
    assert length.max() < 4 * r
    # ids follow the plane: most arcs join nearby ids
    assert np.median(abs(src - dst)) < 0.1 * n


def test_geometric_connected_at_degree_6():
    n = 10_000
    src, dst, w = geometric(n, degree=6, seed=0)
    adj = sp.csr_matrix((w, (src, dst)), shape=(n, n))
    ncomp, labels = connected_components(adj, directed=True, connection="strong")
    assert np.bincount(labels).max() > 0.95 * n
    assert ncomp <= 3


def test_geometric_distance_weights():
    n = 2000
    src, dst, w, xy = geometric(n, degree=4, weights=(1, 1000), by_distance=True, seed=2,
                                positions=True)
    check_weights(w, src.size, 1, 1000)
    half = src.size // 2
    assert np.array_equal(w[:half], w[half:]) and w.max() == 1000
    length = np.hypot(*(xy[src] - xy[dst]).T)
    assert np.all(np.abs(w - 1000 * length / length.max()) <= 1)


def test_geometric_sssp_equals_scipy_dijkstra():
    n = 1500
    src, dst, w = geometric(n, degree=6, seed=3)
    got = digraph.run(digraph.Graph.from_arrays(src, dst, w, num_vertices=n), "sssp", source=0)
    want = dijkstra(sp.csr_matrix((w, (src, dst)), shape=(n, n)), indices=0)
    assert np.allclose(got.values, want)


@pytest.mark.parametrize("call, name", [
    (lambda: grid(0, 5), "rows"),
    (lambda: grid(5, -1), "cols"),
    (lambda: grid(2.5, 3), "rows"),
    (lambda: grid(True, 3), "rows"),
    (lambda: grid(3, 3, weights=(0, 5)), "weights"),
    (lambda: grid(3, 3, weights=(9, 5)), "weights"),
    (lambda: grid(3, 3, weights=(1.5, 5)), "weights"),
    (lambda: grid(3, 3, weights=7), "weights"),
    (lambda: geometric(0), "n"),
    (lambda: geometric(1), "n"),
    (lambda: geometric(100, degree=0), "degree"),
    (lambda: geometric(100, degree=100), "degree"),
    (lambda: geometric(100, weights=(1, 2, 3)), "weights"),
])
def test_bad_parameters(call, name):
    with pytest.raises(InvalidParameterError, match=name):
        call()


def test_float_integral_weight_bounds_accepted():
    src, dst, w = grid(2, 2, weights=(2.0, 3.0))
    assert set(w.tolist()) <= {2.0, 3.0}


class CoarseGenerator(np.random.Generator):
    """Points on an 8 x 8 lattice: many coincide, so a point need not come first in its own
    neighbour list (or be in it at all)."""

    def random(self, size=None, *args, **kwargs):
        return np.floor(super().random(size) * 8) / 8


def test_geometric_coinciding_points():
    n, k = 500, 3
    src, dst, w = geometric(n, degree=k, seed=CoarseGenerator(np.random.PCG64(0)))
    check_simple_symmetric(src, dst, n)
    assert np.bincount(src, minlength=n).min() >= k
