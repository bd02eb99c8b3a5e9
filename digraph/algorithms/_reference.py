"""Slow, simple reference solvers used by the algorithms' ``reference`` methods and the tests."""

import numpy as np


def coefficient_matrix(graph, system):
    """``A`` of a :class:`~.base.LinearSystem` as a scipy CSR matrix (row = target)."""
    import scipy.sparse as sp
    n, m = graph.num_vertices, graph.num_arcs
    src, dst = graph.arc_sources, graph.out_targets
    c = np.ones(m) if system.arc_scale is None else np.asarray(system.arc_scale, float).copy()
    if system.src_scale is not None:
        c = c * system.src_scale[src]
    if system.dst_scale is not None:
        c = c * system.dst_scale[dst]
    return sp.csr_array((c, (dst, src)), shape=(n, n))


def solve_linear_system(graph, system):
    """Exact solution of ``x = b + A x`` by a sparse LU solve (SuperLU); with a dangling vector,
    of ``x = b + A x + d (gᵀ x)`` by Sherman–Morrison on the same factorisation."""
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla
    n = graph.num_vertices
    if n == 0:
        return np.zeros(0)
    a = coefficient_matrix(graph, system)
    m = (sp.identity(n, format="csc") - a.tocsc()).tocsc()
    b = np.asarray(system.b, float)
    if getattr(system, "dangling", None) is None or system.dangling_scale is None:
        return spla.spsolve(m, b)
    lu = spla.splu(m)
    d, g = np.asarray(system.dangling, float), np.asarray(system.dangling_scale, float)
    y, z = lu.solve(b), lu.solve(d)
    return y + z * (g @ y) / (1.0 - g @ z)
