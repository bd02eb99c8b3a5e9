"""The ``stats`` keys are one documented set: every key a run writes is in
:data:`digraph.result.STATS_KEYS`, at the top of ``stats`` or, an engine's internals, under its
group's key (:data:`digraph.result.STATS_FIELDS`); every key written in the sources is documented,
every documented key is written somewhere, and docs/interface.md holds exactly
:func:`digraph.result.stats_table`.

The runs cover every algorithm in every CPU mode that accepts it, plus the options that add keys
(``dangling=``, ``threads=``, ``cache=``, ``layer_window=``, a ``tol`` below the rounding floor);
the ``gpu`` tests do the same on one GPU and on two (Numba's CUDA simulator without a GPU).
"""

import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest

import digraph
from digraph.errors import InvalidParameterError
from digraph.result import (STATS_FIELDS, STATS_GROUPS, STATS_KEYS, RunStats, group_internals,
                            stats_table)
from conftest import gpu_count, random_graph

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "digraph").rglob("*.py"))

ALGORITHMS = {"pagerank": {}, "adsorption": {"seeds": [0, 5, 9]}, "sssp": {"source": 0},
              "kcore": {}}
MODES = (None, "scc", "power", "path", "path-nopriority", "vertex-async", "bsp", "peel")


GROUPS = {g.key: {g.field(k) for k in g.keys} for g in STATS_GROUPS if g.key}
TOP = {k for g in STATS_GROUPS if not g.key for k in g.keys}


def _check(label, stats):
    assert isinstance(stats, RunStats), label
    extra = sorted(set(stats) - TOP - set(GROUPS))
    assert not extra, f"{label}: undocumented stats keys {extra} (add them to STATS_GROUPS)"
    for group in set(GROUPS) & set(stats):
        assert isinstance(stats[group], dict) and stats[group], (label, group)
        extra = sorted(set(stats[group]) - GROUPS[group])
        assert not extra, f"{label}: undocumented keys {extra} in stats[{group!r}]"


def _every_mode(graph, algorithms, device="cpu"):
    """Run each algorithm in each mode it accepts on ``device``; returns the labels that ran."""
    ran = []
    for name, params in algorithms.items():
        for mode in MODES:
            try:
                r = digraph.run(graph, name, mode=mode, device=device, **params)
            except InvalidParameterError:
                continue  # a mode that does not apply to the family or the device
            _check(f"{name} mode={mode} on {device}", r.stats)
            ran.append((name, mode))
    return ran


# ---------------------------------------------------------------------------- the registry


def test_groups_are_one_set_of_one_line_descriptions():
    assert sum(len(g.keys) for g in STATS_GROUPS) == len(STATS_KEYS)  # no key in two groups
    for key, meaning in STATS_KEYS.items():
        assert re.fullmatch(r"[a-z][a-z0-9_]*", key), key
        assert meaning.strip() and "\n" not in meaning, key
    import digraph.result as result
    groups = {g.title: g.keys for g in STATS_GROUPS}
    assert set(result._COUNTERS) <= set(groups["Every run"])  # in every run's stats
    assert set(result._TIMES) <= set(groups["Timings (seconds)"])
    assert not TOP & set(GROUPS)  # a group's key is no key of its own
    for g in STATS_GROUPS:
        if g.key:  # each field names one key within its group
            assert len({g.field(k) for k in g.keys}) == len(g.keys), g.title
    assert set(STATS_FIELDS) == set(STATS_KEYS) - TOP


def test_internals_move_into_their_groups():
    stats = RunStats.new(mode="scc", scc_split=2, layers=3, peel="bz", anderson_mixes=4)
    group_internals(stats)
    assert stats["scc"] == {"split": 2} and stats["dag"] == {"layers": 3}
    assert stats["peel"] == {"schedule": "bz"} and stats["power"] == {"anderson_mixes": 4}
    assert stats["mode"] == "scc" and "scc_split" not in stats and "layers" not in stats
    assert group_internals(RunStats.new(rounds=1)) == RunStats.new(rounds=1)  # nothing to move


def test_docs_hold_exactly_the_table():
    text = (ROOT / "docs" / "interface.md").read_text(encoding="utf-8")
    m = re.search(r"\n## Run statistics\n.*?<!-- stats table:[^\n]*-->\n(.*?)"
                  r"<!-- end of stats table -->", text, flags=re.S)
    assert m, "docs/interface.md lacks the 'Run statistics' section with its generated table"
    assert m.group(1) == stats_table(), (
        "docs/interface.md's stats table differs from digraph.result.stats_table(): paste the "
        "function's output between the markers")
    assert text.count("| group | key | meaning |") == 1


def _written_keys():
    """Keys written into a stats dict by the sources: ``stats["k"]`` (and ``stats["a" if ...
    else "b"]``), ``stats.setdefault("k"``, and the keyword arguments of ``RunStats.new``."""
    keys = {}
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        found = set(re.findall(r"\bstats\[\s*[\"']([A-Za-z0-9_]+)[\"']\s*\]", text))
        for a, b in re.findall(r"\bstats\[\s*\"([A-Za-z0-9_]+)\"\s+if\b[^\]]*?\belse\s+"
                               r"\"([A-Za-z0-9_]+)\"\s*\]", text):
            found |= {a, b}
        found |= set(re.findall(r"\bstats\.setdefault\(\s*[\"']([A-Za-z0-9_]+)[\"']", text))
        for args in re.findall(r"RunStats\.new\(([^)]*)\)", text):
            found |= set(re.findall(r"(\w+)\s*=", args))
        for k in found:
            keys.setdefault(k, []).append(str(path.relative_to(ROOT)))
    return keys


def test_every_key_in_the_sources_is_documented():
    written = _written_keys()
    assert len(written) > 50  # the patterns still find the engines' keys
    missing = {k: v for k, v in written.items() if k not in STATS_KEYS and k not in GROUPS}
    assert not missing, f"stats keys written but not in STATS_KEYS: {missing}"


def test_every_documented_key_is_written_somewhere():
    import digraph.result as result
    written = set(_written_keys()) | set(result._COUNTERS) | set(result._TIMES)
    stale = sorted(set(STATS_KEYS) - written)
    assert not stale, f"STATS_KEYS documents keys that no source writes: {stale}"


# ---------------------------------------------------------------------------- CPU runs


@pytest.fixture(scope="module")
def g():
    return random_graph(3, n=120, m=500)


def test_every_cpu_run_writes_documented_keys(g):
    ran = _every_mode(g, ALGORITHMS)
    for name in ALGORITHMS:  # each algorithm ran somewhere, the automatic choice included
        assert (name, None) in ran
    assert len(ran) >= 20


def test_options_that_add_keys(g, tmp_path):
    runs = {
        "pagerank dangling= power": digraph.run(g, "pagerank", mode="power",
                                                dangling={0: 1.0, 7: 2.0}),
        "pagerank dangling= auto": digraph.run(g, "pagerank", dangling={3: 1.0}),
        "pagerank threads=1": digraph.run(g, "pagerank", threads=1),
        "sssp threads=1": digraph.run(g, "sssp", source=0, threads=1),
        "kcore threads=1": digraph.run(g, "kcore", threads=1),
        "pagerank path cache=": digraph.run(g, "pagerank", mode="path", cache=tmp_path / "paths"),
        "pagerank path cache= again": digraph.run(g, "pagerank", mode="path",
                                                  cache=tmp_path / "paths"),
        "sssp path cache=": digraph.run(g, "sssp", source=0, mode="path", cache=tmp_path / "paths"),
        "pagerank path layer_window=0": digraph.run(g, "pagerank", mode="path", layer_window=0,
                                                    short_path_push=0, priority="paper"),
        "pagerank scc below the floor": digraph.run(g, "pagerank", mode="scc", tol=1e-17),
        "pagerank power below the floor": digraph.run(g, "pagerank", mode="power", tol=1e-17),
    }
    # automatic PageRank: a power probe that trips on two closed halves and hands over to scc
    rng = np.random.default_rng(1)
    h = 200
    ring = np.arange(h)
    src = [ring, rng.integers(0, h, 4 * h), ring + h, rng.integers(h, 2 * h, 4 * h),
           rng.integers(0, h, 20)]
    dst = [(ring + 1) % h, rng.integers(0, h, 4 * h), (ring + 1) % h + h,
           rng.integers(h, 2 * h, 4 * h), rng.integers(h, 2 * h, 20)]
    halves = digraph.load((np.concatenate(src), np.concatenate(dst)))
    runs["pagerank probe"] = digraph.run(halves, "pagerank", tol=1e-6)
    assert "probe_rounds" in runs["pagerank probe"].stats
    assert runs["pagerank dangling= power"].stats["power"]["dangling_vertices"] > 0
    assert any(r.stats.get("floor_limited") for r in runs.values())
    for label, r in runs.items():
        _check(label, r.stats)


# ---------------------------------------------------------------------------- GPUs


TINY = (np.array([0, 1, 2, 2, 3, 4, 5, 1]), np.array([1, 2, 0, 3, 4, 5, 3, 4]),
        np.linspace(1.0, 2.0, 8))
GPU_ALGORITHMS = {"pagerank": {"tol": 0.05}, "adsorption": {"seeds": [0], "tol": 0.05},
                  "sssp": {"source": 0}, "kcore": {}}


@pytest.mark.gpu
def test_every_gpu_run_writes_documented_keys(engine_settings):
    gpu_count()
    tiny = digraph.load(TINY)
    ran = _every_mode(tiny, GPU_ALGORITHMS, "cuda")
    assert {name for name, _ in ran} == set(GPU_ALGORITHMS) and len(ran) >= 12
    r = digraph.run(tiny, "pagerank", mode="bsp", device="cuda", tol=0.05, batch_arcs=4)
    assert r.stats["push"]["streamed_batches"] > 1
    _check("pagerank bsp batch_arcs=4 on cuda", r.stats)
    from digraph.dispatch.engines.path import gpu_settings
    # one GPU's bsp as one shard of multi_gpu
    engine_settings(gpu_settings.DEFAULT, shard_arcs=0)
    r = digraph.run(tiny, "pagerank", mode="bsp", device="cuda", tol=0.05)
    assert [p["code"] for p in r.stats["route"]["placed"]] == ["one-shard"]
    _check("pagerank bsp as one shard on cuda", r.stats)


@pytest.mark.gpu
def test_every_multi_gpu_run_writes_documented_keys(engine_settings):
    if gpu_count() < 2:
        pytest.skip("one GPU: the multi-GPU engines need two")
    from digraph.dispatch.engines.power import gpu_settings as power_settings
    from digraph.dispatch.runtime.cuda import shard_settings
    # shard even this tiny graph over both GPUs, every family (as tests/dispatch/cuda/test_multi_gpu.py)
    engine_settings(shard_settings.DEFAULT, min_arcs_per_gpu=0, shard_families=("linear", "monotone", "hindex"))
    engine_settings(power_settings.POWER_DEFAULT, shard_arcs=0)
    tiny = digraph.load(TINY)
    # The sharded linear rounds are one code path for bsp, vertex-async and the automatic choice,
    # and for PageRank and adsorption alike (the dual-bound keys come from the CPU-side wrapper
    # checked above); one such run stands for them, since each takes seconds in the simulator.
    ran = _every_mode(tiny, {"sssp": {"source": 0}, "kcore": {}}, "cuda:0,1")
    assert len(ran) >= 6
    runs = {f"{name} mode={mode}": digraph.run(tiny, name, mode=mode, device="cuda:0,1", **params)
            for name, mode, params in (
                ("pagerank", "bsp", {"tol": 0.05}),
                ("pagerank", "power", {"tol": 0.05}),
                ("pagerank", "path", {"tol": 0.05}),
                ("adsorption", "path-nopriority", {"seeds": [0], "tol": 0.05}))}
    assert runs["pagerank mode=bsp"].stats["gpus"] == 2
    assert runs["pagerank mode=power"].stats["engine"] == "multi-gpu-power"
    assert runs["pagerank mode=path"].stats["path"]["workers"] == 2
    for label, r in runs.items():
        _check(f"{label} on cuda:0,1", r.stats)
