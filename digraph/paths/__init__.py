"""digraph.paths: the path representation (PTable, E_Idx, arc ids), hot labels, DAG sketch,
cache."""

from .pathset import PathSet

__all__ = ["PathSet"]
