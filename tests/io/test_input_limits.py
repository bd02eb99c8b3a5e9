"""Graph input that used to give silent wrong answers, unbounded memory or a hang (issue 41).

* csv/tsv headers are recognised by rule (every field a name); a first line with a typo is an
  error naming the file and line, not a header dropped silently;
* vertex ids are exact int64: beyond it an error naming the file and line;
* a file is read block by block: a gzip bomb is refused once its arcs cannot fit in memory, and
  gigabytes of blank lines are read in constant memory;
* only regular files are read: a FIFO, a device (``/dev/zero`` linked as ``z.txt``) or a
  directory is refused at once, for the graph and for ``--seeds @FILE``;
* a Matrix Market size line may not claim more than the file holds: an order far beyond its
  entries needs ``num_vertices``, and the arrays grow with the entries read.

Memory limits are lowered with ``DIGRAPH_MEMORY_LIMIT`` (passed in the environment of a child
process, or set for one test with ``monkeypatch.setenv``); whatever may hang runs in a child
process with a timeout.
"""

import gzip
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import digraph
from digraph.errors import GraphFormatError, GraphTooLargeError, InvalidParameterError
from digraph.io._files import read_bytes, text_blocks
from digraph.io.edgelist import read_arcs, is_header, parse_edgelist
from digraph.io.mtx import parse_blocks
from digraph.memory import BYTES_PER_ARC, memory_limit

ROOT = Path(__file__).resolve().parents[2]
MiB = 2**20
MM = "%%MatrixMarket matrix coordinate pattern general\n"


from test_load_errors import format_error, write  # noqa: E402 - the shared helpers of the load tests


def _env(**extra):
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    return dict(os.environ, PYTHONPATH=path, DIGRAPH_QUIET="1", **extra)


def _cli(cwd, *args, timeout=120, **env):
    """``python -m digraph.cli ARGS`` in ``cwd``: (status, stderr)."""
    p = subprocess.run([sys.executable, "-m", "digraph.cli", *map(str, args)], cwd=cwd,
                       env=_env(**env), capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stderr


# ====================================================================== csv/tsv headers
@pytest.mark.parametrize("name, text, line, words", [
    ("typo.csv", "0,1,2.5x\n1,2,3\n", 1, "'2.5x' is not a number"),
    ("typo2.csv", "# exported\n\n0,1,2.5x\n1,2,3\n", 3, "'2.5x' is not a number"),
    ("typo.tsv", "0\t1x\n1\t2\n", 1, "'1x' is not an integer vertex id"),
    ("empty.csv", "0,,1\n", 1, "an empty field"),
    ("empty2.csv", "0,,1\n1,2,3\n", 1, "an empty field"),
    ("nan.csv", "nan,inf\n0,1\n", 1, "'nan' is not an integer"),
    ("mixed.csv", "src,1\n0,1\n", 1, "'src' is not an integer"),
    ("ordinal.csv", "1st,2nd\n0,1\n", 1, "'1st' is not an integer"),
    ("blank.csv", ",\n0,1\n", 1, "an empty field"),
])
def test_a_first_line_with_a_number_is_data(tmp_path, name, text, line, words):
    err = format_error(write(tmp_path, name, text))
    msg = str(err)
    assert err.line == line and err.path.endswith(name) and f"{name}, line {line}: " in msg
    assert words in msg
    bad = text.splitlines()[line - 1]
    assert repr(bad) in msg  # the line, quoted


@pytest.mark.parametrize("name, text, arcs", [
    ("h.csv", "src,dst,weight\n0,1,2.5\n", [(0, 1, 2.5)]),
    ("h2.csv", "# c\n\n  source , target \n0,1\n", [(0, 1, 1.0)]),
    ("h.tsv", "from\tto\n5\t6\n", [(5, 6, 1.0)]),
    ("ids.csv", "v1,v2\n3,4\n", [(3, 4, 1.0)]),
    ("bom.csv", "\ufeffsrc,dst\n0,1\n", [(0, 1, 1.0)]),
    ("plain.csv", "0,1\n1,2\n", [(0, 1, 1.0), (1, 2, 1.0)]),
])
def test_a_first_line_of_names_is_a_header(tmp_path, name, text, arcs):
    g = digraph.load(write(tmp_path, name, text))
    got = sorted(zip(g.vertex_ids[g.arc_sources].tolist(), g.vertex_ids[g.out_targets].tolist(),
                     g.arc_weights().tolist()))
    assert got == arcs


def test_header_rule():
    assert is_header(["src", "dst", "weight"]) and is_header(["from", "to"])
    assert is_header(["v1", "v2"]) and is_header(["\ufffd\ufffd"])
    for fields in (["0", "1", "2.5x"], ["0", "", "1"], ["src", "1"], ["nan", "x"], ["inf", "a"],
                   ["-1a", "b"], [".5x", "b"], ["+3", "x"], ["src", ""], [], ["\u0661", "x"]):
        assert not is_header(fields), fields
    # the header is only the first data line: names further down are an error at their line
    with pytest.raises(GraphFormatError, match="line 2"):
        parse_edgelist(b"0,1\nsrc,dst\n", "x.csv", "csv")


# ====================================================================== int64 ids
@pytest.mark.parametrize("token", ["9223372036854775808", "-9223372036854775809",
                                   "18446744073709551615", "1" + "0" * 40])
@pytest.mark.parametrize("name", ["ids.txt", "ids.csv", "ids.txt.gz"])
def test_ids_outside_int64_are_refused(tmp_path, token, name):
    sep = "," if ".csv" in name else " "
    err = format_error(write(tmp_path, name, f"0{sep}1\n1{sep}{token}\n"))
    msg = str(err)
    assert err.line == 2 and f"{name}, line 2: " in msg
    assert "outside the int64 range" in msg and token[:30] in msg


def test_ids_are_exact_over_the_int64_range(tmp_path):
    lo, hi = -2**63, 2**63 - 1
    g = digraph.load(write(tmp_path, "edge.txt", f"{hi} {lo}\n-5 3\n{hi - 1} -5\n"))
    assert g.vertex_ids.dtype == np.int64
    assert g.vertex_ids.tolist() == [lo, -5, 3, hi - 1, hi]  # negative ids kept, nothing wraps
    pairs = sorted(zip(g.vertex_ids[g.arc_sources].tolist(), g.vertex_ids[g.out_targets].tolist()))
    assert pairs == sorted([(hi, lo), (-5, 3), (hi - 1, -5)])


def test_mtx_index_minus_2p63_does_not_wrap(tmp_path):
    # subtracting the 1-base from -2**63 would wrap around to 2**63 - 1
    path = write(tmp_path, "w.mtx", MM + "3 3 2\n1 2\n-9223372036854775808 1\n")
    err = format_error(path)
    assert err.line == 4 and "outside 1..3" in str(err)


# ====================================================================== bounded reading
_PEAK = textwrap.dedent("""
    import json, sys
    import digraph

    def hwm():
        with open("/proc/self/status") as f:
            return next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmHWM:"))

    digraph.load(sys.argv[1])  # the kernels loaded (or compiled) before the measure
    out = []
    for path in sys.argv[2:]:
        before = hwm()
        try:
            g = digraph.load(path)
            outcome = ["ok", g.num_vertices, g.num_arcs]
            del g
        except Exception as e:
            outcome = [type(e).__name__, str(e)]
        out.append({"grew": hwm() - before, "outcome": outcome})
    print(json.dumps(out))
""")


def _peaks(tmp_path, *paths, **env):
    warm = write(tmp_path, "warm.txt", "0 1 1\n1 2 1\n")
    p = subprocess.run([sys.executable, "-c", _PEAK, str(warm), *map(str, paths)],
                       cwd=tmp_path, env=_env(**env), capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def _members(piece, copies):
    """A gzip file of ``copies`` members, each ``piece`` compressed: ``len(piece) * copies``
    bytes of text from a file of a few kilobytes per member (gzip reads every member)."""
    return gzip.compress(piece, 9) * copies


def test_gzip_bomb_is_refused_in_bounded_memory(tmp_path):
    """A 1 MB .txt.gz expanding to 1 GiB of valid arcs (268 M arcs): with 64 MiB of memory
    allowed, refused as soon as the arcs read cannot fit, the peak far below the text's size."""
    bomb = tmp_path / "bomb.txt.gz"
    bomb.write_bytes(_members(b"0 1\n" * MiB, 256))
    assert bomb.stat().st_size < 2 * MiB
    (r,) = _peaks(tmp_path, bomb, DIGRAPH_MEMORY_LIMIT="64M")
    kind, msg = r["outcome"]
    assert kind == "GraphTooLargeError", r
    assert "bomb.txt.gz, line " in msg and "arcs read up to this line" in msg and "64 MiB" in msg
    assert r["grew"] < 256 * MiB, r  # the whole text would be 1 GiB


def test_blank_gzip_bomb_is_read_in_constant_memory(tmp_path):
    """128 MiB of blank lines (with a few comments) from a 130 kB file: an empty graph, and the
    peak does not grow with the text."""
    bomb = tmp_path / "blank.txt.gz"
    bomb.write_bytes(_members(b"\n" * (8 * MiB - 12) + b"# comment\r\n\n", 16))
    zeros = tmp_path / "zeros.txt.gz"  # one endless line: refused after at most 1 MiB + a block
    zeros.write_bytes(_members(b"\x00" * (8 * MiB), 16))
    blank, nul = _peaks(tmp_path, bomb, zeros)
    assert blank["outcome"] == ["ok", 0, 0], blank
    assert blank["grew"] < 96 * MiB, blank
    kind, msg = nul["outcome"]
    assert kind == "GraphFormatError" and "zeros.txt.gz, line 1: a line longer than 1 MiB" in msg
    assert nul["grew"] < 96 * MiB, nul


def test_arcs_are_checked_against_memory(tmp_path, monkeypatch):
    path = write(tmp_path, "many.txt", "".join(f"{i} {i + 1}\n" for i in range(50_000)))
    assert digraph.load(path).num_arcs == 50_000
    monkeypatch.setenv("DIGRAPH_MEMORY_LIMIT", str(40_000 * BYTES_PER_ARC))
    with pytest.raises(GraphTooLargeError, match=r"many.txt, line 50000: the 50,000 arcs"):
        digraph.load(path)
    monkeypatch.setenv("DIGRAPH_MEMORY_LIMIT", "lots")
    with pytest.raises(InvalidParameterError, match="DIGRAPH_MEMORY_LIMIT='lots'"):
        digraph.load(path)


def test_memory_limit_setting(monkeypatch):
    monkeypatch.delenv("DIGRAPH_MEMORY_LIMIT", raising=False)
    assert memory_limit() is None
    for text, size in [("512M", 512 * MiB), ("2G", 2 * 2**30), ("1000", 1000), ("64 MiB", 64 * MiB),
                       ("3k", 3072), ("", None)]:
        monkeypatch.setenv("DIGRAPH_MEMORY_LIMIT", text)
        assert memory_limit() == size, text
    monkeypatch.setenv("DIGRAPH_MEMORY_LIMIT", "1.5G")
    with pytest.raises(InvalidParameterError):
        memory_limit()


def test_read_bytes_is_bounded(tmp_path):
    path = write(tmp_path, "r.txt.gz", "0 1\n" * 10_000)
    data, arr = read_bytes(path)
    assert data == b"0 1\n" * 10_000 and arr.size == 40_000
    with pytest.raises(GraphTooLargeError, match="r.txt.gz"):
        read_bytes(path, limit=1000)


def test_endless_line_is_refused(tmp_path):
    path = write(tmp_path, "long.txt", b"0 1\n1 2\n# " + b"x" * (17 * MiB) + b"\n2 3\n")
    err = format_error(path)
    assert err.line == 3 and "a line longer than 1 MiB" in str(err) and "'# xxx" in str(err)
    assert len(str(err)) < 200
    # a line that runs on past the limit where a block ends, in a later block
    path = write(tmp_path, "later.txt", b"0 1\n" * 1000 + b"1 " + b"2" * 5000 + b"\n")
    with pytest.raises(GraphFormatError, match=r"later.txt, line 1001: a line longer than 4,000 "):
        for _ in text_blocks(path, chunk_bytes=1024, max_line=4000):
            pass


# ---------------------------------------------------------------- block boundaries
def _text():
    """An edge list exercising everything a block boundary may cut: comments, CRLF, blank lines,
    weights off the fast path, a BOM, a header, no final newline."""
    rng = np.random.default_rng(5)
    lines = ["\ufeffsource,target,weight", "# a comment, with commas"]
    for k in range(300):
        u, v = (int(x) for x in rng.integers(-2**40, 2**40, 2))
        w = ["1.5", "0.30000000000000004", "123456789012345678901234", "1e-300", "7"][k % 5]
        lines.append(f"{u}, {v},{w}" + ("\r" if k % 7 == 0 else ""))
        if k % 11 == 0:
            lines.append("")
    return "\n".join(lines)


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 64, 1000, 1 << 20])
@pytest.mark.parametrize("gz", [False, True])
def test_blocks_give_the_same_arcs(tmp_path, chunk, gz):
    text = _text()
    name = "b.csv" + (".gz" if gz else "")
    path = tmp_path / name
    raw = text.encode()
    path.write_bytes(_members(raw[:1000], 1) + _members(raw[1000:], 1) if gz else raw)
    want = parse_edgelist(raw, "b.csv", "csv")
    got = read_arcs(path, "csv", None, None, chunk_bytes=chunk)
    for a, b in zip(got, want):
        assert np.array_equal(a, b)
    assert got[0].size == 300
    blocks = list(text_blocks(path, chunk_bytes=chunk))
    assert b"".join(d[:e] for d, e, _, _ in blocks) == raw
    assert [first for _, _, first, _ in blocks] == \
        [1 + sum(n for _, _, _, n in blocks[:k]) for k in range(len(blocks))]


@pytest.mark.parametrize("chunk", [1, 5, 40, 1 << 20])
def test_errors_name_the_right_line_across_blocks(tmp_path, chunk):
    head = "".join(f"{i} {i + 1} 1\n" for i in range(50))
    cases = [("bad.txt", head + "# c\n7 x 1\n", 52, "'x' is not an integer"),
             ("mix.txt", "# c\n\n" + head + "7 8\n", 53, "the first data line (line 3) has 3"),
             ("nan.txt", head + "1 2 nan\n", 51, "NaN")]
    for name, text, line, words in cases:
        path = write(tmp_path, name, text)
        with pytest.raises((GraphFormatError, ValueError)) as info:
            read_arcs(path, "edgelist", None, None, chunk_bytes=chunk)
        assert f"{name}, line {line}: " in str(info.value) and words in str(info.value)


@pytest.mark.parametrize("chunk", [1, 9, 50, 1 << 20])
def test_mtx_across_blocks(tmp_path, chunk):
    body = "".join(f"{i} {i % 7 + 1} {i}.5\n" for i in range(1, 41))
    head = "%%MatrixMarket matrix coordinate real general\n% c\n%\n"
    path = write(tmp_path, "m.mtx", head + "40 40 40\n" + body)
    src, dst, w, n, sym = parse_blocks(text_blocks(path, chunk), path, None, None)
    assert n == 40 and not sym and src.tolist() == list(range(40))
    assert dst.tolist() == [i % 7 for i in range(1, 41)] and w[3] == 4.5
    # one entry too many: refused at its line; one too few: at the size line
    path = write(tmp_path, "x.mtx", head + "40 40 39\n" + body)
    with pytest.raises(GraphFormatError, match=r"x.mtx, line 44: entry 40 .* announces 39 entries"):
        parse_blocks(text_blocks(path, chunk), path, None, None)
    path = write(tmp_path, "y.mtx", head + "40 40 41\n" + body)
    with pytest.raises(GraphFormatError, match=r"y.mtx, line 4: the size line announces 41 "):
        parse_blocks(text_blocks(path, chunk), path, None, None)


# ====================================================================== special files
_LOAD = "import sys, digraph; digraph.load(sys.argv[1])"


def _load_in_child(path, cwd):
    p = subprocess.run([sys.executable, "-c", _LOAD, str(path)], cwd=cwd, env=_env(),
                       capture_output=True, text=True, timeout=60)  # a hang fails the test
    return p.returncode, p.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "pipe.txt")
    os.symlink(tmp_path / "pipe.txt", tmp_path / "link.csv")
    for name in ("pipe.txt", "link.csv"):
        rc, err = _load_in_child(tmp_path / name, tmp_path)
        assert rc == 1 and "GraphFormatError" in err, err
        assert f"{name}: the input is a FIFO (named pipe); only a regular file can be read" in err
    rc, err = _cli(tmp_path, "run", "pagerank", "pipe.txt", "--quiet", timeout=60)
    assert rc == 2 and err.startswith("digraph: error: pipe.txt: the input is a FIFO"), err
    assert len(err.splitlines()) == 1


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_device_linked_as_a_graph_is_refused(tmp_path):
    os.symlink("/dev/zero", tmp_path / "z.txt")
    rc, err = _load_in_child(tmp_path / "z.txt", tmp_path)
    assert rc == 1 and "z.txt: the input is a character device" in err, err
    rc, err = _cli(tmp_path, "preprocess", "z.txt", "-o", "out", timeout=60)
    assert rc == 2 and "z.txt: the input is a character device" in err, err
    assert not (tmp_path / "out").exists()


def test_directory_and_links(tmp_path):
    (tmp_path / "d.txt").mkdir()
    err = format_error(tmp_path / "d.txt")
    assert "d.txt: the input is a directory" in str(err)
    real = write(tmp_path, "real.txt", "0 1\n")
    os.symlink(real, tmp_path / "alias.txt")
    assert digraph.load(tmp_path / "alias.txt").num_arcs == 1
    with pytest.raises(FileNotFoundError):
        digraph.load(tmp_path / "missing.txt")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_seed_file_fifo_and_device_are_refused(tmp_path):
    write(tmp_path, "g.txt", "0 1\n1 2\n")
    os.mkfifo(tmp_path / "seeds.fifo")
    rc, err = _cli(tmp_path, "run", "adsorption", "g.txt", "--seeds", "@seeds.fifo", "--quiet",
                   timeout=60)
    assert rc == 2 and len(err.splitlines()) == 1, err
    assert "seeds.fifo: the --seeds file is a FIFO (named pipe)" in err
    if os.path.exists("/dev/zero"):
        os.symlink("/dev/zero", tmp_path / "seeds.txt")
        rc, err = _cli(tmp_path, "run", "adsorption", "g.txt", "--seeds", "@seeds.txt", "--quiet",
                       timeout=60)
        assert rc == 2 and "seeds.txt: the --seeds file is a character device" in err, err
    write(tmp_path, "ok.txt", "# seeds\n0\n")
    rc, err = _cli(tmp_path, "run", "adsorption", "g.txt", "--seeds", "@ok.txt", "--quiet")
    assert rc == 0, err


# ====================================================================== Matrix Market claims
def test_mtx_order_far_beyond_its_entries_needs_num_vertices(tmp_path, monkeypatch):
    path = write(tmp_path, "h.mtx", MM + "200000000 200000000 1\n1 2\n")
    assert path.stat().st_size < 100
    err = format_error(path)
    msg = str(err)
    assert err.line == 2 and "h.mtx, line 2: the size line declares 200,000,000 vertices for 1 "\
        "entry" in msg and "num_vertices=200000000" in msg
    # confirmed by num_vertices, the order is then judged by the memory it needs
    monkeypatch.setenv("DIGRAPH_MEMORY_LIMIT", "256M")
    with pytest.raises(GraphTooLargeError, match="num_vertices declares 200,000,000 vertices"):
        digraph.load(path, num_vertices=200_000_000)
    path = write(tmp_path, "c.mtx", MM + "3000000 3000000 1\n1 2\n")
    monkeypatch.delenv("DIGRAPH_MEMORY_LIMIT")
    assert digraph.load(path, num_vertices=3_000_000).num_vertices == 3_000_000
    # up to 2**20 vertices whatever the entries; beyond, 16 per entry
    assert digraph.load(write(tmp_path, "e.mtx", MM + "1048576 1048576 0\n")).num_vertices == 2**20
    err = format_error(write(tmp_path, "f.mtx", MM + "1048577 1048577 0\n"))
    assert err.line == 2 and "for 0 entries" in str(err)
    entries = "".join(f"{i} {i}\n" for i in range(1, 65_537 + 1))
    g = digraph.load(write(tmp_path, "g.mtx", MM + f"1048592 1048592 65537\n" + entries))
    assert g.num_vertices == 16 * 65_537 and g.num_arcs == 65_537


def test_mtx_header_claims_allocate_nothing(tmp_path):
    """A hundred bytes claiming 2*10**8 rows or 10**12 entries: refused at the size line, from
    the command line, with the peak of the load under 32 MiB."""
    files = [write(tmp_path, "rows.mtx", MM + "200000000 200000000 1\n1 2\n"),
             write(tmp_path, "nnz.mtx", MM + "3 3 1000000000000\n1 2\n"),
             write(tmp_path, "rows.mtx.gz", MM + "200000000 200000000 1\n1 2\n")]
    for r, f in zip(_peaks(tmp_path, *files), files):
        kind, msg = r["outcome"]
        assert kind == "GraphFormatError" and f"{f.name}, line 2: " in msg, r
        assert r["grew"] < 32 * MiB, r
    rc, err = _cli(tmp_path, "run", "pagerank", "rows.mtx", "--quiet")
    assert rc == 2 and err.startswith("digraph: error: rows.mtx, line 2: the size line declares")
