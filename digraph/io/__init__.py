"""Graph input: text edge lists, Matrix Market, networkx graphs, numpy arrays, scipy sparse matrices."""

__all__ = ["load"]


def load(source, **kwargs):
    raise NotImplementedError("digraph.load is being written")
