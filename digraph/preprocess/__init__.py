"""digraph.preprocess: parallel CPU preprocessing of a graph into paths (DiGraph section 3.2.1).

Stages (each timed in ``PathSet.timings``):

``decompose``  Algorithm 1 per subgraph (vertex ranges balanced by arc count) on joblib threads
               running Numba kernels (:mod:`.decompose`);
``merge``      head-to-tail merging of short paths, paper's constraint or Euler-style trails, with a
               length cap (:mod:`.merge`);
``label``      hot/cold labels by mean vertex degree (:mod:`.partition`);
``scc``        SCCs of the path dependency graph, built through the vertices, with a local Tarjan
               per subgraph in parallel and a global one over the contracted result (:mod:`.dag`);
``dag``        DAG sketch, layers and the order of SCC-vertices (:mod:`.dag`);
``order``      storage order of the paths and partitions (:mod:`.partition`).

Results never depend on ``jobs``.  Entry points: :func:`preprocess`, :func:`load_or_build`.

Speed and memory: every stage is a few linear passes in Numba over int32 temporaries
where the ids fit; sorts are counting sorts or an LSD radix sort (no argsort of paths); the storage
order is applied by scattering each path once (sequential reads) instead of gathering by path; and
the large scratch arrays of one call come from a :class:`._parallel.Workspace` that hands buffers
released by one stage to the next, because faulting in and zeroing fresh pages cost as much system
time as the kernels' user time.  Measured: ``docs/history/benchmarks-notebook.md``,
"Preprocessing".
"""

import math

import numpy as np

from ..compiling import seconds as compile_seconds, work_clock
from ..errors import InvalidParameterError, short_repr
from ..interrupts import check as _check_interrupt, deferring
from .errors import CacheError
from ._parallel import Workspace, resolve_jobs

__all__ = ["preprocess", "load_or_build", "PathSet", "CacheError", "DEFAULTS"]

#: Default parameters (those that decide the result; ``jobs`` does not).
DEFAULTS = {
    "dmax": 16,
    "merge": "constrained",
    "max_path_length": 16,
    "hot_ratio": 0.1,
    "partition_arcs": 4096,
    "subgraph_arcs": 1 << 18,
}


def __getattr__(name):  # PathSet lives in digraph.paths, which imports this package's errors
    if name == "PathSet":
        from ..paths.pathset import PathSet
        return PathSet
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def check_params(dmax, merge, max_path_length, hot_ratio, partition_arcs, subgraph_arcs):
    """The preprocessing parameters, checked: a dict of them (``max_path_length`` 0 becomes None),
    or :class:`InvalidParameterError` naming the parameter and the value.

    Counts are integers from 1 to ``2**63 - 1`` (bools, floats, text and larger values are refused:
    the kernels hold them in int64), ``merge`` one of ``MERGE_MODES``, ``hot_ratio`` a real
    number in [0, 1].
    """
    from .merge import MERGE_MODES

    limit = 2**63 - 1

    def posint(name, v, allow_none=False):
        if v is None and allow_none:
            return None
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise InvalidParameterError(f"{name} must be an integer, got {short_repr(v)}")
        if v < 1 and not (allow_none and v == 0):
            raise InvalidParameterError(f"{name} must be >= 1, got {short_repr(v)}")
        if v > limit:
            raise InvalidParameterError(f"{name} must be at most 2**63 - 1, got {short_repr(v)}")
        return int(v)

    dmax = posint("dmax", dmax)
    if not isinstance(merge, str) or merge not in MERGE_MODES:
        raise InvalidParameterError(f"merge must be one of {sorted(MERGE_MODES)}, got "
                                    f"{short_repr(merge)}")
    max_path_length = posint("max_path_length", max_path_length, allow_none=True) or None
    try:
        if isinstance(hot_ratio, (bool, np.bool_, str, bytes)):
            raise TypeError
        hot_ratio = float(hot_ratio)
    except (TypeError, ValueError, OverflowError):
        raise InvalidParameterError(
            f"hot_ratio must be a number in [0, 1], got {short_repr(hot_ratio)}") from None
    if not (0.0 <= hot_ratio <= 1.0) or math.isnan(hot_ratio):
        raise InvalidParameterError(f"hot_ratio must be in [0, 1], got {hot_ratio}")
    partition_arcs = posint("partition_arcs", partition_arcs)
    subgraph_arcs = posint("subgraph_arcs", subgraph_arcs)
    return {"dmax": dmax, "merge": merge, "max_path_length": max_path_length,
            "hot_ratio": hot_ratio, "partition_arcs": partition_arcs,
            "subgraph_arcs": subgraph_arcs}


@deferring
def preprocess(graph, *, dmax=DEFAULTS["dmax"], merge=DEFAULTS["merge"],
               max_path_length=DEFAULTS["max_path_length"], hot_ratio=DEFAULTS["hot_ratio"],
               jobs=None, partition_arcs=DEFAULTS["partition_arcs"],
               subgraph_arcs=DEFAULTS["subgraph_arcs"]):
    """Decompose ``graph`` into paths with hot labels, DAG sketch, layers and partitions.

    Parameters
    ----------
    graph : digraph.Graph
    dmax : int, default 16
        Depth bound ``D_MAX`` of Algorithm 1: no decomposed path is longer than ``dmax`` arcs.
    merge : {"constrained", "trails", "none"}, default "constrained"
        Head-to-tail merging: the paper's rule (no merge through a junction vertex that is inner
        to another path), unconstrained Euler-style trails, or none.
    max_path_length : int or None, default 16
        Cap on the arcs of a merged path (None: no cap; long paths are a latency trap on GPUs).
    hot_ratio : float in [0, 1], default 0.1
        Share of paths labelled hot: those of highest mean vertex degree.
    jobs : int or None
        Worker threads (None: every core).  The result does not depend on it.
    partition_arcs : int, default 4096
        Arc budget of a partition (one CUDA block of 256 threads x 16 arcs, or one CPU task).
    subgraph_arcs : int, default 262144
        Arcs per subgraph (vertex range) of the parallel decomposition and local Tarjan.

    Returns
    -------
    digraph.PathSet

    Raises
    ------
    InvalidParameterError
        A parameter out of range.

    Examples
    --------
    >>> from digraph.graph import Graph
    >>> g = Graph.from_arrays([0, 1, 2, 2], [1, 2, 0, 3])
    >>> ps = preprocess(g)
    >>> ps.num_arcs, ps.num_paths >= 1
    (4, True)
    """
    from ..paths.pathset import PathSet
    from .dag import build_dag
    from .decompose import decompose
    from .merge import merge_paths
    from .partition import hot_labels, partitions, path_heat, storage_layout

    params = check_params(dmax, merge, max_path_length, hot_ratio, partition_arcs, subgraph_arcs)
    jobs = resolve_jobs(jobs)
    timings = {}
    c_all = compile_seconds()
    t_all = work_clock()  # stage times without Numba's compilation (timings['compile'])
    t = work_clock()
    n = graph.num_vertices
    m = graph.num_arcs
    in_deg = graph.in_degree
    out_deg = graph.out_degree
    degree = in_deg + out_deg
    lower_bound = int(np.maximum(out_deg - in_deg, 0).sum())
    ws = Workspace()      # scratch buffers reused between stages (see _parallel.Workspace)
    off, verts, arcs, ranges = decompose(graph, dmax=params["dmax"], jobs=jobs,
                                         subgraph_arcs=params["subgraph_arcs"], degree=degree,
                                         ws=ws)
    timings["decompose"] = work_clock() - t
    # a Ctrl-C is raised between stages, never inside a kernel (digraph.interrupts)
    _check_interrupt()
    decomposed_paths = int(off.size - 1)

    t = work_clock()
    moff, mverts, marcs = merge_paths(off, verts, arcs, n, in_deg, out_deg, mode=params["merge"],
                                      max_path_length=params["max_path_length"], ws=ws)
    for old, new in ((off, moff), (verts, mverts), (arcs, marcs)):
        if new is not old:
            ws.release(old)
    off, verts, arcs = moff, mverts, marcs
    del moff, mverts, marcs
    timings["merge"] = work_clock() - t
    _check_interrupt()

    t = work_clock()
    heat = path_heat(off, verts, degree.astype(np.int32) if m < 2**30 else degree, jobs, ws=ws)
    hot = hot_labels(heat, params["hot_ratio"], ws=ws)
    timings["label"] = work_clock() - t
    _check_interrupt()

    d = build_dag(graph, off, verts, ranges, jobs, ws=ws)
    timings.update(d["timings"])
    _check_interrupt()

    t = work_clock()
    nscc = d["num_scc"]
    scc_layer = d["scc_layer"]
    noff, nverts, narcs, path_heat_, path_scc, path_hot, path_layer, scc_off = storage_layout(
        off, verts, arcs, heat, d.pop("path_scc"), nscc, hot, scc_layer, n, jobs, ws=ws,
        consume=True)
    off, verts, arcs = noff, nverts, narcs
    del noff, nverts, narcs
    num_layers = int(scc_layer[-1]) + 1 if nscc else 0
    layer_scc_offsets = np.searchsorted(scc_layer, np.arange(num_layers + 1),
                                        side="left").astype(np.int64)
    part = partitions(off, path_scc, path_hot, scc_layer, scc_off,
                      np.int64(params["partition_arcs"]))
    timings["order"] = work_clock() - t
    timings["total"] = work_clock() - t_all
    timings["compile"] = compile_seconds() - c_all

    arrays = {
        "path_offsets": off, "path_vertices": verts, "path_arc_ids": arcs, "path_hot": path_hot,
        "path_heat": path_heat_, "path_scc": path_scc, "path_layer": path_layer,
        "scc_path_offsets": scc_off, "scc_layer": scc_layer, "scc_succ_paths": d["scc_succ_paths"],
        "layer_scc_offsets": layer_scc_offsets, "dag_offsets": d["dag_offsets"],
        "dag_targets": d["dag_targets"], "junction_vertex": d["junction_vertex"],
        "junction_layer": d["junction_layer"], "partition_offsets": part,
    }
    info = {
        "path_count_lower_bound": lower_bound,
        "decomposed_paths": decomposed_paths,
        "subgraphs": int(ranges.size - 1),
        "dep_graph_arcs": d["dep_graph_arcs"],
        "vertex_sccs": d["vertex_sccs"],
        "local_sccs": d["local_sccs"],
        "sketch_raw_arcs": d["sketch_raw_arcs"],
        "acyclic": d["acyclic"],
        "jobs": jobs,
    }
    return PathSet(arrays=arrays, num_vertices=n, num_arcs=m, num_scc=nscc, params=params,
                   graph_fingerprint=graph.fingerprint(), info=info, timings=timings)


def load_or_build(graph, cache_dir, rebuild=False, *, jobs=None, **params):
    """The cached :class:`PathSet` of ``graph`` in ``cache_dir``, built (and saved) when needed.

    A cache from another graph, engine version or with other parameters is rebuilt (and replaced);
    ``rebuild=True`` always rebuilds.  ``cache_dir`` must be new, empty or a digraph cache: a
    regular file or a folder of other files raises :class:`CacheError` and is left untouched.
    Parameters are those of :func:`preprocess`.

    Returns
    -------
    digraph.PathSet
    """
    from ..paths.pathset import PathSet

    full = dict(DEFAULTS)
    full.update(params)
    checked = check_params(**full)
    if not rebuild:
        try:
            return PathSet.load(cache_dir, graph=graph, expect_params=checked)
        except CacheError:
            pass
    from ..paths import cache_folder
    cache_folder.check_writable(cache_dir)  # refuse a user's folder before the work
    ps = preprocess(graph, jobs=jobs, **checked)
    ps.save(cache_dir)
    return ps
