"""The multi-worker dispatcher (issue 6) with simulated CPU workers: planning, replica exchange,
stealing, and answers equal to one worker's and to the references."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import digraph
from digraph.algorithms import get as get_algorithm
from digraph.dispatch.engines.path import gpus as multi
from digraph.preprocess import preprocess
from digraph.result import RunStats
from conftest import dataset_path


def run_multi(g, name, workers, ps=None, steal=True, tol=1e-9, **params):
    A = get_algorithm(name)
    system = A.prepare(g, **A.bind(g, params))
    ps = ps if ps is not None else preprocess(g, partition_arcs=16)
    stats = RunStats.new()
    x, ok = multi.solve(g, system, pathset=ps, workers=workers, tol=tol, stats=stats, steal=steal)
    assert ok
    return A.finalize(g, x, **A.bind(g, params)), stats


def rmat_graph(scale=9, seed=3):
    from digraph.generators import rmat
    src, dst = rmat(scale, 8, seed=seed)
    return digraph.load((src, dst), num_vertices=1 << scale)


@pytest.fixture(scope="module")
def g():
    return rmat_graph()


@pytest.mark.parametrize("workers", [1, 2, 3, 4])
def test_answers_equal_one_worker_and_the_reference(g, workers):
    ps = preprocess(g, partition_arcs=64)
    pr, st1 = run_multi(g, "pagerank", workers, ps)
    ref = digraph.run(g, "pagerank", tol=1e-12).values
    assert np.abs(pr - ref).sum() <= 1e-9
    assert st1["error_bound"] <= 1e-9
    src = g.vertex_ids[int(np.argmax(g.out_degree))]
    d, st2 = run_multi(g, "sssp", workers, ps, source=src)
    np.testing.assert_array_equal(d, digraph.run(g, "sssp", source=src).values)
    if workers > 1:
        assert st1["bytes_between_gpus"] > 0 and st1["exchange_messages"] > 0
        assert len(st1["worker_arcs"]) == workers and min(st1["worker_arcs"]) > 0
    else:
        assert st1["bytes_between_gpus"] == 0  # one worker owns every master


def test_plan_spreads_the_giant_and_assigns_masters(g):
    ps = preprocess(g, partition_arcs=64)
    owner, vowner, split = multi.plan(ps, 4)
    K = ps.num_partitions
    assert owner.shape == (K,) and owner.min() >= 0 and owner.max() < 4
    assert split.any(), "the giant SCC-vertex should span several partitions"
    assert set(owner[split].tolist()) == {0, 1, 2, 3}  # its pieces go to every worker
    assert vowner.shape == (g.num_vertices,) and vowner.max() < 4
    # a vertex's master lives with a worker that writes it (when any does)
    po, pv, off = ps.path_offsets, ps.path_vertices, ps.partition_offsets
    writers = {}
    for k in range(K):
        for p in range(off[k], off[k + 1]):
            for v in pv[po[p] + 1:po[p + 1]]:
                writers.setdefault(int(v), set()).add(int(owner[k]))
    assert all(int(vowner[v]) in ws for v, ws in writers.items())
    one, vone, _ = multi.plan(ps, 1)
    assert not one.any() and not vone.any()
    with pytest.raises(digraph.errors.InvalidParameterError):
        multi.plan(ps, 0)


def test_exchange_batches_by_owner_sorted_and_sums():
    vowner = np.array([0, 1, 0, 1, 1])
    ex = multi.Exchange(vowner, [np.array([1, 3]), np.array([0])], 2, None)
    master = np.zeros(5)
    base = master.copy()
    c0 = np.array([0.0, 2.0, 1.0, 0.0, 3.0])  # worker 0 changed 1, 2 and 4
    c1 = np.array([5.0, 0.0, 0.0, 1.0, 0.0])  # worker 1 changed 0 and 3
    ex.push(master, [c0, c1], base)
    np.testing.assert_array_equal(master, [5.0, 2.0, 1.0, 1.0, 3.0])
    batches = {(w, o): vs.tolist() for w, o, vs in ex.batches}
    assert batches == {(0, 0): [2], (0, 1): [1, 4], (1, 0): [0], (1, 1): [3]}
    assert ex.messages == 2 and ex.bytes == 12 * 3  # own masters cost nothing
    ex.pull(master, [c0, c1])
    assert np.array_equal(c0, master) and np.array_equal(c1, master)
    assert ex.bytes == 12 * 3 + 8 * 2 + 8 * 1  # worker 0 reads 1, 3 (both remote); worker 1 reads 0


def test_exchange_min_keeps_the_best():
    ex = multi.Exchange(np.array([0, 1]), [np.array([], np.int64)] * 2, 2, 0)
    master = np.array([np.inf, 7.0])
    base = master.copy()
    ex.push(master, [np.array([3.0, 5.0]), np.array([4.0, 6.0])], base)
    np.testing.assert_array_equal(master, [3.0, 5.0])


def test_rebalance_steals_only_from_an_overloaded_worker():
    owner = np.array([0, 0, 0, 1])
    split = np.array([True, True, False, True])
    stats = {}
    assert multi.rebalance(owner.copy(), split, np.array([100, 90]), stats) is None
    o = owner.copy()
    assert multi.rebalance(o, split, np.array([300, 10]), stats) == (1, 0, 1)
    assert o.tolist() == [0, 1, 0, 1] and stats["steals"] == 1  # the last split piece of worker 0
    assert multi.rebalance(o, np.zeros(4, bool), np.array([300, 10]), stats) is None


def test_threads_or_not_same_answer(g):
    """Workers in host threads (the default) or one after another: the same arcs, the same answer
    (their walks touch disjoint arcs and their own copies)."""
    ps = preprocess(g, partition_arcs=64)
    A = get_algorithm("sssp")
    src = g.vertex_ids[int(np.argmax(g.out_degree))]
    system = A.prepare(g, **A.bind(g, {"source": src}))
    out = []
    for concurrent in (True, False):
        st = RunStats.new()
        x, ok = multi.solve(g, system, pathset=ps, workers=3, stats=st, concurrent=concurrent,
                            steal=False)
        assert ok
        out.append((x, st["rounds"], st["arc_updates"]))
    np.testing.assert_array_equal(out[0][0], out[1][0])
    assert out[0][1:] == out[1][1:]


def test_stealing_does_not_change_the_answer(g):
    ps = preprocess(g, partition_arcs=32)
    a, sa = run_multi(g, "pagerank", 4, ps, steal=True)
    b, sb = run_multi(g, "pagerank", 4, ps, steal=False)
    assert np.abs(a - b).sum() <= 2e-9
    assert "steals" not in sb


def test_refuses_hindex_and_foreign_pathsets(g):
    A = get_algorithm("kcore")
    with pytest.raises(digraph.errors.InvalidParameterError, match="linear and monotone"):
        multi.solve(g, A.prepare(g), pathset=preprocess(g), workers=2, stats=RunStats.new())
    other = rmat_graph(8)
    P = get_algorithm("pagerank")
    with pytest.raises(digraph.errors.InvalidParameterError, match="another graph"):
        multi.solve(g, P.prepare(g, **P.bind(g, {})), pathset=preprocess(other), workers=2,
                    stats=RunStats.new())


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(n=st.integers(2, 30), data=st.data(), workers=st.integers(1, 4))
def test_hypothesis_graphs(n, data, workers):
    m = data.draw(st.integers(1, 90))
    src = data.draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    dst = data.draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    g = digraph.load((np.array(src), np.array(dst)), num_vertices=n)
    ps = preprocess(g, partition_arcs=4)
    pr, _ = run_multi(g, "pagerank", workers, ps, tol=1e-8)
    assert np.abs(pr - digraph.run(g, "pagerank", tol=1e-12).values).sum() <= 1e-8
    d, _ = run_multi(g, "sssp", workers, ps, source=0)
    np.testing.assert_array_equal(d, digraph.run(g, "sssp", source=0).values)


@pytest.mark.datasets
def test_real_graph_four_workers():
    g = digraph.load(dataset_path("p2p-Gnutella08.txt.gz"))
    ps = preprocess(g, partition_arcs=512)
    pr, st = run_multi(g, "pagerank", 4, ps, tol=1e-8)
    assert np.abs(pr - digraph.run(g, "pagerank", tol=1e-12).values).sum() <= 1e-8
    assert sum(st["worker_arcs"]) == st["arcs_examined"]


@pytest.mark.gpu
@pytest.mark.parametrize("workers", [1, 2])
def test_gpu_workers_match_cpu_workers(workers):
    """Workers on a GPU (the CUDA simulator without one) give the CPU workers' answers."""
    from digraph.dispatch.runtime.cuda.backend import backend
    from digraph.dispatch.engines.path.gpus_worker import gpu_worker_factory
    from digraph.errors import NotAvailableError
    try:
        backend("cuda")
    except NotAvailableError as e:
        pytest.skip(str(e))
    g = digraph.load((np.array([0, 1, 2, 2, 3, 4, 4, 5, 1, 5]), np.array([1, 2, 0, 3, 4, 5, 1, 3, 4, 0])))
    ps = preprocess(g, partition_arcs=3)
    for name, params in (("pagerank", {}), ("sssp", {"source": 0})):
        A = get_algorithm(name)
        system = A.prepare(g, **A.bind(g, params))
        stats = RunStats.new()
        make = gpu_worker_factory(["cuda"], stats)
        x, ok = multi.solve(g, system, pathset=ps, workers=workers, tol=1e-7, stats=stats,
                            make_worker=make)
        assert ok
        ref, _ = run_multi(g, name, workers, ps, tol=1e-9, **params)
        got = A.finalize(g, x, **A.bind(g, params))
        if name == "pagerank":
            assert np.abs(got - ref).sum() <= 1e-7
        else:
            np.testing.assert_array_equal(got, ref)
        assert stats["bytes_h2d"] > 0 and stats["bytes_d2h"] > 0
