"""The graphs the benchmarks name: files of ``../shared/datasets`` (or ``$DIGRAPH_DATASETS``) by
their stem, and ``rmatK`` for ``digraph.generators.rmat(K, 16, seed=1)``."""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import digraph  # noqa: E402

DATASETS = Path(os.environ.get("DIGRAPH_DATASETS") or ROOT.parent / "shared" / "datasets")


def load(name):
    """``rmatK`` generated (edge factor 16, seed 1), ``erK`` the same with uniform quadrant
    probabilities (an Erdős–Rényi-like graph: no hubs, no locality), ``citK-B``
    ``digraph.generators.citation(2**K, back=B, seed=1)`` (``citK``: back 0.0005), else
    ``DATASETS/<name>.txt.gz``."""
    if name.startswith("rmat"):
        from digraph.generators import rmat
        src, dst = rmat(int(name[4:]), 16, seed=1)
        return digraph.load((src, dst))
    if name.startswith("er") and name[2:].isdigit():
        from digraph.generators import rmat
        src, dst = rmat(int(name[2:]), 16, a=0.25, b=0.25, c=0.25, seed=1)
        return digraph.load((src, dst))
    if name.startswith("cit") and name[3:].split("-")[0].isdigit():
        from digraph.generators import citation
        scale, _, back = name[3:].partition("-")
        src, dst = citation(1 << int(scale), back=float(back) if back else 0.0005, seed=1)
        return digraph.load((src, dst), num_vertices=1 << int(scale))
    return digraph.load(DATASETS / f"{name}.txt.gz")
