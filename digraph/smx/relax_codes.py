"""The codes of a min/max system's relax operation (:data:`digraph.algorithms.base.RELAX_OPS`),
defined once for the CPU kernels (:mod:`~.cpu.bsp` and those importing its ``relax``) and the CUDA
kernels (:mod:`~.cuda.kernels`); :data:`digraph.dispatch.systems.RELAX_CODES` maps the names to
them.  Numba compiles them in as constants."""

__all__ = ["PLUS", "MIN", "MAX", "TIMES", "FIRST"]

PLUS, MIN, MAX, TIMES, FIRST = 0, 1, 2, 3, 4
