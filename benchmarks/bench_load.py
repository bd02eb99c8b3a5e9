"""Time digraph.load on the shared datasets: decompress / parse / build split.

Usage: python benchmarks/bench_load.py [name ...]   (default: cnr-2000 dblp-2010)

Reports the first call (includes loading the Numba kernels from their on-disk cache, or compiling
them when there is none), then the best of ``--repeat`` whole loads after that warm-up, and the best
of each part: reading + gunzip, the Numba parse (with the newline count), ``Graph.from_arrays``.
"""

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import digraph  # noqa: E402
from digraph.graph import Graph  # noqa: E402
from digraph.io._files import read_bytes  # noqa: E402
from digraph.io.edgelist import parse_edgelist  # noqa: E402

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"
NUM_VERTICES = {"dblp-2010": 326186}


def split(path, num_vertices):
    t0 = time.perf_counter()
    data, _ = read_bytes(path)
    t1 = time.perf_counter()
    src, dst, w = parse_edgelist(data, path, "edgelist", num_vertices=num_vertices)
    t2 = time.perf_counter()
    g = Graph.from_arrays(src, dst, w, num_vertices=num_vertices, name=path.name)
    t3 = time.perf_counter()
    return g, (t1 - t0, t2 - t1, t3 - t2)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("names", nargs="*", default=["cnr-2000", "dblp-2010"])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    for name in args.names:
        path = DATA / f"{name}.txt.gz"
        nv = NUM_VERTICES.get(name)
        t = time.perf_counter()
        g = digraph.load(path, num_vertices=nv)
        first = time.perf_counter() - t
        totals, parts = [], []
        for _ in range(args.repeat):
            t = time.perf_counter()
            digraph.load(path, num_vertices=nv)
            totals.append(time.perf_counter() - t)
            parts.append(split(path, nv)[1])
        total = min(totals)
        dec, parse, build = (min(p[k] for p in parts) for k in range(3))
        print(f"{name}: {g.num_vertices} vertices, {g.num_arcs} arcs; first call {first:.3f} s; "
              f"best load {total:.3f} s; split: read+gunzip {dec:.3f} / parse {parse:.3f} / "
              f"build {build:.3f} s")


if __name__ == "__main__":
    main()
