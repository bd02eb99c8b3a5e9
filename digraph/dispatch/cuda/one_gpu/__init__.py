"""The one-GPU engines, one per module (issue 18, item 5).

* :mod:`.cluster` — ``mode="cluster"``: min/max systems on road-like graphs, each cluster of
  nearby vertices relaxed to its local fixpoint in one thread block per round;
* :mod:`.worklist` — ``vertex-async`` on min/max systems, its worklist kept on the GPU.

The older one-GPU engines still live in :mod:`digraph.dispatch.gpu` and
:mod:`digraph.dispatch.gpu_power`.
"""
