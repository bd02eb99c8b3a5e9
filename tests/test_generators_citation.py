"""The citation-like generator (issue 18): ``digraph.generators.citation``."""

import networkx as nx
import numpy as np
import pytest

import digraph
from digraph.errors import InvalidParameterError
from digraph.generators import citation
from digraph.paths.condensation import condensation_for


def test_without_back_citations_it_is_a_dag_of_older_papers():
    n, degree = 3000, 7
    src, dst = citation(n, degree=degree, back=0.0, seed=2)
    assert src.dtype == np.int64 and dst.dtype == np.int64
    assert src.size == dst.size == n * degree
    assert src.min() >= 0 and dst.min() >= 0 and max(src.max(), dst.max()) < n
    keep = src != dst  # only paper 0 can cite itself
    assert len(set(src[~keep].tolist())) <= 1
    G = nx.DiGraph(list(zip(src[keep].tolist(), dst[keep].tolist())))
    assert nx.is_directed_acyclic_graph(G)
    assert nx.dag_longest_path_length(G) > 30  # deep: citation chains back in time
    indeg = np.bincount(dst, minlength=n)
    assert indeg.max() > 20 * degree  # old papers cited most


def test_back_citations_close_a_giant_component_that_grows_with_their_share():
    shares = []
    for back in (0.0, 0.001, 0.05):
        src, dst = citation(2 ** 13, degree=12, back=back, seed=0)
        g = digraph.Graph.from_arrays(src, dst, num_vertices=2 ** 13)
        cond, _ = condensation_for(g, "vertex")
        shares.append(float(cond.comp_arcs.max()) / g.num_arcs)
    assert shares[0] < 0.01 < 0.3 < shares[1] < shares[2]
    assert shares[2] > 0.8


def test_the_same_seed_gives_the_same_graph():
    a = citation(500, degree=4, back=0.01, seed=9)
    b = citation(500, degree=4, back=0.01, seed=9)
    c = citation(500, degree=4, back=0.01, seed=10)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not np.array_equal(a[1], c[1])


@pytest.mark.parametrize("kw, word", [(dict(n=1), "n"), (dict(n=10, degree=-1), "degree"),
                                      (dict(n=10, back=1.5), "back"), (dict(n=10, back="x"), "back"),
                                      (dict(n=10, skew=0), "skew"), (dict(n=2.5), "n")])
def test_bad_parameters_are_named(kw, word):
    with pytest.raises(InvalidParameterError, match=word):
        citation(**kw)
