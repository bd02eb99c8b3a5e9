"""Min/max systems on a Dask cluster (``digraph.run(g, "sssp", cluster=client)``, the ``bsp``
rounds of :mod:`digraph.dispatch.engines.push.cluster`): the exact answer of Dijkstra and of the
one-process ``bsp``, round for round and counter for counter; the power iteration's shards
shared; a graph read by the workers; clear refusals; a worker killed mid-run named, or the run
restarted from its checkpoint.

One ``LocalCluster`` of two worker processes (one thread each) serves the whole module; the
test that kills workers runs last.
"""

import time

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

import digraph  # noqa: E402
from digraph.algorithms import REQUIRED, Algorithm, MonotoneSystem, SSSP  # noqa: E402
from digraph.dispatch.engines.power.cluster import ClusterSettings  # noqa: E402
from digraph.errors import (InvalidParameterError, InvalidWeightError,  # noqa: E402
                            WorkerLostError)
from digraph.generators import rmat  # noqa: E402

from conftest import local_dask_client, worker_killer  # noqa: E402
from references import Arcs, sssp_networkx  # noqa: E402


@pytest.fixture(scope="module")
def client():
    with local_dask_client(2) as c:
        yield c


class Widest(Algorithm):
    """Largest bottleneck weight from ``source``: combine max, relax min."""

    name = "widest_dask_test"
    parameters = {"source": REQUIRED}

    def prepare(self, graph, source):
        init = np.full(graph.num_vertices, -np.inf)
        init[graph.index_of(source, "source")] = np.inf
        return MonotoneSystem(init=init, relax="min", combine="max", arc_value=graph.arc_weights())


def _weighted(seed=4, n=400, m=1600):
    """Random weighted arcs, zero weights among them; vertices 380.. have no in-arc (unreachable
    from anywhere else)."""
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, m), rng.integers(0, 380, m)
    return Arcs(n, src, dst, rng.integers(0, 6, m) * 0.5)


def _grid(side):
    """A ``side × side`` grid, arcs both ways: about ``2·side`` rounds from a corner."""
    v = np.arange(side * side).reshape(side, side)
    a = np.concatenate([v[:, :-1].ravel(), v[:-1, :].ravel()])
    b = np.concatenate([v[:, 1:].ravel(), v[1:, :].ravel()])
    return digraph.load((np.concatenate([a, b]), np.concatenate([b, a])),
                        num_vertices=side * side)


def _same_as_one_process(r, g, algo="sssp", **params):
    one = digraph.run(g, algo, mode="bsp", **params)
    assert np.array_equal(r.values, one.values)
    for k in ("rounds", "sparse_rounds", "vertex_updates", "arc_updates"):
        assert r.stats[k] == one.stats[k], k
    return one


@pytest.mark.parametrize("weighted", [False, True], ids=["rmat", "random-weighted"])
def test_sssp_is_dijkstra_and_the_one_process_bsp_round_for_round(client, weighted):
    arcs = _weighted() if weighted else None
    g = arcs.graph() if weighted else digraph.load(rmat(10, 4, seed=3))
    source = g.vertex_ids[int(np.argmax(g.out_degree))]
    r = digraph.run(g, "sssp", source=source, cluster=client)
    s, d = r.stats, r.stats["dask"]
    assert s["engine"] == "dask-bsp" and s["mode"] == "bsp" and s["converged"]
    assert s["route"]["code"] == "cluster-bsp" and "2 workers" in s["route"]["placement"]
    assert np.array_equal(r.values, SSSP().reference(g, source=source))
    if weighted:
        assert np.array_equal(r.values, sssp_networkx(arcs, source))
        assert np.isinf(r.values[380:]).all() and np.isfinite(r.values).sum() > 100
    _same_as_one_process(r, g, source=source)
    assert d["workers"] == 2 and sum(d["arcs"]) == g.num_arcs
    # 12 bytes a (changed vertex, other worker reading it) pair: the frontier's entries only,
    # and each round's count of changed rows from each worker to the other (8 bytes)
    pairs = 12 * (s["vertex_updates"] + 1)
    assert 0 < d["bytes_between_workers"] <= pairs + 16 * (s["rounds"] + 1)
    # the rounds ran among the workers: one call from the client ran many of them
    assert 1 <= d["batches"] < s["rounds"]
    assert len(d["exchange_s"]) == len(d["idle_share"]) == 2
    assert all(0.0 <= x <= 1.0 for x in d["idle_share"])


def test_a_user_max_system_and_shards_shared_with_pagerank(client):
    g = _weighted(seed=9).graph()
    p = digraph.run(g, "pagerank", cluster=client, tol=1e-8)
    assert not p.stats["dask"]["shards_reused"]
    r = digraph.run(g, Widest(), source=3, cluster=client, mode="bsp")
    assert r.stats["engine"] == "dask-bsp" and r.stats["dask"]["shards_reused"]
    assert r.stats["route"]["code"] == "asked"
    _same_as_one_process(r, g, Widest(), source=3)
    assert (r.values == -np.inf).sum() > 0 and r.values[3] == np.inf


def test_sssp_on_a_graph_read_by_the_workers(client, tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    pytest.importorskip("dask.dataframe")
    arcs = _weighted(seed=5)
    (tmp_path / "arcs").mkdir()
    for i, part in enumerate(np.array_split(np.arange(arcs.m), 2)):
        pd.DataFrame({"src": arcs.src[part], "dst": arcs.dst[part], "w": arcs.w[part]}) \
            .to_parquet(tmp_path / "arcs" / f"part-{i}.parquet")
    h = digraph.load_distributed(tmp_path / "arcs", client, weight="w")
    try:
        source = int(arcs.src[0])
        for weighted in (True, False):
            r = digraph.run(h, "sssp", source=source, cluster=client, weights=weighted)
            assert r.stats["engine"] == "dask-bsp" and r.stats["dask"]["shards_reused"]
            want = sssp_networkx(arcs, source, weighted)[r.vertex_ids]
            assert np.array_equal(r.values, want)
    finally:
        h.release()


def test_refusals_are_clear(client):
    g = _weighted(seed=2).graph()
    with pytest.raises(InvalidParameterError, match="mode='vertex-async' does not run on a "
                                                    "Dask cluster.*hindex family; there 'bsp'"):
        digraph.run(g, "kcore", cluster=client, mode="vertex-async")
    with pytest.raises(InvalidParameterError, match="mode='power'.*not the monotone family"):
        digraph.run(g, "sssp", source=0, cluster=client, mode="power")
    with pytest.raises(InvalidParameterError, match="mode='bsp' does not run on a Dask cluster "
                                                    "\\(cluster=\\) yet for the linear family; "
                                                    "there 'power' does"):
        digraph.run(g, "pagerank", cluster=client, mode="bsp")
    neg = Arcs(3, [0, 1], [1, 2], [1.0, -2.0]).graph()
    with pytest.raises(InvalidWeightError, match="negative"):
        digraph.run(neg, "sssp", source=0, cluster=client)


def test_a_killed_worker_is_named_or_the_run_restarts_from_its_checkpoint(client):
    """Runs last: each killed worker's nanny starts a new one at a new address."""
    g = _grid(30)
    one = digraph.run(g, "sssp", source=0, mode="bsp")
    assert one.stats["rounds"] > 20
    for every in (None, 2):
        client.wait_for_workers(2, timeout=60)
        kill_at_round_3, victim, killed = worker_killer(client, 3)
        run = dict(source=0, cluster=client, checkpoint_every=every, progress=kill_at_round_3,
                   settings=[ClusterSettings(round_timeout_s=5.0)])
        if every is None:
            with pytest.raises(WorkerLostError) as err:
                digraph.run(g, "sssp", **run)
            assert err.value.worker == victim and victim in str(err.value)
            assert time.perf_counter() - killed[0] < 10.0
            deadline = time.time() + 30
            while victim in client.nthreads() and time.time() < deadline:
                time.sleep(0.2)
            continue
        r = digraph.run(g, "sssp", **run)
        d = r.stats["dask"]
        assert killed and d["restarts"] == 1 and d["lost_workers"] == [victim]
        # killed as the client replays rounds 3-4, one batch, whose values were checkpointed
        # when it came back (batches end at checkpoints): the next batch finds the worker gone
        # and the run resumes from round 4 with no round redone, in as many rounds
        assert d["rounds_redone"] == 0 and d["checkpoints"] >= 2
        assert np.array_equal(r.values, one.values)
        assert r.stats["rounds"] == one.stats["rounds"]
        assert r.stats["vertex_updates"] >= one.stats["vertex_updates"]
