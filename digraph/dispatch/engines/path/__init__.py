"""The path modes, ``mode="path"`` and ``"path-nopriority"`` (DiGraph): the paths of a
:class:`~digraph.PathSet` walked one per thread, SCC-vertices of the DAG sketch in layer order,
with or without priority scheduling.

========================  ==================================================================
placement                 modules
========================  ==================================================================
CPU threads               :mod:`.cpu` (:mod:`.settings`, :mod:`.cpu_schedule`,
                          :mod:`.cpu_linear`, :mod:`.cpu_monotone`)
one GPU                   :mod:`.gpu` (:mod:`.gpu_settings`, :mod:`.gpu_work`)
several GPUs              :mod:`.gpus` (the worker dispatcher), :mod:`.gpus_worker` (a GPU's
                          worker)
========================  ==================================================================
"""
