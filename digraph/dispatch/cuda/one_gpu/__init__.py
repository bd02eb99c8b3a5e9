"""The one-GPU engines, one per module (issue 18, item 5), whose entry point :func:`solve`, settings
(:class:`~digraph.dispatch.gpu.GpuSettings`, :class:`~digraph.dispatch.gpu.GpuPathSettings`,
``DEFAULT``) and backend re-exports stay in :mod:`digraph.dispatch.gpu` (which re-exports the
names of the modules below):

* :mod:`.device_graph` — a graph's arrays resident on the GPU, and whether ``bsp`` must stream;
* :mod:`.linear` — linear systems resident on the GPU: ``bsp`` (fused dense pull or sparse push)
  and ``vertex-async``, with the certified error bound;
* :mod:`.streamed` — ``bsp`` on linear systems whose arcs do not fit, streamed from the host;
* :mod:`.paths` — ``path`` and ``path-nopriority`` on linear and min/max systems;
* :mod:`.monotone` — ``bsp`` on min/max systems and both modes of h-index (k-core) systems;
* :mod:`.worklist` — ``vertex-async`` on min/max systems, its worklist kept on the GPU;
* :mod:`.cluster` — ``mode="cluster"``: min/max systems on road-like graphs, each cluster of
  nearby vertices relaxed to its local fixpoint in one thread block per round;
* :mod:`.scc` — ``mode="scc"``: linear systems component by component of the DAG sketch;
* :mod:`.queued` — the device-side queues of :mod:`.worklist` and :mod:`.cluster`;
* :mod:`.settings` — the settings classes of the one-GPU engines and their defaults.

The one-GPU power iteration still lives in :mod:`digraph.dispatch.gpu_power`.
"""
