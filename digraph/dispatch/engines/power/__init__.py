"""``mode="power"``: the Google-matrix power iteration of normalised linear systems (PageRank),
with its rank-one dangling/teleport term and Anderson acceleration.

========================  ==================================================================
placement                 modules
========================  ==================================================================
CPU threads               :mod:`.cpu`
one GPU                   :mod:`.gpu` (its set-up :mod:`.gpu_setup`, kept work :mod:`.gpu_work`)
several GPUs              :mod:`.gpus` (:mod:`.gpus_layout`, :mod:`.gpus_arrays`,
                          :mod:`.gpus_exchange`, :mod:`.gpus_queued`, :mod:`.gpus_work`)
========================  ==================================================================
"""
