"""digraph on the CPU: each algorithm's default and named modes against its peers.

For every graph and algorithm: ``digraph.run`` with ``mode=None`` (the router's choice, named in
the row's ``ran`` and ``route``) and each named mode, then the peers, each with its own sound
stop (:mod:`peers`): PageRank against a scipy power iteration and igraph's PRPACK, SSSP against
scipy's Dijkstra (BFS when unweighted), k-core against igraph's coreness and networkx's
core_number (graphs without parallel arcs). A peer whose package is missing is skipped with a
message. Every answer is verified (:mod:`harness`); rows go to ``--out``.

    NUMBA_NUM_THREADS=2 taskset -c 0,1 python benchmarks/bench_cpu.py \\
        --graphs wiki-Vote cit-HepPh dblp-2010 cnr-2000 rmat20 --algorithms pagerank kcore \\
        --repeat 7 --out benchmarks/results/cpu2_quiet.json

``--classes web social ...`` (or ``--classes all``) measures the graphs of those classes of the
corpus (:data:`corpus.CLASSES`) instead of ``--graphs``; ``docs/benchmarks.md`` shows such a file
as one row per graph and algorithm: the default against the best named mode and the best peer.

Pin the process to as many cores as ``NUMBA_NUM_THREADS`` (``taskset``), and compare only rows of
one file: the peers run on one thread.
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus  # noqa: E402
import harness  # noqa: E402
import peers  # noqa: E402

MODES = {"pagerank": ["default", "scc", "power", "bsp"],
         "adsorption": ["default", "scc", "bsp"],
         "sssp": ["default", "vertex-async", "bsp"],
         "kcore": ["default", "peel", "vertex-async"]}
"""The modes timed per algorithm unless ``--modes`` is given."""
PEERS = {"pagerank": ["scipy-power", "igraph-prpack"], "adsorption": [],
         "sssp": ["scipy-dijkstra"], "kcore": ["igraph-coreness", "networkx-core"]}
"""The peers timed per algorithm unless ``--peers`` is given."""


def cases(graphs, algorithms, modes=None, peer_names=None, threads=None, tol=1e-8, params=None,
          first_run=False):
    """The list of :class:`harness.Case` this script runs (see the module docstring).

    Parameters
    ----------
    graphs, algorithms : list of str
    modes : list of str, optional
        Named modes (``"default"`` for the router) instead of :data:`MODES`.
    peer_names : list of str, optional
        Peers instead of :data:`PEERS` (those that answer another algorithm are left out).
    threads : int, optional
    tol : float
    params : dict, optional
    first_run : bool
        Add the default on a freshly loaded graph per call (``digraph default, first run``).
    """
    out = []
    for g in graphs:
        for a in algorithms:
            for m in modes or MODES[a]:
                out.append(harness.Case(g, a, mode=None if m == "default" else m, threads=threads,
                                        tol=tol, params=dict(params or {})))
            if first_run:
                out.append(harness.Case(g, a, threads=threads, tol=tol, params=dict(params or {}),
                                        fresh=True))
            for p in (PEERS[a] if peer_names is None else peer_names):
                if peers.PEERS[p][0] == a:
                    out.append(harness.Case(g, a, peer=p, tol=tol, params=dict(params or {})))
    return out


def main(argv=None):
    """Command line: see the module docstring and ``--help``."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    harness.add_common_arguments(ap, graphs_default=["wiki-Vote", "dblp-2010", "cnr-2000", "rmat18"])
    ap.add_argument("--modes", nargs="+", help="instead of each algorithm's list (bench_cpu.MODES)")
    ap.add_argument("--peers", nargs="*", choices=sorted(peers.PEERS),
                    help="instead of each algorithm's peers (bench_cpu.PEERS); none: no peer")
    ap.add_argument("--threads", type=int, help="digraph.run(threads=) (default: Numba's count)")
    ap.add_argument("--first-run", action="store_true",
                    help="add the default on a freshly loaded graph for each timed call")
    ap.add_argument("--classes", nargs="+", metavar="CLASS",
                    help=f"the corpus's graphs of these classes instead of --graphs "
                         f"({', '.join(corpus.CLASSES)}, or all)")
    args = ap.parse_args(argv)
    if args.classes:
        try:
            args.graphs = corpus.graphs_of(args.classes)
        except KeyError as e:
            ap.error(e.args[0])
    todo = cases(args.graphs, args.algorithms, args.modes, args.peers, args.threads, args.tol,
                 harness.parse_params(args.params), args.first_run)
    return harness.run_and_write(todo, args)


if __name__ == "__main__":
    sys.exit(main())
