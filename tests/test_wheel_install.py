"""A regular (non-editable) install from the built wheel, into a read-only site-packages (issue 19,
item 3).

The wheel of this checkout is built offline (``pip wheel --no-build-isolation --no-index``; where
setuptools cannot build wheels by itself, through pip's build isolation from the configured index;
skipped when neither works), installed with ``pip install --no-deps --no-index`` into a fresh venv
that takes numpy, numba, scipy, networkx, joblib and tqdm from the system (``--system-site-packages``),
and its ``digraph`` folder is made read-only.  Two processes in turn, started elsewhere than the
checkout, run PageRank with that venv's Python:

* with a writable home, Numba caches in the user folder (``~/.cache/numba``) without a word;
* with a read-only home too, ``import digraph`` caches in ``<tempdir>/digraph-numba-cache-<uid>``
  and says so in one warning line;

and in both the first process compiles (and says so), the second compiles nothing and loads every
kernel from the folder that the first filled, and nothing is written into the package.
"""

import os
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
import venv
import zipfile
from pathlib import Path

import pytest

from conftest import unprivileged

ROOT = Path(__file__).resolve().parents[1]

SUBPACKAGES = ("algorithms", "dispatch", "io", "nx_backend", "paths", "preprocess", "smx")

SCRIPT = """
import networkx as nx
import digraph
from digraph import compiling
g = digraph.load(([0, 1, 2, 2, 3, 4], [1, 2, 0, 3, 4, 3]))
r = digraph.run(g, "pagerank", tol=1e-12)
ref = nx.pagerank(nx.DiGraph([(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 3)]), tol=1e-13, max_iter=10000)
err = max(abs(float(r.values[v]) - ref[v]) for v in ref)
print("RESULT", digraph.__file__, compiling.seconds(), err)
"""


def _env(**extra):
    drop = ("PYTHONPATH", "NUMBA_CACHE_DIR", "DIGRAPH_QUIET", "XDG_CACHE_HOME", "TMPDIR",
            "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(extra)
    return env


def _writable_again(path):
    for p in [path, *path.rglob("*")]:
        if not p.is_symlink():
            p.chmod(p.stat().st_mode | stat.S_IWUSR)


def _build_wheel(where):
    """The wheel of a copy of the checkout (so that no build/ or egg-info lands in it)."""
    src = where / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(
        ".*", "__pycache__", "*.py[cod]", "*.nbi", "*.nbc", "build", "dist", "*.egg-info"))
    out = where / "wheels"
    tail = ""
    for extra in (["--no-build-isolation", "--no-index"], []):
        p = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", *extra,
                            "-w", str(out), str(src)], capture_output=True, text=True, timeout=300,
                           env=_env(), cwd=where)
        wheels = sorted(out.glob("digraph_engine-*.whl"))
        if p.returncode == 0 and wheels:
            return wheels[0]
        tail = (p.stderr.strip().splitlines() or [""])[-1]
    pytest.skip(f"cannot build the wheel offline: {tail}")


def _venv_with(wheel, where):
    """A fresh venv over this interpreter's packages with ``wheel`` installed (not editable)."""
    try:
        venv.EnvBuilder(system_site_packages=True, with_pip=False).create(where)
    except Exception as e:  # pragma: no cover - depends on the machine
        pytest.skip(f"cannot create a virtual environment: {e}")
    py = where / "bin" / "python"
    site = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, timeout=60).stdout.strip())
    # the packages of the environment running this test (itself maybe a venv) come after the
    # venv's own: numpy, numba, ... are found, the installed digraph comes first
    outer = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    (site / "_outer_env.pth").write_text("\n".join(outer) + "\n")
    install = ["install", "-q", "--no-deps", "--no-index", str(wheel)]
    p = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), *install],
                       capture_output=True, text=True, timeout=300, env=_env(), cwd=where)
    if p.returncode:  # a pip without --python (before 22.3): the venv's own pip
        subprocess.run([str(py), "-m", "ensurepip", "-q"], capture_output=True, timeout=300, env=_env())
        p = subprocess.run([str(py), "-m", "pip", *install], capture_output=True, text=True,
                           timeout=300, env=_env(), cwd=where)
    assert p.returncode == 0, p.stderr
    return py, site / "digraph"


@pytest.fixture(scope="module")
def installed():
    where = Path(tempfile.mkdtemp(prefix="digraph-wheel-test-"))
    package = None
    try:
        wheel = _build_wheel(where)
        py, package = _venv_with(wheel, where / "venv")
        for p in [package, *package.rglob("*")]:  # chmod -R a-w
            p.chmod(p.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
        yield {"where": where, "wheel": wheel, "python": py, "package": package}
    finally:
        if package is not None and package.exists():
            _writable_again(package)
        _writable_again(where)
        shutil.rmtree(where, ignore_errors=True)


def test_wheel_holds_every_subpackage_and_no_tests(installed):
    with zipfile.ZipFile(installed["wheel"]) as z:
        names = z.namelist()
    tops = {n.split("/", 1)[0] for n in names}
    # the package, and the networkx backend's metadata (a top-level module that imports nothing)
    assert {t for t in tops if not t.endswith(".dist-info")} == {"digraph", "digraph_nx_info.py"}, tops
    folders = {n.rsplit("/", 1)[0] for n in names if n.endswith("/__init__.py")}
    local = {p.parent.relative_to(ROOT).as_posix() for p in (ROOT / "digraph").rglob("__init__.py")
             if "__pycache__" not in p.parts}
    assert {f"digraph/{s}" for s in SUBPACKAGES} | local <= folders, sorted(folders)
    assert not [n for n in names if "tests/" in n or "benchmarks/" in n or n.startswith("docs/")
                or n.endswith((".nbi", ".nbc", ".pyc"))]
    sources = {n for n in names if n.endswith(".py")}
    missing = {p.relative_to(ROOT).as_posix() for p in (ROOT / "digraph").rglob("*.py")
               if "__pycache__" not in p.parts} - sources
    assert not missing, sorted(missing)
    entry = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    with zipfile.ZipFile(installed["wheel"]) as z:
        text = z.read(entry).decode()
    assert "networkx.backends" in text and "digraph = digraph.cli:main" in text


@pytest.mark.parametrize("home", ["writable", "read-only"])
def test_read_only_install_caches_and_the_second_process_compiles_nothing(installed, home):
    package = installed["package"]
    tmp_path = installed["where"] / f"home-{home}"  # removed with the venv
    home_dir, tmp_dir, work = tmp_path / "home", tmp_path / "tmp", tmp_path / "work"
    for d in (home_dir, tmp_dir, work):
        d.mkdir(parents=True)
    if home == "read-only":
        home_dir.chmod(0o555)
    env = _env(HOME=str(home_dir), TMPDIR=str(tmp_dir))
    cmd = unprivileged([str(installed["python"]), "-c", SCRIPT])

    def cache_files():
        return sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.suffix in (".nbi", ".nbc"))

    runs, files = [], []
    try:
        for _ in range(2):
            runs.append(subprocess.run(cmd, env=env, cwd=work, capture_output=True, text=True, timeout=600))
            files.append(cache_files())
    finally:
        home_dir.chmod(0o755)
    results = []
    for r in runs:
        assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
        line = next(ln for ln in r.stdout.splitlines() if ln.startswith("RESULT "))
        path, compiled, err = line.split()[1:]
        assert path.startswith(str(package))  # the installed copy ran, not the checkout
        assert float(err) < 1e-10  # networkx's PageRank
        results.append(float(compiled))
    first, second = runs
    assert first.stderr.count("compiling kernels, first run only") == 1
    assert "compiling kernels" not in second.stderr  # no digraph kernel compiled
    assert results[0] > 0.5 and results[1] < 0.3 * results[0], results
    assert files[0] and files[1] == files[0]  # the first filled the cache, the second added nothing
    assert not list(package.rglob("*.nbi"))  # nothing written into the package
    if home == "writable":
        assert all(f.parts[:3] == ("home", ".cache", "numba") for f in files[0]), files[0]
        assert "digraph: warning" not in first.stderr + second.stderr
    else:
        assert len(list(tmp_dir.glob("digraph-numba-cache-*"))) == 1  # the same for both
        assert all(f.parts[0] == "tmp" and f.parts[1].startswith("digraph-numba-cache-") for f in files[0])
        assert not list(home_dir.rglob("*"))
        for r in runs:  # each process says where the cache went, in one line
            warned = [ln for ln in r.stderr.splitlines() if ln.startswith("digraph: warning:")]
            assert len(warned) == 1 and str(tmp_dir / "digraph-numba-cache-") in warned[0], r.stderr
            assert "NUMBA_CACHE_DIR" in warned[0]
