"""The networkx backend found through its entry points, in a fresh virtual environment.

A venv with ``--system-site-packages`` gets this checkout installed with ``pip install --no-deps
-e`` (offline with ``--no-build-isolation`` when setuptools can build wheels, else through pip's
build isolation); the test is skipped when neither works (no network).  In it:

* ``nx.pagerank(G, backend="digraph")`` and ``nx.config.backend_priority`` dispatch to digraph;
* networkx's own test modules of the four functions pass with ``NETWORKX_TEST_BACKEND=digraph``
  (``NETWORKX_FALLBACK_TO_NX=True``: other functions and refused arguments run in networkx), and
  digraph really ran in each (counted by a small pytest plugin).
"""

import os
import subprocess
import textwrap
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NETWORKX_TEST_BACKEND")}
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def venv_python(tmp_path_factory):
    where = tmp_path_factory.mktemp("venv") / "v"
    try:
        venv.EnvBuilder(system_site_packages=True, with_pip=True).create(where)
    except Exception as e:  # pragma: no cover - depends on the machine
        pytest.skip(f"cannot create a virtual environment: {e}")
    py = where / "bin" / "python"
    # the packages of the environment running this test (itself maybe a venv) come before the
    # base interpreter's: the inner venv then imports the same networkx and numba as this process
    import sysconfig
    paths = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, timeout=60).stdout.strip()
    Path(site, "_outer_env.pth").write_text("\n".join(paths) + "\n")
    attempts = (["--no-build-isolation"], [])
    for extra in attempts:
        p = subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", *extra, "-e", str(ROOT)],
                           capture_output=True, text=True, timeout=300, env=_env(), cwd=where)
        if p.returncode == 0:
            return py
    pytest.skip(f"cannot install the checkout into a venv offline: {p.stderr.strip().splitlines()[-1:]}")


def test_dispatch_through_entry_points(venv_python, tmp_path):
    script = textwrap.dedent(f"""
        import networkx as nx, digraph
        assert digraph.__file__.startswith({str(ROOT)!r}), digraph.__file__
        info = nx.utils.backends.backend_info["digraph"]
        assert info["backend_name"] == "digraph", info
        G = nx.DiGraph([(0, 1), (1, 2), (2, 0), (2, 3), ("x", 0)])
        ref = nx.pagerank(G, tol=1e-12)
        got = nx.pagerank(G, backend="digraph", tol=1e-12, mode="vertex-async")
        assert sum(abs(got[k] - ref[k]) for k in ref) < 1e-9, (got, ref)
        nx.config.warnings_to_ignore.add("cache")
        nx.config.backend_priority.algos = ["digraph"]
        nx.config.backends.digraph.mode = "bsp"
        import digraph.nx_backend.interface as B
        calls = []
        orig = digraph.run
        digraph.run = lambda *a, **k: calls.append(k.get("mode")) or orig(*a, **k)
        assert nx.core_number(G) == {{0: 2, 1: 2, 2: 2, 3: 1, "x": 1}}
        assert nx.single_source_shortest_path_length(G, "x") == {{"x": 0, 0: 1, 1: 2, 2: 3, 3: 4}}
        assert calls == ["bsp", "bsp"], calls
        nx.config.fallback_to_nx = True
        nx.pagerank(G, nstart={{0: 1}})  # refused by can_run: networkx runs it
        assert len(calls) == 2
        print("OK")
    """)
    p = subprocess.run([str(venv_python), "-c", script], capture_output=True, text=True, timeout=300,
                       env=_env(), cwd=tmp_path)
    assert p.returncode == 0 and "OK" in p.stdout, p.stderr


PLUGIN = textwrap.dedent("""
    import collections, digraph
    CALLS = collections.Counter()
    _run = digraph.run
    def _counting(graph, algorithm, **kw):
        CALLS[algorithm] += 1
        return _run(graph, algorithm, **kw)
    digraph.run = _counting
    def pytest_sessionfinish(session, exitstatus):
        print("\\nDIGRAPH_CALLS", dict(CALLS))
""")


@pytest.mark.parametrize("module, algorithm", [
    ("algorithms/link_analysis/tests/test_pagerank.py", "pagerank"),
    ("algorithms/tests/test_core.py", "kcore"),
    ("algorithms/shortest_paths/tests/test_weighted.py", "sssp"),
    ("algorithms/shortest_paths/tests/test_unweighted.py", "sssp"),
    ("algorithms/shortest_paths/tests/test_generic.py", "sssp"),
])
def test_networkx_own_tests(venv_python, tmp_path, module, algorithm):
    # networkx as the venv imports it (its conftest must be the one pytest loads there)
    nx_dir = Path(subprocess.run([str(venv_python), "-c", "import networkx; print(networkx.__file__)"],
                                 capture_output=True, text=True, timeout=60,
                                 env=_env()).stdout.strip()).parent
    path = nx_dir / module
    if not path.is_file():
        pytest.skip(f"networkx's tests are not installed ({path})")
    (tmp_path / "countplug.py").write_text(PLUGIN)
    env = _env(PYTHONPATH=str(tmp_path), NETWORKX_TEST_BACKEND="digraph", NETWORKX_FALLBACK_TO_NX="True")
    # networkx's conftest must load (--rootdir), and site-packages must not be put before the
    # venv's (--import-mode=append), or the system's copy of the package hides the entry points
    p = subprocess.run([str(venv_python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "countplug",
                        f"--rootdir={nx_dir}", f"--confcutdir={nx_dir.parent}", "--import-mode=append",
                        "-W", "ignore", str(path)], capture_output=True, text=True, timeout=300,
                       env=env, cwd=tmp_path)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    calls = next(ln for ln in p.stdout.splitlines() if ln.startswith("DIGRAPH_CALLS"))
    counts = eval(calls.split(" ", 1)[1])  # a dict literal printed by the plugin
    assert counts.get(algorithm, 0) > 0, calls
