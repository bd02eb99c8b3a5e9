"""The GPU engine (``device="cuda"``) against the CPU engine and the references.

Without a GPU these tests run the same kernels in Numba's CUDA simulator (``conftest.py`` sets
``NUMBA_ENABLE_CUDASIM=1`` when no ``/dev/nvidia*`` exists) on small graphs; on a GPU machine,
``pytest -m gpu`` runs them on the card, plus the real-graph tests marked ``datasets``.
"""

import numpy as np
import pytest
from hypothesis import given, settings, HealthCheck
from hypothesis import strategies as st

import digraph
from digraph.algorithms import Algorithm, MonotoneSystem
from digraph.errors import InvalidParameterError, NotAvailableError
from conftest import dataset_path

pytestmark = pytest.mark.gpu

MODES = ["bsp", "vertex-async", "path", "path-nopriority"]


def _placed(stats):
    """The codes of the placement's decisions in a run's route."""
    return [p["code"] for p in stats["route"]["placed"]]


def _backend():
    from digraph.dispatch.runtime.cuda import backend as cuda_backend
    try:
        return cuda_backend.backend("cuda")
    except NotAvailableError as e:  # numba-cuda present but no GPU and no simulator
        pytest.skip(str(e))


@pytest.fixture(scope="module")
def be():
    return _backend()


def real_gpu():
    from digraph.dispatch.runtime.cuda import backend as cuda_backend
    try:
        return not cuda_backend.backend("cuda").sim
    except NotAvailableError:
        return False


# A graph after the DiGraph paper's Figure 3 (its exact arcs are only in the figure): 13 vertices
# on six paths, p1 = v0..v5 walked by one thread, a hot vertex v6 on three paths, and v0's state
# reaching v12 along p1, p2 and p3; p6 closes a cycle back to v1 (three replicas of v1).
PATHS = [[0, 1, 2, 3, 4, 5], [5, 6, 7, 8], [8, 9, 10, 11, 12], [1, 6, 3], [2, 6, 9], [12, 1]]
SRC = np.array([a for p in PATHS for a in p[:-1]])
DST = np.array([b for p in PATHS for b in p[1:]])
W = np.linspace(0.5, 3.0, SRC.size)


@pytest.fixture(scope="module")
def small():
    return digraph.load((SRC, DST, W))


CASES = [("pagerank", {"tol": 1e-7}), ("adsorption", {"seeds": [0, 9], "tol": 1e-7}),
         ("sssp", {"source": 0}), ("kcore", {})]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("algo,params", CASES, ids=[c[0] for c in CASES])
def test_small_graph_matches_cpu(be, small, algo, params, mode):
    if mode.startswith("path") and algo == "kcore":  # no path mode for k-core: a clear error
        with pytest.raises(InvalidParameterError, match="k-core"):
            digraph.run(small, algo, mode=mode, device="cuda", **params)
        return
    r = digraph.run(small, algo, mode=mode, device="cuda", **params)
    ref = digraph.run(small, algo, mode="bsp", **{**params, **({"tol": 1e-12} if "tol" in params else {})})
    assert r.stats.converged and r.stats.device == "cuda"
    if "tol" in params:
        assert np.abs(r.values - ref.values).sum() <= params["tol"]
        assert r.stats.error_bound <= params["tol"]
    else:
        np.testing.assert_array_equal(r.values, ref.values)
    assert r.stats.rounds > 0 and r.stats.arc_updates > 0
    assert r.stats.bytes_d2h >= small.num_vertices * 8  # the answer came back
    if mode.startswith("path") and algo != "kcore":
        # units walked: every path of the graph at least once, never more than all per round
        assert len(PATHS) <= r.stats.paths_processed
        assert r.stats.arc_updates <= r.stats.dag["arcs_examined"] <= r.stats.rounds * small.num_arcs
    assert r.stats.gpu


def test_pagerank_matches_networkx(be, small):
    import networkx as nx
    G = nx.DiGraph()
    G.add_weighted_edges_from(zip(SRC.tolist(), DST.tolist(), W.tolist()))
    ref = nx.pagerank(G, tol=1e-13, max_iter=10_000)
    for mode in ("bsp", "path"):
        r = digraph.run(small, "pagerank", mode=mode, device="cuda", tol=1e-8).to_dict()
        assert sum(abs(r[v] - ref[v]) for v in ref) <= 1e-8


def test_weighted_sssp_and_unreachable(be):
    g = digraph.load((np.array([0, 0, 1, 2, 4]), np.array([1, 2, 2, 3, 0]), np.array([4.0, 1.0, 1.0, 5.0, 1.0])))
    for mode in MODES:
        r = digraph.run(g, "sssp", source=0, mode=mode, device="cuda", weights=True)
        np.testing.assert_array_equal(r.values, [0.0, 4.0, 1.0, 6.0, np.inf])


class WidestPath(Algorithm):
    """Widest (maximum-bottleneck) path from a source: a user algorithm on the GPU."""
    name = "widest"
    parameters = {"source": 0}

    def prepare(self, graph, source):
        s = graph.index_of([source])[0]
        init = np.full(graph.num_vertices, -np.inf)
        init[s] = np.inf
        return MonotoneSystem(init=init, relax="min", combine="max", arc_value=graph.arc_weights())


@pytest.mark.parametrize("mode", ["bsp", "vertex-async", "path"])
def test_user_algorithm(be, small, mode):
    r = digraph.run(small, WidestPath(), source=0, mode=mode, device="cuda")
    ref = digraph.run(small, WidestPath(), source=0, mode="bsp")
    np.testing.assert_array_equal(r.values, ref.values)


@st.composite
def graphs(draw):
    n = draw(st.integers(2, 9))
    m = draw(st.integers(1, 24))
    src = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    dst = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    return digraph.load((np.array(src), np.array(dst)), num_vertices=n)


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(g=graphs(), mode=st.sampled_from(MODES))
def test_hypothesis_graphs(g, mode):
    _backend()
    pr = digraph.run(g, "pagerank", mode=mode, device="cuda", tol=1e-6)
    ref = digraph.run(g, "pagerank", mode="bsp", tol=1e-12)
    assert np.abs(pr.values - ref.values).sum() <= 1e-6
    d = digraph.run(g, "sssp", source=0, mode=mode, device="cuda")
    np.testing.assert_array_equal(d.values, digraph.run(g, "sssp", source=0).values)
    k = digraph.run(g, "kcore", mode="vertex-async" if mode.startswith("path") else mode, device="cuda")
    np.testing.assert_array_equal(k.values, digraph.run(g, "kcore").values)


def test_device_strings(small):
    with pytest.raises(InvalidParameterError, match="cuda:x"):
        digraph.run(small, "pagerank", device="cuda:x")
    with pytest.raises(InvalidParameterError, match="twice"):
        digraph.run(small, "pagerank", device="cuda:1,1")
    from digraph.dispatch.runtime.cuda import backend as cuda_backend
    with pytest.raises(NotAvailableError, match="several GPUs"):
        cuda_backend.backend("cuda:0,1")  # one GPU's backend; several go through multi_gpu


def test_missing_gpu_message(small, monkeypatch):
    """Without the simulator and without a GPU the error says why; the CPU keeps working."""
    from digraph.dispatch.runtime.cuda import backend as runtime_backend
    if real_gpu():
        pytest.skip("a GPU is present")
    monkeypatch.setattr(runtime_backend, "_BACKENDS", {})  # backend() reads it there
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "0")
    from numba import cuda
    monkeypatch.setattr(cuda, "is_available", lambda: False)
    with pytest.raises(NotAvailableError, match="no CUDA GPU"):
        digraph.run(small, "pagerank", device="cuda")
    assert digraph.run(small, "pagerank").stats.converged


@pytest.mark.datasets
@pytest.mark.parametrize("mode", MODES)
def test_real_graph_on_gpu(mode):
    if not real_gpu():
        pytest.skip("real graphs only on a real GPU (the simulator is too slow)")
    g = digraph.load(dataset_path("cnr-2000.txt.gz"))
    r = digraph.run(g, "pagerank", mode=mode, device="cuda", tol=1e-8)
    ref = digraph.run(g, "pagerank", mode="bsp", tol=1e-11)
    assert np.abs(r.values - ref.values).sum() <= 1e-8
    src = g.vertex_ids[int(np.argmax(g.out_degree))]
    d = digraph.run(g, "sssp", source=src, mode=mode, device="cuda")
    np.testing.assert_array_equal(d.values, digraph.run(g, "sssp", source=src).values)
    k = digraph.run(g, "kcore", mode="vertex-async" if mode.startswith("path") else mode, device="cuda")
    np.testing.assert_array_equal(k.values, digraph.run(g, "kcore").values)
    if mode == "bsp":  # the same run with its arcs streamed in 8 batches
        s = digraph.run(g, "pagerank", mode="bsp", device="cuda", tol=1e-8,
                        batch_arcs=g.num_arcs // 8 + 1)
        assert np.abs(s.values - ref.values).sum() <= 1e-8 and s.stats.push["streamed_batches"] >= 8


def test_cli_on_the_gpu(be, tmp_path):
    """``digraph run ... --device cuda`` end to end (the simulator's setting is inherited)."""
    import json
    import subprocess
    import sys
    f = tmp_path / "g.el"
    f.write_text("".join(f"{a} {b}\n" for a, b in zip(SRC.tolist(), DST.tolist())))
    p = subprocess.run([sys.executable, "-m", "digraph.cli", "run", "sssp", str(f), "--source", "0",
                        "--device", "cuda", "--stats", str(tmp_path / "s.json"), "--top", "3"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    s = json.loads((tmp_path / "s.json").read_text())
    assert s["device"] == "cuda" and s["converged"] and s["bytes_h2d"] > 0


@pytest.mark.parametrize("algo,params", CASES[:2], ids=["pagerank", "adsorption"])
def test_streamed_arcs_match(be, small, algo, params):
    """bsp with the in-arcs streamed in batches (graphs larger than GPU memory) gives the same
    answer; the streamed bytes are counted."""
    r = digraph.run(small, algo, mode="bsp", device="cuda", batch_arcs=5, **params)
    ref = digraph.run(small, algo, mode="bsp", **{**params, "tol": 1e-12})
    assert np.abs(r.values - ref.values).sum() <= params["tol"]
    assert r.stats.push["streamed_batches"] >= 4
    assert r.stats.bytes_h2d >= r.stats.rounds * small.num_arcs * 4


def test_streaming_parameter_errors(small):
    with pytest.raises(InvalidParameterError, match="batch_arcs"):
        digraph.run(small, "sssp", source=0, device="cuda", mode="bsp", batch_arcs=4)
    with pytest.raises(InvalidParameterError, match="batch_arcs"):
        digraph.run(small, "pagerank", batch_arcs=4)
    with pytest.raises(InvalidParameterError, match="batch_arcs"):
        digraph.run(small, "pagerank", device="cuda", mode="bsp", batch_arcs=0)


def test_streamed_hub_gets_a_block(be):
    """A hub (in-degree >= HEAVY, 4 under the simulator) larger than a batch is streamed alone and
    pulled by a whole block."""
    src = np.array([1, 2, 3, 4, 5, 6, 0, 0, 2])
    dst = np.array([0, 0, 0, 0, 0, 0, 1, 2, 5])
    g = digraph.load((src, dst))
    r = digraph.run(g, "pagerank", mode="bsp", device="cuda", batch_arcs=3, tol=1e-6)
    ref = digraph.run(g, "pagerank", tol=1e-12)
    assert np.abs(r.values - ref.values).sum() <= 1e-6
    assert r.stats.push["streamed_batches"] == 2  # the hub's 6 in-arcs alone, then the other 3


@pytest.mark.parametrize("algo,params,weights", [("pagerank", {}, False), ("pagerank", {}, True),
                                                 ("adsorption", {"seeds": [0, 9]}, True)])
def test_contraction_factors_on_the_gpu(be, small, algo, params, weights):
    """γ1, γ∞ summed on the GPU (with or without per-arc atomics) equal the host's."""
    from digraph.algorithms import get
    from digraph.dispatch.engines.push import gpu_linear
    from digraph.dispatch.convergence import linear_contraction
    from digraph.result import RunStats
    A = get(algo)
    g = small if weights else digraph.load((SRC, DST))
    sys = A.prepare(g, **A.bind(g, {**params, **({"weights": True} if weights and algo == "pagerank" else {})}))
    be.stats = RunStats.new()
    got = gpu_linear.Linear(be, g, sys).gammas
    np.testing.assert_allclose(got, linear_contraction(g, sys), rtol=1e-14)


def test_large_bsp_runs_as_one_shard(be, small, engine_settings):
    """``bsp`` on a linear system of at least ``GpuSettings.shard_arcs`` arcs runs as one shard of
    the multi-GPU engine, with the same certified answer."""
    import dataclasses
    from digraph.dispatch.engines.path import gpu_settings
    ref = digraph.run(small, "pagerank", tol=1e-12)
    engine_settings(gpu_settings.DEFAULT, shard_arcs=0)
    r = digraph.run(small, "pagerank", mode="bsp", device="cuda", tol=1e-8)
    assert _placed(r.stats) == ["one-shard"] and r.stats.gpus == 1 and r.stats.converged
    assert r.stats.bytes_between_gpus == 0 and r.stats.error_bound <= 1e-8
    assert np.abs(r.values - ref.values).sum() <= 1e-8
    a = digraph.run(small, "adsorption", seeds=[0, 9], mode="bsp", device="cuda", tol=1e-8)
    assert _placed(a.stats) == ["one-shard"]
    assert np.abs(a.values - digraph.run(small, "adsorption", seeds=[0, 9], tol=1e-12).values).sum() <= 1e-8


def test_prepared_launch_reuses_marshalled_arrays():
    """Launches whose arrays are all registered go straight to the driver after the first one;
    scalars are converted at every launch, an unregistered array takes the dispatcher, and
    ``release`` forgets every prepared launch (real GPU: the simulator has no driver)."""
    if not real_gpu():
        pytest.skip("prepared launches need a real GPU")
    from numba import cuda

    @cuda.jit
    def axpy(a, x, y, n, neg):
        i = cuda.grid(1)
        if i < n:
            y[i] = (-a if neg else a) * x[i] + y[i]

    be = _backend()
    be.stats = {"time_transfer": 0.0, "bytes_h2d": 0, "bytes_d2h": 0}
    xp = be.xp
    n = 1000
    x = be.keep(xp.arange(n, dtype=np.float64))
    y = be.keep(xp.zeros(n, np.float64))
    try:
        before = len(be._prepared)
        be.launch(axpy, be.grid(n), be.block, 2.0, x, y, n, False)
        assert len(be._prepared) == before + 1
        be.launch(axpy, be.grid(n), be.block, 0.5, x, y, n, False)  # prepared: new scalars
        be.launch(axpy, be.grid(n), be.block, 1.0, x, y, n, True)
        np.testing.assert_array_equal(be.get(y), 1.5 * np.arange(n))
        z = xp.ones(n, np.float64)  # not registered: the dispatcher, nothing prepared
        be.launch(axpy, be.grid(n), be.block, 1.0, x, z, n, False)
        assert len(be._prepared) == before + 1
        np.testing.assert_array_equal(be.get(z), 1.0 + np.arange(n))
        be.launch(axpy, be.grid(n), be.block, 1.0, x, y, 500, False)  # a new integer
        np.testing.assert_array_equal(be.get(y), np.where(np.arange(n) < 500, 2.5, 1.5)
                                      * np.arange(n))
        assert len(be._prepared) == before + 1
    finally:
        be.release("all")
    assert not be._prepared and not be._views


def test_prepared_launch_gives_the_dispatcher_answer():
    """PageRank and SSSP on one GPU: the same answers with and without prepared launches
    (PageRank within its tolerance: the round statistics are summed with atomics, so their last
    bits, and with them the frontier threshold, vary from run to run; SSSP exactly)."""
    if not real_gpu():
        pytest.skip("prepared launches need a real GPU")
    from digraph.dispatch.runtime.cuda import backend as runtime_backend
    rng = np.random.default_rng(5)
    g = digraph.load((rng.integers(0, 3000, 40000), rng.integers(0, 3000, 40000)),
                     num_vertices=3000)
    src = int(np.argmax(g.out_degree))
    got = {}
    import dataclasses
    default = runtime_backend.BACKEND
    for fast in (True, False):
        backend = [dataclasses.replace(default, fast_launch=fast)]  # read at each launch
        got[fast] = [digraph.run(g, "pagerank", device="cuda", mode=m, tol=1e-9,
                                 settings=backend).values for m in ("bsp", "vertex-async", "path")]
        got[fast].append(digraph.run(g, "sssp", device="cuda", source=src,
                                     settings=backend).values)
    for a, b in zip(got[True][:-1], got[False][:-1]):
        assert np.abs(a - b).sum() <= 2e-9
    np.testing.assert_array_equal(got[True][-1], got[False][-1])


def test_a_process_of_many_gpu_runs_exits_cleanly():
    """A process of many GPU runs exits with status 0.  ``pytest -m gpu
    tests/dispatch/cuda/test_cuda_residency.py`` in a process of its own exited with status 139 (three times
    of three, two H200s, 2026-11-28) from Numba's unloads of its kernels' libraries at exit
    (NVIDIA/cuda-python#1670), and with 0 after
    :func:`digraph.dispatch.runtime.cuda.launch.hold_modules_at_exit` (real GPU only: the
    simulator loads no library)."""
    import subprocess
    import sys
    from pathlib import Path
    if not real_gpu():
        pytest.skip("the simulator loads no library")
    from digraph.dispatch.runtime.cuda import launch
    assert getattr(launch.hold_modules_at_exit, "done", False)  # registered by the backend
    here = Path(__file__).parent
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-m", "gpu", "-p", "no:cacheprovider",
                        str(here / "test_cuda_residency.py")], capture_output=True, text=True,
                       timeout=600, cwd=here.parents[2])
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
