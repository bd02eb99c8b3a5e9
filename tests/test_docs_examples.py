"""The Python examples of the documentation run as written (docs/interface.md, README)."""

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
