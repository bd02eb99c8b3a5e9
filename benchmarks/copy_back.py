"""How fast k GPUs' ranges of one float64 vector reach one host array (issue 6: the copy back).

    python benchmarks/copy_back.py --n 33554432 --gpus 1 4 --repeat 7

Each GPU holds ``n / k`` float64.  Variants, each into a fresh host array whose pages were
touched first (as :mod:`digraph.dispatch.host_pages` hands it out):

* ``threads``: a host thread per GPU, ``get(out=...)`` of its range (pageable copy; what
  ``multi_gpu._gather_linear`` does);
* ``serial``: the same from one thread;
* ``pinned``: a thread per GPU copies its range in chunks into two pinned buffers of its own,
  one chunk on the GPU's copy engine while the host copies the other into the array.

Prints medians of ``--repeat`` after one warm-up.
"""
import argparse
import statistics
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np


def touched(n):
    a = np.empty(n, np.float64)
    a.view(np.uint8)[::4096] = 0
    return a


def main():
    import cupy as cp
    import cupyx
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=1 << 25)
    ap.add_argument("--gpus", nargs="+", type=int, default=[1, 4])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--chunk-mb", nargs="+", type=float, default=[4, 16])
    args = ap.parse_args()
    n = args.n
    for k in args.gpus:
        cuts = np.linspace(0, n, k + 1).astype(np.int64)
        parts = []
        for g in range(k):
            with cp.cuda.Device(g):
                parts.append(cp.arange(cuts[g], cuts[g + 1], dtype=np.float64))
                cp.cuda.Device(g).synchronize()
        want = np.arange(n, dtype=np.float64)

        def get_range(g, out):
            with cp.cuda.Device(g):
                parts[g].get(out=out[cuts[g]:cuts[g + 1]])

        def threads(out):
            with ThreadPoolExecutor(k) as pool:
                list(pool.map(lambda g: get_range(g, out), range(k)))

        def serial(out):
            for g in range(k):
                get_range(g, out)

        stage = {}

        def pinned_for(chunk):
            def run(out):
                def one(g):
                    with cp.cuda.Device(g):
                        key = (g, chunk)
                        if key not in stage:
                            stage[key] = ([cupyx.empty_pinned(chunk, np.float64) for _ in range(2)],
                                          cp.cuda.Stream(non_blocking=True),
                                          [cp.cuda.Event(disable_timing=True) for _ in range(2)])
                        bufs, st, evs = stage[key]
                        src = parts[g]
                        a0 = int(cuts[g])
                        pending = None
                        for i, c0 in enumerate(range(0, src.size, chunk)):
                            c1 = min(src.size, c0 + chunk)
                            b = i % 2
                            src[c0:c1].get(out=bufs[b][:c1 - c0], stream=st, blocking=False)
                            evs[b].record(st)
                            if pending is not None:
                                pb, p0, p1 = pending
                                evs[pb].synchronize()
                                out[a0 + p0:a0 + p1] = bufs[pb][:p1 - p0]
                            pending = (b, c0, c1)
                        if pending is not None:
                            pb, p0, p1 = pending
                            evs[pb].synchronize()
                            out[a0 + p0:a0 + p1] = bufs[pb][:p1 - p0]
                if k == 1:
                    one(0)
                else:
                    with ThreadPoolExecutor(k) as pool:
                        list(pool.map(one, range(k)))
            return run

        variants = [("threads", threads), ("serial", serial)]
        variants += [(f"pinned {mb:g} MB chunks", pinned_for(int(mb * (1 << 20)) // 8))
                     for mb in args.chunk_mb]
        for label, fn in variants:
            ts = []
            for i in range(args.repeat + 1):
                out = touched(n)
                t0 = time.perf_counter()
                fn(out)
                t = time.perf_counter() - t0
                if i:
                    ts.append(t)
                assert np.array_equal(out, want), label
            med = statistics.median(ts)
            print(f"k={k} {label}: {med * 1e3:.1f} ms ({n * 8 / med / 1e9:.1f} GB/s), "
                  f"min {min(ts) * 1e3:.1f} ms", flush=True)


if __name__ == "__main__":
    main()
