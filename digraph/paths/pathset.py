"""The path representation of a graph (DiGraph section 3.2.1) and its on-disk cache.

A :class:`PathSet` holds contiguous numpy arrays that can be cached, memory-mapped and copied to a
GPU in one piece:

==================== =================== ===========================================================
array                dtype / length      meaning
==================== =================== ===========================================================
path_offsets         int64, P+1          PTable: path ``p`` is
                                         ``path_vertices[path_offsets[p]:path_offsets[p+1]]``
path_vertices        graph's index dtype E_Idx: internal vertex ids; consecutive entries of one
                                         path form an arc
path_arc_ids         int64, m            CSR index of each arc; path ``p``'s arcs are
                                         ``path_arc_ids[path_offsets[p]-p : path_offsets[p+1]-p-1]``
                                         (``E_val = graph.arc_weights()[path_arc_ids]``)
path_hot             bool, P             hot path flag (see :mod:`digraph.preprocess.partition`)
path_heat            float64, P          mean vertex degree of the path (``D̄(p)`` of ``Pri(p)``)
path_scc             int64, P            SCC-vertex of the path (non-decreasing in storage order)
path_layer           int64, P            layer of the path's SCC-vertex
scc_path_offsets     int64, S+1          paths of SCC-vertex ``s``:
                                         ``scc_path_offsets[s]:scc_path_offsets[s+1]``
scc_layer            int64, S            layer of each SCC-vertex (non-decreasing)
scc_succ_paths       int64, S            paths in the direct successor SCC-vertices
layer_scc_offsets    int64, layers+1     SCC-vertices of layer ``l``: ``layer_scc_offsets[l]:[l+1]``
dag_offsets          int64, S+J+1        DAG sketch CSR over SCC-vertices ``0..S-1`` then junctions
dag_targets          int64               (junctions ``S..S+J-1`` hold no path, see
                                         :mod:`digraph.preprocess.dag`)
junction_vertex      int64, J            the graph vertex each junction stands for
junction_layer       int64, J            layer of each junction (= max layer of its predecessors)
partition_offsets    int64, parts+1      partition ``k`` = paths ``partition_offsets[k]:[k+1]``
==================== =================== ===========================================================

Storage order: SCC-vertices by layer, then descending successor paths; inside an SCC-vertex hot
paths first, then by tail vertex; partitions are contiguous ranges of that order.
"""

import contextlib
import os
import time
from pathlib import Path

import numpy as np

from ..interrupts import deferring
from ..version import __version__
from ..preprocess.errors import CacheError
from . import cache_folder, validate
from .pathset_stats import decomposition_stats

__all__ = ["PathSet", "FORMAT_VERSION", "PREPROCESS_VERSION"]

#: 3: a CRC-32 per array file in the manifest; 2: arrays in a generation folder named by the
#: manifest (1: beside the manifest).  Older caches are rebuilt.
FORMAT_VERSION = 3
#: Bumped whenever the preprocessing algorithm changes its output for the same parameters.
PREPROCESS_VERSION = 1

ARRAYS = (
    "path_offsets", "path_vertices", "path_arc_ids", "path_hot", "path_heat", "path_scc",
    "path_layer",
    "scc_path_offsets", "scc_layer", "scc_succ_paths", "layer_scc_offsets",
    "dag_offsets", "dag_targets", "junction_vertex", "junction_layer", "partition_offsets",
)

MANIFEST = cache_folder.MANIFEST


def _current_generation(directory):
    """The generation named by the manifest in ``directory`` (None when there is none)."""
    try:
        gen = cache_folder.read_json(Path(directory) / MANIFEST).get("generation")
    except (OSError, CacheError, AttributeError):
        return None
    return gen if isinstance(gen, str) else None


def _tidy(directory):
    """Delete what an interrupted writer left in ``directory`` (never blocks, never a user's file).

    Only in a folder whose marker and manifest carry the same folder id, and keeping the generation
    the manifest names *now*, read under the writer lock: a writer may have replaced the cache
    since this reader read it, and the generation it read is then the stale one.
    """
    fid = cache_folder.folder_id(directory)
    if fid is None:
        return
    with cache_folder.try_writer_lock(directory) as locked:
        if not locked:
            return
        try:
            man = cache_folder.read_json(Path(directory) / MANIFEST)
        except (OSError, CacheError):
            return
        gen = man.get("generation") if isinstance(man, dict) else None
        if isinstance(gen, str) and man.get("folder") == fid:
            cache_folder.remove_stale(directory, gen, ARRAYS)


def engine_version():
    """``digraph.__version__``, the engine version a manifest records and a reader requires."""
    return __version__


def _jsonable(x):
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, float) and not np.isfinite(x):
        return None
    return x


class PathSet:
    """Paths of a graph with hot labels, DAG sketch, layers and partitions.

    Build with :func:`digraph.preprocess`; reload with :meth:`PathSet.load`.

    Attributes
    ----------
    (arrays: see the module table)
    num_vertices, num_arcs : int
        Size of the graph the paths were built from.
    num_scc : int
        Number of SCC-vertices (the DAG sketch has ``num_scc + num_junctions`` nodes).
    params : dict
        Preprocessing parameters (those that decide the result).
    graph_fingerprint : str
        :meth:`digraph.Graph.fingerprint` of the source graph.
    info : dict
        Scalars measured at build time (bounds, dependency-graph sizes).
    timings : dict
        Seconds per stage of the build (``load`` when reloaded from a cache).
    """

    def __init__(self, *, arrays, num_vertices, num_arcs, num_scc, params, graph_fingerprint,
                 info=None, timings=None):
        missing = [a for a in ARRAYS if a not in arrays]
        if missing:
            raise ValueError(f"PathSet is missing arrays {missing}")
        for name in ARRAYS:
            setattr(self, name, arrays[name])
        self.num_vertices = int(num_vertices)
        self.num_arcs = int(num_arcs)
        self.num_scc = int(num_scc)
        self.params = dict(params)
        self.graph_fingerprint = str(graph_fingerprint)
        self.info = dict(info or {})
        self.timings = dict(timings or {})

    # ------------------------------------------------------------------ shape
    @property
    def num_paths(self):
        return int(self.path_offsets.size - 1)

    @property
    def num_junctions(self):
        return int(self.junction_vertex.size)

    @property
    def num_layers(self):
        return int(self.layer_scc_offsets.size - 1)

    @property
    def num_partitions(self):
        return int(self.partition_offsets.size - 1)

    @property
    def path_lengths(self):
        """Number of arcs of each path (int64)."""
        return np.diff(self.path_offsets) - 1

    @property
    def path_arc_offsets(self):
        """Offsets of each path's arcs into ``path_arc_ids`` (int64, P+1)."""
        return self.path_offsets - np.arange(self.path_offsets.size, dtype=np.int64)

    def arc_ends(self):
        """(sources, targets) of every arc in path order: arc ``j`` of path ``p`` is
        ``path_offsets[p] − p + i`` (int arrays of length m)."""
        pv = np.asarray(self.path_vertices)
        po = np.asarray(self.path_offsets)
        first = np.zeros(pv.size, bool)
        first[po[:-1]] = True  # a path's first vertex is no arc's target
        last = np.zeros(pv.size, bool)
        last[po[1:] - 1] = True  # a path's last vertex is no arc's source
        return pv[~last], pv[~first]

    def arrays(self):
        """Dict name -> array of every stored array."""
        return {name: getattr(self, name) for name in ARRAYS}

    def path(self, p):
        """Vertex ids (internal) of path ``p``."""
        return np.asarray(self.path_vertices[self.path_offsets[p]:self.path_offsets[p + 1]])

    def arc_values(self, graph):
        """``E_val``: the graph's arc weights in path order (ones when unweighted)."""
        return graph.arc_weights()[self.path_arc_ids]

    # ------------------------------------------------------------------ statistics
    def stats(self):
        """Statistics of the decomposition (a dict of plain Python numbers).

        Keys: ``num_paths``, ``num_arcs``, ``num_vertices``, ``mean_length``, ``max_length``,
        ``arc_weighted_mean_length`` (mean length of the path an arc lies on),
        ``path_count_lower_bound`` (Σ_v max(0, outdeg − indeg): no arc-disjoint decomposition has
        fewer paths) and ``mean_length_upper_bound`` (m / that bound, None when it is 0),
        ``hot_paths``, ``hot_share`` (of paths), ``hot_arc_share``, ``num_scc``, ``num_junctions``,
        ``giant_scc_paths``, ``giant_scc_path_share``, ``giant_scc_arc_share``, ``num_layers``,
        ``layer0_arc_share``, ``dep_graph_vertices`` (= paths) and ``dep_graph_vertex_ratio`` (/ n),
        ``dep_graph_arcs`` (arcs of the vertex dependency graph D, see
        :mod:`digraph.preprocess.dag`) and ``dep_graph_arc_ratio`` (/ m), ``dag_arcs``,
        ``num_partitions``, ``partition_max_arcs``, ``partition_mean_arcs``, ``partition_balance``
        (max / mean), and ``time_<stage>`` for each timed stage plus ``time_total`` (seconds,
        Numba's compilation left out: it is ``time_compile``, so a cache's times do not depend
        on whether its build compiled the kernels).
        """
        return decomposition_stats(self)

    def __repr__(self):
        return (f"<digraph.PathSet: {self.num_paths} paths over {self.num_arcs} arcs, "
                f"{self.num_scc} SCC-vertices in {self.num_layers} layers, {self.num_partitions} "
                "partitions>")

    # ------------------------------------------------------------------ cache
    def manifest(self):
        """The manifest dict written by :meth:`save`."""
        return {
            "format": "digraph-pathset",
            "format_version": FORMAT_VERSION,
            "engine_version": engine_version(),
            "preprocess_version": PREPROCESS_VERSION,
            "graph_fingerprint": self.graph_fingerprint,
            "num_vertices": self.num_vertices,
            "num_arcs": self.num_arcs,
            "num_scc": self.num_scc,
            "params": _jsonable(self.params),
            "info": _jsonable(self.info),
            "timings": _jsonable(self.timings),
            "stats": _jsonable(self.stats()),
            "arrays": {name: {"dtype": str(np.asarray(a).dtype), "shape": list(np.shape(a))}
                       for name, a in self.arrays().items()},
        }

    def save(self, directory):
        """Write the cache folder ``directory`` (created when absent), replacing the cache there.

        The arrays go into a new generation folder ``directory/arrays-<id>/`` (each file fsynced),
        then ``manifest.json``, which names that generation, is swapped in with ``os.replace``: a
        reader or a crash sees the old cache or the new one, never a mix, never an empty folder.
        The replaced generation (and any left by an earlier crash) is then deleted.  Writers of one
        folder take turns (a lock file ``.lock``).  A folder is written only when it is new, empty
        or marked as a digraph cache (``.digraph-cache``, written first; its random id is kept in
        the manifest as ``"folder"``).  See :mod:`digraph.paths.cache_folder`.

        Raises
        ------
        CacheError
            ``directory`` exists but is not a digraph cache (a regular file, or a folder holding
            other files, even files named like a cache's): nothing there is touched.

        Returns
        -------
        pathlib.Path
        """
        directory = Path(directory)
        cache_folder.check_writable(directory)
        created = not os.path.lexists(directory)
        directory.mkdir(parents=True, exist_ok=True)
        marked = {"written": False}
        try:
            self._save_locked(directory, marked)
        except BaseException:
            if created or marked["written"] and not (directory / MANIFEST).exists():
                # a first write that failed: the folder goes back to what it was
                cache_folder.remove_marker(directory)
            if created:  # leave nothing where nothing was
                with contextlib.suppress(OSError):
                    (directory / cache_folder.LOCK).unlink()
                    directory.rmdir()
            raise
        return directory

    def _save_locked(self, directory, marked):
        with cache_folder.writer_lock(directory):
            cache_folder.check_writable(directory)  # again: another process may have won
            fid, marked["written"] = cache_folder.ensure_marker(directory)
            gen = cache_folder.new_generation()
            gdir = cache_folder.generation_dir(directory, gen)
            try:
                gdir.mkdir()
                crcs = {}
                for name, a in self.arrays().items():
                    a = np.ascontiguousarray(a)
                    with open(gdir / f"{name}.npy", "w+b") as f:
                        np.save(f, a, allow_pickle=False)
                        f.flush()
                        fd = f.fileno()
                        header = os.pread(fd, os.fstat(fd).st_size - a.nbytes, 0)
                        crcs[name] = validate.crc32_file_parts(header, a)
                        os.fsync(fd)
                man = self.manifest()
                for name, crc in crcs.items():
                    man["arrays"][name]["crc32"] = crc
                man["generation"] = gen
                man["folder"] = fid
                cache_folder.write_manifest(directory, man)
            except BaseException:
                cache_folder.remove_stale(directory, _current_generation(directory), ARRAYS)
                raise
            cache_folder.remove_stale(directory, gen, ARRAYS)

    @staticmethod
    def array_files(directory):
        """Dict name -> path of each array file of the cache in ``directory`` (from its
        manifest)."""
        man = PathSet.read_manifest(directory)
        gdir = cache_folder.generation_dir(directory, man.get("generation"))
        return {name: gdir / f"{name}.npy" for name in ARRAYS}

    @staticmethod
    def read_manifest(directory):
        """The manifest of a cache folder (raises :class:`CacheError` when absent or unreadable)."""
        path = Path(directory) / MANIFEST
        try:
            man = cache_folder.read_json(path)
        except (FileNotFoundError, NotADirectoryError):
            raise CacheError(f"{directory}: not a path cache (no {MANIFEST})") from None
        except OSError as e:
            raise CacheError(f"{path}: unreadable manifest ({e.strerror or e})") from None
        if not isinstance(man, dict) or man.get("format") != "digraph-pathset":
            raise CacheError(f"{path}: not a digraph path cache manifest")
        return man

    @classmethod
    @deferring
    def load(cls, directory, graph=None, expect_params=None, *, mmap=True):
        """Load a cache written by :meth:`save` (arrays memory-mapped, read-only).

        Parameters
        ----------
        directory : str or path
        graph : digraph.Graph, optional
            When given, the cache must have been built from this graph (same fingerprint).
        expect_params : dict, optional
            When given, every listed parameter must equal the cached one.
        mmap : bool
            Memory-map the arrays (``mmap_mode="r"``); False reads them into memory.

        Raises
        ------
        CacheError
            No cache there, another format / engine / preprocessing version, another graph, other
            parameters, or a missing / damaged array; the message names what differs.  A cache is
            untrusted input: the manifest, every file (regular, header, size, CRC-32) and the
            structure are checked before anything is returned (:mod:`digraph.paths.validate`).
        """
        t0 = time.perf_counter()
        directory = Path(directory)
        for attempt in range(3):
            man = cls.read_manifest(directory)
            try:
                arrays = cls._load_arrays(directory, man, graph, expect_params, mmap)
                break
            except CacheError:
                # a writer may have replaced the cache (and deleted our generation) meanwhile
                if attempt == 2 or _current_generation(directory) == man.get("generation"):
                    raise
        _tidy(directory)
        timings = dict(man.get("timings", {}))
        ps = cls(arrays=arrays, num_vertices=man["num_vertices"], num_arcs=man["num_arcs"],
                 num_scc=man["num_scc"], params=man.get("params", {}),
                 graph_fingerprint=man["graph_fingerprint"], info=man.get("info", {}),
                 timings=timings)
        ps.timings["load"] = time.perf_counter() - t0
        return ps

    @staticmethod
    def _load_arrays(directory, man, graph, expect_params, mmap):
        problems = []
        short = validate._short
        fv = man.get("format_version")
        if fv != FORMAT_VERSION or isinstance(fv, bool):
            problems.append(f"format version {short(fv)} (this engine reads {FORMAT_VERSION})")
        ev = engine_version()
        if man.get("engine_version") != ev:
            problems.append(f"engine version {short(man.get('engine_version'))} (this engine is "
                            f"{ev})")
        pv = man.get("preprocess_version")
        if pv != PREPROCESS_VERSION or isinstance(pv, bool):
            problems.append(f"preprocess version {short(pv)} (this engine uses "
                            f"{PREPROCESS_VERSION})")
        if problems:  # another version: nothing else of the manifest is read
            raise CacheError(f"{directory}: cache does not match: " + "; ".join(problems))
        # the manifest's types and sizes, before anything is read or allocated
        sizes = validate.check_manifest(man, directory / MANIFEST, ARRAYS)
        if graph is not None:
            fp = graph.fingerprint()
            if man.get("graph_fingerprint") != fp:
                problems.append(
                    f"graph fingerprint {validate._short(man.get('graph_fingerprint'))} with "
                    f"{validate._short(man.get('num_vertices'))} vertices and "
                    f"{validate._short(man.get('num_arcs'))} arcs (this graph: {fp} with "
                    f"{graph.num_vertices} vertices and {graph.num_arcs} arcs)")
        if expect_params:
            cached = man.get("params", {})
            for k, v in expect_params.items():
                if k not in cached:
                    problems.append(f"parameter {k} absent from the cache")
                elif _jsonable(v) != cached[k]:
                    problems.append(f"parameter {k}={validate._short(repr(cached[k]))} (expected "
                                    f"{v!r})")
        if problems:
            raise CacheError(f"{directory}: cache does not match: " + "; ".join(problems))
        gdir = cache_folder.generation_dir(directory, man.get("generation"))
        if graph is not None and (graph.num_vertices != sizes["n"] or graph.num_arcs != sizes["m"]):
            raise CacheError(f"{directory / MANIFEST}: says {sizes['n']} vertices and {sizes['m']} "
                             f"arcs, the graph has {graph.num_vertices} and {graph.num_arcs}")
        # every file: regular, header = manifest's dtype and shape, exact size; then, overlapped on
        # threads, its CRC-32 and the structure in O(m) (offsets, vertex and arc ids in range, the
        # paths' arcs exactly the graph's arcs): see digraph.paths.validate
        return validate.load_checked(gdir, man["arrays"], ARRAYS, sizes, graph, mmap=mmap)
