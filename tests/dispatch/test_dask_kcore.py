"""k-core on a Dask cluster (``digraph.run(g, "kcore", cluster=client)``, the h-index ``bsp``
rounds of :mod:`digraph.dispatch.engines.push.cluster_hindex`): the exact core numbers of the
peeling reference and of networkx, round for round and counter for counter the one-process
``bsp``; its shards of undirected neighbour lists beside the in-arc shards of PageRank and SSSP;
clear refusals; a worker killed mid-run, the run restarted from its checkpoint.

One ``LocalCluster`` of two worker processes (one thread each) serves the whole module; the
test that kills a worker runs last.
"""


import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
nx = pytest.importorskip("networkx")

import digraph  # noqa: E402
from digraph.dispatch.engines.power.cluster import ClusterSettings  # noqa: E402
from digraph.errors import InvalidParameterError  # noqa: E402
from digraph.generators import rmat  # noqa: E402

from conftest import local_dask_client, worker_killer  # noqa: E402
from references import core_peeling  # noqa: E402


@pytest.fixture(scope="module")
def client():
    with local_dask_client(2) as c:
        yield c


def _multigraph():
    """Random arcs with parallel arcs, reciprocated pairs and self-loops."""
    rng = np.random.default_rng(7)
    n, m = 300, 1200
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    src[:30], dst[30:60] = dst[:30], src[:30]  # self-loops, then those arcs' reverses
    src = np.concatenate([src, src[60:200]])  # parallel arcs
    dst = np.concatenate([dst, dst[60:200]])
    return digraph.load((src, dst), num_vertices=n)


def _simple_rmat(seed=3):
    """The distinct arcs of an R-MAT graph, self-loops dropped (networkx's DiGraph of them)."""
    g = digraph.load(rmat(10, 4, seed=seed))
    pairs = np.unique(np.stack([g.arc_sources, g.out_targets], 1), axis=0)
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    return digraph.load((pairs[:, 0], pairs[:, 1]), num_vertices=g.num_vertices)


def _isolated():
    """Three cliques of 5, 8 and 12 vertices and 40 isolated vertices, as an undirected graph
    (both arcs of each edge; the answer halved)."""
    G = nx.Graph()
    G.add_nodes_from(range(65))
    start = 0
    for size in (5, 8, 12):
        G.add_edges_from((start + a, start + b) for a in range(size) for b in range(a + 1, size))
        start += size
    e = np.array(list(G.edges()))
    g = digraph.Graph.from_arrays(np.concatenate([e[:, 0], e[:, 1]]),
                                  np.concatenate([e[:, 1], e[:, 0]]), num_vertices=65,
                                  directed=False)
    return g, G


def _networkx(g):
    """networkx ``core_number`` of the DiGraph of ``g``'s arcs (a simple graph), by index."""
    G = nx.DiGraph()
    G.add_nodes_from(range(g.num_vertices))
    G.add_edges_from(zip(g.arc_sources.tolist(), g.out_targets.tolist()))
    core = nx.core_number(G)
    return np.array([core[i] for i in range(g.num_vertices)])


def _same_as_one_process(r, g):
    one = digraph.run(g, "kcore", mode="bsp")
    assert np.array_equal(r.values, one.values)
    for k in ("rounds", "vertex_updates", "arc_updates", "dense_rounds", "sparse_rounds"):
        assert r.stats[k] == one.stats[k], k
    return one


@pytest.mark.parametrize("name", ["multigraph", "rmat", "isolated"])
def test_core_numbers_are_exact_and_the_one_process_bsp_round_for_round(client, name):
    if name == "isolated":
        g, G = _isolated()
        core = nx.core_number(G)
        want = np.array([core[i] for i in range(65)])
    else:
        g = _multigraph() if name == "multigraph" else _simple_rmat()
        want = core_peeling(g.num_vertices, g.arc_sources, g.out_targets)
        if name == "rmat":
            assert np.array_equal(want, _networkx(g))
    r = digraph.run(g, "kcore", cluster=client)
    s, d = r.stats, r.stats["dask"]
    assert s["engine"] == "dask-bsp" and s["mode"] == "bsp" and s["converged"]
    assert s["route"]["code"] == "cluster-hindex" and "2 workers" in s["route"]["placement"]
    assert r.values.dtype == np.int64 and np.array_equal(r.values, want)
    if name == "isolated":
        assert (r.values[25:] == 0).all() and r.values[13:25].tolist() == [11] * 12
    _same_as_one_process(r, g)
    # the workers' lists are the undirected neighbour lists: each arc twice, loops dropped
    loops = int(np.count_nonzero(g.arc_sources == g.out_targets))
    assert d["workers"] == 2 and sum(d["arcs"]) == 2 * (g.num_arcs - loops)
    # 12 bytes a (vertex, other worker reading it) pair: every entry once at the start, then
    # the estimates that fell
    assert 0 < d["bytes_between_workers"] <= (12 * (g.num_vertices + s["vertex_updates"])
                                              + 16 * (s["rounds"] + 1))  # and each round's count
    assert 1 <= d["batches"] <= max(1, s["rounds"] - 1)  # the rounds ran among the workers


def test_pagerank_sssp_and_kcore_on_one_graph_share_the_client(client):
    g = _simple_rmat(seed=11)
    k1 = digraph.run(g, "kcore", cluster=client)
    assert not k1.stats["dask"]["shards_reused"]
    p = digraph.run(g, "pagerank", cluster=client, tol=1e-8)
    assert p.stats["engine"] == "dask-power" and not p.stats["dask"]["shards_reused"]
    s = digraph.run(g, "sssp", source=g.vertex_ids[0], cluster=client)
    assert s.stats["engine"] == "dask-bsp" and s.stats["dask"]["shards_reused"]
    k2 = digraph.run(g, "kcore", cluster=client, mode="bsp")
    d = k2.stats["dask"]
    assert k2.stats["route"]["code"] == "asked" and d["shards_reused"]
    assert d["shard_loads"] == 0 and d["shard_runs"] == [2, 2]
    assert np.array_equal(k1.values, k2.values) and np.array_equal(k1.values, _networkx(g))
    one = digraph.run(g, "pagerank", tol=1e-8)
    assert np.abs(p.values - one.values).sum() <= 2e-8


def test_refusals_are_clear(client):
    g = _multigraph()
    with pytest.raises(InvalidParameterError, match="mode='peel' does not run on a Dask cluster "
                                                    ".*hindex family; there 'bsp' does"):
        digraph.run(g, "kcore", cluster=client, mode="peel")
    h = digraph.load_distributed(g, client)
    try:  # a handle scattered from this process runs k-core from its Graph
        r = digraph.run(h, "kcore", cluster=client)
        assert np.array_equal(r.values, digraph.algorithms.KCore().reference(g))
        a = digraph.run(h, "adsorption", cluster=client, seeds=[g.vertex_ids[0]], tol=1e-9)
        one = digraph.run(g, "adsorption", seeds=[g.vertex_ids[0]], tol=1e-9)
        assert np.abs(a.values - one.values).sum() <= 2e-9
    finally:
        h.release()


def test_warmup_compiles_a_workers_hindex_rounds():
    from digraph.dispatch.engines import warm
    from digraph.smx.cpu import ranges
    warm.WARM.difference_update({k for k in warm.WARM if k[:2] == ("bsp", "hindex")})
    warm.cpu("bsp", "hindex", warm.tiny_graph(), variants="all")  # as digraph.warmup asks
    assert ranges.hindex_range_round.signatures and ranges.hindex_range_round_serial.signatures

def test_a_killed_worker_restarts_the_run_from_its_checkpoint(client):
    """Runs last: the killed worker's nanny starts a new one at a new address."""
    n = 80  # a path: the estimates fall one vertex further from each end a round
    g = digraph.load((np.arange(n - 1), np.arange(1, n)), num_vertices=n)
    one = digraph.run(g, "kcore", mode="bsp")
    assert one.stats["rounds"] > 20 and (one.values == 1).all()
    client.wait_for_workers(2, timeout=60)
    kill_at_round_3, victim, killed = worker_killer(client, 3)
    r = digraph.run(g, "kcore", cluster=client, checkpoint_every=2, progress=kill_at_round_3,
                    settings=[ClusterSettings(round_timeout_s=5.0)])
    d = r.stats["dask"]
    assert killed and d["restarts"] == 1 and d["lost_workers"] == [victim]
    # killed as the client replays rounds 3-4, one batch, checkpointed when it came back:
    # the next batch finds the worker gone, and the run resumes from round 4
    assert d["rounds_redone"] == 0 and d["checkpoints"] >= 2
    assert np.array_equal(r.values, one.values)
    # from the checkpoint every vertex is recomputed once more: the same estimates, in as many
    # rounds
    assert r.stats["rounds"] == one.stats["rounds"]

