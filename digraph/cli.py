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
a cache path is written only where that loses nothing (:mod:`digraph.paths.cache_folder`).  Progress
(stage names and elapsed seconds, rounds at the end) goes to stderr when it is a terminal, or always
with ``--progress``; never with ``--quiet``.  On a terminal, a run that goes on for over a second
shows a bar of its rounds and error bound instead (:class:`digraph.progress.RoundBar`).

This module parses the command line, dispatches each sub-command and turns its errors into one
line and a status; the work is in :mod:`digraph.cli_run` (``digraph run`` and its ``--out``
files), :mod:`digraph.cli_progress` (the progress display) and :mod:`digraph.cli_errors` (the
command line's spelling of errors).
"""

import sys
import time

from .interrupts import command_line_import

with command_line_import():  # Ctrl-C while the console script imports this module: exit 130
    from .cli_errors import first_line, cli_spelling
    from .cli_progress import BAR_DELAY, Progress, add_progress_options, stream_isatty
    from .cli_run import Null, run_command

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
  digraph run pagerank 'arcs/*.parquet' --scheduler tcp://10.0.0.5:8786 --out ranks.parquet
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
    r.add_argument("--tol", type=float,
                   help="bound on the L1 error (pagerank, adsorption; default 1e-6)")
    r.add_argument("--max-iter", type=int, help="round limit")
    r.add_argument("--mode", choices=MODES,
                   help="execution mode (default: the fastest for the algorithm)")
    r.add_argument("--device", default="cpu",
                   help="cpu (default), cuda or cuda:N (one GPU), cuda:0,1,... (several GPUs); "
                        "with --scheduler, cuda runs the power iteration on each worker's GPU")
    r.add_argument("--threads", type=int, help="the most CPU threads (fewer on small graphs, "
                   "one core left free on many; the stats say how many ran)")
    r.add_argument("--cache", help="path modes: preprocessing cache folder (reused or built)")
    r.add_argument("--num-vertices", type=int, help="keep vertices 0..N-1 (isolated ones included)")
    r.add_argument("--top", type=int, default=10,
                   help="vertices to print (default %(default)s; 0: none)")
    r.add_argument("--out",
                   help="write every vertex's value: .csv (vertex,value), .npy, or .parquet "
                        "(needs pyarrow)")
    r.add_argument("--stats", help="write the run statistics as JSON")
    r.add_argument("--scheduler", metavar="ADDRESS",
                   help="run on the workers of the Dask cluster whose scheduler is at ADDRESS "
                        "(tcp://host:8786; pagerank, needs the 'cluster' extra); an INPUT that "
                        "is a folder, a glob or a .parquet file is read by the workers, and "
                        "--out NAME.parquet is then a folder of one file a worker")
    r.add_argument("--columns", metavar="SRC,DST[,WEIGHT]",
                   help="with --scheduler, for an INPUT read by the workers: its source, target "
                        "and optional weight columns (default src,dst)")
    r.add_argument("--allow-unconverged", action="store_true",
                   help="when max_iter rounds do not reach tol, write the partial answer with a "
                        "warning (exit 0) instead of failing")
    r.add_argument("--debug", action="store_true", help="show tracebacks")
    for parser in (r, sub.choices["preprocess"]):
        add_progress_options(parser)
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
    w.add_argument("--jobs", type=int, default=None,
                   help="worker processes compiling at once (default: every core; 1: this "
                        "process only)")
    w.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    w.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def _progress(args):
    """The Progress of a command line: on a terminal, or with --progress; never with --quiet.

    Its round bar waits this module's :data:`BAR_DELAY` (read here, when the command starts, so
    that ``digraph.cli.BAR_DELAY`` stays the command line's setting: tests set it to 0)."""
    if getattr(args, "quiet", False):
        return Progress(sys.stderr, False)
    return Progress(sys.stderr, getattr(args, "progress", False) or stream_isatty(sys.stderr),
                    bar_delay=BAR_DELAY)


def _preprocess_with_progress(args, out, progress):
    """``digraph preprocess`` with its stages reported (from the cache's recorded timings)."""
    from .paths.pathset import PathSet
    from .preprocess import cli as pre

    progress.start(f"preprocessing {args.input} (load, decompose, merge, label, scc, dag, order)")
    pre._preprocess(args, Null() if args.quiet else out)
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
            run_command(args, sys.stdout, progress)
        elif args.command == "preprocess":
            _preprocess_with_progress(args, sys.stdout, progress)
        elif args.command == "warmup":
            _warmup(args, Null() if args.quiet else sys.stdout)
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
        return _stop(args, progress,
                     f"digraph: error: out of memory: {first_line(e, 'no memory left')}", 2)
    except (DigraphError, OSError, ValueError, NotImplementedError) as e:
        line = first_line(cli_spelling(e), type(e).__name__)
        return _stop(args, progress, f"digraph: error: {line}", 2)
    finally:
        compiling.set_sink(old_sink)
    return 0


def _drop(text):
    """A notice sink that prints nothing."""


def _warmup(args, out):
    """``digraph warmup``: :func:`digraph.warmup`, one line per item and the total."""
    import digraph

    def line(what, secs, compiled):
        how = f"compiled {compiled:.2f} s" if compiled >= 0.005 else "from the cache"
        print(f"  {what:<28}{secs:7.2f} s  ({how})", file=out, flush=True)

    from .dispatch.engines.warmup import idle_modes
    from .preprocess.cli import check_int_option

    check_int_option("--jobs", args.jobs, 1, also=-1)
    print(f"digraph warmup: compiling the kernels ({args.device})", file=out, flush=True)
    t0 = time.perf_counter()
    done = digraph.warmup(args.mode, args.family, device=args.device,
                          index_dtypes=("int32", "int64") if args.int64 else ("int32",),
                          progress=line, jobs=args.jobs)
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
