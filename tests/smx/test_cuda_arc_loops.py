"""A vertex's arc loop is written once (issue 18, item 5): each thread-per-vertex kernel of
``digraph/smx/cuda/`` and its block-per-hub ``*_heavy`` twin call the same inline device function
for it (a thread alone: step 1; a block's threads: step ``HB``), and neither kernel walks the
arcs itself."""

import ast
import importlib
from pathlib import Path

import pytest

SMX = Path(__file__).resolve().parents[2] / "digraph" / "smx" / "cuda"

PAIRS = {
    "linear": {"linear_push": "push_arcs", "linear_async_push": "push_arcs",
               "linear_sums": "row_sum", "linear_residual": "residual_in",
               "linear_dense_batch": "pull_in"},
    "linear_pull": {"linear_pull": "sum_sent", "linear_pull_local": "sum_sent"},
    "monotone": {"monotone_push": "relax_out", "monotone_async_push": "relax_out",
                 "hindex_round": "mark_all"},
}


def _functions(module):
    tree = ast.parse((SMX / f"{module}.py").read_text(encoding="utf-8"))
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}


def _calls(fn):
    return {n.func.id for n in ast.walk(fn) if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Name)}


def _loops_over_arcs(fn):
    """The ``for`` loops of a kernel whose range reads an offsets array (an arc loop)."""
    return [n for n in ast.walk(fn) if isinstance(n, ast.For)
            and any(isinstance(m, ast.Name) and m.id.endswith("offsets")
                    for m in ast.walk(n.iter))]


@pytest.mark.parametrize("module", sorted(PAIRS))
def test_each_kernel_pair_shares_its_arc_loop(module):
    fns = _functions(module)
    for kernel, loop in PAIRS[module].items():
        for name in (kernel, kernel + "_heavy"):
            assert loop in _calls(fns[name]), (name, loop)
            assert not _loops_over_arcs(fns[name]), name
    # the h-index probe counts through one device function too (the thread's binary search
    # calls it; the heavy kernel's block-wide search calls it directly)
    if module == "monotone":
        assert "count_at_least" in _calls(fns["hindex"])
        assert "count_at_least" in _calls(fns["hindex_round_heavy"])


def test_the_shared_loops_are_inline_device_functions():
    K = importlib.import_module("digraph.smx.cuda.kernels")
    for module, pairs in PAIRS.items():
        for loop in set(pairs.values()) | ({"count_at_least"} if module == "monotone"
                                           else set()):
            deco = _functions(module)[loop].decorator_list
            assert any("device=True" in ast.unparse(d) and "inline=True" in ast.unparse(d)
                       for d in deco), loop
            assert hasattr(K, loop), loop
