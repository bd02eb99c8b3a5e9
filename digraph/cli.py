"""The ``digraph`` command line: ``run``, ``preprocess``, ``info`` and ``warmup``.

::

    digraph run pagerank web.txt.gz --alpha 0.85 --tol 1e-8 --top 10 --out ranks.csv
    digraph run sssp roads.mtx --source 17 --stats stats.json
    digraph run adsorption graph.el --seeds 3,7,12 --mode vertex-async
    zcat web.txt.gz | digraph run pagerank - --top 5
    digraph preprocess web.txt.gz -o web.paths --jobs 2
    digraph info web.paths
    digraph warmup

INPUT ``-`` is standard input (:func:`digraph.preprocess.cli.load_input`); ``--format`` names the
format of any INPUT.  ``--source`` and ``--seeds`` are read as the graph's ids are: integers, or
the names of an edge list of vertex names.  Every error prints one line ``digraph: error: ...``
on stderr and exits with status 2, in the command line's spelling (``--mode peel``, not the
library's ``mode='peel'``: :func:`cli_spelling`; ``--debug`` shows the traceback instead);
Ctrl-C prints ``digraph: interrupted`` and exits with 130.  Every path
is checked before any work; files are written whole or not at all (:mod:`digraph.atomic_file`), and
a cache path is written only where that loses nothing (:mod:`digraph.paths.cache_folder`).  Progress (stage names and elapsed seconds, rounds at the end) goes
to stderr when it is a terminal, or always with ``--progress``; never with ``--quiet``.  On a
terminal, a run that goes on for over a second shows a bar of its rounds and error bound instead
(:class:`digraph.progress.RoundBar`).
"""

import json
import re
import sys
import threading
import time

__all__ = ["main", "build_parser", "cli_spelling"]

EXAMPLES = """examples:
  digraph run pagerank web.txt.gz --tol 1e-8 --top 10 --out ranks.csv
  digraph run sssp graph.el --source 17 --stats stats.json
  digraph run sssp friends.csv --source alice
  digraph run adsorption graph.el --seeds 3,7,12
  digraph run kcore graph.mtx --out cores.npy
  digraph run pagerank web.txt.gz --out ranks.parquet --quiet
  digraph run pagerank web.txt.gz --mode path --cache web.paths --progress
  zcat web.txt.gz | digraph run pagerank - --top 5
  digraph run pagerank graph.dat --format tsv
  digraph preprocess web.txt.gz -o web.paths
  digraph info web.paths
  digraph warmup --mode scc --mode power

input formats (by the file name, or --format):
  .el .txt .edges   edge list, fields separated by blanks        (--format edgelist)
  .tsv              the same, with an optional header line        (--format tsv)
  .csv              comma-separated, with an optional header line (--format csv)
  .mtx              Matrix Market coordinate file                 (--format mtx)
  each optionally gzip-compressed: .txt.gz, .csv.gz, .mtx.gz, ...; '-' is standard input"""


def build_parser():
    """The argparse parser of every subcommand."""
    import argparse

    from .preprocess.cli import add_input_arguments, build_parser as preprocess_parser
    from .run import MODES

    from . import __version__

    p = preprocess_parser()
    p.description = "digraph: iterative analytics on directed graphs (DiGraph re-created)."
    p.add_argument("--version", action="version", version=f"digraph {__version__}")
    p.epilog = EXAMPLES
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
    pre = sub.choices["preprocess"]
    pre.epilog = EXAMPLES[EXAMPLES.index("input formats"):]
    pre.formatter_class = argparse.RawDescriptionHelpFormatter
    r = sub.add_parser("run", help="run an algorithm and print the top vertices and statistics",
                       epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    r.add_argument("algorithm", help="pagerank, adsorption, sssp or kcore")
    add_input_arguments(r)
    r.add_argument("--source", help="source vertex id (sssp): an integer, or a name for a graph "
                                    "of vertex names")
    r.add_argument("--seeds", help="seed vertex ids (adsorption): comma-separated, or @FILE with "
                                   "one per line")
    r.add_argument("--alpha", type=float, help="PageRank damping (default 0.85)")
    r.add_argument("--beta", type=float, help="adsorption continuation probability (default 0.8)")
    r.add_argument("--tol", type=float, help="bound on the L1 error (pagerank, adsorption; default 1e-6)")
    r.add_argument("--max-iter", type=int, help="round limit")
    r.add_argument("--mode", choices=MODES, help="execution mode (default: the fastest for the algorithm)")
    r.add_argument("--device", default="cpu", help="cpu (default), cuda or cuda:N (one GPU), cuda:0,1,... (several GPUs)")
    r.add_argument("--threads", type=int, help="CPU threads")
    r.add_argument("--cache", help="path modes: preprocessing cache folder (reused or built)")
    r.add_argument("--num-vertices", type=int, help="keep vertices 0..N-1 (isolated ones included)")
    r.add_argument("--top", type=int, default=10, help="vertices to print (default %(default)s; 0: none)")
    r.add_argument("--out", help="write every vertex's value: .csv (vertex,value), .npy, or .parquet "
                                 "(needs pyarrow)")
    r.add_argument("--stats", help="write the run statistics as JSON")
    r.add_argument("--allow-unconverged", action="store_true",
                   help="when max_iter rounds do not reach tol, write the partial answer with a warning "
                        "(exit 0) instead of failing")
    r.add_argument("--debug", action="store_true", help="show tracebacks")
    for parser in (r, sub.choices["preprocess"]):
        _add_progress_options(parser)
    w = sub.add_parser("warmup", help="compile every kernel ahead (for images and clusters)",
                       description="Compile the Numba kernels ahead, so that no run compiles (a "
                                   "fresh install compiles a run's kernels on its first call); "
                                   "prints each item and its seconds.")
    w.add_argument("--mode", action="append", choices=MODES,
                   help="only this mode (repeatable; default: every mode of the device)")
    w.add_argument("--family", action="append", choices=("linear", "monotone", "hindex"),
                   help="only this family: linear (pagerank, adsorption), monotone (sssp), "
                        "hindex (kcore) (repeatable; default: all)")
    w.add_argument("--device", default="cpu", help="cpu (default) or cuda[:N]")
    w.add_argument("--int64", action="store_true",
                   help="also compile for graphs of 2^31 vertices or more (int64 indices)")
    w.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    w.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def _add_progress_options(parser):
    g = parser.add_mutually_exclusive_group()
    g.add_argument("--progress", action="store_true",
                   help="show progress on stderr even when it is not a terminal")
    g.add_argument("-q", "--quiet", action="store_true",
                   help="print nothing on stdout or stderr but errors (files are still written)")


BAR_DELAY = 1.0
"""Seconds a run goes on before its round bar replaces the stage's live line."""


class Progress:
    """Stage names and elapsed seconds on a stream (stderr).

    On a terminal the current stage's line is redrawn with its elapsed time every ``interval``
    seconds by a daemon thread, until a round bar (:meth:`round_bar`) takes the line over;
    elsewhere (``--progress`` into a file or pipe) each stage prints one line when it ends.  A
    disabled Progress prints nothing.
    """

    def __init__(self, stream, enabled, interval=0.2):
        self.stream = stream
        self.enabled = bool(enabled)
        self.live = self.enabled and _isatty(stream)
        self.interval = interval
        self._stop = None
        self._thread = None
        self._stage = None
        self._t0 = 0.0

    def start(self, stage):
        """Begin ``stage`` (ends the previous one)."""
        self.end()
        if not self.enabled:
            return
        self._stage, self._t0 = stage, time.perf_counter()
        if self.live:
            self._stop = threading.Event()
            self._thread = threading.Thread(target=self._tick, daemon=True)
            self._draw()
            self._thread.start()

    def end(self, detail=""):
        """End the current stage, printing its elapsed time and ``detail``."""
        if self._stage is None:
            return
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
        dt = time.perf_counter() - self._t0
        line = f"digraph: {self._stage}: {dt:.2f} s" + (f", {detail}" if detail else "")
        self._write(("\r\033[K" if self.live else "") + line + "\n")
        self._stage = None

    def note(self, text):
        """A line of its own (e.g. the stage times of a preprocessing run)."""
        if self.enabled:
            self.end()
            self._write(f"digraph: {text}\n")

    def aside(self, text):
        """A line of its own without ending the current stage (a live line is redrawn after it)."""
        if self.enabled:
            self._write(("\r\033[K" if self.live else "") + f"digraph: {text}\n")

    def round_bar(self, delay=None):
        """A :class:`digraph.progress.RoundBar` of the current stage on a terminal (None
        elsewhere, or when tqdm is missing): it appears after ``delay`` seconds (default
        :data:`BAR_DELAY`), stops the live line's redrawing when it does, and leaves no line
        behind (the stage's own line follows when it ends)."""
        if not self.live or self._stage is None:
            return None
        try:
            import tqdm  # noqa: F401 - a dependency, but the stage lines do without it
        except ImportError:
            return None
        from .progress import RoundBar
        return RoundBar(desc=f"digraph: {self._stage}", file=_OnFirstWrite(self.stream, self._pause),
                        delay=BAR_DELAY if delay is None else delay, leave=False)

    def _pause(self):
        """A round bar takes over the live line: stop redrawing it, and clear it."""
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
        self._write("\r\033[K")

    def abort(self):
        """Stop drawing without a final line (an error follows)."""
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
            self._write("\n")
        self._stage = None

    def _tick(self):
        while not self._stop.wait(self.interval):
            self._draw()

    def _draw(self):
        dt = time.perf_counter() - self._t0
        self._write(f"\r\033[Kdigraph: {self._stage}... {dt:.1f} s")

    def _write(self, text):
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed or broken stderr must not fail the run
            pass


class _OnFirstWrite:
    """``stream``, calling ``hook()`` before the first text is written to it."""

    def __init__(self, stream, hook):
        self._stream = stream
        self._hook = hook

    def write(self, text):
        if text and self._hook is not None:
            hook, self._hook = self._hook, None
            hook()
        return self._stream.write(text)

    def flush(self):
        self._stream.flush()

    def __getattr__(self, name):  # encoding, fileno, isatty: tqdm sizes and styles the bar by them
        return getattr(self._stream, name)


def _isatty(stream):
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _progress(args):
    """The Progress of a command line: on a terminal, or with --progress; never with --quiet."""
    if getattr(args, "quiet", False):
        return Progress(sys.stderr, False)
    return Progress(sys.stderr, getattr(args, "progress", False) or _isatty(sys.stderr))


def _vertex(text, graph):
    """A vertex id from the command line, read as the graph's ids are: the text itself for a
    graph of vertex names (``Graph.vertex_ids`` of dtype object), else an int when it is one
    (any other text stays text, which the run refuses as not a vertex, naming it)."""
    text = text.strip()
    if graph.vertex_ids.dtype == object:
        return text
    try:
        return int(text)
    except ValueError:
        return text


def _seeds(spec):
    """The ``--seeds`` ids as text: ``3,7,12``, or ``@FILE`` with one id per line (``#``
    comments); :func:`_vertex` reads each once the graph is loaded.

    FILE must be a regular file (or a link to one): a FIFO, a device or a directory is refused
    with InvalidParameterError, without blocking and without reading it.
    """
    if spec.startswith("@"):
        import io

        from .errors import InvalidParameterError
        from .io._files import open_regular
        with io.TextIOWrapper(open_regular(spec[1:], InvalidParameterError, "--seeds file"),
                              encoding="utf-8") as f:
            items = [ln for ln in (line.strip() for line in f) if ln and not ln.startswith("#")]
    else:
        items = [s for s in spec.split(",") if s.strip()]
    return [s.strip() for s in items]


def _check_out(path):
    """Refuse an ``--out`` name before any work: its suffix, its folder, not a folder itself."""
    from .atomic_file import check_output_path
    from .errors import InvalidParameterError
    if not path.endswith((".csv", ".npy", ".parquet")):
        raise InvalidParameterError(f"--out {path!r}: use a .csv or .npy file name (or .parquet, with pyarrow)")
    if path.endswith(".parquet"):
        _check_pyarrow(path)
    check_output_path(path, "--out")


def _write_values(path, result):
    """Every vertex's value into ``path`` (.csv, .npy or .parquet), written whole or not at all."""
    import numpy as np

    from .atomic_file import atomic_file
    from .errors import InvalidParameterError
    ids, values = result.vertex_ids, result.values
    if path.endswith(".npy"):
        if ids.dtype == object:
            if not all(isinstance(i, str) for i in ids.tolist()):
                raise InvalidParameterError("--out .npy needs integer or text vertex ids; use .csv")
            ids = ids.astype(str) if ids.size else np.zeros(0, dtype="U1")  # vertex names
        with atomic_file(path, "wb") as f:
            np.save(f, np.rec.fromarrays([ids, values], names="vertex,value"))
    elif path.endswith(".csv"):
        with atomic_file(path, "w") as f:
            f.write("vertex,value\n")
            if ids.dtype == object:  # names, quoted where csv needs it (a name may hold a comma)
                import csv
                csv.writer(f, lineterminator="\n").writerows(
                    (i, repr(v)) for i, v in zip(ids.tolist(), values.tolist()))
            else:
                f.writelines(f"{i},{v!r}\n" for i, v in zip(ids.tolist(), values.tolist()))
    elif path.endswith(".parquet"):
        with atomic_file(path, "wb") as f:
            _write_parquet(f, path, ids, values)
    else:
        raise InvalidParameterError(f"--out {path!r}: use a .csv or .npy file name (or .parquet, with pyarrow)")


def _write_parquet(f, path, ids, values):
    """Columns ``vertex`` (int64, or string/other types pyarrow infers) and ``value`` into the open
    binary file ``f`` (``path`` names it in errors)."""
    from .errors import InvalidParameterError
    _check_pyarrow(path)
    import pyarrow as pa
    import pyarrow.parquet as pq
    try:
        vertex = pa.array(ids) if ids.dtype != object else pa.array(ids.tolist())
    except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
        raise InvalidParameterError(f"--out {path!r}: vertex ids of mixed types cannot be a parquet "
                                    f"column ({e}); use .csv") from None
    table = pa.table({"vertex": vertex, "value": pa.array(values)})
    pq.write_table(table, f)


def _run(args, out, progress):
    import digraph

    from .preprocess.cli import load_input

    _check_numbers(args)  # before any work, as the paths below
    params = {}
    seeds = None if args.seeds is None else _seeds(args.seeds)
    if args.alpha is not None:
        params["alpha"] = args.alpha
    if args.beta is not None:
        params["beta"] = args.beta
    _check_paths(args)  # before any work, not after the run
    stdin = args.input == "-"
    if stdin and _isatty(sys.stdin):
        progress.note("reading the graph from the terminal: type its lines, then Ctrl-D")
    progress.start(f"loading {'standard input' if stdin else args.input}")
    t0 = time.perf_counter()
    graph = load_input(args.input, args.format, args.num_vertices, args.header)
    t_load = time.perf_counter() - t0
    names = graph.vertex_ids.dtype == object
    progress.end(f"{graph.num_vertices:,} vertices, {graph.num_arcs:,} arcs"
                 + (", vertex names" if names else ""))
    if args.source is not None:
        params["source"] = _vertex(args.source, graph)
    if seeds is not None:
        params["seeds"] = [_vertex(s, graph) for s in seeds]
    what = args.algorithm + (f" (mode {args.mode})" if args.mode else "")
    progress.start(f"running {what}" + (", preprocessing paths first" if args.mode in ("path", "path-nopriority") else ""))
    try:
        # on a terminal, a run that goes on shows its rounds and error bound (digraph.progress)
        result = digraph.run(graph, args.algorithm, mode=args.mode, device=args.device,
                             threads=args.threads, max_iter=args.max_iter, tol=args.tol,
                             cache=args.cache, progress=progress.round_bar() or False, **params)
    except digraph.errors.ConvergenceError as e:
        st = e.result.stats
        why = (f"{args.algorithm} did not converge in {st['rounds']:,} rounds (max_iter "
               f"{e.result.params['max_iter']:,})")
        if "error_bound" in st:
            why += f": error bound {st['error_bound']:.3g} > tol {e.result.params['tol']:.3g}"
        if not args.allow_unconverged:
            raise digraph.errors.ConvergenceError(
                f"{why}; raise --max-iter or --tol, or pass --allow-unconverged to write the partial "
                "answer", e.result) from None
        progress.abort()
        print(f"digraph: warning: {why}; writing the partial answer (--allow-unconverged)",
              file=sys.stderr)
        result = e.result
    st = result.stats
    st["time_load"] = t_load  # the run itself was handed a loaded graph
    st["time_total"] = st.get("time_total", 0.0) + t_load
    detail = f"{st['rounds']:,} rounds, {st['arc_updates']:,} arc updates, mode {st['mode']}"
    if st.get("time_preprocess"):
        detail += f", preprocessing {st['time_preprocess']:.2f} s"
    progress.end(detail)
    # the files first: a closed standard output (``| head``) must not cost them
    if args.out:
        progress.start(f"writing {args.out}")
        _write_values(args.out, result)
        progress.end()
    if args.stats:
        from .atomic_file import atomic_file
        with atomic_file(args.stats, "w") as f:
            json.dump(dict(result.stats), f, indent=1, default=str)
    if args.quiet:
        out = _Null()
    from .preprocess.cli import escaped
    if args.top > 0:
        largest = result.algorithm != "sssp"
        print(f"{result.algorithm} on {graph}: top {args.top} "
              f"({'largest' if largest else 'smallest'} values)", file=out)
        for vid, val in result.top(args.top, largest=largest):
            print(f"  {escaped(str(vid)):>12}  {val:.10g}", file=out)  # ids read from a file
    keys = ("mode", "rounds", "vertex_updates", "arc_updates", "converged", "error_bound",
            "time_load", "time_preprocess", "time_compute")
    print("statistics", file=out)
    for k in keys:
        if k in result.stats:
            v = result.stats[k]
            text = f"{v * 1e3:.1f} ms" if k.startswith("time") else (f"{v:.3g}" if isinstance(v, float) else v)
            print(f"  {k:<16}{text}", file=out)


def _check_numbers(args):
    """Every number option of ``digraph run``, checked before any work: one line naming the
    option, the value and what it must be (never a traceback from deep inside the run).
    Whether ``--num-vertices`` fits in memory is the loader's to judge (:func:`digraph.load`)."""
    from .preprocess.cli import check_float_option, check_int_option
    check_float_option("--alpha", args.alpha, 0.0, 1.0)
    check_float_option("--beta", args.beta, 0.0, 1.0)
    check_float_option("--tol", args.tol, 0.0)
    check_int_option("--max-iter", args.max_iter, 1)
    check_int_option("--threads", args.threads, 1)
    check_int_option("--top", args.top, 0)
    check_int_option("--num-vertices", args.num_vertices, 0)  # its size against memory: the loader's


def _check_paths(args):
    """Every path the run will write, checked before it loads anything: none of them may be an
    input (the graph, a ``--seeds @FILE``) or another output."""
    from .atomic_file import check_output_path
    from .preprocess.cli import refuse_same_files
    seeds = args.seeds[1:] if args.seeds and args.seeds.startswith("@") else None
    graph = None if args.input == "-" else args.input  # standard input is no file to replace
    refuse_same_files([("the input graph", graph), ("the --seeds file", seeds)],
                      [("--out", args.out), ("--stats", args.stats), ("--cache", args.cache)])
    if args.out:
        _check_out(args.out)
    if args.stats:
        check_output_path(args.stats, "--stats")
    if args.cache:
        from .paths.cache_folder import check_writable
        check_writable(args.cache)


class _Null:
    """A stream that drops what is written (--quiet)."""

    def write(self, text):
        return len(text)

    def flush(self):
        pass


def _check_pyarrow(path):
    from .errors import InvalidParameterError
    try:
        import pyarrow  # noqa: F401
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        raise InvalidParameterError(
            f"--out {path!r}: writing .parquet needs pyarrow (pip install pyarrow, or the "
            "'parquet' extra); use .csv or .npy") from None


def _preprocess_with_progress(args, out, progress):
    """``digraph preprocess`` with its stages reported (from the cache's recorded timings)."""
    from .paths.pathset import PathSet
    from .preprocess import cli as pre

    progress.start(f"preprocessing {args.input} (load, decompose, merge, label, scc, dag, order)")
    pre._preprocess(args, _Null() if args.quiet else out)
    timings = PathSet.read_manifest(args.output).get("timings", {})
    progress.end(", ".join(f"{k} {v:.2f} s" for k, v in timings.items() if k != "total"))


def main(argv=None):
    """Entry point of the ``digraph`` console script; returns the exit status.

    Ctrl-C anywhere ends it with ``digraph: interrupted`` and status 130 (kernels are never
    interrupted mid-call: :mod:`digraph.interrupts`); one that comes once the command has finished
    is ignored.
    """
    from .interrupts import ignore_from_now
    try:
        return _main(argv)
    finally:
        ignore_from_now()


def _main(argv):
    from .interrupts import command_line_import
    with command_line_import():  # Ctrl-C while the command line's modules load: exit 130
        from .errors import DigraphError
        from .preprocess import cli as pre

        from . import compiling

    parser = build_parser()
    args = parser.parse_args(argv)  # argparse exits with 2 on a bad command line
    progress = _progress(args)
    # the first run's "compiling kernels" line goes where progress goes, and nowhere else
    old_sink = compiling.set_sink(progress.aside if progress.enabled and args.command != "warmup"
                                  else _drop)
    try:
        if args.command == "run":
            _run(args, sys.stdout, progress)
        elif args.command == "preprocess":
            _preprocess_with_progress(args, sys.stdout, progress)
        elif args.command == "warmup":
            _warmup(args, _Null() if args.quiet else sys.stdout)
        else:
            pre._info(args, sys.stdout)
        sys.stdout.flush()
    except KeyboardInterrupt:
        _quiet_stdout()  # nothing more goes to a reader we may be in the middle of
        return _stop(args, progress, "digraph: interrupted", 130)
    except BrokenPipeError:
        # the reader of standard output went away (``| head``): what we write to files is done
        progress.abort()
        _quiet_stdout()
        return 0
    except MemoryError as e:  # GraphTooLargeError names the size; a bare one says where it struck
        return _stop(args, progress, f"digraph: error: out of memory: {_first_line(e, 'no memory left')}", 2)
    except (DigraphError, OSError, ValueError, NotImplementedError) as e:
        line = _first_line(cli_spelling(e), type(e).__name__)
        return _stop(args, progress, f"digraph: error: {line}", 2)
    finally:
        compiling.set_sink(old_sink)
    return 0


def _drop(text):
    """A notice sink that prints nothing."""


#: the library's parameters that are options of the command line
_OPTIONS = {"mode": "--mode", "device": "--device", "threads": "--threads",
            "max_iter": "--max-iter", "tol": "--tol", "cache": "--cache", "source": "--source",
            "seeds": "--seeds", "alpha": "--alpha", "beta": "--beta",
            "num_vertices": "--num-vertices", "format": "--format", "header": "--header"}
_PARAM = re.compile(r"(?<![\w.-])(" + "|".join(_OPTIONS) + r")="
                    r"(?:'([^'\n]*)'|\"([^\"\n]*)\"|([^\s,;:()\[\]'\"]*))")
_REQUIRED = re.compile(r"\bparameter '(" + "|".join(_OPTIONS) + r")'")
#: phrases of the file readers' messages that name a parameter (after the file's name and line)
_READER_HINTS = (("or format='csv')", "or --format csv)"),
                 ("or format='mtx')", "or --format mtx)"),
                 ("pass format= one of", "pass --format, one of"),
                 ("given by num_vertices=", "given by --num-vertices "),
                 ("(num_vertices=", "(--num-vertices "))


def cli_spelling(error):
    """The message of a library error as the command line's options spell it.

    The library names its parameters in Python (``mode='peel'``, ``cache=``, ``parameter
    'source' is required``); from the command line they read ``--mode peel``, ``--cache``,
    ``--source is required``.  Parameter errors (InvalidParameterError, NotAvailableError) are
    translated whole; a file reader's error only in the phrases it appends after the file's name
    and line (the quoted text of a line is left as it is); any other error is unchanged.

    Parameters
    ----------
    error : BaseException

    Returns
    -------
    str
    """
    from .errors import GraphFormatError, InvalidParameterError, NotAvailableError
    text = str(error)
    if isinstance(error, GraphFormatError):
        for python, option in _READER_HINTS:
            at = text.find(python) if python.startswith("given") else text.rfind(python)
            if at >= 0:
                text = text[:at] + option + text[at + len(python):]
        return text
    if not isinstance(error, (InvalidParameterError, NotAvailableError)):
        return text

    def option(m):
        name = _OPTIONS[m.group(1)]
        value = next((v for v in m.group(2, 3, 4) if v is not None), "")
        if value == "None":
            return f"no {name}"
        return f"{name} {value}" if value else name
    text = _PARAM.sub(option, text)
    return _REQUIRED.sub(lambda m: _OPTIONS[m.group(1)], text)


def _warmup(args, out):
    """``digraph warmup``: :func:`digraph.warmup`, one line per item and the total."""
    import digraph

    def line(what, secs, compiled):
        how = f"compiled {compiled:.2f} s" if compiled >= 0.005 else "from the cache"
        print(f"  {what:<28}{secs:7.2f} s  ({how})", file=out, flush=True)

    from .dispatch.engines.warmup import idle_modes

    print(f"digraph warmup: compiling the kernels ({args.device})", file=out, flush=True)
    t0 = time.perf_counter()
    done = digraph.warmup(args.mode, args.family, device=args.device,
                          index_dtypes=("int32", "int64") if args.int64 else ("int32",),
                          progress=line)
    total = time.perf_counter() - t0
    # a mode that compiles nothing here is said so, with where it runs (exit status 0)
    families = f" --family {' --family '.join(args.family)}" if args.family else ""
    device = "the CPU" if args.device.strip().lower() == "cpu" else args.device
    for mode, where in idle_modes(args.mode, args.family, device=args.device):
        print(f"  --mode {mode}{families}: nothing to compile on {device}; {mode} runs {where}",
              file=out)
    compiled = sum(d["compiled"] for d in done)
    print(f"done: {len(done)} items in {total:.2f} s, {compiled:.2f} s of it compiling", file=out)


def _stop(args, progress, line, status):
    """End a command that failed or was interrupted: one ``line`` on stderr and ``status`` (or,
    with ``--debug``, the exception being handled re-raised with its traceback)."""
    progress.abort()
    if getattr(args, "debug", False):
        raise  # noqa: PLE0704 - called from an except block: re-raises the exception handled there
    print(line, file=sys.stderr)
    return status


def _first_line(e, default):
    """The first line of an error's message, :func:`~digraph.preprocess.cli.escaped` (it may
    quote a file's content or name)."""
    from .preprocess.cli import escaped
    return escaped(str(e).splitlines()[0]) if str(e) else default


def _quiet_stdout():
    """Point standard output at /dev/null, so that the interpreter's final flush of a closed pipe
    prints no second error."""
    import os
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
