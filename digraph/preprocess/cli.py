"""Command line of the preprocessing stage: ``digraph preprocess`` and ``digraph info``.

::

    digraph preprocess INPUT -o CACHE [--format F] [--jobs N] [--dmax 16]
                       [--merge constrained|trails|none] [--max-path-length 16]
                       [--hot-ratio 0.1] [--partition-arcs 4096] [--num-vertices N] [--json]
    digraph info CACHE [--json]

``preprocess`` reads INPUT with :func:`digraph.load` (``-``: standard input, :func:`load_input`),
builds the paths and writes the cache folder atomically; ``info`` prints the statistics of a
cache as a table (or JSON).  Errors print one line ``digraph: error: ...`` on stderr and exit
with status 2.
"""

import argparse
import json
import math
import os
import sys

__all__ = ["main", "build_parser"]


def build_parser():
    from . import DEFAULTS

    p = argparse.ArgumentParser(prog="digraph",
                                description="Path preprocessing of directed graphs (DiGraph).")
    sub = p.add_subparsers(dest="command", required=True)

    pp = sub.add_parser("preprocess", help="decompose a graph into paths and write a cache folder")
    add_input_arguments(pp)
    pp.add_argument("-o", "--output", required=True,
                    help="cache folder to write: new, empty, or a cache to replace "
                    "(atomically; any other folder or file is refused)")
    pp.add_argument("--jobs", type=int, default=None, help="worker threads (default: every core)")
    pp.add_argument("--dmax", type=int, default=DEFAULTS["dmax"],
                    help="depth bound D_MAX (default %(default)s)")
    pp.add_argument("--merge", choices=["constrained", "trails", "none"], default=DEFAULTS["merge"],
                    help="head-to-tail merging (default %(default)s)")
    pp.add_argument("--max-path-length", type=int, default=DEFAULTS["max_path_length"],
                    help="cap on merged path arcs, 0 = none (default %(default)s)")
    pp.add_argument("--hot-ratio", type=float, default=DEFAULTS["hot_ratio"],
                    help="share of paths labelled hot (default %(default)s)")
    pp.add_argument("--partition-arcs", type=int, default=DEFAULTS["partition_arcs"],
                    help="arc budget of a partition (default %(default)s)")
    pp.add_argument("--num-vertices", type=int, default=None,
                    help="keep vertices 0..N-1 (isolated ones included)")
    pp.add_argument("--json", action="store_true", help="print the statistics as JSON")

    pi = sub.add_parser("info", help="print the statistics of a cache folder")
    pi.add_argument("cache", help="cache folder written by 'digraph preprocess'")
    pi.add_argument("--json", action="store_true", help="print JSON instead of a table")
    return p


INPUT_HELP = (
    "the graph: an edge list -- .el, .txt or .edges (fields separated by blanks), .tsv (blanks, "
    "an optional header line) or .csv (commas, an optional header line), one arc 'src dst "
    "[weight]' a line, integer vertex ids or names -- or a Matrix Market file (.mtx); each "
    "optionally gzip-compressed (.gz: .txt.gz, .csv.gz, .mtx.gz, ...). '-' reads standard input "
    "(an edge list unless --format says otherwise; gzip is recognised by its first bytes)")


def add_input_arguments(parser):
    """The graph a command reads: ``input`` (a file, or ``-`` for standard input) and
    ``--format`` (the formats :func:`digraph.load` accepts)."""
    from ..io._files import FORMATS

    parser.add_argument("input", help=INPUT_HELP)
    parser.add_argument("--format", choices=FORMATS,
                        help="read INPUT as this format whatever its name: edgelist (.el .txt "
                             ".edges), tsv, csv or mtx, gzip-compressed or not (needed for a "
                             "file name without one of those extensions)")
    parser.add_argument("--header", choices=("auto", "yes", "no"), default="auto",
                        help="edge lists: is the first data line a header? auto (default): in a "
                             ".csv or .tsv file when every field is a name, never in .el .txt "
                             ".edges; yes: skip it whatever it holds; no: it is an arc (a csv of "
                             "vertex names without a header line)")


def load_input(path, fmt=None, num_vertices=None, header="auto"):
    """:func:`digraph.load` of a command's INPUT: ``-`` is standard input, read as an edge list
    unless ``fmt`` says otherwise (only the command line maps ``-`` to it); ``header`` is
    ``--header`` (auto, yes, no).

    Raises
    ------
    InvalidParameterError
        ``-`` when the process has no standard input.
    """
    import digraph
    from ..errors import InvalidParameterError
    from ..io._files import InputStream

    kwargs = {} if num_vertices is None else {"num_vertices": num_vertices}
    if header != "auto":
        kwargs["header"] = header == "yes"
    if path != "-":
        return digraph.load(path, format=fmt, **kwargs)
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        raise InvalidParameterError("INPUT '-' reads standard input, and this process has none")
    return digraph.load(InputStream(stream), format=fmt or "edgelist", name="stdin", **kwargs)


def escaped(text):
    """``text`` safe to print on a terminal: every character that is not printable (control
    characters such as ESC, line breaks, format characters such as bidirectional overrides,
    unassigned code points) written as Python writes it in a string literal (``\\x1b``,
    ``\\n``, ``\\u202e``); letters of every script, digits, punctuation and spaces stay as they
    are.  For strings read from untrusted files (a cache's ``manifest.json``), whose escape
    sequences would otherwise clear the screen, set the window title or fake output."""
    text = str(text)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _fmt(v):
    if isinstance(v, float):
        return f"{v:.4g}" if abs(v) < 1e6 else f"{v:.4e}"
    return escaped(v)


def format_table(stats, params=None):
    """Two-column text table of a stats dict (parameters first); keys and values are
    :func:`escaped`, times (``time_*`` keys, in seconds) shown with their unit."""
    rows = []
    if params:
        rows += [(f"param {escaped(k)}", _fmt(v)) for k, v in params.items()]
    from ..result import flat_items
    rows += [(escaped(k), _fmt(v) + (" s" if k.rsplit(".", 1)[-1].startswith("time_")
                                      and isinstance(v, (int, float)) else ""))
             for k, v in flat_items(stats)]
    w = max((len(k) for k, _ in rows), default=0)
    return "\n".join(f"{k:<{w}}  {v}" for k, v in rows)


INT64_MAX = 2**63 - 1
"""The largest value of an integer option (the kernels hold counts in int64)."""


def check_int_option(flag, value, lo, also=None):
    """Refuse an integer option outside ``[lo, 2**63 - 1]`` (``also``: one more value allowed,
    such as ``-1`` for every core): :class:`~digraph.errors.InvalidParameterError` naming the
    option and the value.  None (not given) passes."""
    from ..errors import InvalidParameterError, short_repr
    if value is None or lo <= value <= INT64_MAX or (also is not None and value == also):
        return
    extra = "" if also is None else f", or {also}"
    raise InvalidParameterError(
        f"{flag} must be an integer from {lo} to 2**63 - 1{extra}, got {short_repr(value)}")


def check_float_option(flag, value, lo, hi=None, closed=False):
    """Refuse a number option that is NaN, infinite or outside ``(lo, hi)`` (``[lo, hi]`` when
    ``closed``; no upper end when ``hi`` is None), naming the option and the value.  None (not
    given) passes."""
    from ..errors import InvalidParameterError, short_repr
    if value is None:
        return
    above = value >= lo if closed else value > lo
    below = hi is None or (value <= hi if closed else value < hi)
    if math.isfinite(value) and above and below:
        return
    if hi is None:
        expected = "a positive finite number"
    else:
        expected = f"a number in {'[' if closed else '('}{lo:g}, {hi:g}{']' if closed else ')'}"
    raise InvalidParameterError(f"{flag} must be {expected}, got {short_repr(value)}")


def same_file(a, b):
    """Whether the paths ``a`` and ``b`` name one file: :func:`os.path.samefile` when both
    exist, else the same absolute path with every symbolic link resolved."""
    try:
        if os.path.exists(a) and os.path.exists(b):
            return os.path.samefile(a, b)
    except OSError:
        pass
    return os.path.normcase(os.path.realpath(a)) == os.path.normcase(os.path.realpath(b))


def refuse_same_files(inputs, outputs):
    """Refuse, before any work, an output that is an input or another output.

    Parameters
    ----------
    inputs, outputs : list of (str, path or None)
        What each path is (``"the input graph"``, ``"--out"``) and the path; None is skipped.

    Raises
    ------
    InvalidParameterError
        One line naming both and the path: writing the output would replace the input, or one
        output the other.
    """
    from ..errors import InvalidParameterError
    outputs = [(w, p) for w, p in outputs if p]
    for i, (what, path) in enumerate(outputs):
        for name, other in inputs:
            if other and same_file(path, other):
                raise InvalidParameterError(
                    f"{what} {str(path)!r} is {name} {str(other)!r}: writing it would "
                    "replace the input; choose another path")
        for what2, path2 in outputs[i + 1:]:
            if same_file(path, path2):
                raise InvalidParameterError(
                    f"{what} {str(path)!r} and {what2} {str(path2)!r} name the same "
                    "file: one would replace the other; give each its own path")


def _check_options(args):
    """The numbers and paths of ``digraph preprocess``, checked before any work."""
    check_int_option("--jobs", args.jobs, 1, also=-1)
    check_int_option("--dmax", args.dmax, 1)
    check_int_option("--max-path-length", args.max_path_length, 0)
    check_float_option("--hot-ratio", args.hot_ratio, 0.0, 1.0, closed=True)
    check_int_option("--partition-arcs", args.partition_arcs, 1)
    # its size against memory: the loader's
    check_int_option("--num-vertices", args.num_vertices, 0)
    refuse_same_files([("the input graph", None if args.input == "-" else args.input)],
                      [("--output", args.output)])


def _preprocess(args, out):
    from . import preprocess

    from ..paths.cache_folder import check_writable

    _check_options(args)
    check_writable(args.output)  # before the work, not after it
    graph = load_input(args.input, args.format, args.num_vertices, args.header)
    ps = preprocess(graph, dmax=args.dmax, merge=args.merge,
                    max_path_length=args.max_path_length or None,
                    hot_ratio=args.hot_ratio, jobs=args.jobs, partition_arcs=args.partition_arcs)
    ps.save(args.output)
    stats = ps.stats()
    if args.json:
        print(json.dumps({"cache": str(args.output), "params": ps.params, "stats": stats},
                         indent=1), file=out)
    else:
        print(f"wrote {escaped(args.output)}", file=out)
        print(format_table(stats, ps.params), file=out)


def _info(args, out):
    from ..paths.pathset import PathSet

    man = PathSet.read_manifest(args.cache)
    if args.json:
        # safe as it is: json.dumps (ensure_ascii) escapes every character outside ' '..'~'
        print(json.dumps(man | {"arrays": man.get("arrays", {})}, indent=1), file=out)
        return
    from .errors import CacheError

    stats, params = man.get("stats", {}), man.get("params", {})
    for name, block in (("stats", stats), ("params", params)):
        if not isinstance(block, dict) or not all(
                isinstance(v, (int, float, str, bool, type(None))) for v in block.values()):
            raise CacheError(f"{args.cache}/manifest.json: its {name!r} block is not a table of "
                             "numbers and names (damaged or not written by digraph); rebuild the "
                             "cache with 'digraph preprocess'")
    head = {"cache": args.cache, "format_version": man.get("format_version"),
            "engine_version": man.get("engine_version"),
            "graph_fingerprint": man.get("graph_fingerprint")}
    print(format_table(head), file=out)
    print(format_table(stats, params), file=out)
