"""``checkpoint_every=k`` on a Dask cluster (:mod:`digraph.dispatch.engines.power.cluster_checkpoint`):
checkpoints of the iterate every ``k`` rounds, and a worker killed mid-run making the run restart
on the workers left from the last checkpoint, with the right answer within the certified bound.

Its own ``LocalCluster`` of three worker processes (one thread each); the tests that kill a
worker run last (each killed worker's nanny starts a new one at a new address)."""

import time

import pytest

distributed = pytest.importorskip("distributed")

import digraph  # noqa: E402
from digraph.algorithms import Adsorption, PageRank  # noqa: E402
from digraph.dispatch.engines.power.cluster import ClusterSettings  # noqa: E402
from digraph.errors import InvalidParameterError, WorkerLostError  # noqa: E402
from digraph.generators import rmat  # noqa: E402

from conftest import local_dask_client, random_graph, worker_killer  # noqa: E402
from references import l1  # noqa: E402


@pytest.fixture(scope="module")
def client():
    with local_dask_client(3) as c:
        yield c


def test_checkpoint_every_is_checked():
    g = random_graph(1, 30, 100)
    with pytest.raises(InvalidParameterError, match="checkpoint_every=2 applies to a run on a "
                                                    "Dask cluster"):
        digraph.run(g, "pagerank", checkpoint_every=2)


@pytest.mark.parametrize("bad", [0, -3, 2.0, "2", True])
def test_checkpoint_every_must_be_a_positive_int(client, bad):
    with pytest.raises(InvalidParameterError, match="checkpoint_every must be a positive"):
        digraph.run(random_graph(1, 30, 100), "pagerank", cluster=client, checkpoint_every=bad)


def test_checkpoints_without_a_loss_change_nothing_but_their_cost(client):
    g = digraph.load(rmat(9, 4, seed=8))
    plain = digraph.run(g, "pagerank", cluster=client, tol=1e-8)
    r = digraph.run(g, "pagerank", cluster=client, tol=1e-8, checkpoint_every=3)
    d, s = r.stats["dask"], r.stats
    assert s["rounds"] == plain.stats["rounds"] and (r.values == plain.values).all()
    assert d["checkpoint_every"] == 3 and d["restarts"] == 0 and d["lost_workers"] == []
    # every third round but the last (whose bound met tol)
    assert d["checkpoints"] == (s["rounds"] - 1) // 3 > 0
    assert d["checkpoint_bytes"] == 8 * g.num_vertices * d["checkpoints"]
    assert d["checkpoint_s"] > 0 and d["rounds_redone"] == 0
    assert "checkpoints" not in plain.stats["dask"]


def test_with_no_worker_left_the_run_ends_with_a_named_error():
    """One in-process worker, closed mid-run: nothing to restart on.  (An in-process worker's
    closed comm is seen by the round's timeout, not at once as a killed process's.)"""
    g = digraph.load(rmat(10, 4, seed=5))
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=":0", silence_logs=40) as cluster, \
            distributed.Client(cluster) as c:
        c.wait_for_workers(1)
        (only,) = c.nthreads()
        closed = []

        def close_at_round_3(rounds, bound, **info):
            if rounds == 3 and not closed:
                cluster.sync(cluster.workers[0].close)
                closed.append(time.perf_counter())
        with pytest.raises(WorkerLostError, match="no worker left to restart on") as err:
            digraph.run(g, "pagerank", cluster=c, tol=1e-300, max_iter=10_000,
                        checkpoint_every=2, progress=close_at_round_3,
                        settings=[ClusterSettings(round_timeout_s=1.0)])
        assert err.value.worker == only and only in str(err.value)
        took = time.perf_counter() - closed[0]
        print(f"no worker left: close -> named error {took:.2f} s")
        assert took < 5.0


def test_a_worker_killed_mid_run_restarts_from_the_checkpoint(client):
    """Runs last: the killed worker's nanny starts a new one at a new address."""
    g = digraph.load(rmat(12, 8, seed=4))
    exact = PageRank().reference(g, alpha=0.99)
    kill_at_round_7, victim, killed = worker_killer(client, 7)
    r = digraph.run(g, "pagerank", cluster=client, alpha=0.99, tol=1e-10, checkpoint_every=2,
                    progress=kill_at_round_7, settings=[ClusterSettings(round_timeout_s=5.0)])
    took = time.perf_counter() - killed[0]
    s, d = r.stats, r.stats["dask"]
    assert s["converged"] and s["error_bound"] <= 1e-10
    assert d["restarts"] == 1 and d["lost_workers"] == [victim]
    assert victim not in d["addresses"] and d["workers"] in (2, 3)
    # the kill comes as the client replays rounds 7-8, one batch, whose iterate was
    # checkpointed when it came back (batches end at checkpoints): the next batch finds the
    # worker gone, and the run resumes from round 8 with no round redone
    assert d["rounds_redone"] == 0
    assert l1(r.values, exact) <= s["error_bound"]
    assert abs(r.values.sum() - 1.0) <= s["error_bound"]
    one = digraph.run(g, "pagerank", mode="power", alpha=0.99, tol=1e-10)
    assert l1(r.values, one.values) <= s["error_bound"] + one.stats["error_bound"]
    print(f"kill -> restarted answer: {took:.2f} s, {s['rounds']} rounds")
    assert took < 30.0


def test_the_affine_map_restarts_from_its_checkpoint_as_it_is(client):
    """Runs after a kill: the cluster has healed, or has two workers; one more is killed."""
    client.wait_for_workers(2, timeout=30)
    g = digraph.load(rmat(11, 6, seed=9))
    seeds = [g.vertex_ids[i] for i in (0, 3, 17, 40)]
    exact = Adsorption().reference(g, seeds=seeds)
    kill_at_round_5, victim, killed = worker_killer(client, 5)
    r = digraph.run(g, "adsorption", cluster=client, seeds=seeds, tol=1e-10,
                    checkpoint_every=4, progress=kill_at_round_5,
                    settings=[ClusterSettings(round_timeout_s=5.0)])
    took = time.perf_counter() - killed[0]
    s, d = r.stats, r.stats["dask"]
    assert s["converged"] and s["power"]["map"] == "affine"
    # killed as the client replays rounds 5-8, one batch checkpointed when it came back: the
    # run resumes from round 8
    assert d["restarts"] == 1 and d["lost_workers"] == [victim] and d["rounds_redone"] == 0
    assert l1(r.values, exact) <= s["error_bound"] <= 1e-10
    print(f"adsorption: kill -> restarted answer: {took:.2f} s, {s['rounds']} rounds")
    assert took < 30.0
