"""Where a GPU power round goes (issue 17): each kernel of :mod:`digraph.smx.cuda_power` timed
alone on a graph, for several thread groups, beside the heavy-vertex count.

    python benchmarks/profile_gpu_power.py rmat22 cnr-2000
"""

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_gpu import load_graph  # noqa: E402


def main():
    import cupy as cp
    from digraph.dispatch import gpu
    from digraph.dispatch.gpu_power import DEFAULT
    BLOCKS_PER_SM = DEFAULT.blocks_per_sm
    from digraph.result import RunStats
    from digraph.smx import cuda_power as K
    from digraph.smx.cuda_kernels import HB
    for name in sys.argv[1:]:
        g, _ = load_graph(name)
        be = gpu.backend("cuda")
        be.stats = RunStats.new()
        dg = gpu._device_graph(be, g)
        n = g.num_vertices
        heavy = dg["heavy_in"]
        indeg = np.diff(g.in_offsets)
        print(name, "n", n, "m", g.num_arcs, "heavy", heavy.size, "heavy arcs share %.2f" %
              (indeg[indeg >= 256].sum() / g.num_arcs), "max in-degree", indeg.max(), flush=True)
        z = be.keep(cp.full(n, 1.0 / n))
        y = be.keep(cp.empty(n))
        x = be.keep(cp.full(n, 1.0 / n))
        ds = be.keep(cp.full(n, 0.85))
        ss = be.keep(cp.asarray(1.0 / np.maximum(g.out_degree, 1)))
        acc = be.keep(cp.zeros(4))
        nxt = be.keep(cp.zeros(4))
        coef = be.keep(cp.zeros(1))

        def t(fn, reps=20):
            fn()
            cp.cuda.Device().synchronize()
            t0 = time.perf_counter()
            for _ in range(reps):
                fn()
            cp.cuda.Device().synchronize()
            return (time.perf_counter() - t0) / reps * 1e3

        for G in (1, 2, 4, 8):
            for bps in (BLOCKS_PER_SM, 64, 0):
                grid = max(1, (n * G + HB - 1) // HB)
                if bps:
                    grid = min(grid, bps * be.sms)
                ms = t(lambda: be.launch(K.power_pull, grid, HB, G, dg["in_offsets"], dg["in_sources"],
                                         coef, False, z, ds, y, acc))
                print(f"  pull light G={G} blocks/SM={bps or 'all'}: {ms:.3f} ms", flush=True)
        ms = t(lambda: be.heavy(K.power_pull_heavy, heavy, dg["in_offsets"], dg["in_sources"], coef,
                                False, z, ds, y, acc))
        print(f"  pull heavy: {ms:.3f} ms", flush=True)
        grid = min(be.grid_hb(n), BLOCKS_PER_SM * be.sms)
        ms = t(lambda: be.launch(K.power_teleport, grid, HB, y, z, x, ss, z, acc, nxt))
        print(f"  teleport: {ms:.3f} ms", flush=True)
        ms = t(lambda: be.get(acc))
        print(f"  read-back: {ms:.3f} ms", flush=True)
        import cupyx.scipy.sparse as csp
        A = csp.csr_matrix((cp.ones(g.num_arcs), dg["in_sources"], dg["in_offsets"]), shape=(n, n))
        ms = t(lambda: A @ x)
        print(f"  cupy spmv: {ms:.3f} ms", flush=True)


if __name__ == "__main__":
    main()
