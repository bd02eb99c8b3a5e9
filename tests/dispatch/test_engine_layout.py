"""The engines by mode over a placement floor, checked on the sources.

* every mode is one package under ``digraph/dispatch/engines/``, holding its CPU, one-GPU,
  several-GPU and Dask cluster modules (``cpu*.py``, ``gpu*.py``, ``gpus*.py``,
  ``cluster*.py``);
* a mode's one-GPU modules never import a several-GPU module (``digraph.run``'s plan chooses
  between them, :attr:`digraph.dispatch.route.Plan.as_shard` included);
* the CUDA floor (``digraph/dispatch/runtime/cuda/``) imports no engine;
* :mod:`digraph.dispatch.runtime.cuda.launch` is the one module that names Numba's internals of
  the prepared-launch fast path;
* the kernels are by placement (``digraph/smx/cpu/``, ``digraph/smx/cuda/``), and
  :mod:`digraph.smx.cuda.kernels` is an index of them by name, defining none;
* no module of ``digraph/`` is over 450 lines.
"""
import ast
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "digraph"
ENGINES = PKG / "dispatch" / "engines"
RUNTIME = PKG / "dispatch" / "runtime" / "cuda"
INTERNALS = ("pre_launch_callbacks", "_prepare_args", "get_cufunc")

#: mode package -> the placement modules it must hold
MODES = {
    "power": {"cpu", "gpu", "gpus", "cluster"},
    "push": {"cpu_bsp", "cpu_vertex_async", "gpu_linear", "gpu_monotone", "gpus", "cluster"},
    "scc": {"cpu", "gpu", "gpus"},
    "path": {"cpu", "gpu", "gpus"},
    "cluster": {"gpu"},
    "peel": {"cpu", "gpu"},
}


def _sources(root):
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def _imported_modules(text, package):
    """Absolute names of the modules a source imports (relative imports resolved against its
    ``package``), including imports inside functions."""
    out = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[:len(parts) - (node.level - 1)]
                base = ".".join(parts + ([base] if base else []))
            out.add(base)
            out.update(f"{base}.{a.name}" for a in node.names)
    return out


def _module_imports(path):
    package = ".".join(("digraph",) + path.relative_to(PKG).parent.parts)
    return _imported_modules(path.read_text(encoding="utf-8"), package)


@pytest.mark.parametrize("mode", sorted(MODES))
def test_a_mode_is_one_package_with_its_placements(mode):
    pkg = ENGINES / mode
    stems = {p.stem for p in pkg.glob("*.py")}
    assert "__init__" in stems and MODES[mode] <= stems, sorted(stems)
    assert all(s in ("__init__", "settings") or
               s.split("_")[0] in ("cpu", "gpu", "gpus", "cluster") for s in stems), sorted(stems)
    doc = ast.get_docstring(ast.parse((pkg / "__init__.py").read_text(encoding="utf-8")))
    assert doc and "mode=" in doc


@pytest.mark.parametrize("mode", sorted(MODES))
def test_one_gpu_modules_never_import_several_gpu_ones(mode):
    for p in (ENGINES / mode).glob("gpu*.py"):
        if p.stem.startswith("gpus"):
            continue
        several = {m for m in _module_imports(p)
                   if m.startswith("digraph.dispatch.engines.")
                   and m.split(".")[-1].startswith("gpus")}
        assert not several, (p.name, sorted(several))


def test_the_cuda_floor_imports_no_engine():
    files = _sources(RUNTIME)
    assert {p.name for p in files} >= {"__init__.py", "backend.py", "launch.py", "residency.py",
                                       "exchange.py", "shards.py", "timer.py"}
    for p in files:
        bad = {m for m in _module_imports(p) if m.startswith(("digraph.dispatch.engines",
                                                               "digraph.dispatch.route"))}
        assert not bad, f"{p.relative_to(ROOT)} imports {sorted(bad)}"


def test_the_resolver_sees_engine_imports():
    """The checks above catch the ways a module can be imported (a check of the resolver)."""
    pkg = "digraph.dispatch.runtime.cuda"
    for src, want in (("from ...engines.push import gpus", "digraph.dispatch.engines.push.gpus"),
                      ("def f():\n    from ...engines.power.gpu import solve",
                       "digraph.dispatch.engines.power.gpu"),
                      ("import digraph.dispatch.engines.path.gpus_worker",
                       "digraph.dispatch.engines.path.gpus_worker")):
        assert want in _imported_modules(src, pkg), src
    got = _module_imports(RUNTIME / "backend.py")
    assert "digraph.errors" in got and "digraph.dispatch.runtime.cuda.launch" in got


@pytest.mark.parametrize("name", INTERNALS)
def test_only_launch_names_numba_internals(name):
    found = [p.relative_to(ROOT).as_posix() for p in _sources(PKG)
             if name in p.read_text(encoding="utf-8")]
    assert found == ["digraph/dispatch/runtime/cuda/launch.py"], found


def test_kernels_are_by_placement():
    smx = {p.relative_to(PKG / "smx").as_posix() for p in _sources(PKG / "smx")}
    flat = sorted(s for s in smx if "/" not in s and s not in ("__init__.py", "relax_codes.py"))
    assert not flat, flat
    assert {"cpu/bsp.py", "cpu/paths.py", "cuda/kernels.py", "cuda/linear.py"} <= smx


def test_no_module_is_over_450_lines():
    long = {p.relative_to(ROOT).as_posix(): n for p in _sources(PKG)
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 450}
    assert not long, long


def _defined(module):
    """{name: value} of what a module's source defines at its top level: functions (Numba
    dispatchers among them), classes and assigned names (``__all__`` left out)."""
    names = []
    for node in ast.parse(Path(module.__file__).read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
    return {name: getattr(module, name) for name in names if name != "__all__"}


KERNEL_FAMILIES = ("common", "linear", "linear_pull", "monotone", "walks")


def test_the_cuda_kernel_index_defines_no_kernel():
    """:mod:`digraph.smx.cuda.kernels` holds no kernel of its own and names every kernel, device
    function and constant of the family modules (the same objects: ``K.<name>``)."""
    K = importlib.import_module("digraph.smx.cuda.kernels")
    seen = {}
    for m in KERNEL_FAMILIES:
        mod = importlib.import_module(f"digraph.smx.cuda.{m}")
        for name, value in _defined(mod).items():
            assert name not in seen, (name, m, seen.get(name))
            seen[name] = m
            assert getattr(K, name) is value, (m, name)
    for name in ("HB", "HEAVY", "PROXY_SLOTS", "linear_push", "linear_dense_batch",
                 "linear_frontier", "linear_pull", "monotone_push", "hindex_round",
                 "path_linear_walk", "path_monotone_walk"):
        assert name in seen, name
    assert not _defined(K)


def test_kernel_constants_are_not_replaced_through_the_index():
    """No source replaces ``HB``, ``HEAVY`` or ``PROXY_SLOTS`` through the index (the kernels read
    them from their own modules)."""
    names = "HB|HEAVY|PROXY_SLOTS|_SIM"
    pat = re.compile(rf"""\b(K|cuda_kernels)\.({names})\s*=(?!=)|"""
                     rf"""setattr\(\s*(K|cuda_kernels)\s*,\s*["']({names})["']""")
    bad = [p.relative_to(ROOT).as_posix() for d in ("tests", "benchmarks", "digraph")
           for p in _sources(ROOT / d) if pat.search(p.read_text(encoding="utf-8"))]
    assert not bad, bad


def test_relax_codes_are_defined_once():
    """The relax operations' codes are numbers in :mod:`digraph.smx.relax_codes` only: the
    algorithms' names (``RELAX_OPS``), the kernels' map (``RELAX_CODES``) and the CPU and CUDA
    kernels all take them from there."""
    from digraph.algorithms.base import RELAX_OPS
    from digraph.dispatch.systems import RELAX_CODES
    from digraph.smx import relax_codes
    want = {"plus": relax_codes.PLUS, "min": relax_codes.MIN, "max": relax_codes.MAX,
            "times": relax_codes.TIMES, "first": relax_codes.FIRST}
    assert RELAX_OPS == want and RELAX_CODES == want and len(set(want.values())) == 5
    literal = re.compile(r'"(plus|min|max|times|first)"\s*:\s*\d|^_?(PLUS|MIN|MAX|TIMES|FIRST)\s*=\s*\d')
    found = [p.relative_to(ROOT).as_posix() for p in _sources(PKG)
             if p.name != "relax_codes.py"
             and any(literal.search(line) for line in p.read_text().splitlines()
                     if not line.startswith("COMBINE_OPS"))]  # min/max combine: other codes
    # digraph/io/_scan.py's _PLUS is the character '+' of a number's parser, not a relax code
    assert found == ["digraph/io/_scan.py"], found


#: the ``while`` loops of digraph/dispatch outside the driver, none a loop of rounds: (module,
#: innermost function) → what it walks
NOT_ROUNDS = {
    ("engines/path/gpus.py", "step"): "the layers a round finished (the round is the driver's)",
    ("engines/power/gpus_layout.py", "dealt_layout"): "halving the blocks of a layout",
    ("engines/power/cluster.py", "step"): "a round tried again after a restart (one round)",
    ("engines/power/cluster.py", "solve"): "the driver called again when a worker was lost "
                                           "while the answer was gathered (its rounds its own)",
    ("engines/power/cluster_checkpoint.py", "live_workers"): "polling the scheduler's list",
    ("engines/power/cluster_checkpoint.py", "restart"): "a restart tried again after a loss "
                                                        "within it",
    ("engines/push/cluster.py", "step"): "a round tried again after a restart (one round)",
    ("engines/push/cluster.py", "drive"): "the driver called again when a worker was lost "
                                          "while the answer was gathered (its rounds its own)",
    ("engines/push/gpu_streamed.py", "_batches"): "cutting the arcs into batches",
    ("engines/push/gpus_rounds.py", "drain"): "the rounds still in flight, settled once",
    ("engines/scc/cpu.py", "_steps"): "grouping the DAG's thin levels",
    ("reach.py", "_reach"): "a breadth-first search",
    ("runtime/cuda/ranges.py", "_cuts"): "a bisection of range boundaries",
    ("runtime/cuda/residency.py", "nbytes"): "the arrays a structure holds",
}


def test_loops_of_rounds_live_in_the_driver():
    """Every loop of rounds or sweeps is one of digraph.dispatch.driver's protocols: no other
    module of digraph/dispatch checks for a Ctrl-C between rounds, and its other ``while``
    loops are the listed walks."""
    dispatch = PKG / "dispatch"
    found = set()
    for path in dispatch.rglob("*.py"):
        if path.name == "driver.py":
            continue
        text = path.read_text(encoding="utf-8")
        assert "interrupts" not in text, f"{path}: a Ctrl-C is checked only by the driver"
        tree = ast.parse(text)
        for fn in ast.walk(tree):
            if isinstance(fn, ast.FunctionDef):
                inner = {n for f in ast.walk(fn) if f is not fn and isinstance(f, ast.FunctionDef)
                         for n in ast.walk(f)}
                for node in ast.walk(fn):
                    if isinstance(node, ast.While) and node not in inner:
                        found.add((path.relative_to(dispatch).as_posix(), fn.name))
    assert found <= set(NOT_ROUNDS), sorted(found - set(NOT_ROUNDS))
