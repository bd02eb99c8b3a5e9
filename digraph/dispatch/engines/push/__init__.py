"""The push modes: ``mode="bsp"`` (bulk-synchronous rounds over a frontier, Gunrock-like) and
``mode="vertex-async"`` (asynchronous worklist passes with atomic pushes, DiGraph-t), on every
system family.

========================  ==================================================================
placement                 modules
========================  ==================================================================
CPU threads               :mod:`.cpu_bsp`, :mod:`.cpu_vertex_async`
one GPU                   :mod:`.gpu_linear` (resident), :mod:`.gpu_streamed` (arcs streamed
                          from the host), :mod:`.gpu_monotone` (min/max ``bsp``, h-index),
                          :mod:`.gpu_worklist` (min/max ``vertex-async``)
several GPUs              :mod:`.gpus` (vertex shards: :mod:`.gpus_layout`,
                          :mod:`.gpus_rounds`, :mod:`.gpus_linear`, :mod:`.gpus_monotone`)
a Dask cluster            :mod:`.cluster` (min/max ``bsp`` on the power iteration's shards;
                          the workers' side :mod:`.cluster_worker`)
========================  ==================================================================
"""
