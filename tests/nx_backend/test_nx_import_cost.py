"""``import networkx`` with digraph installed stays light (docs/networkx.md, "Cost").

networkx imports every backend's ``backend_info`` entry point when it is imported: digraph's
(the top-level :mod:`digraph_nx_info`) must import neither the package, nor Numba, which a
dispatched call imports on demand.  Checked in fresh processes; the time
comparison is loose (the machine may be loaded): the deterministic check is what is imported.
"""

import os
import statistics
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _ours():
    """digraph's backend_info entry point, when it is installed from this checkout."""
    for ep in entry_points(group="networkx.backend_info"):
        if ep.name == "digraph":
            return ep
    return None


pytestmark = pytest.mark.skipif(_ours() is None, reason="digraph's entry points are not installed")


def _python(*args):
    """A fresh ``python ARGS`` in the checkout, without networkx settings from the environment."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NETWORKX_")}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=300,
                          env=env, cwd=ROOT)


CHECK = """
import sys
import networkx as nx
assert nx.utils.backends.backend_info["digraph"]["backend_name"] == "digraph"
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("numba", "digraph"))
print("after import networkx:", loaded)
assert not loaded, loaded
G = nx.DiGraph([(0, 1), (1, 2), (2, 0), (2, "x")])
got = nx.pagerank(G, backend="digraph", tol=1e-12)
want = nx.pagerank(G, tol=1e-12)
assert sum(abs(got[k] - want[k]) for k in want) < 1e-9
import digraph
assert digraph.__file__.startswith(sys.argv[1]), digraph.__file__
assert "numba" in sys.modules and "digraph.dispatch" in sys.modules
print("OK")
"""


def test_import_networkx_loads_neither_numba_nor_the_package():
    p = _python("-c", CHECK, str(ROOT))
    assert p.returncode == 0 and p.stdout.strip().endswith("OK"), p.stdout + p.stderr


def test_metadata_is_one_table():
    """The package's ``nx_backend.info`` is the top-level module's table, not a copy."""
    import digraph_nx_info
    from digraph.nx_backend import info, interface

    assert info.get_info is digraph_nx_info.get_info and info.FUNCTIONS is digraph_nx_info.FUNCTIONS
    for name in digraph_nx_info.FUNCTIONS:
        assert callable(getattr(interface, name)), name


WITHOUT = ("import importlib.metadata as m; f = m.entry_points; "
           "m.entry_points = lambda **k: [e for e in f(**k) if e.name != 'digraph']; "
           "import networkx")


def _import_seconds(code):
    p = _python("-X", "importtime", "-c", code)
    assert p.returncode == 0, p.stderr[-2000:]
    for line in p.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[2].strip() == "networkx":
            return int(parts[1]) / 1e6
    raise AssertionError("no networkx line in -X importtime")


def test_import_networkx_costs_about_what_it_costs_without_digraph():
    """Medians of interleaved fresh processes; the package loaded made it 3-4x, the bound is 2x."""
    with_, without = [], []
    for _ in range(3):
        with_.append(_import_seconds("import networkx"))
        without.append(_import_seconds(WITHOUT))
    assert statistics.median(with_) <= 2.0 * statistics.median(without) + 0.02, (with_, without)
