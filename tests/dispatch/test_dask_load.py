"""``digraph.load_distributed``: partitioned Parquet and CSV/TSV edge lists read on the workers of
a Dask cluster, renumbered there and shuffled to their owners by range; PageRank on the handle
equal to the one-process run within the certified bounds; the answer written back as
partitioned Parquet; clear errors; ``digraph run --scheduler``.

One ``LocalCluster`` of two worker processes (one thread each) serves the whole module.
"""

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")
pytest.importorskip("dask.dataframe")

import digraph  # noqa: E402
from digraph.algorithms import (REQUIRED, Algorithm, LinearSystem,  # noqa: E402
                                MonotoneSystem)
from digraph.errors import (GraphFormatError, InvalidParameterError,  # noqa: E402
                            VertexNotFoundError, WorkerLostError)
from digraph.generators import rmat  # noqa: E402

from conftest import local_dask_client  # noqa: E402
from references import l1  # noqa: E402


@pytest.fixture(scope="module")
def client():
    with local_dask_client(2) as c:
        yield c


def _arcs(seed=3, weighted=False, far=True):
    """R-MAT arcs with labels ``7·id + 1000`` (vertices of no out-arc among them), with ``far``
    two more arcs into far labels and from a negative one (the labels then renumbered by binary
    search, else by a dense index)."""
    s, d = rmat(9, 4, seed=seed)
    s, d = s * 7 + 1000, d * 7 + 1000
    if far:
        s = np.concatenate([s, [5, -3]])
        d = np.concatenate([d, [10**12, 10**12 + 7]])
    w = np.random.default_rng(seed).random(s.size) + 0.5 if weighted else None
    return s, d, w


def _write(folder, s, d, w=None, parts=3, kind="parquet", names=("src", "dst", "w")):
    folder.mkdir()
    cut = np.linspace(0, s.size, parts + 1).astype(int)
    for i in range(parts):
        cols = {names[0]: s[cut[i]:cut[i + 1]], names[1]: d[cut[i]:cut[i + 1]]}
        if w is not None:
            cols[names[2]] = w[cut[i]:cut[i + 1]]
        df = pd.DataFrame(cols)
        if kind == "parquet":
            df.to_parquet(folder / f"part-{i}.parquet")
        else:
            df.to_csv(folder / f"part-{i}.{kind}", sep="\t" if kind == "tsv" else ",",
                      index=False, header=kind == "csv")
    return folder


def _check_against_one_process(client, h, g, **params):
    r = digraph.run(h, "pagerank", cluster=client, tol=1e-10, **params)
    s = r.stats
    assert s["engine"] == "dask-power" and s["converged"] and s["error_bound"] <= 1e-10
    one = digraph.run(g, "pagerank", mode="power", tol=1e-10, **params)
    assert l1(r.values, one.values) <= s["error_bound"] + one.stats["error_bound"]
    assert np.array_equal(r.vertex_ids, g.vertex_ids)
    d = s["dask"]
    assert d["workers"] == 2 and sum(d["arcs"]) == g.num_arcs
    assert sum(d["vertices"]) == g.num_vertices and d["shards_reused"]
    assert s["arc_updates"] == s["rounds"] * g.num_arcs and d["bytes_between_workers"] > 0
    return r


def test_parquet_loads_renumbers_and_runs_as_one_process(client, tmp_path):
    s, d, _ = _arcs()
    h = digraph.load_distributed(_write(tmp_path / "arcs", s, d), client)
    g = digraph.load((s, d))
    assert (h.num_vertices, h.num_arcs) == (g.num_vertices, g.num_arcs)
    assert h.bounds[0] == 0 and h.bounds[-1] == g.num_vertices and len(h.workers) == 2
    assert np.array_equal(h.vertex_ids, g.vertex_ids)  # the labels round-trip, sorted
    assert np.array_equal(h.out_degree, g.out_degree)
    assert np.array_equal(h.in_offsets, g.in_offsets)
    r = _check_against_one_process(client, h, g)
    # the pre-flight memory estimate of a handle, from its cut and in-degrees' running sum
    from digraph.dispatch.engines.power.cluster_checks import shard_bytes
    from digraph.dispatch.engines.power.cpu import DEFAULT as POWER
    rings = 2 * POWER.anderson_memory + 2  # PageRank's Anderson mixes on the workers
    assert r.stats["dask"]["shard_bytes"] == list(shard_bytes(h.in_offsets, h.bounds, False,
                                                              extra_vectors=rings))
    # checkpoints of a run on a handle (the snapshots come from its pinned shards)
    c = digraph.run(h, "pagerank", cluster=client, tol=1e-10, checkpoint_every=3)
    assert c.stats["dask"]["checkpoints"] >= 1 and c.stats["dask"]["restarts"] == 0
    assert l1(c.values, r.values) <= c.stats["error_bound"] + r.stats["error_bound"]
    # the same arcs from memory on the cluster: the same shards' content, the same answer
    assert l1(r.values, digraph.run(g, "pagerank", cluster=client, tol=1e-10).values) < 1e-12
    pers = {int(g.vertex_ids[i]): 1.0 + i % 3 for i in range(0, g.num_vertices, 5)}
    _check_against_one_process(client, h, g, personalization=pers, alpha=0.9)
    dang = {int(v): 1.0 for v in g.vertex_ids[::11]}
    _check_against_one_process(client, h, g, dangling=dang)
    # the answer back as partitioned Parquet: one file a worker, the original labels
    files = digraph.write_parquet(r, tmp_path / "ranks.parquet")
    assert len(files) == 2
    back = pd.read_parquet(tmp_path / "ranks.parquet")
    assert list(back.columns) == ["vertex", "value"]
    assert np.array_equal(back["vertex"].to_numpy(), g.vertex_ids)
    assert np.array_equal(back["value"].to_numpy(), r.values)
    with pytest.raises(FileExistsError):
        digraph.write_parquet(r, tmp_path / "ranks.parquet")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["arcs", "ranks.parquet"]
    # other graphs' runs evict the least recently used shards, never a pinned one
    from digraph.dispatch.engines.power.cluster import ClusterSettings
    for seed in (1, 2):
        digraph.run(digraph.load(rmat(6, 4, seed=seed)), "pagerank", cluster=client,
                    settings=[ClusterSettings(keep_graphs=1)])
    assert digraph.run(h, "pagerank", cluster=client).stats["dask"]["shards_reused"]
    h.release()
    with pytest.raises(WorkerLostError, match="no longer on worker"):
        digraph.run(h, "pagerank", cluster=client)


def test_weighted_csv_headerless_tsv_and_a_scattered_graph(client, tmp_path):
    s, d, w = _arcs(seed=5, weighted=True, far=False)
    g = digraph.load((s, d, w))
    assert g.out_degree.min() == 0 and g.vertex_ids[0] >= 1000  # a dense index
    _write(tmp_path / "csv", s, d, w, parts=4, kind="csv")
    h = digraph.load_distributed(str(tmp_path / "csv" / "*.csv"), client, weight="w")
    assert h.weighted and (h.num_vertices, h.num_arcs) == (g.num_vertices, g.num_arcs)
    assert np.array_equal(h.vertex_ids, g.vertex_ids)
    _check_against_one_process(client, h, g)
    _check_against_one_process(client, h, g, weights=False)
    h.release()
    _write(tmp_path / "tsv", s, d, parts=2, kind="tsv")
    h = digraph.load_distributed(tmp_path / "tsv", client, header=False, columns="a,b")
    assert h.source.endswith("part-0.tsv (and 1 more files)")
    _check_against_one_process(client, h, digraph.load((s, d)))
    h.release()
    # a graph of this process scattered: the shards digraph.run(g, cluster=) loads and reuses
    h = digraph.load_distributed(g, client)
    assert h.graph is g and h.num_arcs == g.num_arcs
    r = digraph.run(h, "pagerank", cluster=client, tol=1e-10)
    assert r.stats["dask"]["shards_reused"] and r.graph is g
    r = digraph.run(g, "pagerank", cluster=client, tol=1e-10)
    assert r.stats["dask"]["shards_reused"]
    files = digraph.write_parquet(r, tmp_path / "out", rows_per_file=500)
    assert len(files) == -(-g.num_vertices // 500)
    back = pd.read_parquet(tmp_path / "out")
    assert np.array_equal(back["vertex"].to_numpy(), g.vertex_ids)
    assert np.array_equal(back["value"].to_numpy(), r.values)


def test_errors_name_the_file_and_the_problem(client, tmp_path):
    s, d, _ = _arcs()
    good = _write(tmp_path / "good", s, d)
    with pytest.raises(GraphFormatError, match="no such file"):
        digraph.load_distributed(str(tmp_path / "nowhere.parquet"), client)
    with pytest.raises(GraphFormatError, match="no file matches"):
        digraph.load_distributed(str(tmp_path / "good" / "*.csv"), client)
    with pytest.raises(GraphFormatError, match=r"part-0\.parquet.*no column 'from'"):
        digraph.load_distributed(good, client, columns=("from", "dst"))
    pd.DataFrame({"src": [1.5, 2.0], "dst": [3.0, 4.0]}).to_parquet(tmp_path / "f.parquet")
    with pytest.raises(GraphFormatError, match=r"f\.parquet.*'src' holds float64"):
        digraph.load_distributed(tmp_path / "f.parquet", client)
    (tmp_path / "t.csv").write_text("src,dst\n1,2\nabc,3\n")
    with pytest.raises(GraphFormatError, match=r"t\.csv.*cannot be read.*'abc'"):
        digraph.load_distributed(tmp_path / "t.csv", client)
    pd.DataFrame({"src": pd.array([1, None], "Int64"), "dst": [3, 4]}).to_parquet(
        tmp_path / "na.parquet")
    with pytest.raises(GraphFormatError, match=r"na\.parquet.*'src' has a missing value"):
        digraph.load_distributed(tmp_path / "na.parquet", client)
    pd.DataFrame({"src": [1, 2], "dst": [3, 4], "w": [1.0, np.nan]}).to_parquet(
        tmp_path / "nan.parquet")
    with pytest.raises(GraphFormatError, match=r"nan\.parquet.*arc 2 -> 4 has a NaN"):
        digraph.load_distributed(tmp_path / "nan.parquet", client, weight="w")
    pd.DataFrame({"src": np.zeros(0, np.int64), "dst": np.zeros(0, np.int64)}).to_parquet(
        tmp_path / "empty.parquet")
    with pytest.raises(GraphFormatError, match=r"empty\.parquet.*no arc"):
        digraph.load_distributed(tmp_path / "empty.parquet", client)
    with pytest.raises(InvalidParameterError, match="distributed.Client"):
        digraph.load_distributed(good, "tcp://127.0.0.1:1")
    with pytest.raises(InvalidParameterError, match="columns must name two"):
        digraph.load_distributed(good, client, columns=("src",))
    # a range's build is bound to its worker: one that leaves ends the load, naming it
    import time
    from digraph.io.distributed_tasks import wait_pinned as _wait_pinned
    slow = client.submit(time.sleep, 1.0, pure=False)
    with pytest.raises(WorkerLostError, match="tcp://10.9.9.9:1 left the cluster"):
        _wait_pinned(client, [slow], ["tcp://10.9.9.9:1"], 30.0)
    h = digraph.load_distributed(good, client)
    assert set(h.timings) == {"labels", "renumber", "degrees", "cut", "shuffle", "adopt"}
    with pytest.raises(VertexNotFoundError, match="seed -12345 is not a vertex"):
        digraph.run(h, "adsorption", cluster=client, seeds=[-12345])
    with pytest.raises(InvalidParameterError, match="mode='scc' does not run on a Dask cluster"):
        digraph.run(h, "pagerank", cluster=client, mode="scc")
    with pytest.raises(InvalidParameterError, match="pass cluster=client"):
        digraph.run(h, "pagerank")
    # a lost worker of a handle is not restarted on the workers left (checkpoint_every): its
    # arcs are only in its shards; the affine map is refused (its bound needs the arcs)
    from types import SimpleNamespace

    from digraph.dispatch.engines.power.cluster_handle import check_map, refuse_restart
    from digraph.io.distributed_view import VertexView
    lost = WorkerLostError("round 3: worker tcp://10.9.9.9:1 was lost", worker="tcp://10.9.9.9:1")
    with pytest.raises(WorkerLostError, match="round 3.*cannot restart on the workers left.*"
                                              "load_distributed") as err:
        refuse_restart(VertexView(h), lost)
    assert err.value.worker == "tcp://10.9.9.9:1" and err.value.__cause__ is lost
    refuse_restart(digraph.load((s, d)), lost)  # a graph of this process restarts
    with pytest.raises(InvalidParameterError, match="affine map.*digraph.load"):
        check_map(VertexView(h), SimpleNamespace(normalize=False))
    check_map(VertexView(h), SimpleNamespace(normalize=True))
    h.release()


def test_the_command_line_with_scheduler(client, tmp_path, capsys, monkeypatch):
    from digraph import cli, cli_cluster
    s, d, w = _arcs(seed=7, weighted=True)
    _write(tmp_path / "arcs", s, d, w, names=("from", "to", "wt"))
    address = client.scheduler.address
    out = tmp_path / "ranks.parquet"
    assert cli.main(["run", "pagerank", str(tmp_path / "arcs" / "*.parquet"), "--scheduler",
                     address, "--columns", "from,to,wt", "--tol", "1e-10", "--top", "3",
                     "--out", str(out), "--stats", str(tmp_path / "stats.json")]) == 0
    printed = capsys.readouterr().out
    assert "DistributedGraph" in printed and "top 3" in printed
    pinned = client.run(lambda dask_worker: sum(s.pinned for s in dask_worker.plugins[
        "digraph-power-shards"].shards.values()))
    assert sum(pinned.values()) == 0  # the command released what it loaded
    g = digraph.load((s, d, w))
    one = digraph.run(g, "pagerank", mode="power", tol=1e-10)
    back = pd.read_parquet(out)
    assert len(list(out.iterdir())) == 2  # one file a worker
    assert np.array_equal(back["vertex"].to_numpy(), g.vertex_ids)
    import json
    stats = json.loads((tmp_path / "stats.json").read_text())
    assert stats["engine"] == "dask-power"
    assert l1(back["value"].to_numpy(), one.values) <= stats["error_bound"] + 1e-10
    # a text file is loaded here and its shards sent to the workers
    el = tmp_path / "g.el"
    el.write_text("".join(f"{a} {b}\n" for a, b in zip(s[:300], d[:300])))
    assert cli.main(["run", "pagerank", str(el), "--scheduler", address, "--quiet",
                     "--out", str(tmp_path / "r.csv")]) == 0
    assert (tmp_path / "r.csv").read_text().startswith("vertex,value\n")
    capsys.readouterr()
    monkeypatch.setattr(cli_cluster, "SCHEDULER_TIMEOUT_S", 0.5)
    assert cli.main(["run", "pagerank", str(el), "--scheduler", "tcp://127.0.0.1:1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("digraph: error: --scheduler 'tcp://127.0.0.1:1': cannot connect")
    assert "\n" not in err and "Traceback" not in err
    assert cli.main(["run", "pagerank", str(tmp_path / "arcs"), "--scheduler", address,
                     "--columns", "src,nope"]) == 2
    assert "no column 'src'" in capsys.readouterr().err


class _Hops(Algorithm):
    """Hops from a source (a user min/max system from vertex-sized arrays only)."""

    name = "hops"
    parameters = {"source": REQUIRED}

    def prepare(self, graph, source):
        s = int(graph.index_of([source], "source")[0])
        init = np.full(graph.num_vertices, np.inf)
        init[s] = 0.0
        return MonotoneSystem(init=init, relax="plus", combine="min", frontier=np.array([s]))


class _Katz(Algorithm):
    """A user linear system (Katz-like, not normalised) without its bound's factors."""

    name = "katz"

    def prepare(self, graph):
        deg = np.maximum(graph.out_degree, 1).astype(np.float64)
        return LinearSystem(b=np.ones(graph.num_vertices), src_scale=0.5 / deg)


def test_adsorption_and_user_algorithms_on_a_loaded_graph(client, tmp_path):
    s, d, w = _arcs(seed=7, weighted=True)
    g = digraph.load((s, d, w))
    seeds = [int(g.vertex_ids[i]) for i in (0, 5, 40)]
    for weighted in (True, False):
        folder = _write(tmp_path / f"arcs{int(weighted)}", s, d, w if weighted else None)
        h = digraph.load_distributed(folder, client, weight="w" if weighted else None)
        try:
            one_g = g if weighted else digraph.load((s, d))
            if weighted:
                assert np.allclose(h.in_weight, np.bincount(g.out_targets, weights=g.weights,
                                                            minlength=g.num_vertices))
            r = digraph.run(h, "adsorption", cluster=client, seeds=seeds, tol=1e-9)
            st = r.stats
            assert st["engine"] == "dask-power" and st["converged"]
            one = digraph.run(one_g, "adsorption", seeds=seeds, tol=1e-10)
            assert l1(r.values, one.values) <= st["error_bound"] + one.stats["error_bound"]
            # the dual weights found on the workers: the sweeps of one process, the same ẑ
            assert st["error_route"] == one.stats["error_route"] == "dual"
            assert st["error_bound"] <= 1e-9
            assert st["dual_sweeps"] == one.stats["dual_sweeps"] > 0
            assert st["dual_max"] == pytest.approx(one.stats["dual_max"], rel=1e-9)
            assert st["power"]["gamma"] == pytest.approx(1 - 1 / st["dual_max"])
            # other seeds: the weights the workers kept, no sweep
            other = [int(g.vertex_ids[i]) for i in (1, 2)]
            again = digraph.run(h, "adsorption", cluster=client, seeds=other, tol=1e-9)
            assert again.stats["dual_sweeps"] == 0 and again.stats["converged"]
            assert again.stats["dual_max"] == pytest.approx(st["dual_max"], rel=1e-12)
            one = digraph.run(one_g, "adsorption", seeds=other, tol=1e-10)
            assert l1(again.values, one.values) <= (again.stats["error_bound"]
                                                    + one.stats["error_bound"])
            # a user min/max system: the workers' bsp rounds, the one-process answer
            hops = digraph.run(h, _Hops(), cluster=client, source=seeds[0])
            assert np.array_equal(hops.values, digraph.run(one_g, _Hops(),
                                                           source=seeds[0]).values)
            # a user linear system whose bound needs the arcs: refused, naming the way out
            with pytest.raises(InvalidParameterError, match="needs the arcs.*digraph.load"):
                digraph.run(h, _Katz(), cluster=client)
        finally:
            h.release()


def test_the_dual_sweeps_need_room_under_the_memory_limit(tmp_path):
    """Workers whose ``memory_limit`` holds the shard and the run but not the dual weights'
    sweeps: none are sought, the stats say why, and the L-inf bound still holds the answer."""
    import dask
    from digraph.dispatch.engines.power.cluster_checks import shard_bytes
    s, d, _ = _arcs(seed=7)
    g = digraph.load((s, d))
    seeds = [int(g.vertex_ids[i]) for i in (0, 5, 40)]
    folder = _write(tmp_path / "arcs", s, d)
    # only the scheduler's record of the limit matters here: the workers never pause
    off = {f"distributed.worker.memory.{k}": False for k in ("target", "spill", "pause",
                                                              "terminate")}

    def run(limit):
        with dask.config.set(off), distributed.LocalCluster(
                n_workers=2, threads_per_worker=1, processes=False, memory_limit=limit,
                dashboard_address=":0", silence_logs=40) as cluster, \
                distributed.Client(cluster) as c:
            c.wait_for_workers(2)
            h = digraph.load_distributed(folder, c)
            try:
                r = digraph.run(h, "adsorption", cluster=c, seeds=seeds, tol=1e-6)
                return r, np.asarray(h.in_offsets), np.asarray(h.bounds)
            finally:
                h.release()
    free, in_off, bounds = run(0)
    assert free.stats["error_route"] == "dual" and "dual_skipped" not in free.stats
    from digraph.dispatch.engines.power.cpu import DEFAULT as POWER
    rings = 2 * POWER.anderson_memory + 2  # Anderson's mixes on the workers
    plain = shard_bytes(in_off, bounds, False, extra_vectors=rings)
    both = shard_bytes(in_off, bounds, False, dual=True, extra_vectors=rings)
    assert list(plain) == free.stats["dask"]["shard_bytes"] and (both > plain).all()
    assert plain.max() < both.min()
    tight, _, _ = run(int(plain.max() + both.min()) // 2)
    st = tight.stats
    assert st["error_route"] == "linf" and "dual_sweeps" not in st
    assert "memory_limit" in st["dual_skipped"] and "dual weights' sweeps" in st["dual_skipped"]
    one = digraph.run(g, "adsorption", seeds=seeds, tol=1e-10)
    assert l1(tight.values, one.values) <= st["error_bound"] + one.stats["error_bound"]


def test_a_worker_stalled_in_the_dual_sweeps_is_named_and_the_run_dropped(tmp_path,
                                                                           monkeypatch):
    """A worker that does not answer its second dual sweep in time ends the run with
    :class:`WorkerLostError` naming it, and the other worker forgets the run."""
    import asyncio

    from digraph.dispatch.engines.power.cluster import ClusterSettings
    from digraph.dispatch.engines.power.cluster_dual_worker import DualWeights
    from digraph.dispatch.engines.power.cluster_worker import PowerShards
    s, d, _ = _arcs(seed=7)
    folder = _write(tmp_path / "arcs", s, d)
    sweep = DualWeights._dual_sweep
    stalled = []

    async def slow(self, run=None, k=None, **kw):
        if k == 2 and self.worker.address == stalled[0]:
            await asyncio.sleep(4.0)
        return await sweep(self, run=run, k=k, **kw)
    monkeypatch.setattr(DualWeights, "_dual_sweep", slow)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=":0", silence_logs=40) as cluster, \
            distributed.Client(cluster) as c:
        c.wait_for_workers(2)
        h = digraph.load_distributed(folder, c)
        try:
            stalled.append(sorted(c.nthreads())[1])
            seeds = [int(h.vertex_ids[i]) for i in (0, 5)]
            with pytest.raises(WorkerLostError, match="dual sweep 2") as err:
                digraph.run(h, "adsorption", cluster=c, seeds=seeds, tol=1e-6,
                            settings=[ClusterSettings(round_timeout_s=1.0)])
            assert err.value.worker == stalled[0] and stalled[0] in str(err.value)
            other = [w for w in cluster.workers.values() if w.address != stalled[0]][0]
            assert not other.plugins[PowerShards.name].runs
        finally:
            h.release()


def test_kcore_on_a_loaded_graph_builds_its_undirected_lists_on_the_workers(client, tmp_path):
    """Core numbers of a graph the client never holds: self-loops and repeated arcs in the
    files, ids renumbered; the lists built once on the workers, kept, released with the
    handle; exact against the one-process reference."""
    s, d, _ = _arcs(seed=11, far=False)
    s = np.concatenate([s, s[:40], [1000, 1007]])  # repeated arcs and two self-loops
    d = np.concatenate([d, d[:40], [1000, 1007]])
    h = digraph.load_distributed(_write(tmp_path / "k", s, d, parts=4), client)
    g = digraph.load((s, d))
    exact = digraph.algorithms.KCore().reference(g)
    r = digraph.run(h, "kcore", cluster=client)
    assert np.array_equal(r.values, exact) and r.stats["mode"] == "bsp"
    assert r.stats["route"]["code"] == "cluster-hindex"
    one = digraph.run(g, "kcore", mode="bsp")
    assert r.stats["rounds"] == one.stats["rounds"]
    assert sum(r.stats["dask"]["arcs"]) == 2 * int((s != d).sum())  # each arc both ways
    offsets, bounds, key = h.undirected()
    assert key.startswith(h.fingerprint + ":undirected")
    again = digraph.run(h, "kcore", cluster=client)  # the lists kept: nothing rebuilt
    assert np.array_equal(again.values, exact) and h.undirected()[2] == key
    assert again.stats["dask"]["shards_reused"] and again.stats["dask"]["shard_loads"] == 0
    from digraph.dispatch.engines.power.cluster import call
    other = h.undirected(vertex_cost=4)[2]  # another cut: the old lists leave the workers

    def held(k):
        return [r["has"] for r in call(client, list(h.workers), "has", lambda i: {"key": k},
                                       30.0, "looking")]
    assert held(key) == [False, False] and held(other) == [True, True]
    h.release()
    assert held(other) == [False, False]
    with pytest.raises(WorkerLostError, match="no longer on worker"):
        digraph.run(h, "pagerank", cluster=client)
