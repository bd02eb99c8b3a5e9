"""The one-GPU engine's default settings as the modules of ``digraph/dispatch/cuda/one_gpu/`` read
them: a function called without settings takes :data:`digraph.dispatch.gpu.DEFAULT` (or
``gpu.PATH_DEFAULT``) as it is at the call (tests and benchmarks replace ``gpu.DEFAULT``; a copy
bound when these modules are imported would not see that).
:class:`~digraph.dispatch.gpu.GpuSettings`, :class:`~digraph.dispatch.gpu.GpuPathSettings` and
their defaults stay in :mod:`digraph.dispatch.gpu`, which imports these modules."""

__all__ = ["default", "path_default"]


def default():
    """:data:`digraph.dispatch.gpu.DEFAULT`, looked up now."""
    from ... import gpu
    return gpu.DEFAULT


def path_default():
    """``digraph.dispatch.gpu.PATH_DEFAULT``, looked up now."""
    from ... import gpu
    return gpu.PATH_DEFAULT
