"""The CUDA code by layer (issue 18, item 5), being moved here out of the flat
:mod:`digraph.dispatch` modules one safe step at a time.

The intended layout:

* :mod:`.runtime` — what every GPU engine stands on: the backend (launch shapes, registered
  arrays, counted copies), the launch path (the prepared-launch fast path, the only code that
  touches Numba internals, isolated in one file), a residency object, transport between host
  and GPUs, timing;
* ``one_gpu/`` — the one-GPU engines (one per module; :mod:`digraph.dispatch.gpu` keeps their
  settings and entry point, and :mod:`digraph.dispatch.gpu_power` is still flat);
* ``sharded/`` — the engines over several GPUs (today :mod:`digraph.dispatch.multi_gpu` and
  :mod:`digraph.dispatch.multi_gpu_power`), with ``gpu`` and ``multi_gpu`` no longer importing
  each other; no file over ~400 lines.

What is here so far: :mod:`.runtime.launch` (the prepared-launch fast path) and
:mod:`.runtime.backend` (:class:`~.runtime.backend.BackendSettings`,
:data:`~.runtime.backend.BACKEND`, the per-GPU backend and :func:`~.runtime.backend.backend`).
:mod:`digraph.dispatch.gpu` re-exports their names, so ``gpu.backend``, ``gpu._Backend``,
``gpu.BackendSettings``, ``gpu.device_index`` and ``gpu._gpu_name`` still work; module-global
state (:data:`~.runtime.backend.BACKEND`, the backends' cache ``_BACKENDS``) is read from
:mod:`.runtime.backend`, so a test or benchmark that replaces it patches that module.

``one_gpu/`` holds the one-GPU engines (residency, linear resident and streamed, the path modes,
min/max and h-index, the worklist, cluster and SCC engines), whose settings and
:func:`~digraph.dispatch.gpu.solve` stay in :mod:`digraph.dispatch.gpu`, which re-exports their
names (``gpu._device_graph``, ``gpu._Linear``, ``gpu._too_big``, ...).

``sharded/`` holds the parts of the sharded ``bsp`` / ``vertex-async`` engine (ranges, shards,
exchange, timer, layout, rounds, the linear and min/max engines), whose settings and
:func:`~digraph.dispatch.multi_gpu.solve` stay in :mod:`digraph.dispatch.multi_gpu`, which
re-exports their names, and the sharded power iteration's kept work.
"""
