"""Tests of the path cache: PathSet.save / PathSet.load / load_or_build."""

import json
import os

import numpy as np
import pytest

from digraph.errors import DigraphError
from conftest import random_graph
from digraph.paths import PathSet
from digraph.paths import pathset as pathset_mod
from digraph.preprocess import load_or_build, preprocess
from digraph.preprocess.errors import CacheError


def _graph(seed=0, n=200, m=900):
    return random_graph(seed, n, m)


@pytest.fixture
def graph():
    return _graph()


def assert_same(a, b):
    for name, arr in a.arrays().items():
        other = getattr(b, name)
        assert arr.dtype == other.dtype, name
        assert np.array_equal(arr, other), name
    assert a.params == b.params
    assert a.graph_fingerprint == b.graph_fingerprint
    sa, sb = a.stats(), b.stats()
    for k in sa:
        if not k.startswith("time_"):
            assert sa[k] == sb[k], k


def test_round_trip(tmp_path, graph):
    ps = preprocess(graph, merge="trails", subgraph_arcs=100)
    d = ps.save(tmp_path / "cache")
    man = json.loads((d / "manifest.json").read_text())
    assert man["format_version"] == pathset_mod.FORMAT_VERSION
    assert man["graph_fingerprint"] == graph.fingerprint()
    assert man["params"]["merge"] == "trails"
    assert man["stats"]["num_paths"] == ps.num_paths
    back = PathSet.load(d, graph=graph, expect_params={"merge": "trails", "dmax": 16})
    assert_same(ps, back)
    assert isinstance(back.path_vertices, np.memmap)         # memory-mapped
    assert not back.path_vertices.flags.writeable
    assert "load" in back.timings
    # no temporary folders left beside the cache
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache"]


def test_overwrite_replaces_whole_cache(tmp_path, graph):
    d = tmp_path / "c"
    preprocess(graph, dmax=2).save(d)
    ps = preprocess(graph, dmax=5)
    ps.save(d)
    assert PathSet.load(d).params["dmax"] == 5
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c"]


def test_refuses_other_graph(tmp_path, graph):
    d = preprocess(graph).save(tmp_path / "c")
    other = _graph(seed=1)
    with pytest.raises(CacheError, match="graph fingerprint"):
        PathSet.load(d, graph=other)
    assert issubclass(CacheError, DigraphError)


def test_refuses_other_params(tmp_path, graph):
    d = preprocess(graph, dmax=4).save(tmp_path / "c")
    with pytest.raises(CacheError, match=r"dmax=4 \(expected 16\)"):
        PathSet.load(d, graph=graph, expect_params={"dmax": 16})
    with pytest.raises(CacheError, match="nosuch"):
        PathSet.load(d, expect_params={"nosuch": 1})


@pytest.mark.parametrize("field, value, words", [
    ("format_version", 99, "format version 99"),
    ("engine_version", "0.0.0-other", "engine version 0.0.0-other"),
    ("preprocess_version", -1, "preprocess version -1"),
])
def test_refuses_other_versions(tmp_path, graph, field, value, words):
    d = preprocess(graph).save(tmp_path / "c")
    man = json.loads((d / "manifest.json").read_text())
    man[field] = value
    (d / "manifest.json").write_text(json.dumps(man))
    with pytest.raises(CacheError, match=words):
        PathSet.load(d)


def test_refuses_missing_or_damaged(tmp_path, graph):
    with pytest.raises(CacheError, match="not a path cache"):
        PathSet.load(tmp_path / "nothing")
    d = preprocess(graph).save(tmp_path / "c")
    PathSet.array_files(d)["path_hot"].unlink()
    with pytest.raises(CacheError, match="path_hot"):
        PathSet.load(d)
    (d / "manifest.json").write_text("{ not json")
    with pytest.raises(CacheError, match="unreadable manifest"):
        PathSet.load(d)


def test_crash_in_the_middle_of_save_leaves_no_half_cache(tmp_path, graph, monkeypatch):
    ps = preprocess(graph)
    real_save = np.save
    calls = {"n": 0}

    def failing_save(path, arr, **kw):
        calls["n"] += 1
        if calls["n"] == 5:
            raise OSError("disk full (simulated)")
        return real_save(path, arr, **kw)

    monkeypatch.setattr(pathset_mod.np, "save", failing_save)
    d = tmp_path / "c"
    with pytest.raises(OSError, match="simulated"):
        ps.save(d)
    assert not d.exists()
    assert list(tmp_path.iterdir()) == []            # the temporary folder is gone too
    # an existing cache survives a failed overwrite untouched
    monkeypatch.setattr(pathset_mod.np, "save", real_save)
    old = preprocess(graph, dmax=3)
    old.save(d)
    calls["n"] = 0
    monkeypatch.setattr(pathset_mod.np, "save", failing_save)
    with pytest.raises(OSError):
        ps.save(d)
    monkeypatch.setattr(pathset_mod.np, "save", real_save)
    assert_same(old, PathSet.load(d, graph=graph))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c"]


def test_crash_before_replace_keeps_old(tmp_path, graph, monkeypatch):
    d = tmp_path / "c"
    old = preprocess(graph, dmax=3)
    old.save(d)
    real_replace = os.replace

    def failing_replace(a, b):
        raise OSError("killed (simulated)")

    monkeypatch.setattr(pathset_mod.os, "replace", failing_replace)
    with pytest.raises(OSError):
        preprocess(graph).save(d)
    monkeypatch.setattr(pathset_mod.os, "replace", real_replace)
    assert_same(old, PathSet.load(d))


def test_load_or_build(tmp_path, graph):
    d = tmp_path / "c"
    a = load_or_build(graph, d, dmax=4)
    assert a.params["dmax"] == 4 and "load" not in a.timings
    b = load_or_build(graph, d, dmax=4)
    assert "load" in b.timings                        # reused
    assert_same(a, b)
    c = load_or_build(graph, d, dmax=5)               # other parameters: rebuilt and replaced
    assert "load" not in c.timings and PathSet.load(d).params["dmax"] == 5
    e = load_or_build(graph, d, rebuild=True, dmax=5)
    assert "load" not in e.timings
    other = _graph(seed=2)
    f = load_or_build(other, d, dmax=5)               # other graph: rebuilt
    assert f.graph_fingerprint == other.fingerprint()
    assert PathSet.load(d).graph_fingerprint == other.fingerprint()


def test_mmap_false_reads_into_memory(tmp_path, graph):
    d = preprocess(graph).save(tmp_path / "c")
    ps = PathSet.load(d, mmap=False)
    assert not isinstance(ps.path_offsets, np.memmap)
