"""Every figure of docs/benchmarks.md and of the README's figures block is what
``benchmarks/tables.py`` computes from the committed results files (no timing here)."""
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import tables  # noqa: E402


def test_committed_docs_match_the_results_files():
    problems = tables.check(ROOT)
    assert not problems, "\n".join(problems) + "\nrun: python benchmarks/tables.py"


def test_readme_has_the_generated_block():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert text.count(tables.BEGIN) == 1 and text.count(tables.END) == 1


def test_a_changed_figure_is_caught(tmp_path):
    """Copy the docs and results, change one number in the README block: check() reports it."""
    for sub in ("docs", "benchmarks/results"):
        shutil.copytree(ROOT / sub, tmp_path / sub)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme[readme.index(tables.BEGIN):readme.index(tables.END)]
    figure = next(tok for tok in block.split() if tok[:1].isdigit() and "." in tok)
    (tmp_path / "README.md").write_text(readme.replace(figure, "999.9", 1), encoding="utf-8")
    problems = tables.check(tmp_path)
    assert len(problems) == 1 and problems[0].startswith("README.md"), problems
    (tmp_path / "README.md").write_text(readme, encoding="utf-8")
    assert tables.check(tmp_path) == []


def test_every_figure_comes_from_exactly_one_row():
    with pytest.raises(LookupError):
        tables.find("sssp_cpu2.json", "cnr-2000", lambda r: True)
    ms, row = tables.find("sssp_cpu2.json", "cnr-2000", tables.method("digraph default"))
    assert ms == pytest.approx(row["median_ms"])
