"""The package's import graph keeps its layers: leaves import nothing of digraph, kernels never reach
up into the engines, and no import cycle exists.

The graph is read from the sources (every ``import`` and ``from ... import``, at module level or
inside functions, within ``digraph``); a package's ``__init__`` counts as a module.
"""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "digraph"

#: Import cycles that exist today, by their modules (none: a new one fails the test below).
KNOWN_CYCLES = []

#: Modules every layer may import: they import nothing of digraph.
LEAVES = ["digraph.errors", "digraph.numeric", "digraph.interrupts", "digraph.version"]


def _modules():
    mods = {}
    for p in PACKAGE.rglob("*.py"):
        parts = list(p.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = p
    return mods


def import_graph():
    """dict module -> set of digraph modules it imports (anywhere in its source)."""
    mods = _modules()
    graph = {}
    for name, path in mods.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        out = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = ".".join(package[:len(package) - node.level + 1] + ([node.module] if node.module else []))
                elif (node.module or "").split(".")[0] == "digraph":
                    base = node.module
                else:
                    continue
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    out.add(sub if sub in mods else base)
            elif isinstance(node, ast.Import):
                out.update(a.name for a in node.names if a.name.split(".")[0] == "digraph")
        graph[name] = {m for m in out if m in mods and m != name}
    return graph


def cycles(graph):
    """The strongly connected groups of more than one module (Tarjan, iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                group = set()
                while True:
                    w = stack.pop()
                    on.discard(w)
                    group.add(w)
                    if w == v:
                        break
                if len(group) > 1:
                    out.append(group)
    return out


@pytest.fixture(scope="module")
def graph():
    return import_graph()


def test_the_reader_sees_the_package(graph):
    assert "digraph.run" in graph and "digraph.dispatch.driver" in graph
    assert "digraph.dispatch.convergence" in graph["digraph.dispatch.driver"]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]  # the finder finds


def test_no_import_cycle_beyond_the_known_ones(graph):
    new = [c for c in cycles(graph) if not any(c <= known for known in KNOWN_CYCLES)]
    assert not new, f"new import cycles: {[sorted(c) for c in new]}"


def test_the_known_cycles_are_not_stale(graph):
    """A cycle removed is removed from KNOWN_CYCLES too (so it cannot come back unnoticed)."""
    found = cycles(graph)
    stale = [sorted(k) for k in KNOWN_CYCLES if not any(c & k for c in found)]
    assert not stale, f"no longer cycles, drop them from KNOWN_CYCLES: {stale}"


@pytest.mark.parametrize("leaf", LEAVES)
def test_leaves_import_nothing_of_digraph(graph, leaf):
    assert graph[leaf] == set()


def test_kernels_never_reach_up_into_engines_or_structures(graph):
    up = ("digraph.dispatch", "digraph.paths", "digraph.preprocess", "digraph.run", "digraph.cli")
    bad = {m: sorted(t for t in deps if t.startswith(up))
           for m, deps in graph.items() if m.startswith("digraph.smx")}
    assert not {m: d for m, d in bad.items() if d}
