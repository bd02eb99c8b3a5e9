"""``mode="cluster"``: min/max systems (SSSP) on one GPU, each cluster of nearby vertices relaxed
to its local fixpoint in one thread block per round (:mod:`.gpu`)."""
