"""The vertex condensation's build (``digraph.paths.condensation``): its counting sort and its
split of the arcs into inside / between components, against direct numpy and networkx answers."""

import networkx as nx
import numpy as np
import pytest

from digraph.graph import Graph
from digraph.paths.condensation import Condensation, stable_argsort


@pytest.mark.parametrize("n, nkeys", [(0, 0), (1, 1), (1000, 7), (5000, 5000)])
def test_the_counting_sort_is_numpys_stable_argsort(n, nkeys):
    keys = np.random.default_rng(n).integers(0, max(nkeys, 1), n).astype(np.int64)
    assert np.array_equal(stable_argsort(keys, np.int64(nkeys)), np.argsort(keys, kind="stable"))


@pytest.mark.parametrize("seed", [0, 1])
def test_arcs_split_inside_and_between_components(seed):
    rng = np.random.default_rng(seed)
    n = 300
    src = rng.integers(0, n, 700)
    dst = np.where(rng.random(700) < 0.8, (src + rng.integers(1, 4, 700)) % n,
                   rng.integers(0, n, 700))  # local arcs make many small cycles
    g = Graph.from_arrays(src, dst, num_vertices=n)
    c = Condensation(g)
    comp_of_vertex = np.empty(n, np.int64)
    comp_of_vertex[c.order] = np.repeat(np.arange(c.num_components), np.diff(c.comp_offsets))
    G = nx.DiGraph()
    G.add_nodes_from(range(n))
    G.add_edges_from(zip(src.tolist(), dst.tolist()))
    sccs = {frozenset(s) for s in nx.strongly_connected_components(G)}
    assert sccs == {frozenset(c.order[c.comp_offsets[k]:c.comp_offsets[k + 1]].tolist())
                    for k in range(c.num_components)}
    pos = np.empty(n, np.int64)
    pos[c.order] = np.arange(n)
    s, d = np.repeat(np.arange(n), np.diff(g.out_offsets)), g.out_targets
    inside = comp_of_vertex[s] == comp_of_vertex[d]
    got_in = sorted(zip(np.repeat(np.arange(n), np.diff(c.iout_offsets)).tolist(),
                        c.iout_targets.tolist()))
    assert got_in == sorted(zip(pos[s[inside]].tolist(), pos[d[inside]].tolist()))
    got_between = sorted(zip(c.ein_sources.tolist(),
                             np.repeat(np.arange(n), np.diff(c.ein_offsets)).tolist()))
    assert got_between == sorted(zip(pos[s[~inside]].tolist(), pos[d[~inside]].tolist()))
    assert np.array_equal(c.comp_arcs, np.bincount(comp_of_vertex[s[inside]],
                                                   minlength=c.num_components))
    # every arc between components climbs levels
    level_of = np.repeat(np.arange(c.num_levels), np.diff(c.level_offsets))
    assert np.all(level_of[comp_of_vertex[s[~inside]]] < level_of[comp_of_vertex[d[~inside]]])
