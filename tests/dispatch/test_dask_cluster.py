"""The Dask cluster placement (``digraph.run(..., cluster=client)``, the power iteration of
:mod:`digraph.dispatch.engines.power.cluster`): the same answers as one process within the
certified bound, shards kept on the workers for the next run, values exchanged worker to worker,
clear refusals, and a worker killed mid-run ending the run with an error naming it.

One ``LocalCluster`` of two worker processes (one thread each) serves the whole module; the
test that kills a worker runs last (its nanny starts a new one at a new address).
"""

import re
import time
from pathlib import Path

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

import digraph  # noqa: E402
from digraph.algorithms import Adsorption, PageRank  # noqa: E402
from digraph.dispatch.engines.power.cluster import ClusterSettings  # noqa: E402
from digraph.dispatch.engines.power.cluster_maps import SCALARS  # noqa: E402
from digraph.dispatch.engines.power.cluster_reads import compact, reads  # noqa: E402
from digraph.dispatch.runtime.cuda.ranges import shard_ranges  # noqa: E402
from digraph.errors import InvalidParameterError, WorkerLostError  # noqa: E402
from digraph.generators import citation, rmat  # noqa: E402

from conftest import local_dask_client, random_graph, worker_killer  # noqa: E402
from references import Arcs, l1, pagerank_exact  # noqa: E402


@pytest.fixture(scope="module")
def client():
    with local_dask_client(2) as c:
        yield c


def test_each_shard_reads_exactly_its_sources_through_the_compact_vector():
    g = random_graph(2, 300, 1500)
    bounds = shard_ranges(g.in_offsets, 3)
    full = np.random.default_rng(0).random(g.num_vertices)
    for own in range(3):
        a0, a1 = g.in_offsets[bounds[own]], g.in_offsets[bounds[own + 1]]
        src = g.in_sources[a0:a1]
        idx_of = reads(src, bounds, own)
        assert sorted(idx_of) == [h for h in range(3) if h != own]
        for h, idx in idx_of.items():  # the sources in range h, no more
            inside = src[(src >= bounds[h]) & (src < bounds[h + 1])]
            assert np.array_equal(idx + bounds[h], np.unique(inside))
        src_c, base = compact(src, bounds, own, idx_of)
        zc = np.empty(base[-1])
        for h in range(3):  # each range's part copied into its slice, as received
            part = (np.arange(bounds[h], bounds[h + 1]) if h == own else idx_of[h] + bounds[h])
            zc[base[h]:base[h + 1]] = full[part]
        assert np.array_equal(zc[src_c], full[src])


def _exact(g, **params):
    return PageRank().reference(g, **params)


@pytest.mark.parametrize("make", [lambda: digraph.load(rmat(10, 4, seed=3)),
                                  lambda: digraph.load(citation(1500, seed=2)),
                                  lambda: random_graph(4, 600, 2500)],
                         ids=["rmat", "citation", "random-dangling"])
def test_pagerank_equals_the_exact_answer_within_the_bound(client, make):
    g = make()
    r = digraph.run(g, "pagerank", cluster=client, tol=1e-10)
    s = r.stats
    assert s["engine"] == "dask-power" and s["mode"] == "power" and s["converged"]
    assert s["route"]["code"] == "cluster-power" and "2 workers" in s["route"]["placement"]
    assert s["error_bound"] <= 1e-10
    exact = _exact(g)
    assert l1(r.values, exact) <= s["error_bound"]
    one = digraph.run(g, "pagerank", mode="power", tol=1e-10)
    assert l1(r.values, one.values) <= s["error_bound"] + one.stats["error_bound"]
    d = s["dask"]
    assert d["workers"] == 2 and sum(d["vertices"]) == g.num_vertices
    assert sum(d["arcs"]) == g.num_arcs
    assert s["arc_updates"] == s["rounds"] * g.num_arcs == s["dense_rounds"] * g.num_arcs
    # the entries of z, and each round's sums (a few scalars, and the pieces of Anderson's
    # dots where it records) from each worker to the other
    from digraph.dispatch.engines.power.cluster_anderson import EXTRA
    from digraph.dispatch.engines.power.cpu import DEFAULT as POWER
    sums = 8 * (len(SCALARS) + 3 * POWER.anderson_memory + EXTRA) * 2 * s["rounds"]
    assert 0 < d["bytes_between_workers"] <= 8 * g.num_vertices * (s["rounds"] + 1) + sums
    # the rounds ran among the workers: one call from the client ran many of them
    assert 1 <= d["batches"] < s["rounds"]
    assert len(d["exchange_s"]) == len(d["idle_share"]) == 2
    assert all(0.0 <= x <= 1.0 for x in d["idle_share"])


def test_weighted_personalised_and_dangling_pagerank(client):
    rng = np.random.default_rng(7)
    n, m = 400, 2400
    arcs = Arcs(n, rng.integers(0, n, m), rng.integers(0, n, m), rng.random(m) + 0.1)
    g = arcs.graph()
    pers = {int(v): float(rng.random()) for v in rng.choice(n, 30, replace=False)}
    r = digraph.run(g, "pagerank", cluster=client, personalization=pers, tol=1e-11)
    assert l1(r.values, pagerank_exact(arcs, 0.85, pers)) <= r.stats["error_bound"] <= 1e-11
    dang = {int(v): 1.0 for v in range(0, n, 7)}
    r = digraph.run(g, "pagerank", cluster=client, dangling=dang, tol=1e-11)
    assert r.stats["engine"] == "dask-power"
    assert l1(r.values, _exact(g, dangling=dang)) <= r.stats["error_bound"] <= 1e-11


def test_a_second_run_reuses_the_shards(client):
    g = digraph.load(rmat(9, 6, seed=11))
    first = digraph.run(g, "pagerank", cluster=client, tol=1e-8).stats["dask"]
    assert not first["shards_reused"] and first["shard_loads"] == 2
    assert first["shard_runs"] == [1, 1]
    # the same graph built again: the shards are found by its fingerprint
    again = digraph.load((g.arc_sources, g.out_targets), num_vertices=g.num_vertices)
    r = digraph.run(again, "pagerank", cluster=client, alpha=0.9, tol=1e-9)
    second = r.stats["dask"]
    assert second["shards_reused"] and second["shard_loads"] == 0
    assert second["shard_runs"] == [2, 2]
    assert l1(r.values, _exact(g, alpha=0.9)) <= r.stats["error_bound"]


def test_refusals_are_clear(client):
    g = random_graph(1, 50, 200)
    with pytest.raises(InvalidParameterError, match="distributed.Client"):
        digraph.run(g, "pagerank", cluster="tcp://127.0.0.1:8786")
    with pytest.raises(InvalidParameterError, match="each worker uses the first GPU it sees"):
        digraph.run(g, "pagerank", cluster=client, device="cuda:0")
    with pytest.raises(InvalidParameterError, match="threads="):
        digraph.run(g, "pagerank", cluster=client, threads=1)
    with pytest.raises(InvalidParameterError, match="mode='scc'.*not the monotone family"):
        digraph.run(g, "sssp", cluster=client, source=0, mode="scc")
    with pytest.raises(InvalidParameterError, match="mode='scc' does not run on a Dask cluster"):
        digraph.run(g, "pagerank", cluster=client, mode="scc")
    with pytest.raises(InvalidParameterError, match="mode='peel' does not run on a Dask cluster "
                                                    ".*hindex family; there 'bsp' does"):
        digraph.run(g, "kcore", cluster=client, mode="peel")


@pytest.mark.parametrize("make, params", [
    (lambda: digraph.load(rmat(10, 4, seed=3)), {"seeds": [0, 5, 9]}),
    (lambda: _weighted(500, 3000), {"seeds": list(range(0, 500, 37)), "beta": 0.7}),
], ids=["rmat", "random-weighted"])
def test_adsorption_runs_the_affine_map_within_its_bound(client, make, params):
    g = make()
    params = dict(params, seeds=[g.vertex_ids[i] for i in params["seeds"]])  # by index
    r = digraph.run(g, "adsorption", cluster=client, tol=1e-9, **params)
    s = r.stats
    assert s["engine"] == "dask-power" and s["converged"] and s["error_bound"] <= 1e-9
    assert s["power"]["map"] == "affine"
    exact = Adsorption().reference(g, **params)
    assert l1(r.values, exact) <= s["error_bound"]
    one = digraph.run(g, "adsorption", tol=1e-9, **params)
    assert l1(r.values, one.values) <= s["error_bound"] + one.stats["error_bound"]
    assert s["arc_updates"] == s["rounds"] * g.num_arcs and s["dask"]["workers"] == 2


def _weighted(n, m):
    rng = np.random.default_rng(6)
    return Arcs(n, rng.integers(0, n, m), rng.integers(0, n, m), rng.random(m) + 0.1).graph()


def test_anderson_mixes_on_the_workers_cut_the_rounds_within_the_bound(client):
    """Where the plain rate slows, the workers mix their ranges with the coefficients every
    worker finds alike (cluster_anderson): fewer rounds than the plain rounds, the same answer
    within the certified bound, and no mix at all where the plain rate is fast (R-MAT)."""
    import dataclasses
    from digraph.dispatch.engines.power import cpu as power
    plain = [dataclasses.replace(power.DEFAULT, accelerator="none")]
    g = digraph.load(citation(1500, seed=2))
    r = digraph.run(g, "pagerank", cluster=client, tol=1e-10)
    p = digraph.run(g, "pagerank", cluster=client, tol=1e-10, settings=plain)
    s = r.stats
    assert s["converged"] and s["power"]["anderson"] == power.DEFAULT.anderson_memory
    assert s["power"]["anderson_mixes"] > 0 and p.stats["power"]["anderson_mixes"] == 0
    assert s["rounds"] < p.stats["rounds"] - 5
    assert l1(r.values, _exact(g)) <= s["error_bound"] <= 1e-10
    one = digraph.run(g, "pagerank", mode="power", tol=1e-10,
                      settings=[dataclasses.replace(power.DEFAULT, accelerator="anderson")])
    assert abs(s["rounds"] - one.stats["rounds"]) <= 2  # one round later to start, at most
    # the recording rounds' second all-gather: a's and b's bytes on top of the plain rounds'
    assert s["dask"]["bytes_between_workers"] > 0
    fast = digraph.load(rmat(10, 4, seed=3))
    f = digraph.run(fast, "pagerank", cluster=client, tol=1e-10)
    assert f.stats["power"]["anderson"] == 0 and f.stats["power"]["anderson_mixes"] == 0
    # the affine map (adsorption) mixes too, on its dual route: R-MAT's rounds are slow there
    seeds = [fast.vertex_ids[i] for i in (0, 5, 9)]
    a = digraph.run(fast, "adsorption", cluster=client, seeds=seeds, tol=1e-9)
    q = digraph.run(fast, "adsorption", cluster=client, seeds=seeds, tol=1e-9, settings=plain)
    assert a.stats["power"]["anderson_mixes"] > 0 and a.stats["rounds"] < q.stats["rounds"]
    assert l1(a.values, Adsorption().reference(fast, seeds=seeds)) <= a.stats["error_bound"]


def test_a_cluster_without_workers_is_refused():
    with distributed.LocalCluster(n_workers=0, processes=False, dashboard_address=":0",
                                  silence_logs=40) as cluster, distributed.Client(cluster) as c:
        with pytest.raises(InvalidParameterError, match="has no worker"):
            digraph.run(random_graph(0, 20, 60), "pagerank", cluster=c)


def test_the_workers_stop_with_the_driver_at_the_rounding_floor(client):
    """``tol`` below what rounding allows: the stop rule's floor ends the run (``floor_limited``),
    a verdict on the differences' trend that every worker reaches in the same round as the
    client's driver, mid-batch (else the run would raise, the workers ahead of the bound)."""
    g = digraph.load(rmat(10, 4, seed=8))
    r = digraph.run(g, "pagerank", cluster=client, tol=1e-300, max_iter=10_000)
    s, d = r.stats, r.stats["dask"]
    assert s["converged"] and s["floor_limited"] and s["error_bound"] <= 1e-12
    assert 1 <= d["batches"] <= 3 and s["rounds"] < 200
    assert l1(r.values, _exact(g)) <= s["error_bound"]


def test_the_docs_example_runs(capsys):
    """docs/distributed.md's example, as written (its own LocalCluster)."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "distributed.md").read_text("utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) == 1
    exec(compile(blocks[0], "docs/distributed.md", "exec"), {"__name__": "docs_example"})
    out = capsys.readouterr().out
    assert "dask-power" in out and out.rstrip().endswith("True")


def test_a_worker_killed_mid_run_is_named_within_seconds(client):
    """Runs last: the nanny restarts the killed worker at a new address."""
    g = digraph.load(rmat(10, 4, seed=5))
    kill_at_round_3, victim, killed = worker_killer(client, 3)
    with pytest.raises(WorkerLostError) as err:
        digraph.run(g, "pagerank", cluster=client, tol=1e-300, max_iter=10_000,
                    progress=kill_at_round_3, settings=[ClusterSettings(round_timeout_s=5.0)])
    assert killed and time.perf_counter() - killed[0] < 10.0
    assert err.value.worker == victim and victim in str(err.value)
    # the cluster heals (a new worker at a new address): the next run loads new shards
    client.wait_for_workers(2, timeout=60)
    deadline = time.time() + 30
    while victim in client.nthreads() and time.time() < deadline:
        time.sleep(0.2)
    r = digraph.run(g, "pagerank", cluster=client, tol=1e-8)
    assert not r.stats["dask"]["shards_reused"] and victim not in r.stats["dask"]["addresses"]
    assert l1(r.values, _exact(g)) <= r.stats["error_bound"]
