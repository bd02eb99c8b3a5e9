"""Device-side clocks and loads for CUDA kernels: the GPU's global nanosecond timer (the same
clock on every multiprocessor, for kernel profiles that order events of different blocks), the
multiprocessor a block runs on, and a load cached in L2 only.

* :func:`globaltimer` reads PTX's ``%globaltimer`` (nanoseconds; on recent GPUs it advances in
  steps of about a microsecond or less, enough to time components that take several).
* :func:`smid` reads ``%smid``.
* :func:`load_relaxed` is PTX's ``ld.relaxed.gpu`` on an element of a 1-D array: a load that
  takes part in the memory model at GPU scope, so a value another block wrote and published
  (fence, then an atomic) is seen by a block that polled the publication with it and then fenced,
  without the read-modify-write of an atomic (``atomic.add(a, i, 0.0)``).  It is marked as having
  side effects, so a polling loop reads again each time.  (A weak ``ld.global.cg`` lets the
  queue kernel read stale values: docs/history/benchmarks-notebook.md, "The light phase
  profiled: one block a multiprocessor, and hubs walked by one thread".)

Under Numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``) they are plain Python: the host's
``perf_counter_ns``, multiprocessor 0 and an indexed read.
"""

from numba import config

__all__ = ["globaltimer", "smid", "load_relaxed"]

if config.ENABLE_CUDASIM:
    import time

    def globaltimer():
        """The host's nanosecond counter (simulator)."""
        return time.perf_counter_ns()

    def smid():
        """Multiprocessor 0 (simulator)."""
        return 0

    def load_relaxed(a, i):
        """``a[i]`` (simulator)."""
        return a[i]

else:
    from llvmlite import ir
    from numba import types
    from numba.cuda import cgutils
    from numba.cuda.extending import intrinsic

    def _special_register(name, bits):
        @intrinsic
        def read(typingctx):
            def codegen(context, builder, sig, args):
                fty = ir.FunctionType(ir.IntType(bits), [])
                asm = ir.InlineAsm(fty, f"mov.u{bits} $0, %{name};", "=l" if bits == 64 else "=r",
                                   side_effect=True)
                return builder.call(asm, [])
            return (types.int64() if bits == 64 else types.int32()), codegen
        return read

    globaltimer = _special_register("globaltimer", 64)
    smid = _special_register("smid", 32)

    @intrinsic
    def load_relaxed(typingctx, array, index):
        if not (isinstance(array, types.Array) and array.ndim == 1
                and isinstance(index, types.Integer)
                and array.dtype.bitwidth in (32, 64)):
            return None

        def codegen(context, builder, sig, args):
            aty, ity = sig.args
            arr = context.make_array(aty)(context, builder, value=args[0])
            idx = context.cast(builder, args[1], ity, types.intp)
            ptr = cgutils.get_item_pointer(context, builder, aty, arr, [idx], wraparound=False)
            vty = context.get_value_type(aty.dtype)
            bits = aty.dtype.bitwidth
            fty = ir.FunctionType(vty, [vty.as_pointer()])
            asm = ir.InlineAsm(fty, f"ld.relaxed.gpu.global.b{bits} $0, [$1];",
                               ("=l" if bits == 64 else "=r") + ",l,~{memory}", side_effect=True)
            return builder.call(asm, [ptr])
        return array.dtype(array, index), codegen
