"""What the engines stand on, by placement kind.  CPU threads need nothing beyond Numba's
thread count (:func:`digraph.dispatch.engines.warm.numba_threads`); the CUDA placements (one GPU,
several GPUs of one host) share :mod:`.cuda`.  Nothing here imports an engine."""
