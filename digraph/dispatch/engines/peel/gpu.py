"""k-core by peeling on one GPU (``mode="peel"``, ``device="cuda"``): the core numbers in one
launch, exact, no rounds to a fixed point.

The levels of Kabir & Madduri's PKC run on the device in one launch of
:func:`digraph.smx.cuda.peel.peel_levels` (its module says how: a level's scan and the peeling of
what it found in one step, the vertices a block's decrements take to the level peeled by that
block from a queue in shared memory, a grid barrier between steps, empty levels jumped over, the
last levels run by one block alone); the host launches it and reads its counters once.  The
degrees of the undirected multigraph (:func:`~digraph.smx.cuda.peel.peel_degrees`) and the
kernel's work arrays are made once per graph and device and kept in the graph's residency (kind
``"cuda-peel"``), beside the CSR and CSC they read (:func:`~digraph.dispatch.runtime.cuda.
device_graph.resident_graph`).

Counters (docs/design.md §5), as the CPU peel fills them:

* ``rounds`` — levels that peeled a vertex: the distinct core values;
* ``vertex_updates`` — vertices peeled: n, each once (checked: a run that peeled another number
  raises);
* ``arc_updates`` — neighbour entries read: 2m, every arc from both of its ends;
* ``peel`` — ``"gpu"``; ``peel_scans`` — level scans (levels and the empty scans that jumped);
  ``peel_blocks`` — blocks launched; ``peel_barriers`` — grid barriers passed;
  ``peel_spilled`` — vertices peeled in spill steps, dealt out to every block (those a block's
  shared queue could not hold, and hubs); ``peel_tail_steps`` — steps block 0 ran alone
  (:attr:`PeelGpuSettings.tail_arcs`).

``max_iter`` does not limit a peel: it always finishes and the answer is exact
(``converged=True``).

References
----------
H. Kabir, K. Madduri, "Parallel k-core decomposition on multicore platforms", IEEE IPDPSW 2017.
A. Ahmad et al., "Accelerating k-core decomposition by a GPU", IEEE ICDE 2023.
"""

from dataclasses import dataclass

import numpy as np

from ...runtime.cuda import residency as _residency
from ...runtime.cuda.device_graph import resident_graph
from ...settings import current, register
from ....errors import InvalidParameterError

__all__ = ["run_on", "blocks", "PeelGpuSettings", "DEFAULT"]


@dataclass(frozen=True)
class PeelGpuSettings:
    """How ``mode="peel"`` peels on one GPU.

    Attributes
    ----------
    blocks_per_sm : int
        Blocks of :func:`~digraph.smx.cuda.peel.peel_levels` a multiprocessor, at most
        :data:`~digraph.smx.cuda.peel.BLOCKS_PER_SM` (its launch bounds) and at most what the
        driver's occupancy calculator says is resident at once (the grid barrier needs every
        block resident).  Fewer blocks make a barrier cheaper, more hide more latency.
    tail_arcs : int
        Once the vertices a level keeps have at most this many neighbour entries (``alen``
        summed), block 0 runs the remaining levels alone, with ``syncthreads`` for barriers
        (graphs of at most this many entries, ``2m``, run alone from the start); 0: never alone
        (a graph without arcs aside).
    """

    blocks_per_sm: int = 4
    tail_arcs: int = 1 << 14


DEFAULT = register(PeelGpuSettings())


def blocks(be, settings, n):
    """Blocks of :func:`~digraph.smx.cuda.peel.peel_levels` for ``n`` vertices: at most
    ``settings.blocks_per_sm`` a multiprocessor that are surely resident at once (one under the
    simulator, which runs blocks one after another), and no more than the first scan's chunks."""
    from ....smx.cuda import peel as K
    from ..scc.gpu_grid import per_sm
    if be.sim:
        return 1
    want = max(1, min(settings.blocks_per_sm, K.BLOCKS_PER_SM))
    return max(1, min(per_sm(be, K.peel_levels, K.TB, want, 1) * be.sms, -(-n // K.TB)))


class _Work(dict):
    """The peel's device arrays by name (a dict that can be referred to weakly: the holder of
    the arrays :meth:`~digraph.dispatch.runtime.cuda.backend._Backend.retain` keeps)."""

    __slots__ = ("__weakref__",)


_GRAPH_ARRAYS = ("out_offsets", "out_targets", "in_offsets", "in_sources")


def _work(be, graph, g):
    """The degrees and the kernel's arrays on the GPU (kept in the graph's residency, kind
    ``"cuda-peel"``, once per device)."""
    res = _residency.residency(graph)
    key = (be.device_id, be.sim)
    got = res.peek("cuda-peel", key)
    if got is not None:
        return be.keep_all(got)
    from ....smx.cuda import peel as K
    xp = be.xp
    n = graph.num_vertices
    it = g["out_targets"].dtype
    w = _Work(deg0=xp.empty(n, np.int64), alen=xp.empty(n, np.int64), deg=xp.empty(n, np.int64),
              done=xp.empty(n, np.int32), alive=xp.empty(n, it), spare=xp.empty(n, it),
              queue=xp.empty(n, it), ctl=xp.empty(K.NCTL, np.int64), bar=xp.zeros(1, np.int64),
              cnt=xp.zeros(K.NCNT, np.int64))
    be.keep_all(w)
    be.launch(K.peel_degrees, be.grid(n), be.block, g["out_offsets"], g["out_targets"],
              g["in_offsets"], w["deg0"], w["alen"])
    return res.put("cuda-peel", key, w)


def run_on(be, graph, system, *, mode, tol, max_iter, stats, options):
    """Peel the graph's undirected multigraph on the GPU of ``be``; returns (device core numbers,
    True).

    Parameters
    ----------
    be : the one-GPU backend (:func:`digraph.dispatch.runtime.cuda.backend.backend`)
    graph : digraph.Graph
    system : HIndexSystem
        Only the ``"hindex"`` family (k-core) can be peeled.
    mode : str
        ``"peel"``.
    tol, max_iter :
        Ignored: the peel is exact and always finishes.
    stats : RunStats
        Counters filled as the module docstring says.
    options : dict
        :func:`digraph.dispatch.engines.one_gpu.solve`'s; none is read.

    Returns
    -------
    (int64 device array, bool)
        The core numbers of the multigraph of the arcs (doubled for an undirected source;
        ``digraph.run`` halves them) and ``True``.

    Raises
    ------
    InvalidParameterError
        A system of another family, or settings out of range.
    RuntimeError
        The kernel peeled another number of vertices than the graph has (a fault of the kernel,
        never a property of the graph).
    """
    if system.family != "hindex":
        raise InvalidParameterError(
            f"mode='peel' peels k-cores (the hindex family), not the {system.family} family; use "
            "'power', 'vertex-async' or 'bsp'")
    from ....smx.cuda import peel as K
    settings = current(DEFAULT)
    if not (settings.blocks_per_sm >= 1 and settings.tail_arcs >= 0):
        raise InvalidParameterError(
            f"PeelGpuSettings: blocks_per_sm must be >= 1 and tail_arcs >= 0, got "
            f"blocks_per_sm={settings.blocks_per_sm!r}, tail_arcs={settings.tail_arcs!r}")
    n = graph.num_vertices
    if n == 0:
        _count(stats, [0] * K.NCNT, 0)
        return be.put(np.zeros(0, np.int64)), True
    g = resident_graph(be, graph)
    w = _work(be, graph, g)
    w["bar"][...] = 0
    grid = blocks(be, settings, n)
    alone = int(2 * graph.num_arcs <= settings.tail_arcs)
    be.launch(K.peel_levels, grid, K.TB, *(g[k] for k in _GRAPH_ARRAYS), w["deg0"], w["alen"],
              w["deg"], w["done"], w["alive"], w["spare"], w["queue"], w["ctl"], w["bar"],
              w["cnt"], int(settings.tail_arcs), alone)
    # the next run's launch stays prepared (its arrays registered while the graph keeps them)
    be.retain(list(w.values()) + [g[k] for k in _GRAPH_ARRAYS], "peel", holder=w)
    c = [int(v) for v in be.get(w["cnt"])]
    if c[K.PEELED] != n:
        raise RuntimeError(f"the GPU peel peeled {c[K.PEELED]} vertices of {n}: a fault of "
                           "digraph.smx.cuda.peel.peel_levels")
    _count(stats, c, grid)
    return w["deg"], True


def _count(stats, c, grid):
    """The kernel's counters ``c`` (``cnt``, :data:`~digraph.smx.cuda.peel.NCNT`) into ``stats``
    (the module docstring)."""
    from ....smx.cuda import peel as K
    stats["peel"] = "gpu"
    stats["peel_scans"] = c[K.SCANS]
    stats["peel_blocks"] = grid
    stats["peel_barriers"] = c[K.BARRIERS]
    stats["peel_spilled"] = c[K.SPILLED]
    stats["peel_tail_steps"] = c[K.TAIL_STEPS]
    stats["rounds"] += c[K.LEVELS]
    stats["vertex_updates"] += c[K.PEELED]
    stats["arc_updates"] += c[K.ARCS]
