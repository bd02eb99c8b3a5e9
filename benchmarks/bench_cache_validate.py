"""Cost of checking a path cache on load (issue 19 item 7) against building it afresh.

Alternates, on one graph and in one process, ``preprocess`` + ``PathSet.save`` (the build a run
with ``cache=`` does when there is no cache) and ``PathSet.load(graph=...)`` (manifest checks, every
array file's header, size and CRC-32, and the O(m) structural validation), and prints the medians.
The graph's fingerprint is computed once beforehand: both need it.

    python benchmarks/bench_cache_validate.py --graph cnr-2000 --repeat 7
"""

import argparse
import os
import statistics
import tempfile
import time

from graphs import load

from digraph.paths import PathSet, validate
from digraph.paths.pathset import ARRAYS
from digraph.preprocess import preprocess


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graph", default="cnr-2000")
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    g = load(args.graph)
    g.fingerprint()
    with tempfile.TemporaryDirectory() as tmp:
        d = os.path.join(tmp, "cache")
        preprocess(g).save(d)                       # warm-up: JIT caches, page cache
        PathSet.load(d, graph=g)
        pre, save, ld, crc, struct = [], [], [], [], []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            ps = preprocess(g)
            t1 = time.perf_counter()
            ps.save(d)
            t2 = time.perf_counter()
            PathSet.load(d, graph=g)
            t3 = time.perf_counter()
            pre.append(t1 - t0)
            save.append(t2 - t1)
            ld.append(t3 - t2)
            man = PathSet.read_manifest(d)
            gdir = PathSet.array_files(d)["path_offsets"].parent
            sizes = validate.check_manifest(man, d, ARRAYS)
            t4 = time.perf_counter()
            arrays = validate.read_arrays(gdir, man["arrays"], ARRAYS)
            t5 = time.perf_counter()
            validate.check_structure(arrays, sizes, gdir, g)
            t6 = time.perf_counter()
            crc.append(t5 - t4)
            struct.append(t6 - t5)
        med = statistics.median
        build = med([a + b for a, b in zip(pre, save)])
        print(f"{args.graph}: {g.num_vertices} vertices, {g.num_arcs} arcs, {ps.num_paths} paths, "
              f"{sum(a.nbytes for a in ps.arrays().values()) / 1e6:.0f} MB of arrays; "
              f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
        print(f"build (preprocess + save): {build * 1e3:.0f} ms (preprocess {med(pre) * 1e3:.0f}, "
              f"save {med(save) * 1e3:.0f})")
        print(f"load + validate: {med(ld) * 1e3:.1f} ms = {med(ld) / build:.1%} of the build "
              f"(alone: open + CRC-32 {med(crc) * 1e3:.1f} ms, structure {med(struct) * 1e3:.1f} ms)")
        print(f"vs preprocess alone: {med(ld) / med(pre):.1%}")


if __name__ == "__main__":
    main()
