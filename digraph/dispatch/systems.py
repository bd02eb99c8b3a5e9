"""The arrays the kernels of every mode take from an algorithm's system, prepared in one place."""

import numpy as np

from ..algorithms.base import RELAX_OPS
from ..errors import InvalidParameterError

__all__ = ["ones_or", "linear_factors", "monotone_arrays", "monotone_start", "stored_field",
           "undirected_adjacency", "RELAX_CODES"]

RELAX_CODES = dict(RELAX_OPS)
"""Kernel codes of :data:`digraph.algorithms.base.RELAX_OPS` (defined once, in
:mod:`digraph.smx.relax_codes`, for the CPU and the CUDA kernels)."""


def ones_or(a, n):
    """``a`` as a contiguous float64 array, or ones of length ``n`` when ``a`` is None."""
    return np.ones(n, np.float64) if a is None else np.ascontiguousarray(a, dtype=np.float64)


def linear_factors(graph, system):
    """(src_scale, dst_scale, has_arc, arc_scale) of a linear system as the kernels take them:
    ones for a missing vertex factor, an empty ``arc_scale`` with ``has_arc=False`` when every arc
    factor is 1 (CSR order otherwise)."""
    n, m = graph.num_vertices, graph.num_arcs
    has_arc = system.arc_scale is not None
    arc = ones_or(system.arc_scale, m) if has_arc else np.empty(0, np.float64)
    return ones_or(system.src_scale, n), ones_or(system.dst_scale, n), has_arc, arc


def monotone_arrays(graph, system):
    """(relax code, combine code, has_value, arc_value) of a monotone system (``combine``: 0 = min,
    1 = max; ``arc_value`` in CSR order, empty when every arc value is 1)."""
    has_value = system.arc_value is not None
    value = ones_or(system.arc_value, graph.num_arcs) if has_value else np.empty(0, np.float64)
    return RELAX_CODES[system.relax], 0 if system.combine == "min" else 1, has_value, value


def monotone_start(system, n):
    """(initial values, initially active mask) of a monotone system, checked."""
    x = np.ascontiguousarray(system.init, dtype=np.float64).copy()
    if x.shape != (n,):
        raise InvalidParameterError(f"init must have one value per vertex ({n}), got shape "
                                    f"{x.shape}")
    active = np.zeros(n, dtype=np.bool_)
    if system.frontier is None:
        identity = np.inf if system.combine == "min" else -np.inf
        active[:] = x != identity
    else:
        active[np.asarray(system.frontier, dtype=np.int64)] = True
    return x, active


def stored_field(system, name):
    """``system.<name>`` as stored: a :class:`~digraph.algorithms.base.DegreeScaledSystem`'s
    vector not yet made stays unmade (reading it would build ``b`` and ``src_scale`` on the host,
    in a GPU run that makes them on the device)."""
    stored = vars(system).get("_" + name, vars(system).get(name)) if hasattr(system, "__dict__") \
        else None
    return stored if stored is not None else getattr(system, name, None)


def undirected_adjacency(graph):
    """(offsets, neighbours) of the undirected multigraph of the arcs, self-loops removed
    (cached)."""
    from ..smx.cpu.bsp import undirected_neighbours
    return graph._cached("undirected", lambda: undirected_neighbours(
        graph.out_offsets, graph.out_targets, graph.in_offsets, graph.in_sources))
