"""A path cache is untrusted input (issue 19, item 7).

Every damaged or forged cache -- bit flips, truncations, zeroed runs, extra or missing arrays,
forged manifest fields, a FIFO or a symbolic link in place of a file, arrays rewritten with their
checksum recomputed so that only the structural validation can tell -- must give ``CacheError``
naming the file, never another exception, a hang or another answer; and a run with ``cache=``
rebuilds it (once: the next run reuses the rebuilt cache).
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tracemalloc
import zlib
from pathlib import Path

import numpy as np
import pytest

import digraph
from conftest import random_graph
from digraph.paths import PathSet
from digraph.paths import pathset as pathset_mod
from digraph.paths.pathset import ARRAYS
from digraph.preprocess import load_or_build
from digraph.preprocess.errors import CacheError

ROOT = Path(__file__).resolve().parents[2]
FUZZ_CASES = int(os.environ.get("DIGRAPH_FUZZ_CASES", "500"))


@pytest.fixture(autouse=True)
def no_hang():
    """Fail (instead of hanging) a test that blocks for 60 s, e.g. in open() on a FIFO."""
    if not hasattr(signal, "SIGALRM"):  # pragma: no cover
        yield
        return

    def expired(signum, frame):
        raise TimeoutError("the test hung (blocked for 60 s)")

    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(60)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.fixture(scope="module")
def graph():
    return random_graph(3, 150, 700)


@pytest.fixture(scope="module")
def answer(graph):
    return digraph.run(graph, "sssp", source=0, mode="path").values


@pytest.fixture(scope="module")
def good(graph, tmp_path_factory):
    d = tmp_path_factory.mktemp("good") / "cache"
    load_or_build(graph, d)
    return d


@pytest.fixture
def cache(good, tmp_path):
    d = tmp_path / "c"
    shutil.copytree(good, d)
    return d


def files(d):
    return PathSet.array_files(d)


def manifest(d):
    return json.loads((d / "manifest.json").read_text())


def write_manifest(d, man):
    (d / "manifest.json").write_text(json.dumps(man))


def load_arrays(d):
    return {name: np.load(f) for name, f in files(d).items()}


def forge_array(d, name, arr, header=None):
    """Rewrite one array file and make the manifest agree (dtype, shape, CRC-32): a consistent
    forgery that only the structural validation can catch."""
    f = files(d)[name]
    arr = np.ascontiguousarray(arr)
    if header is None:
        with open(f, "wb") as fh:
            np.save(fh, arr, allow_pickle=False)
    else:
        f.write_bytes(header + arr.tobytes())
    man = manifest(d)
    man["arrays"][name].update(dtype=str(arr.dtype), shape=list(arr.shape), crc32=zlib.crc32(f.read_bytes()))
    write_manifest(d, man)


def assert_rebuilt_by_run(graph, d, answer):
    """A run with cache= gives the answer and replaces the cache; the next run reuses it."""
    r = digraph.run(graph, "sssp", source=0, mode="path", cache=d)
    assert np.array_equal(r.values, answer)
    PathSet.load(d, graph=graph)  # the rebuilt cache is valid
    again = load_or_build(graph, d)
    assert "load" in again.timings  # reused: not rebuilt at every run
    gen = manifest(d)["generation"]
    assert sorted(p.name for p in d.iterdir()) == sorted([".digraph-cache", ".lock", "manifest.json", f"arrays-{gen}"])


def test_a_good_cache_loads_and_has_checksums(graph, cache):
    man = manifest(cache)
    assert man["format_version"] == pathset_mod.FORMAT_VERSION == 3
    for name in ARRAYS:
        e = man["arrays"][name]
        assert e["crc32"] == zlib.crc32(files(cache)[name].read_bytes())
    ps = PathSet.load(cache, graph=graph)
    assert isinstance(ps.path_vertices, np.memmap) and not ps.path_vertices.flags.writeable
    PathSet.load(cache, mmap=False)


# ----------------------------------------------------------------------------- damaged files

@pytest.mark.parametrize("name", ARRAYS)
def test_a_bit_flip_in_any_array_file(graph, cache, name, answer):
    f = files(cache)[name]
    data = bytearray(f.read_bytes())
    pos = len(data) - 1 if len(data) > 128 else 9  # the data's last byte, or inside the header
    data[pos] ^= 0x10
    f.write_bytes(bytes(data))
    with pytest.raises(CacheError, match=rf"{name}\.npy: "):
        PathSet.load(cache, graph=graph)
    assert_rebuilt_by_run(graph, cache, answer)


@pytest.mark.parametrize("cut", ["one byte", "header only", "empty", "half header"])
@pytest.mark.parametrize("name", ["path_offsets", "path_vertices", "path_arc_ids", "junction_vertex"])
def test_a_truncated_array_file(graph, cache, name, cut):
    f = files(cache)[name]
    data = f.read_bytes()
    hlen = len(data) - np.load(f).nbytes
    keep = {"one byte": len(data) - 1, "header only": hlen, "empty": 0, "half header": hlen // 2}[cut]
    if keep >= len(data):
        keep = len(data) - 1
    f.write_bytes(data[:keep])
    with pytest.raises(CacheError, match=rf"{name}\.npy: "):
        PathSet.load(cache, graph=graph)


@pytest.mark.parametrize("name", ["path_vertices", "path_arc_ids", "path_heat", "partition_offsets"])
def test_a_zeroed_run(graph, cache, name):
    f = files(cache)[name]
    data = bytearray(f.read_bytes())
    start = len(data) - np.load(f).nbytes // 2  # inside the data
    data[start:start + 16] = bytes(16)
    f.write_bytes(bytes(data))
    with pytest.raises(CacheError, match=rf"{name}\.npy: checksum mismatch"):
        PathSet.load(cache, graph=graph)


def test_an_extended_file(graph, cache):
    f = files(cache)["path_heat"]
    f.write_bytes(f.read_bytes() + b"\0" * 8)
    with pytest.raises(CacheError, match=r"path_heat\.npy: file has \d+ bytes, expected"):
        PathSet.load(cache, graph=graph)


def test_a_missing_array_file(graph, cache, answer):
    files(cache)["scc_layer"].unlink()
    with pytest.raises(CacheError, match=r"scc_layer\.npy: array file missing"):
        PathSet.load(cache, graph=graph)
    assert_rebuilt_by_run(graph, cache, answer)


def test_an_extra_or_missing_array_in_the_manifest(graph, cache):
    man = manifest(cache)
    man["arrays"]["evil"] = {"dtype": "int64", "shape": [3], "crc32": 0}
    write_manifest(cache, man)
    with pytest.raises(CacheError, match="unknown arrays"):
        PathSet.load(cache, graph=graph)
    del man["arrays"]["evil"]
    del man["arrays"]["path_heat"]
    write_manifest(cache, man)
    with pytest.raises(CacheError, match=r"arrays \['path_heat'\] not listed"):
        PathSet.load(cache, graph=graph)


def test_an_extra_file_in_the_generation_is_ignored(graph, cache):
    (files(cache)["path_offsets"].parent / "extra.npy").write_bytes(b"whatever")
    PathSet.load(cache, graph=graph)


def test_a_fifo_in_place_of_an_array_file_or_the_manifest(graph, cache, answer):
    f = files(cache)["path_arc_ids"]
    f.unlink()
    os.mkfifo(f)
    with pytest.raises(CacheError, match=r"path_arc_ids\.npy: is not a regular file"):
        PathSet.load(cache, graph=graph)
    assert_rebuilt_by_run(graph, cache, answer)
    (cache / "manifest.json").unlink()
    os.mkfifo(cache / "manifest.json")
    with pytest.raises(CacheError, match=r"manifest\.json: is not a regular file"):
        PathSet.load(cache, graph=graph)
    assert_rebuilt_by_run(graph, cache, answer)


def test_a_fifo_cache_in_a_subprocess_cannot_hang(graph, cache, tmp_path):
    """The same through the command line, in a subprocess with a timeout."""
    el = tmp_path / "g.el"
    src = graph.arc_sources
    el.write_text("".join(f"{graph.vertex_ids[a]} {graph.vertex_ids[b]}\n"
                          for a, b in zip(src, graph.out_targets)))
    d = tmp_path / "cli-cache"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    cmd = [sys.executable, "-m", "digraph.cli", "run", "sssp", str(el), "--source", str(graph.vertex_ids[0]),
           "--mode", "path", "--cache", str(d), "--top", "0"]
    p = subprocess.run(cmd + ["--out", str(tmp_path / "a.csv")], capture_output=True, text=True,
                       timeout=300, env=env, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    f = PathSet.array_files(d)["path_offsets"]
    f.unlink()
    os.mkfifo(f)
    q = subprocess.run(cmd + ["--out", str(tmp_path / "b.csv")], capture_output=True, text=True,
                       timeout=300, env=env, cwd=ROOT)
    assert q.returncode == 0, q.stderr
    assert (tmp_path / "a.csv").read_text() == (tmp_path / "b.csv").read_text()
    PathSet.load(d)  # rebuilt


def test_a_symlink_in_place_of_an_array_file(graph, cache, tmp_path):
    f = files(cache)["path_heat"]
    outside = tmp_path / "elsewhere.npy"
    shutil.copy(f, outside)
    f.unlink()
    f.symlink_to(outside)
    with pytest.raises(CacheError, match=r"path_heat\.npy: cannot be opened as a regular file"):
        PathSet.load(cache, graph=graph)
    load_or_build(graph, cache)
    assert outside.exists()  # the link's target is never touched


def test_a_symlinked_generation_folder(graph, cache, tmp_path):
    gdir = files(cache)["path_heat"].parent
    outside = tmp_path / "outside"
    shutil.move(gdir, outside)
    gdir.symlink_to(outside, target_is_directory=True)
    with pytest.raises(CacheError, match="is not a folder"):
        PathSet.load(cache, graph=graph)
    load_or_build(graph, cache)
    assert sorted(p.name for p in outside.iterdir()) == sorted(f"{a}.npy" for a in ARRAYS)


def test_an_old_format_cache_is_rebuilt(graph, cache, answer):
    """Format 2 had no checksums: it is refused and rebuilt."""
    man = manifest(cache)
    man["format_version"] = 2
    for e in man["arrays"].values():
        del e["crc32"]
    write_manifest(cache, man)
    with pytest.raises(CacheError, match=r"format version 2 \(this engine reads 3\)"):
        PathSet.load(cache, graph=graph)
    ps = load_or_build(graph, cache)
    assert "load" not in ps.timings  # rebuilt
    assert manifest(cache)["format_version"] == 3
    assert_rebuilt_by_run(graph, cache, answer)


# ----------------------------------------------------------------------------- forged manifests

FORGED = [
    ("num_arcs", "x"), ("num_arcs", -1), ("num_arcs", 2**60), ("num_arcs", True), ("num_arcs", 1.5),
    ("num_arcs", None), ("num_vertices", -5), ("num_scc", [1]), ("num_arcs", 10**30),
    ("arrays.path_offsets.shape", [2**40]), ("arrays.path_offsets.shape", [-1]),
    ("arrays.path_offsets.shape", "abc"), ("arrays.path_offsets.shape", [1, 2]),
    ("arrays.path_offsets.shape", []), ("arrays.path_arc_ids.shape", [2**47]),
    ("arrays.path_offsets.dtype", "O"), ("arrays.path_offsets.dtype", "object"),
    ("arrays.path_offsets.dtype", "<U10"), ("arrays.path_offsets.dtype", "float64"),
    ("arrays.path_offsets.dtype", 5), ("arrays.path_hot.dtype", "V8"),
    ("arrays.path_vertices.crc32", "abc"), ("arrays.path_vertices.crc32", -1),
    ("arrays.path_vertices.crc32", 2**33), ("arrays.path_vertices.crc32", None),
    ("arrays.path_vertices", "x"), ("arrays", []), ("arrays", "x"),
    ("generation", "../../etc"), ("generation", "/etc"), ("generation", "../arrays-0123456789abcdef"),
    ("generation", 5), ("generation", None),
    ("timings", [1, 2]), ("timings", {"total": "x"}), ("info", "x"),
    ("info", {"path_count_lower_bound": "x"}), ("params", [1]), ("graph_fingerprint", 5),
    ("format_version", "3"), ("format_version", True), ("preprocess_version", None),
]


def _set(man, key, value):
    *path, last = key.split(".")
    for k in path:
        man = man[k]
    man[last] = value


@pytest.mark.parametrize("key, value", FORGED, ids=[f"{k}={v!r}"[:40] for k, v in FORGED])
def test_a_forged_manifest_field_is_refused_before_allocation(graph, cache, key, value):
    man = manifest(cache)
    _set(man, key, value)
    write_manifest(cache, man)
    tracemalloc.start()
    try:
        with pytest.raises(CacheError, match=r"manifest\.json: |cache does not match|c: "):
            PathSet.load(cache, graph=graph)
        with pytest.raises(CacheError):
            PathSet.load(cache)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20  # nothing of the forged size was allocated


@pytest.mark.parametrize("content", [b"[]", b'"text"', b"{not json", b"\xff\xfe\x00", b"[" * 100000 + b"]" * 100000,
                                     b'{"format": "digraph-pathset"}'])
def test_a_forged_manifest_file(graph, cache, content, answer):
    (cache / "manifest.json").write_bytes(content)
    with pytest.raises(CacheError):
        PathSet.load(cache, graph=graph)
    assert_rebuilt_by_run(graph, cache, answer)


def test_a_huge_manifest_is_not_read(graph, cache):
    with open(cache / "manifest.json", "ab") as f:
        f.truncate(64 << 20)  # sparse
    with pytest.raises(CacheError, match="larger than"):
        PathSet.load(cache, graph=graph)


def test_a_forged_npy_header(graph, cache):
    """An object dtype or a huge shape in the file's own header, with the manifest made to agree
    on the checksum: refused before anything is allocated or unpickled."""
    n = manifest(cache)["arrays"]["path_offsets"]["shape"][0]
    hdr = {"descr": "|O", "fortran_order": False, "shape": (n,)}
    import io
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, hdr)
    f = files(cache)["path_offsets"]
    f.write_bytes(buf.getvalue() + b"\0" * (8 * n))
    man = manifest(cache)
    man["arrays"]["path_offsets"]["crc32"] = zlib.crc32(f.read_bytes())
    write_manifest(cache, man)
    with pytest.raises(CacheError, match=r"path_offsets\.npy: array is object"):
        PathSet.load(cache, graph=graph)
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<i8", "fortran_order": False, "shape": (2**40,)})
    f.write_bytes(buf.getvalue() + b"\0" * 64)
    with pytest.raises(CacheError, match=r"path_offsets\.npy: array is int64\[1099511627776\]"):
        PathSet.load(cache, graph=graph)


# ----------------------------------------------------------------------------- forged consistently

def _boundary_between_layers(a):
    pl, part = a["path_layer"], a["partition_offsets"]
    ks = [k for k in range(1, part.size - 1) if pl[part[k] - 1] != pl[part[k]]]
    out = np.delete(part, ks[0])
    return out


def _setitem(arr, i, v):
    arr = arr.copy()
    arr[i] = v
    return arr


def _bool_byte(arr, i, v):
    b = arr.view(np.uint8).copy()
    b[i] = v
    return b.view(np.bool_)


def _swap(arr, i, j):
    arr = arr.copy()
    arr[i], arr[j] = arr[j], arr[i]
    return arr


STRUCTURE = {
    # name: (array, forge(arrays, sizes) -> new array, message)
    "offsets non-monotone": ("path_offsets", lambda a, s: _swap(a["path_offsets"], 1, 2),
                             # with the graph, the first path's arcs no longer match: either message
                             r"path_(offsets\.npy: path \d+: offsets not increasing|arc_ids\.npy: entry)"),
    "offsets past the end": ("path_offsets", lambda a, s: _setitem(a["path_offsets"], -1, 10**9),
                             r"path_offsets\.npy: starts at 0 and ends at 1000000000"),
    "empty path": ("path_offsets", lambda a, s: _setitem(a["path_offsets"], 1, a["path_offsets"][0]),
                   r"path_offsets\.npy: path 0"),
    "vertex id out of range": ("path_vertices", lambda a, s: _setitem(a["path_vertices"], 5, s.num_vertices + 3),
                               r"path_vertices\.npy: entry 5: vertex id \d+ out of range"),
    "negative vertex id": ("path_vertices", lambda a, s: _setitem(a["path_vertices"], 0, -1),
                           r"path_vertices\.npy: entry 0: vertex id -1 out of range"),
    "another vertex": ("path_vertices", lambda a, s: _setitem(a["path_vertices"], 1, (a["path_vertices"][1] + 1) % s.num_vertices),
                       r"path_arc_ids\.npy: entry 0: arc \d+ does not"),
    "arc twice": ("path_arc_ids", lambda a, s: _setitem(a["path_arc_ids"], 1, a["path_arc_ids"][0]),
                  r"path_arc_ids\.npy: "),
    "arc id out of range": ("path_arc_ids", lambda a, s: _setitem(a["path_arc_ids"], 3, s.num_arcs),
                            r"path_arc_ids\.npy: entry 3: arc id \d+ out of range"),
    "arcs swapped": ("path_arc_ids", lambda a, s: _swap(a["path_arc_ids"], 0, len(a["path_arc_ids"]) - 1),
                     r"path_arc_ids\.npy: entry 0: arc \d+ does not"),
    "hot byte 2": ("path_hot", lambda a, s: _bool_byte(a["path_hot"], 0, 2), r"path_hot\.npy: path 0: flag byte 2"),
    "heat NaN": ("path_heat", lambda a, s: _setitem(a["path_heat"], 0, np.nan), r"path_heat\.npy: path 0"),
    "heat negative": ("path_heat", lambda a, s: _setitem(a["path_heat"], 2, -1.0), r"path_heat\.npy: path 2"),
    "scc out of range": ("path_scc", lambda a, s: _setitem(a["path_scc"], -1, s.num_scc),
                         r"path_scc\.npy: path \d+: SCC-vertex \d+ out of range"),
    "scc decreasing": ("path_scc", lambda a, s: _setitem(a["path_scc"], -1, 0),
                       r"path_(scc|layer)\.npy: path \d+"),
    "layer mismatch": ("path_layer", lambda a, s: _setitem(a["path_layer"], 0, 7), r"path_layer\.npy: path 0"),
    "scc offsets": ("scc_path_offsets", lambda a, s: _setitem(a["scc_path_offsets"], 1, a["scc_path_offsets"][1] + 1),
                    r"scc_path_offsets\.npy: "),
    "scc layer decreasing": ("scc_layer", lambda a, s: _setitem(a["scc_layer"], -1, 0), r"scc_layer\.npy: "),
    "layer offsets": ("layer_scc_offsets", lambda a, s: _setitem(a["layer_scc_offsets"], 1, 0),
                      r"layer_scc_offsets\.npy: not increasing"),
    "succ paths": ("scc_succ_paths", lambda a, s: _setitem(a["scc_succ_paths"], 0, -4), r"scc_succ_paths\.npy: entry 0"),
    "dag offsets": ("dag_offsets", lambda a, s: _setitem(a["dag_offsets"], 1, -1), r"dag_offsets\.npy: not monotone"),
    "dag target": ("dag_targets", lambda a, s: _setitem(a["dag_targets"], 0, 10**6), r"dag_targets\.npy: entry 0"),
    "partition spans layers": ("partition_offsets", lambda a, s: _boundary_between_layers(a),
                               r"partition_offsets\.npy: partition \d+ spans several layers"),
    "partition empty": ("partition_offsets", lambda a, s: np.insert(a["partition_offsets"], 1, 0),
                        r"partition_offsets\.npy: not increasing"),
}


@pytest.mark.parametrize("case", list(STRUCTURE))
def test_structure_forged_with_matching_checksum(graph, cache, case, answer):
    name, forge, words = STRUCTURE[case]
    a = load_arrays(cache)
    good = PathSet.load(cache, graph=graph)
    forge_array(cache, name, forge(a, good))  # a partition removed or added: K follows the file
    del good
    with pytest.raises(CacheError, match=words):
        PathSet.load(cache, graph=graph)
    assert_rebuilt_by_run(graph, cache, answer)


def test_arcs_covered_twice_without_the_graph(cache):
    """Without the graph, every arc id must still appear exactly once."""
    a = load_arrays(cache)
    forge_array(cache, "path_arc_ids", _setitem(a["path_arc_ids"], 1, a["path_arc_ids"][0]))
    with pytest.raises(CacheError, match=r"path_arc_ids\.npy: arc \d+ is in no path"):
        PathSet.load(cache)


def test_a_manifest_for_another_graph_size(graph, cache):
    man = manifest(cache)
    man["num_vertices"] += 1
    write_manifest(cache, man)
    with pytest.raises(CacheError, match="the graph has"):
        PathSet.load(cache, graph=graph)


def test_a_forged_lock_file_is_replaced(graph, cache, tmp_path, answer):
    (cache / ".lock").unlink()
    target = tmp_path / "target"
    target.write_text("keep")
    (cache / ".lock").symlink_to(target)
    PathSet.load(cache, graph=graph)
    load_or_build(graph, cache, rebuild=True)
    assert target.read_text() == "keep"
    assert not (cache / ".lock").is_symlink()
    (cache / ".lock").unlink()
    os.mkfifo(cache / ".lock")
    load_or_build(graph, cache, rebuild=True)
    assert (cache / ".lock").is_file()


# ----------------------------------------------------------------------------- fuzz

VALUES = [-1, 0, 1, 2**31, 2**62, -2**63, "x", "", None, [], {}, True, 1.5, "O", [2**40], [-3], "../x",
          "/etc", [[[[[]]]]], {"dtype": "O", "shape": [2**40], "crc32": 0}]


def _damage(d, rng):
    """One random damage of the cache ``d``; returns a description."""
    arrays = files(d)
    targets = list(arrays.values()) + [d / "manifest.json"]
    kind = rng.choice(["bitflip", "bitflip", "truncate", "zero", "extend", "manifest", "manifest",
                       "forge", "forge", "forge"])
    if kind in ("bitflip", "truncate", "zero", "extend"):
        f = targets[rng.integers(len(targets))]
        data = bytearray(f.read_bytes())
        if kind == "bitflip" and data:
            for _ in range(rng.integers(1, 4)):
                data[rng.integers(len(data))] ^= 1 << int(rng.integers(8))
        elif kind == "truncate":
            data = data[:rng.integers(len(data) + 1)]
        elif kind == "zero" and data:
            a = int(rng.integers(len(data)))
            b = min(len(data), a + int(rng.integers(1, 64)))
            data[a:b] = bytes(b - a)
        else:
            data += bytes(rng.integers(0, 256, int(rng.integers(1, 32)), dtype=np.uint8))
        f.write_bytes(bytes(data))
        return f"{kind} {f.name}"
    if kind == "manifest":
        man = manifest(d)
        if rng.random() < 0.5:
            key = rng.choice(sorted(man))
            if rng.random() < 0.2:
                del man[key]
            else:
                man[key] = VALUES[rng.integers(len(VALUES))]
        else:
            name = rng.choice(ARRAYS)
            field = rng.choice(["dtype", "shape", "crc32"])
            man["arrays"][name][field] = VALUES[rng.integers(len(VALUES))]
            key = f"{name}.{field}"
        write_manifest(d, man)
        return f"manifest {key}"
    # a consistent forgery: one entry changed, checksum recomputed
    name = rng.choice(ARRAYS)
    a = np.load(arrays[name])
    if a.size == 0:
        return "nothing"
    i = int(rng.integers(a.size))
    if a.dtype == np.bool_:
        a = _bool_byte(a, i, int(rng.integers(0, 4)))
    elif a.dtype.kind == "f":
        a = _setitem(a, i, [np.nan, np.inf, -1.0, 0.0, float(rng.random() * 10)][rng.integers(5)])
    else:
        hi = int(max(a.max(), 1))
        a = _setitem(a, i, int(rng.choice([-1, 0, hi, hi + 1, int(rng.integers(-2, 2 * hi + 2))])))
    forge_array(d, name, a)
    return f"forge {name}[{i}]"


def test_fuzz_damaged_caches(graph, good, answer, tmp_path):
    """FUZZ_CASES seeded random damages: each loads with CacheError, or loads and runs to the
    same answer; every 20th is also run with cache= (which must rebuild or reuse, and answer)."""
    rng = np.random.default_rng(int(os.environ.get("DIGRAPH_FUZZ_SEED", "19")))
    outcomes = {"refused": 0, "loaded": 0}
    for case in range(FUZZ_CASES):
        d = tmp_path / f"f{case}"
        shutil.copytree(good, d)
        what = _damage(d, rng)
        try:
            PathSet.load(d, graph=graph)
        except CacheError:
            outcomes["refused"] += 1
            loaded = False
        except Exception as e:  # pragma: no cover - the failure this test looks for
            pytest.fail(f"case {case} ({what}): {type(e).__name__}: {e}")
        else:
            outcomes["loaded"] += 1
            loaded = True
        if loaded or case % 20 == 0:
            try:
                r = digraph.run(graph, "sssp", source=0, mode="path", cache=d)
            except Exception as e:  # pragma: no cover
                pytest.fail(f"case {case} ({what}): run with cache= raised {type(e).__name__}: {e}")
            assert np.array_equal(r.values, answer), f"case {case} ({what}): another answer"
        shutil.rmtree(d, ignore_errors=True)
    print(outcomes)
    assert outcomes["refused"] > FUZZ_CASES // 2, outcomes


def _reversed_layers(ps):
    """``ps`` with its layers run backwards, forged consistently enough to pass every check but
    the dependency one: SCC-vertices reordered by reversed layer (their paths moved with them),
    one partition per layer, the DAG sketch's arrays kept (only their ranges are checked)."""
    S = ps.num_scc
    L = int(ps.scc_layer.max()) + 1
    new_layer = (L - 1) - ps.scc_layer
    order = np.argsort(new_layer, kind="stable")  # old SCC-vertex ids in their new order
    rank = np.empty(S, np.int64)
    rank[order] = np.arange(S)
    spo = ps.scc_path_offsets
    paths = np.concatenate([np.arange(spo[s], spo[s + 1]) for s in order])  # old path ids, new order
    po = ps.path_offsets
    verts = np.concatenate([ps.path_vertices[po[p]:po[p + 1]] for p in paths])
    ids = np.concatenate([ps.path_arc_ids[po[p] - p:po[p + 1] - p - 1] for p in paths])
    lengths = po[paths + 1] - po[paths]
    new_po = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    counts = (spo[1:] - spo[:-1])[order]
    scc_layer = new_layer[order].astype(np.int64)
    path_scc = np.repeat(np.arange(S, dtype=np.int64), counts)
    path_layer = scc_layer[path_scc]
    arrays = dict(ps.arrays())
    arrays.update(
        path_offsets=new_po, path_vertices=verts.astype(ps.path_vertices.dtype), path_arc_ids=ids,
        path_hot=ps.path_hot[paths], path_heat=ps.path_heat[paths], path_scc=path_scc,
        path_layer=path_layer, scc_path_offsets=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
        scc_layer=scc_layer, scc_succ_paths=ps.scc_succ_paths[order],
        layer_scc_offsets=np.searchsorted(scc_layer, np.arange(L + 1)).astype(np.int64),
        partition_offsets=np.unique(np.searchsorted(path_layer, np.arange(L + 1))).astype(np.int64))
    return PathSet(arrays=arrays, num_vertices=ps.num_vertices, num_arcs=ps.num_arcs, num_scc=S,
                   params=ps.params, graph_fingerprint=ps.graph_fingerprint, info=ps.info)


def test_forged_layers_that_run_backwards_are_refused_and_rebuilt(tmp_path):
    """A chain of SCC-vertices (a DAG of many layers) whose cache lists the layers backwards:
    checksums and every local check pass, the dependency check refuses it, and a run rebuilds the
    cache and takes the rounds the true layers take."""
    rng = np.random.default_rng(0)
    n = 400
    chord = rng.integers(0, n - 5, 300)
    src = np.concatenate([np.arange(n - 1), chord])
    dst = np.concatenate([np.arange(1, n), chord + rng.integers(1, 5, 300)])  # forward arcs only: a DAG
    g = digraph.Graph.from_arrays(src, dst, num_vertices=n)
    honest = digraph.preprocess(g)
    assert int(honest.scc_layer.max()) > 10
    d = tmp_path / "c"
    _reversed_layers(honest).save(d)
    with pytest.raises(CacheError, match=r"path_layer\.npy: the layers do not follow the paths' dependencies"):
        PathSet.load(d, graph=g)
    with pytest.raises(CacheError, match="do not follow"):
        PathSet.load(d)  # without the graph too: the paths say what depends on what
    want = digraph.run(g, "sssp", source=0, mode="path")
    r = digraph.run(g, "sssp", source=0, mode="path", cache=d)
    np.testing.assert_array_equal(r.values, want.values)
    assert r.stats["rounds"] == want.stats["rounds"]
    PathSet.load(d, graph=g)  # the rebuilt cache passes
