"""The prepared-launch fast path of the GPU backends: the one module of digraph that relies on
Numba's and ``cuda.core``'s internals (``tests/dispatch/test_engine_layout.py`` checks that no other
module names them).

A kernel launch through Numba's dispatcher marshals every argument at every launch, host time
that delays the rounds (``benchmarks/profile_multi_gpu.py``; measured:
docs/history/benchmarks-lab-notebook.md, "Host overheads removed: prepared launches, pipelined
rounds, vectors made on the GPUs").  :class:`PreparedLaunch` does it once: the first
launch goes through the dispatcher with a hook in its launch configuration's
``pre_launch_callbacks`` (:func:`dispatch_capturing`), which hands over the specialised kernel and
launch configuration Numba used; the arguments are marshalled once through that kernel's
``_prepare_args``, the driver function is taken from ``_codelibrary.get_cufunc()``, and later
launches with the same arrays convert only their scalars and call ``cuda.core.launch``
(:func:`_core_launch`) directly.  The backend (:class:`~.backend._Backend`) decides when a launch
may be prepared (every array argument registered) and whether to (``BACKEND.fast_launch``,
:class:`~.backend.BackendSettings`).

The internals touched: a configured kernel's ``pre_launch_callbacks`` list, the specialised
kernel's ``argument_types``, ``_prepare_args`` and ``_codelibrary.get_cufunc().kernel``,
``numba.cuda._compat.CUDA_CORE_GE_1_0`` (which picks the ``LaunchConfig`` keyword of older
cuda.core), and ``cuda.core``'s ``LaunchConfig`` and ``launch``; written against numba-cuda
0.30 (the floor in ``pyproject.toml``).  A debug, cooperative or extension-using kernel, or one
whose marshalling is not the expected one, is not prepared and keeps going through the
dispatcher.

It also holds the workaround for an abort at interpreter exit (:func:`hold_modules_at_exit`):
Numba's finalizers unload its kernels' libraries (``cuLibraryUnload``) once more than
``NUMBA_CUDA_DEALLOCS_COUNT`` (10) are pending, which at exit crashed the interpreter (upstream:
NVIDIA/cuda-python#1670, "numba-cuda SEGV with cuda.core when cuLibraryUnload is enabled").
"""

import atexit
import ctypes
import functools
import weakref

import numpy as np


def dispatch_capturing(cfg, views):
    """``cfg(*views)`` through Numba's dispatcher (``cfg``: a configured kernel,
    ``kernel[grid, block(, stream)]``); returns the (specialised kernel, launch configuration)
    it launched with, from its ``pre_launch_callbacks`` hook, or None if the hook was not
    called."""
    got = []
    cfg.pre_launch_callbacks.append(lambda k, lc: got.append((k, lc)))
    cfg(*views)
    return got[0] if got else None


SCALARS = (int, float, complex, np.generic)
"""Kernel arguments converted at every launch (anything else is an array; asking a Numba view
for ``__cuda_array_interface__`` costs driver calls, so arrays are told apart by type)."""


class PreparedLaunch:
    """One kernel launch with its array arguments marshalled once; later launches with the same
    arrays (by identity) convert only the scalars and call the driver.

    Built from the specialised kernel and launch configuration that Numba's dispatcher used for
    the first launch (its ``pre_launch_callbacks`` hook), so the kernel, the argument layout and
    the stream are Numba's own.  The entry keeps its arrays alive, so their addresses cannot be
    reused while it exists; :meth:`.backend._Backend.release` drops every entry."""

    __slots__ = ("arrays", "stream", "config", "kernel", "template", "slots")

    @classmethod
    def build(cls, kobj, lc, args, views):
        if (getattr(kobj, "debug", False) or getattr(kobj, "cooperative", False)
                or getattr(kobj, "extensions", None)):
            return None
        types = tuple(kobj.argument_types)
        if len(types) != len(args):
            return None
        from cuda.core import LaunchConfig
        from numba.cuda._compat import CUDA_CORE_GE_1_0
        self = cls()
        self.stream = lc.stream
        if CUDA_CORE_GE_1_0:
            self.config = LaunchConfig(grid=lc.griddim, block=lc.blockdim,
                                       shmem_size=lc.sharedmem, is_cooperative=False)
        else:  # pragma: no cover - older cuda.core
            self.config = LaunchConfig(grid=lc.griddim, block=lc.blockdim,
                                       shmem_size=lc.sharedmem, cooperative_launch=False)
        self.kernel = kobj._codelibrary.get_cufunc().kernel
        self.arrays = tuple((i, a) for i, a in enumerate(args) if not isinstance(a, SCALARS))
        template, slots, retr = [], [], []
        for i, (ty, v) in enumerate(zip(types, views)):
            out = []
            kobj._prepare_args(ty, v, self.stream, retr, out)
            if isinstance(v, SCALARS):
                # one ctypes value, remade from each launch's argument by its own type
                if len(out) != 1:
                    return None
                if isinstance(out[0], ctypes._SimpleCData):
                    conv = type(out[0])
                elif isinstance(out[0], (bool, np.bool_)):
                    conv = bool  # Numba hands booleans to the driver as they are
                else:
                    return None
                slots.append((len(template), conv, i))
            template.extend(out)
        if retr:  # a write-back (host array): not a resident launch
            return None
        self.template, self.slots = template, tuple(slots)
        return self

    def matches(self, args):
        for i, a in self.arrays:
            if args[i] is not a:
                return False
        return True

    def launch(self, args):
        ka = self.template.copy()
        for pos, conv, i in self.slots:
            ka[pos] = conv(args[i])
        _core_launch()(self.stream, self.config, self.kernel, *ka)


@functools.lru_cache(maxsize=1)
def _core_launch():
    from cuda.core import launch
    return launch


_HELD = []
"""The entered ``deallocations.disable()`` of each context held at exit (kept referenced: a
collected one would leave its ``with`` block)."""


def hold_modules_at_exit():
    """Register, once, an exit hook that stops Numba's pending deallocations from being flushed.

    At exit, ``weakref``'s exit hook runs Numba's finalizers; each kernel's library is queued for
    ``cuLibraryUnload`` and the queue is flushed past ``NUMBA_CUDA_DEALLOCS_COUNT`` items.  With
    numba-cuda 0.30 and cuda.core that unload crashed the interpreter after every result was
    returned (``double free or corruption`` or a segmentation fault, exit status 134 or 139),
    an upstream defect (NVIDIA/cuda-python#1670).  The hook, which runs before ``weakref``'s
    (exit hooks run last registered first, and ``weakref``'s is made sure to be registered
    before it), enters ``deallocations.disable()`` on every context Numba made: the queue is
    never flushed, and the driver frees everything when the process ends.  Nothing changes while
    the process runs.
    """
    if _HELD or getattr(hold_modules_at_exit, "done", False):
        return
    hold_modules_at_exit.done = True
    weakref.finalize(hold_modules_at_exit, lambda: None)  # weakref's exit hook registered first
    atexit.register(_hold_deallocations)


def _hold_deallocations():
    try:
        from numba.cuda.cudadrv import driver as drv
        devices = list(drv.driver.devices.values())
    except Exception:  # pragma: no cover - no driver at exit
        return
    for dev in devices:
        ctx = getattr(dev, "primary_context", None)
        deallocs = getattr(ctx, "deallocations", None)
        if deallocs is None:
            continue
        try:
            cm = deallocs.disable()
            cm.__enter__()
        except Exception:  # pragma: no cover - another numba-cuda
            continue
        _HELD.append(cm)
