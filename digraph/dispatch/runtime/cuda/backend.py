"""One GPU's backend, the runtime below every GPU engine: CuPy on a GPU, numpy under Numba's
CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``); launch shapes, registered arrays and their cached
Numba views, kernel launches (prepared ones through :mod:`.launch`, the only module that touches
Numba's internals), counted copies between host and device
(``stats["bytes_h2d"]``/``["bytes_d2h"]``, ``time_transfer``).

:func:`backend` gives the backend of ``"cuda"``/``"cuda:N"``, made once per GPU and process
(``_BACKENDS``); :data:`BACKEND` (:class:`BackendSettings`) is read at each call, so a test or
benchmark that replaces it, or empties ``_BACKENDS``, patches this module.  Nothing here imports
the engines.
"""

import contextlib
import os
import time
import weakref
from dataclasses import dataclass

import numpy as np

from ....errors import NotAvailableError
from ...settings import current, register
from .launch import SCALARS, PreparedLaunch, dispatch_capturing, hold_modules_at_exit

__all__ = ["backend", "device_index", "BackendSettings", "BACKEND"]


@dataclass(frozen=True)
class BackendSettings:
    """How every GPU's backend (:class:`_Backend`, the runtime below the engines) copies and
    launches.  The backends read it at each call (:func:`digraph.dispatch.settings.current`): a
    run's own when it passed ``settings=[dataclasses.replace(BACKEND, ...)]``, else
    :data:`BACKEND`.  Measured: docs/history/benchmarks-notebook.md, "Measurements behind the
    GPU engines' settings".

    Attributes
    ----------
    pinned_copy_bytes : int
        Device arrays of at least this many bytes come back through page-locked host memory
        (CuPy's pinned pool, released when the array is dropped) instead of a fresh pageable
        array: one DMA, no page faults.  Smaller arrays (the answers of graphs of a few hundred
        thousand vertices) come back pageable.  Sizes near the threshold were not timed.
    fast_launch : bool
        *Ablation* (``benchmarks/profile_multi_gpu.py``; ``tests/dispatch/cuda/test_gpu.py``
        checks both sides give the same answers).  Launch kernels whose arrays are all
        registered through :class:`PreparedLaunch` (False: every launch through Numba's
        dispatcher, whose argument marshalling costs host time at every launch).
    """

    pinned_copy_bytes: int = 8 << 20
    fast_launch: bool = True


BACKEND = register(BackendSettings())


class _Backend:
    """CuPy on a GPU, numpy under the CUDA simulator; launch shapes for each."""

    def __init__(self, xp, sim, device_id):
        from numba import cuda
        self.xp = xp
        self.sim = sim
        self.cuda = cuda
        self.device_id = device_id
        if sim:  # the simulator runs each thread as a Python thread: small shapes
            self.block = 32
            self.sms = 1
            self.walk_blocks = 1
        else:
            dev = cuda.get_current_device()
            self.block = 256
            sms = dev.MULTIPROCESSOR_COUNT
            self.sms = sms
            self.walk_blocks = sms * 8  # persistent blocks of 128 threads, 8 per SM
        self.walk_block = 4 if sim else 128
        self.stats = None
        self._views = {}
        self._prepared = {}
        self._kept = {}  # an engine's name: (its holder's weakref, {id: array}) (retain)

    def current(self):
        """A context in which this backend's device is the current one (Numba's context and
        CuPy's device), the previous one restored after; nothing under the simulator.  A
        backend made for another GPU leaves that GPU current (:func:`backend`), and a one-GPU
        run without this context would go through peer access
        (docs/history/benchmarks-notebook.md, "Several GPUs: the power iteration sharded")."""
        if self.sim:
            return contextlib.nullcontext()
        stack = contextlib.ExitStack()
        stack.enter_context(self.cuda.gpus[self.device_id])
        stack.enter_context(self.xp.cuda.Device(self.device_id))
        return stack

    def grid(self, n):
        return max(1, (int(n) + self.block - 1) // self.block)

    def grid_hb(self, n):
        from ....smx.cuda.common import HB
        return max(1, (int(n) + HB - 1) // HB)

    def keep(self, a):
        """Register a long-lived device array: kernels get a cached Numba view of it (handing a
        CuPy array to a Numba kernel costs host time for every argument at every launch)."""
        if not self.sim:
            got = self._views.get(id(a))
            if got is None or got[0] is not a:
                self._views[id(a)] = (a, self.cuda.as_cuda_array(a))
        return a

    def keep_all(self, d):
        for v in d.values():
            if hasattr(v, "__cuda_array_interface__"):
                self.keep(v)
        return d

    def views(self, args):
        """``args`` with every registered array replaced by its cached Numba view."""
        if self.sim:
            return list(args)
        views = self._views
        return [views[id(a)][1] if id(a) in views and views[id(a)][0] is a else a for a in args]

    def launch(self, kernel, grid, block, *args, stream=None, tag=None):
        """``kernel[grid, block](*args)`` (on a CuPy ``stream`` if given) with the cached views
        of registered arrays.

        A launch whose arrays are all registered (:meth:`keep`) is prepared once and then goes
        straight to the driver (:class:`PreparedLaunch`): the dispatcher's argument marshalling
        costs host time at every launch, which on several GPUs driven from one host thread delays
        every round (``benchmarks/profile_multi_gpu.py``).  ``tag`` (any hashable) names the launch
        for that lookup instead of its arguments' identities and types: a caller that launches
        the same kernel with the same arrays again and again gives each launch a tag of its own
        (a prepared launch is still used only for the arrays it was made for)."""
        if self.sim:
            kernel[grid, block](*args)
            return
        key = None
        if current(BACKEND).fast_launch:
            key = (kernel, grid, block, 0 if stream is None else stream.ptr,
                   tag if tag is not None else
                   tuple(type(a) if isinstance(a, SCALARS) else id(a) for a in args))
            prep = self._prepared.get(key)
            if prep is not None and prep.matches(args):
                prep.launch(args)
                return
        views = self.views(args)
        cfg = (kernel[grid, block] if stream is None else
               kernel[grid, block, self.cuda.external_stream(stream.ptr)])
        if key is not None and self._preparable(args):
            got = dispatch_capturing(cfg, views)
            if got is not None:
                prep = PreparedLaunch.build(got[0], got[1], args, views)
                if prep is not None:
                    self._prepared[key] = prep
        else:
            cfg(*views)

    def _preparable(self, args):
        """Every array argument is registered (kept alive until :meth:`release`, so its address
        cannot change under a prepared launch)."""
        views = self._views
        for a in args:
            if not isinstance(a, SCALARS):
                got = views.get(id(a))
                if got is None or got[0] is not a:
                    return False
        return True

    def release(self, owner=None):
        """Forget the registered arrays and prepared launches (the arrays may then be freed):
        all but those an engine kept (:meth:`retain`), and ``owner``'s too; every one when
        ``owner`` is ``"all"``."""
        if owner == "all":
            self._kept.clear()
        else:
            self._kept.pop(owner, None)
        self._trim()

    def retain(self, arrays, owner, holder=None):
        """End of a run of the engine ``owner`` (a name: ``"power"``, ``"sharded-power"``, …):
        its kept ``arrays`` stay registered, with the prepared launches that read only them and
        other engines' kept arrays (a run's kept vectors,
        :attr:`~.shard_settings.MultiGpuSettings.keep_work`); what it kept before and
        every array no engine keeps are forgotten.  One set an engine: a run of one engine does
        not drop another's, so that engine's next run need not register its arrays and prepare
        its launches again (docs/history/benchmarks-notebook.md, "Several GPUs: the power
        iteration sharded").  ``holder``: the object that keeps the arrays for the next run (the
        work kept on the graph); once it is gone (the graph dropped, or another work kept in its
        place) the set is forgotten at the next run's end of any engine, instead of holding the
        GPU memory until this engine runs again."""
        self._kept[owner] = (None if holder is None else weakref.ref(holder),
                             {id(a): a for a in arrays})
        self._trim()

    def _trim(self):
        self._kept = {o: got for o, got in self._kept.items()
                      if got[0] is None or got[0]() is not None}
        keep = {}
        for _, arrs in self._kept.values():
            keep.update(arrs)
        self._views = {i: v for i, v in self._views.items() if keep.get(i) is v[0]}
        self._prepared = {key: p for key, p in self._prepared.items()
                          if all(keep.get(id(a)) is a for _, a in p.arrays)}

    def heavy(self, kernel, heavy, *args, tag=None, stream=None):
        """Launch a ``*_heavy`` kernel: a block per listed vertex (grid-strided past 65,535)."""
        from ....smx.cuda.common import HB
        if heavy.size:
            self.launch(kernel, min(int(heavy.size), 65535), HB, heavy, *args, tag=tag,
                        stream=stream)

    def put(self, a, dtype=None):
        """Copy a host array to the device (counted)."""
        a = np.ascontiguousarray(a if dtype is None else np.asarray(a, dtype=dtype))
        if self.sim:
            out = a.copy()
        else:
            t0 = time.perf_counter()
            out = self.xp.asarray(a)
            self.stats["time_transfer"] += time.perf_counter() - t0
        self.stats["bytes_h2d"] += int(a.nbytes)
        return self.keep(out)

    def get(self, a):
        """Copy a device array to the host (counted)."""
        if self.sim:
            out = np.array(a)
        else:
            self.cuda.synchronize()  # the kernels before it are compute, not transfer
            t0 = time.perf_counter()
            if isinstance(a, self.xp.ndarray) and a.flags.c_contiguous and \
                    a.nbytes >= current(BACKEND).pinned_copy_bytes:
                # into page-locked memory from CuPy's pool: one DMA, no page faults on a fresh
                # pageable buffer (BackendSettings.pinned_copy_bytes)
                import cupyx
                out = cupyx.empty_pinned(a.shape, a.dtype)
                a.get(out=out)
            else:
                out = self.xp.asnumpy(a)
            self.stats["time_transfer"] += time.perf_counter() - t0
        self.stats["bytes_d2h"] += int(out.nbytes)
        return out

    def scalars(self, *vals):
        """Several device scalars brought back in one copy (one synchronisation)."""
        v = self.xp.stack([self.xp.asarray(x, dtype=self.xp.float64) for x in vals])
        return [float(t) for t in self.get(v)]

    def sync(self):
        if not self.sim:
            self.cuda.synchronize()


_BACKENDS = {}


def device_index(device):
    """The GPU ordinal of ``"cuda"``/``"cuda:N"`` (several GPUs:
    :mod:`digraph.dispatch.engines.push.gpus`)."""
    d = device[5:] if device.startswith("cuda:") else ""
    if "," in d:
        raise NotAvailableError(
            f"device {device!r}: several GPUs run through digraph.run(..., device='cuda:0,1') "
            "(digraph.dispatch.engines.push.gpus), not one GPU's backend")
    return int(d) if d else 0


def backend(device="cuda"):
    """The :class:`_Backend` of ``device``; raises :class:`NotAvailableError` with the reason when
    numba-cuda, CuPy or a GPU is missing."""
    idx = device_index(device)
    sim = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") == "1"
    key = (idx, sim)
    if key in _BACKENDS:
        return _BACKENDS[key]
    try:
        from numba import cuda
    except ImportError:  # pragma: no cover - numba-cuda is a test dependency
        raise NotAvailableError(
            "device='cuda' needs numba-cuda and CuPy: pip install 'digraph-engine[cuda]'") from None
    if sim:
        xp = np
        # the simulator's syncthreads polls across Python threads: the default 5 ms GIL switch
        # interval makes every barrier cost milliseconds (simulation only)
        import sys
        sys.setswitchinterval(1e-4)
    else:
        try:
            available = cuda.is_available()
        except Exception:  # pragma: no cover - driver errors
            available = False
        if not available:
            raise NotAvailableError(f"device {device!r}: no CUDA GPU is available on this machine "
                                    "(numba.cuda.is_available() is False); use device='cpu'")
        try:
            import cupy as xp
        except ImportError:
            raise NotAvailableError(
                "device='cuda' needs CuPy: pip install 'digraph-engine[cuda]'") from None
        count = len(cuda.gpus)
        if idx >= count:
            raise NotAvailableError(f"device {device!r}: this machine has {count} GPU(s)")
        from numba import config
        config.CUDA_LOW_OCCUPANCY_WARNINGS = 0  # small frontiers launch small grids on purpose
        # CuPy and the Numba kernels share the legacy default stream, so the per-argument stream
        # synchronisation of __cuda_array_interface__ is not needed (it cost every launch)
        config.CUDA_ARRAY_INTERFACE_SYNC = 0
        cuda.select_device(idx)
        xp.cuda.Device(idx).use()
        hold_modules_at_exit()  # Numba's libraries left loaded at exit (launch.py)
    _BACKENDS[key] = _Backend(xp, sim, idx)
    return _BACKENDS[key]


def gpu_name(be):
    """The card's name (asked once a backend: every run reports it)."""
    got = getattr(be, "gpu_name", None)
    if got is None:
        with be.current():  # this backend's card, whichever is current
            name = be.cuda.get_current_device().name
        got = be._gpu_name = name.decode() if isinstance(name, bytes) else str(name)
    return got
