"""digraph on one GPU: each algorithm's default and named modes against a CuPy power iteration.

For every graph and algorithm, ``digraph.run(..., device=DEVICE)`` with ``mode=None`` (the
router's choice) and each named mode; for PageRank the ``cupy-power`` peer (CuPy float64 CSR
SpMV, the sound stop ``α/(1 − α)·‖x_(k+1) − x_k‖₁ ≤ tol``, the answer left on the GPU); for
k-core the CPU peel on ``--cpu-threads`` threads and igraph's ``coreness`` on one (skipped where
python-igraph is not installed). Every answer is verified (:mod:`harness`; the PageRank reference
is a CuPy power iteration to 1e-13, the k-core one igraph's coreness or the plain peeling).
``rmatK`` / ``rmatKc`` are generated on the GPU (:func:`graphs.load` with ``gpu=True``): the
R-MAT graphs of the committed GPU results, not the CPU's.

    python benchmarks/bench_gpu.py --graphs cnr-2000 dblp-2010 rmat22 rmat24 \\
        --algorithms pagerank sssp --repeat 7 --out benchmarks/results/gpu_h100.json
    python benchmarks/bench_gpu.py --graphs cnr-2000 dblp-2010 cit-HepPh --algorithms kcore \\
        --repeat 7 --out kcore_gpu.json

A mode given as ``ALGORITHM:MODE`` is timed for that algorithm only: adsorption by the power
iteration of ``x ↦ b + A x`` (``power``), by ``bsp`` and by the default, beside PageRank's
``power`` on the same graphs (``benchmarks/device_check.sh adsorption``)::

    python benchmarks/bench_gpu.py --graphs cnr-2000 dblp-2010 cit-HepPh \\
        --algorithms pagerank adsorption --modes pagerank:power adsorption:default \\
        adsorption:power adsorption:bsp --no-peer --out adsorption_gpu.json

Needs numba-cuda and CuPy (``pip install -e '.[cuda]'``) and an NVIDIA GPU.
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402

MODES = {"pagerank": ["default", "power", "bsp", "path"],
         "adsorption": ["default", "power", "bsp", "vertex-async", "path"],
         "sssp": ["default", "vertex-async", "cluster", "path", "bsp"],
         "kcore": ["default", "peel", "bsp", "vertex-async"]}
"""The modes timed per algorithm on one GPU unless ``--modes`` is given."""


def cases(graphs, algorithms, modes=None, device="cuda", tol=1e-8, params=None, peer=True,
          cpu_threads=(1, 2)):
    """The list of :class:`harness.Case` this script runs: every mode of :data:`MODES` (or
    ``modes``: a mode for every algorithm, or ``"ALGORITHM:MODE"`` for that one only) on
    ``device``, plus, when ``peer``, ``cupy-power`` for PageRank and for k-core the CPU peel on
    each of ``cpu_threads`` and ``igraph-coreness``."""
    out = []
    for g in graphs:
        for a in algorithms:
            for m in _modes_of(a, modes):
                out.append(harness.Case(g, a, mode=None if m == "default" else m, device=device,
                                        tol=tol, params=dict(params or {})))
            if peer and a == "pagerank":
                out.append(harness.Case(g, a, peer="cupy-power", tol=tol, params=dict(params or {})))
            if peer and a == "kcore":
                out += [harness.Case(g, a, mode="peel", device="cpu", threads=t,
                                     label=f"digraph peel, CPU {t} thread{'s' * (t > 1)}")
                        for t in cpu_threads]
                out.append(harness.Case(g, a, peer="igraph-coreness"))
    return out


def _modes_of(algorithm, modes):
    """The modes timed for ``algorithm``: those of ``modes`` that name no algorithm or name it
    (``"adsorption:power"``), else :data:`MODES`."""
    if not modes:
        return MODES[algorithm]
    out = []
    for m in modes:
        name, sep, mode = m.rpartition(":")
        if not sep or name == algorithm:
            out.append(mode)
    return out


def main(argv=None):
    """Command line: see the module docstring and ``--help``."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    harness.add_common_arguments(ap, graphs_default=["cnr-2000", "dblp-2010", "rmat22"])
    ap.add_argument("--modes", nargs="+", help="instead of each algorithm's list (bench_gpu.MODES); "
                    "ALGORITHM:MODE for one algorithm only")
    ap.add_argument("--device", default="cuda", help="cuda or cuda:N (default cuda)")
    ap.add_argument("--no-peer", action="store_true",
                    help="leave out the peers (the CuPy power iteration; for k-core the CPU peel "
                         "and igraph's coreness)")
    ap.add_argument("--cpu-threads", type=int, nargs="+", default=[1, 2],
                    help="threads of the CPU peel timed beside k-core on the GPU (default 1 2)")
    args = ap.parse_args(argv)
    todo = cases(args.graphs, args.algorithms, args.modes, args.device, args.tol,
                 harness.parse_params(args.params), not args.no_peer, tuple(args.cpu_threads))
    return harness.run_and_write(todo, args)


if __name__ == "__main__":
    sys.exit(main())
