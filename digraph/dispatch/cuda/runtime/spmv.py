"""cuSPARSE's SpMV with its descriptors and work buffer made once (:class:`SpMV`).

``cupyx.cusparse.spmv`` makes, for every call, the matrix's descriptor, two vector descriptors,
asks cuSPARSE for the work buffer's size and allocates it, then frees all of it again; a power
round that pulls by cuSPARSE pays that host time on every GPU and every round, while the GPUs
wait for the launch.  :class:`SpMV` makes the matrix's descriptor and the buffer once, and one
vector descriptor per device buffer it is called with (the rounds swap two or three), so a call
is the single ``cusparseSpMV`` on the current stream, with the same algorithm
(``CUSPARSE_SPMV_ALG_DEFAULT``, CSR's ALG1, whose sums follow no fixed order: two calls may differ
in the last bits, as two calls of ``cupyx.cusparse.spmv`` may; the engines' rounding bounds hold
for any order).  Host time a call on an H200 (``benchmarks/ab_cusparse_spmv.py``, medians of 5 ×
200 calls): 51 → 24 µs on R-MAT 2^16, 37 → 19 µs on R-MAT 2^22.
"""

import numpy as np

__all__ = ["SpMV"]


class SpMV:
    """``y = A x`` for one CSR matrix ``mat`` (a ``cupyx.scipy.sparse.csr_matrix`` of float64,
    canonical), its cuSPARSE state made on first use and kept.

    Parameters
    ----------
    mat : cupyx.scipy.sparse.csr_matrix
        The matrix; its arrays must stay allocated (and in place) while this object lives:
        the descriptor holds their addresses.  Values may change in place between calls.
    """

    def __init__(self, mat):
        self.mat = mat
        self._state = None
        self._vectors = {}

    def _vector(self, a):
        key = (a.data.ptr, a.size)
        d = self._vectors.get(key)
        if d is None:
            from cupyx.cusparse import DnVecDescriptor
            d = self._vectors[key] = (DnVecDescriptor.create(a), a)  # a kept: the address
        return d[0].desc

    def __call__(self, x, y):
        """``y ← A x`` (float64 device vectors of lengths ``A.shape[1]`` and ``A.shape[0]``) on
        the current stream; returns ``y``."""
        if self.mat.nnz == 0:
            y.fill(0.0)
            return y
        from cupy_backends.cuda.libs import cusparse as lib
        from cupy.cuda import device
        handle = device.get_cusparse_handle()
        st = self._state
        if st is None:
            import cupy
            from cupyx.cusparse import SpMatDescriptor
            alg = getattr(lib, "CUSPARSE_SPMV_ALG_DEFAULT", None)
            if alg is None:
                alg = lib.CUSPARSE_MV_ALG_DEFAULT
            one, zero = np.array(1.0), np.array(0.0)
            desc = SpMatDescriptor.create(self.mat)
            dtype = cupy.cuda.runtime.CUDA_R_64F
            op = lib.CUSPARSE_OPERATION_NON_TRANSPOSE
            size = lib.spMV_bufferSize(handle, op, one.ctypes.data, desc.desc, self._vector(x),
                                       zero.ctypes.data, self._vector(y), dtype, alg)
            buf = cupy.empty(max(int(size), 1), cupy.int8)
            st = self._state = (desc, one, zero, dtype, alg, op, buf)
        desc, one, zero, dtype, alg, op, buf = st
        lib.spMV(handle, op, one.ctypes.data, desc.desc, self._vector(x), zero.ctypes.data,
                 self._vector(y), dtype, alg, buf.data.ptr)
        return y
