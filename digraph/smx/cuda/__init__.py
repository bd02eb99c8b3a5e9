"""Numba CUDA kernels, one module per engine's work; :mod:`.kernels` is their index by name."""
