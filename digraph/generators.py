"""Synthetic directed graphs for demos, tests and benchmarks.

``rmat`` is the recursive-matrix generator (Chakrabarti, Zhan & Faloutsos, "R-MAT: a recursive
model for graph mining", SDM 2004) with Graph500's parameters a=0.57, b=0.19, c=0.19 by default,
vectorised over arcs with numpy (one pass per bit of the vertex id), reproducible from ``seed``.
"""

import numpy as np

__all__ = ["rmat"]


def rmat(scale, edge_factor=16, a=0.57, b=0.19, c=0.19, seed=0):
    """Arcs of an R-MAT graph with ``2**scale`` vertex ids and ``edge_factor * 2**scale`` arcs.

    Parameters
    ----------
    scale : int
        log2 of the number of vertex ids (0 <= scale <= 40).
    edge_factor : int
        Arcs per vertex id.
    a, b, c : float
        Quadrant probabilities (d = 1 - a - b - c); Graph500 defaults.
    seed : int
        Seed of numpy's default generator.

    Returns
    -------
    src, dst : numpy.ndarray of int64
        The arcs (self-loops and parallel arcs included, as R-MAT produces them).  Ids are
        scrambled by a fixed random permutation so that hubs are not all at small ids.
    """
    from .errors import InvalidParameterError
    if not (0 <= int(scale) <= 40) or int(edge_factor) < 0:
        raise InvalidParameterError(f"rmat: need 0 <= scale <= 40 and edge_factor >= 0, got {scale}, {edge_factor}")
    if min(a, b, c) < 0 or a + b + c > 1:
        raise InvalidParameterError(f"rmat: a, b, c must be >= 0 with a + b + c <= 1, got {a}, {b}, {c}")
    scale = int(scale)
    n = 1 << scale
    m = int(edge_factor) * n
    rng = np.random.default_rng(seed)
    src = np.zeros(m, np.int64)
    dst = np.zeros(m, np.int64)
    for bit in range(scale):
        r = rng.random(m)
        down = r >= a + b            # quadrants c, d: source bit set
        right = ((r >= a) & (r < a + b)) | (r >= a + b + c)   # quadrants b, d: target bit set
        src |= down.astype(np.int64) << bit
        dst |= right.astype(np.int64) << bit
    perm = rng.permutation(n)
    return perm[src], perm[dst]
