"""The runtime below the GPU engines: :mod:`.backend` (one GPU's
:class:`~.backend._Backend`, its settings :data:`~.backend.BACKEND`, :func:`~.backend.backend`),
:mod:`.launch` (the prepared-launch fast path, the only module that touches Numba internals),
:mod:`.spmv` (cuSPARSE's SpMV made once) and :mod:`.residency` (the device arrays the engines
keep for a graph: :class:`~.residency.Residency`).  Nothing here imports the engines
(:mod:`digraph.dispatch.engines.one_gpu`, :mod:`digraph.dispatch.engines.push.gpus`, ...)."""
