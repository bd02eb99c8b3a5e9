"""cProfile of warm ``digraph.run(g, "pagerank", mode=..., device="cuda")`` runs: the host-side
costs around the GPU rounds (set-up, uploads, checks, the answer's copy back).

    python benchmarks/profile_gpu_run.py rmat22 power
    python benchmarks/profile_gpu_run.py rmat25 auto cuda:0,1,2,3   # no mode, four GPUs named
"""

import cProfile
import pstats
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import digraph  # noqa: E402
from bench_gpu import load_graph  # noqa: E402

g, _ = load_graph(sys.argv[1])
mode = sys.argv[2] if len(sys.argv) > 2 else "power"
mode = None if mode == "auto" else mode
device = sys.argv[3] if len(sys.argv) > 3 else "cuda"
for _ in range(2):
    r = digraph.run(g, "pagerank", mode=mode, device=device, tol=1e-8)
print({k: round(v * 1e3, 2) for k, v in r.stats.items() if k.startswith("time")})
prof = cProfile.Profile()
prof.enable()
for _ in range(3):
    digraph.run(g, "pagerank", mode=mode, device=device, tol=1e-8)
prof.disable()
pstats.Stats(prof).sort_stats("cumtime").print_stats(30)
pstats.Stats(prof).sort_stats("tottime").print_stats(25)
