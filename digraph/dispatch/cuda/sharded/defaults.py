"""The sharded engine's default settings as its modules read them: a function of
``digraph/dispatch/cuda/sharded/`` called without ``settings`` takes
:data:`digraph.dispatch.multi_gpu.DEFAULT` as it is at the call (tests and benchmarks replace
``multi_gpu.DEFAULT``; a copy bound when these modules are imported would not see that).
:class:`~digraph.dispatch.multi_gpu.MultiGpuSettings` and ``DEFAULT`` stay in
:mod:`digraph.dispatch.multi_gpu`, which imports these modules."""

__all__ = ["default"]


def default():
    """:data:`digraph.dispatch.multi_gpu.DEFAULT`, looked up now."""
    from ... import multi_gpu
    return multi_gpu.DEFAULT
