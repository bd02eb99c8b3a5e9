"""Algorithms: PageRank, adsorption, SSSP, k-core, and the interface to write your own.

``get(name)`` returns the built-in algorithm object for a name; ``digraph.run`` accepts a name or
any :class:`Algorithm` instance (user-defined ones included).
"""

from ..errors import InvalidParameterError
from .adsorption import Adsorption
from .base import (REQUIRED, Algorithm, HIndexSystem, LinearSystem, MonotoneSystem)
from .kcore import KCore
from .pagerank import PageRank
from .sssp import SSSP

__all__ = ["Algorithm", "LinearSystem", "MonotoneSystem", "HIndexSystem", "REQUIRED",
           "PageRank", "Adsorption", "SSSP", "KCore", "get", "BUILTIN"]

BUILTIN = {"pagerank": PageRank, "adsorption": Adsorption, "sssp": SSSP, "kcore": KCore}
_ALIASES = {"k-core": "kcore", "core_number": "kcore", "pr": "pagerank",
            "shortest_paths": "sssp", "dijkstra": "sssp"}


def get(algorithm):
    """The algorithm object for a name (case-insensitive, a few aliases) or an Algorithm
    instance."""
    if isinstance(algorithm, Algorithm):
        return algorithm
    if isinstance(algorithm, type) and issubclass(algorithm, Algorithm):
        return algorithm()
    if isinstance(algorithm, str):
        key = algorithm.strip().lower()
        key = _ALIASES.get(key, key)
        if key in BUILTIN:
            return BUILTIN[key]()
    raise InvalidParameterError(
        f"unknown algorithm {algorithm!r}; built-in: {', '.join(sorted(BUILTIN))} "
        "(or pass a digraph.algorithms.Algorithm instance)")
