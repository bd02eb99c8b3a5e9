"""The one benchmark harness: load → warm up → time → verify → one JSON row per measurement.

Every benchmark script of this folder is a list of :class:`Case` run by :func:`time_cases` and
written by :func:`write_rows`; the protocol is that of ``docs/design.md`` §6:

1. **Load** the graph by name (:func:`graphs.load`: a dataset of ``../shared/datasets`` or
   ``$DIGRAPH_DATASETS``, or a generator such as ``rmat20``, ``grid700``, ``chain1000000``). A
   dataset that is absent is skipped with a message, never an error.
2. **Warm up**: one untimed first call per case. ``compile_s`` in the row is that first call's
   time minus the warm median (Numba compilation or loading from its cache, and whatever the
   first call leaves on the graph); ``stats_time_compile`` is the run's own count. A default
   case then runs untimed once more, and on while its automatic choice is still timing engines
   on the graph (:func:`exploring`, at most :data:`SETTLE_RUNS` runs; their times are
   ``settle_s``).
3. **Time**: ``repeat`` warm calls of the whole ``digraph.run`` (or of the peer), interleaved
   case by case when several cases share a graph (the peers after digraph's cases); the row
   keeps the median, min, max and all.
4. **Verify** every call's answer against an independent reference: PageRank against the
   Google-matrix power iteration run to a certified L1 error of 1e-13, or to float64's floor on
   the graph when that lies above (the bound reached is the reference's; scipy, or CuPy for GPU
   cases); adsorption against a sparse direct solve; SSSP against scipy's Dijkstra; k-core
   against igraph's coreness (or the algorithm's own peeling reference). PageRank and adsorption
   must be within ``tol`` of the reference *and* report a certified bound ``≤ tol``; SSSP and
   k-core must be equal. A wrong answer raises :class:`WrongAnswer`: the CLI prints it, writes
   no row for it and exits with status 2.
5. **Emit** one row (a dict, :data:`ROW_FIELDS`) per case, appended to a JSON file
   ``{"meta": {...}, "rows": [...]}`` under ``benchmarks/results/``.

Python API::

    from harness import Case, time_cases, write_rows
    rows = time_cases([Case("wiki-Vote", "pagerank", tol=1e-8),
                       Case("wiki-Vote", "pagerank", peer="scipy-power", tol=1e-8)], repeat=5)
    write_rows("benchmarks/results/my_run.json", rows)

Command line (the cases are every ``--modes`` × ``--algorithms`` × ``--graphs``, plus the
``--peers`` that answer one of the algorithms)::

    NUMBA_NUM_THREADS=2 python benchmarks/harness.py --graphs wiki-Vote rmat16 \\
        --algorithms pagerank --modes default scc power --peers scipy-power --tol 1e-8 \\
        --repeat 5 --out benchmarks/results/example.json
"""

import argparse
import dataclasses
import datetime
import json
import math
import os
import platform
import shlex
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import graphs  # noqa: E402  (puts the digraph tree on sys.path)
import peers as peer_mod  # noqa: E402

import digraph  # noqa: E402

SCHEMA = "digraph-bench/1"
RESULTS = Path(__file__).resolve().parent / "results"
ROW_FIELDS = ("schema", "date", "command", "git_commit", "machine", "card", "graph", "vertices",
              "arcs", "algorithm", "method", "mode", "ran", "device", "threads", "params", "tol",
              "accuracy", "timings", "counters")
"""The fields every row has (``card`` is None on the CPU; ``ran`` is the mode that ran)."""
LINEAR = ("pagerank", "adsorption")
REFERENCE_TOL = 1e-13


class WrongAnswer(AssertionError):
    """A benchmarked answer is not within its bound of the reference (or not equal to it)."""


@dataclasses.dataclass
class Case:
    """One measurement: an algorithm on a named graph, by digraph (a mode) or by a peer.

    Parameters
    ----------
    graph : str
        A name :func:`graphs.load` knows.
    algorithm : str
        ``"pagerank"``, ``"adsorption"``, ``"sssp"`` or ``"kcore"``.
    mode : str or None
        The digraph mode; None is the default (the router's choice, reported as ``ran``).
    device : str
        ``"cpu"``, ``"cuda"``, ``"cuda:N"`` or ``"cuda:0,1,..."``.
    peer : str or None
        A peer of :data:`peers.PEERS` instead of digraph (``mode`` is then ignored).
    threads : int or None
        ``digraph.run(threads=)`` (None: Numba's count).
    tol : float or None
        The L1 error bound asked for PageRank and adsorption (None: the algorithm's default).
    params : dict
        Further ``digraph.run`` parameters. ``source="hub"`` (the default for SSSP) is the vertex
        of largest out-degree; ``seeds="high"`` (the default for adsorption) the ten vertices of
        largest out-degree, ``seeds="low"`` ten of smallest positive out-degree.
    fresh : bool
        Time each call on a freshly loaded copy of the graph (loading untimed): nothing the
        previous call kept on the :class:`digraph.Graph` helps it.
    label : str or None
        The row's ``method`` (default: ``"digraph <mode>"`` or the peer's name).
    """

    graph: str
    algorithm: str
    mode: str | None = None
    device: str = "cpu"
    peer: str | None = None
    threads: int | None = None
    tol: float | None = None
    params: dict = dataclasses.field(default_factory=dict)
    fresh: bool = False
    label: str | None = None

    @property
    def method(self):
        """The row's ``method`` label."""
        if self.label:
            return self.label
        if self.peer:
            return self.peer
        settings = self.params.get("settings")
        return (f"digraph {self.mode or 'default'}" + (", first run" if self.fresh else "")
                + (f" [{settings}]" if isinstance(settings, str) else ""))

    @property
    def gpu(self):
        """Whether the case runs on a GPU (peers named ``cupy-*`` included)."""
        return self.device.startswith("cuda") or (self.peer or "").startswith("cupy")


# -- environment ---------------------------------------------------------------------------------

def cpu_model():
    """The processor's model name (``/proc/cpuinfo``), else what :mod:`platform` says."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_info():
    """The CPU side of a row: model, cores, the cores this process may use, Numba's threads,
    load average, host name and the versions of Python and the numeric packages."""
    import numba
    import scipy
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    return {"cpu": cpu_model(), "cores": os.cpu_count(), "usable_cores": usable,
            "numba_num_threads": int(numba.config.NUMBA_NUM_THREADS),
            "NUMBA_NUM_THREADS": os.environ.get("NUMBA_NUM_THREADS"),
            "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
            "host": platform.node(), "python": platform.python_version(),
            "numba": numba.__version__, "numpy": np.__version__, "scipy": scipy.__version__,
            "digraph": getattr(digraph, "__version__", None)}


def card_info(device):
    """The GPU name(s) a device string uses, joined as ``"4 × NVIDIA H200"``; None for the CPU."""
    if not device.startswith("cuda"):
        return None
    from numba import cuda
    ids = [int(i) for i in device.split(":", 1)[1].split(",")] if ":" in device else [0]
    names = []
    for i in ids:
        name = cuda.gpus[i].name
        names.append(name.decode() if isinstance(name, bytes) else name)
    return names[0] if len(set(names)) == 1 and len(names) == 1 else \
        (f"{len(names)} × {names[0]}" if len(set(names)) == 1 else " + ".join(names))


def git_commit(tree=graphs.TREE):
    """The commit checked out in ``tree``, read from its ``.git`` files (no git process); None
    when it is not a git checkout."""
    git = Path(tree) / ".git"
    try:
        if git.is_file():  # a worktree: "gitdir: <path>"
            git = Path(git.read_text().split(":", 1)[1].strip())
        head = (git / "HEAD").read_text().strip()
        if not head.startswith("ref:"):
            return head
        ref = head.split(":", 1)[1].strip()
        common = git / "commondir"
        roots = [git] + ([(git / common.read_text().strip()).resolve()] if common.is_file() else [])
        for root in roots:
            if (root / ref).is_file():
                return (root / ref).read_text().strip()
            packed = root / "packed-refs"
            if packed.is_file():
                for line in packed.read_text().splitlines():
                    if line.endswith(" " + ref):
                        return line.split()[0]
    except OSError:
        pass
    return None


def command_line():
    """This process' command line, as one would type it (with the Numba and CUDA variables)."""
    env = " ".join(f"{k}={os.environ[k]}" for k in ("NUMBA_NUM_THREADS", "CUDA_VISIBLE_DEVICES",
                                                    "DIGRAPH_TREE") if os.environ.get(k))
    cmd = "python " + " ".join(shlex.quote(a) for a in sys.argv)
    return f"{env} {cmd}" if env else cmd


def jsonable(value):
    """``value`` with numpy scalars and arrays, tuples and other objects made JSON-safe."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist()) if value.size <= 64 else f"array of {value.size}"
    if isinstance(value, np.generic):
        return jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


# -- parameters and references -------------------------------------------------------------------

def resolve_params(graph, algorithm, params):
    """``params`` with the symbolic ``source="hub"`` and ``seeds="high"|"low"`` replaced by vertex
    ids of ``graph`` (and those defaults filled in for SSSP and adsorption)."""
    out = dict(params)
    deg = graph.out_degree
    if algorithm == "sssp" and out.get("source", "hub") == "hub":
        out["source"] = graph.vertex_ids[int(np.argmax(deg))].item()
    if algorithm == "adsorption":
        seeds = out.get("seeds", "high")
        if seeds == "high":
            out["seeds"] = graph.vertex_ids[np.argsort(-deg, kind="stable")[:10]].tolist()
        elif seeds == "low":
            pos = np.flatnonzero(deg > 0)
            out["seeds"] = graph.vertex_ids[pos[np.argsort(deg[pos], kind="stable")[:10]]].tolist()
    return out


def default_tol(algorithm, tol):
    """``tol``, or the algorithm's default for PageRank and adsorption; None for the others."""
    if algorithm not in LINEAR:
        return None
    if tol is not None:
        return float(tol)
    from digraph.algorithms import get
    return float(get(algorithm).default_tol)


def reference(graph, algorithm, params, gpu=False):
    """The exact answer (or one certified within :data:`REFERENCE_TOL` in L1) that a case's
    answers are checked against.

    Returns
    -------
    (numpy.ndarray, str, float)
        Values aligned with ``graph.vertex_ids``, how they were computed, and their own error
        bound (0 for exact answers).
    """
    from digraph.algorithms import get
    algo = get(algorithm)
    params = {k: v for k, v in params.items() if k != "settings"}  # engine settings: same answer
    if algorithm == "pagerank":
        extra = set(params) - {"alpha"}
        if extra:
            raise ValueError(f"the PageRank reference takes alpha only, not {sorted(extra)}")
        alpha = float(params.get("alpha", peer_mod.ALPHA))
        apt = peer_mod.google_matrix_t(graph, alpha)
        if gpu:
            import cupy as cp
            import cupyx.scipy.sparse as csp
            x, _, bound = peer_mod.power_iteration(csp.csr_matrix(apt), alpha, REFERENCE_TOL,
                                                   xp=cp, floor=True)
            return cp.asnumpy(x), f"cupy power iteration, L1 bound {bound:.2g}", bound
        x, _, bound = peer_mod.power_iteration(apt, alpha, REFERENCE_TOL, floor=True)
        return x, f"scipy power iteration, L1 bound {bound:.2g}", bound
    if algorithm == "kcore" and peer_mod.available("igraph-coreness"):
        return peer_mod.igraph_coreness(graph, {}, None)()[0], "igraph coreness", 0.0
    if algorithm == "adsorption" and graph.num_arcs > DIRECT_ARCS:
        return adsorption_reference(graph, params)
    how = {"adsorption": "sparse direct solve (SuperLU)", "sssp": "scipy dijkstra",
           "kcore": "Batagelj-Zaversnik peeling (digraph.algorithms.kcore.reference)"}[algorithm]
    ref = algo.reference(graph, **params)
    return np.asarray(ref), how, 1e-12 if algorithm in LINEAR else 0.0


DIRECT_ARCS = 1 << 17
"""Adsorption on graphs of more arcs gets :func:`adsorption_reference` (SuperLU's fill-in on a
giant SCC takes minutes to hours)."""


def adsorption_reference(graph, params):
    """Adsorption's answer by Jacobi rounds ``x ← b + A x`` in extended precision
    (``numpy.longdouble``), with a certified L1 bound.

    Every row of ``A`` sums to at most ``γ∞ < 1`` (β where a vertex has in-arcs), so ``‖x − x*‖∞
    ≤ ‖r‖∞ / (1 − γ∞)`` for the residual ``r = b + A x − x``, computed in the same precision,
    whose rounding is at most ``(d + 3) u (‖A‖∞ ‖x‖∞ + ‖b‖∞ + ‖x‖∞)`` per entry (``d`` the
    largest in-degree, ``u`` the unit roundoff of ``longdouble``); the L1 bound is ``n`` times the
    L∞ one, plus the rounding of the answer to float64.  Where ``longdouble`` is no wider than
    float64 the bound says so (it is then too loose to check ``tol`` 1e-8 on large graphs).

    Returns
    -------
    (numpy.ndarray, str, float)
        As :func:`reference`.
    """
    from digraph.algorithms import get
    from digraph.algorithms._reference import coefficient_matrix
    algo = get("adsorption")
    system = algo.prepare(graph, **algo.bind(graph, dict(params)))
    ld = np.longdouble
    a = coefficient_matrix(graph, system).astype(ld)
    b = np.asarray(system.b, ld)
    gamma = float(np.abs(a).sum(axis=1).max(initial=0.0))
    if not gamma < 1.0:
        raise ValueError(f"adsorption reference: a row of A sums to {gamma} (>= 1)")
    u = float(np.finfo(ld).eps) / 2
    x = b.copy()
    for _ in range(100_000):
        y = b + a @ x
        step = float(np.abs(y - x).max(initial=0.0))
        x = y
        if step <= 8 * u * max(float(np.abs(x).max(initial=0.0)), 1e-300) or step == 0.0:
            break
    r = float(np.abs(b + a @ x - x).max(initial=0.0))
    deg = int(np.diff(graph.in_offsets).max(initial=0))
    xmax, bmax = float(np.abs(x).max(initial=0.0)), float(np.abs(b).max(initial=0.0))
    linf = (r + (deg + 3) * u * (gamma * xmax + bmax + xmax)) / (1.0 - gamma)
    out = x.astype(np.float64)
    bound = graph.num_vertices * linf * (1 + 1e-6) + float(np.abs(out).sum()) * np.finfo(
        np.float64).eps
    return out, f"longdouble Jacobi, certified L1 bound {bound:.2g}", bound


def verify(values, stats, algorithm, tol, ref):
    """Check one answer against its reference.

    Parameters
    ----------
    values : array
        The answer, aligned with the graph's vertex ids (a CuPy array is copied to the host).
    stats : dict
        The run's counters (``error_bound`` and ``converged`` are checked when present).
    algorithm : str
    tol : float or None
        The L1 bound asked for (PageRank, adsorption).
    ref : tuple
        What :func:`reference` returns.

    Returns
    -------
    dict
        ``check`` (``"within tol"`` or ``"equal"``), ``true_error`` (L1 distance, or the number
        of differing entries), ``error_bound`` (the run's certified bound, when it has one).

    Raises
    ------
    WrongAnswer
        The answer is farther than ``tol`` (plus the reference's own bound) from the reference,
        the run's certified bound exceeds ``tol``, the run says it did not converge, or an exact
        answer differs.
    """
    values = np.asarray(values.get() if hasattr(values, "get") and not isinstance(values, dict)
                        else values)
    want, how, ref_err = ref
    if values.shape != want.shape:
        raise WrongAnswer(f"{algorithm}: {values.shape[0]} values, the reference has {want.shape[0]}")
    if stats.get("converged") is False:
        raise WrongAnswer(f"{algorithm}: the run reports converged=False")
    if algorithm in LINEAR:
        err = float(np.abs(values - want).sum())
        bound = stats.get("error_bound")
        slack = tol * 1e-9 + ref_err + 1e-15 * values.size
        if not err <= tol + slack:
            raise WrongAnswer(f"{algorithm}: L1 error {err:.3e} against the {how} exceeds tol {tol:g}")
        if bound is not None and not float(bound) <= tol * (1 + 1e-9):
            raise WrongAnswer(f"{algorithm}: certified bound {float(bound):.3e} exceeds tol {tol:g}")
        return {"check": "within tol", "true_error": err, "error_bound": None if bound is None
                else float(bound), "reference": how}
    if algorithm == "sssp":
        finite = np.isfinite(want)
        same_inf = np.array_equal(finite, np.isfinite(values))
        diff = np.abs(values[finite] - want[finite]) if same_inf else np.array([np.inf])
        bad = int(np.count_nonzero(diff > 1e-9 * np.maximum(1.0, np.abs(want[finite])))) \
            if same_inf else int(np.count_nonzero(finite != np.isfinite(values)))
    else:
        bad = int(np.count_nonzero(values.astype(np.int64) != want.astype(np.int64)))
    if bad:
        raise WrongAnswer(f"{algorithm}: {bad} values differ from the {how}")
    return {"check": "equal", "true_error": 0, "error_bound": None, "reference": how}


# -- timing --------------------------------------------------------------------------------------

def _caller(case, graph, params, tol):
    """A callable of no argument returning ``(values, stats)`` for ``case`` on ``graph``."""
    if case.peer:
        answers, build = peer_mod.PEERS[case.peer]
        if answers != case.algorithm:
            raise ValueError(f"peer {case.peer} answers {answers}, not {case.algorithm}")
        return build(graph, params, tol)
    kw = dict(params)
    if tol is not None:
        kw["tol"] = tol
    if isinstance(kw.get("settings"), str):
        kw["settings"] = settings_of(kw["settings"])

    def go():
        r = digraph.run(graph, case.algorithm, mode=case.mode, device=case.device,
                        threads=case.threads, **kw)
        return r.values, dict(r.stats)
    return go


SETTLE_RUNS = 10
"""Untimed runs at most that a default case (``mode`` None, on a graph kept between runs) takes
after its first: one at least (a power probe's verdict opens the window on the run after it),
then more while the automatic choice is still timing its candidates on the graph
(:func:`exploring`): the timed runs are then those of the choice it settled on, and the row
keeps the window's runs apart (``timings.settle_s``)."""


def exploring(stats):
    """Whether a run's automatic choice was still timing engines on its graph: its route's
    ``exploring`` (trees before that key: its code ``measuring``, or its reason saying that the
    next runs time another engine)."""
    route = stats.get("route") or {}
    if "exploring" in route:
        return bool(route["exploring"])
    return route.get("code") == "measuring" or "the next runs time" in (route.get("reason") or "")


class _Timing:
    """The state of one case while :func:`time_cases` runs it."""

    def __init__(self, case, graph, load):
        self.case, self.graph, self.load = case, graph, load
        self.params = resolve_params(graph, case.algorithm, case.params)
        self.tol = default_tol(case.algorithm, case.tol)
        self.times, self.stats, self.accuracy = [], [], None
        self.first = None
        self.settle = []

    def once(self, ref, first=False, warm=False):
        g = self.load() if self.case.fresh else self.graph
        call = _caller(self.case, g, self.params, self.tol)
        if warm:  # an untimed call of the same case first: the timed one follows itself
            call()
            if self.case.fresh:
                call = _caller(self.case, self.load(), self.params, self.tol)
        t0 = time.perf_counter()
        values, stats = call()
        dt = time.perf_counter() - t0
        acc = verify(values, stats, self.case.algorithm, self.tol, ref)
        if self.accuracy is None or (acc["true_error"] or 0) > (self.accuracy["true_error"] or 0):
            self.accuracy = acc
        if first:
            self.first, self.first_stats = dt, stats
            if not (self.case.peer or self.case.mode or self.case.fresh):
                # the run after a probe's first may open the window: one at least, then on
                # while the choice is timing its candidates
                while len(self.settle) < SETTLE_RUNS and (not self.settle or exploring(stats)):
                    t0 = time.perf_counter()
                    _, stats = call()
                    self.settle.append(time.perf_counter() - t0)
        else:
            self.times.append(dt)
            self.stats.append(stats)

    def row(self, common):
        times = self.times
        med = statistics.median(times)
        counters = self.stats[times.index(sorted(times)[(len(times) - 1) // 2])]
        case = self.case
        return jsonable({
            **common,
            "card": card_info(case.device) if case.device.startswith("cuda") else
            (common.get("card_peer") if case.gpu else None),
            "graph": case.graph, "vertices": self.graph.num_vertices, "arcs": self.graph.num_arcs,
            "weighted": bool(self.graph.weighted),
            "algorithm": case.algorithm, "method": case.method,
            "mode": None if case.peer else (case.mode or "default"),
            "ran": case.peer or counters.get("mode"), "engine": counters.get("engine"),
            "route": counters.get("route"), "device": case.device, "threads": case.threads,
            "params": self.params, "tol": self.tol, "fresh_graph": case.fresh,
            "accuracy": self.accuracy,
            "timings": {"median_s": med, "min_s": min(times), "max_s": max(times),
                        "repeat": len(times), "first_s": self.first,
                        "compile_s": max(self.first - med, 0.0),
                        "stats_time_compile": self.first_stats.get("time_compile"),
                        "settle_s": self.settle, "times_s": times},
            "counters": counters,
        })


def common_fields():
    """The fields every row of this process shares: schema, date, command, commit, machine."""
    return {"schema": SCHEMA, "date": datetime.date.today().isoformat(),
            "command": command_line(), "git_commit": git_commit(), "machine": machine_info()}


def time_function(fn, repeat, check=None):
    """Time a task that is not a ``digraph.run`` (loading, preprocessing) by the same protocol.

    Parameters
    ----------
    fn : callable
        Called with no argument, once untimed-as-warm-up (its time is ``first_s``) and then
        ``repeat`` times.
    repeat : int
    check : callable, optional
        Called on every output, outside the timing; it raises :class:`WrongAnswer` on a wrong
        one and may return a dict that becomes the row's ``accuracy``.

    Returns
    -------
    (dict, object, dict or None)
        The ``timings`` field of a row, the last output, and what ``check`` returned.
    """
    t0 = time.perf_counter()
    out = fn()
    first = time.perf_counter() - t0
    acc = check(out) if check else None
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
        if check:
            acc = check(out)
    med = statistics.median(times)
    return ({"median_s": med, "min_s": min(times), "max_s": max(times), "repeat": repeat,
             "first_s": first, "compile_s": max(first - med, 0.0), "times_s": times}, out, acc)


def time_cases(cases, repeat=5, interleave=True, log=print, warm_each=False):
    """Run ``cases`` by the protocol of this module and return one row per case.

    Cases are grouped by graph (each graph loaded once, its reference computed once per
    algorithm and parameters); within a graph the warm runs are interleaved case by case when
    ``interleave``.

    Parameters
    ----------
    cases : list of Case
    repeat : int
        Timed warm runs per case (at least 1).
    interleave : bool
        Alternate the cases of one graph run by run (fairer under drifting load); the peers'
        runs come after every digraph case's (a peer's thread pool, igraph's OpenMP threads,
        spins on the cores a while after its call, and the run after it paid for it).
    warm_each : bool
        Precede every timed run by an untimed run of the same case, so that no case is timed
        right after another's (a peer on one thread leaves the other cores idle, and the next
        parallel run paid for it: up to 4x on a 1 ms SSSP).
    log : callable
        Receives one line per case and per skipped graph.

    Returns
    -------
    list of dict
        Rows with every field of :data:`ROW_FIELDS`.

    Raises
    ------
    WrongAnswer
        An answer failed :func:`verify` (the rows of the cases before it are lost: callers that
        want them call this once per case).
    """
    if repeat < 1:
        raise ValueError("repeat must be at least 1")
    common = common_fields()
    rows = []
    by_graph = {}
    for c in cases:
        by_graph.setdefault((c.graph, c.gpu), []).append(c)
    for (name, gpu), group in by_graph.items():
        try:
            graph, load_s = graphs.timed_load(name, gpu=gpu)
        except graphs.GraphUnavailable as e:
            log(f"skipped {name}: {e}")
            continue
        log(f"{name}: {graph.num_vertices:,} vertices, {graph.num_arcs:,} arcs (loaded in {load_s:.2f} s)")
        states = [_Timing(c, graph, lambda n=name, g=gpu: graphs.load(n, gpu=g)) for c in group]
        refs = {}
        for st in states:
            key = (st.case.algorithm, json.dumps(jsonable(st.params), sort_keys=True))
            if key not in refs:
                refs[key] = reference(graph, st.case.algorithm, st.params, gpu=gpu)
            st.ref = refs[key]
            try:
                st.once(st.ref, first=True)
            except (ImportError, ValueError) as e:
                if not st.case.peer:
                    raise
                log(f"  skipped peer {st.case.peer}: {e}")
                st.skipped = True
        states = [st for st in states if not getattr(st, "skipped", False)]
        # the peers after every digraph case of the graph, never between them: a peer's own
        # thread pool (igraph's OpenMP threads) spins on the cores a while after its call
        phases = [[st for st in states if not st.case.peer], [st for st in states if st.case.peer]]
        order = [(r, st) for ph in phases for r in range(repeat) for st in ph] if interleave \
            else [(r, st) for ph in phases for st in ph for r in range(repeat)]
        for _, st in order:
            st.once(st.ref, warm=warm_each)
        if any(st.case.gpu for st in states):
            common["card_peer"] = card_info("cuda")
        for st in states:
            row = st.row(common)
            row.pop("card_peer", None)
            rows.append(row)
            t = row["timings"]
            log(f"  {row['algorithm']:<10} {row['method']:<28} ran {str(row['ran']):<14} "
                f"{1e3 * t['median_s']:10.2f} ms (min {1e3 * t['min_s']:.2f}, max "
                f"{1e3 * t['max_s']:.2f}; first {1e3 * t['first_s']:.1f})  "
                f"{row['accuracy']['check']} {row['accuracy']['true_error']:.2g}")
    return rows


def write_rows(path, rows, note=None):
    """Append ``rows`` to the results file ``path`` (created with its ``meta`` if absent).

    The file is ``{"meta": {"date", "schema", "written_by"[, "note"]}, "rows": [...]}``; it is
    rewritten whole through a temporary file, so an interrupted write leaves the old one.

    Parameters
    ----------
    path : str or Path
    rows : list of dict
    note : str, optional
        Stored as ``meta["note"]`` when the file is created.

    Returns
    -------
    Path
    """
    path = Path(path)
    if path.is_file():
        data = json.loads(path.read_text(encoding="utf-8"))
        if "rows" not in data or "meta" not in data:
            raise ValueError(f"{path} is not a results file of this harness")
    else:
        meta = {"date": datetime.date.today().isoformat(), "schema": SCHEMA,
                "written_by": "benchmarks/harness.py"}
        if note:
            meta["note"] = note
        data = {"meta": meta, "rows": []}
    data["rows"].extend(jsonable(rows))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


# -- command line --------------------------------------------------------------------------------

def parse_params(items):
    """``["alpha=0.9", "beta=0.5"]`` → ``{"alpha": 0.9, "beta": 0.5}`` (values parsed as JSON
    when they can be, else kept as strings)."""
    out = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep:
            raise argparse.ArgumentTypeError(f"--params takes key=value, not {item!r}")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def settings_of(spec):
    """Engine settings objects from ``"Class.field=value,Class.field=value"`` (``--params
    settings=PowerSettings.accelerator=anderson``): each class's registered default with those
    fields replaced (values parsed as JSON when they can be)."""
    import importlib
    from digraph.dispatch import settings as registry
    for module in ("power.cpu", "push.cpu_bsp", "scc.cpu"):  # register their defaults
        importlib.import_module(f"digraph.dispatch.engines.{module}")
    known = {cls.__name__: default for cls, default in registry._KNOWN.items()}
    changes = {}
    for item in spec.split(","):
        name, _, assignment = item.partition(".")
        field, sep, value = assignment.partition("=")
        if name not in known or not sep:
            raise argparse.ArgumentTypeError(f"settings: {item!r} is not Class.field=value of "
                                             f"{', '.join(sorted(known))}")
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            pass
        changes.setdefault(name, {})[field] = value
    return [dataclasses.replace(known[n], **f) for n, f in changes.items()]


def add_common_arguments(ap, graphs_default=None, algorithms_default=None):
    """The options every benchmark script shares (graphs, repeat, tol, output)."""
    ap.add_argument("--graphs", nargs="+", default=graphs_default, required=graphs_default is None,
                    help="graph names (datasets by stem, or rmatK, erK, gridK, chainN, geoN, citK-B)")
    ap.add_argument("--algorithms", nargs="+", default=algorithms_default or ["pagerank"],
                    choices=["pagerank", "adsorption", "sssp", "kcore"])
    ap.add_argument("--repeat", type=int, default=5, help="timed warm runs per case (default 5)")
    ap.add_argument("--tol", type=float, default=1e-8,
                    help="L1 error bound for PageRank and adsorption (default 1e-8)")
    ap.add_argument("--params", nargs="*", metavar="KEY=VALUE", help="more digraph.run parameters")
    ap.add_argument("--no-interleave", action="store_true", help="run each case's repeats together")
    ap.add_argument("--warm-each", action="store_true",
                    help="an untimed run of the same case before each timed one")
    ap.add_argument("--out", help="append the rows to this JSON file (e.g. benchmarks/results/x.json)")
    ap.add_argument("--note", help="meta note stored when --out is created")


def run_and_write(cases, args):
    """Time ``cases`` one graph at a time, write the verified rows to ``args.out`` and return the
    exit status: 0, or 2 when an answer was wrong (printed on stderr, no row written for it)."""
    rows, wrong = [], []
    for name in dict.fromkeys(c.graph for c in cases):
        group = [c for c in cases if c.graph == name]
        try:
            rows += time_cases(group, repeat=args.repeat, interleave=not args.no_interleave,
                               warm_each=args.warm_each)
        except WrongAnswer as e:
            print(f"WRONG ANSWER on {name}: {e}", file=sys.stderr)
            wrong.append(name)
    if args.out and rows:
        print(f"{len(rows)} rows appended to {write_rows(args.out, rows, note=args.note)}")
    if wrong:
        print(f"wrong answers on: {', '.join(wrong)}", file=sys.stderr)
        return 2
    return 0


def main(argv=None):
    """The generic command line: every mode × algorithm × graph, plus the named peers."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_arguments(ap)
    ap.add_argument("--modes", nargs="+", default=["default"],
                    help="digraph modes ('default': the router's choice)")
    ap.add_argument("--peers", nargs="*", default=[], choices=sorted(peer_mod.PEERS))
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int)
    args = ap.parse_args(argv)
    params = parse_params(args.params)
    cases = []
    for g in args.graphs:
        for a in args.algorithms:
            cases += [Case(g, a, mode=None if m == "default" else m, device=args.device,
                           threads=args.threads, tol=args.tol, params=dict(params))
                      for m in args.modes]
            cases += [Case(g, a, peer=p, tol=args.tol, params=dict(params))
                      for p in args.peers if peer_mod.PEERS[p][0] == a]
    return run_and_write(cases, args)


if __name__ == "__main__":
    sys.exit(main())
