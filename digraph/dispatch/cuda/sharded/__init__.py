"""The engines over several GPUs, being moved here (issue 18, item 5).

* :mod:`.power_work` — what the sharded power iteration
  (:mod:`digraph.dispatch.multi_gpu_power`) keeps between runs.

The sharded ``bsp`` / ``vertex-async`` engine is still :mod:`digraph.dispatch.multi_gpu`.
"""
