"""``mode="peel"``: k-core by one exact peeling pass, on CPU threads (:mod:`.cpu`) or on one GPU
(:mod:`.gpu`)."""
