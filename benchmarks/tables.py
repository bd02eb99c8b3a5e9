"""Generate ``docs/benchmarks.md`` and the README's figures from the committed results files.

Every figure in ``docs/benchmarks.md`` and between the README's ``<!-- figures:begin -->`` and
``<!-- figures:end -->`` markers is computed here from ``benchmarks/results/*.json``: nothing is
typed by hand. Each table names its results file, the command that wrote it (the table of
``benchmarks/results/README.md``), the machine and card, the date stored in the file and the
accuracy its rows reached. Files written by :mod:`harness` (``meta.schema``) get a table each
without an edit here.

    python benchmarks/tables.py           # rewrite docs/benchmarks.md and the README's table
    python benchmarks/tables.py --check   # exit 1 when the committed docs differ from these

This module imports neither digraph nor Numba: ``tests/test_docs_figures.py`` runs
:func:`check` in-process.
"""

import argparse
import dataclasses
import json
import re
import sys
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus  # noqa: E402  (imports nothing: no digraph here)

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
DOC = ROOT / "docs" / "benchmarks.md"
README = ROOT / "README.md"
BEGIN, END = "<!-- figures:begin -->", "<!-- figures:end -->"
HISTORY = "history/benchmarks-notebook.md"
SCHEMA = "digraph-bench/1"


# -- reading the results -------------------------------------------------------------------------

def load(name, results=RESULTS):
    """``(meta, rows)`` of a results file (metadata under ``meta`` or beside ``rows``)."""
    data = json.loads((Path(results) / name).read_text(encoding="utf-8"))
    meta = data.get("meta") or {k: v for k, v in data.items() if k != "rows"}
    return meta, data["rows"]


def listed(results=RESULTS):
    """``{file: (command, machine)}`` from the table of ``benchmarks/results/README.md``."""
    out = {}
    path = Path(results) / "README.md"
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(cells) >= 3:
            out[cells[0].strip("`")] = (cells[1], cells[2])
    return out


def ms(row):
    """A row's time in milliseconds (harness ``timings.median_s``, ``median_ms``, ``time_ms``
    or ``time`` in seconds); None when it has none."""
    if "timings" in row:
        return 1e3 * row["timings"]["median_s"]
    for key, scale in (("median_ms", 1.0), ("time_ms", 1.0), ("time", 1e3)):
        if isinstance(row.get(key), (int, float)) and row[key] > 0:
            return row[key] * scale
    return None


def fmt(x):
    """A time in ms as printed in the tables (three significant figures, thousands separated)."""
    if x is None:
        return "—"
    if x < 10:
        return f"{x:.2f}"
    if x < 100:
        return f"{x:.1f}"
    return f"{x:,.0f}"


def by(**want):
    """A row predicate: every ``field=value`` holds (a value may be a callable test)."""
    def pred(r):
        return all(v(r.get(k)) if callable(v) else r.get(k) == v for k, v in want.items())
    return pred


def find(name, graph, pred, results=RESULTS):
    """The time (ms) of the one row of ``name`` on ``graph`` matching ``pred``.

    Raises
    ------
    LookupError
        No row, or more than one, matches: a figure must come from exactly one row.
    """
    rows = [r for r in load(name, results)[1] if r.get("graph") == graph and pred(r)]
    if len(rows) != 1:
        raise LookupError(f"{name}: {len(rows)} rows for {graph} match, expected one")
    return ms(rows[0]), rows[0]


def accuracy(rows, tol):
    """One phrase: the worst true error of the rows against ``tol``, or how answers were checked."""
    errs = [r.get("true_error") if "accuracy" not in r else r["accuracy"].get("true_error")
            for r in rows]
    errs = [e for e in errs if isinstance(e, (int, float)) and e > 0]
    checks = {str(r.get("check", r.get("equal", r.get("accuracy", {}).get("check"))))
              for r in rows} - {"None"}
    parts = []
    if errs:
        parts.append(f"largest true L1 error {max(errs):.1e}" + (f" (tol {tol:g})" if tol else ""))
    if checks and checks <= {"equal", "True"}:
        parts.append("every answer checked equal to the reference")
    elif checks - {"within tol"}:
        parts.append("checks: " + ", ".join(sorted(checks)))
    return "; ".join(parts) or "not recorded in the file"


# -- the tables ----------------------------------------------------------------------------------

def section(table, lines, meta, rows, used, results, commands, extra):
    """The Markdown section of ``table`` (its ``title``, ``what`` and ``file``): its table
    ``lines``, then the file, date, machine (``extra`` after it), tolerance, command and the
    accuracy of the ``used`` rows."""
    command, machine = (commands or listed(results)).get(table.file, ("not listed", "not listed"))
    tol = meta.get("tol") or next((r.get("tol") for r in rows if r.get("tol")), None)
    about = [f"*File* `benchmarks/results/{table.file}` · *date* "
             f"{meta.get('date', 'not recorded')} · *machine* {machine}{extra}"
             + (f" · *tol* {tol:g}" if tol else ""),
             f"*Command* {command}",
             f"*Accuracy* {accuracy(used, tol)}"]
    return (f"## {table.title}\n\n{table.what}\n\n" + "\n".join(lines) + "\n\n"
            + "  \n".join(about) + "\n")


@dataclasses.dataclass
class CorpusTable:
    """The corpus table of a ``bench_cpu.py --classes`` (or ``bench_gpu.py``) file: a row per
    graph and algorithm, its class (:data:`corpus.CLASSES`), the default (and the mode it ran),
    the fastest named mode, the fastest peer, and the default's time over each."""

    title: str
    file: str
    what: str

    def render(self, results=RESULTS, commands=None):
        meta, rows = load(self.file, results)
        keys = list(dict.fromkeys((r["graph"], r["algorithm"]) for r in rows))
        lines = ["| class | graph | algorithm | default | ran | best named mode | ÷ mode "
                 "| best peer | ÷ peer |", "|---|---|---|---:|---|---:|---:|---:|---:|"]
        for graph, algo in keys:
            mine = [r for r in rows if (r["graph"], r["algorithm"]) == (graph, algo)]
            default = [r for r in mine if r.get("mode") == "default" and not r.get("fresh_graph")]
            named = [r for r in mine if r.get("mode") not in (None, "default")]
            peers = [r for r in mine if r.get("mode") is None]
            if len(default) != 1:
                raise LookupError(f"{self.file}: {len(default)} default rows for {graph}, {algo}")
            d = ms(default[0])
            best = min(named, key=ms, default=None)
            peer = min(peers, key=ms, default=None)
            cells = [corpus.class_of(graph) or "—", graph, algo, fmt(d), str(default[0]["ran"])]
            for other, label in ((best, "mode"), (peer, "method")):
                cells += ([f"{fmt(ms(other))} ({other[label]})", f"{d / ms(other):.2f}"]
                          if other else ["—", "—"])
            lines.append("| " + " | ".join(cells) + " |")
        threads = sorted({r.get("threads") for r in rows} - {None})
        return section(self, lines, meta, rows, rows, results, commands,
                       f" · *threads* {threads[0]}" if len(threads) == 1 else "")


@dataclasses.dataclass
class Table:
    """One table of ``docs/benchmarks.md``: rows (``key``) × columns (``columns``: header and
    row predicate), each cell the time of the one matching row of ``file``."""

    title: str
    file: str
    what: str
    columns: list
    key: Callable = lambda r: r["graph"]
    select: Callable = lambda r: True
    ratio: tuple = None  # (header, numerator column, [denominator columns]): num ÷ min(dens)
    extra: list = dataclasses.field(default_factory=list)  # (header, f(rows of one key) -> str)

    def render(self, results=RESULTS, commands=None):
        meta, rows = load(self.file, results)
        rows = [r for r in rows if self.select(r)]
        keys = list(dict.fromkeys(self.key(r) for r in rows))
        used = []
        cells = {}
        for k in keys:
            mine = [r for r in rows if self.key(r) == k]
            for head, pred in self.columns:
                hit = [r for r in mine if pred(r)]
                if len(hit) > 1:
                    raise LookupError(f"{self.file}: {len(hit)} rows for ({k}, {head})")
                cells[k, head] = ms(hit[0]) if hit else None
                used += hit
        heads = [h for h, _ in self.columns]
        lines = ["| graph | " + " | ".join(heads + [h for h, _ in self.extra]
                                          + ([self.ratio[0]] if self.ratio else [])) + " |",
                 "|---|" + "---:|" * (len(heads) + len(self.extra) + bool(self.ratio))]
        for k in keys:
            mine = [r for r in rows if self.key(r) == k]
            row = [fmt(cells[k, h]) for h in heads] + [f(mine) for _, f in self.extra]
            if self.ratio:
                num = cells[k, self.ratio[1]]
                dens = [cells[k, d] for d in self.ratio[2] if cells[k, d]]
                row.append(f"{num / min(dens):.2f}" if num and dens else "—")
            lines.append(f"| {k} | " + " | ".join(row) + " |")
        card = meta.get("gpu") or meta.get("card")
        return section(self, lines, meta, rows, used, results, commands,
                       f" · *card* {card}" if card else "")


def method(name):
    """Predicate: the row's ``method`` is ``name``."""
    return by(method=name)


def first_run(title, file, what, trees):
    """The :class:`Table` of a ``bench_first_run.py`` file: a row per case, a column per tree
    (the rows' ``digraph first run (<tree>)`` method), and the mode that ran."""
    return Table(title, file, what, [(t, method(f"digraph first run ({t})")) for t in trees],
                 key=lambda r: f"{r['graph']}, {r['algorithm']}",
                 extra=[("ran", lambda rs: str(rs[0].get("ran")))])


def ran(rows):
    """The ``ran`` (or ``mode``) of a key's default row."""
    for r in rows:
        if r.get("method") in ("digraph default",) or r.get("mode") == "default":
            return str(r.get("ran") or r.get("mode"))
    return "—"


PR_CPU = [("default", method("digraph default")), ("scc", method("digraph scc")),
          ("power", method("digraph power")), ("bsp", method("digraph bsp")),
          ("first run", method("digraph first run")), ("scipy power", method("scipy power")),
          ("igraph PRPACK", method("igraph prpack"))]

TABLES = [
    Table("PageRank on the CPU against scipy and igraph PRPACK",
          "pagerank_formulations_real_cpu2_quiet.json",
          "Whole `digraph.run(g, \"pagerank\", tol=1e-8)` calls on a loaded graph, median of warm "
          "runs, ms: the default (the router's choice, `ran`), each named mode, the default on a "
          "freshly loaded graph (`first run`), a scipy power iteration with its sound stop and "
          "igraph's PRPACK (a direct solver; on its OpenMP threads, one per core the process "
          "may use), the power iteration on one thread. `ratio`: default ÷ the faster peer.",
          PR_CPU, extra=[("ran", ran)],
          ratio=("ratio", "default", ["scipy power", "igraph PRPACK"])),
    Table("PageRank on the CPU: R-MAT graphs", "pagerank_formulations_cpu2_quiet.json",
          "The same measurement on `rmatK` = `digraph.generators.rmat(K, 16, seed=1)` (the "
          "file's other graphs are superseded by the table above).", PR_CPU,
          select=lambda r: r["graph"].startswith("rmat"), extra=[("ran", ran)],
          ratio=("ratio", "default", ["scipy power", "igraph PRPACK"])),
    Table("Adsorption on the CPU", "adsorption_reach_cpu2_quiet.json",
          "`digraph.run(g, \"adsorption\", seeds=S, tol=1e-8)`, median of warm runs, ms; `high`: "
          "the ten seeds of largest out-degree, `low`: seeds of small reach (solved on their reach "
          "alone). `ratio`: default ÷ `bsp`.",
          [("default", by(mode="default")), ("bsp", by(mode="bsp"))],
          key=lambda r: f"{r['graph']}, seeds {r['seeds']}", extra=[("ran", ran)],
          ratio=("ratio", "default", ["bsp"])),
    Table("k-core on the CPU against igraph's coreness", "kcore_peel_cpu2_quiet.json",
          "`digraph.run(g, \"kcore\")`, median of warm runs, ms: the default `peel` (PKC) on 2 and "
          "1 threads, Batagelj–Zaversnik on 1, `vertex-async` on 2, and igraph's coreness (one "
          "thread). `ratio`: default on 2 threads ÷ igraph.",
          [("peel, 2 threads", method("peel pkc 2t")), ("peel, 1 thread", method("peel pkc 1t")),
           ("BZ, 1 thread", method("peel bz 1t")), ("vertex-async, 2", method("vertex-async 2t")),
           ("igraph coreness", method("igraph coreness"))],
          ratio=("ratio", "peel, 2 threads", ["igraph coreness"])),
    Table("SSSP on the CPU against scipy's Dijkstra", "sssp_cpu2.json",
          "`digraph.run(g, \"sssp\", source=s)`, median of warm runs, ms; `chainN` is a path of N "
          "vertices, `gridK` a K × K grid with weights 1..100. The machine was shared (the file's "
          "`load_average`). `ratio`: default ÷ scipy.",
          [("default", method("digraph default")), ("bsp", method("digraph bsp")),
           ("scipy Dijkstra", method("scipy dijkstra"))], extra=[("ran", ran)],
          ratio=("ratio", "default", ["scipy Dijkstra"])),
    Table("PageRank on one GPU against a CuPy power iteration", "gpu_pagerank_final_h200.json",
          "Whole `digraph.run(g, \"pagerank\", device=\"cuda\", tol=1e-8)` calls, median of warm "
          "runs, ms, against a CuPy float64 power iteration with the same sound stop (its answer "
          "left on the GPU). GPU R-MAT graphs are generated on the GPU (`rmatKc`: ids without arcs "
          "dropped). `ratio`: default ÷ CuPy.",
          [("default", method("digraph default")), ("power", method("digraph power")),
           ("bsp", method("digraph bsp")), ("CuPy power", method("cupy power"))],
          extra=[("ran", ran)], ratio=("ratio", "default", ["CuPy power"])),
    Table("PageRank on one GPU: rounds replayed as CUDA graphs", "gpu_power_graphs_h200.json",
          "The power iteration's rounds launched one by one or replayed as CUDA graphs (plain and "
          "with Anderson acceleration), and the whole `digraph.run` default, ms.",
          [("launches", by(variant="launches")), ("CUDA graphs", by(variant="graphs")),
           ("launches + Anderson", by(variant="launches + Anderson")),
           ("graphs + Anderson", by(variant="graphs + Anderson")),
           ("digraph.run default", by(variant="digraph.run default"))]),
    Table("Path modes on one GPU", "gpu_path_pairs_h200.json",
          "PageRank (tol 1e-8) and SSSP on one GPU, median of warm runs, ms: the path modes "
          "against `power`, `bsp` and `vertex-async`, each path variant alternated with one peer. "
          "`ratio`: `path` ÷ the faster of the others.",
          [("path", by(variant="path")), ("path-nopriority", by(variant="path-nopriority")),
           ("power", by(variant="power")), ("bsp", by(variant="bsp")),
           ("vertex-async", by(variant="vertex-async"))],
          key=lambda r: f"{r['graph']}, {r['algorithm']}",
          ratio=("ratio", "path", ["power", "bsp", "vertex-async"])),
    Table("SSSP on one GPU: road-like graphs", "sssp_gpu_cluster_h200.json",
          "`digraph.run(g, \"sssp\", device=\"cuda\")`, median of warm runs, ms: `vertex-async`, "
          "`cluster` with clusters of 512 vertices and 64 hops (the current defaults), the router's "
          "default of the time, and scipy's Dijkstra on one core of the host. `ratio`: cluster ÷ "
          "scipy.",
          [("vertex-async", method("vertex-async")), ("cluster", method("cluster 512, hops 64")),
           ("default then", by(method=lambda m: str(m).startswith("default"))),
           ("scipy Dijkstra", method("scipy dijkstra (one core)"))],
          extra=[("cluster rounds", lambda rs: next((f"{r['rounds']:,}" for r in rs if r["method"]
                                                       == "cluster 512, hops 64"), "—"))],
          ratio=("ratio", "cluster", ["scipy Dijkstra"])),
    Table("SSSP on one GPU: the worklist on the device", "gpu_worklist_ab_h200.json",
          "`vertex-async` with its rounds driven from the host (old) and with its worklist on the "
          "GPU (new), `cluster`, and the router's default of the time, ms.",
          [("host rounds (old)", method("vertex-async, host rounds (old)")),
           ("GPU worklist", method("vertex-async, GPU worklist (new)")),
           ("cluster", method("cluster")), ("default then", method("default"))]),
    Table("PageRank on several GPUs", "multi_gpu_power_confirm_h200x4.json",
          "R-MAT graphs generated on the GPU, PageRank tol 1e-8, median of warm runs, ms: CuPy's "
          "power iteration and `digraph.run` on one GPU, the sharded power iteration on 1 and 4 "
          "GPUs, and `digraph.run` with four GPUs named (its default). `speedup`: one-GPU ÷ "
          "four-GPU `digraph.run`, the two alternated run by run.",
          [("CuPy, 1 GPU", method("cupy power, one GPU")),
           ("digraph, 1 GPU", method("digraph power, one GPU (run)")),
           ("sharded, 1 GPU", by(method="digraph sharded power (cusparse)", gpus=1)),
           ("sharded, 4 GPUs", by(method="digraph sharded power (cusparse)", gpus=4)),
           ("digraph, 4 GPUs named", method("digraph run, GPUs named, no mode"))],
          extra=[("speedup (alternated)", lambda rs: next(
              (f"{r['speedup']:.2f}× ({fmt(r['one_gpu_ms'])} → {fmt(r['gpus_ms'])})" for r in rs
               if "speedup" in r), "—"))]),
    Table("Threads: the SCC engine against bsp on the CPU", "cpu_threads_h100_host.json",
          "PageRank to tol 1e-8 on 2 to 16 threads, median of warm runs, ms: the default (`ran`), "
          "the SCC engine and bsp. `ratio`: scc ÷ bsp, the quantity the router's CPU cost model "
          "(`RouteSettings.scc_ratio_base`, `scc_ratio_split`, `scc_thread_exponent`) is "
          "fitted to.", [("default", method("digraph default")), ("scc", method("digraph scc")),
                  ("bsp", method("digraph bsp"))],
          key=lambda r: f"{r['graph']}, {r['threads']} threads", extra=[("ran", ran)],
          ratio=("ratio", "scc", ["bsp"])),
    first_run("First answer with an empty Numba cache", "first_run_cpu2.json",
              "Milliseconds from a new process's start to the answer, with an empty Numba cache "
              "folder (`import digraph`, the load, one `digraph.run` with its compilation), median "
              "of 3 processes, two checkouts alternating in each command: f9af97a against 5bdc4f2 "
              "(the serial twins of the parallel kernels, numpy's CSR order for small graphs), then "
              "a69ec1a (the same code as 5bdc4f2) against 16c9abb (no power probe under 1,024 "
              "arcs). `small`: the 6-arc graph of `docs/first_run.md`; `rmat12`: "
              "`rmat(12, 8, seed=1)`, 32,768 arcs.",
              ["f9af97a", "5bdc4f2", "a69ec1a", "16c9abb"]),
    first_run("First answer and warm-up with an empty Numba cache", "first_run_cpu2_quiet.json",
              "Milliseconds from a new process's start to the answer with an empty Numba cache "
              "folder, median of 3 processes, two checkouts alternating: 07151ff against 3fa22fa "
              "(the condensation of small graphs by numpy, the SCC engine's pass without sweeps "
              "where every cyclic component is solved exactly); `all, warmup`: the whole "
              "`digraph.warmup()` in one process (3fa22fa: its items in one worker process per "
              "core), once each.",
              ["07151ff", "3fa22fa"]),
    first_run("First answer with an empty Numba cache: the device's host",
              "first_run_cpu2_h100_host.json",
              "The same measurement on 2 cores of a GPU machine's host: 07151ff against 0ced4bb "
              "(the condensation of small graphs by numpy, the SCC engine's pass without sweeps "
              "where every cyclic component is solved exactly, exact solves without allocation).",
              ["07151ff", "0ced4bb"]),
]


CORPUS = [
    CorpusTable("Every default on every class: 2 threads", "corpus_cpu2_dev.json",
                "The four algorithms on the corpus of `benchmarks/corpus.py` (PageRank and "
                "adsorption at tol 1e-8; adsorption's seeds the ten vertices of largest "
                "out-degree; none on R-MAT and Kronecker, whose reference takes minutes), 2 Numba "
                "threads, median of warm runs (each right after an untimed run of itself), ms: "
                "the default and the mode it ran, the fastest named mode, the fastest peer (a "
                "scipy power iteration, scipy's Dijkstra and igraph's coreness on one thread; "
                "igraph's PRPACK on its OpenMP threads, one per core the process may use), and "
                "the default's time over each. Five timed runs a case. On runs "
                "of a few milliseconds this virtual machine's scheduler shows through (times "
                "near multiples of 4 ms where the threads wait on each other), so a default "
                "and its engine named can differ by a third there from run to run."),
    CorpusTable("Every default on every class: 16 threads", "corpus_cpu16_h100_host.json",
                "PageRank and adsorption (tol 1e-8; adsorption's seeds the ten vertices of "
                "largest out-degree; none on R-MAT and Kronecker) on the corpus of "
                "`benchmarks/corpus.py`, 16 Numba threads, median of five warm runs (each right "
                "after an untimed run of itself; a default settled first), ms: the default and "
                "the mode it ran, the fastest named mode (`scc`, `power`, `bsp`), the fastest "
                "peer (a scipy power iteration on one thread, igraph's PRPACK on its OpenMP "
                "threads, one per core), and the default's time over each. soc-Slashdot0902's "
                "PageRank: on the machine's first run the power probe's judge handed over to "
                "`scc` (`probe-tripped`), a verdict the graph keeps; the judge's band now widens "
                "by the spread of its rounds' times (`RouteSettings.probe_noise_cap`)."),
    CorpusTable("Every default on every class: 2 threads, the device's host",
                "corpus_cpu2_h100_host.json",
                "The four algorithms on the corpus, 2 Numba threads per class, four classes "
                "side by side on separate cores of one host (they share its memory "
                "bandwidth), median of three warm runs (each right after an untimed run of "
                "itself), ms."),
]
"""The :class:`CorpusTable` of each corpus file (``bench_cpu.py --classes``)."""


def harness_tables(results=RESULTS):
    """A :class:`Table` for each results file written by :mod:`harness` (by graph × method)."""
    out = []
    for path in sorted(Path(results).glob("*.json")):
        meta, rows = load(path.name, results)
        if meta.get("schema") != SCHEMA or not rows or "side" in rows[0]:
            continue  # before_after.py's files: comparison_tables
        if path.name in {t.file for t in TABLES + CORPUS}:
            continue  # a table of its own above
        methods = list(dict.fromkeys(r["method"] for r in rows))
        algos = ", ".join(dict.fromkeys(r["algorithm"] for r in rows))
        out.append(Table(f"{algos}: `{path.stem}`", path.name,
                         f"Rows of `benchmarks/harness.py`: median of warm runs, ms"
                         f" ({meta.get('note') or 'see the file for each row'}).",
                         [(m, method(m)) for m in methods],
                         key=lambda r: f"{r['graph']}, {r['algorithm']}, {r['device']}"))
    return out


def comparison_tables(results=RESULTS, commands=None):
    """One section for the files of :mod:`before_after`: a table of every case (its
    ``comparisons``: base and new medians pooled over the alternated rounds, their ratio and
    verdict), a row per case, then each file's note, date, machine and command."""
    lines = ["| file | graph | algorithm | device | base | new | ratio | verdict |",
             "|---|---|---|---|---:|---:|---:|---|"]
    sources = []
    for path in sorted(Path(results).glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if not data.get("comparisons"):
            continue
        meta = data.get("meta", {})
        name = path.stem.removeprefix("before_after_")
        for comp in data["comparisons"]:
            for c in comp["cases"]:
                lines.append(f"| `{name}` | {c['graph']} | {c['algorithm']} | {c['device']} "
                             f"| {fmt(c['base_ms'])} | {fmt(c['new_ms'])} | {c['ratio']:.2f} "
                             f"| {c['verdict']} |")
        command, machine = (commands or listed(results)).get(path.name, ("not listed", "not listed"))
        sources.append(f"- `{name}`: {meta.get('note', '')}. *File* `benchmarks/results/"
                       f"{path.name}` · *date* {meta.get('date', 'not recorded')} · *machine* "
                       f"{machine} · *command* {command}")
    if not sources:
        return []
    return ["## Before and after\n\nThe defaults (`method` digraph default) on two checkouts, "
            "sides alternated process by process (`benchmarks/before_after.py`), medians in ms; "
            "`ratio` new ÷ base.\n\n" + "\n".join(lines) + "\n\n" + "\n".join(sources) + "\n"]


def _dask_rounds(stem, data):
    """The rounds measured by ``bench_dask_cluster.py`` (schema ``digraph-dask/1``)."""
    lines = ["| graph | algorithm | arcs | workers × threads | run | rounds | ms a round "
             "| ms a run | bytes a round | exchange ms | idle share |",
             "|---|---|---:|---:|---|---:|---:|---:|---:|---|---|"]
    for r in data["rows"]:
        lines.append(f"| {r.get('graph') or 'rmat' + str(r['scale'])} "
                     f"| {r.get('algorithm', 'pagerank')} | {r['arcs']:,} "
                     f"| {r.get('workers', '')} × {r.get('worker_threads', 1)} "
                     f"| {r['kind']}{' (' + r['tree'] + ')' if r.get('tree') else ''} "
                     f"| {r['rounds']} | {fmt(r['ms_round'])} "
                     f"| {fmt(r['ms_run'])} | {r.get('bytes_round', '')} "
                     f"| {', '.join(map(str, r.get('exchange_ms', [])))} "
                     f"| {', '.join(map(str, r.get('idle', [])))} |")
    return (f"## Dask cluster: `{stem}`\n\nRounds on a LocalCluster of worker processes "
            "(`cluster`) and the same rounds in this process (`process-T`, T Numba threads): "
            "PageRank's power rounds at tol 1e-8 (from 825e31d on with Anderson's mixes on the "
            "workers where the plain rate slows; the file's command says what the process "
            "rows ran), SSSP's and k-core's `bsp` rounds (`rmatK`: R-MAT 2^K).\n\n"
            + "\n".join(lines))


def _dask_load(stem, data):
    """A graph read from files by the workers, ``bench_dask_load.py`` (``digraph-dask-load/1``)."""
    mib = 2 ** 20
    lines = ["| R-MAT scale | arcs | workers × threads | files | whole CSR MiB "
             "| memory_limit MiB | below the whole | workers' peak MiB | client's peak MiB "
             "| load s | rounds | ms a round | bound | k-core s (first, warm) |",
             "|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---:|---:|---:|---|"]
    for r in data["rows"]:
        run = r["runs"][-1]
        kcore = ", ".join(fmt(k["time_total"]) for k in r.get("kcore_runs", [])) or "-"
        lines.append(
            f"| {r['scale']} | {r['arcs']:,} | {r['workers']} × "
            f"{r['threads_per_worker']} | {r['files']} | {r['csr_bytes'] / mib:,.0f} "
            f"| {r['memory_limit'] / mib:,.0f} "
            f"| {'yes' if r['limit_below_whole_csr'] else 'no'} "
            f"| {', '.join(f'{b / mib:,.0f}' for b in r['worker_peak_rss'])} "
            f"| {r['client_peak_rss'] / mib:,.0f} | {fmt(r['time_load'])} "
            f"| {run['rounds']} | {fmt(1e3 * run['round_s'])} "
            f"| {run['error_bound']:.1e} | {kcore} |")
    return (f"## Dask cluster: a graph no process holds whole, `{stem}`\n\n"
            "R-MAT arcs written as Parquet files by a child process, read by the "
            "workers (`digraph.load_distributed`), PageRank's power rounds there "
            "(the second, warm run), tol 1e-8; each worker's `memory_limit` against "
            "the whole graph's CSR as one process holds it.\n\n" + "\n".join(lines))


def _dask_model(stem, data):
    """The round model of ``dask_model.py`` (``digraph-dask-model/1``): its constants, its check
    against the measured rounds and its prediction for more workers."""
    m = data["rows"][0]
    bw = m["bandwidth_gb_s"]
    t_arc = m["t_arc_ns"]  # one thread (a number), or by thread count ("T" or "T@scale")

    def on(key):
        t, _, scale = key.partition("@")
        return f"on {t} thread{'s' * (t != '1')}" + (f" at scale {scale}" if scale else "")
    t_arc = ", ".join(f"{v:.3g} ns an arc {on(k)}"
                      for k, v in t_arc.items()) if isinstance(t_arc, dict) else (
        f"{t_arc:.3g} ns an arc")
    head = (f"t_arc = {t_arc}, L0 = {m['L0_ms']:.3g} ms, "
            f"l = {m['l_ms_per_worker']:.3g} ms a worker, B = "
            + (f"{bw:.3g} GB/s" if bw else "not fitted"))
    lines = ["| R-MAT scale | arcs | workers × threads | bytes a round | measured ms "
             "| model ms |", "|---:|---:|---:|---:|---:|---:|"]
    for r in m["checked"]:
        lines.append(f"| {r['scale']} | {r['arcs']:,} | {r['workers']} × "
                     f"{r.get('worker_threads', 1)} | {r['bytes_round']:,} "
                     f"| {fmt(r['measured_ms'])} | {fmt(r['model_ms'])} |")
    pred = ["| R-MAT scale | arcs | workers × threads | bytes a round "
            "| most in-arcs of a worker | most entries a worker moves | pull ms "
            "| model ms a round |", "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in m["predicted"]:
        pred.append(f"| {r['scale']} | {r['arcs']:,} | {r['workers']} × "
                    f"{m.get('worker_threads', 1)} "
                    f"| {r['bytes_round']:,} | {r['arcs_max']:,} | {r['entries_max']:,} "
                    f"| {fmt(r['pull_ms'])} | {fmt(r['model_ms'])} |")
    return (f"## Dask cluster: the round model `{stem}`\n\n"
            "`benchmarks/dask_model.py`: T(k) = t_arc·A_max(k) + L0 + l·k + "
            "8·R_max(k)/B, the bytes exact from the cut (docs/distributed.md). "
            f"Fitted: {head}.\n\n"
            + ("Fitted exactly to the measured rounds (as many as its constants: no check):"
               if m.get("exact_fit") else "Checked against the measured rounds:") + "\n\n"
            + "\n".join(lines) + "\n\nPredicted:\n\n" + "\n".join(pred))


_DASK_SECTIONS = {"digraph-dask/1": _dask_rounds, "digraph-dask-load/1": _dask_load,
                  "digraph-dask-model/1": _dask_model}


def _source(path, meta, commands):
    """The lines under a section: its file, date and machine, then its command (from the
    results README's row, ``commands`` of :func:`listed`)."""
    command, machine = commands.get(path.name, ("not listed", "not listed"))
    return (f"*File* `benchmarks/results/{path.name}` · *date* "
            f"{meta.get('date', 'not recorded')} · *machine* {machine}  \n"
            f"*Command* {command}\n")


def dask_tables(results=RESULTS, commands=None):
    """One section a results file of the Dask cluster (the schemas of :data:`_DASK_SECTIONS`),
    each followed by its file, date, machine and command."""
    out = []
    commands = commands or listed(results)
    for path in sorted(Path(results).glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        meta = data.get("meta", {}) if isinstance(data, dict) else {}
        section = _DASK_SECTIONS.get(meta.get("schema"))
        if section is None:
            continue
        out.append(section(path.stem, data) + "\n\n" + _source(path, meta, commands))
    return out


SPREAD_SCHEMA = "digraph-spread/1"


def spread_tables(results=RESULTS, commands=None):
    """One section a results file of ``bench_spread.py``: each case's median at each thread
    count (a column each), with the share of its runs slower than 1.5x the least where there
    are any, and the count of the least median."""
    out = []
    commands = commands or listed(results)
    for path in sorted(Path(results).glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        meta = data.get("meta", {}) if isinstance(data, dict) else {}
        if meta.get("schema") != SPREAD_SCHEMA:
            continue
        counts = sorted({r["threads"] for r in data["rows"]}, reverse=True)
        cases = {}
        for r in data["rows"]:
            cases.setdefault((r["graph"], r["algorithm"], r["mode"]), {})[r["threads"]] = r
        lines = [f"## Run-time spread by thread count: `{path.stem}`", "",
                 "Warm runs of each case at each thread count, the counts taken in turn run by "
                 "run in one process (`benchmarks/bench_spread.py`): the median in ms, and in "
                 "brackets the share of runs slower than 1.5x the least where there are any; "
                 "`best`: the count of the least median.", "",
                 "| graph | algorithm | mode | ran | " + " | ".join(f"{t} thr" for t in counts)
                 + " | best |",
                 "|---|---|---|---|" + "---:|" * len(counts) + "---:|"]
        for (graph, algorithm, mode), by in cases.items():
            cells = []
            for t in counts:
                r = by.get(t)
                cells.append("" if r is None else fmt(1e3 * r["median_s"]) + (
                    f" ({r['slow_share']:.2f})" if r["slow_share"] > 0 else ""))
            best = min(by, key=lambda t: by[t]["median_s"])
            ran = next(iter(by.values()))["engine"]
            lines.append(f"| {graph} | {algorithm} | {mode} | {ran} | " + " | ".join(cells)
                         + f" | {best} |")
        out.append("\n".join(lines) + "\n\n" + _source(path, meta, commands))
    return out


# -- the page and the README block ---------------------------------------------------------------

HEAD = f"""# Benchmarks: the current figures

<!-- generated by `python benchmarks/tables.py` from `benchmarks/results/*.json`: do not edit -->

Every table below is generated from one committed results file of `benchmarks/results/` by
`benchmarks/tables.py`; `python benchmarks/tables.py --check` (and `tests/test_docs_figures.py`)
fails when this page or the README's figures differ from the files. Each table gives its file,
date, machine and card, the accuracy its rows reached and the command that wrote the file, from
the repository root. Commands naming scripts that were retired since are kept as the files
record them; the script that measures the same today is in the list under
[How to measure](#how-to-measure). The chronological lab notebook, superseded figures included,
is [`docs/history/benchmarks-notebook.md`]({HISTORY}) (and, up to 2026-11-27,
[`docs/history/benchmarks-lab-notebook.md`](history/benchmarks-lab-notebook.md)).

## Protocol

The rules are those of [design.md](design.md) §6. Times are medians of warm runs after an
untimed first run, of the whole `digraph.run` call on a loaded graph unless a table says
otherwise; compilation is never in them (the harness reports it apart as `compile_s`). Where
the automatic choice times its candidates on a new graph (route code `measuring`), a default
case's first runs are that window, and rows written since the harness settles a default first
leave them out of the median (`settle_s` in the row); older rows may include them.
PageRank and adsorption stop on a certified bound of the L1 error (`tol`), and the tables give
the *true* error against an independent reference; SSSP and k-core answers are exact and
checked equal. Peers run with their own sound stop at the same accuracy, never a fixed
iteration count: the scipy and CuPy power iterations stop when `α/(1 − α)·‖x_(k+1) − x_k‖₁ ≤
tol`; igraph's PRPACK is a direct solver; scipy's Dijkstra and igraph's coreness are exact.
The scipy peers and igraph's coreness run on one thread; igraph's PRPACK on igraph's OpenMP
threads, one per core the process may use (two under `taskset -c 0,1`), and the harness times
the peers after the digraph cases of their graph, since those threads spin on the cores a while
after each call.
"Quiet cores" are two cores (`NUMBA_NUM_THREADS=2 taskset -c 0,1`) of an otherwise idle 16-core
Xeon host of a GPU machine; the 2-core development machine is shared, and its figures move by
±30% with its load. Compare rows only within one table.

## How to measure

| script | measures |
|---|---|
| `benchmarks/harness.py` | the harness (`Case`, `time_cases`, `write_rows`) and a generic command line |
| `benchmarks/bench_cpu.py` | defaults and named modes of the four algorithms on the CPU, with their peers; `--classes` runs the corpus of `benchmarks/corpus.py` by class |
| `benchmarks/fetch_datasets.py` | fetches the corpus's graphs the shared datasets lack (SNAP, or `--source DIR`) into the ignored `benchmarks/datasets/` |
| `benchmarks/bench_gpu.py` | the same on one GPU, PageRank against a CuPy power iteration |
| `benchmarks/bench_multi_gpu.py` | several GPUs of one host against one GPU and CuPy on one |
| `benchmarks/bench_preprocess.py` | path preprocessing, cache save and checked reload |
| `benchmarks/bench_load.py` | `digraph.load` of edge-list files |
| `benchmarks/before_after.py` | the same cases on two checkouts: every default within 5%, every answer within its bound |
| `benchmarks/tables.py` | this page and the README's figures, from the results files |
| `benchmarks/bench_dask_cluster.py` | the power iteration on a Dask `LocalCluster` against one process, per round |
| `benchmarks/bench_spread.py` | the spread of warm run times at several thread counts, round-robin, beside a peer as the host's witness |
| `benchmarks/probe_verdicts.py` | the power probe's verdict on a graph's first PageRank run, in fresh processes |
| `benchmarks/device_check.sh` | one call on the GPU machine (device tool): the GPU tests on the card, `before_after.py` on one GPU, 16 or 2 CPU threads, the corpus on 2 or 16 threads, GPU adsorption and k-core |

Each writes one JSON row per measurement (machine, card, commit, date, command, graph, algorithm,
mode, parameters, accuracy reached, timings and the run's counters) with `--out
benchmarks/results/NAME.json`; list the file and its command in `benchmarks/results/README.md`,
then run `python benchmarks/tables.py`.
"""

TAIL = f"""## Not tabulated here

These measurements have no committed results file; their figures, commands and dates are in the
lab notebook ([`docs/history/benchmarks-notebook.md`]({HISTORY})), under the same headings:
PageRank by components on one GPU (`mode="scc"`, the rows of `gpu_scc_*_h200.json` are
experiments), the path engine's ablations ("Vertex state", "Path representation", "Running
ahead"), streamed rounds for graphs larger than GPU memory, the road-like generators,
preprocessing, loading, cache validation and first-run compilation. To measure them again:
`bench_preprocess.py`, `bench_load.py`, and `compile_s` in every harness row.
"""


def render_doc(results=RESULTS):
    """The text of ``docs/benchmarks.md``."""
    commands = listed(results)
    parts = ([HEAD] + [t.render(results, commands)
                       for t in CORPUS + TABLES + harness_tables(results)]
             + comparison_tables(results, commands) + dask_tables(results, commands)
             + spread_tables(results, commands) + [TAIL])
    return "\n".join(parts)


def _anchor(title):
    """GitHub's anchor of a heading."""
    return re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")


def _link(table_index):
    t = TABLES[table_index]
    return f"[table](docs/benchmarks.md#{_anchor(t.title)})"


def readme_rows(results=RESULTS):
    """The rows of the README's figures table: (what, figure, file, machine and date)."""
    def f(name, graph, pred):
        return find(name, graph, pred, results)[0]

    def span(values):
        return f"{min(values):.2f}–{max(values):.2f}"

    commands = listed(results)
    rows = []
    # PageRank on the CPU
    real = "pagerank_formulations_real_cpu2_quiet.json"
    _, rr = load(real, results)
    graphs = list(dict.fromkeys(r["graph"] for r in rr))
    ratios = [f(real, g, method("digraph default")) / min(f(real, g, method("scipy power")),
                                                          f(real, g, method("igraph prpack")))
              for g in graphs]
    rmat = "pagerank_formulations_cpu2_quiet.json"
    rows.append(("PageRank, CPU, tol 1e-8",
                 f"default {fmt(f(real, 'cnr-2000', method('digraph default')))} ms on cnr-2000 "
                 f"against igraph PRPACK's {fmt(f(real, 'cnr-2000', method('igraph prpack')))}, "
                 f"{fmt(f(real, 'dblp-2010', method('digraph default')))} against "
                 f"{fmt(f(real, 'dblp-2010', method('igraph prpack')))} on dblp-2010; "
                 f"{span(ratios)}× the faster peer on {len(graphs)} SNAP and web graphs; R-MAT 2^20 "
                 f"{fmt(f(rmat, 'rmat20', method('digraph default')))} ms, "
                 f"{f(rmat, 'rmat20', method('digraph default')) / f(rmat, 'rmat20', method('scipy power')):.2f}× "
                 "a scipy power iteration", [real, rmat], 0))
    kc = "kcore_peel_cpu2_quiet.json"
    _, kr = load(kc, results)
    kg = list(dict.fromkeys(r["graph"] for r in kr))
    kratio = [f(kc, g, method("peel pkc 2t")) / f(kc, g, method("igraph coreness")) for g in kg]
    rows.append(("k-core, CPU", f"default (`peel`) on cnr-2000 "
                 f"{fmt(f(kc, 'cnr-2000', method('peel pkc 2t')))} ms against igraph coreness's "
                 f"{fmt(f(kc, 'cnr-2000', method('igraph coreness')))}; {span(kratio)}× igraph on "
                 f"{len(kg)} graphs", [kc], 3))
    ss = "sssp_cpu2.json"
    load_avg = load(ss, results)[0].get("load_average") or [0]
    rows.append(("SSSP, CPU", f"default (`vertex-async`): a chain of 10^6 vertices in "
                 f"{fmt(f(ss, 'chain1000000', method('digraph default')))} ms against scipy "
                 f"Dijkstra's {fmt(f(ss, 'chain1000000', method('scipy dijkstra')))}; a 700 × 700 "
                 f"weighted grid in {fmt(f(ss, 'grid700', method('digraph default')))} against "
                 f"{fmt(f(ss, 'grid700', method('scipy dijkstra')))} (load average "
                 f"{load_avg[0]:.1f})", [ss], 4))
    gp = "gpu_pagerank_final_h200.json"
    pairs = [(g, f(gp, g, method("digraph default")), f(gp, g, method("cupy power")))
             for g in ("cnr-2000", "dblp-2010", "rmat22", "rmat24")]
    cg = "gpu_power_graphs_h200.json"
    rows.append(("PageRank, one GPU, tol 1e-8", "default against a CuPy power iteration with "
                 "its own sound stop: " + ", ".join(f"{g} {fmt(a)} ms against {fmt(b)}"
                                                     for g, a, b in pairs)
                 + "; after the rounds were replayed as CUDA graphs: " + ", ".join(
                     f"{g} {fmt(f(cg, g, by(variant='digraph.run default')))} ms"
                     for g in ("cnr-2000", "dblp-2010")), [gp, cg], 5))
    pp = "gpu_path_pairs_h200.json"
    _, prow = load(pp, results)
    pgr = list(dict.fromkeys(r["graph"] for r in prow))
    pr_ratio = [f(pp, g, by(variant="path", algorithm="pagerank"))
                / f(pp, g, by(variant="power", algorithm="pagerank")) for g in pgr]
    sssp_wins = sum(f(pp, g, by(variant="path", algorithm="sssp"))
                    < f(pp, g, by(variant="vertex-async", algorithm="sssp")) for g in pgr)
    rows.append(("PageRank and SSSP by paths, one GPU",
                 f"`path`: cnr-2000 PageRank {fmt(f(pp, 'cnr-2000', by(variant='path', algorithm='pagerank')))} ms "
                 f"against `power`'s {fmt(f(pp, 'cnr-2000', by(variant='power', algorithm='pagerank')))} "
                 f"and `bsp`'s {fmt(f(pp, 'cnr-2000', by(variant='bsp', algorithm='pagerank')))} "
                 f"({span(pr_ratio)}× `power` on {len(pgr)} graphs); SSSP `path` faster than "
                 f"`vertex-async` on {sssp_wins} graphs of {len(pgr)} (cnr-2000 "
                 f"{fmt(f(pp, 'cnr-2000', by(variant='path', algorithm='sssp')))} ms against "
                 f"{fmt(f(pp, 'cnr-2000', by(variant='vertex-async', algorithm='sssp')))})", [pp], 7))
    mg = "multi_gpu_power_confirm_h200x4.json"
    four, _ = find(mg, "rmat25", by(method="digraph sharded power (cusparse)", gpus=4), results)
    named = f(mg, "rmat25", method("digraph run, GPUs named, no mode"))
    cupy = f(mg, "rmat25", method("cupy power, one GPU"))
    alt = find(mg, "rmat25", lambda r: "speedup" in r, results)[1]
    rows.append(("PageRank, several GPUs", f"R-MAT 2^25 (537 M arcs), default on four GPUs "
                 f"{fmt(named)} ms (the sharded iteration alone {fmt(four)}), {named / cupy:.2f}× "
                 f"CuPy's power iteration on one ({fmt(cupy)} ms); against digraph on one GPU "
                 f"{alt['speedup']:.2f}× with the two runs alternated {alt['repeat']} times "
                 f"({fmt(alt['one_gpu_ms'])} → {fmt(alt['gpus_ms'])} ms)", [mg], 10))
    sc = "sssp_gpu_cluster_h200.json"
    cl, clr = find(sc, "grid2000", method("cluster 512, hops 64"), results)
    dj = f(sc, "grid2000", method("scipy dijkstra (one core)"))
    va = find(sc, "grid2000", method("vertex-async"), results)[1]
    wl = "gpu_worklist_ab_h200.json"
    rows.append(("SSSP, one GPU", f"`cluster` (the default on road-like graphs): 2000 × 2000 grid "
                 f"(weights 1–100) {fmt(cl)} ms, {cl / dj:.2f}× scipy's Dijkstra on one core, "
                 f"{clr['rounds']:,} rounds against `vertex-async`'s {va['rounds']:,}; elsewhere "
                 f"`vertex-async` with its worklist on the GPU (cnr-2000 "
                 f"{fmt(f(wl, 'cnr-2000', method('vertex-async, GPU worklist (new)')))} ms)",
                 [sc, wl], 8))
    out = []
    for what, figure, files, table in rows:
        meta = load(files[0], results)[0]
        machine = commands.get(files[0], ("", "not listed"))[1]
        where = ", ".join(f"`{x}`" for x in files)
        out.append(f"| {what} | {figure} | {where}; {_link(table)} | {machine}, {meta.get('date')} |")
    return out


def render_readme_block(results=RESULTS):
    """The README's figures table, markers included."""
    head = ("| what | figure | results file (`benchmarks/results/`) and table | machine, date |\n"
            "|---|---|---|---|")
    return f"{BEGIN}\n{head}\n" + "\n".join(readme_rows(results)) + f"\n{END}"


def replace_block(text, block):
    """``text`` with its figures block (markers included) replaced by ``block``."""
    i, j = text.find(BEGIN), text.find(END)
    if i < 0 or j < i:
        raise ValueError(f"README.md has no {BEGIN} … {END} block")
    return text[:i] + block + text[j + len(END):]


def check(root=ROOT):
    """The differences between the committed docs and what this module generates.

    Returns
    -------
    list of str
        One message per file that differs (empty when both agree).
    """
    root = Path(root)
    results = root / "benchmarks" / "results"
    problems = []
    doc = root / "docs" / "benchmarks.md"
    want = render_doc(results)
    if not doc.is_file() or doc.read_text(encoding="utf-8") != want:
        problems.append(f"{doc.relative_to(root)} differs from `python benchmarks/tables.py`"
                        + _first_difference(doc.read_text(encoding="utf-8") if doc.is_file()
                                            else "", want))
    readme = (root / "README.md").read_text(encoding="utf-8")
    i, j = readme.find(BEGIN), readme.find(END)
    have = readme[i:j + len(END)] if 0 <= i < j else ""
    block = render_readme_block(results)
    if have != block:
        problems.append("README.md's figures block differs from `python benchmarks/tables.py`"
                        + _first_difference(have, block))
    return problems


def _first_difference(have, want):
    a, b = have.splitlines(), want.splitlines()
    for k, (x, y) in enumerate(zip(a, b)):
        if x != y:
            c = next((i for i, (u, v) in enumerate(zip(x, y)) if u != v), min(len(x), len(y)))
            lo = max(c - 40, 0)
            return (f" (line {k + 1}, column {c + 1}: committed …{x[lo:c + 40]!r}…, generated "
                    f"…{y[lo:c + 40]!r}…)")
    return f" ({len(a)} lines committed, {len(b)} generated)"


def main(argv=None):
    """Command line: write the docs, or ``--check`` them (exit status 1 when they differ)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="compare only; exit 1 on a difference")
    args = ap.parse_args(argv)
    if args.check:
        problems = check()
        for p in problems:
            print(p, file=sys.stderr)
        return 1 if problems else 0
    DOC.write_text(render_doc(), encoding="utf-8")
    README.write_text(replace_block(README.read_text(encoding="utf-8"), render_readme_block()),
                      encoding="utf-8")
    print(f"wrote {DOC.relative_to(ROOT)} and the figures of {README.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
