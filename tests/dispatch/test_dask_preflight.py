"""The cluster placement's pre-flight checks (:mod:`digraph.dispatch.engines.power.cluster_checks`):
a GPU ``device`` with ``cluster=`` and workers whose ``memory_limit`` is below their shard are
refused with errors naming the workers, before anything is sent to them.  In-process workers
(``processes=False``), and for the GPU check one worker process without Numba's CUDA simulator:
nothing here runs rounds (but on a machine with a GPU, where that worker runs one)."""

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
dask = pytest.importorskip("dask")

import digraph  # noqa: E402
from digraph.dispatch.engines.power.cluster_checks import shard_bytes  # noqa: E402
from digraph.dispatch.engines.power.cpu import DEFAULT as POWER  # noqa: E402
from digraph.dispatch.runtime.cuda.ranges import shard_ranges  # noqa: E402
from digraph.errors import InvalidParameterError  # noqa: E402

from conftest import random_graph  # noqa: E402

# a worker over its memory_limit is neither paused nor killed here: the check must fire first
_NO_MONITOR = {"distributed.worker.memory.target": False, "distributed.worker.memory.spill": False,
               "distributed.worker.memory.pause": False,
               "distributed.worker.memory.terminate": False}


def _plugins(client):
    return client.run(lambda dask_worker: sorted(dask_worker.plugins))


def test_workers_with_too_little_memory_are_named_before_any_load():
    g = random_graph(3, 3000, 40_000)
    with dask.config.set(_NO_MONITOR), \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                     memory_limit="200kB", dashboard_address=":0",
                                     silence_logs=40) as cluster, \
            distributed.Client(cluster) as c:
        c.wait_for_workers(2)
        workers = sorted(c.nthreads())
        with pytest.raises(InvalidParameterError) as err:
            digraph.run(g, "pagerank", cluster=c, tol=1e-6)
        msg = str(err.value)
        assert all(w in msg for w in workers) and "memory_limit" in msg
        assert "nothing was loaded" in msg and "0.19 MiB (200,000 bytes)" in msg
        rings = 2 * POWER.anderson_memory + 2  # PageRank's Anderson mixes on the workers
        need = shard_bytes(g.in_offsets, shard_ranges(g.in_offsets, 2), False,
                           extra_vectors=rings)
        assert f"{int(need[0]):,} bytes" in msg and f"{int(need[1]):,} bytes" in msg
        # no plugin registered, so no shard could have been sent
        assert not any("digraph-power-shards" in p for p in _plugins(c).values())


def test_the_shard_estimate_counts_arcs_factors_offsets_and_vectors():
    g = random_graph(5, 500, 4000)
    bounds = shard_ranges(g.in_offsets, 3)
    plain, weighted = shard_bytes(g.in_offsets, bounds, False), shard_bytes(
        g.in_offsets, bounds, True)
    arcs = np.diff(g.in_offsets[bounds])
    assert np.array_equal(weighted - plain, 8 * arcs)  # 8 bytes an arc factor
    assert plain.sum() >= 8 * (g.num_arcs + g.num_vertices * 8)


def test_a_gpu_device_with_a_cluster_names_the_workers_without_a_gpu():
    # a worker process without the CUDA simulator: on a machine without a GPU it sees none
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  env={"NUMBA_ENABLE_CUDASIM": "0"}, dashboard_address=":0",
                                  silence_logs=40) as cluster, \
            distributed.Client(cluster) as c:
        c.wait_for_workers(1)
        (worker,) = c.nthreads()
        from digraph.dispatch.engines.power.cluster_checks import sees_gpu
        g = random_graph(0, 20, 60)
        if c.run(sees_gpu)[worker]:
            r = digraph.run(g, "pagerank", cluster=c, device="cuda", tol=1e-6)
            assert r.stats["device"] == "cuda" and r.stats["converged"]
            return
        with pytest.raises(InvalidParameterError) as err:
            digraph.run(g, "pagerank", cluster=c, device="cuda")
        msg = str(err.value)
        assert f"worker {worker} sees no CUDA device" in msg and "device='cpu'" in msg
        assert not any("digraph-power-shards" in p for p in _plugins(c).values())
