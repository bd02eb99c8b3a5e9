"""The ``digraph run`` sub-command of the command line (:mod:`digraph.cli`): its options read and
checked before any work (:func:`_check_numbers`, :func:`_check_paths`, ``--source`` and
``--seeds``), the run itself with its progress and printed results (:func:`_run`), and every
vertex's value written to ``--out`` (.csv, .npy or .parquet: :func:`_write_values`)."""

import json
import sys
import time

from .cli_progress import stream_isatty


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
        raise InvalidParameterError(f"--out {path!r}: use a .csv or .npy file name "
                                    "(or .parquet, with pyarrow)")
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
        raise InvalidParameterError(f"--out {path!r}: use a .csv or .npy file name "
                                    "(or .parquet, with pyarrow)")


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
        raise InvalidParameterError(f"--out {path!r}: vertex ids of mixed types cannot be a "
                                    f"parquet column ({e}); use .csv") from None
    table = pa.table({"vertex": vertex, "value": pa.array(values)})
    pq.write_table(table, f)


def run_command(args, out, progress):
    """``digraph run``: the options checked, then the run (on the cluster at ``--scheduler``,
    when given: :mod:`digraph.cli_cluster`)."""
    _check_numbers(args)  # before any work, as the paths below
    _check_paths(args)  # before any work, not after the run
    if args.columns is not None and not args.scheduler:
        from .errors import InvalidParameterError
        raise InvalidParameterError("--columns names the columns the workers read: it goes "
                                    "with --scheduler")
    if not args.scheduler:
        return _run(args, out, progress, None)
    from .cli_cluster import close, connect
    progress.start(f"connecting to the Dask scheduler at {args.scheduler}")
    client = connect(args.scheduler)
    progress.end(f"{len(client.nthreads())} workers")
    try:
        return _run(args, out, progress, client)
    finally:
        close(client)  # the shards the command loaded on the workers released


def _run(args, out, progress, client):
    import digraph

    from .preprocess.cli import load_input

    params = {}
    seeds = None if args.seeds is None else _seeds(args.seeds)
    if args.alpha is not None:
        params["alpha"] = args.alpha
    if args.beta is not None:
        params["beta"] = args.beta
    stdin = args.input == "-"
    if stdin and stream_isatty(sys.stdin):
        progress.note("reading the graph from the terminal: type its lines, then Ctrl-D")
    progress.start(f"loading {'standard input' if stdin else args.input}")
    from .compiling import seconds as compile_seconds
    c0, t0 = compile_seconds(), time.perf_counter()
    from . import cli_cluster
    on_workers = client is not None and cli_cluster.read_by_workers(args.input, args.format)
    if on_workers:  # read by the workers, never by this process
        graph = cli_cluster.load(args, client)
    else:
        graph = load_input(args.input, args.format, args.num_vertices, args.header)
    c_load = compile_seconds() - c0  # the reader's kernels, on a fresh install
    t_load = time.perf_counter() - t0
    names = not on_workers and graph.vertex_ids.dtype == object
    progress.end(f"{graph.num_vertices:,} vertices, {graph.num_arcs:,} arcs"
                 + (", vertex names" if names else ""))
    if args.source is not None:
        params["source"] = _vertex(args.source, graph)
    if seeds is not None:
        params["seeds"] = [_vertex(s, graph) for s in seeds]
    what = args.algorithm + (f" (mode {args.mode})" if args.mode else "")
    progress.start(f"running {what}"
                   + (", preprocessing paths first" if args.mode in ("path", "path-nopriority")
                      else ""))
    try:
        # on a terminal, a run that goes on shows its rounds and error bound (digraph.progress)
        result = digraph.run(graph, args.algorithm, mode=args.mode, device=args.device,
                             threads=args.threads, max_iter=args.max_iter, tol=args.tol,
                             cache=args.cache, progress=progress.round_bar() or False,
                             cluster=client, **params)
    except digraph.errors.ConvergenceError as e:
        st = e.result.stats
        why = (f"{args.algorithm} did not converge in {st['rounds']:,} rounds (max_iter "
               f"{e.result.params['max_iter']:,})")
        if "error_bound" in st:
            why += f": error bound {st['error_bound']:.3g} > tol {e.result.params['tol']:.3g}"
        if not args.allow_unconverged:
            raise digraph.errors.ConvergenceError(
                f"{why}; raise --max-iter or --tol, or pass --allow-unconverged to write the "
                "partial answer", e.result) from None
        progress.abort()
        print(f"digraph: warning: {why}; writing the partial answer (--allow-unconverged)",
              file=sys.stderr)
        result = e.result
    st = result.stats
    # the run itself was handed a loaded graph: the load joins its times, the reader's
    # compilation in time_compile as the run's own is
    st["time_load"] = t_load - c_load
    st["time_compile"] = st.get("time_compile", 0.0) + c_load
    st["time_total"] = st.get("time_total", 0.0) + t_load
    detail = f"{st['rounds']:,} rounds, {st['arc_updates']:,} arc updates, mode {st['mode']}"
    if st.get("time_preprocess"):
        detail += f", preprocessing {st['time_preprocess']:.2f} s"
    progress.end(detail)
    # the files first: a closed standard output (``| head``) must not cost them
    if args.out:
        progress.start(f"writing {args.out}")
        if on_workers and args.out.endswith(".parquet"):  # a dataset, by the workers
            cli_cluster.write_dataset(args.out, result)
        else:
            _write_values(args.out, result)
        progress.end()
    if args.stats:
        from .atomic_file import atomic_file
        with atomic_file(args.stats, "w") as f:
            json.dump(dict(result.stats), f, indent=1, default=str)
    if args.quiet:
        out = Null()
    from .preprocess.cli import escaped
    if args.top > 0:
        largest = result.algorithm != "sssp"
        print(f"{result.algorithm} on {graph}: top {args.top} "
              f"({'largest' if largest else 'smallest'} values)", file=out)
        for vid, val in result.top(args.top, largest=largest):
            print(f"  {escaped(str(vid)):>12}  {val:.10g}", file=out)  # ids read from a file
    keys = ("mode", "rounds", "vertex_updates", "arc_updates", "converged", "error_bound",
            "time_load", "time_preprocess", "time_compile", "time_compute", "time_total")
    print("statistics", file=out)
    for k in keys:
        if k in result.stats:
            v = result.stats[k]
            text = (f"{v * 1e3:.1f} ms" if k.startswith("time")
                    else (f"{v:.3g}" if isinstance(v, float) else v))
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
    # its size against memory: the loader's
    check_int_option("--num-vertices", args.num_vertices, 0)


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


class Null:
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
