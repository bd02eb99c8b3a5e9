"""The SCC engine on one GPU (``mode="scc"`` with ``device="cuda"``) and its schedule: answers
within the certified bound of an exact solve, light and heavy components both reached, the
schedule's phases and queue counts, the refusals.

Under Numba's CUDA simulator a light component holds at most 16 vertices
(:data:`digraph.smx.cuda.scc_blocks.SH`), so small graphs of short cycles reach the queue kernel and a
component of more vertices the heavy rounds; ``pytest -m gpu`` on a GPU runs the same tests.
"""

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spl

import digraph
from references import cycles_dag as _cycles_dag
from digraph.errors import InvalidParameterError
from digraph.paths.condensation import Condensation
from digraph.paths.scc_schedule import SccSchedule


def _pagerank_exact(g, alpha=0.85):
    n = g.num_vertices
    src, dst = g.arc_sources, g.out_targets
    deg = np.bincount(src, minlength=n).astype(float)
    A = sp.csr_matrix((alpha / deg[src], (dst, src)), shape=(n, n))
    x = spl.spsolve(sp.identity(n, format="csc") - A.tocsc(), np.full(n, (1 - alpha) / n))
    return x / x.sum()


# ---------------------------------------------------------------------------- schedule (CPU)


@pytest.mark.parametrize("heavy_arcs,light_size", [(1, 16), (6, 16), (10**9, 4), (10**9, 10**9)])
def test_schedule_orders_every_arc_and_queues_each_light_component_once(heavy_arcs, light_size):
    g = _cycles_dag(60, 7, seed=1, big=30)
    cond = Condensation(g)
    s = SccSchedule(cond, heavy_arcs, light_size)
    C = cond.num_components
    sizes = np.diff(cond.comp_offsets)
    assert np.array_equal(s.heavy, (cond.comp_arcs >= heavy_arcs) | (sizes > light_size))
    comp = np.repeat(np.arange(C), sizes)
    tgt = np.repeat(comp, np.diff(cond.ein_offsets))
    srcc = comp[cond.ein_sources]
    # a component runs after what it depends on: a heavy source in an earlier phase, a light
    # source in an earlier phase or (for a light target) in the same phase, counted as pending
    assert (s.phase[tgt] >= s.phase[srcc] + s.heavy[srcc]).all()
    same = ~s.heavy[tgt] & ~s.heavy[srcc] & (s.phase[tgt] == s.phase[srcc])
    assert np.array_equal(s.pending, np.bincount(tgt[same], minlength=C).astype(np.int32))
    assert sorted(s.eout_comp.tolist()) == sorted(tgt[same].tolist())
    assert np.array_equal(np.diff(s.eout_offsets), np.bincount(srcc[same], minlength=C))
    light = ~s.heavy
    assert s.light_count.sum() == light.sum()
    for k in range(s.num_phases):
        q = s.queue0[s.queue_offsets[k]:s.queue_offsets[k + 1]]
        first = q[:s.first_count[k]]
        assert (q[s.first_count[k]:] == -1).all()
        assert sorted(first.tolist()) == np.flatnonzero(light & (s.pending == 0)
                                                        & (s.phase == k)).tolist()
        hp = s.heavy_positions[s.heavy_offsets[k]:s.heavy_offsets[k + 1]]
        assert sorted(hp.tolist()) == np.flatnonzero(s.heavy[comp] & (s.phase[comp] == k)).tolist()
        assert s.heavy_arcs[k] == cond.comp_arcs[s.heavy & (s.phase == k)].sum()
    # arcs into heavy components from other components: the heavy targets' share of ein
    assert s.heavy_in_arcs == int(s.heavy[tgt].sum())


@pytest.mark.parametrize("seed,direct_size,hub", [(0, 2, 1), (3, 4, 3), (5, 1, 0)])
def test_swept_in_arcs_list_each_arc_into_a_swept_component_once_by_target(seed, direct_size, hub):
    from digraph.paths.scc_schedule import swept_in_arcs
    g = _cycles_dag(20, 9, seed=seed, big=12, extra=3)
    cond = Condensation(g)
    s = SccSchedule(cond, 10**9, 16)
    off, src, arc, hub_off, hubs = swept_in_arcs(cond, s, direct_size, hub)
    sizes = np.diff(cond.comp_offsets)
    comp = np.repeat(np.arange(cond.num_components), sizes)
    swept = ~s.heavy & (sizes > direct_size) & (cond.comp_arcs > 0)
    assert swept.any()
    # the expected list: every arc inside whose target lies in a swept component
    srcs = np.repeat(np.arange(g.num_vertices), np.diff(cond.iout_offsets))
    want = sorted((int(t), int(u), int(e)) for e, (u, t) in enumerate(zip(srcs, cond.iout_targets))
                  if swept[comp[t]])
    tgt = np.repeat(np.arange(g.num_vertices), np.diff(off))
    assert sorted(zip(tgt.tolist(), src.tolist(), arc.tolist())) == want
    assert (cond.iout_targets[arc] == tgt).all() and (srcs[arc] == src).all()
    assert (comp[src] == comp[tgt]).all()  # inside a component
    deg = np.diff(off)
    assert hubs.tolist() == np.flatnonzero(deg > hub).tolist()
    for c in range(cond.num_components):
        mine = hubs[hub_off[c]:hub_off[c + 1]]
        assert ((mine >= cond.comp_offsets[c]) & (mine < cond.comp_offsets[c + 1])).all()
    assert hub_off[-1] == hubs.size


# ---------------------------------------------------------------------------- the engine


def _solve(g, tol, **settings):
    from digraph.algorithms import get
    from digraph.dispatch.engines import one_gpu as gpu
    from digraph.dispatch.engines.scc.gpu import GpuSccSettings
    from digraph.result import RunStats
    algo = get("pagerank")
    system = algo.prepare(g, **algo.bind(g, {}))
    stats = RunStats.new()
    x, ok = gpu.solve(g, system, mode="scc", tol=tol, max_iter=10_000, stats=stats,
                      scc_settings=GpuSccSettings(**settings))
    return x / x.sum(), ok, stats


@pytest.mark.gpu
@pytest.mark.usefixtures("one_gpu")
@pytest.mark.parametrize("heavy_arcs,tol,one_launch", [(1, 1e-6, True), (1, 1e-6, False),
                                                      (10**9, 1e-10, True)])
def test_pagerank_within_its_bound_light_and_heavy(heavy_arcs, tol, one_launch):
    g = _cycles_dag(24, 14, seed=2, big=18)
    exact = _pagerank_exact(g)
    x, ok, s = _solve(g, tol, heavy_arcs=heavy_arcs, heavy_one_launch=one_launch,
                      trace_heavy=one_launch)
    assert not s.get("handed_over")  # the components' own answer, not a fix-up's
    if one_launch and heavy_arcs == 1:  # a row at the start and after each round
        tr = s["scc_heavy_trace"]
        assert [len(t) for t in tr] == [r + 1 for r in s["heavy_rounds"]]
        assert all((np.diff(t[:, 1]) >= 0).all() and (t[:, 0] <= t[:, 1]).all()
                   and (t[1:, 0] >= t[:-1, 1]).all() and (np.diff(t[:, 2]) >= 0).all() for t in tr)
        assert tr[-1][-1, 2] <= s["arc_updates"] and tr[0][1, 2] > tr[0][0, 2]
    assert ok and (s["error_bound"] <= tol or s.get("floor_limited"))
    assert np.abs(x - exact).sum() <= max(s["error_bound"], 1e-14)
    cond = Condensation(g)
    assert s["scc_vertices"] == cond.num_components and s["layers"] == cond.num_levels
    assert s["scc_ran"] == cond.num_components
    if heavy_arcs == 1:  # every cyclic component in rounds over the GPU, in several groups
        # (each group's control words, barrier counter and rounds are its own: read at the end)
        assert s["scc_heavy"] == int((cond.comp_arcs >= 1).sum())
        assert len(s["heavy_rounds"]) == s["scc_phases"] >= 2 and min(s["heavy_rounds"]) >= 1
        assert s["sweeps"] >= sum(s["heavy_rounds"])  # the heavy components' sweeps: their rounds
    else:  # only components of more vertices than a block holds
        from digraph.smx.cuda.scc_blocks import DK, SH
        sizes = np.diff(cond.comp_offsets)
        assert s["scc_heavy"] == int((sizes > SH).sum())
        # the small cycles solved directly, the larger light ones swept
        assert s["scc_direct"] == int(((sizes <= DK) & (cond.comp_arcs > 0)).sum()) > 0
        if ((sizes > DK) & (sizes <= SH)).any():
            assert s["sweeps"] > 0
    assert s["scc_phases"] >= 1
    # every arc between components pulled once, every arc inside pushed at least once
    assert s["arc_updates"] >= g.num_arcs


def _hubs_graph():
    """Sized by the kernel's constants (the simulator's or a GPU's): a swept component of
    ``DK + 4`` vertices (a ring; vertex 0 linking to all and all to it, vertex 6 linked from
    ``HUB_PUSH + 1`` others: both have more in-arcs inside than HUB_PUSH), ``HUB_PULL + 6``
    sources pointing into it and into a 2-cycle (more in-arcs from other components than
    HUB_PULL), and a tail."""
    from digraph.smx.cuda.scc_blocks import DK, HUB_PULL, HUB_PUSH
    k = DK + 4
    src, dst = list(range(k)), [(i + 1) % k for i in range(k)]
    src += [0] * (k - 2) + list(range(2, k))
    dst += list(range(2, k)) + [0] * (k - 2)
    others = [v for v in range(k) if v not in (5, 6)][:HUB_PUSH + 1]
    src += others
    dst += [6] * len(others)
    srcs = range(k, k + HUB_PULL + 6)
    for v in srcs:
        src += [v, v, v]
        dst += [3, 5, k + HUB_PULL + 6]
    c = k + HUB_PULL + 6  # the 2-cycle c <-> c + 1, then a tail c + 2
    src += [c, c + 1, c + 1, 7]
    dst += [c + 1, c, c + 2, c + 2]
    return digraph.Graph.from_arrays(np.array(src), np.array(dst), num_vertices=c + 3)


@pytest.mark.gpu
@pytest.mark.usefixtures("one_gpu")
@pytest.mark.parametrize("one_launch", [True, False])
def test_heavy_vertices_of_many_out_arcs_pushed_by_a_block_give_the_exact_answer(one_launch):
    from digraph.smx.cuda.scc_heavy import BIG_OUT
    from digraph.smx.cuda.scc_blocks import SH
    # one strongly connected block of 3 SH vertices (heavy: more than a block holds) where
    # vertices 0..2 link to BIG_OUT + 1 others or more (pushed by a whole block each), the rest
    # to a few (pushed by a few threads each), then a tail of small cycles
    rng = np.random.default_rng(11)
    big = 3 * SH
    g0 = _cycles_dag(6, 5, seed=11, big=big)
    src, dst = g0.arc_sources.tolist(), g0.out_targets.tolist()
    for h in range(3):
        for t in rng.choice(np.setdiff1d(np.arange(big), [h]), BIG_OUT + 1 + 5 * h, replace=False):
            src.append(h)
            dst.append(int(t))
    g = digraph.Graph.from_arrays(np.array(src), np.array(dst), num_vertices=g0.num_vertices)
    cond = Condensation(g)
    out = np.diff(cond.iout_offsets)
    assert (out > BIG_OUT).sum() >= 3 and ((out > 0) & (out <= BIG_OUT)).sum() > big // 2
    exact = _pagerank_exact(g)
    x, ok, s = _solve(g, 1e-11, heavy_one_launch=one_launch)
    assert ok and s["error_bound"] <= 1e-11
    assert np.abs(x - exact).sum() <= max(s["error_bound"], 1e-14)
    assert not s.get("handed_over")  # the rounds' own answer, not a fix-up's
    assert s["scc_heavy"] == 1 and len(s["heavy_rounds"]) == 1 and s["heavy_rounds"][0] > 1


@pytest.mark.gpu
@pytest.mark.usefixtures("one_gpu")
def test_hubs_pulled_and_gathered_by_warps_give_the_exact_answer_and_a_trace():
    from digraph.smx.cuda.scc_blocks import DK, HUB_PULL, HUB_PUSH, SH
    from digraph.smx.cuda.scc import TRACE
    g = _hubs_graph()
    cond = Condensation(g)
    sizes = np.diff(cond.comp_offsets)
    multi = np.repeat(sizes > 1, sizes)
    swept = np.repeat((sizes > DK) & (sizes <= SH), sizes)
    # the graph reaches both warp paths: pulled hubs in components of several vertices (the
    # swept one and the 2-cycle solved directly), gathering hubs in the swept one
    assert (multi & (np.diff(cond.ein_offsets) > HUB_PULL)).sum() >= 3
    inside_in = np.bincount(cond.iout_targets, minlength=g.num_vertices)
    assert (swept & (inside_in > HUB_PUSH)).sum() >= 2
    exact = _pagerank_exact(g)
    x, ok, s = _solve(g, 1e-11, trace_light=True)
    assert ok and np.abs(x - exact).sum() <= max(s["error_bound"], 1e-14) and s["error_bound"] <= 1e-11
    assert not s.get("handed_over")  # the components' own answer, not a fix-up's
    assert s["sweeps"] > 0 and s["scc_direct"] >= 1
    # each sweep gathers every arc inside the swept component
    assert s["scc_sweep_reads"] == s["sweeps"] * int(inside_in[swept].sum())
    tr = s["scc_light_trace"]
    assert tr.shape == (cond.num_components, TRACE)
    claim, got, done, pub = tr[:, 0], tr[:, 1], tr[:, 2], tr[:, 3]
    assert ((claim <= got) & (got <= done) & (done <= pub) & (claim > 0)).all()
    assert tr[:, 7].sum() == s["sweeps"]  # each component's sweeps
    assert sorted(tr[:, 4].tolist()) == list(range(cond.num_components))  # one slot each


@pytest.mark.gpu
@pytest.mark.usefixtures("one_gpu")
def test_light_anderson_sweeps_give_the_exact_answer_in_fewer_sweeps():
    """Every memory of the swept components' Anderson acceleration (0: the soft priority's
    sweeps) gives the exact answer within its bound, each sweep gathering every arc inside; the
    accelerated sweeps need fewer of them on this nearly closed component."""
    from digraph.smx.cuda.scc_blocks import DK, SH
    g = _hubs_graph()
    cond = Condensation(g)
    sizes = np.diff(cond.comp_offsets)
    swept = np.repeat((sizes > DK) & (sizes <= SH), sizes)
    inside_in = np.bincount(cond.iout_targets, minlength=g.num_vertices)
    exact = _pagerank_exact(g)
    sweeps = {}
    for mem in (0, 1, 2):
        x, ok, s = _solve(g, 1e-12, light_anderson=mem)
        assert ok and s["error_bound"] <= 1e-12 and not s.get("handed_over")
        assert np.abs(x - exact).sum() <= max(s["error_bound"], 1e-14)
        assert s["scc_sweep_reads"] == s["sweeps"] * int(inside_in[swept].sum()) > 0
        sweeps[mem] = s["sweeps"]
    assert sweeps[2] < sweeps[0] and sweeps[1] < sweeps[0]
    with pytest.raises(InvalidParameterError, match="light_anderson"):
        _solve(g, 1e-8, light_anderson=3)


@pytest.mark.gpu
@pytest.mark.usefixtures("one_gpu")
@pytest.mark.parametrize("mem", [1, 2])
def test_heavy_anderson_rounds_give_the_exact_answer(mem):
    """The Anderson-accelerated heavy rounds: every cyclic component heavy (several groups), and
    a heavy component with a vertex whose in-arcs a whole block gathers; each group's rounds
    reported, and every arc inside gathered once a round."""
    from digraph.smx.cuda.scc_heavy import BIG_OUT
    from digraph.smx.cuda.scc_blocks import SH
    from digraph.smx.cuda.scc_heavy_anderson import BIG_IN
    g = _cycles_dag(24, 14, seed=2, big=18)
    exact = _pagerank_exact(g)
    cond = Condensation(g)
    x, ok, s = _solve(g, 1e-10, heavy_arcs=1, heavy_anderson=mem)
    assert ok and s["error_bound"] <= 1e-10 and not s.get("handed_over")
    assert np.abs(x - exact).sum() <= max(s["error_bound"], 1e-14)
    assert len(s["heavy_rounds"]) == s["scc_phases"] >= 2 and min(s["heavy_rounds"]) >= 1
    assert s["scc_heavy_anderson"] == [mem] * len(s["heavy_rounds"])
    # a group above both limits (arcs, and the largest in-degree inside) runs the plain rounds
    _, ok0, s0 = _solve(g, 1e-10, heavy_arcs=1, heavy_anderson=mem, heavy_anderson_in=0,
                        heavy_anderson_arcs=0)
    assert ok0 and s0["scc_heavy_anderson"] == [0] * len(s0["heavy_rounds"])
    # the gathers are made for the groups that run Anderson rounds: some first, then all of them
    # (made again for the groups the first ones lack), the answer exact each time
    sch = SccSchedule(cond, 1, SH)
    group_arcs = [int(a) for a in sch.heavy_arcs]
    limit = sorted(group_arcs)[len(group_arcs) // 2]
    g2 = digraph.Graph.from_arrays(g.arc_sources, g.out_targets, num_vertices=g.num_vertices)
    for lim in (limit, 1 << 40):  # a graph of its own: no gathers made by the runs above
        x1, ok1, s1 = _solve(g2, 1e-10, heavy_arcs=1, heavy_anderson=mem, heavy_anderson_in=0,
                             heavy_anderson_arcs=lim)
        used = [m > 0 for m in s1["scc_heavy_anderson"]]
        assert used == [a <= lim for a in group_arcs] and any(used)
        assert ok1 and not s1.get("handed_over") and s1["error_bound"] <= 1e-10
        assert np.abs(x1 - exact).sum() <= max(s1["error_bound"], 1e-14)
    # pulls once (every arc between components) plus each heavy group's arcs once a round
    ein = int(cond.ein_offsets[-1])
    assert s["arc_updates"] >= ein + sum(s["heavy_rounds"])
    rng = np.random.default_rng(5)
    big = BIG_OUT + 20
    g0 = _cycles_dag(4, 5, seed=5, big=big)
    src, dst = g0.arc_sources.tolist(), g0.out_targets.tolist()
    for t in rng.choice(np.arange(1, big), BIG_OUT + 3, replace=False):
        src.append(0)  # pushed by a block in the plain rounds
        dst.append(int(t))
    for u in rng.choice(np.arange(2, big), BIG_IN + 3, replace=False):
        src.append(int(u))  # gathered by a block in the Anderson rounds
        dst.append(1)
    g = digraph.Graph.from_arrays(np.array(src), np.array(dst), num_vertices=g0.num_vertices)
    x, ok, s = _solve(g, 1e-11, heavy_arcs=1, heavy_anderson=mem)
    assert s["scc_heavy_anderson"] == [mem] * len(s["heavy_rounds"])
    assert ok and np.abs(x - _pagerank_exact(g)).sum() <= max(s["error_bound"], 1e-14)
    assert s["error_bound"] <= 1e-11 and not s.get("handed_over")


@pytest.mark.gpu
@pytest.mark.usefixtures("one_gpu")
def test_pagerank_through_run_names_the_engine():
    g = _cycles_dag(30, 5, seed=4)
    res = digraph.run(g, "pagerank", mode="scc", device="cuda", tol=1e-10)
    assert res.stats["engine"] == "gpu-scc" and res.stats["mode"] == "scc"
    assert np.abs(res.values - _pagerank_exact(g)).sum() <= res.stats["error_bound"]


@pytest.mark.gpu
@pytest.mark.usefixtures("one_gpu")
def test_weighted_personalised_pagerank_and_adsorption_equal_the_cpu():
    g0 = _cycles_dag(16, 5, seed=3, big=20)
    rng = np.random.default_rng(0)
    w = rng.uniform(0.5, 2.0, g0.num_arcs)
    g = digraph.Graph.from_arrays(g0.arc_sources, g0.out_targets, w, num_vertices=g0.num_vertices)
    pers = {0: 1.0, 25: 2.0, 40: 0.5}
    for algo, kw in (("pagerank", {"personalization": pers}),
                     ("adsorption", {"seeds": [0, 5, 30], "beta": 0.8})):
        cpu = digraph.run(g, algo, mode="bsp", tol=1e-12, **kw)
        gpu = digraph.run(g, algo, mode="scc", device="cuda", tol=1e-9, **kw)
        assert gpu.stats["engine"] == "gpu-scc" and gpu.stats["converged"]
        err = np.abs(gpu.values - cpu.values)
        assert (err.sum() if algo == "pagerank" else err.max()) <= gpu.stats["error_bound"] + 1e-11


@pytest.mark.gpu
@pytest.mark.usefixtures("one_gpu")
def test_scc_on_the_gpu_refuses_other_families():
    g = _cycles_dag(10, 4)
    with pytest.raises(InvalidParameterError, match="linear"):
        digraph.run(g, "sssp", source=0, mode="scc", device="cuda")


@pytest.mark.gpu
@pytest.mark.usefixtures("one_gpu", "ngpu")
def test_scc_with_several_gpus_named_runs_on_the_first_or_deals_components(engine_settings):
    """A graph the sharded engines would run on one GPU runs there, and says so; a larger one
    (here: a smaller share a GPU) runs the DAG dispatcher over the GPUs named
    (tests/dispatch/cuda/test_gpu_scc_multi.py tests it further)."""
    from digraph.dispatch.runtime.cuda import shard_settings
    g = _cycles_dag(12, 6, seed=6, big=10)
    res = digraph.run(g, "pagerank", mode="scc", device="cuda:0,1", tol=1e-10)
    assert res.stats["engine"] == "gpu-scc" and res.stats["mode"] == "scc"
    assert res.stats["gpus"] == 1 and res.stats["gpus_named"] == 2
    assert [p["code"] for p in res.stats["route"]["placed"]] == ["first-gpu"]
    assert np.abs(res.values - _pagerank_exact(g)).sum() <= res.stats["error_bound"]
    import dataclasses
    engine_settings(shard_settings.DEFAULT, min_arcs_per_gpu=4)
    res = digraph.run(g, "pagerank", mode="scc", device="cuda:0,1", tol=1e-10)
    assert res.stats["engine"] == "multi-gpu-scc" and res.stats["mode"] == "scc"
    assert res.stats["gpus_named"] == 2
    assert res.stats["gpus"] == 2 and "dealt over 2 GPUs" in res.stats["route"]["placed"][0]["why"]
    assert sum(res.stats["sharded"]["components"]) == res.stats["dag"]["scc_vertices"]
    assert np.abs(res.values - _pagerank_exact(g)).sum() <= res.stats["error_bound"] <= 1e-10


@pytest.mark.gpu
@pytest.mark.usefixtures("one_gpu")
def test_kept_work_gives_the_fresh_answers_and_follows_the_vectors():
    """A second run on the same graph reuses the first's device arrays (``gpu_work_kept``) and
    gives the same answer; a personalised run (another ``b``) makes its own and is right, and the
    plain run after it reuses nothing of it."""
    g = _cycles_dag(20, 9, seed=5, big=16)
    exact = _pagerank_exact(g)
    first = digraph.run(g, "pagerank", mode="scc", device="cuda", tol=1e-10)
    again = digraph.run(g, "pagerank", mode="scc", device="cuda", tol=1e-10)
    assert not first.stats["gpu_work_kept"] and again.stats["gpu_work_kept"]
    for r in (first, again):
        assert np.abs(r.values - exact).sum() <= r.stats["error_bound"]
    # the kept state was reset: the second run did the first's work again, not less
    assert again.stats["dag"]["scc_ran"] == first.stats["dag"]["scc_ran"] > 0
    assert again.stats["scc"]["direct"] == first.stats["scc"]["direct"] > 0
    pers = {0: 1.0, 7: 3.0}
    p = digraph.run(g, "pagerank", mode="scc", device="cuda", tol=1e-10, personalization=pers)
    cpu = digraph.run(g, "pagerank", mode="bsp", tol=1e-12, personalization=pers)
    assert not p.stats["gpu_work_kept"]
    assert np.abs(p.values - cpu.values).sum() <= p.stats["error_bound"] + 1e-11
    back = digraph.run(g, "pagerank", mode="scc", device="cuda", tol=1e-10)
    assert not back.stats["gpu_work_kept"]
    assert np.abs(back.values - exact).sum() <= back.stats["error_bound"]


@pytest.mark.parametrize("limit", [0, 2, 4, 10**9])
def test_split_by_degree_keeps_each_slice_and_its_order(limit):
    from digraph.paths.scc_schedule import split_by_degree
    rng = np.random.default_rng(3)
    degree = rng.integers(0, 9, 50)
    positions = rng.permutation(50)[:40]
    offsets = np.array([0, 7, 7, 25, 40])
    so, small, bo, big = split_by_degree(positions, offsets, degree, limit)
    for k in range(4):
        part = positions[offsets[k]:offsets[k + 1]]
        assert small[so[k]:so[k + 1]].tolist() == [p for p in part if degree[p] <= limit]
        assert big[bo[k]:bo[k + 1]].tolist() == [p for p in part if degree[p] > limit]
    assert so[-1] == small.size and bo[-1] == big.size


def test_persistent_kernels_launch_no_more_blocks_than_the_occupancy_calculator_allows():
    from types import SimpleNamespace
    from digraph.dispatch.engines.scc.gpu_grid import per_sm

    class Overload:
        def __init__(self, total):
            self.total = total

        def max_cooperative_grid_blocks(self, threads):
            return self.total

    be = SimpleNamespace(sms=132)
    uncompiled = SimpleNamespace(overloads={})
    assert per_sm(be, uncompiled, 128, 8, 3) == 3  # before it is compiled: the caller's guess
    two = SimpleNamespace(overloads={"a": Overload(132 * 6), "b": Overload(132 * 5)})
    assert per_sm(be, two, 128, 8, 1) == 5  # the tightest signature's room
    assert per_sm(be, two, 128, 4, 1) == 4  # no more than wanted
    assert per_sm(be, SimpleNamespace(overloads={"a": Overload(10)}), 128, 8, 1) == 1  # one at least

    class Old:
        overloads = {"a": object()}  # no occupancy query
    assert per_sm(be, Old(), 128, 8, 2) == 2
