"""A path cache is untrusted input: check the manifest, every array file and the structure.

:meth:`digraph.PathSet.load` calls the three steps below before any kernel sees an array; each
failure raises :class:`~digraph.preprocess.errors.CacheError` naming the file and what is wrong.

1. :func:`check_manifest` -- types and sizes of the manifest (before anything is read or
   allocated): sizes are non-negative integers, ``arrays`` lists exactly the arrays of the format,
   each with its expected dtype (from a fixed table: no ``object`` or other dtype is ever read),
   a one-dimensional shape that agrees with the other arrays and with ``num_vertices``,
   ``num_arcs`` and ``num_scc``, and a CRC-32.
2. :func:`read_arrays` -- each ``.npy`` file is opened with ``O_NOFOLLOW | O_NONBLOCK`` (a symbolic
   link, FIFO, device or folder is refused: nothing blocks), its header must give the manifest's
   dtype and shape, its size must be exactly header + data (a forged shape cannot make us allocate),
   and the CRC-32 of the whole file (header and data) must match the one recorded at write time.
   Files are checked on several threads (``zlib.crc32`` releases the GIL).
3. :func:`check_structure` -- O(m) vectorised numpy and one ``nogil`` Numba pass over the paths:
   offsets start at 0, end at the array's length and grow by at least 2 per path (every path has an
   arc), every vertex id lies in ``[0, n)``, ``path_arc_ids`` is a permutation of ``0..m-1`` (every
   arc in exactly one path, hot or cold), and -- when the graph is given -- consecutive path
   vertices ``u, v`` with arc id ``e`` are the graph's arc ``e``
   (``out_offsets[u] <= e < out_offsets[u+1]`` and ``out_targets[e] == v``); ``path_hot`` holds 0/1
   bytes, ``path_heat`` is finite and >= 0; ``path_scc`` is non-decreasing in ``[0, S)`` and agrees
   with ``scc_path_offsets``, ``path_layer == scc_layer[path_scc]``, ``scc_layer`` is non-decreasing
   and agrees with ``layer_scc_offsets``; the DAG sketch's offsets are monotone and its targets in
   range; junction vertices and layers are in range; partitions are non-empty, cover the paths and
   never span layers; the layers follow the paths' real dependencies (a path that reads a vertex
   another SCC-vertex's path writes is in a higher layer), so a forged order cannot make the path
   engine run its layers backwards.  (Those checks: :mod:`digraph.paths.validate_structure`.)

A CRC-32 catches accidental damage (every burst of up to 32 bits, anything else but for a 2^-32
chance); a forger can recompute any checksum kept beside the data, so the structural checks are
what keeps a forged cache from crashing a kernel or changing an answer.
"""

import math
import os
import stat
import zlib
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..preprocess.errors import CacheError
from .validate_structure import PathCheck, check_small

__all__ = ["DTYPES", "check_manifest", "load_checked", "read_arrays", "check_structure",
           "crc32_file_parts", "open_regular"]

#: The dtype every array must have (``path_vertices``: the graph's index dtype).
DTYPES = {
    "path_offsets": ("int64",), "path_vertices": ("int32", "int64"), "path_arc_ids": ("int64",),
    "path_hot": ("bool",), "path_heat": ("float64",), "path_scc": ("int64",),
    "path_layer": ("int64",),
    "scc_path_offsets": ("int64",), "scc_layer": ("int64",), "scc_succ_paths": ("int64",),
    "layer_scc_offsets": ("int64",), "dag_offsets": ("int64",), "dag_targets": ("int64",),
    "junction_vertex": ("int64",), "junction_layer": ("int64",), "partition_offsets": ("int64",),
}

#: No size in a manifest may exceed this (2^48 elements: far beyond any disk).
MAX_SIZE = 1 << 48

_OPEN_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
               | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))


def _short(x, limit=60):
    """``x`` for a message: a string as it is, anything else as its repr, cut at ``limit``."""
    r = x if isinstance(x, str) else repr(x)
    return r if len(r) <= limit else r[:limit] + "..."


def open_regular(path):
    """Open ``path`` read-only without following a symbolic link or blocking on a FIFO.

    Returns a binary file object; raises ``FileNotFoundError`` when absent and :class:`CacheError`
    when it is a link, FIFO, device, folder or cannot be opened.
    """
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        raise
    except OSError as e:
        raise CacheError(f"{path}: cannot be opened as a regular file ({e.strerror or e}; symbolic "
                         "links are not followed)") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise CacheError(f"{path}: is not a regular file (a FIFO, device, socket or folder)")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


# ----------------------------------------------------------------------------------------- manifest

def _int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def check_manifest(man, where, array_names):
    """Check the types and sizes of a manifest (already of this format version).

    Returns a dict of sizes ``n, m, S, P, L, J, T, K``.  Raises :class:`CacheError` naming
    ``where`` (the manifest path) and every problem found.
    """
    problems = []
    for key in ("num_vertices", "num_arcs", "num_scc"):
        v = man.get(key)
        if not _int(v) or not 0 <= v <= MAX_SIZE:
            problems.append(f"{key} is {_short(v)} (expected an integer in [0, 2^48])")
    for key in ("graph_fingerprint", "engine_version", "generation"):
        if not isinstance(man.get(key), str):
            problems.append(f"{key} is {_short(man.get(key))} (expected a string)")
    for key in ("params", "info", "timings"):
        if key in man and not isinstance(man[key], dict):
            problems.append(f"{key} is {_short(man[key])} (expected an object)")
    timings = man.get("timings")
    if isinstance(timings, dict):
        bad = [k for k, v in timings.items()
               if not (isinstance(v, (int, float)) and not isinstance(v, bool)
                       and math.isfinite(v))]
        if bad:
            problems.append(f"timings {bad[:3]} are not finite numbers")
    info = man.get("info")
    if isinstance(info, dict):
        for key in ("path_count_lower_bound", "dep_graph_arcs"):
            v = info.get(key)
            if v is not None and (not _int(v) or v < 0):
                problems.append(f"info.{key} is {_short(v)} (expected a non-negative integer)")
    spec = man.get("arrays")
    if not isinstance(spec, dict):
        problems.append(f"arrays is {_short(spec)} (expected an object)")
        raise CacheError(f"{where}: forged or damaged manifest: " + "; ".join(problems))
    extra = sorted(set(spec) - set(array_names), key=str)
    missing = [a for a in array_names if a not in spec]
    if extra:
        problems.append(f"unknown arrays {_short(extra)}")
    if missing:
        problems.append(f"arrays {missing} not listed")
    size = {}
    for name in array_names:
        e = spec.get(name)
        if e is None:
            continue
        if not isinstance(e, dict):
            problems.append(f"{name}: entry is {_short(e)} (expected an object)")
            continue
        if e.get("dtype") not in DTYPES[name]:
            problems.append(f"{name}: dtype {_short(e.get('dtype'))} (expected "
                            f"{' or '.join(DTYPES[name])})")
        shape = e.get("shape")
        if (not isinstance(shape, list) or len(shape) != 1 or not _int(shape[0])
                or not 0 <= shape[0] <= MAX_SIZE):
            problems.append(f"{name}: shape {_short(shape)} (expected [length], 0 <= length <= "
                            "2^48)")
        else:
            size[name] = shape[0]
        crc = e.get("crc32")
        if not _int(crc) or not 0 <= crc < 1 << 32:
            problems.append(f"{name}: crc32 {_short(crc)} (expected an integer in [0, 2^32))")
    if problems:
        raise CacheError(f"{where}: forged or damaged manifest: " + "; ".join(problems))
    n, m, S = man["num_vertices"], man["num_arcs"], man["num_scc"]
    P = size["path_offsets"] - 1
    L = size["layer_scc_offsets"] - 1
    J = size["junction_vertex"]
    K = size["partition_offsets"] - 1
    want = {
        "path_vertices": m + P, "path_arc_ids": m, "path_hot": P, "path_heat": P, "path_scc": P,
        "path_layer": P, "scc_path_offsets": S + 1, "scc_layer": S, "scc_succ_paths": S,
        "dag_offsets": S + J + 1, "junction_layer": J,
    }
    for name, w in want.items():
        if size[name] != w:
            problems.append(f"{name}: length {size[name]} (expected {w} from the other sizes)")
    if P < 0 or L < 0 or K < 0:
        problems.append("an offsets array is empty (expected at least [0])")
    elif P > m or S > P or L > S or K > P or (m > 0) != (P > 0) or (S > 0) != (L > 0) \
            or (P > 0) != (S > 0) or (P > 0) != (K > 0):
        problems.append(f"inconsistent sizes: {m} arcs, {P} paths, {S} SCC-vertices, {L} layers, "
                        f"{K} partitions")
    if problems:
        raise CacheError(f"{where}: forged or damaged manifest: " + "; ".join(problems))
    return {"n": n, "m": m, "S": S, "P": P, "L": L, "J": J, "T": size["dag_targets"], "K": K}


# ----------------------------------------------------------------------------------------- files

def crc32_file_parts(header, data):
    """CRC-32 of a ``.npy`` file: its header bytes, then its data (any contiguous array)."""
    crc = zlib.crc32(header)
    if data.size:
        crc = zlib.crc32(np.ascontiguousarray(data).reshape(-1).view(np.uint8), crc)
    return crc


def _open_array(path, dtype, length, mmap):
    """Open one ``.npy`` file and check its header and size: (array, header bytes).

    Nothing is allocated before the file's size is known to be header + ``length`` items."""
    try:
        f = open_regular(path)
    except FileNotFoundError:
        raise CacheError(f"{path}: array file missing") from None
    with f:
        try:
            version = np.lib.format.read_magic(f)
            if version == (1, 0):
                shape, fortran, hdtype = np.lib.format.read_array_header_1_0(f)
            elif version == (2, 0):
                shape, fortran, hdtype = np.lib.format.read_array_header_2_0(f)
            else:
                raise ValueError(f"unsupported .npy version {version}")
        except Exception as e:  # numpy's parser of an untrusted header: ValueError, SyntaxError,
            # tokenize.TokenError, ... -- whatever it raises, the header is damaged
            raise CacheError(f"{path}: damaged .npy header ({_short(str(e), 120)})") from None
        want = np.dtype(dtype)
        if hdtype != want or tuple(shape) != (length,):
            raise CacheError(f"{path}: array is {hdtype}{list(shape)}, manifest says "
                             f"{dtype}[{length}]")
        offset = f.tell()
        nbytes = length * want.itemsize
        size = os.fstat(f.fileno()).st_size
        if size != offset + nbytes:
            raise CacheError(f"{path}: file has {size} bytes, expected {offset + nbytes} "
                             "(truncated or extended)")
        f.seek(0)
        header = f.read(offset)
        if len(header) != offset:
            raise CacheError(f"{path}: short read")
        if nbytes == 0:
            a = np.empty(length, want)
            if mmap:
                a.flags.writeable = False
        elif mmap:
            a = np.memmap(f, dtype=want, mode="r", offset=offset, shape=(length,))
        else:
            a = np.empty(length, want)
            view = memoryview(a.view(np.uint8))
            got = 0
            while got < nbytes:
                k = f.readinto(view[got:])
                if not k:
                    raise CacheError(f"{path}: short read")
                got += k
        return a, header


def _checksum_error(path):
    return CacheError(f"{path}: checksum mismatch (CRC-32 differs from the manifest's: the file is "
                      "damaged)")


def read_arrays(gdir, spec, names, mmap=True, threads=None):
    """Read and checksum every array of a generation folder (several files at once).

    ``spec`` is the manifest's ``arrays`` (already checked by :func:`check_manifest`).  Returns a
    dict name -> array (read-only memory maps when ``mmap``)."""
    arrays, headers = _open_arrays(gdir, spec, names, mmap)
    tasks = [(name, lambda name=name: crc32_file_parts(headers[name], arrays[name]))
             for name in names]
    results = _run_tasks(tasks, threads)
    for name in names:
        if results[name] != spec[name]["crc32"]:
            raise _checksum_error(gdir / f"{name}.npy")
    return arrays


def _open_arrays(gdir, spec, names, mmap):
    try:
        st = os.lstat(gdir)
    except FileNotFoundError:
        raise CacheError(f"{gdir}: generation folder missing") from None
    except OSError as e:
        raise CacheError(f"{gdir}: cannot read ({e.strerror or e})") from None
    if not stat.S_ISDIR(st.st_mode):
        raise CacheError(f"{gdir}: is not a folder (a symbolic link or other file)")
    arrays, headers = {}, {}
    for name in names:
        e = spec[name]
        arrays[name], headers[name] = _open_array(gdir / f"{name}.npy", e["dtype"], e["shape"][0],
                                                  mmap)
    return arrays, headers


def _run_tasks(tasks, threads=None, main=None):
    """Run ``(key, callable)`` tasks on a thread pool (GIL-free work: CRC-32, nogil kernels) while
    the calling thread runs ``main()``; returns dict key -> result (a task's exception is
    raised)."""
    threads = threads or min(len(tasks), os.cpu_count() or 1, 8)
    if threads <= 1:
        if main is not None:
            main()
        return {k: f() for k, f in tasks}
    with ThreadPoolExecutor(threads) as ex:
        futures = [(k, ex.submit(f)) for k, f in tasks]
        try:
            if main is not None:
                main()
        finally:
            results = {k: fut.result() for k, fut in futures}
    return results


def load_checked(gdir, spec, names, sizes, graph=None, mmap=True, threads=None):
    """Open every array file, check its header and size, then -- on a thread pool, overlapped --
    its CRC-32 and the structure (:func:`check_structure`).  Raises :class:`CacheError`; a checksum
    mismatch is reported before any structural problem.  Returns dict name -> array."""
    arrays, headers = _open_arrays(gdir, spec, names, mmap)
    threads = threads or min(os.cpu_count() or 1, 8)
    # CRC tasks, largest file first, then the path kernel's chunks: two pools' worth of work
    order = sorted(names, key=lambda a: -arrays[a].nbytes)
    tasks = [(("crc", name), lambda name=name: crc32_file_parts(headers[name], arrays[name]))
             for name in order]
    paths = PathCheck(arrays, sizes, graph, chunks=2 * threads if threads > 1 else 1)
    tasks += ([(("paths", i), f) for i, f in enumerate(paths.tasks)]
              + [("layers", paths.layers_task)])
    small = {}

    def main():  # meanwhile, on this thread: the small arrays (sizes S, J, K)
        try:
            check_small(arrays, sizes, gdir)
        except CacheError as e:
            small["error"] = e

    results = _run_tasks(tasks, threads, main)
    for name in names:
        if results[("crc", name)] != spec[name]["crc32"]:
            raise _checksum_error(gdir / f"{name}.npy")
    if "error" in small:
        raise small["error"]
    paths.finish([results[("paths", i)] for i in range(len(paths.tasks))], gdir, results["layers"])
    return arrays


# ------------------------------------------------------------------------------------ structure

def check_structure(arrays, sizes, gdir, graph=None, threads=None):
    """Validate the structure of the arrays (O(m): vectorised numpy and one Numba pass over the
    paths on ``threads`` threads); raise :class:`CacheError` naming the file and the problem."""
    if graph is not None and (graph.num_vertices != sizes["n"] or graph.num_arcs != sizes["m"]):
        raise CacheError(f"{gdir.parent}: manifest says {sizes['n']} vertices and {sizes['m']} "
                         f"arcs, the graph has {graph.num_vertices} and {graph.num_arcs}")
    check_small(arrays, sizes, gdir)
    threads = threads or min(os.cpu_count() or 1, 8)
    paths = PathCheck(arrays, sizes, graph, chunks=threads)
    results = _run_tasks(list(enumerate(paths.tasks)) + [("layers", paths.layers_task)], threads)
    paths.finish([results[i] for i in range(len(paths.tasks))], gdir, results["layers"])
