"""The engine registry (:mod:`digraph.dispatch.engines.registry`): which mode runs which families
on which placement, the one table the router, the runners and the conformance suite agree on."""

import pytest

import digraph
from digraph.dispatch.engines.registry import ENGINES, FAMILIES, find, refusal
from digraph.dispatch.route import route
from digraph.dispatch.route.modes import MODES
from digraph.errors import InvalidParameterError

from test_conformance import RUNS

KINDS = {"cpu": "cpu", "cuda": "gpu", "cuda:0,1,2": "gpus"}
FAMILY = {"pagerank": "linear", "adsorption": "linear", "sssp": "monotone", "kcore": "hindex"}


def test_one_engine_a_mode_and_placement_each_loadable():
    keys = [(e.mode, e.kind) for e in ENGINES]
    assert len(keys) == len(set(keys))
    for e in ENGINES:
        assert e.mode in MODES and e.kind in ("cpu", "gpu", "gpus", "cluster")
        assert set(e.families) <= set(FAMILIES) and e.families
        assert callable(e.load())
        if e.prepare is not None:
            assert callable(e.load("prepare"))
        if e.after_stall is not None:
            assert find(e.after_stall, e.kind) is not None and "linear" in e.families
    assert find("peel", "cpu").name == "cpu-peel" and find("bsp", "gpus").name == "multi-gpu-bsp"
    assert find("peel", "gpu").name == "gpu-peel" and find("peel", "gpus") is None
    assert find("cluster", "cpu") is None


@pytest.mark.parametrize("device", sorted(RUNS))
def test_the_registry_is_the_conformance_contract(device):
    """A mode runs an algorithm on a placement exactly where the registry has an engine for its
    family there (the automatic choice aside)."""
    kind = KINDS[device]
    for mode, algorithms in RUNS[device].items():
        if mode is None:
            continue
        for algo, family in FAMILY.items():
            if mode == "power" and algo == "adsorption":
                continue  # the power iteration runs linear systems, normalised ones only
            engine = find(mode, kind)
            runs = engine is not None and family in engine.families
            assert runs == (algo in algorithms), (device, mode, algo)


@pytest.mark.parametrize("kind,where,device", [("cpu", "cpu", "cpu"), ("gpu", "gpu", "cuda"),
                                               ("gpus", "multi-gpu", "cuda:0,1"),
                                               ("cluster", "dask", "cpu")])
def test_the_router_refuses_what_no_engine_runs(kind, where, device):
    on = kind == "cluster"
    for mode in MODES:
        for family in FAMILIES:
            why = refusal(mode, family, kind)
            if why is None:
                plan = route(family, mode, device, cluster=on)
                assert plan.engine == f"{where}-{mode}" == find(mode, kind).name
            else:
                assert f"mode={mode!r}" in why
                with pytest.raises(InvalidParameterError, match="mode="):
                    route(family, mode, device, cluster=on)


def test_refusals_name_the_family_or_the_placement():
    assert "not the monotone family" in refusal("scc", "monotone", "cpu")
    assert "runs on one GPU" in refusal("cluster", "monotone", "cpu")
    assert "runs on the CPU or one GPU" in refusal("peel", "hindex", "gpus")
    assert refusal("peel", "hindex", "gpu") is None
    assert "k-core depends on in- and out-neighbours" in refusal("path", "hindex", "cpu")
    assert "does not run on a Dask cluster" in refusal("bsp", "linear", "cluster")
    assert "there 'power' does" in refusal("bsp", "linear", "cluster")
    assert refusal("bsp", "monotone", "cluster") is None
    assert refusal("bsp", "hindex", "cluster") is None
    assert "yet for the hindex family; there 'bsp' does" in refusal("peel", "hindex", "cluster")


def test_the_plan_records_what_runs_after_a_stall():
    g = digraph.load(([0, 1, 2, 2, 3], [1, 2, 0, 3, 0]))
    for mode in ("bsp", "vertex-async", "scc", "power", "path"):
        r = digraph.run(g, "pagerank", mode=mode, tol=1e-8)
        assert r.stats["route"]["after_stall"] == find(mode, "cpu").after_stall
    assert find("bsp", "cpu").after_stall == "vertex-async"
    assert find("vertex-async", "cpu").after_stall == "bsp"
