"""The modes, and the options only some of them take (a leaf of the router)."""

__all__ = ["MODES", "PATH_MODES", "PATH_OPTIONS", "CPU_PATH_OPTIONS", "pathset_key"]

MODES = ("scc", "power", "path", "path-nopriority", "vertex-async", "bsp", "peel", "cluster")

PATH_MODES = ("path", "path-nopriority")

#: ``digraph.run``'s options that only the path modes take (``priority`` the ``scc`` mode too)
PATH_OPTIONS = ("cache", "preprocess", "short_path_push", "layer_window", "priority")
#: those of them that only the CPU's path modes take
CPU_PATH_OPTIONS = ("short_path_push", "layer_window")


def pathset_key(params=None):
    """The key of the PathSet a graph keeps for the path modes' ``preprocess=`` parameters
    (``jobs`` does not change it)."""
    return ("pathset", repr(sorted((k, v) for k, v in (params or {}).items() if k != "jobs")))
