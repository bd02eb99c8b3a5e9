"""The DAG dispatcher's deal (:mod:`digraph.paths.scc_deal`): components of each unit dealt to
GPUs, the schedules restricted to each GPU, and what crosses between GPUs.  Pure numpy on the
host: no GPU or simulator."""

import numpy as np
import networkx as nx
import pytest

import digraph
from digraph.paths.condensation import condensation_for
from digraph.paths.scc_deal import crossings, deal, restricted
from digraph.paths.scc_schedule import scc_schedule

from references import cycles_dag as _cycles_dag


def _graphs():
    yield "cycles", _cycles_dag(40, 9, seed=3, big=30, extra=3)
    yield "cycles-wide", _cycles_dag(60, 5, seed=11, big=0, extra=1)
    rng = np.random.default_rng(5)
    n = 400
    src = rng.integers(0, n, 1200)
    dst = np.minimum(src + rng.integers(-3, 40, 1200), n - 1)  # mostly forward: many SCCs
    yield "forward", digraph.load((src, np.maximum(dst, 0)))


GRAPHS = list(_graphs())


def _setup(g, heavy_arcs=6, light_size=12):
    cond, _ = condensation_for(g, "vertex")
    return cond, scc_schedule(cond, heavy_arcs, light_size)


@pytest.mark.parametrize("k", [1, 2, 3, 4])
@pytest.mark.parametrize("name,g", GRAPHS, ids=[n for n, _ in GRAPHS])
def test_restricted_schedules_partition_the_whole(name, g, k):
    cond, sch = _setup(g)
    owner, giant = deal(cond, sch, k)
    assert not giant.any()  # none without giant_arcs
    assert owner.shape == (cond.num_components,) and owner.min() >= 0 and owner.max() < k
    parts = [restricted(cond, sch, owner, h) for h in range(k)]
    assert (sum(p.light_count for p in parts) == sch.light_count).all()
    assert (sum(p.first_count for p in parts) == sch.first_count).all()
    assert (sum(p.heavy_arcs for p in parts) == sch.heavy_arcs).all()
    assert sum(p.heavy_in_arcs for p in parts) == sch.heavy_in_arcs
    assert np.array_equal(np.sort(np.concatenate([p.heavy_positions for p in parts])),
                          np.sort(sch.heavy_positions))
    for h, p in enumerate(parts):
        for kk in range(sch.num_phases):  # each phase's queue: its light components there
            q = p.queue0[p.queue_offsets[kk]:p.queue_offsets[kk + 1]]
            ready = q[:p.first_count[kk]]
            assert (q[p.first_count[kk]:] == -1).all()
            assert (owner[ready] == h).all() and not sch.heavy[ready].any()
            assert (sch.phase[ready] == kk).all() and (sch.pending[ready] == 0).all()
            hp = p.heavy_positions[p.heavy_offsets[kk]:p.heavy_offsets[kk + 1]]
            comp = np.searchsorted(cond.comp_offsets, hp, side="right") - 1
            assert (owner[comp] == h).all() and (sch.phase[comp] == kk).all()


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("name,g", GRAPHS, ids=[n for n, _ in GRAPHS])
def test_light_pieces_stay_whole_and_units_balance(name, g, k):
    """Every same-phase arc between light components stays on one GPU (a queue never waits for
    another GPU); each unit's cost is dealt longest first, so no GPU holds more than the mean
    plus its largest item."""
    cond, sch = _setup(g)
    owner, _ = deal(cond, sch, k)
    for c in range(cond.num_components):
        succ = sch.eout_comp[sch.eout_offsets[c]:sch.eout_offsets[c + 1]]
        assert (owner[succ] == owner[c]).all()
    sizes = np.diff(cond.comp_offsets)
    cost = cond.comp_arcs + np.diff(cond.ein_offsets[cond.comp_offsets]) + sizes
    unit = 2 * sch.phase + sch.heavy
    pieces = nx.Graph()  # the light pieces, found independently of scc_deal's union-find
    pieces.add_nodes_from(range(cond.num_components))
    for c in range(cond.num_components):
        pieces.add_edges_from((c, int(t)) for t in
                              sch.eout_comp[sch.eout_offsets[c]:sch.eout_offsets[c + 1]])
    item_cost = np.zeros(cond.num_components)
    for comp in nx.connected_components(pieces):
        comp = list(comp)
        item_cost[comp] = cost[comp].sum()
    for u in np.unique(unit):
        sel = unit == u
        load = np.bincount(owner[sel], weights=cost[sel], minlength=k)
        assert load.max() <= cost[sel].sum() / k + item_cost[sel].max() + 1e-9  # LPT's bound
    if name == "cycles":  # forty small pieces and twenty heavy components: every GPU gets work
        assert (np.bincount(owner, minlength=k) >= 5).all()


@pytest.mark.parametrize("name,g", GRAPHS, ids=[n for n, _ in GRAPHS])
def test_giants_are_heavy_components_above_their_units_share(name, g):
    cond, sch = _setup(g, heavy_arcs=40, light_size=60)
    owner, giant = deal(cond, sch, 3, giant_arcs=1)
    sizes = np.diff(cond.comp_offsets)
    cost = cond.comp_arcs + np.diff(cond.ein_offsets[cond.comp_offsets]) + sizes
    unit = 2 * sch.phase + sch.heavy
    ucost = np.bincount(unit, weights=cost)
    assert np.array_equal(giant, sch.heavy & (cost * 3 > ucost[unit]))
    assert (owner[giant] == 0).all()
    parts = [restricted(cond, sch, owner, h, giant) for h in range(3)]
    assert sum(p.heavy_arcs.sum() for p in parts) == cond.comp_arcs[sch.heavy & ~giant].sum()
    if name == "cycles":
        assert giant.sum() == 1 and cond.comp_arcs[giant][0] > 30  # the block of 30 in front
    _, none = deal(cond, sch, 3, giant_arcs=10 ** 9)
    assert not none.any()


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("name,g", GRAPHS, ids=[n for n, _ in GRAPHS])
def test_crossings_are_exactly_the_arcs_between_gpus(name, g, k):
    """A position is sent from ``g`` to ``h`` after its unit iff it has an arc into a component
    dealt to ``h``; the unit is always earlier than the reader's."""
    cond, sch = _setup(g)
    owner, _ = deal(cond, sch, k)
    cross = crossings(cond, sch, owner)
    n = int(cond.comp_offsets[-1])
    comp = np.repeat(np.arange(cond.num_components), np.diff(cond.comp_offsets))
    unit = (2 * sch.phase + sch.heavy)[comp]
    want = set()
    for t in range(n):
        for s in cond.ein_sources[cond.ein_offsets[t]:cond.ein_offsets[t + 1]]:
            gs, gt = owner[comp[s]], owner[comp[t]]
            if gs != gt:
                assert unit[s] < unit[t]
                want.add((int(unit[s]), int(gs), int(gt), int(s)))
    got = {(u, a, b, int(p)) for (u, a, b), pos in cross.items() for p in pos}
    assert got == want
    for pos in cross.values():
        assert (np.diff(pos) > 0).all()
    assert crossings(cond, sch, np.zeros_like(owner)) == {}
