"""Metadata of the digraph networkx backend: :mod:`digraph_nx_info`, re-exported.

The entry point names the top-level module, which ``import networkx`` loads without the package.
"""

from digraph_nx_info import FUNCTIONS, get_info

__all__ = ["get_info", "FUNCTIONS"]
