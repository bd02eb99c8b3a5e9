"""The graphs the benchmarks name, by one short name each.

=================  ==========================================================================
name               graph
=================  ==========================================================================
``<stem>``         ``DATASETS/<stem>.txt.gz`` (``../shared/datasets`` or ``$DIGRAPH_DATASETS``), else
                   ``FETCHED/<stem>.txt.gz`` (``benchmarks/fetch_datasets.py``)
``rmatK``          ``digraph.generators.rmat(K, 16, seed=1)`` (on the GPU: see :func:`load`)
``kronK``          Graph500's Kronecker graph: ``rmat(K, 16, seed=1)``'s arcs taken as undirected
                   edges, stored in both directions (``32 · 2**K`` arcs, every one reciprocated)
``rmatKc``         GPU only: ``rmatK`` with the ids that have no arc dropped and the rest renumbered
``erK``            ``rmat(K, 16, a=b=c=0.25, seed=1)``: Erdős–Rényi-like, no hubs, no locality
``citK-B``         ``digraph.generators.citation(2**K, back=B, seed=1)`` (``citK``: back 0.0005)
``chainN``         the path ``0 → 1 → … → N−1``, unweighted
``gridK``          a ``K × K`` grid, both directions, integer weights 1..100 drawn with seed 0
``geoN``           ``digraph.generators.geometric(N)`` (weights 1..100, seed 0)
=================  ==========================================================================

A dataset that is not on this machine raises :class:`GraphUnavailable`, which the harness turns
into a skip with a message.

``corpus.CLASSES`` (``benchmarks/corpus.py``) names the corpus: the graphs of each class the
benchmarks measure every default on (``bench_cpu.py --classes``).
"""

import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
# the harness may run another checkout's digraph (before_after.py): DIGRAPH_TREE names it
TREE = Path(os.environ.get("DIGRAPH_TREE") or ROOT).resolve()
if str(TREE) not in sys.path:
    sys.path.insert(0, str(TREE))

import digraph  # noqa: E402

DATASETS = Path(os.environ.get("DIGRAPH_DATASETS") or ROOT.parent / "shared" / "datasets")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import FETCHED  # noqa: E402


class GraphUnavailable(FileNotFoundError):
    """A named dataset is not on this machine (the benchmark skips it)."""


def _int_suffix(name, prefix):
    rest = name[len(prefix):]
    return int(rest) if name.startswith(prefix) and rest.isdigit() else None


def load(name, gpu=False):
    """The :class:`digraph.Graph` named ``name`` (see the module's table).

    Parameters
    ----------
    name : str
        A dataset stem or a generator name.
    gpu : bool
        Generate ``rmatK``/``rmatKc`` on the GPU with CuPy (:func:`gpu_rmat`, seed ``K``, then
        :func:`csr_graph`): seconds instead of minutes for 2^25 vertices. These are the R-MAT
        graphs of the committed GPU results; they are not the CPU's ``rmatK`` (other seed).

    Returns
    -------
    digraph.Graph

    Raises
    ------
    GraphUnavailable
        ``name`` is a dataset stem and ``DATASETS/<name>.txt.gz`` does not exist.
    """
    if gpu and name.startswith("rmat") and name[4:].rstrip("c").isdigit():
        import cupy as cp
        compact = name.endswith("c")
        scale = int(name[4:].rstrip("c"))
        src, dst = gpu_rmat(cp, scale, 16, seed=scale)
        n = 1 << scale
        if compact:
            ids = cp.unique(cp.concatenate([src, dst]))
            src, dst, n = cp.searchsorted(ids, src), cp.searchsorted(ids, dst), int(ids.size)
        g = csr_graph(cp, src, dst, n)
        cp.get_default_memory_pool().free_all_blocks()
        return g
    from digraph import generators as gen
    if (k := _int_suffix(name, "rmat")) is not None:
        return digraph.load(gen.rmat(k, 16, seed=1))
    if (k := _int_suffix(name, "kron")) is not None:
        src, dst = gen.rmat(k, 16, seed=1)
        return digraph.load((np.concatenate([src, dst]), np.concatenate([dst, src])),
                            num_vertices=1 << k)
    if (k := _int_suffix(name, "er")) is not None:
        return digraph.load(gen.rmat(k, 16, a=0.25, b=0.25, c=0.25, seed=1))
    if name.startswith("cit") and name[3:].split("-")[0].isdigit():
        scale, _, back = name[3:].partition("-")
        src, dst = gen.citation(1 << int(scale), back=float(back) if back else 0.0005, seed=1)
        return digraph.load((src, dst), num_vertices=1 << int(scale))
    if (n := _int_suffix(name, "chain")) is not None:
        src = np.arange(n - 1, dtype=np.int64)
        return digraph.load((src, src + 1), num_vertices=n)
    if (k := _int_suffix(name, "grid")) is not None:
        idx = np.arange(k * k, dtype=np.int64).reshape(k, k)
        a = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel()])
        b = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel()])
        w = np.random.default_rng(0).integers(1, 101, 2 * a.size).astype(np.float64)
        return digraph.load((np.concatenate([a, b]), np.concatenate([b, a]), w), num_vertices=k * k)
    if (n := _int_suffix(name, "geo")) is not None:
        return digraph.load(tuple(gen.geometric(n)), num_vertices=n)
    path = DATASETS / f"{name}.txt.gz"
    if not path.is_file():
        path = FETCHED / f"{name}.txt.gz"
    if not path.is_file():
        raise GraphUnavailable(f"graph {name!r}: {DATASETS / (name + '.txt.gz')} not found, nor "
                               f"in {FETCHED} (set DIGRAPH_DATASETS to the folder of the "
                               "datasets, run benchmarks/fetch_datasets.py, or name a generator: "
                               "rmatK, kronK, erK, gridK, ...)")
    return digraph.load(path)


def timed_load(name, gpu=False):
    """``(graph, seconds)``: :func:`load` and its wall time."""
    t0 = time.perf_counter()
    g = load(name, gpu=gpu)
    return g, time.perf_counter() - t0


def csr_graph(xp, src, dst, n):
    """The :class:`digraph.Graph` that ``digraph.load((src, dst), num_vertices=n)`` builds.

    Its two sorts are done by ``xp`` (CuPy: on the GPU, seconds instead of the host's minutes for
    R-MAT 2^25); unweighted arcs only. ``tests/test_bench_helpers.py`` checks it equals
    ``digraph.load`` with numpy as ``xp``.

    Parameters
    ----------
    xp : module
        ``numpy`` or ``cupy``.
    src, dst : array of int
        Arcs, ids in ``[0, n)``; parallel arcs kept.
    n : int
        Number of vertices.

    Returns
    -------
    digraph.Graph
    """
    m = int(src.size)
    host = getattr(xp, "asnumpy", np.asarray)
    src = src.astype(xp.int64, copy=False)
    dst = dst.astype(xp.int64, copy=False)
    order = xp.argsort(src * n + dst)  # ties are parallel arcs: equal, any order
    s, d = src[order], dst[order]
    del order
    out_off = xp.searchsorted(s, xp.arange(n + 1, dtype=xp.int64)).astype(xp.int64)
    in_arcs = xp.argsort(d * m + xp.arange(m, dtype=xp.int64))  # by target, CSR index ascending
    in_off = xp.searchsorted(d[in_arcs], xp.arange(n + 1, dtype=xp.int64)).astype(xp.int64)
    it = np.int32 if n < 2**31 - 1 else np.int64
    g = digraph.Graph(num_vertices=n, out_offsets=host(out_off), out_targets=host(d.astype(it)),
                      in_offsets=host(in_off), in_arcs=host(in_arcs))
    g._cache["in_sources"] = host(s[in_arcs].astype(it))
    return g


def gpu_rmat(cp, scale, edge_factor, a=0.57, b=0.19, c=0.19, seed=0):
    """R-MAT arcs generated on the GPU (one quadrant draw per level and arc).

    Returns
    -------
    (cupy.ndarray, cupy.ndarray)
        ``edge_factor · 2**scale`` sources and targets (int64).
    """
    m = edge_factor << scale
    rng = cp.random.default_rng(seed)
    src = cp.zeros(m, cp.int64)
    dst = cp.zeros(m, cp.int64)
    for _ in range(scale):
        r = rng.random(m, dtype=cp.float32)
        src = (src << 1) | (r >= a + b)
        dst = (dst << 1) | (((r >= a) & (r < a + b)) | (r >= a + b + c))
    return src, dst
