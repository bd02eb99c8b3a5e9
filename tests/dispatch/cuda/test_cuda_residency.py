"""The graph's residency (:mod:`digraph.dispatch.runtime.cuda.residency`, issue 18, item 5): one
object per graph that owns the device arrays the GPU engines keep between runs.

The class is tested on numpy arrays without CUDA; the tests marked ``gpu`` run the engines (on a
GPU, or in Numba's CUDA simulator, ``conftest.py``) and check what they keep there, that a second
run reuses it, and that re-cut shard ranges drop their arrays (``forget_ranges``).
"""
import numpy as np
import pytest

import digraph
from digraph.dispatch.runtime.cuda import residency as R
from digraph.dispatch.runtime.cuda.residency import Residency, residency
from digraph.result import RunStats


class _G:  # all the residency touches on a graph
    def __init__(self):
        self._cache = {}


def test_get_builds_once_and_keeps_the_object():
    res, built = Residency(), []

    def build():
        built.append(1)
        return {"a": np.zeros(3)}
    first = res.get("cuda", (0, True), build)
    assert res.get("cuda", (0, True), build) is first and built == [1]
    assert res.peek("cuda", (0, True)) is first
    assert res.peek("cuda", (1, True)) is None and res.peek("other", 1, "no") == "no"
    assert res.kinds() == ["cuda"] and len(res) == 1
    assert res.entries() == [("cuda", (0, True), first)]


def test_a_none_built_is_not_kept():
    res = Residency()
    assert res.get("cuda-power-csr", (0,), lambda: None) is None
    assert res.kinds() == [] and res.peek("cuda-power-csr", (0,)) is None
    assert res.get("cuda-power-csr", (0,), lambda: {"m": 1}) == {"m": 1}


def test_put_replaces_and_forget_by_kind_or_key():
    res = Residency()
    res.put("a", 1, "x")
    assert res.put("a", 1, "y") == "y" and res.peek("a", 1) == "y"
    res.put("a", 2, "z")
    res.put("b", (0, 5), "w")
    res.put("b", (5, 9), "v")
    assert res.forget("b", where=lambda k: k[0] == 0) == 1
    assert res.peek("b", (0, 5)) is None and res.peek("b", (5, 9)) == "v"
    assert res.forget("a") == 2 and res.kinds() == ["b"]
    assert res.forget("missing") == 0
    assert res.forget(where=lambda k: True) == 1 and res.kinds() == [] and len(res) == 0
    res.put("a", 1, "x")
    res.put("b", 1, "y")
    assert res.forget() == 2 and res.entries() == []


def test_entries_of_a_kind():
    res = Residency()
    res.put("a", 1, "x")
    res.put("b", 2, "y")
    assert res.entries("b") == [("b", 2, "y")]
    assert sorted(k for k, _, _ in res.entries()) == ["a", "b"]
    assert "a ×1" in repr(res)


def test_nbytes_counts_each_array_once():
    res = Residency()
    z = np.zeros(100)  # 800 bytes
    acc = np.zeros(10)  # 80 bytes
    res.put("w", 1, {"z": z, "z_own": z[10:20], "acc": [acc[:5], acc[5:]],
                     "t": (np.ones(4, np.int32), 3.0), "name": "x"})
    res.put("g", 1, {"same": z, "i": np.arange(5, dtype=np.int64)})
    assert res.nbytes(host=True) == 800 + 80 + 16 + 40
    assert res.nbytes("g", host=True) == 800 + 40
    assert res.nbytes(host=False) == 0  # no device array: numpy counts only as the simulator's

    class Dev:  # a device array as CuPy's: __cuda_array_interface__ and nbytes
        __cuda_array_interface__ = {}
        nbytes = 64
        base = None
    res.put("d", 1, (Dev(), Dev()))
    assert res.nbytes("d", host=False) == 128
    assert Residency().nbytes(host=True) == 0
    loop = {"a": np.zeros(2)}
    loop["me"] = [loop]  # a container that holds itself is walked once
    res.put("loop", 1, loop)
    assert res.nbytes("loop", host=True) == 16


def test_one_residency_per_graph_in_one_place():
    g = _G()
    assert residency(g, create=False) is None and R.peek(g, "cuda", (0, True)) is None
    assert g._cache == {}  # looking does not make one
    res = residency(g)
    assert residency(g) is res and g._cache == {R.KEY: res}
    res.put("cuda", (0, True), "d")
    assert R.peek(g, "cuda", (0, True)) == "d"
    g._cache.clear()  # as run.py's warm-up graph: everything goes with the cache
    assert residency(g, create=False) is None


def test_forget_ranges_drops_the_recut_ranges_arrays():
    from digraph.dispatch.runtime.cuda.ranges import forget_ranges
    g = _G()
    forget_ranges(g, np.array([0, 5, 10]), np.array([0, 6, 10]))  # nothing kept: no residency
    assert residency(g, create=False) is None
    res = residency(g)
    old, new = np.array([0, 5, 10]), np.array([0, 6, 10])

    def lay(b):
        return ("out-degree", tuple((i, True, int(b[i]), int(b[i + 1])) for i in range(2)),
                True)
    for fam in ("linear", ("power", 1)):
        for i in range(2):
            res.put("multi-gpu", (fam, i, True, int(old[i]), int(old[i + 1])), "old")
            res.put("multi-gpu", (fam, i, True, int(new[i]), int(new[i + 1])), "new")
    res.put("multi-gpu", ("linear", 0, True, 0, 10), "one shard")  # a range of neither
    res.put("multi-gpu-layout", lay(old), "old")
    res.put("multi-gpu-layout", lay(new), "new")
    mixed = ("id", ((0, True, 0, 5), (1, True, 6, 10)), False)  # one old range, one kept
    res.put("multi-gpu-layout", mixed, "mixed")
    res.put("cuda", (0, True), "csr")
    res.put("multi-gpu-power-work", None, "work")
    forget_ranges(g, old, keep=old)  # the same ranges: nothing dropped
    assert len(res) == 14
    forget_ranges(g, old, keep=new)
    assert sorted(e for _, _, e in res.entries("multi-gpu")) == ["new"] * 4 + ["one shard"]
    assert sorted(e for _, _, e in res.entries("multi-gpu-layout")) == ["new"]
    assert res.peek("cuda", (0, True)) == "csr" and res.peek("multi-gpu-power-work", None) == "work"


# ------------------------------------------------------------------------------ the engines


def _graph():
    rng = np.random.default_rng(3)
    return digraph.load((rng.integers(0, 40, 90), rng.integers(0, 40, 90)), num_vertices=40)


@pytest.mark.gpu
def test_one_gpu_keeps_its_graph_in_the_residency(one_gpu):
    g = _graph()
    r1 = digraph.run(g, "pagerank", device="cuda", mode="bsp", tol=1e-6, alpha=0.3)
    res = residency(g, create=False)
    assert res is not None and g._cache[R.KEY] is res
    key = (one_gpu.device_id, one_gpu.sim)
    d = res.peek("cuda", key)
    assert set(d) >= {"out_offsets", "out_targets", "in_offsets", "in_sources", "out_degree"}
    a = d["in_offsets"]
    np.testing.assert_array_equal(a.get() if hasattr(a, "get") else np.asarray(a), g.in_offsets)
    assert not [k for k in g._cache if isinstance(k, tuple) and k and k[0] == "cuda"]
    arrays = {k: v for k, v in d.items()}
    assert res.nbytes("cuda", host=True) >= sum(a.nbytes for a in arrays.values())
    r2 = digraph.run(g, "pagerank", device="cuda", mode="bsp", tol=1e-6, alpha=0.3)
    assert res.peek("cuda", key) is d and all(d[k] is a for k, a in arrays.items())
    assert r2.stats["bytes_h2d"] < r1.stats["bytes_h2d"]  # the graph was not uploaded again
    np.testing.assert_array_equal(r1.values, r2.values)


@pytest.mark.gpu
def test_one_gpu_power_keeps_its_work(one_gpu):
    g = _graph()
    first = digraph.run(g, "pagerank", mode="power", device="cuda", tol=1e-8, alpha=0.3)
    res = residency(g)
    (kind, key, w), = res.entries("cuda-power-work")
    assert key[:2] == (one_gpu.device_id, one_gpu.sim) and first.stats["gpu_work_kept"] is False
    bins = res.entries("cuda-power-bins")
    again = digraph.run(g, "pagerank", mode="power", device="cuda", tol=1e-8, alpha=0.3)
    assert again.stats["gpu_work_kept"] and res.entries("cuda-power-work") == [(kind, key, w)]
    assert res.entries("cuda-power-bins") == bins
    np.testing.assert_array_equal(first.values, again.values)


@pytest.mark.gpu
def test_sharded_runs_keep_ranges_and_layouts_then_drop_recut_ones(one_gpu):
    from digraph.algorithms import get
    from digraph.dispatch.engines.push import gpus as multi_gpu
    from digraph.dispatch.runtime.cuda.ranges import forget_ranges
    devs = ["cuda:0"] * 2 if one_gpu.sim else None
    if devs is None:
        from numba import cuda
        if len(cuda.gpus) < 2:
            pytest.skip("one GPU")
        devs = ["cuda:0", "cuda:1"]
    g = _graph()

    def run(name, **params):
        A = get(name)
        system = A.prepare(g, **A.bind(g, params))
        st = RunStats.new()
        x, ok = multi_gpu.solve(g, system, devices=devs, mode="bsp", tol=1e-6, max_iter=10_000,
                                stats=st, min_arcs_per_gpu=0)
        assert ok
        return x
    x0 = run("pagerank", alpha=0.3)  # few rounds: the simulator is slow
    y0 = run("sssp", source=0)
    res = residency(g)
    lays = res.entries("multi-gpu-layout")  # the linear run's layout
    shards = res.entries("multi-gpu")  # the min/max run's arrays of each range
    assert len(lays) == 1 and len(shards) == 2
    assert sorted(k[0] for _, k, _ in shards) == ["out", "out"]
    def bounds_of(ranges):
        ranges = sorted(ranges)
        b = np.array([ranges[0][0], ranges[0][1], ranges[1][1]])
        assert b[0] == 0 and b[-1] == g.num_vertices and ranges[0][1] == ranges[1][0]
        return b
    out_bounds = bounds_of((k[-2], k[-1]) for _, k, _ in shards)  # the out-arcs' ranges
    lay_bounds = bounds_of((t[2], t[3]) for t in lays[0][1][1])  # the in-arcs' ranges
    np.testing.assert_array_equal(run("pagerank", alpha=0.3), x0)
    np.testing.assert_array_equal(run("sssp", source=0), y0)
    assert res.entries("multi-gpu") == shards and res.entries("multi-gpu-layout") == lays
    assert all(a[2] is b[2] for a, b in zip(res.entries("multi-gpu"), shards))

    def moved(b):
        other = b.copy()
        other[1] += 1 if other[1] < g.num_vertices else -1
        return other
    forget_ranges(g, out_bounds, keep=moved(out_bounds))  # re-cut away: their arrays go
    assert res.entries("multi-gpu") == []
    assert res.entries("multi-gpu-layout") == (lays if set(out_bounds) != set(lay_bounds) else [])
    forget_ranges(g, lay_bounds, keep=moved(lay_bounds))
    assert res.entries("multi-gpu-layout") == []


@pytest.mark.gpu
def test_sharded_power_work_is_one_entry(one_gpu):
    from digraph.dispatch.engines.power.gpus_work import forget_work, kept_work
    from digraph.dispatch.runtime.cuda.shards import make_shards
    from digraph.dispatch.engines.power.gpu_settings import POWER_DEFAULT as DEFAULT
    g = _graph()
    shards = make_shards(["cuda:0"] * 2, g.in_offsets, RunStats.new())
    works, kept, reused = kept_work(g, shards, "sig", DEFAULT, 0)
    assert kept and not reused and len(works) == 2
    res = residency(g)
    assert res.entries("multi-gpu-power-work") == [
        ("multi-gpu-power-work", None, {"sig": "sig", "works": works})]
    again, kept, reused = kept_work(g, shards, "sig", DEFAULT, 0)
    assert again is works and kept and reused
    other, kept, reused = kept_work(g, shards, "other", DEFAULT, 0)  # the old work dropped
    assert other is not works and kept and not reused
    assert res.peek("multi-gpu-power-work", None)["works"] is other
    forget_work(g, works)  # not the kept work: it stays
    assert res.peek("multi-gpu-power-work", None)["works"] is other
    forget_work(g, other)
    assert res.entries("multi-gpu-power-work") == []


@pytest.mark.gpu
def test_kcore_scc_cluster_and_path_arrays_are_kept_and_reused(one_gpu):
    g = _graph()
    runs = (("kcore", {"mode": "peel"}, "cuda-peel"),
            ("kcore", {"mode": "vertex-async"}, "cuda-undirected"),
            ("pagerank", {"mode": "scc", "alpha": 0.3, "tol": 1e-6}, "cuda-scc"),
            ("sssp", {"mode": "cluster", "source": 0}, "cuda-clusters"),
            ("pagerank", {"mode": "path", "alpha": 0.3, "tol": 1e-6}, "cuda-proxies"))
    res = residency(g)
    for name, params, kind in runs:
        first = digraph.run(g, name, device="cuda", **params)
        (_, key, entry), = res.entries(kind)
        assert key[:2] == (one_gpu.device_id, one_gpu.sim)
        again = digraph.run(g, name, device="cuda", **params)
        assert res.entries(kind) == [(kind, key, entry)] and res.peek(kind, key) is entry
        if name == "pagerank":  # the SCC queue and the path walks' atomics: no fixed order
            bound = first.stats["error_bound"] + again.stats["error_bound"]
            assert np.abs(first.values - again.values).sum() <= bound
        else:
            np.testing.assert_array_equal(first.values, again.values)
    assert set(res.kinds()) >= {"cuda-peel", "cuda-undirected", "cuda-scc", "cuda-clusters",
                                "cuda-proxies"}
    assert not [k for k in g._cache if isinstance(k, tuple) and k and str(k[0]).startswith(
        ("cuda", "multi-gpu"))]  # nothing device-resident outside the residency


@pytest.mark.gpu
def test_path_work_is_kept_reset_and_replaced(one_gpu):
    """The path modes' work stays on the graph, an entry a priority rule: the next run with the
    same PathSet, units, rule and system vectors resets and reuses it and gives the same answer
    within both bounds; other vectors (personalization) make a new one in its place, and a run
    with another PathSet drops them all."""
    g = _graph()
    ref = digraph.run(g, "pagerank", mode="bsp", tol=1e-13).values
    res = residency(g)
    first = digraph.run(g, "pagerank", mode="path", device="cuda", tol=1e-8)
    (_, key, entry), = res.entries("cuda-path-work")
    again = digraph.run(g, "pagerank", mode="path", device="cuda", tol=1e-8)
    assert not first.stats["gpu_work_kept"] and again.stats["gpu_work_kept"]
    assert res.entries("cuda-path-work") == [("cuda-path-work", key, entry)]
    for r in (first, again):  # a reused work starts from scratch: the same bound holds
        assert np.abs(r.values - ref).sum() <= r.stats["error_bound"] + 1e-12
        assert r.stats["rounds"] > 1
    other = digraph.run(g, "pagerank", mode="path-nopriority", device="cuda", tol=1e-8)
    assert not other.stats["gpu_work_kept"] and np.abs(other.values - ref).sum() <= 1e-8
    kinds = dict((k, e) for _, k, e in res.entries("cuda-path-work"))
    assert len(kinds) == 2 and kinds[key] is entry  # the other rule's work beside it
    p = np.zeros(g.num_vertices)
    p[:5] = 1.0
    pers = digraph.run(g, "pagerank", mode="path-nopriority", device="cuda", tol=1e-8,
                       personalization=p)
    assert not pers.stats["gpu_work_kept"] and len(res.entries("cuda-path-work")) == 2
    exact = digraph.run(g, "pagerank", mode="bsp", tol=1e-13, personalization=p).values
    assert np.abs(pers.values - exact).sum() <= pers.stats["error_bound"] + 1e-12
    digraph.run(g, "pagerank", mode="path", device="cuda", tol=1e-8,
                preprocess={"max_path_length": 2})
    (_, key3, entry3), = res.entries("cuda-path-work")  # another PathSet: the others dropped
    assert key3 == key and entry3 is not entry
