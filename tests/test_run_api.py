"""``digraph.run`` and ``Result``: ids, stats (docs/design.md §5), parameters, and every refusal."""

import math
import subprocess
import sys
import textwrap

import numba
import numpy as np
import pytest

import digraph
from digraph.errors import (ConvergenceError, DigraphError, InvalidParameterError, InvalidWeightError,
                            NotAvailableError, VertexNotFoundError)
from digraph.graph import Graph
from digraph.result import Result, RunStats

COUNTERS = ("rounds", "vertex_updates", "arc_updates", "dense_rounds", "sparse_rounds",
            "paths_processed", "partitions_processed", "bytes_h2d", "bytes_d2h")
TIMES = ("time_load", "time_preprocess", "time_transfer", "time_compile", "time_compute", "time_total")

# the ids are not contiguous: 10, 20, 30, 40
SRC = [10, 20, 30, 20, 30]
DST = [20, 30, 10, 40, 40]

ALGORITHMS = {
    "pagerank": {},
    "adsorption": {"seeds": [10]},
    "sssp": {"source": 10},
    "kcore": {},
}


@pytest.fixture
def g():
    return Graph.from_arrays(SRC, DST)


@pytest.fixture
def gw():
    return Graph.from_arrays(SRC, DST, [1.0, 2.0, 0.5, 4.0, 0.0])


# ============================================================================ Result

def test_values_aligned_with_non_contiguous_ids(g):
    assert g.vertex_ids.tolist() == [10, 20, 30, 40]
    r = digraph.run(g, "sssp", source=20)
    assert isinstance(r, Result)
    assert r.vertex_ids.tolist() == [10, 20, 30, 40]
    assert r.values.tolist() == [2.0, 0.0, 1.0, 1.0]
    d = r.to_dict()
    assert d == {10: 2.0, 20: 0.0, 30: 1.0, 40: 1.0}
    assert all(type(k) is int and type(v) is float for k, v in d.items())
    assert r[30] == 1.0 and r[10] == 2.0
    with pytest.raises(VertexNotFoundError, match="99"):
        r[99]
    r = digraph.run(g, "sssp", source=40)
    assert r.to_dict() == {10: math.inf, 20: math.inf, 30: math.inf, 40: 0.0}


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_result_shape_and_to_dict(g, name):
    r = digraph.run(g, name, **ALGORITHMS[name])
    assert r.algorithm == name
    assert r.values.shape == (4,)
    assert r.values.dtype == (np.int64 if name == "kcore" else np.float64)
    assert list(r.to_dict()) == [10, 20, 30, 40]
    for vid, val in r.to_dict().items():
        assert r[vid] == val
    assert repr(r).startswith("<digraph.Result " + name)


def test_top(g):
    r = digraph.run(g, "pagerank", tol=1e-12)
    order = np.argsort(-r.values, kind="stable")
    top = r.top(2)
    assert [v for _, v in top] == sorted(r.values.tolist(), reverse=True)[:2]
    assert [i for i, _ in top] == r.vertex_ids[order[:2]].tolist()
    assert all(r[i] == v for i, v in top)
    assert len(r.top(100)) == 4
    assert r.top(0) == []
    assert [v for _, v in r.top(4, largest=False)] == sorted(r.values.tolist())
    # infinite values (unreachable vertices) are left out
    s = digraph.run(g, "sssp", source=40)
    assert s.top(3, largest=False) == [(40, 0.0)]


def test_stats_keys_and_consistency(g):
    for name, params in ALGORITHMS.items():
        r = digraph.run(g, name, **params)
        s = r.stats
        assert isinstance(s, RunStats)
        for k in COUNTERS + TIMES + ("mode", "device", "threads", "converged", "algorithm"):
            assert k in s, (name, k)
        assert s.rounds == s["rounds"]  # attribute access
        assert s["algorithm"] == name
        expected = {"pagerank": "scc", "adsorption": "scc", "kcore": "peel"}.get(name, "vertex-async")
        assert s["mode"] == expected and s["device"] == "cpu" and s["converged"] is True
        assert 1 <= s["threads"] <= numba.config.NUMBA_NUM_THREADS
        assert s["rounds"] > 0
        if expected == "bsp":  # the BSP directions; asynchronous passes have none
            assert s["dense_rounds"] + s["sparse_rounds"] == s["rounds"]
        n, m = g.num_vertices, g.num_arcs
        assert 0 < s["vertex_updates"] <= s["rounds"] * n
        assert 0 < s["arc_updates"] <= s["rounds"] * 2 * m
        for k in ("bytes_h2d", "bytes_d2h"):
            assert s[k] == 0  # CPU run: nothing crosses a bus
        for k in TIMES:
            assert s[k] >= 0.0
        assert s["time_total"] >= s["time_compute"]
        if name in ("pagerank", "adsorption"):
            assert 0 <= s["error_bound"] <= r.params["tol"]
            assert s["residual_l1"] >= 0
        assert str(s)  # printable


def test_stats_explicit_mode_and_threads(g):
    before = numba.get_num_threads()
    r = digraph.run(g, "pagerank", mode="bsp", threads=1)
    assert r.stats["mode"] == "bsp" and r.stats["threads"] == 1
    assert numba.get_num_threads() == before  # restored after the run


def test_params_recorded(g, gw):
    r = digraph.run(g, "pagerank", alpha=0.7, tol=1e-9, max_iter=500)
    p = r.params
    assert p["alpha"] == 0.7 and p["tol"] == 1e-9 and p["max_iter"] == 500
    assert p["personalization"] is None and p["weights"] is True
    assert p["mode"] == "scc" and p["device"] == "cpu"
    r = digraph.run(g, "pagerank")
    assert r.params["alpha"] == 0.85 and r.params["tol"] == 1e-6 and r.params["max_iter"] >= 1000
    r = digraph.run(gw, "sssp", source=30, weights=False)
    assert r.params["source"] == 30 and r.params["weights"] is False
    r = digraph.run(g, "adsorption", seeds=[10, 30], beta=0.6)
    assert list(r.params["seeds"]) == [10, 30] and r.params["beta"] == 0.6


def test_algorithm_names_and_instances(g):
    a = digraph.run(g, "PageRank", tol=1e-12).values
    b = digraph.run(g, digraph.algorithms.PageRank(), tol=1e-12).values
    c = digraph.run(g, digraph.algorithms.PageRank, tol=1e-12).values
    assert np.array_equal(a, b) and np.array_equal(a, c)


# ============================================================================ small and empty graphs

def test_empty_graph():
    e = Graph.from_arrays([], [])
    assert e.num_vertices == 0
    for name in ("pagerank", "kcore"):
        r = digraph.run(e, name)
        assert r.values.shape == (0,)
        assert r.to_dict() == {} and r.top(3) == []
    with pytest.raises(VertexNotFoundError):
        digraph.run(e, "sssp", source=0)
    with pytest.raises(VertexNotFoundError):
        digraph.run(e, "adsorption", seeds=[0])


def test_vertices_without_arcs():
    e = Graph.from_arrays([], [], num_vertices=5)
    assert e.num_vertices == 5 and e.num_arcs == 0
    assert np.allclose(digraph.run(e, "pagerank").values, 0.2, rtol=0, atol=1e-15)
    assert digraph.run(e, "kcore").values.tolist() == [0] * 5
    assert digraph.run(e, "sssp", source=3).values.tolist() == [np.inf] * 3 + [0.0, np.inf]
    r = digraph.run(e, "adsorption", seeds=[1, 4], beta=0.8)
    assert np.allclose(r.values, [0, 0.2, 0, 0, 0.2], rtol=0, atol=1e-15)
    one = Graph.from_arrays([0], [0])  # one vertex with a self-loop
    assert digraph.run(one, "pagerank").values.tolist() == [1.0]
    assert digraph.run(one, "kcore").values.tolist() == [0]
    assert digraph.run(one, "sssp", source=0).values.tolist() == [0.0]


# ============================================================================ refusals

def test_unknown_algorithm(g):
    with pytest.raises(InvalidParameterError, match="unknown algorithm 'pagerankk'"):
        digraph.run(g, "pagerankk")
    with pytest.raises(InvalidParameterError):
        digraph.run(g, 42)


def test_unknown_and_missing_parameters(g):
    with pytest.raises(InvalidParameterError, match="damping"):
        digraph.run(g, "pagerank", damping=0.85)
    with pytest.raises(InvalidParameterError, match="source"):
        digraph.run(g, "sssp")
    with pytest.raises(InvalidParameterError, match="seeds"):
        digraph.run(g, "adsorption")
    with pytest.raises(InvalidParameterError, match="seeds"):
        digraph.run(g, "adsorption", seeds=[])
    with pytest.raises(InvalidParameterError, match="alpha"):
        digraph.run(g, "kcore", alpha=0.5)


@pytest.mark.parametrize("name, params, what", [
    ("sssp", {"source": 11}, "source 11"),
    ("sssp", {"source": "10"}, "source '10'"),
    ("sssp", {"source": 10.5}, "source 10.5"),
    ("adsorption", {"seeds": [10, 99]}, "seed 99"),
    ("adsorption", {"seeds": 5}, "seed 5"),
    ("pagerank", {"personalization": {10: 1.0, 77: 1.0}}, "personalization key 77"),
])
def test_vertex_not_found(g, name, params, what):
    with pytest.raises(VertexNotFoundError, match=what) as ei:
        digraph.run(g, name, **params)
    assert isinstance(ei.value, LookupError) and isinstance(ei.value, DigraphError)
    assert ei.value.vertex in (11, "10", 10.5, 99, 5, 77)


@pytest.mark.parametrize("value", [0, 1, 0.0, 1.0, -0.1, 1.5, float("nan"), float("inf"), "high", None])
@pytest.mark.parametrize("name, key, extra", [("pagerank", "alpha", {}),
                                              ("adsorption", "beta", {"seeds": [10]})])
def test_probability_outside_open_interval(g, name, key, extra, value):
    with pytest.raises(InvalidParameterError, match=key):
        digraph.run(g, name, **{key: value}, **extra)


@pytest.mark.parametrize("pers", [{10: 0.0}, {10: 0, 20: 0}, {}, {10: -1.0, 20: 2.0},
                                  {10: float("nan")}, {10: float("inf")}, np.zeros(4),
                                  np.array([1.0, -1.0, 1.0, 1.0]), np.ones(3)])
def test_bad_personalization(g, pers):
    with pytest.raises(InvalidParameterError, match="personalization"):
        digraph.run(g, "pagerank", personalization=pers)


def test_personalization_array_and_missing_keys(g):
    a = digraph.run(g, "pagerank", personalization={20: 2.0, 40: 0.0}, tol=1e-12).values
    b = digraph.run(g, "pagerank", personalization=np.array([0.0, 1.0, 0.0, 0.0]), tol=1e-12).values
    assert np.abs(a - b).sum() <= 1e-11


@pytest.mark.parametrize("name, params", [("sssp", {"source": 10}), ("pagerank", {}),
                                          ("adsorption", {"seeds": [10]})])
def test_negative_weight_refused(name, params):
    g = Graph.from_arrays(SRC, DST, [1.0, -2.0, 1.0, 1.0, 1.0])
    with pytest.raises(InvalidWeightError, match=r"20 -> 30.*-2") as ei:
        digraph.run(g, name, **params)
    assert isinstance(ei.value, ValueError)
    # weights=False ignores the weights entirely
    digraph.run(g, name, weights=False, **params)


def test_infinite_weight_refused_by_pagerank_allowed_by_sssp():
    g = Graph.from_arrays(SRC, DST, [1.0, np.inf, 1.0, 1.0, 1.0])
    with pytest.raises(InvalidWeightError, match="inf"):
        digraph.run(g, "pagerank")
    with pytest.raises(InvalidWeightError, match="inf"):
        digraph.run(g, "adsorption", seeds=[10])
    r = digraph.run(g, "sssp", source=10)
    assert r.to_dict() == {10: 0.0, 20: 1.0, 30: math.inf, 40: 2.0}


def test_nan_weight_refused_at_construction():
    with pytest.raises(InvalidWeightError, match="NaN"):
        Graph.from_arrays([0, 1], [1, 0], [1.0, np.nan])


@pytest.mark.parametrize("tol", [0, 0.0, -1e-6, float("nan"), float("inf"), "small", True])
def test_bad_tol(g, tol):
    with pytest.raises(InvalidParameterError, match="tol"):
        digraph.run(g, "pagerank", tol=tol)


@pytest.mark.parametrize("max_iter", [0, -3, 2.5, "10", True, float("nan"), [3]])
def test_bad_max_iter(g, max_iter):
    with pytest.raises(InvalidParameterError, match="max_iter"):
        digraph.run(g, "pagerank", max_iter=max_iter)


@pytest.mark.parametrize("threads", [0, -1, 1.5, "2", True, numba.config.NUMBA_NUM_THREADS + 1, 10**6])
def test_bad_threads(g, threads):
    with pytest.raises(InvalidParameterError, match="threads"):
        digraph.run(g, "pagerank", threads=threads)


def test_modes(g):
    run_module = sys.modules["digraph.run"]
    with pytest.raises(InvalidParameterError, match="unknown mode 'fast'"):
        digraph.run(g, "pagerank", mode="fast")
    for mode in run_module.MODES:
        if mode == "cluster":  # SSSP-like systems on one GPU only (tests/dispatch/cuda/test_gpu_cluster.py)
            with pytest.raises(InvalidParameterError, match="mode='cluster' relaxes min/max"):
                digraph.run(g, "pagerank", mode=mode)
            continue
        if mode == "peel":  # k-core only; PageRank is refused (tests/dispatch/test_kcore_peel.py)
            r = digraph.run(g, "kcore", mode=mode)
        else:
            r = digraph.run(g, "pagerank", mode=mode, tol=1e-10)
        assert r.stats["mode"] == mode and r.params["mode"] == mode
        assert r.stats["engine"] == f"cpu-{mode}" and r.stats["route"]["code"] == "asked"
        assert r.stats["requested_mode"] == mode
    r = digraph.run(g, "pagerank")
    assert r.stats["mode"] == "scc" and r.stats["dag"]["state"] == "vertex"
    assert r.stats["requested_mode"] is None and r.stats["route"]["reason"].startswith("automatic: ")
    s = digraph.run(g, "sssp", source=g.vertex_ids[0])
    assert s.stats["mode"] == "vertex-async" and s.stats["engine"] == "cpu-vertex-async"


def test_a_named_mode_runs_or_raises(g):
    with pytest.raises(InvalidParameterError, match="mode='scc' solves linear systems"):
        digraph.run(g, "sssp", source=g.vertex_ids[0], mode="scc")
    with pytest.raises(InvalidParameterError, match="k-core depends on in- and out-neighbours"):
        digraph.run(g, "kcore", mode="path")
    # an option of the path modes does not switch the automatic choice to one (issue 19)
    with pytest.raises(InvalidParameterError, match="pass mode='path'"):
        digraph.run(g, "pagerank", cache="somewhere")
    with pytest.raises(InvalidParameterError, match="state= was removed: mode='scc'"):
        digraph.run(g, "pagerank", state="vertex")


@pytest.mark.parametrize("device, error", [
    ("cuda:0,0", InvalidParameterError), ("CUDA:1, 1", InvalidParameterError),
    ("gpu", InvalidParameterError), ("cuda:x", InvalidParameterError),
    (0, InvalidParameterError)])
def test_devices(g, device, error):
    with pytest.raises(error, match="device"):
        digraph.run(g, "pagerank", device=device)


def test_cpu_device_spellings(g):
    assert digraph.run(g, "kcore", device="CPU").stats["device"] == "cpu"
    assert digraph.run(g, "kcore", device=None).stats["device"] == "cpu"


def test_cpu_runs_do_not_import_cuda():
    code = textwrap.dedent("""
        import sys
        import digraph
        from digraph.graph import Graph
        g = Graph.from_arrays([0, 1], [1, 0])
        for mode in ("bsp", "vertex-async", "path"):
            digraph.run(g, "pagerank", mode=mode)
        try:  # refused before anything from CUDA is imported
            digraph.run(g, "pagerank", device="cuda:0,0")
        except digraph.errors.InvalidParameterError:
            pass
        else:
            raise SystemExit("no InvalidParameterError")
        bad = sorted(m for m in ("cupy", "cupyx", "numba.cuda", "torch") if m in sys.modules)
        print("IMPORTED", bad)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "IMPORTED []" in out.stdout, out.stdout


def test_max_iter_too_small_raises_with_partial_result():
    g = Graph.from_arrays([0, 1, 2, 2], [1, 2, 0, 1])
    # the power iteration: by default a graph this small runs the SCC engine, which solves its
    # one small component exactly in one sweep whatever max_iter
    with pytest.raises(ConvergenceError, match="max_iter=2") as ei:
        digraph.run(g, "pagerank", mode="power", max_iter=2, tol=1e-12)
    err = ei.value
    assert isinstance(err, RuntimeError)
    r = err.result
    assert isinstance(r, Result)
    assert r.stats["converged"] is False and r.stats["rounds"] == 2
    assert r.values.shape == (3,) and np.isfinite(r.values).all()
    assert r.stats["error_bound"] > 1e-12
    exact = digraph.algorithms.PageRank().reference(g)
    assert np.abs(r.values - exact).sum() <= r.stats["error_bound"]


def test_max_iter_too_small_for_sssp():
    n = 10
    g = Graph.from_arrays(np.arange(n - 1), np.arange(1, n))
    with pytest.raises(ConvergenceError) as ei:
        digraph.run(g, "sssp", source=0, max_iter=3)
    vals = ei.value.result.values
    assert vals[:4].tolist() == [0.0, 1.0, 2.0, 3.0] and np.isinf(vals[4:]).all()
    assert digraph.run(g, "sssp", source=0, max_iter=n).stats["rounds"] == n


def test_sssp_takes_one_source():
    # a list used to run an undocumented multi-source SSSP (issue 19)
    import networkx as nx
    g = digraph.load(([0, 1, 2], [1, 2, 0]))
    with pytest.raises(InvalidParameterError, match="source= takes one vertex id, got a list of 2"):
        digraph.run(g, "sssp", source=[0, 1])
    grid = digraph.load(nx.grid_2d_graph(3, 3).to_directed())  # tuple ids: a tuple is one vertex
    assert digraph.run(grid, "sssp", source=(0, 1)).to_dict()[(2, 2)] == 3.0


# ---------------------------------------------------------------------------- settings=

def test_settings_change_one_run_and_nothing_after():
    """``settings=`` gives one run its engine settings; the defaults are untouched after it."""
    import dataclasses

    from digraph.dispatch.engines.push import cpu_bsp as bsp
    from digraph.dispatch.settings import current
    rng = np.random.default_rng(3)
    g = digraph.load((rng.integers(0, 300, 3000), rng.integers(0, 300, 3000)), num_vertices=300)
    sparse = dataclasses.replace(bsp.DEFAULT, dense_divisor=0)  # never pulls
    dense = dataclasses.replace(bsp.DEFAULT, dense_divisor=10**9)  # pulls whenever it can
    a = digraph.run(g, "pagerank", mode="bsp", tol=1e-9, settings=[sparse])
    b = digraph.run(g, "pagerank", mode="bsp", tol=1e-9, settings=dense)
    assert a.stats["dense_rounds"] == 0 < b.stats["dense_rounds"]
    assert np.abs(a.values - b.values).sum() <= 2e-9
    assert current(bsp.DEFAULT) is bsp.DEFAULT


def test_bad_settings_are_refused_by_name():
    import dataclasses

    from digraph.dispatch.engines.push import cpu_bsp as bsp
    g = digraph.load(([0, 1], [1, 0]))
    with pytest.raises(InvalidParameterError, match="not an engine's settings object"):
        digraph.run(g, "pagerank", settings=[{"dense_divisor": 0}])
    with pytest.raises(InvalidParameterError, match="settings must be"):
        digraph.run(g, "pagerank", settings=3)
    with pytest.raises(InvalidParameterError, match="two BspSettings"):
        digraph.run(g, "pagerank", settings=[bsp.DEFAULT, dataclasses.replace(bsp.DEFAULT)])


def test_worker_threads_run_with_the_run_settings():
    """An engine's worker threads (settings.executor) see the settings of the run that made them."""
    import dataclasses

    from digraph.dispatch.engines.push import cpu_bsp as bsp
    from digraph.dispatch.settings import current, executor, using
    mine = dataclasses.replace(bsp.DEFAULT, dense_divisor=7)
    with using([mine]):
        with executor(2) as pool:
            seen = list(pool.map(lambda _: current(bsp.DEFAULT), range(4)))
    assert all(s is mine for s in seen)
    with executor(2) as pool:
        assert list(pool.map(lambda _: current(bsp.DEFAULT), range(2))) == [bsp.DEFAULT] * 2
