"""The Google-matrix power iteration sharded over several GPUs (``mode="power"``,
``device="cuda:0,1,..."``, dispatch/engines/power/gpus.py): the answers and bounds of the one-GPU
engine.  Without GPUs the shards share Numba's simulated device and the copies of ``z`` are host
copies with the byte counts of the real ones."""

import dataclasses

import numpy as np
import pytest

import digraph
from digraph.dispatch.engines.power import gpu as gpu_power, gpus as multi_gpu_power
from digraph.dispatch.engines.power import gpu_settings as power_settings
from digraph.errors import InvalidParameterError
from digraph.result import RunStats

from test_gpu_power import _graph
from test_multi_gpu import _sim

pytestmark = pytest.mark.gpu

SIM_BINS = ((0, 2, 1), (2, 4, 2), (4, 8, 4))  # the simulator's blocks hold 8 threads


def _devices(k):
    return ["cuda:0"] * k if _sim() else [f"cuda:{i}" for i in range(k)]


@pytest.mark.parametrize("k, weighted, binned", [(2, False, False), (3, True, True)])
def test_sharded_power_matches_the_exact_answer_within_its_bound(ngpu, k, weighted, binned):
    k = min(k, ngpu)
    g = _graph(k, weighted=weighted)
    pers = {int(v): 1.0 + v % 3 for v in range(0, g.num_vertices, 4)}
    algo = digraph.algorithms.PageRank()
    kw = dict(personalization=pers, weights=weighted)
    system = algo.prepare(g, **algo.bind(g, kw))
    exact = algo.reference(g, **kw)
    settings = dataclasses.replace(power_settings.POWER_DEFAULT, bin_arcs=0, bins=SIM_BINS) if binned \
        else None
    st = RunStats.new()
    x, ok = multi_gpu_power.solve(g, system, devices=_devices(k), tol=1e-9, max_iter=500,
                                  stats=st, settings=settings)
    assert ok and st["gpus"] == k
    assert st["power_pull"] == ("binned" if binned else "grouped")
    assert sum(st["gpu_arcs"]) == g.num_arcs and sum(st["gpu_vertices"]) == g.num_vertices
    assert np.abs(x - exact).sum() <= st["error_bound"] <= 1e-9
    # z crosses at the start and once a round: each range to every other GPU, only the entries
    # that GPU's in-arcs read when they are at most 90% of the whole ranges (packed)
    bounds = np.cumsum([0] + st["gpu_vertices"])
    owner = np.searchsorted(bounds, np.arange(g.num_vertices), side="right") - 1
    heads = np.repeat(np.arange(g.num_vertices), np.diff(g.in_offsets))
    src, dst = owner[g.in_sources], owner[heads]
    read = np.unique(g.in_sources[src != dst].astype(np.int64) * k + dst[src != dst]).size
    assert st["power_packed"] == (read <= 0.9 * (k - 1) * g.num_vertices)
    per_round = read if st["power_packed"] else g.num_vertices * (k - 1)
    # (the rounds queued with no host wait: the round queued past the stop too)
    crossed = 1 + st["rounds"] + st.get("power_rounds_past_stop", 0)
    assert st["bytes_between_gpus"] == crossed * per_round * 8
    one = RunStats.new()
    y, _ = gpu_power.solve(g, system, tol=1e-9, max_iter=500, stats=one, settings=settings)
    assert one["rounds"] == st["rounds"]  # the same iteration, summed in another order
    assert np.abs(x - y).sum() <= 1e-12


def test_packed_and_whole_range_exchanges_agree(ngpu):
    g = _graph(9)
    assert (g.out_degree == 0).mean() > 0.1
    algo = digraph.algorithms.PageRank()
    system = algo.prepare(g, **algo.bind(g, {}))
    outs = []
    for share in (0.0, 1.0):
        st = RunStats.new()
        x, ok = multi_gpu_power.solve(g, system, devices=_devices(2), tol=1e-10, max_iter=500,
                                      stats=st, settings=dataclasses.replace(
                                          power_settings.POWER_DEFAULT, pack_share=share))
        assert ok and st["power_packed"] == (share == 1.0)
        outs.append((x, st["rounds"], st["bytes_between_gpus"]))
    assert outs[0][1] == outs[1][1] and np.array_equal(outs[0][0], outs[1][0])
    assert outs[1][2] < outs[0][2]


def test_run_shards_power_by_the_arcs_per_gpu(ngpu, engine_settings):
    g = _graph(5)
    exact = digraph.algorithms.PageRank().reference(g)
    dev = "cuda:0,1"
    engine_settings(power_settings.POWER_DEFAULT, shard_arcs=g.num_arcs // 2)
    r = digraph.run(g, "pagerank", device=dev, tol=1e-9)
    s = r.stats
    assert (s["mode"], s["engine"], s["gpus"], s["gpus_named"]) == \
        ("power", "multi-gpu-power", 2, 2)
    assert s["route"]["placed"] == [{"code": "sharded", "why": "sharded over the 2 GPUs named"}]
    assert s["converged"] and np.abs(r.values - exact).sum() <= s["error_bound"] <= 1e-9
    named = digraph.run(g, "pagerank", device=dev, mode="power", tol=1e-9)
    assert named.stats["engine"] == "multi-gpu-power" and named.stats["requested_mode"] == "power"
    engine_settings(power_settings.POWER_DEFAULT, shard_arcs=g.num_arcs)  # one GPU's worth: the first alone
    r = digraph.run(g, "pagerank", device=dev, mode="power", tol=1e-9)
    assert (r.stats["engine"], r.stats["gpus"]) == ("gpu-power", 1)
    assert [p["code"] for p in r.stats["route"]["placed"]] == ["first-gpu"]


def test_sharded_power_refuses_what_it_cannot_run(ngpu):
    g = _graph(6)
    algo = digraph.algorithms.Adsorption()
    system = algo.prepare(g, **algo.bind(g, {"seeds": [0]}))
    with pytest.raises(InvalidParameterError, match="normalised"):
        multi_gpu_power.solve(g, system, devices=_devices(2), tol=1e-8, max_iter=10,
                              stats=RunStats.new())
    with pytest.raises(InvalidParameterError, match="dangling"):
        digraph.run(g, "pagerank", device="cuda:0,1", dangling={0: 1.0})



def test_sharded_anderson_gives_the_one_gpu_iteration(ngpu):
    from test_gpu_power import _slow_mode_graph
    k = min(2, ngpu)
    g = _slow_mode_graph(3)
    algo = digraph.algorithms.PageRank()
    system = algo.prepare(g, **algo.bind(g, {}))
    on = dataclasses.replace(power_settings.POWER_DEFAULT, anderson_arcs=0)
    st = RunStats.new()
    x, ok = multi_gpu_power.solve(g, system, devices=_devices(k), tol=1e-6, max_iter=500,
                                  stats=st, settings=on)
    assert ok and st["power_anderson"] == 4 and st["anderson_mixes"] > 0
    assert np.abs(x - algo.reference(g)).sum() <= st["error_bound"] <= 1e-6
    again = RunStats.new()  # the kept rings, as the last run left them: the same iteration
    x2, _ = multi_gpu_power.solve(g, system, devices=_devices(k), tol=1e-6, max_iter=500,
                                  stats=again, settings=on)
    assert again["gpu_work_kept"] and again["rounds"] == st["rounds"]
    assert again["anderson_mixes"] == st["anderson_mixes"] and np.abs(x2 - x).sum() <= 1e-12
    one = RunStats.new()
    y, _ = gpu_power.solve(g, system, tol=1e-6, max_iter=500, stats=one, settings=on)
    assert one["rounds"] == st["rounds"] and one["anderson_mixes"] == st["anderson_mixes"]
    assert np.abs(x - y).sum() <= 1e-9
    plain = RunStats.new()
    multi_gpu_power.solve(g, system, devices=_devices(k), tol=1e-6, max_iter=500, stats=plain)
    assert st["rounds"] < plain["rounds"]  # below anderson_arcs by default: plain


def test_sharded_cusparse_pull_gives_the_same_answer(ngpu):
    from digraph.dispatch.runtime.cuda.backend import backend
    if backend("cuda").sim:
        pytest.skip("cuSPARSE needs a real GPU (the simulator runs the Numba pull)")
    k = min(2, ngpu)
    g = _graph(11, weighted=True)
    algo = digraph.algorithms.PageRank()
    for weighted in (False, True, False):  # the values back to ones after a weighted run
        system = algo.prepare(g, **algo.bind(g, {"weights": weighted}))
        st = RunStats.new()
        x, ok = multi_gpu_power.solve(g, system, devices=_devices(k), tol=1e-10, max_iter=500,
                                      stats=st, settings=dataclasses.replace(
                                          power_settings.POWER_DEFAULT, cusparse_arcs=0))
        assert ok and st["power_pull"] == "cusparse"
        exact = algo.reference(g, weights=weighted)
        assert np.abs(x - exact).sum() <= st["error_bound"] <= 1e-10


def _exact(g, system):
    """``x = b + A x`` solved densely and divided by its sum (``A[v, u] = src_scale[u]`` for
    each arc u → v)."""
    n = g.num_vertices
    off, src = np.asarray(g.in_offsets), np.asarray(g.in_sources)
    a = np.zeros((n, n))
    scale = np.asarray(system.src_scale, np.float64)
    for v in range(n):
        for u in src[off[v]:off[v + 1]]:
            a[v, u] += scale[u]
    x = np.linalg.solve(np.eye(n) - a, np.asarray(system.b, np.float64))
    return x / x.sum()


def test_kept_work_follows_the_system(ngpu):
    """A run keeps its vectors on the graph for the next; a run with other teleport or scale
    vectors (a personalised PageRank, other vertices without a share of z) makes its own, and
    every run gives the answer of a run on a graph with nothing kept."""
    from digraph.algorithms.base import LinearSystem
    k = min(2, ngpu)
    algo = digraph.algorithms.PageRank()
    g = _graph(12)
    n = g.num_vertices
    base = algo.prepare(g, **algo.bind(g, {}))
    scale = np.array(base.src_scale, copy=True)
    scale[::3] = 0.0  # fewer entries of z to copy: other lists for the packed exchange
    other = LinearSystem(b=np.full(n, 1.0 / n), src_scale=scale, normalize=True)
    pers_a = {int(v): 1.0 + v % 3 for v in range(0, n, 4)}
    pers_b = {int(v): 2.0 for v in range(1, n, 5)}
    made = {}

    def system(name):
        if name == "other":
            return other
        if name not in made:
            kw = {} if name == "plain" else {"personalization": pers_a if name == "a" else pers_b}
            made[name] = (algo.prepare(g, **algo.bind(g, kw)), algo.reference(g, **kw))
        return made[name][0]

    order = ["plain", "a", "b", "other", "a", "plain"]
    for i, name in enumerate(order):
        sy = system(name)
        st = RunStats.new()
        x, ok = multi_gpu_power.solve(g, sy, devices=_devices(k), tol=1e-10, max_iter=500,
                                      stats=st)
        assert ok and st["gpu_work_kept"] == (i > 0), (i, name)
        exact = _exact(g, other) if name == "other" else made[name][1]
        assert np.abs(x - exact).sum() <= st["error_bound"] <= 1e-10, (i, name)
        cold = RunStats.new()
        y, _ = multi_gpu_power.solve(_graph(12), sy, devices=_devices(k), tol=1e-10,
                                     max_iter=500, stats=cold)
        assert not cold["gpu_work_kept"]
        assert cold["rounds"] == st["rounds"] and np.abs(x - y).sum() <= 1e-12, (i, name)
        assert cold["bytes_between_gpus"] == st["bytes_between_gpus"]
        if _sim():  # one device, run in order: the same sums in the same order
            assert np.array_equal(x, y), (i, name)
    # other settings: made again; nothing kept when it does not fit
    st = RunStats.new()
    multi_gpu_power.solve(g, base, devices=_devices(k), tol=1e-10, max_iter=500, stats=st,
                          settings=dataclasses.replace(power_settings.POWER_DEFAULT, pack_share=0.0))
    assert not st["gpu_work_kept"] and not st["power_packed"]
    tight = dataclasses.replace(power_settings.POWER_DEFAULT, shard_keep_work_bytes=0)
    for _ in range(2):
        st = RunStats.new()
        x, ok = multi_gpu_power.solve(g, base, devices=_devices(k), tol=1e-10, max_iter=500,
                                      stats=st, settings=tight)
        assert ok and not st["gpu_work_kept"]
        assert np.abs(x - made["plain"][1]).sum() <= st["error_bound"]


@pytest.mark.parametrize("k, weighted", [(2, False), (3, True)])
def test_dealt_blocks_give_the_ranges_answer(ngpu, k, weighted):
    """Blocks dealt to the GPUs (power_layout): the engine numbers the vertices GPU by GPU, so
    the answer comes back in the graph's numbering, equal to the one-GPU iteration's, within its
    bound, with the bytes of the entries that cross under that ownership; a second run keeps
    its work."""
    k = min(k, ngpu)
    g = _graph(20 + k, weighted=weighted)
    n = g.num_vertices
    pers = {int(v): 1.0 + v % 3 for v in range(0, n, 4)}
    algo = digraph.algorithms.PageRank()
    kw = dict(personalization=pers, weights=weighted)
    system = algo.prepare(g, **algo.bind(g, kw))
    exact = algo.reference(g, **kw)
    settings = dataclasses.replace(power_settings.POWER_DEFAULT, shard_layout="dealt", shard_block=3)
    for again in (False, True):
        st = RunStats.new()
        x, ok = multi_gpu_power.solve(g, system, devices=_devices(k), tol=1e-9, max_iter=500,
                                      stats=st, settings=settings)
        assert ok and st["gpu_work_kept"] == again
        assert "dealt" in st["power_layout"]
        assert sum(st["gpu_arcs"]) == g.num_arcs and sum(st["gpu_vertices"]) == n
        assert np.abs(x - exact).sum() <= st["error_bound"] <= 1e-9
    owner = (np.arange(n) // 3) % k  # not what _deal gives: recomputed from the layout below
    from digraph.dispatch.engines.power.gpus_layout import dealt_layout
    lay = dealt_layout(g.in_offsets, k, 3, power_settings.POWER_DEFAULT.shard_vertex_cost)
    for h in range(k):
        owner[lay.vertices(h)] = h
    assert [int(c) for c in np.bincount(owner, minlength=k)] == st["gpu_vertices"]
    heads = np.repeat(np.arange(n), np.diff(g.in_offsets))
    src, dst = owner[g.in_sources], owner[heads]
    read = np.unique(g.in_sources[src != dst].astype(np.int64) * k + dst[src != dst]).size
    per_round = read if st["power_packed"] else n * (k - 1)
    crossed = 1 + st["rounds"] + st.get("power_rounds_past_stop", 0)
    assert st["bytes_between_gpus"] == crossed * per_round * 8
    one = RunStats.new()
    y, _ = gpu_power.solve(g, system, tol=1e-9, max_iter=500, stats=one)
    assert one["rounds"] == st["rounds"]
    assert np.abs(x - y).sum() <= 1e-12



def test_one_gpu_run_after_other_gpus_uses_its_own_device(ngpu):
    """A backend made for another GPU leaves that GPU current; a later one-GPU run must still
    run on its own device (not through peer access: R-MAT 2^25 took 236 ms instead of 93), so
    CuPy warns of no array used from another device (real GPUs only)."""
    if _sim() or ngpu < 2:
        pytest.skip("two real GPUs")
    import warnings
    from cupy._util import PerformanceWarning
    from digraph.dispatch.runtime.cuda.backend import backend
    g = _graph(41, n=3000, m=30000)
    exact = digraph.algorithms.PageRank().reference(g)
    digraph.run(g, "pagerank", mode="power", device="cuda:0", tol=1e-9)
    backend("cuda:1")
    import cupy
    cupy.cuda.Device(1).use()  # what making a backend for GPU 1 first did
    with warnings.catch_warnings():
        warnings.simplefilter("error", PerformanceWarning)
        r = digraph.run(g, "pagerank", mode="power", device="cuda:0", tol=1e-9)
    assert np.abs(r.values - exact).sum() <= r.stats["error_bound"] <= 1e-9
    assert cupy.cuda.Device().id == 1  # the caller's current device restored
    cupy.cuda.Device(0).use()
