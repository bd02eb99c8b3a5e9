"""``mode="power"``: the Google-matrix power iteration of normalised linear systems (PageRank),
with its rank-one dangling/teleport term and Anderson acceleration; on one GPU and on a Dask
cluster also the power iteration of the affine map ``x ↦ b + A x`` for linear systems that are
not normalised.

========================  ==================================================================
placement                 modules
========================  ==================================================================
CPU threads               :mod:`.cpu`
one GPU                   :mod:`.gpu` (its set-up :mod:`.gpu_setup`, kept work :mod:`.gpu_work`);
                          systems not normalised :mod:`.gpu_affine`
several GPUs              :mod:`.gpus` (:mod:`.gpus_layout`, :mod:`.gpus_arrays`,
                          :mod:`.gpus_exchange`, :mod:`.gpus_queued`, :mod:`.gpus_work`)
a Dask cluster            :mod:`.cluster` (the client), :mod:`.cluster_worker` (the workers,
                          their shards and runs :mod:`.cluster_state`, Anderson's mixes
                          :mod:`.cluster_anderson`),
                          :mod:`.cluster_reads` (the exchange's layout), :mod:`.cluster_maps`
                          (the two maps and their bounds), :mod:`.cluster_checks` (pre-flight),
                          :mod:`.cluster_checkpoint` (checkpoints and restarts),
                          :mod:`.cluster_gpu_worker` (a worker's rounds on its GPU)
========================  ==================================================================

:func:`refusal` says why a system is refused where.
"""


def refusal(graph, system, kind):
    """Why ``mode="power"`` cannot run the linear ``system`` on placement ``kind`` (``"cpu"``,
    ``"gpu"``, ``"gpus"``, ``"cluster"``), or None: the Google-matrix iteration for normalised
    systems (:func:`.cpu.applies`) everywhere, and on one GPU and on a Dask cluster the affine
    map's iteration for the others (:func:`.gpu_affine.applies`,
    :func:`.cluster_maps.affine_refusal`)."""
    from .cpu import applies
    if kind == "gpu" and not system.normalize:
        from .gpu_affine import applies as affine_applies
        return affine_applies(graph, system)
    if kind == "cluster" and not system.normalize:
        from .cluster_maps import affine_refusal
        return affine_refusal(graph, system)
    why = applies(graph, system)
    if why and not system.normalize:
        why += ("; on one GPU (device='cuda') and on a Dask cluster (cluster=) mode='power' also "
                "runs systems that are not normalised, by the power iteration of x -> b + A x")
    return why
