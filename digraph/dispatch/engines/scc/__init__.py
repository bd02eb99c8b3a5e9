"""``mode="scc"``: linear systems solved strongly connected component by component, in the order
of the DAG sketch, one residual per vertex.

========================  ==================================================================
placement                 modules
========================  ==================================================================
CPU threads               :mod:`.cpu`
one GPU                   :mod:`.gpu` (:mod:`.gpu_layout`, :mod:`.gpu_grid`,
                          :mod:`.gpu_units`, :mod:`.gpu_work`)
several GPUs              :mod:`.gpus` (each unit's components dealt over the GPUs)
========================  ==================================================================
"""
