"""Over-relaxed sweeps of the SCC engine (digraph/smx/cpu/relaxation.py): the policy that picks
ω at run time, and the engine's answers and work with it, on one thread and split over threads."""

import dataclasses

import numpy as np
import pytest

import digraph
from digraph.algorithms import PageRank
from digraph.dispatch.engines.scc import cpu as dag_push
from digraph.errors import InvalidParameterError
from digraph.graph import Graph
from digraph.smx.cpu import relaxation as R

AUTO = dag_push.sor_params(dag_push.DEFAULT)  # (0, warm, window, min_rate, wmax)


def _steps(params, masses):
    """The ω the policy gives after each sweep, the sweeps leaving ``masses`` in turn."""
    state = np.zeros(R.STATE)
    ws = [R.start(state, params, 1.0)]
    for s, m in enumerate(masses, start=1):
        ws.append(R.after(state, params, float(s), m))
    return ws


def test_fixed_factor_is_kept():
    params = AUTO.copy()
    params[0] = 1.25
    assert _steps(params, 0.5 ** np.arange(1, 20)) == [1.25] * 20


def test_young_factor_after_the_measured_window():
    warm, window = int(AUTO[1]), int(AUTO[2])
    q = 0.8
    masses = q ** np.arange(1, 30, dtype=float)
    ws = _steps(AUTO, masses)
    decided = warm + window  # the sweep whose mass closes the measured window
    assert ws[:decided] == [1.0] * decided
    young = min(2.0 / (1.0 + np.sqrt(1.0 - q)), AUTO[4])
    assert ws[decided] == pytest.approx(young)


def test_back_to_one_when_the_factor_does_not_pay():
    warm, window = int(AUTO[1]), int(AUTO[2])
    decided = warm + window
    # rate 0.8 at ω = 1, then the same rate: no gain, back to 1 for good after the trial window
    masses = list(0.8 ** np.arange(1, decided + 1, dtype=float))
    masses += [masses[-1] * 0.8 ** k for k in range(1, 12)]
    ws = _steps(AUTO, masses)
    assert ws[decided] > 1.0
    trial_end = decided + 1 + window  # one settling sweep, then a window
    assert ws[trial_end] == 1.0 and set(ws[trial_end:]) == {1.0}


def test_kept_while_faster_then_dropped_when_it_diverges():
    warm, window = int(AUTO[1]), int(AUTO[2])
    decided = warm + window
    masses = list(0.8 ** np.arange(1, decided + 1, dtype=float))
    for _ in range(1 + 3 * window):  # faster: 0.5 a sweep
        masses.append(masses[-1] * 0.5)
    grow = len(masses)
    for _ in range(2 * window):  # then growing
        masses.append(masses[-1] * 1.5)
    ws = _steps(AUTO, masses)
    assert all(w > 1.0 for w in ws[decided:grow + 1])
    assert ws[-1] == 1.0


def test_fast_components_are_not_relaxed():
    ws = _steps(AUTO, 0.1 ** np.arange(1, 12, dtype=float))  # rate 0.1 < min_rate
    assert set(ws) == {1.0}


def _grid(k):
    idx = np.arange(k * k).reshape(k, k)
    a = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel()])
    b = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel()])
    return Graph.from_arrays(np.concatenate([a, b]), np.concatenate([b, a]), num_vertices=k * k)


@pytest.mark.parametrize("split", [None, "outbox", "accumulate"])
def test_relaxed_sweeps_match_the_reference_with_less_work(split):
    g = _grid(40)  # one component, slow at ω = 1 (its rate near α²)
    ref = PageRank().reference(g)
    base = dataclasses.replace(dag_push.DEFAULT, direct_vertices=0)
    threads = 1
    if split:
        base = dataclasses.replace(base, split_arcs=1, split_kind=split, split_cross_cost=0.0)
        threads = 2
    runs = {}
    for w in (1.0, "auto", 1.3):
        s = dataclasses.replace(base, relaxation=w)
        r = digraph.run(g, "pagerank", mode="scc", tol=1e-10, threads=threads, settings=s)
        assert r.stats["converged"]
        assert np.abs(r.values - ref).sum() <= 1e-10
        runs[w] = r.stats["arc_updates"]
    # the accumulators are read as the other chunk writes them: the work varies with the
    # threads' timing (a loaded machine's), so that split is held to less work only
    margin = 1.0 if split == "accumulate" else 0.85
    assert runs["auto"] < margin * runs[1.0]
    assert runs[1.3] < margin * runs[1.0]


def test_adsorption_with_relaxed_sweeps_matches_its_reference():
    g = _grid(30)
    algo = digraph.algorithms.Adsorption()
    ref = algo.reference(g, seeds=[0, 450])
    for w in ("auto", 1.4):
        s = dataclasses.replace(dag_push.DEFAULT, relaxation=w, direct_vertices=0)
        r = digraph.run(g, "adsorption", seeds=[0, 450], mode="scc", tol=1e-10, settings=s)
        assert np.abs(r.values - ref).sum() <= 1e-10


@pytest.mark.parametrize("bad", ["fast", 0.0, 2.0, -1.0])
def test_bad_relaxation_is_refused(bad):
    g = _grid(4)
    s = dataclasses.replace(dag_push.DEFAULT, relaxation=bad)
    with pytest.raises(InvalidParameterError, match="relaxation"):
        digraph.run(g, "pagerank", mode="scc", settings=s)


def _ring_with_chords(n, seed=2):
    """One strongly connected component of about 2 arcs a vertex: a ring and random chords."""
    rng = np.random.default_rng(seed)
    src = np.concatenate([np.arange(n), rng.integers(0, n, n)])
    dst = np.concatenate([(np.arange(n) + 1) % n, rng.integers(0, n, n)])
    w = rng.uniform(0.5, 2.0, src.size)
    return Graph.from_arrays(src, dst, w, num_vertices=n)


@pytest.mark.parametrize("algo", ["pagerank", "weighted", "adsorption"])
def test_pulled_sweeps_match_the_pushed(algo):
    """A component below ``pull_degree`` arcs a vertex sweeps in pull form (every inside arc
    read a sweep, its stop from the changes' bound): the same answer within tol as the pushes,
    on the L1 route (PageRank, with arc factors) and the L∞ route (adsorption)."""
    g = _ring_with_chords(3000)
    kw = dict(mode="scc", tol=1e-10)
    if algo == "adsorption":
        ref = digraph.algorithms.Adsorption().reference(g, seeds=[0, 7])
        kw.update(seeds=[0, 7])
    else:
        ref = PageRank().reference(g, weights=algo == "weighted")
        kw.update(weights=algo == "weighted")
    name = "adsorption" if algo == "adsorption" else "pagerank"
    out = {}
    for deg in (0.0, 5.0):
        s = dataclasses.replace(dag_push.DEFAULT, pull_degree=deg)
        r = digraph.run(g, name, settings=s, **kw)
        assert r.stats["converged"] and np.abs(r.values - ref).sum() <= 1e-10
        out[deg] = r.stats
    # the pulled run reads every inside arc each sweep: as many arc updates a sweep as arcs
    inside = g.num_arcs - np.count_nonzero(g.arc_sources == g.out_targets)
    pulled = out[5.0]
    assert pulled["arc_updates"] >= pulled["scc"]["sweeps"] * 0.99 * inside
    assert out[0.0]["arc_updates"] < out[0.0]["scc"]["sweeps"] * inside  # the pushes skip some
