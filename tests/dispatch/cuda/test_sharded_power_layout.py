"""Which vertices each GPU holds in the sharded power iteration
(:mod:`digraph.dispatch.engines.power.gpus_layout`), as pure numpy: every vertex held once, the
engine's numbering a bijection that keeps each GPU's vertices consecutive, the arcs gathered in
the engine's order, the dealt blocks balanced in vertices and arcs, and the choice between ranges
and dealt blocks on graphs with and without locality."""
import dataclasses

import numpy as np
import pytest

from digraph.dispatch.engines.power import gpus_layout as L
from digraph.dispatch.engines.power.gpu_settings import POWER_DEFAULT as DEFAULT
from digraph.errors import InvalidParameterError


def _csr(n, src, dst):
    """In-arcs' CSR (offsets, sources) of arcs ``src → dst`` on ``n`` vertices."""
    order = np.lexsort((src, dst))
    deg = np.bincount(dst, minlength=n)
    off = np.concatenate([[0], np.cumsum(deg)]).astype(np.int64)
    return off, np.asarray(src)[order].astype(np.int32)


def _skewed(scale=14, ef=8, seed=3):
    """An R-MAT graph without its ids scrambled: the hubs hold the low numbers."""
    rng = np.random.default_rng(seed)
    m = ef << scale
    src = np.zeros(m, np.int64)
    dst = np.zeros(m, np.int64)
    for _ in range(scale):
        r = rng.random(m)
        src = (src << 1) | (r >= 0.76)
        dst = (dst << 1) | (((r >= 0.57) & (r < 0.76)) | (r >= 0.95))
    return _csr(1 << scale, src, dst)


def _local(n=1 << 14, seed=4):
    """Arcs between near numbers (a crawl's locality), degrees uneven along the numbers."""
    rng = np.random.default_rng(seed)
    deg = rng.integers(0, 4, n) + (np.arange(n) < n // 8) * 20
    src = np.repeat(np.arange(n), deg)
    dst = np.clip(src + rng.integers(-30, 31, src.size), 0, n - 1)
    return _csr(n, src, dst)


@pytest.mark.parametrize("k, block", [(2, 64), (3, 100), (4, 37)])
def test_dealt_layout_numbers_every_vertex_once(k, block):
    off, src = _skewed(scale=12)
    n = off.size - 1
    lay = L.dealt_layout(off, k, block, 6)
    assert lay.bounds[0] == 0 and lay.bounds[-1] == n
    held = np.concatenate([lay.vertices(g) for g in range(k)])
    assert np.array_equal(np.sort(held), np.arange(n))  # each vertex on one GPU
    new = lay.renumber(np, held)
    assert np.array_equal(new, np.arange(n))  # the engine numbers them GPU by GPU, in order
    for g in range(k):  # each GPU's blocks increasing, its vertices consecutive there
        v = lay.vertices(g)
        assert np.all(np.diff(v) > 0)
        assert v.size == lay.bounds[g + 1] - lay.bounds[g]
    counts = [b.size for b in lay.owned]
    assert max(counts) - min(counts) <= 1  # the same number of blocks


@pytest.mark.parametrize("kind", ["ranges", "dealt"])
def test_arcs_gathered_in_the_engines_order(kind):
    off, src = _skewed(scale=11)
    n = off.size - 1
    k = 3
    lay = L.dealt_layout(off, k, 50, 6) if kind == "dealt" else L.ranges_layout(off, k, 6)
    arcs = lay.arcs(off)
    assert sum(arcs) == off[-1]
    for g in range(k):
        rows, spans = lay.arc_spans(off, g)
        v = np.arange(n)[lay.vertices(g)]
        assert np.array_equal(np.diff(rows), np.diff(off)[v])
        got = lay.gather_arcs(src, spans)
        want = np.concatenate([src[off[u]:off[u + 1]] for u in v]) if v.size else src[:0]
        assert np.array_equal(got, want) and rows[-1] == got.size == arcs[g]
        # the sources renumbered: the engine's vertex of each graph vertex
        new = lay.renumber(np, got.astype(np.int64))
        inv = np.empty(n, np.int64)
        inv[np.concatenate([np.arange(n)[lay.vertices(h)] for h in range(k)])] = np.arange(n)
        assert np.array_equal(new, inv[got])


def test_dealt_blocks_balance_vertices_and_arcs_where_ranges_cannot():
    off, src = _skewed(scale=16)
    k = 4
    ranges = L.ranges_layout(off, k, 6)
    dealt = L.dealt_layout(off, k, 256, 6)
    m = off[-1]
    vr, vd = np.diff(ranges.bounds), np.diff(dealt.bounds)
    assert vr.max() > 2 * vr.min()  # consecutive ranges: the hubs' range has few vertices
    assert vd.max() - vd.min() <= 256
    assert max(dealt.arcs(off)) <= 1.1 * m / k
    assert L.model(dealt, off, 6) < 0.85 * L.model(ranges, off, 6)


def test_choose_deals_blocks_only_where_ranges_have_no_locality():
    settings = dataclasses.replace(DEFAULT, shard_block=256)
    off, src = _skewed(scale=16)
    lay = L.choose(off, src, 4, settings)
    assert lay.kind == "dealt" and "dealt" in lay.why and "crossing" in lay.why
    off, src = _local()
    lay = L.choose(off, src, 4, settings)
    assert lay.kind == "ranges" and "consecutive ranges" in lay.why
    x_r = L.crossing(L.ranges_layout(off, 4, 6), off, src)
    x_d = L.crossing(L.dealt_layout(off, 4, 256, 6), off, src)
    assert x_d > x_r + settings.shard_deal_locality  # dealing would have sent more across
    # named layouts are taken as named; one GPU holds everything in its own numbering
    assert L.choose(off, src, 4, dataclasses.replace(settings, shard_layout="dealt")).kind == \
        "dealt"
    off, src = _skewed(scale=12)
    assert L.choose(off, src, 4, dataclasses.replace(settings, shard_layout="ranges")).kind == \
        "ranges"
    one = L.choose(off, src, 1, settings)
    assert one.kind == "ranges" and list(one.bounds) == [0, off.size - 1]
    with pytest.raises(InvalidParameterError, match="shard_layout"):
        L.choose(off, src, 2, dataclasses.replace(settings, shard_layout="cyclic"))


def test_work_arrays_follow_the_works_entries():
    """The device arrays of a sharded run's kept work, listed once and listed again when an
    entry is replaced or added (:func:`power_work.work_arrays`)."""
    from digraph.dispatch.engines.power.gpus_work import work_arrays
    from digraph.dispatch.engines.power.gpu_work import Work

    class Dev:  # anything with a CUDA array interface counts as a device array
        __cuda_array_interface__ = {}

    a, b, c = Dev(), Dev(), Dev()
    w = Work(x=a, acc=[b], tele_sum=1.0)
    assert work_arrays(w) == [a, b]
    assert work_arrays(w) is work_arrays(w)  # kept while the entries are the same objects
    w["acc"] = [c]
    assert work_arrays(w) == [a, c]
    w["queued"] = {"tables": [[a, b]]}
    assert work_arrays(w) == [a, c, a, b]
