"""The vectors a sharded linear run keeps for the next run (``MultiGpuSettings.keep_work``)."""
import dataclasses
import gc

import numpy as np
import pytest

import digraph
from digraph.algorithms import get
from digraph.dispatch.engines.push import gpus as multi_gpu
from digraph.dispatch.runtime.cuda.backend import backend
from digraph.dispatch.runtime.cuda import common
from digraph.dispatch.runtime.cuda import shard_settings
from digraph.dispatch.runtime.cuda import shards
from digraph.result import RunStats

from test_multi_gpu_overlap import shard_devices


def _graph(seed=5):
    rng = np.random.default_rng(seed)  # sparse: the simulator is slow on in-degrees >= 4
    return digraph.load((rng.integers(0, 30, 40), rng.integers(0, 30, 40)), num_vertices=30)


# split sums round per range: the ranges are pinned (no re-cuts from measured time)
PINNED = dataclasses.replace(shard_settings.DEFAULT, balance=False)


def _solve(g, devs, alpha=0.3, algorithm="pagerank", keep_work=True):
    A = get(algorithm)
    params = ({"alpha": alpha} if algorithm == "pagerank" else
              {"beta": alpha, "seeds": [0, 3, 7]})
    sys = A.prepare(g, **A.bind(g, params))
    st = RunStats.new()
    x, ok = multi_gpu.solve(g, sys, devices=devs, mode="bsp", tol=1e-7, max_iter=1000,
                            stats=st, min_arcs_per_gpu=0,
                            settings=dataclasses.replace(PINNED, keep_work=keep_work))
    assert ok
    return x, st


def test_kept_vectors_give_the_fresh_answers():
    """A second run reuses the first run's vectors and gives its answer bit for bit; a run of
    another system (another damping, arc factors) on them gives that system's fresh answer."""
    devs = shard_devices(2)
    shards.drop_work()
    g = _graph()
    x1, st1 = _solve(g, devs)
    x2, st2 = _solve(g, devs)
    assert st1["gpu_work_kept"] is False and st2["gpu_work_kept"] is True
    np.testing.assert_array_equal(x1, x2)
    assert st1["rounds"] == st2["rounds"]
    for alpha, algorithm in ((0.6, "pagerank"), (0.7, "adsorption")):
        _solve(g, devs)  # leaves its vectors kept (a run without keep_work drops them)
        kept, st = _solve(g, devs, alpha, algorithm)
        assert st["gpu_work_kept"] is True
        fresh, st = _solve(g, devs, alpha, algorithm, keep_work=False)
        assert st["gpu_work_kept"] is False
        np.testing.assert_array_equal(kept, fresh)
    shards.drop_work()


def test_work_is_dropped_for_another_graph_engine_or_when_collected():
    devs = shard_devices(2)
    shards.drop_work()
    g, h = _graph(5), _graph(6)
    _solve(g, devs)
    assert shards._WORK["graph"]() is g
    assert _solve(h, devs)[1]["gpu_work_kept"] is False  # another graph: new vectors
    assert shards._WORK["graph"]() is h
    other = devs[:1] * 3 if backend("cuda").sim else devs[::-1]
    assert _solve(h, other)[1]["gpu_work_kept"] is False  # other GPUs: new vectors
    # a min/max system frees them
    s = get("sssp")
    multi_gpu.solve(h, s.prepare(h, **s.bind(h, {"source": 0})), devices=devs, mode="bsp",
                    tol=None, max_iter=100, stats=RunStats.new(), min_arcs_per_gpu=0,
                    settings=PINNED)
    assert shards._WORK == {}
    _solve(h, devs)
    assert shards._WORK
    digraph.run(h, "sssp", source=0, mode="bsp", device="cuda")  # so does one GPU's engine
    assert shards._WORK == {}
    _solve(h, devs)
    assert shards._WORK
    del h
    gc.collect()
    assert shards._WORK == {}  # the graph was collected: so are its vectors


@pytest.fixture
def real_be():
    """One real GPU's backend: the simulator registers no views and prepares no launches."""
    from test_gpu import real_gpu
    if not real_gpu():
        pytest.skip("needs a real GPU")
    return backend("cuda")


def test_backend_retain_keeps_only_the_named_arrays(real_be):
    be = real_be
    xp = be.xp
    keep, drop = be.keep(xp.zeros(4)), be.keep(xp.zeros(4))
    be.retain([keep], "a")
    assert id(keep) in be._views and id(drop) not in be._views
    be.release("all")
    assert not be._views and not be._prepared


def test_backend_retain_keeps_each_engines_arrays(real_be):
    """One engine's end of run does not drop what another engine kept: a one-GPU run between
    two sharded runs on the same GPU made the second register and prepare everything again."""
    be = real_be
    xp = be.xp
    K = common.kernels()
    be.release("all")
    a, b, c = (be.keep(xp.zeros(8)) for _ in range(3))
    be.launch(K.linear_frontier, 1, 32, 0, 8, a, a, 0.5, a, tag="ta")
    prepared = {k for k in be._prepared if k[-1] == "ta"}
    from digraph.dispatch.runtime.cuda.backend import BACKEND
    assert prepared or not BACKEND.fast_launch
    be.retain([a], "one")
    b, c = be.keep(b), be.keep(c)
    be.retain([b], "two")  # the second engine's end: the first's array and launch stay
    assert id(a) in be._views and id(b) in be._views and id(c) not in be._views
    assert prepared <= set(be._prepared)
    c = be.keep(c)  # the first engine's next run registers its arrays again ...
    be.retain([c], "one")  # ... and its end replaces only its own set
    assert not prepared & set(be._prepared)
    assert id(a) not in be._views and id(b) in be._views and id(c) in be._views
    be.release()  # what no engine keeps, and nothing more
    assert id(b) in be._views and id(c) in be._views
    be.release("two")
    assert id(b) not in be._views and id(c) in be._views
    # a set whose holder (the work kept on the graph) is gone goes at the next end of any run
    from digraph.dispatch.engines.power.gpu_work import Work
    holder = Work(b=be.keep(b))
    be.retain([b], "two", holder=holder)
    assert id(b) in be._views
    del holder
    be.release()
    assert id(b) not in be._views and id(c) in be._views
    be.release("all")
    assert not be._views and not be._prepared


@pytest.mark.gpu
@pytest.mark.usefixtures("one_gpu")
def test_backend_kept_sets_follow_their_engines_and_holders():
    """The bookkeeping of :meth:`_Backend.retain` on any backend (the simulator registers no
    views, so entries are put in by hand): a set stays while its engine keeps it and its holder
    lives, unowned entries go at every end of run."""
    from digraph.dispatch.engines.power.gpu_work import Work
    be = backend("cuda")
    be.release("all")

    def reg(a):
        be._views[id(a)] = (a, None)
        return a
    a = reg(np.zeros(2))
    holder = Work(a=a)
    be.retain([a], "one", holder=holder)
    b = reg(np.zeros(2))
    be.retain([b], "two")
    c = reg(np.zeros(2))
    be.release()  # the unowned entry only
    assert id(a) in be._views and id(b) in be._views and id(c) not in be._views
    del holder  # the work kept on the graph is gone: its set goes at the next end of a run
    be.release()
    assert id(a) not in be._views and id(b) in be._views and "one" not in be._kept
    be.release("two")
    assert not be._views


def test_a_tagged_launch_runs_on_the_arrays_it_is_given(real_be):
    """``_Backend.launch(..., tag=)`` finds a prepared launch by its tag, and uses it only for
    the arrays it was prepared for: the same tag on other arrays writes those."""
    be = real_be
    K = common.kernels()
    xp = be.xp

    def arrays(scale):
        return (be.keep(xp.arange(8, dtype=np.float64)), be.keep(xp.full(8, scale)),
                be.keep(xp.zeros(8)))
    want = {s: np.where(np.arange(8) > 0.5, s * np.arange(8), 0.0) for s in (2.0, 3.0)}
    a, b = arrays(2.0), arrays(3.0)
    for arrs, scale in ((a, 2.0), (b, 3.0), (a, 2.0)):
        arrs[2].fill(0.0)
        be.launch(K.linear_frontier, 1, 32, 0, 8, arrs[0], arrs[1], 0.5, arrs[2], tag="t")
        np.testing.assert_array_equal(arrs[2].get(), want[scale])
    be.release()
