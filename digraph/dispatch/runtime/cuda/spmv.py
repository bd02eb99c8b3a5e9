"""cuSPARSE's SpMV with its descriptors and work buffer made once (:class:`SpMV`).

``cupyx.cusparse.spmv`` makes, for every call, the matrix's descriptor, two vector descriptors,
asks cuSPARSE for the work buffer's size and allocates it, then frees all of it again; a power
round that pulls by cuSPARSE pays that host time on every GPU and every round, while the GPUs
wait for the launch.  :class:`SpMV` makes the matrix's descriptor and the buffer once, and one
vector descriptor per device buffer it is called with (the rounds swap two or three), so a call
is the single ``cusparseSpMV`` on the current stream, with the same algorithm
(``CUSPARSE_SPMV_ALG_DEFAULT``, CSR's ALG1, whose sums follow no fixed order: two calls may differ
in the last bits, as two calls of ``cupyx.cusparse.spmv`` may; the engines' rounding bounds hold
for any order).  The host time a call saves is measured by ``benchmarks/ab_cusparse_spmv.py``:
docs/history/benchmarks-notebook.md, "The last round, the answer's copies, the ranges".
"""

import numpy as np

__all__ = ["SpMV"]

MAX_VECTORS = 16
"""Vector descriptors an :class:`SpMV` keeps (a round swaps two or three buffers; a run that
allocates new vectors adds new addresses)."""


class SpMV:
    """``y = A x`` for one CSR matrix ``mat`` (a ``cupyx.scipy.sparse.csr_matrix`` of float64,
    canonical), its cuSPARSE state made on first use and kept.

    Parameters
    ----------
    mat : cupyx.scipy.sparse.csr_matrix
        The matrix (kept: its descriptor holds the addresses of its arrays).  Values may change
        in place between calls.
    """

    def __init__(self, mat):
        self.mat = mat
        self._state = None
        self._vectors = {}

    def _vector(self, a):
        """The descriptor of vector ``a``: it holds only the address, length and type, so it is
        kept by those (not with the array: a run's vectors are freed when the run ends) and
        made again for a new address; at most :data:`MAX_VECTORS` are kept."""
        key = (a.data.ptr, a.size, a.dtype.str)
        d = self._vectors.get(key)
        if d is None:
            from cupyx.cusparse import DnVecDescriptor
            if len(self._vectors) >= MAX_VECTORS:
                self._vectors.clear()
            d = self._vectors[key] = DnVecDescriptor.create(a)
        return d  # the caller holds it through the call: a clear() must not free it before

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
            dx, dy = self._vector(x), self._vector(y)
            size = lib.spMV_bufferSize(handle, op, one.ctypes.data, desc.desc, dx.desc,
                                       zero.ctypes.data, dy.desc, dtype, alg)
            buf = cupy.empty(max(int(size), 1), cupy.int8)
            st = self._state = (desc, one, zero, dtype, alg, op, buf)
        desc, one, zero, dtype, alg, op, buf = st
        dx, dy = self._vector(x), self._vector(y)
        lib.spMV(handle, op, one.ctypes.data, desc.desc, dx.desc, zero.ctypes.data, dy.desc,
                 dtype, alg, buf.data.ptr)
        return y
