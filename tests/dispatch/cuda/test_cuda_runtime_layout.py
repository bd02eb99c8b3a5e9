"""The layering of the CUDA runtime (issue 18, item 5), checked on the sources as text.

* :mod:`digraph.dispatch.cuda.runtime.launch` is the one module of ``digraph/`` that names
  Numba's internals of the prepared-launch fast path (``pre_launch_callbacks``, ``_prepare_args``,
  ``get_cufunc``);
* ``digraph/dispatch/cuda/runtime/*.py`` import no engine (:mod:`digraph.dispatch.gpu`,
  :mod:`digraph.dispatch.multi_gpu`, ...);
* the module-global state the backends read at call time (``BACKEND``, ``_BACKENDS``) is patched
  in :mod:`digraph.dispatch.cuda.runtime.backend`, not through the names
  :mod:`digraph.dispatch.gpu` re-exports (replacing those would not reach the backends);
* the sharded engine's parts are ``digraph/dispatch/cuda/sharded/*.py``, none over 450 lines,
  re-exported by :mod:`digraph.dispatch.multi_gpu`, whose moved names no test or benchmark
  replaces there;
* the one-GPU engines are ``digraph/dispatch/cuda/one_gpu/*.py``, none over 450 lines (nor
  :mod:`digraph.dispatch.gpu` itself), re-exported by :mod:`digraph.dispatch.gpu`, whose moved
  names no test or benchmark replaces there.
"""
import ast
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
PKG = ROOT / "digraph"
RUNTIME = PKG / "dispatch" / "cuda" / "runtime"
SHARDED = PKG / "dispatch" / "cuda" / "sharded"
ONE_GPU = PKG / "dispatch" / "cuda" / "one_gpu"
INTERNALS = ("pre_launch_callbacks", "_prepare_args", "get_cufunc")
ENGINES = ("gpu", "multi_gpu", "gpu_power", "multi_gpu_power", "gpu_workers")


def _sources(root):
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


@pytest.mark.parametrize("name", INTERNALS)
def test_only_launch_names_numba_internals(name):
    found = [p.relative_to(ROOT).as_posix() for p in _sources(PKG)
             if name in p.read_text(encoding="utf-8")]
    assert found == ["digraph/dispatch/cuda/runtime/launch.py"], found


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


def test_runtime_imports_no_engine():
    files = _sources(RUNTIME)
    assert {p.name for p in files} >= {"__init__.py", "backend.py", "launch.py"}
    engines = {f"digraph.dispatch.{e}" for e in ENGINES}
    for p in files:
        bad = _module_imports(p) & engines
        assert not bad, f"{p.relative_to(ROOT)} imports {sorted(bad)}"


def test_the_resolver_sees_engine_imports():
    """The check above catches the ways an engine can be imported (a check of the resolver)."""
    engines = {f"digraph.dispatch.{e}" for e in ENGINES}
    pkg = "digraph.dispatch.cuda.runtime"
    for src in ("from ... import gpu", "from ...multi_gpu import solve",
                "def f():\n    from ... import gpu_power", "import digraph.dispatch.gpu_workers",
                "from digraph.dispatch import multi_gpu_power"):
        assert _imported_modules(src, pkg) & engines, src
    assert not _imported_modules("from .launch import _SCALARS\nfrom ....errors import X",
                                 pkg) & engines
    got = _module_imports(RUNTIME / "backend.py")
    assert "digraph.errors" in got and "digraph.dispatch.cuda.runtime.launch" in got


def test_runtime_state_is_patched_where_it_is_read():
    """No test or benchmark replaces ``gpu.BACKEND``/``gpu._BACKENDS``: the backends read them
    from :mod:`digraph.dispatch.cuda.runtime.backend`."""
    pat = re.compile(r"""\bgpu(_mod)?\.(BACKEND|_BACKENDS)\s*=(?!=)|"""
                     r"""setattr\(\s*gpu(_mod)?\s*,\s*["'](BACKEND|_BACKENDS)["']""")
    bad = [p.relative_to(ROOT).as_posix()
           for d in ("tests", "benchmarks", "digraph") for p in _sources(ROOT / d)
           if pat.search(p.read_text(encoding="utf-8"))]
    assert not bad, bad


def test_gpu_reexports_the_runtime():
    from digraph.dispatch import gpu
    from digraph.dispatch.cuda.runtime import backend as rb, launch
    for name in ("backend", "_Backend", "BackendSettings", "BACKEND", "device_index",
                 "_gpu_name", "_BACKENDS"):
        assert getattr(gpu, name) is getattr(rb, name), name
    for name in ("_PreparedLaunch", "_core_launch", "_SCALARS"):
        assert getattr(gpu, name) is getattr(launch, name), name


def test_the_sharded_engines_use_no_private_helper_of_the_one_gpu_engine():
    """What the one-GPU and the sharded engines share lives in
    :mod:`digraph.dispatch.cuda.common` (issue 18, item 5): no sharded module names
    ``gpu._<helper>`` or the linear helpers through ``gpu``."""
    pat = re.compile(r"\bgpu\.(_\w+|contraction_sums|column_sums_known|count_dense_round)\b")
    dispatch = ROOT / "digraph" / "dispatch"
    paths = [dispatch / name for name in ("multi_gpu.py", "multi_gpu_power.py", "gpu_workers.py")]
    for path in paths + _sources(SHARDED):
        name = path.name
        text = path.read_text(encoding="utf-8")
        found = pat.findall(text)
        if name == "gpu_workers.py":  # the path dispatcher's units are the path engine's
            found = [f for f in found if f != "_units"]
        assert not found, (name, found)
    from digraph.dispatch import gpu
    from digraph.dispatch.cuda import common
    assert gpu._kernels is common.kernels and gpu._index_dtype is common.index_dtype
    assert gpu.contraction_sums is common.contraction_sums


def test_gpu_and_multi_gpu_do_not_import_each_other():
    """The one-GPU engine and the sharded one are independent (issue 18, item 5): ``digraph.run``
    chooses between them (one shard on one GPU, one GPU when a sharded run would use one)."""
    dispatch = PKG / "dispatch"
    gpu_imports = _module_imports(dispatch / "gpu.py")
    # the one-GPU engine's parts in cuda/one_gpu/ import neither side of the sharded engine
    one_gpu_imports = set().union(*(_module_imports(p) for p in _sources(ONE_GPU)))
    assert "digraph.dispatch.multi_gpu" not in one_gpu_imports
    assert not any(m.startswith("digraph.dispatch.cuda.sharded") for m in one_gpu_imports)
    # the sharded engine: multi_gpu.py and its parts in cuda/sharded/
    multi_imports = set().union(*(_module_imports(p)
                                  for p in [dispatch / "multi_gpu.py"] + _sources(SHARDED)))
    assert "digraph.dispatch.multi_gpu" not in gpu_imports
    assert not any(m.startswith("digraph.dispatch.cuda.sharded") for m in gpu_imports)
    assert "digraph.dispatch.gpu" not in multi_imports
    assert "digraph.dispatch.cuda.common" in gpu_imports & multi_imports


def test_sharded_files_are_small():
    """``cuda/sharded/`` holds the sharded engine in files of at most about 400 lines (issue 18,
    item 5); 450 leaves room for a docstring or two."""
    files = _sources(SHARDED)
    assert {p.name for p in files} >= {"ranges.py", "shards.py", "exchange.py", "layout.py",
                                       "rounds.py", "linear.py", "monotone.py"}
    long = {p.name: n for p in files
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 450}
    assert not long, long


def _replacing(module, names):
    """Sources under tests/, benchmarks/ and digraph/ that assign one of ``names`` through
    ``module`` (a regular expression of the module's local name), or ``setattr`` it."""
    names = "|".join(sorted(names))
    pat = re.compile(rf"""\b{module}\.({names})\s*=(?!=)|"""
                     rf"""setattr\(\s*{module}\s*,\s*["']({names})["']""")
    return [p.relative_to(ROOT).as_posix()
            for d in ("tests", "benchmarks", "digraph") for p in _sources(ROOT / d)
            if pat.search(p.read_text(encoding="utf-8"))]


def _sharded_names():
    """{name: module} of what :mod:`digraph.dispatch.multi_gpu` re-exports from cuda/sharded/."""
    from digraph.dispatch import multi_gpu
    out = {}
    for p in _sources(SHARDED):
        if p.name in ("__init__.py", "power_work.py", "settings.py"):
            continue
        mod = importlib.import_module(f"digraph.dispatch.cuda.sharded.{p.stem}")
        for name, value in vars(mod).items():
            if getattr(value, "__module__", None) == mod.__name__ or name in (
                    "EXCHANGES", "LAYOUTS", "_WORK", "_NCCL"):
                if hasattr(multi_gpu, name):
                    out[name] = mod
    return out


def test_multi_gpu_reexports_the_sharded_parts():
    """Every function, class and state the engine's parts define is ``multi_gpu.<name>`` too (the
    same object: ``multi_gpu._WORK`` is the kept work the shards read)."""
    from digraph.dispatch import multi_gpu
    names = _sharded_names()
    for name in ("shard_ranges", "recut_ranges", "balanced_ranges", "learn_balance", "_Shard",
                 "make_shards", "_parallel", "_sync_all", "_WORK", "drop_work", "_Exchange",
                 "_NCCL", "_comm_stream", "EXCHANGES", "_Timer", "shard_layout", "LAYOUTS",
                 "_own_first", "linear_shards", "linear_round", "_Rounds", "_linear",
                 "_gather_linear", "_contraction", "_monotone", "_hindex"):
        assert name in names, name
    for name, mod in names.items():
        assert getattr(multi_gpu, name) is getattr(mod, name), name


def test_sharded_state_is_not_replaced_through_multi_gpu():
    """No test or benchmark replaces a name :mod:`digraph.dispatch.multi_gpu` re-exports from
    cuda/sharded/ (the parts read their own module's names; ``multi_gpu.DEFAULT``, which stays
    there, is read at each call)."""
    assert not _replacing("multi_gpu", _sharded_names())


def test_one_gpu_files_are_small():
    """``cuda/one_gpu/`` holds the one-GPU engines in files of at most about 400 lines, and
    :mod:`digraph.dispatch.gpu` keeps only their settings and entry point (issue 18, item 5); 450
    leaves room for a docstring or two."""
    files = _sources(ONE_GPU)
    assert {p.name for p in files} >= {"device_graph.py", "linear.py", "streamed.py", "paths.py",
                                       "monotone.py", "worklist.py", "cluster.py", "scc.py"}
    long = {p.name: n for p in files + [PKG / "dispatch" / "gpu.py"]
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 450}
    assert not long, long


def _one_gpu_names():
    """{name: module} of what :mod:`digraph.dispatch.gpu` re-exports from cuda/one_gpu/."""
    from digraph.dispatch import gpu
    out = {}
    for p in _sources(ONE_GPU):
        if p.name in ("__init__.py", "settings.py"):
            continue
        mod = importlib.import_module(f"digraph.dispatch.cuda.one_gpu.{p.stem}")
        for name, value in vars(mod).items():
            # the functions and classes defined there (not gpu's own solve, DEFAULT, ...)
            if callable(value) and getattr(value, "__module__", None) == mod.__name__ \
                    and hasattr(gpu, name) and getattr(gpu, name).__module__ != gpu.__name__:
                out[name] = mod
    return out


def test_gpu_reexports_the_one_gpu_parts():
    """Every function and class moved out of :mod:`digraph.dispatch.gpu` is ``gpu.<name>`` too
    (the same object)."""
    from digraph.dispatch import gpu
    names = _one_gpu_names()
    for name in ("_device_graph", "_heavy", "_device_undirected", "_too_big", "_auto_batch",
                 "_degree_scaled", "_Linear", "_LinearRounds", "_linear", "_batches",
                 "_linear_streamed", "_units", "_group_paths", "_device_paths", "_path_linear",
                 "_Rounds", "_proxies", "_check_pathset", "_path_monotone",
                 "_monotone_bsp", "_hindex"):
        assert name in names, name
    for name, mod in names.items():
        assert getattr(gpu, name) is getattr(mod, name), name
    # the settings live in cuda/one_gpu/settings.py and gpu re-exports them
    from digraph.dispatch.cuda.one_gpu import settings
    assert settings.DEFAULT is gpu.DEFAULT and settings.PATH_DEFAULT is gpu.PATH_DEFAULT


def test_one_gpu_parts_are_not_replaced_through_gpu():
    """No test or benchmark replaces a name :mod:`digraph.dispatch.gpu` re-exports from
    cuda/one_gpu/ (the parts read their own module's names; settings are passed to a run, never
    replaced, :mod:`digraph.dispatch.settings`)."""
    assert not _replacing("gpu(_mod)?", _one_gpu_names())


# ------------------------------------------------------------------ the split of three long modules
# (issue 18, item 5: no file over about 400 lines; the CUDA kernels by family under smx/)

SMX = PKG / "smx"
CPU_PATH = PKG / "dispatch" / "cpu_path"
KERNEL_FAMILIES = ("cuda_common", "cuda_linear", "cuda_linear_pull", "cuda_monotone", "cuda_walks")
POWER_PARTS = ("power_setup", "power_work")


def _split_files():
    return ([SMX / f"{m}.py" for m in KERNEL_FAMILIES + ("cuda_kernels",)]
            + _sources(CPU_PATH) + [PKG / "dispatch" / "paths.py"]
            + [ONE_GPU / f"{m}.py" for m in POWER_PARTS] + [PKG / "dispatch" / "gpu_power.py"])


def test_split_modules_are_small():
    """The CUDA kernels by family (``smx/cuda_*.py``, :mod:`digraph.smx.cuda_kernels` a facade),
    the CPU path engine's parts (``dispatch/cpu_path/``, :mod:`digraph.dispatch.paths` its
    entry) and the one-GPU power iteration's (``cuda/one_gpu/power_*.py``,
    :mod:`digraph.dispatch.gpu_power` its entry): none over 400 lines, each with a module
    docstring."""
    files = _split_files()
    assert {p.name for p in _sources(CPU_PATH)} >= {"__init__.py", "settings.py", "schedule.py",
                                                    "linear.py", "monotone.py"}
    long = {p.relative_to(ROOT).as_posix(): n for p in files
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 400}
    assert not long, long
    for p in files:
        assert ast.get_docstring(ast.parse(p.read_text(encoding="utf-8"))), p


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


def test_cuda_kernels_reexports_the_families():
    """:mod:`digraph.smx.cuda_kernels` holds no kernel of its own and re-exports every kernel,
    device function and constant of the family modules (the same objects, ``K.<name>`` as
    before), the names other modules import from it among them."""
    K = importlib.import_module("digraph.smx.cuda_kernels")
    seen = {}
    for m in KERNEL_FAMILIES:
        mod = importlib.import_module(f"digraph.smx.{m}")
        for name, value in _defined(mod).items():
            assert name not in seen, (name, m, seen.get(name))
            seen[name] = m
            assert getattr(K, name) is value, (m, name)
    for name in ("HB", "HEAVY", "PROXY_SLOTS", "_SIM", "_block_sum", "_neumaier", "relax",
                 "improve", "linear_take", "linear_push", "linear_push_heavy", "linear_async_push",
                 "linear_async_push_heavy", "linear_sums", "linear_sums_heavy", "linear_residual",
                 "linear_residual_heavy", "linear_scan", "linear_dense_batch",
                 "linear_dense_batch_heavy", "linear_frontier", "linear_pull", "linear_pull_heavy",
                 "linear_pull_local", "linear_pull_local_heavy", "monotone_push",
                 "monotone_push_heavy", "monotone_async_push", "monotone_async_push_heavy",
                 "hindex_round", "hindex_round_heavy", "path_linear_walk", "path_monotone_walk"):
        assert name in seen, name
    assert not _defined(K)


def test_kernel_constants_are_not_replaced_through_the_facade():
    """No test or benchmark replaces ``HB``, ``HEAVY`` or ``PROXY_SLOTS`` through
    :mod:`digraph.smx.cuda_kernels` (the kernels read them from their own modules)."""
    assert not _replacing(r"(K|cuda_kernels)", {"HB", "HEAVY", "PROXY_SLOTS", "_SIM"})


def _parts(package, stems, entry):
    """{name: module} of what ``entry`` re-exports from the modules ``package.<stem>``: the
    functions and classes defined there (not the entry's own)."""
    out = {}
    for stem in stems:
        mod = importlib.import_module(f"{package}.{stem}")
        for name, value in vars(mod).items():
            if getattr(value, "__module__", None) == mod.__name__ and hasattr(entry, name):
                out[name] = mod
    return out


def test_paths_reexports_the_cpu_path_parts():
    """:mod:`digraph.dispatch.paths` keeps ``DEFAULT`` and ``solve`` and re-exports the CPU path
    engine's parts (the same objects); a replaced ``paths.DEFAULT`` is what ``solve`` reads."""
    from digraph.dispatch import paths
    from digraph.dispatch.cpu_path import settings
    names = _parts("digraph.dispatch.cpu_path", ("settings", "schedule", "linear", "monotone"),
                   paths)
    for name in ("PathSettings", "resolve_state", "check_layer_window", "check_short_path_push",
                 "_chunks", "_Schedule", "_Representation", "_representation", "_min_score",
                 "_aging", "_walk_arrays", "_count_check", "_count", "_solve_linear",
                 "_fused_layer", "_fused_window", "_linear_done", "_solve_monotone"):
        assert name in names, name
    for name, mod in names.items():
        assert getattr(paths, name) is getattr(mod, name), name
    assert paths.PRIORITIES is settings.PRIORITIES and paths.STATES is settings.STATES
    assert paths.solve.__module__ == paths.__name__
    assert isinstance(paths.DEFAULT, paths.PathSettings) and not hasattr(settings, "DEFAULT")
    assert not _replacing("paths", set(names) | {"PRIORITIES", "STATES"})


def test_gpu_power_reexports_its_parts():
    """:mod:`digraph.dispatch.gpu_power` keeps ``solve``, re-exports ``PowerGpuSettings`` and
    ``DEFAULT`` (defined with the one-GPU settings) and the set-up and device work (the same objects: :mod:`digraph.dispatch.multi_gpu_power`
    and ``cuda/sharded/power_work.py`` import them from it)."""
    from digraph.dispatch import gpu_power
    from digraph.dispatch.cuda.one_gpu import power_work
    names = _parts("digraph.dispatch.cuda.one_gpu", POWER_PARTS, gpu_power)
    for name in ("group_size", "degree_classes", "vertex_vectors", "anderson_for",
                 "anderson_stats", "_part", "_bins", "_vertex_factor", "_cusparse_matrix",
                 "_spmv", "_graphs", "_Work", "_drop_kept_graphs", "_graph_round", "_work"):
        assert name in names, name
    for name, mod in names.items():
        assert getattr(gpu_power, name) is getattr(mod, name), name
    assert gpu_power._KEPT_GRAPHS is power_work._KEPT_GRAPHS
    from digraph.dispatch.cuda.one_gpu import settings
    assert gpu_power.PowerGpuSettings is settings.PowerGpuSettings
    assert gpu_power.DEFAULT is settings.POWER_DEFAULT
    assert not _replacing("gpu_power", set(names) | {"_KEPT_GRAPHS"})


def test_relax_codes_are_defined_once():
    """The relax operations' codes are numbers in :mod:`digraph.smx.relax_codes` only: the
    algorithms' names (``RELAX_OPS``), the kernels' map (``RELAX_CODES``) and the CPU and CUDA
    kernels all take them from there (issue 18, item 5)."""
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
