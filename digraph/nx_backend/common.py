"""Helpers shared by the modules of the networkx backend: the backend's name, the keywords of
:func:`digraph.run` that pass through (``mode``, ``device``, ``threads``) and how they are read,
and the mapping of per-vertex results back to a dict keyed by the original node objects.
"""

import networkx as nx

BACKEND = "digraph"
RUN_KEYWORDS = ("mode", "device", "threads")


def run_kwargs(name, backend_kwargs):
    """The keywords for :func:`digraph.run`: given ones, else ``nx.config.backends.digraph``."""
    unknown = sorted(set(backend_kwargs) - set(RUN_KEYWORDS))
    if unknown:
        raise TypeError(f"{name}() got unexpected keyword argument(s) {', '.join(unknown)} "
                        f"(the digraph backend accepts {', '.join(RUN_KEYWORDS)})")
    try:
        cfg = nx.config.backends[BACKEND]
    except (KeyError, AttributeError, TypeError):
        cfg = None
    out = {}
    for k in RUN_KEYWORDS:
        v = backend_kwargs.get(k, cfg.get(k) if cfg is not None else None)
        if v is not None:
            out[k] = v
    return out


def keyed(g, idx, values):
    """{node: value} for internal indices ``idx`` (original node objects as keys)."""
    return dict(zip(g.nodes[idx].tolist(), values))
