"""The ``digraph`` command line: ``run``, ``preprocess`` and ``info``.

::

    digraph run pagerank web.txt.gz --alpha 0.85 --tol 1e-8 --top 10 --out ranks.csv
    digraph run sssp roads.mtx --source 17 --stats stats.json
    digraph run adsorption graph.el --seeds 3,7,12 --mode vertex-async
    digraph preprocess web.txt.gz -o web.paths --jobs 2
    digraph info web.paths

Every error prints one line ``digraph: error: ...`` on stderr and exits with status 2 (``--debug``
shows the traceback instead).
"""

import json
import sys

__all__ = ["main", "build_parser"]

EXAMPLES = """examples:
  digraph run pagerank web.txt.gz --tol 1e-8 --top 10 --out ranks.csv
  digraph run sssp graph.el --source 17 --stats stats.json
  digraph run adsorption graph.el --seeds 3,7,12
  digraph run kcore graph.mtx --out cores.npy
  digraph preprocess web.txt.gz -o web.paths
  digraph info web.paths"""


def build_parser():
    """The argparse parser of every subcommand."""
    import argparse

    from .preprocess.cli import build_parser as preprocess_parser
    from .run import MODES

    p = preprocess_parser()
    p.description = "digraph: iterative analytics on directed graphs (DiGraph re-created)."
    p.epilog = EXAMPLES
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
    r = sub.add_parser("run", help="run an algorithm and print the top vertices and statistics",
                       epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    r.add_argument("algorithm", help="pagerank, adsorption, sssp or kcore")
    r.add_argument("input", help="graph file (edge list .txt/.el/.tsv/.csv[.gz], Matrix Market .mtx)")
    r.add_argument("--source", help="source vertex id (sssp)")
    r.add_argument("--seeds", help="seed vertex ids (adsorption): comma-separated, or @FILE with one per line")
    r.add_argument("--alpha", type=float, help="PageRank damping (default 0.85)")
    r.add_argument("--beta", type=float, help="adsorption continuation probability (default 0.8)")
    r.add_argument("--tol", type=float, help="bound on the L1 error (pagerank, adsorption; default 1e-6)")
    r.add_argument("--max-iter", type=int, help="round limit")
    r.add_argument("--mode", choices=MODES, help="execution mode (default: the fastest for the algorithm)")
    r.add_argument("--device", default="cpu", help="cpu (default) or cuda[:N]")
    r.add_argument("--threads", type=int, help="CPU threads")
    r.add_argument("--cache", help="path modes: preprocessing cache folder (reused or built)")
    r.add_argument("--num-vertices", type=int, help="keep vertices 0..N-1 (isolated ones included)")
    r.add_argument("--top", type=int, default=10, help="vertices to print (default %(default)s; 0: none)")
    r.add_argument("--out", help="write every vertex's value: .csv (vertex,value) or .npy")
    r.add_argument("--stats", help="write the run statistics as JSON")
    r.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def _vertex(text):
    """A vertex id from the command line: an int when it looks like one."""
    text = text.strip()
    try:
        return int(text)
    except ValueError:
        return text


def _seeds(spec):
    if spec.startswith("@"):
        with open(spec[1:], encoding="utf-8") as f:
            items = [ln for ln in (line.strip() for line in f) if ln and not ln.startswith("#")]
    else:
        items = [s for s in spec.split(",") if s.strip()]
    return [_vertex(s) for s in items]


def _write_values(path, result):
    import numpy as np

    from .errors import InvalidParameterError
    ids, values = result.vertex_ids, result.values
    if path.endswith(".npy"):
        if ids.dtype == object:
            raise InvalidParameterError("--out .npy needs integer vertex ids; use .csv")
        np.save(path, np.rec.fromarrays([ids, values], names="vertex,value"))
    elif path.endswith(".csv"):
        with open(path, "w", encoding="utf-8") as f:
            f.write("vertex,value\n")
            f.writelines(f"{i},{v!r}\n" for i, v in zip(ids.tolist(), values.tolist()))
    else:
        raise InvalidParameterError(f"--out {path!r}: use a .csv or .npy file name")


def _run(args, out):
    import digraph

    params = {}
    if args.source is not None:
        params["source"] = _vertex(args.source)
    if args.seeds is not None:
        params["seeds"] = _seeds(args.seeds)
    if args.alpha is not None:
        params["alpha"] = args.alpha
    if args.beta is not None:
        params["beta"] = args.beta
    load_kw = {} if args.num_vertices is None else {"num_vertices": args.num_vertices}
    graph = digraph.load(args.input, **load_kw)
    result = digraph.run(graph, args.algorithm, mode=args.mode, device=args.device,
                         threads=args.threads, max_iter=args.max_iter, tol=args.tol,
                         cache=args.cache, **params)
    if args.top > 0:
        largest = result.algorithm != "sssp"
        print(f"{result.algorithm} on {graph}: top {args.top} "
              f"({'largest' if largest else 'smallest'} values)", file=out)
        for vid, val in result.top(args.top, largest=largest):
            print(f"  {vid!s:>12}  {val:.10g}", file=out)
    keys = ("mode", "rounds", "vertex_updates", "arc_updates", "converged", "error_bound",
            "time_load", "time_preprocess", "time_compute")
    print("statistics", file=out)
    for k in keys:
        if k in result.stats:
            v = result.stats[k]
            text = f"{v * 1e3:.1f} ms" if k.startswith("time") else (f"{v:.3g}" if isinstance(v, float) else v)
            print(f"  {k:<16}{text}", file=out)
    if args.out:
        _write_values(args.out, result)
    if args.stats:
        with open(args.stats, "w", encoding="utf-8") as f:
            json.dump(dict(result.stats), f, indent=1, default=str)


def main(argv=None):
    """Entry point of the ``digraph`` console script; returns the exit status."""
    from .errors import DigraphError
    from .preprocess import cli as pre

    parser = build_parser()
    args = parser.parse_args(argv)  # argparse exits with 2 on a bad command line
    try:
        if args.command == "run":
            _run(args, sys.stdout)
        elif args.command == "preprocess":
            pre._preprocess(args, sys.stdout)
        else:
            pre._info(args, sys.stdout)
    except (DigraphError, OSError, ValueError, NotImplementedError) as e:
        if getattr(args, "debug", False):
            raise
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        print(f"digraph: error: {msg}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
