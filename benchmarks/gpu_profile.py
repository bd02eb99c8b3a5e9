"""Where a GPU run's time goes: kernel-launch overhead (CuPy arrays vs Numba device arrays) and a
cProfile of one run.  ``python benchmarks/gpu_profile.py cnr-2000 pagerank bsp``"""
import cProfile
import pstats
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import digraph  # noqa: E402
from digraph.dispatch import gpu  # noqa: E402


def launch_overhead():
    import cupy as cp
    from numba import cuda
    be = gpu.backend("cuda")

    @cuda.jit
    def k(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9):
        i = cuda.grid(1)
        if i < a0.size:
            a0[i] += 1.0

    arrs = [cp.zeros(1000) for _ in range(10)]
    views = [cuda.as_cuda_array(a) for a in arrs]
    for args, name in ((arrs, "cupy args"), (views, "numba views")):
        k[4, 256](*args)
        cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(200):
            k[4, 256](*args)
        cuda.synchronize()
        print(f"launch, 10 {name}: {(time.perf_counter() - t0) / 200 * 1e6:.1f} us")
    t0 = time.perf_counter()
    for _ in range(200):
        float(arrs[0].sum())
    print(f"cupy sum + sync: {(time.perf_counter() - t0) / 200 * 1e6:.1f} us")
    return be


def main():
    name, algo, mode = sys.argv[1:4]
    if len(sys.argv) > 4:
        launch_overhead()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_gpu import load_graph
    g, _ = load_graph(name)
    params = {"source": g.vertex_ids[int(np.argmax(g.out_degree))]} if algo == "sssp" else {}
    digraph.run(g, algo, mode=mode, device="cuda", **params)
    if mode.startswith("path"):  # keep preprocessing out of the profile: one PathSet reused
        from digraph.preprocess import preprocess
        ps = preprocess(g)
        R = sys.modules["digraph.run"]
        R._pathset = lambda graph, cache, p: ps
        digraph.run(g, algo, mode=mode, device="cuda", **params)
    pr = cProfile.Profile()
    t0 = time.perf_counter()
    pr.enable()
    r = digraph.run(g, algo, mode=mode, device="cuda", **params)
    pr.disable()
    print(f"{name} {algo} {mode}: {(time.perf_counter() - t0) * 1e3:.1f} ms, {r.stats.rounds} rounds")
    pstats.Stats(pr).sort_stats("tottime").print_stats(14)


if __name__ == "__main__":
    main()
