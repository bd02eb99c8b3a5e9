"""The registry's entry of ``mode="bsp"`` on a Dask cluster
(:mod:`digraph.dispatch.engines.registry`): the min/max rounds (:mod:`.cluster`) for SSSP and
other min/max systems, the h-index rounds (:mod:`.cluster_hindex`) for k-core."""

__all__ = ["prepare"]


def prepare(req):
    """A function of no argument that solves ``req`` on the plan's cluster, by the rounds of
    its system's family."""
    if req.system.family == "hindex":
        from .cluster_hindex import prepare as hindex
        return hindex(req)
    from .cluster import prepare as monotone
    return monotone(req)
