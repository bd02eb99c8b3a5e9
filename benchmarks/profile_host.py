"""Where a warm ``digraph.run`` spends its host time: each run's wall time beside the engine's
``time_compute``, then a cProfile of the median run (functions by own time).

    python benchmarks/profile_host.py --graph soc-Epinions1 --algorithm adsorption \\
        --mode power --device cuda --between pagerank:power adsorption:bsp --runs 8

``--between`` runs other cases (``ALGORITHM:MODE``) before each profiled run, as the harness's
interleaving does, to show state one run leaves to the next.  Parameters are the harness's
(:func:`harness.resolve_params`: seeds and sources drawn as the benchmarks draw them).
"""

import argparse
import cProfile
import io
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import graphs  # noqa: E402
import harness  # noqa: E402

import digraph  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graph", required=True)
    ap.add_argument("--algorithm", default="pagerank")
    ap.add_argument("--mode", default=None)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--between", nargs="*", default=[], metavar="ALGORITHM:MODE")
    a = ap.parse_args(argv)
    g = graphs.load(a.graph, gpu=a.device.startswith("cuda"))

    params = {}

    def call(alg, mode):
        if alg not in params:
            params[alg] = harness.resolve_params(g, alg, {})
        return digraph.run(g, alg, mode=None if mode in (None, "default") else mode,
                           device=a.device, threads=a.threads, tol=a.tol, **params[alg])

    others = [tuple(s.split(":", 1)) for s in a.between]
    for alg, mode in others + [(a.algorithm, a.mode)]:
        call(alg, mode)  # compile and warm
    runs = []
    for i in range(a.runs):
        for alg, mode in others:
            call(alg, mode)
        prof = cProfile.Profile()
        t0 = time.perf_counter()
        prof.enable()
        r = call(a.algorithm, a.mode)
        prof.disable()
        dt = time.perf_counter() - t0
        s = r.stats
        print(f"run {i}: {1e3 * dt:8.2f} ms wall, compute {1e3 * s.get('time_compute', 0):7.2f}, "
              f"total {1e3 * s.get('time_total', 0):7.2f}, rounds {s.get('rounds')}, "
              f"ran {s.get('mode')}", flush=True)
        runs.append((dt, i, prof))
    dt, i, prof = sorted(runs, key=lambda r: r[0])[(len(runs) - 1) // 2]
    for key in ("tottime", "cumulative"):
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats(key).print_stats(a.top)
        print(f"the median run (run {i}, {1e3 * dt:.2f} ms), by {key}:")
        print(out.getvalue())


if __name__ == "__main__":
    main()
