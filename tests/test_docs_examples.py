"""The Python examples of the documentation run as written (docs/interface.md, README), and every
committed benchmark result names its date and the command that writes it."""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def python_blocks(path):
    return re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), flags=re.S)


def test_interface_example_runs(capsys):
    blocks = python_blocks(ROOT / "docs" / "interface.md")
    assert len(blocks) == 1
    exec(compile(blocks[0], "docs/interface.md", "exec"), {"__name__": "docs_example"})
    out = capsys.readouterr().out
    assert "bsp" in out and "path" in out and "vertices reachable from" in out


def test_readme_python_example_runs(capsys):
    blocks = [b for b in python_blocks(ROOT / "README.md") if "digraph.generators" in b]
    assert blocks, "README's self-contained example is missing"
    exec(compile(blocks[0], "README.md", "exec"), {"__name__": "readme_example"})
    assert capsys.readouterr().out


def test_committed_results_name_their_command_and_date():
    """notebooks/03_performance.ipynb plots benchmarks/results/*.json beside the file's date and
    the command listed for it in benchmarks/results/README.md: both must be there."""
    results = ROOT / "benchmarks" / "results"
    readme = (results / "README.md").read_text(encoding="utf-8")
    files = sorted(results.glob("*.json"))
    assert files
    for path in files:
        data = json.loads(path.read_text(encoding="utf-8"))
        meta = data.get("meta") or data  # bench_kcore.py keeps its metadata beside "rows"
        assert meta.get("date"), f"{path.name} records no date"
        assert f"| `{path.name}` | `" in readme, \
            f"{path.name}: add the command that writes it to benchmarks/results/README.md"
