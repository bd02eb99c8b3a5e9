"""``digraph-demo``: generate an R-MAT graph, run an algorithm on the CPU, print the top vertices
and the run statistics.  ``python -m digraph`` does the same."""

import argparse
import sys
import time

__all__ = ["main"]


def main(argv=None):
    """Entry point of the ``digraph-demo`` console script."""
    p = argparse.ArgumentParser(
        prog="digraph-demo",
        description="Run an algorithm of digraph on a generated R-MAT graph and print the result.",
        epilog="examples:\n  digraph-demo\n  digraph-demo --scale 20 --algorithm sssp --threads 2\n"
               "  digraph-demo --algorithm kcore --top 5",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scale", type=int, default=16,
                   help="log2 of the number of vertex ids (default 16)")
    p.add_argument("--edge-factor", type=int, default=16, help="arcs per vertex id (default 16)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--algorithm", default="pagerank",
                   choices=["pagerank", "adsorption", "sssp", "kcore"])
    p.add_argument("--tol", type=float, default=None, help="error bound for pagerank/adsorption")
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--top", type=int, default=10, help="how many vertices to print")
    args = p.parse_args(argv)

    import numpy as np

    import digraph
    from digraph.errors import DigraphError
    from digraph.generators import rmat

    try:
        t0 = time.perf_counter()
        src, dst = rmat(args.scale, args.edge_factor, seed=args.seed)
        g = digraph.Graph.from_arrays(src, dst, name=f"rmat-{args.scale}")
        t_gen = time.perf_counter() - t0
        print(f"{g}  (generated and built in {t_gen:.2f} s)")
        params = {}
        hub = int(np.argmax(g.out_degree)) if g.num_vertices else 0
        if args.algorithm == "sssp":
            params["source"] = g.vertex_ids[hub].item()
        elif args.algorithm == "adsorption":
            params["seeds"] = g.vertex_ids[np.argsort(-g.out_degree)[:10]].tolist()
        r = digraph.run(g, args.algorithm, tol=args.tol, threads=args.threads, **params)
    except DigraphError as e:
        print(f"digraph-demo: error: {e}", file=sys.stderr)
        return 2
    largest = args.algorithm != "sssp"
    what = "largest" if largest else "smallest"
    print(f"\n{args.algorithm}: top {args.top} vertices ({what} values)")
    print(f"  {'vertex':>10}  value")
    for vid, val in r.top(args.top, largest=largest):
        print(f"  {vid:>10}  {val:.6g}" if isinstance(val, float) else f"  {vid:>10}  {val}")
    print("\nrun statistics")
    print(r.stats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
