"""The statistics of a path decomposition (:meth:`digraph.PathSet.stats`): path lengths and their
lower bound, hot paths, the giant SCC-vertex, layers, the dependency graph and the partitions."""

import numpy as np

__all__ = ["decomposition_stats"]


def decomposition_stats(ps):
    """The dict of :meth:`digraph.PathSet.stats` for the PathSet ``ps`` (its keys are listed
    there)."""
    P = ps.num_paths
    m = ps.num_arcs
    n = ps.num_vertices
    lengths = ps.path_lengths
    aoff = ps.path_arc_offsets
    out = {"num_paths": P, "num_arcs": m, "num_vertices": n}
    out["mean_length"] = m / P if P else 0.0
    out["max_length"] = int(lengths.max()) if P else 0
    out["arc_weighted_mean_length"] = (float((lengths.astype(np.float64) ** 2).sum() / m)
                                       if m else 0.0)
    lb = ps.info.get("path_count_lower_bound")
    out["path_count_lower_bound"] = lb
    out["mean_length_upper_bound"] = (m / lb) if lb else None
    hot = np.asarray(ps.path_hot)
    out["hot_paths"] = int(hot.sum())
    out["hot_share"] = float(hot.mean()) if P else 0.0
    out["hot_arc_share"] = float(lengths[hot].sum() / m) if m else 0.0
    S = ps.num_scc
    out["num_scc"] = S
    out["num_junctions"] = ps.num_junctions
    if S:
        scc_paths = np.diff(ps.scc_path_offsets)
        so = np.asarray(ps.scc_path_offsets)
        scc_arcs = aoff[so[1:]] - aoff[so[:-1]]
        g = int(np.argmax(scc_arcs))
        out["giant_scc_paths"] = int(scc_paths[g])
        out["giant_scc_path_share"] = float(scc_paths[g] / P)
        out["giant_scc_arc_share"] = float(scc_arcs[g] / m)
    else:
        out["giant_scc_paths"] = 0
        out["giant_scc_path_share"] = 0.0
        out["giant_scc_arc_share"] = 0.0
    out["num_layers"] = ps.num_layers
    if ps.num_layers and m:
        s1 = int(ps.layer_scc_offsets[1])
        out["layer0_arc_share"] = float(aoff[ps.scc_path_offsets[s1]] / m)
    else:
        out["layer0_arc_share"] = 0.0
    out["dep_graph_vertices"] = P
    out["dep_graph_vertex_ratio"] = P / n if n else 0.0
    dga = ps.info.get("dep_graph_arcs")
    out["dep_graph_arcs"] = dga
    out["dep_graph_arc_ratio"] = (dga / m) if (dga is not None and m) else None
    out["dag_arcs"] = int(ps.dag_targets.size)
    K = ps.num_partitions
    out["num_partitions"] = K
    if K:
        po = np.asarray(ps.partition_offsets)
        parts = aoff[po[1:]] - aoff[po[:-1]]
        out["partition_max_arcs"] = int(parts.max())
        out["partition_mean_arcs"] = float(parts.mean())
        out["partition_balance"] = float(parts.max() / parts.mean()) if parts.mean() else 0.0
    else:
        out["partition_max_arcs"] = 0
        out["partition_mean_arcs"] = 0.0
        out["partition_balance"] = 0.0
    for k, v in ps.timings.items():
        out[f"time_{k}"] = float(v)
    return out
