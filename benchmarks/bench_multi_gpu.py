"""digraph on several GPUs of one host against one GPU and a CuPy power iteration on one.

For every graph and every GPU count ``k`` of ``--gpus``: ``digraph.run(..., device=
"cuda:0,...,k-1")`` with ``mode=None`` (PageRank: the Google-matrix power iteration, sharded when
the graph is large enough, else on the first GPU; the row's ``ran``/``engine``/``route`` say
which) and each ``--modes`` entry (``bsp`` shards over vertex ranges); ``k = 1`` is
``device="cuda:0"``. The ``cupy-power`` peer runs on one GPU. Runs are interleaved case by case
(``--repeat`` rounds), so the one-GPU and the k-GPU runs see the same host. Every answer is
verified against a CuPy power iteration to 1e-13.

    NCCL_NVLS_ENABLE=0 python benchmarks/bench_multi_gpu.py --graphs rmat24 rmat25 --gpus 1 4 \\
        --repeat 11 --out benchmarks/results/multi_gpu_h100x4.json
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402


def device_string(k):
    """``"cuda:0"`` for one GPU, ``"cuda:0,1,...,k-1"`` for ``k``."""
    return "cuda:" + ",".join(str(i) for i in range(k))


def cases(graphs, algorithms, gpus, modes=("default",), tol=1e-8, params=None, peer=True):
    """The list of :class:`harness.Case`: each mode on each GPU count, plus ``cupy-power``."""
    out = []
    for g in graphs:
        for a in algorithms:
            for k in gpus:
                for m in modes:
                    out.append(harness.Case(g, a, mode=None if m == "default" else m,
                                            device=device_string(k), tol=tol,
                                            params=dict(params or {}),
                                            label=f"digraph {m}, {k} GPU{'s' if k > 1 else ''}"))
            if peer and a == "pagerank":
                out.append(harness.Case(g, a, peer="cupy-power", tol=tol, params=dict(params or {}),
                                        label="cupy-power, one GPU"))
    return out


def main(argv=None):
    """Command line: see the module docstring and ``--help``."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    harness.add_common_arguments(ap, graphs_default=["rmat24", "rmat25"])
    ap.add_argument("--gpus", nargs="+", type=int, default=[1, 4], help="GPU counts (default 1 4)")
    ap.add_argument("--modes", nargs="+", default=["default"], help="digraph modes (default: default)")
    ap.add_argument("--no-peer", action="store_true", help="leave out the CuPy power iteration")
    args = ap.parse_args(argv)
    todo = cases(args.graphs, args.algorithms, args.gpus, args.modes, args.tol,
                 harness.parse_params(args.params), not args.no_peer)
    return harness.run_and_write(todo, args)


if __name__ == "__main__":
    sys.exit(main())
