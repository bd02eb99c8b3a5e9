"""GPU workers of a Dask cluster (``digraph.run(..., cluster=client, device="cuda")``,
:mod:`digraph.dispatch.engines.power.cluster_gpu_worker`): each worker runs its range's power
rounds in the one-GPU CUDA kernels, with the same answers, rounds and counters as CPU workers,
its bound's rounding terms those of one GPU; what GPU workers do not run is refused by name.

Two workers in this process (``processes=False``) share the card, or without one Numba's CUDA
simulator, whose launches they take in turns.
"""

import dataclasses

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

import digraph  # noqa: E402
from digraph.algorithms import Adsorption, PageRank  # noqa: E402
from digraph.dispatch.engines.power import cpu as power, gpu_settings  # noqa: E402
from digraph.dispatch.engines.power.cluster_maps import GoogleRule  # noqa: E402
from digraph.errors import InvalidParameterError  # noqa: E402
from digraph.generators import rmat  # noqa: E402

from conftest import local_dask_client, random_graph  # noqa: E402
from references import Arcs, l1  # noqa: E402

pytestmark = pytest.mark.gpu

SIM_BINS = ((0, 2, 1), (2, 4, 2), (4, 8, 4))  # the simulator's blocks hold 8 threads


@pytest.fixture(scope="module")
def client():
    with local_dask_client(2, processes=False) as c:
        yield c


def _weighted(n, m, seed):
    rng = np.random.default_rng(seed)
    return Arcs(n, rng.integers(0, n, m), rng.integers(0, n, m), rng.random(m) + 0.1).graph()


@pytest.mark.parametrize("binned", [False, True], ids=["grouped", "binned"])
def test_pagerank_on_gpu_workers_equals_the_cpu_workers_run(client, binned):
    g = random_graph(4, 240, 1400)
    settings = [dataclasses.replace(gpu_settings.POWER_DEFAULT, bin_arcs=0, bins=SIM_BINS)] \
        if binned else None
    r = digraph.run(g, "pagerank", cluster=client, device="cuda", tol=1e-9, settings=settings)
    s = r.stats
    assert s["engine"] == "dask-power" and s["converged"] and s["device"] == "cuda"
    assert "2 workers, a GPU each" in s["route"]["placement"]
    assert l1(r.values, PageRank().reference(g)) <= s["error_bound"] <= 1e-9
    cpu = digraph.run(g, "pagerank", cluster=client, tol=1e-9, settings=[
        dataclasses.replace(power.DEFAULT, accelerator="none")])  # no mixes on GPU workers
    # the same rounds from the same sums; the bound differs in its rounding terms only
    assert s["rounds"] == cpu.stats["rounds"] and s["arc_updates"] == cpu.stats["arc_updates"]
    assert abs(s["error_bound"] - cpu.stats["error_bound"]) <= 1e-12
    assert l1(r.values, cpu.values) <= s["error_bound"] + cpu.stats["error_bound"]
    # the same entries; the sums mailed worker to worker carry the pull's e and blocks besides
    more = s["dask"]["bytes_between_workers"] - cpu.stats["dask"]["bytes_between_workers"]
    assert s["dask"]["workers"] == 2 and 0 <= more <= 2 * 2 * 8 * s["rounds"]


def test_weighted_and_personalised_pagerank_on_gpu_workers(client):
    g = _weighted(300, 1800, 3)
    pers = {int(v): 1.0 + v % 3 for v in range(0, 300, 11)}
    r = digraph.run(g, "pagerank", cluster=client, device="cuda", personalization=pers,
                    tol=1e-10)
    exact = PageRank().reference(g, personalization=pers)
    assert r.stats["converged"] and l1(r.values, exact) <= r.stats["error_bound"] <= 1e-10


def test_adsorption_on_gpu_workers_runs_the_affine_map_within_its_bound(client):
    g = digraph.load(rmat(8, 4, seed=5))
    params = {"seeds": [g.vertex_ids[i] for i in (0, 5, 9)]}
    r = digraph.run(g, "adsorption", cluster=client, device="cuda", tol=1e-9, **params)
    s = r.stats
    assert s["converged"] and s["power"]["map"] == "affine" and s["error_bound"] <= 1e-9
    assert l1(r.values, Adsorption().reference(g, **params)) <= s["error_bound"]
    cpu = digraph.run(g, "adsorption", cluster=client, tol=1e-9, settings=[
        dataclasses.replace(power.DEFAULT, accelerator="none")], **params)
    assert s["rounds"] == cpu.stats["rounds"]
    assert s.get("error_route") == cpu.stats.get("error_route")


def test_a_second_run_finds_the_shards_in_gpu_memory(client):
    g = digraph.load(rmat(8, 6, seed=13))
    digraph.run(g, "pagerank", cluster=client, device="cuda", tol=1e-8)
    r = digraph.run(g, "pagerank", cluster=client, device="cuda", alpha=0.9, tol=1e-9)
    assert r.stats["dask"]["shards_reused"] and r.stats["dask"]["shard_loads"] == 0
    assert l1(r.values, PageRank().reference(g, alpha=0.9)) <= r.stats["error_bound"]

    def on_gpu(dask_worker):
        p = dask_worker.plugins["digraph-power-shards"]
        return sum(getattr(s, "gpu", None) is not None for s in p.shards.values())
    assert all(k >= 1 for k in client.run(on_gpu).values())


def test_a_graph_loaded_on_the_workers_runs_on_their_gpus(client, tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    s, d = rmat(8, 4, seed=7)
    w = np.random.default_rng(7).random(s.size) + 0.5
    (tmp_path / "arcs").mkdir()
    for i, part in enumerate(np.array_split(np.arange(s.size), 3)):
        pd.DataFrame({"src": s[part], "dst": d[part], "w": w[part]}).to_parquet(
            tmp_path / "arcs" / f"part-{i}.parquet")
    g = digraph.load((s, d, w))
    h = digraph.load_distributed(tmp_path / "arcs", client, weight="w")
    try:  # the arc factors the shards hold, the dual weights found on the workers
        seeds = [int(g.vertex_ids[i]) for i in (0, 5, 40)]
        r = digraph.run(h, "adsorption", cluster=client, device="cuda", seeds=seeds, tol=1e-9)
        st = r.stats
        assert st["converged"] and st["device"] == "cuda" and st["error_route"] == "dual"
        one = digraph.run(g, "adsorption", seeds=seeds, tol=1e-10)
        assert l1(r.values, one.values) <= st["error_bound"] + one.stats["error_bound"]
        p = digraph.run(h, "pagerank", cluster=client, device="cuda", tol=1e-9)
        assert l1(p.values, PageRank().reference(g)) <= p.stats["error_bound"] <= 1e-9
    finally:
        h.release()


def test_the_gpu_rule_counts_the_pulls_rounding():
    rule = GoogleRule(0.85)
    prev = [{"s": 0.4, "sd": 0.0, "sx": 0.5}, {"s": 0.4, "sd": 0.0, "sx": 0.5}]
    now = [{"diff": 1e-9, "sy": 0.5}, {"diff": 1e-9, "sy": 0.5}]
    cpu = rule.bound(prev, now)
    gpu = rule.bound([dict(p, e=4e3, blocks=64) for p in prev], now)
    assert gpu[1] > cpu[1] and gpu[0] > cpu[0]  # a wider floor: (in-degree + 3) y and blocks
    assert gpu[2] == cpu[2]


def test_what_gpu_workers_do_not_run_is_refused_by_name(client):
    g = random_graph(1, 60, 300)
    with pytest.raises(InvalidParameterError, match="sssp|monotone family runs on the workers' "
                                                    "CPUs only"):
        digraph.run(g, "sssp", cluster=client, device="cuda", source=0)
    with pytest.raises(InvalidParameterError, match="hindex family runs on the workers' CPUs"):
        digraph.run(g, "kcore", cluster=client, device="cuda")
    rng = np.random.default_rng(2)  # vertices 55-59 have no out-arc
    sinks = digraph.load((rng.integers(0, 55, 300), rng.integers(0, 60, 300)), num_vertices=60)
    with pytest.raises(InvalidParameterError, match="dangling vector"):
        digraph.run(sinks, "pagerank", cluster=client, device="cuda", dangling={0: 1.0})
    with pytest.raises(InvalidParameterError, match="mode='bsp' does not run there"):
        digraph.run(g, "pagerank", cluster=client, device="cuda", mode="bsp")
    with pytest.raises(InvalidParameterError, match="each worker uses the first GPU it sees"):
        digraph.run(g, "pagerank", cluster=client, device="cuda:1")
