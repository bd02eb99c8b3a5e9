"""Where a GPU power round with Anderson acceleration goes (issue 17): every launch of
``gpu_power.solve`` timed by CUDA events, summed per kernel, beside the run's wall time, for
several memories and grids of the Anderson passes.

    python benchmarks/profile_gpu_anderson.py dblp-2010 rmat22
"""

import dataclasses
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_gpu import load_graph  # noqa: E402


def main():
    import cupy as cp
    from digraph.algorithms import PageRank
    from digraph.dispatch import gpu, gpu_power
    from digraph.result import RunStats
    events = []
    orig = gpu._Backend.launch

    def launch(self, kernel, grid, block, *args, **kw):
        s, e = cp.cuda.Event(), cp.cuda.Event()
        s.record()
        orig(self, kernel, grid, block, *args, **kw)
        e.record()
        events.append((getattr(kernel, "__name__", None) or kernel.py_func.__name__, s, e))

    for name in sys.argv[1:]:
        g, _ = load_graph(name)
        algo = PageRank()
        system = algo.prepare(g, **algo.bind(g, {}))
        for mem, bps in ((0, 16), (4, 16), (4, 4), (2, 4), (4, 1)):
            st = dataclasses.replace(gpu_power.DEFAULT, anderson=mem, anderson_blocks_per_sm=bps)
            walls = []
            for rep in range(4):
                stats = RunStats.new()
                cp.cuda.Device().synchronize()
                t0 = time.perf_counter()
                gpu_power.solve(g, system, tol=1e-8, max_iter=1000, stats=stats, settings=st)
                cp.cuda.Device().synchronize()
                walls.append(time.perf_counter() - t0)
            walls.sort()
            gpu._Backend.launch = launch
            events.clear()
            stats = RunStats.new()
            gpu_power.solve(g, system, tol=1e-8, max_iter=1000, stats=stats, settings=st)
            cp.cuda.Device().synchronize()
            gpu._Backend.launch = orig
            per = defaultdict(float)
            cnt = defaultdict(int)
            for k, s, e in events:
                per[k] += cp.cuda.get_elapsed_time(s, e)
                cnt[k] += 1
            r = stats["rounds"]
            print(f"{name} anderson={mem} blocks/SM={bps}: rounds {r}, wall median {walls[1]*1e3:.2f} ms "
                  f"({walls[1]*1e3/r:.3f} ms a round); kernels (ms total, per launch): " +
                  ", ".join(f"{k} {v:.2f} ({v/cnt[k]*1e3:.0f} us x{cnt[k]})" for k, v in per.items()),
                  flush=True)


if __name__ == "__main__":
    main()
