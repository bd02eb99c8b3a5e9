"""Numba CUDA kernels of the GPU engine (``device="cuda"``): every mode, every system family.

Imported only when a GPU device is asked for (``import digraph`` never loads numba.cuda).  The
kernels take device arrays (CuPy arrays, zero-copy through ``__cuda_array_interface__``) or, under
Numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``, used by CI), numpy arrays.  The launch shape
and the host-side driving loops live in the mode packages of ``digraph/dispatch/engines/``
(``gpu*.py`` for one GPU, ``gpus*.py`` for several).

Families and modes (the same systems and counters as the CPU kernels of this package):

* ``bsp`` — Jacobi rounds: a dense pull over in-arcs (one thread per target, no atomics) or a
  sparse push from the frontier with atomic adds / min / max;
* ``vertex-async`` — one pass over a worklist, values read while others write (atomic pushes);
* ``path`` — one thread walks a *unit* (one long path alone, or several short consecutive paths,
  DiGraph Figure 5) arc by arc, carrying the value it has just written to the next arc's source, so
  a change at a path's head reaches its tail in the same round.  Blocks are persistent and take
  blockDim units at a time from an atomic cursor over a queue ordered by DAG layer (work
  stealing between SMs: a block that finishes early takes the next units).  *Proxy vertices*: the
  in-arcs of the ``PROXY_SLOTS`` vertices of highest in-degree are accumulated in shared memory
  per block and flushed to the masters when the block's work is done.

Skewed degrees: a thread per vertex leaves a hub's thread working alone long after the others
finish (a web graph's hubs have thousands of in-arcs).  Every vertex-centric kernel therefore
skips vertices of degree ``>= HEAVY`` and a companion ``*_heavy`` kernel gives each of those a whole
block (arcs strided over its threads, a shared-memory reduction) over a static list of them.  The
arc loop of a vertex is written once, as an inline device function that both kernels call (a
thread alone: step 1; a block's threads: their first arcs and step ``HB``).

Per-arc mirror state ``s_j`` (docs/design.md §3): linear ``d = c_j (x_u − s_j); x_v += d;
s_j = x_u`` (sent when ``|d| > θ``); monotone: an arc is pending while ``x_u ≠ s_j``.

The kernels live in modules by family; this module names them all (the same objects), an index
by name for the code that looks a kernel up (``K.linear_dense_batch``):

* :mod:`~.common` — ``HEAVY``, ``HB``, the simulator's shared-array lock and the device
  helpers (``block_sum``, ``_neumaier``, ``relax``, ``improve``);
* :mod:`~.linear` — the linear family on one GPU (sparse, vertex-async, contraction sums,
  residual, scan, fused dense rounds);
* :mod:`~.linear_pull` — the sharded engine's linear rounds (``linear_frontier``,
  ``linear_pull``, ``linear_pull_local``);
* :mod:`~.monotone` — the min/max and h-index families;
* :mod:`~.walks` — the path walks (``path_linear_walk``, ``path_monotone_walk``, the
  sharded path workers' rounds, over a unit's arcs ``walk_linear_unit``, ``walk_monotone_unit``)
  and ``PROXY_SLOTS``; the one-GPU path modes' rounds queued on the device are in
  :mod:`~.path_rounds`.
"""

from ..relax_codes import (FIRST as _FIRST, MAX as _MAX, MIN as _MIN, PLUS as _PLUS,  # noqa: F401
                           TIMES as _TIMES)
from .common import (  # noqa: F401
    SIM, HB, HEAVY, block_max, block_sum, lock_simulated_shared_arrays, neumaier, improve, relax)
from .linear import (  # noqa: F401
    absorb, flush_stats, own, pull_in, push_arcs, residual_in, row_sum, linear_async_push,
    linear_async_push_heavy, linear_dense_batch, linear_dense_batch_heavy, linear_push,
    linear_push_heavy, linear_residual, linear_residual_heavy, linear_residual_norms, linear_scan,
    linear_sums, linear_sums_heavy, linear_take)
from .linear_pull import (  # noqa: F401
    own_add, sum_sent, linear_frontier, linear_pull, linear_pull_heavy, linear_pull_local,
    linear_pull_local_heavy)
from .monotone import (count_at_least, hindex, mark_all, relax_out, hindex_round,  # noqa: F401
                       hindex_round_heavy, monotone_async_push, monotone_async_push_heavy,
                       monotone_push, monotone_push_heavy)
from .walks import (PROXY_SLOTS, take_units, path_linear_walk, path_monotone_walk,  # noqa: F401
                    walk_linear_unit, walk_monotone_unit)

__all__ = []
