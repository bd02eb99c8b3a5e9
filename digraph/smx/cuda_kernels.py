"""Numba CUDA kernels of the GPU engine (``device="cuda"``): every mode, every system family.

Imported only when a GPU device is asked for (``import digraph`` never loads numba.cuda).  The
kernels take device arrays (CuPy arrays, zero-copy through ``__cuda_array_interface__``) or, under
Numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``, used by CI), numpy arrays.  The launch shape
and the host-side driving loops live in ``digraph/dispatch/cuda/one_gpu/`` (one GPU) and
``digraph/dispatch/cuda/sharded/`` (several).

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
finish (cnr-2000 has vertices of in-degree 18,000).  Every vertex-centric kernel therefore
skips vertices of degree ``>= HEAVY`` and a companion ``*_heavy`` kernel gives each of those a whole
block (arcs strided over its threads, a shared-memory reduction) over a static list of them.  The
arc loop of a vertex is written once, as an inline device function that both kernels call (a
thread alone: step 1; a block's threads: their first arcs and step ``HB``).

Per-arc mirror state ``s_j`` (docs/design.md §3): linear ``d = c_j (x_u − s_j); x_v += d; s_j = x_u``
(sent when ``|d| > θ``); monotone: an arc is pending while ``x_u ≠ s_j``.

The kernels live in modules by family; this module re-exports them all (the same objects), so
``from digraph.smx.cuda_kernels import HB`` and ``K.linear_dense_batch`` work as before:

* :mod:`.cuda_common` — ``HEAVY``, ``HB``, the simulator's shared-array lock and the device
  helpers (``_block_sum``, ``_neumaier``, ``relax``, ``improve``);
* :mod:`.cuda_linear` — the linear family on one GPU (sparse, vertex-async, contraction sums,
  residual, scan, fused dense rounds);
* :mod:`.cuda_linear_pull` — the sharded engine's linear rounds (``linear_frontier``,
  ``linear_pull``, ``linear_pull_local``);
* :mod:`.cuda_monotone` — the min/max and h-index families;
* :mod:`.cuda_walks` — the path walks (``path_linear_walk``, ``path_monotone_walk``, the
  sharded path workers' rounds, over a unit's arcs ``walk_linear_unit``, ``walk_monotone_unit``)
  and ``PROXY_SLOTS``; the one-GPU path modes' rounds queued on the device are in
  :mod:`.cuda_path_rounds`.
"""

from .relax_codes import (FIRST as _FIRST, MAX as _MAX, MIN as _MIN, PLUS as _PLUS,  # noqa: F401
                          TIMES as _TIMES)
from .cuda_common import (_SIM, HB, HEAVY, _block_max, _block_sum,  # noqa: F401
                          _lock_simulated_shared_arrays, _neumaier, improve, relax)
from .cuda_linear import (_absorb, _flush_stats, _own, _pull_in, _push_arcs,  # noqa: F401
                          _residual_in, _row_sum, linear_async_push, linear_async_push_heavy,
                          linear_dense_batch, linear_dense_batch_heavy, linear_push,
                          linear_push_heavy, linear_residual, linear_residual_heavy,
                          linear_residual_norms, linear_scan,
                          linear_sums, linear_sums_heavy, linear_take)
from .cuda_linear_pull import (_own_add, _sum_sent, linear_frontier, linear_pull,  # noqa: F401
                               linear_pull_heavy, linear_pull_local, linear_pull_local_heavy)
from .cuda_monotone import (_count_at_least, _hindex, _mark_all, _relax_out,  # noqa: F401
                            hindex_round, hindex_round_heavy, monotone_async_push,
                            monotone_async_push_heavy, monotone_push, monotone_push_heavy)
from .cuda_walks import (PROXY_SLOTS, _take_units, path_linear_walk,  # noqa: F401
                         path_monotone_walk, walk_linear_unit, walk_monotone_unit)

__all__ = []
