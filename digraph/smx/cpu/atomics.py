"""Lock-free atomic read-modify-write on float64/int arrays for Numba CPU kernels.

Numba exposes atomics only on CUDA.  These intrinsics emit LLVM ``atomicrmw``/``cmpxchg``
instructions directly (x86 lowers ``fadd`` to a compare-and-swap loop), so several threads of a
``prange`` loop can add into, or take the minimum/maximum into, one master value without losing a
contribution (docs/design.md §3, "No lost updates").  Each returns the value held *before* the
update.
"""

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["atomic_add", "atomic_min", "atomic_max", "atomic_xchg", "atomic_improve"]


def _pointer(context, builder, arr_t, arr, idx):
    ary = context.make_array(arr_t)(context, builder, arr)
    return cgutils.get_item_pointer(context, builder, arr_t, ary, [idx], wraparound=False)


@intrinsic
def atomic_add(typingctx, arr, idx, val):
    """``arr[idx] += val`` atomically (float64 or integer arrays); returns the old value."""
    if not isinstance(arr, types.Array):
        return None
    dtype = arr.dtype
    sig = dtype(arr, idx, dtype)

    def codegen(context, builder, signature, args):
        a, i, v = args
        ptr = _pointer(context, builder, signature.args[0], a, i)
        op = "fadd" if isinstance(dtype, types.Float) else "add"
        v = context.cast(builder, v, signature.args[2], dtype)
        return builder.atomic_rmw(op, ptr, v, "monotonic")

    return sig, codegen


@intrinsic
def atomic_xchg(typingctx, arr, idx, val):
    """``old = arr[idx]; arr[idx] = val`` atomically; returns ``old``."""
    if not isinstance(arr, types.Array):
        return None
    dtype = arr.dtype
    sig = dtype(arr, idx, dtype)

    def codegen(context, builder, signature, args):
        a, i, v = args
        ptr = _pointer(context, builder, signature.args[0], a, i)
        if isinstance(dtype, types.Float):
            ity = ir.IntType(dtype.bitwidth)
            iptr = builder.bitcast(ptr, ity.as_pointer())
            old = builder.atomic_rmw("xchg", iptr, builder.bitcast(v, ity), "monotonic")
            return builder.bitcast(old, context.get_value_type(dtype))
        return builder.atomic_rmw("xchg", ptr, v, "monotonic")

    return sig, codegen


def _make_cas_extremum(smaller):
    """CAS loop storing ``val`` when it is smaller (larger) than the current value."""

    def gen(typingctx, arr, idx, val):
        if not isinstance(arr, types.Array):
            return None
        dtype = arr.dtype
        sig = dtype(arr, idx, dtype)

        def codegen(context, builder, signature, args):
            a, i, v = args
            ptr = _pointer(context, builder, signature.args[0], a, i)
            is_float = isinstance(dtype, types.Float)
            ity = ir.IntType(dtype.bitwidth)
            iptr = builder.bitcast(ptr, ity.as_pointer()) if is_float else ptr
            vty = context.get_value_type(dtype)
            entry = builder.basic_block
            loop = builder.append_basic_block("cas.loop")
            swap = builder.append_basic_block("cas.swap")
            done = builder.append_basic_block("cas.done")
            first = builder.load_atomic(iptr, "monotonic", dtype.bitwidth // 8)
            builder.branch(loop)
            builder.position_at_end(loop)
            cur_i = builder.phi(ity)
            cur_i.add_incoming(first, entry)
            cur = builder.bitcast(cur_i, vty) if is_float else cur_i
            if is_float:
                better = builder.fcmp_ordered("<" if smaller else ">", v, cur)
            else:
                better = builder.icmp_signed("<" if smaller else ">", v, cur)
            builder.cbranch(better, swap, done)
            builder.position_at_end(swap)
            new_i = builder.bitcast(v, ity) if is_float else v
            res = builder.cmpxchg(iptr, cur_i, new_i, "monotonic", "monotonic")
            seen = builder.extract_value(res, 0)
            ok = builder.extract_value(res, 1)
            cur_i.add_incoming(seen, swap)
            builder.cbranch(ok, done, loop)
            builder.position_at_end(done)
            out = builder.phi(ity)
            out.add_incoming(cur_i, loop)
            out.add_incoming(cur_i, swap)
            return builder.bitcast(out, vty) if is_float else out

        return sig, codegen

    return gen


atomic_min = intrinsic(_make_cas_extremum(True))
atomic_min.__doc__ = "``arr[idx] = min(arr[idx], val)`` atomically; returns the old value."
atomic_max = intrinsic(_make_cas_extremum(False))
atomic_max.__doc__ = "``arr[idx] = max(arr[idx], val)`` atomically; returns the old value."


@njit(inline="always")
def atomic_improve(arr, idx, val, combine):
    """Store ``val`` at ``arr[idx]`` atomically when it is better: smaller (``combine`` 0) or larger
    (1).  A plain read first skips the compare-and-swap when ``val`` cannot win."""
    if combine == 0:
        if val < arr[idx]:
            atomic_min(arr, idx, val)
    elif val > arr[idx]:
        atomic_max(arr, idx, val)
