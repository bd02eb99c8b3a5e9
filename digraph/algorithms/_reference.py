"""Slow, simple reference solvers used by the algorithms' ``reference`` methods and the tests."""

import numpy as np


def coefficient_matrix(graph, system):
    """``A`` of a :class:`~digraph.algorithms.base.LinearSystem` as a scipy CSR matrix (row = target)."""
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
    """Exact solution of ``x = b + A x`` by a sparse LU solve (SuperLU)."""
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla
    n = graph.num_vertices
    if n == 0:
        return np.zeros(0)
    a = coefficient_matrix(graph, system)
    m = (sp.identity(n, format="csc") - a.tocsc()).tocsc()
    return spla.spsolve(m, np.asarray(system.b, float))
