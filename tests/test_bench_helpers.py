"""The benchmark harness (``benchmarks/harness.py``) and its graph builder, on tiny graphs: the
fast CSR builder gives the graph ``digraph.load`` gives, a row has every required field, and a
wrong answer is caught by verification."""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import digraph
from digraph.generators import rmat

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import graphs  # noqa: E402
import harness  # noqa: E402


def test_csr_graph_equals_load():
    src, dst = rmat(10, 8, seed=3)
    src = np.concatenate([src, src[:50]])  # parallel arcs
    dst = np.concatenate([dst, dst[:50]])
    n = 1 << 10
    ref = digraph.load((src, dst), num_vertices=n)
    g = graphs.csr_graph(np, src, dst, n)
    for name in ("out_offsets", "out_targets", "in_offsets", "in_arcs", "in_sources"):
        a, b = getattr(ref, name), getattr(g, name)
        assert a.dtype == b.dtype, name
        np.testing.assert_array_equal(a, b, err_msg=name)
    assert g.fingerprint() == ref.fingerprint()


def test_generated_graph_names():
    assert graphs.load("chain5").num_arcs == 4
    g = graphs.load("grid3")
    assert g.num_vertices == 9 and g.num_arcs == 24 and g.weighted
    with pytest.raises(graphs.GraphUnavailable, match="DIGRAPH_DATASETS"):
        graphs.load("no-such-dataset")


def test_rows_have_every_field_and_append(tmp_path):
    cases = [harness.Case("rmat8", "pagerank", tol=1e-8),
             harness.Case("rmat8", "pagerank", peer="scipy-power", tol=1e-8),
             harness.Case("rmat8", "sssp", mode="bsp"),
             harness.Case("rmat8", "sssp", peer="scipy-dijkstra"),
             harness.Case("rmat8", "kcore")]
    rows = harness.time_cases(cases, repeat=2, log=lambda *_: None)
    assert len(rows) == len(cases)
    for row in rows:
        missing = [f for f in harness.ROW_FIELDS if f not in row]
        assert not missing, missing
        t = row["timings"]
        assert t["repeat"] == 2 and t["min_s"] <= t["median_s"] <= t["max_s"]
        assert t["compile_s"] >= 0 and row["card"] is None
        assert row["machine"]["cores"] >= 1 and "numba_num_threads" in row["machine"]
    pr = rows[0]
    assert pr["ran"] == pr["counters"]["mode"] and pr["counters"]["rounds"] > 0
    assert pr["accuracy"]["check"] == "within tol" and pr["accuracy"]["true_error"] <= 1e-8
    assert pr["accuracy"]["error_bound"] <= 1e-8
    assert rows[2]["accuracy"]["check"] == "equal"
    out = tmp_path / "r.json"
    harness.write_rows(out, rows[:2])
    harness.write_rows(out, rows[2:])
    data = json.loads(out.read_text())
    assert data["meta"]["date"] and data["meta"]["schema"] == harness.SCHEMA
    assert [r["method"] for r in data["rows"]] == [r["method"] for r in rows]


def test_absent_dataset_is_skipped():
    lines = []
    rows = harness.time_cases([harness.Case("no-such-dataset", "pagerank")], repeat=1,
                              log=lines.append)
    assert rows == [] and "skipped no-such-dataset" in lines[0]


def test_verify_catches_wrong_answers():
    g = graphs.load("rmat8")
    params = harness.resolve_params(g, "pagerank", {})
    ref = harness.reference(g, "pagerank", params)
    good = ref[0].copy()
    assert harness.verify(good, {"error_bound": 1e-9}, "pagerank", 1e-8, ref)["check"] == "within tol"
    bad = good.copy()
    bad[0] += 1e-6
    with pytest.raises(harness.WrongAnswer, match="L1 error"):
        harness.verify(bad, {}, "pagerank", 1e-8, ref)
    with pytest.raises(harness.WrongAnswer, match="certified bound"):
        harness.verify(good, {"error_bound": 1e-7}, "pagerank", 1e-8, ref)
    with pytest.raises(harness.WrongAnswer, match="converged"):
        harness.verify(good, {"converged": False}, "pagerank", 1e-8, ref)
    sp = harness.resolve_params(g, "sssp", {})
    sref = harness.reference(g, "sssp", sp)
    wrong = sref[0].copy()
    wrong[np.flatnonzero(np.isfinite(wrong) & (wrong > 0))[0]] += 1
    with pytest.raises(harness.WrongAnswer, match="differ"):
        harness.verify(wrong, {}, "sssp", None, sref)
    kref = harness.reference(g, "kcore", {})
    with pytest.raises(harness.WrongAnswer, match="differ"):
        harness.verify(kref[0] + 1, {}, "kcore", None, kref)


def test_wrong_answer_fails_the_command(monkeypatch, tmp_path, capsys):
    real = harness.verify

    def lying(values, stats, algorithm, tol, ref):
        return real(np.asarray(values) * 2, stats, algorithm, tol, ref)
    monkeypatch.setattr(harness, "verify", lying)
    out = tmp_path / "r.json"
    rc = harness.main(["--graphs", "rmat8", "--repeat", "1", "--out", str(out)])
    assert rc == 2 and not out.exists()
    assert "WRONG ANSWER" in capsys.readouterr().err


def test_scripts_parse_help():
    import importlib
    for name in ("bench_cpu", "bench_gpu", "bench_multi_gpu", "bench_preprocess", "bench_load",
                 "before_after", "tables"):
        mod = importlib.import_module(name)
        with pytest.raises(SystemExit) as e:
            mod.main(["--help"])
        assert e.value.code == 0, name


def test_gpu_modes_may_name_their_algorithm():
    import bench_gpu
    todo = bench_gpu.cases(["rmat8"], ["pagerank", "adsorption"],
                           ["pagerank:power", "adsorption:default", "adsorption:bsp"], peer=False)
    assert [(c.algorithm, c.mode) for c in todo] == [("pagerank", "power"), ("adsorption", None),
                                                      ("adsorption", "bsp")]
    both = bench_gpu.cases(["rmat8"], ["pagerank", "adsorption"], ["power"], peer=False)
    assert [(c.algorithm, c.mode) for c in both] == [("pagerank", "power"),
                                                      ("adsorption", "power")]


def test_settling_follows_the_routers_timing_window():
    # stats["route"]["exploring"], which harness.exploring reads, and the route's words agree: on
    # a graph where the automatic choice times two engines (adsorption on one giant component),
    # it holds through that window and not after
    rng = np.random.default_rng(4)
    g = digraph.Graph.from_arrays(rng.integers(0, 1500, 15000), rng.integers(0, 1500, 15000),
                                  num_vertices=1500)
    flags = []
    for _ in range(harness.SETTLE_RUNS + 2):
        r = digraph.run(g, "adsorption", seeds=[0, 1, 2], tol=1e-8, threads=1)
        route = r.stats["route"]
        flags.append(harness.exploring(r.stats))
        words = route["code"] == "measuring" or "the next runs time" in route["reason"]
        assert route["exploring"] is flags[-1] is words
    assert flags[0] and r.stats["route"]["code"] == "measured"
    settled = flags.index(False)
    assert settled <= harness.SETTLE_RUNS and not any(flags[settled:])
