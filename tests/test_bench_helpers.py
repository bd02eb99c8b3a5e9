"""The benchmarks' fast graph builder gives the graph ``digraph.load`` gives."""
import sys
from pathlib import Path

import numpy as np

import digraph
from digraph.generators import rmat

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from bench_gpu import csr_graph  # noqa: E402


def test_csr_graph_equals_load():
    src, dst = rmat(10, 8, seed=3)
    src = np.concatenate([src, src[:50]])  # parallel arcs
    dst = np.concatenate([dst, dst[:50]])
    n = 1 << 10
    ref = digraph.load((src, dst), num_vertices=n)
    g = csr_graph(np, src, dst, n)
    for name in ("out_offsets", "out_targets", "in_offsets", "in_arcs", "in_sources"):
        a, b = getattr(ref, name), getattr(g, name)
        assert a.dtype == b.dtype, name
        np.testing.assert_array_equal(a, b, err_msg=name)
    assert g.fingerprint() == ref.fingerprint()
