"""Tests of the preprocessing command line: ``digraph preprocess`` and ``digraph info``."""

import json

import pytest

from digraph.paths import PathSet
from digraph.cli import main


@pytest.fixture
def edge_file(tmp_path):
    p = tmp_path / "g.txt"
    p.write_text("0 1\n1 2\n2 0\n2 3\n3 4\n4 2\n5 5\n")
    return p


def test_preprocess_then_info(tmp_path, edge_file, capsys):
    out = tmp_path / "cache"
    assert main(["preprocess", str(edge_file), "-o", str(out), "--jobs", "1", "--dmax", "4",
                 "--hot-ratio", "0.5", "--merge", "trails"]) == 0
    text = capsys.readouterr().out
    assert "num_paths" in text and "param dmax" in text
    ps = PathSet.load(out)
    assert ps.params["dmax"] == 4 and ps.params["merge"] == "trails" and ps.num_arcs == 7
    assert main(["info", str(out)]) == 0
    table = capsys.readouterr().out
    assert "num_scc" in table and "graph_fingerprint" in table
    times = dict(line.split(None, 1) for line in table.splitlines() if line.startswith("time_"))
    assert {"time_total", "time_compile"} <= set(times)  # build and compilation apart, in s
    assert all(v.endswith(" s") for v in times.values()), times
    assert main(["info", str(out), "--json"]) == 0
    man = json.loads(capsys.readouterr().out)
    assert man["stats"]["num_arcs"] == 7


def test_preprocess_json(tmp_path, edge_file, capsys):
    assert main(["preprocess", str(edge_file), "-o", str(tmp_path / "c"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["stats"]["num_arcs"] == 7


def test_bad_input_one_line_exit_2(tmp_path, capsys):
    assert main(["preprocess", str(tmp_path / "missing.txt"), "-o", str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("digraph: error:") and "\n" not in err
    bad = tmp_path / "bad.txt"
    bad.write_text("0 1\nfoo bar\n")
    assert main(["preprocess", str(bad), "-o", str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("digraph: error:") and "\n" not in err
    assert not (tmp_path / "c").exists()
    assert main(["info", str(tmp_path / "nothing")]) == 2
    assert "not a path cache" in capsys.readouterr().err


def test_bad_parameter_exit_2(tmp_path, edge_file, capsys):
    assert main(["preprocess", str(edge_file), "-o", str(tmp_path / "c"), "--dmax", "0"]) == 2
    assert "dmax" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["preprocess", str(edge_file)])          # -o missing: argparse's own exit 2
    assert e.value.code == 2


def test_info_on_a_forged_manifest_is_one_line(tmp_path, edge_file, capsys):
    """A manifest whose stats or params are not a table: one line naming the file, exit 2."""
    import json
    from digraph.cli import main
    out = tmp_path / "cache"
    assert main(["preprocess", str(edge_file), "-o", str(out)]) == 0
    capsys.readouterr()
    man = json.loads((out / "manifest.json").read_text())
    man["params"] = "junk"
    man["stats"] = {"x": [1, 2]}
    (out / "manifest.json").write_text(json.dumps(man))
    assert main(["info", str(out)]) == 2
    err = capsys.readouterr().err
    assert "manifest.json" in err and "not a table" in err and "Traceback" not in err
