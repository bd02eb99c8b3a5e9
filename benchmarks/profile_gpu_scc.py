"""Where the GPU SCC engine's time goes (issue 18 item 1): ``gpu.solve(mode="scc")`` on each graph
with each ``--blocks`` (persistent blocks per SM of the queue kernel), ``--heavy-blocks`` (blocks
per SM of a heavy round) and ``--heavy`` threshold;
prints the schedule (phases, heavy components and their rounds), the host time of each phase's
light and heavy part (``scc_phase_ms``), sweeps, direct solves and arcs, medians of ``--repeat``
warm runs.  ``--peers`` also times ``bsp`` and ``power`` (``gpu_power.solve``) on each graph.

    python benchmarks/profile_gpu_scc.py --graphs cnr-2000 cit-HepPh --blocks 2 8 --heavy 16384
"""

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_gpu import load_graph  # noqa: E402


def main():
    from digraph.algorithms import PageRank
    from digraph.dispatch import gpu, gpu_power
    from digraph.dispatch.cuda.one_gpu.scc import GpuSccSettings
    from digraph.result import RunStats
    ap = argparse.ArgumentParser()
    ap.add_argument("--graphs", nargs="+", default=["cnr-2000", "cit-HepPh"])
    ap.add_argument("--blocks", nargs="+", type=int, default=[8])
    ap.add_argument("--heavy", nargs="+", type=int, default=[16384])
    ap.add_argument("--heavy-blocks", nargs="+", type=int, default=[0],
                    help="blocks per SM of the heavy rounds; 0: the default")
    ap.add_argument("--one-launch", nargs="+", type=int, default=[-1],
                    help="heavy rounds in one launch (1) or a launch a round (0); -1: the default")
    ap.add_argument("--peers", action="store_true", help="time bsp and power too")
    ap.add_argument("--trace-heavy", action="store_true",
                    help="per heavy group and round: µs and arcs pushed (one-launch rounds)")
    ap.add_argument("--label", default="", help="a name for this tree's rows")
    ap.add_argument("--light-anderson", nargs="+", type=int, default=[-1],
                    help="GpuSccSettings.light_anderson values (-1: the default)")
    ap.add_argument("--check", nargs="+", type=int, default=[8])
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--max-iter", nargs="+", type=int, default=[10_000],
                    help="sweeps a component may take (a cap shows what the sweeps cost)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--profile", type=int, default=0,
                    help="after the timed runs, one more under cProfile: its N costliest "
                         "functions by own time and by cumulative time (a get or sync waits for "
                         "the GPU: its time is the kernels' before it)")
    args = ap.parse_args()
    for name in args.graphs:
        g, _ = load_graph(name)
        algo = PageRank()
        system = algo.prepare(g, **algo.bind(g, {}))
        if args.peers:
            for peer in ("bsp", "power"):
                ts = []
                for i in range(args.repeat + 1):
                    st = RunStats.new()
                    t0 = time.perf_counter()
                    if peer == "power":
                        gpu_power.solve(g, system, tol=args.tol, max_iter=10_000, stats=st)
                    else:
                        gpu.solve(g, system, mode="bsp", tol=args.tol, max_iter=10_000, stats=st)
                    if i:
                        ts.append(time.perf_counter() - t0)
                print(json.dumps(dict(graph=name, mode=peer, time_ms=round(statistics.median(ts) * 1e3, 2),
                                      rounds=int(st["rounds"]), arcs=int(st["arc_updates"]),
                                      bound=st.get("error_bound"))), flush=True)
        for blocks, hb, one, la in ((b, h, o, m) for b in args.blocks for h in args.heavy_blocks
                                    for o in args.one_launch for m in args.light_anderson):
            for heavy in args.heavy:
                for check, cap in ((c, m) for c in args.check for m in args.max_iter):
                    kw = dict(heavy_blocks_per_sm=hb) if hb > 0 else {}  # 0: the default
                    if one >= 0:
                        kw["heavy_one_launch"] = bool(one)
                    if args.trace_heavy:
                        kw["trace_heavy"] = True
                    if la >= 0:
                        kw["light_anderson"] = la
                    settings = GpuSccSettings(heavy_arcs=heavy, blocks_per_sm=blocks,
                                              rounds_per_check=check, **kw)
                    ts, st = [], None
                    for i in range(args.repeat + 1):
                        st = RunStats.new()
                        t0 = time.perf_counter()
                        gpu.solve(g, system, mode="scc", tol=args.tol, max_iter=cap, stats=st,
                                  scc_settings=settings)
                        if i:
                            ts.append(time.perf_counter() - t0)
                    if args.profile:
                        _profile(lambda: gpu.solve(g, system, mode="scc", tol=args.tol,
                                                   max_iter=cap, stats=RunStats.new(),
                                                   scc_settings=settings), args.profile)
                    print(json.dumps(dict(
                        label=args.label, graph=name, mode="scc", blocks=blocks,
                        heavy_blocks=hb, one_launch=one, light_anderson=la, heavy=heavy, check=check, max_iter=cap,
                        time_ms=round(statistics.median(ts) * 1e3, 2),
                        phase_ms=st["scc_phase_ms"], phases=st["scc_phases"],
                        heavy_comps=st["scc_heavy"], heavy_rounds=st["heavy_rounds"],
                        sweeps=int(st["sweeps"]), direct=st["scc_direct"],
                        arcs=int(st["arc_updates"]), ran=st["scc_ran"],
                        bound=st["error_bound"], finished_by=st.get("finished_by"),
                        layer_rounds=st["layer_rounds"],
                        heavy_trace=[dict(us=(np.diff(t[:, 1]) / 1e3).round(1).tolist(),
                                          push_us=((t[1:, 0] - t[:-1, 1]) / 1e3).round(1).tolist(),
                                          pushed=np.diff(t[:, 2]).tolist())
                                     for t in st.get("scc_heavy_trace", [])])), flush=True)


def _profile(run, top):
    """One ``run()`` under cProfile; prints its ``top`` functions by own and cumulative time."""
    import cProfile
    import io
    import pstats
    pr = cProfile.Profile()
    pr.enable()
    run()
    pr.disable()
    for key in ("tottime", "cumulative"):
        out = io.StringIO()
        pstats.Stats(pr, stream=out).sort_stats(key).print_stats(top)
        print(out.getvalue(), flush=True)


if __name__ == "__main__":
    main()
