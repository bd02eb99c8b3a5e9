"""The engines over several GPUs, being moved here (issue 18, item 5).

* the sharded ``bsp`` / ``vertex-async`` engine, whose entry point, settings and device parsing
  stay in :mod:`digraph.dispatch.multi_gpu` (which re-exports the names below):
  :mod:`.ranges` (the vertex ranges and their learnt balance, pure numpy), :mod:`.shards` (a
  GPU's shard, the helpers over all of them, the work kept between runs), :mod:`.exchange`
  (peer copies and NCCL), :mod:`.timer` (per-GPU kernel time), :mod:`.layout` (a linear
  system's renumbered layout and upload), :mod:`.rounds` (the linear round pipeline),
  :mod:`.linear` and :mod:`.monotone` (the linear, min/max and h-index engines), and
  :mod:`.settings` (:class:`MultiGpuSettings` and its default);
* the sharded power iteration, whose entry point and rounds stay in
  :mod:`digraph.dispatch.multi_gpu_power` (which re-exports the names below):
  :mod:`.power_arrays` (a shard's arrays, its pull, what stays registered between runs),
  :mod:`.power_exchange` (the packed exchange of the entries each GPU reads and the answer's gather)
  and :mod:`.power_work` (the vectors, streams and events it keeps between runs).
"""
