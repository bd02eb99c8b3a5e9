"""Weights whose per-vertex sums overflow float64 are refused by name (issue 19, item 2): summed
to inf, a vertex's arcs would count as weight 0 and its mass would vanish without a word."""

import numpy as np
import pytest

import digraph
from digraph.errors import InvalidWeightError


def test_pagerank_refuses_out_weights_that_overflow():
    g = digraph.load(([0, 0, 1], [1, 2, 2], [1e308, 1e308, 1.0]))
    with pytest.raises(InvalidWeightError, match=r"out-arc weights of vertex 0 sum to more than float64"):
        digraph.run(g, "pagerank")
    # unweighted, the same graph runs; and weights that fit run too
    assert digraph.run(g, "pagerank", weights=False).stats["converged"]
    h = digraph.load(([0, 0, 1], [1, 2, 2], [1e307, 1e307, 1.0]))
    r = digraph.run(h, "pagerank", tol=1e-10)
    exact = digraph.algorithms.PageRank().reference(h)
    assert np.abs(r.values - exact).sum() <= 1e-10


def test_adsorption_refuses_in_weights_that_overflow():
    g = digraph.load(([0, 1, 2], [2, 2, 0], [1e308, 1e308, 1.0]))
    with pytest.raises(InvalidWeightError, match=r"in-arc weights of vertex 2"):
        digraph.run(g, "adsorption", seeds=[0])


def test_cli_says_it_in_one_line(tmp_path, capsys):
    from digraph.cli import main
    f = tmp_path / "w.txt"
    f.write_text("0 1 1e308\n0 2 1e308\n1 2 1\n")
    assert main(["run", "pagerank", str(f)]) == 2
    err = capsys.readouterr().err
    assert "sum to more than float64" in err and "Traceback" not in err
