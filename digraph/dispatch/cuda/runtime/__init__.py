"""The runtime below the GPU engines (issue 18, item 5): :mod:`.backend` (one GPU's
:class:`~.backend._Backend`, its settings :data:`~.backend.BACKEND`, :func:`~.backend.backend`)
and :mod:`.launch` (the prepared-launch fast path, the only module that touches Numba
internals).  Nothing here imports the engines (:mod:`digraph.dispatch.gpu`,
:mod:`digraph.dispatch.multi_gpu`, ...)."""
