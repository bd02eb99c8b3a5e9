"""digraph: path-based iterative analytics on large directed graphs.

A re-creation of DiGraph (Zhang et al., ASPLOS 2019): graphs are split into hot and cold paths,
ordered by a DAG sketch of their dependencies, and processed path by path on CPU cores (default)
or NVIDIA GPUs.

Quick start::

    import digraph
    g = digraph.load("web.txt.gz")
    r = digraph.run(g, "pagerank", alpha=0.85, tol=1e-8)
    print(r.top(10), r.stats)
"""

from . import interrupts

with interrupts.command_line_import():  # Ctrl-C while `digraph ...` starts: exit 130, no traceback
    from . import compiling

    compiling.ensure_cache_location()  # before any kernel is defined: Numba needs a writable cache

    from . import algorithms, bfs, components, errors, traversal
    from .algorithms import Algorithm
    from .graph import Graph
    from .io import load
    from .io.distributed import DistributedGraph, load_distributed
    from .io.distributed_write import write_parquet
    from .paths import PathSet
    # the function; the package stays importable as digraph.preprocess.*
    from .preprocess import preprocess
    from .result import Result, RunStats
    from .dispatch.engines.warmup import warmup
    from .run import run

from .version import __version__  # noqa: E402

__all__ = ["Graph", "load", "load_distributed", "DistributedGraph", "write_parquet", "run",
           "preprocess", "PathSet", "Result", "RunStats", "Algorithm", "algorithms",
           "bfs", "components", "errors", "traversal", "warmup", "__version__"]

compiling.seconds()  # count Numba's compilation, and say so on a fresh install, from the start
