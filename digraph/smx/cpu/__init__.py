"""Numba CPU kernels, one module per engine's work (``@njit(cache=True)``, parallel loops over
Numba's threads)."""
