"""A deterministic fuzz of the file readers through the command line (issue 19).

Every damaged or hostile edge list and Matrix Market file -- bad ids (negative, floats, 2**63,
2**64, hex, NaN, unicode digits, empty fields), bad weights, wrong field counts, binary garbage,
other encodings, CRLF and lone CR, truncated or corrupt gzip, Matrix Market headers that declare
10**9, 10**12 or 10**30 rows, negative or non-integer sizes, more or fewer entries than present,
wrong banner words, indices out of range -- must give, from ``digraph run pagerank FILE --quiet``,
either status 0 (the input is valid) or status 2 with exactly one line ``digraph: error: ...`` on
stderr and no traceback, with the peak memory of the case under 64 MiB plus twice the file's
size plus a generous allowance for the graph it really holds.

The expected outcome of each case comes from a small reference reader written here in plain
Python from the documented rules (``_expect_edgelist``, ``_expect_mtx``, ``_named_arcs`` for edge
lists whose first data line has a vertex name): a valid input must run, an invalid one must be
refused naming the file and, for a bad line, its number.

Starting Python and importing numba costs 1-2 s, so the cases run in ONE child process
(``python tests/io/test_load_fuzz.py --child ...``) that calls :func:`digraph.cli.main` in-process for
each, under an address-space limit (``RLIMIT_AS``) so that a huge allocation fails fast instead of
eating the machine, and measures each case's peak RSS (``/proc/self/clear_refs`` resets the high
water mark between cases).  A few true ``python -m digraph.cli`` runs check the worst headers end
to end.
"""

import gzip
import json
import os
import re
import resource
import subprocess
import sys
import time
import unicodedata
import zlib
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
MiB = 2**20
I64 = 2**63
AS_LIMIT = 3 * 2**30          # address-space cap of the child processes
BYTES_PER_VERTEX = 40         # digraph.memory.BYTES_PER_VERTEX
SURELY_FITS = 10**6           # declared vertex counts the fuzz uses are <= this ...
SURELY_TOO_BIG = AS_LIMIT // BYTES_PER_VERTEX + 1  # ... or >= this (x 40 B: beyond AS_LIMIT)
BOM = b"\xef\xbb\xbf"
BLANK = b" \t\r"


# ====================================================================== the reference reader
class _Bad(Exception):
    """The input must be refused; ``line`` is the 1-based line the message must name (or None),
    ``named`` whether the message must name the file."""

    def __init__(self, line=None, named=True):
        super().__init__(line)
        self.line = line
        self.named = named


_ID = re.compile(rb"[+-]?[0-9]+")
_WEIGHT = re.compile(rb"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                     rb"|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?|[nN][aA][nN])")
_SIZE = re.compile(r"[+-]?[0-9]+")


def _int(token):
    """A decimal integer of any length (Python's int() refuses more than 4,300 digits)."""
    digits = token.lstrip(b"+-").lstrip(b"0") if isinstance(token, bytes) else \
        token.lstrip("+-").lstrip("0")
    sign = -1 if token[:1] in (b"-", "-") else 1
    return sign * 10**40 if len(digits) > 40 else int(token)


_DATA_LINE = re.compile(rb"^[ \t\r]*[^#%\n \t\r][^\n]*", re.M)


def _data_lines(data, start):
    """(1-based number, start offset, end offset) of each line of ``data[start:]`` that holds
    data: its first byte other than a blank (space, tab, CR) is not '#' or '%'."""
    text = data[start:]
    no, last = data.count(b"\n", 0, start) + 1, 0
    for m in _DATA_LINE.finditer(text):
        no += text.count(b"\n", last, m.start())
        last = m.start()
        yield no, start + m.start(), start + m.end()


def _fields(line, comma):
    s = line.strip(BLANK)
    if comma:
        return [f.strip(BLANK) for f in s.split(b",")]
    return re.split(rb"[ \t\r]+", s)


def _arcs(data, start, comma, expect, base, limit, most=None):
    """The documented line rules: 2 or 3 fields (``expect`` when given), the same count on every
    line; ids decimal int64 (``base`` subtracted; in ``0..limit-1`` when ``limit >= 0``); weights
    decimal floats or inf/infinity/nan, NaN refused; a data line beyond the first ``most`` (when
    given) refused."""
    arcs, weights, ncols = [], [], expect
    for no, pos, end in _data_lines(data, start):
        if most is not None and len(arcs) == most:
            raise _Bad(no)
        f = _fields(data[pos:end], comma)
        if len(f) not in (2, 3) or (ncols and len(f) != ncols):
            raise _Bad(no)
        ids = []
        for t in f[:2]:
            if not _ID.fullmatch(t) or not -I64 <= _int(t) < I64:
                raise _Bad(no)
            ids.append(_int(t) - base)
        if len(f) == 3:
            if not _WEIGHT.fullmatch(f[2]) or float(f[2]) != float(f[2]):
                raise _Bad(no)
            weights.append(float(f[2]))
        ncols = ncols or len(f)
        if limit >= 0 and not all(0 <= v < limit for v in ids):
            raise _Bad(no)
        arcs.append(tuple(ids))
    return arcs, (weights if ncols == 3 else None)


def _named_arcs(data, start, comma):
    """The documented line rules for a file of vertex names: 2 or 3 fields, the same count on
    every line; ids non-empty UTF-8 text without control characters (kept as bytes); weights as
    in :func:`_arcs`.  The first data line (a name on it decided the mode) may not be the only
    line with a name among those read before the first bad line, or all of them."""
    arcs, weights, ncols, named, first = [], [], 0, 0, None
    for no, pos, end in _data_lines(data, start):
        first = first or no
        f = _fields(data[pos:end], comma)
        bad = len(f) not in (2, 3) or (ncols and len(f) != ncols)
        for t in f[:2] if not bad else ():
            try:
                text = t.decode("utf-8")
            except UnicodeDecodeError:
                bad = True
                break
            bad |= not t or any(unicodedata.category(c) == "Cc" for c in text)
        if not bad and len(f) == 3:
            bad = not _WEIGHT.fullmatch(f[2]) or float(f[2]) != float(f[2])
        if bad:
            raise _Bad(first if named == 1 and len(arcs) >= 2 else no)
        named += any(not _ID.fullmatch(t) for t in f[:2])
        if len(f) == 3:
            weights.append(float(f[2]))
        ncols = ncols or len(f)
        arcs.append((f[0], f[1]))
    if named == 1 and len(arcs) >= 2:
        raise _Bad(first)
    return arcs, (weights if ncols == 3 else None)


def _is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


def _is_header(fields):
    """A csv/tsv first data line is a header when every field is a name: not empty, not starting
    like a number, not a number for float()."""
    return bool(fields) and all(f and not re.match(r"[+-]?\.?[0-9]", f) and not _is_number(f)
                                for f in fields)


def _decompress(data, name):
    if data and (name.endswith(".gz") or data[:2] == b"\x1f\x8b"):
        try:
            return gzip.decompress(data)
        except (OSError, EOFError, zlib.error):
            raise _Bad() from None
    return data


def _check_declared(n, named):
    """A declared vertex count: refused beyond int64 or the memory the child may have."""
    assert n <= SURELY_FITS or n >= SURELY_TOO_BIG, "a size whose fate depends on the machine"
    if n >= I64 or n * BYTES_PER_VERTEX > AS_LIMIT:
        raise _Bad(None, named)


def _expect_edgelist(data, fmt, num_vertices):
    """(arcs, weights, vertex count) of a valid edge list; raise _Bad for an invalid one."""
    comma, header = fmt == "csv", fmt in ("csv", "tsv")
    start = len(BOM) if data.startswith(BOM) else 0
    if header:  # a first data line whose fields are all names is a header
        for _, pos, end in _data_lines(data, start):
            text = data[pos:end].rstrip(b"\r").decode("utf-8", errors="replace")
            fields = [f.strip() for f in text.split(",")] if comma else text.split()
            if _is_header(fields):
                start = end + 1
            break
    limit = -1 if num_vertices is None else num_vertices
    first = next(_data_lines(data, start), None)
    if num_vertices is None and first is not None and \
            any(not _ID.fullmatch(t) for t in _fields(data[first[1]:first[2]], comma)[:2]):
        arcs, weights = _named_arcs(data, start, comma)  # a name on the first data line
    else:
        arcs, weights = _arcs(data, start, comma, 0, 0, limit)
    n = num_vertices if num_vertices is not None else len({v for a in arcs for v in a})
    return arcs, weights, n


_FIELDS = ("pattern", "integer", "real", "double")


def _expect_mtx(data, num_vertices):
    """(arcs, weights, vertex count) of a valid Matrix Market file; raise _Bad otherwise."""
    if not data.strip():
        return [], None, num_vertices or 0
    nl = data.find(b"\n")
    words = data[:nl if nl >= 0 else len(data)].decode("utf-8", errors="replace").lower().split()
    if words[:3] != ["%%matrixmarket", "matrix", "coordinate"] or len(words) != 5 \
            or words[3] not in _FIELDS or words[4] not in ("general", "symmetric"):
        raise _Bad(1)
    size = next(_data_lines(data, 0), None)
    if size is None:
        raise _Bad()
    no, pos, end = size
    toks = data[pos:end].decode("utf-8", errors="replace").split()
    if len(toks) != 3 or not all(_SIZE.fullmatch(t) for t in toks):
        raise _Bad(no)
    rows, cols, nnz = map(_int, toks)
    if min(rows, cols, nnz) < 0 or max(rows, cols, nnz) >= I64 or rows != cols:
        raise _Bad(no)
    _check_declared(rows, named=True)
    if rows > max(2**20, 16 * nnz) and num_vertices != rows:  # an order num_vertices confirms
        raise _Bad(no)
    # an entry beyond the announced count is refused at its line, fewer at the size line
    arcs, weights = _arcs(data, end + 1, False, 2 if words[3] == "pattern" else 3, 1, rows, nnz)
    if len(arcs) != nnz:
        raise _Bad(no)
    if num_vertices is not None and num_vertices != rows:
        raise _Bad()
    if words[4] == "symmetric":
        off = [k for k, (u, v) in enumerate(arcs) if u != v]
        arcs = arcs + [arcs[k][::-1] for k in off]
        if weights is not None:
            weights = weights + [weights[k] for k in off]
    return arcs, weights, rows


def expectation(raw, name, num_vertices):
    """What ``digraph run pagerank`` must do with the file ``name`` holding ``raw``:
    ``("ok", n, m)``, ``("either", n, m)`` (loads; pagerank may refuse its weights) or
    ``("error", line, named)``."""
    ext = name[:-3] if name.endswith(".gz") else name
    ext = ext.rsplit(".", 1)[1]
    fmt = {"txt": "edgelist", "el": "edgelist", "edges": "edgelist"}.get(ext, ext)
    try:
        if num_vertices is not None:  # checked before the file is read
            if num_vertices < 0:
                raise _Bad(None, named=False)
            _check_declared(num_vertices, named=False)
        data = _decompress(raw, name)  # once: by the name or by the gzip magic number
        if fmt == "mtx":
            arcs, weights, n = _expect_mtx(data, num_vertices)
        else:
            arcs, weights, n = _expect_edgelist(data, fmt, num_vertices)
    except _Bad as e:
        return ("error", e.line, e.named)
    safe = True
    if weights is not None:  # pagerank refuses negative, infinite, subnormal or overflowing weights
        sums = {}
        for (u, _), w in zip(arcs, weights):
            safe &= w == 0 or 1e-300 <= w <= 1e300
            sums[u] = sums.get(u, 0.0) + w
        safe &= all(s <= 1e300 for s in sums.values())
    return ("ok" if safe else "either", n, len(arcs))


# ====================================================================== the fuzz cases
GOOD_IDS = [b"0", b"1", b"2", b"3", b"7", b"+3", b"-1", b"-0", b"007", b"9223372036854775807",
            b"-9223372036854775808", b"4611686018427387904", b"12345678901"]
BAD_IDS = [b"9223372036854775808", b"-9223372036854775809", b"18446744073709551616",
           b"1" + b"0" * 30, b"9" * 400, b"1.5", b"1.0", b"1e3", b"0x1F", b"0b1", b"nan", b"NaN",
           b"inf", b"-inf", "\u0661\u0662".encode(), "\uff11\uff12".encode(), "\u00b2".encode(),
           b"", b"+", b"-", b"--1", b"+-1", b"1_000", b"12abc", b"\x00", b"1\x002", b"\xff",
           b"3\x0b", b"3\x0c", b"1\xc2\x85", b"'1'", b"\"2\"", b"1,", b"\xef\xbb\xbf1"]
GOOD_WEIGHTS = [b"1", b"0.5", b".5", b"5.", b"2.5e-3", b"1E2", b"+3", b"0", b"-0.0", b"7",
                b"1e-300", b"123456789012345678901234", b"0.30000000000000004"]
BAD_WEIGHTS = [b"1e-320", b"1e-400", b"1e309", b"-1e309", b"inf", b"-inf", b"Infinity",
               b"-INFINITY", b"nan", b"NaN", b"-nan", b"+nan", b"abc", b"1e", b"1.2.3", b"0x10",
               b"", b"1_0", b"--3", b"1e+", b"-1", b"-2.5", b"1" + b"0" * 400,
               b"0." + b"0" * 400 + b"1", b"1e99999999999", b"1e-99999999999",
               "\u0663".encode(), b"infinit", b"nanx", b".", b"e5", b"1d5", b"1.5f", b"\x00"]
NASTY = [b"\x00", b"\xff", b"\xfe", b"\xe9", b"\xc3\x28", b"\x0b", b"\x0c", b"\x1c", b"\xc2\x85",
         "\u2028".encode(), b"\r", b"\x1f\x8b", b",", b"#", b"%", b" ", b"\n", b"\t", b"-", b".",
         b"\r\n", b"\n\n", b"9" * 25, b"\xef\xbb\xbf"]
BIG_SIZES = [10**9, 10**12, 10**30, 2**63 - 1, 2**63, 2**64, 10**400]
SIZE_TOKENS = [b"-1", b"-5", b"1e3", b"3.0", b"0x10", b"\xd9\xa1\xd9\xa0", b"1_0", b"+4", b"",
               b"abc", b"\xff", b"nan", b"4 4", b"\xef\xbc\x94"]
BANNERS = [
    b"%%MatrixMarket matrix coordinate real general",
    b"%%MatrixMarket matrix coordinate pattern general",
    b"%%MatrixMarket matrix coordinate integer symmetric",
    b"%%MatrixMarket matrix coordinate double general",
    b"%%matrixmarket MATRIX Coordinate Real Symmetric",
    b"  %%MatrixMarket matrix coordinate real general  ",
]
BAD_BANNERS = [
    b"%%MatrixMarket matrix array real general",
    b"%%MatrixMarket matrix coordinate complex general",
    b"%%MatrixMarket matrix coordinate real hermitian",
    b"%%MatrixMarket matrix coordinate real skew-symmetric",
    b"%%MatrixMarket vector coordinate real general", b"%%MatrixMarket matrix coordinate real",
    b"%%MatrixMarket matrix coordinate real general extra", b"%MatrixMarket matrix coordinate "
    b"real general", b"%%MatrixMarketmatrix coordinate real general", b"", b"0 1",
    b"%%MatrixMarket matrix coordinate \xff general", b"\xff\xfe%%MatrixMarket",
    b"%%MatrixMarket matrix coordinate pattern\x00 general", b"%%MatrixMarket",
]


def _pick(rng, seq):
    return seq[int(rng.integers(len(seq)))]


def _insert(rng, data, piece):
    k = int(rng.integers(len(data) + 1))
    return data[:k] + piece + data[k:]


def _byte_damage(rng, data):
    """One byte-level damage: an inserted nasty piece, random bytes, a cut, an encoding, CR-only
    line ends, a very long line, or the whole file replaced by garbage."""
    kind = int(rng.integers(10))
    if kind == 0:
        return _insert(rng, data, _pick(rng, NASTY))
    if kind == 1:
        return _insert(rng, data, rng.integers(0, 256, int(rng.integers(1, 9)), dtype=np.uint8)
                       .tobytes())
    if kind == 2:
        return data[:int(rng.integers(len(data) + 1))]
    if kind == 3:
        text = data.decode("utf-8", errors="replace")
        enc = _pick(rng, ["utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-8-sig"])
        return text.encode(enc)
    if kind == 4:
        return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r")
    if kind == 5:
        return _insert(rng, data, b"\xe9t\xe9 caf\xe9 \xe0 0 1\n")  # latin-1 text
    if kind == 6:
        return _insert(rng, data, _pick(rng, [b"1" * 5000, b"x" * 5000, b"0 1 " + b"9" * 5000]))
    if kind == 7:
        return rng.integers(0, 256, int(rng.integers(1, 400)), dtype=np.uint8).tobytes()
    if kind == 8:
        k = int(rng.integers(len(data) + 1))
        return data[:k] + b"\x00" * int(rng.integers(1, 50)) + data[k:]
    return data.replace(b"\n", b"\r\n")


def _gzip_damage(rng, comp):
    kind = int(rng.integers(7))
    if kind == 0:
        return comp[:int(rng.integers(len(comp)))]                         # truncated
    if kind == 1:
        b = bytearray(comp)
        k = int(rng.integers(10, len(b))) if len(b) > 10 else 0
        b[k] ^= 0xFF                                                        # corrupt
        return bytes(b)
    if kind == 2:
        return comp + _pick(rng, [b"garbage", b"\x00" * 7, b"\x1f\x8b", b"\n", b"\x1f\x8b\x08"])
    if kind == 3:
        return comp + gzip.compress(b"5 6\n")                             # two members
    if kind == 4:
        return comp + gzip.compress(b"")
    if kind == 5:
        return comp[:10]                                                    # header only
    return b"\x1f\x8b"


def _render(rng, lines, sep, eol, final):
    out = []
    for line in lines:
        out.append(line if isinstance(line, bytes) else sep.join(line))
        if rng.random() < 0.1:
            out.append(_pick(rng, [b"# a comment", b"% another", b"", b"   ", b"\t# indented"]))
    return eol.join(out) + (eol if final and out else b"")


def gen_edgelist(rng):
    """(file name suffix, raw bytes, extra argv) of one random, possibly damaged, edge list."""
    ext = _pick(rng, ["txt", "el", "edges", "tsv", "csv"])
    comma = ext == "csv"
    weighted = rng.random() < 0.5
    ids = lambda: (_pick(rng, GOOD_IDS) if rng.random() < 0.3  # noqa: E731
                   else str(int(rng.integers(0, 12))).encode())
    lines = [[ids(), ids()] + ([_pick(rng, GOOD_WEIGHTS)] if weighted else [])
             for _ in range(int(rng.integers(0, 12)))]
    for _ in range(int(rng.integers(0, 3))):
        if not lines:
            break
        row = lines[int(rng.integers(len(lines)))]
        kind = int(rng.integers(6)) if row else 3
        if kind == 0:
            row[int(rng.integers(min(2, len(row))))] = _pick(rng, BAD_IDS)
        elif kind == 1:
            if len(row) == 3:
                row[2] = _pick(rng, BAD_WEIGHTS)
            else:
                row.append(_pick(rng, BAD_WEIGHTS + GOOD_WEIGHTS))
        elif kind == 2:
            row.pop(int(rng.integers(len(row))))
        elif kind == 3:
            row.append(_pick(rng, GOOD_IDS + GOOD_WEIGHTS))
        elif kind == 4:
            row.insert(int(rng.integers(len(row) + 1)), b"")
        else:
            row[int(rng.integers(len(row)))] += _pick(rng, NASTY)
    if ext in ("csv", "tsv") and rng.random() < 0.3:
        lines.insert(0, _pick(rng, [[b"src", b"dst"], [b"source", b"target", b"weight"],
                                    [b"1", b"x"], [b"nan", b"inf"], [b"\xff\xfe"]]))
    sep = _pick(rng, [b",", b", ", b" , ", b",\t"]) if comma else \
        _pick(rng, [b" ", b"\t", b"  ", b" \t ", b"\r"])
    data = _render(rng, lines, sep, _pick(rng, [b"\n", b"\n", b"\r\n"]), rng.random() < 0.8)
    if rng.random() < 0.2:
        data = BOM + data
    if rng.random() < 0.3:
        data = _byte_damage(rng, data)
    argv = []
    if rng.random() < 0.15:
        argv = ["--num-vertices", str(_pick(rng, [0, 1, 5, 12, 13, 100, 10**5] + BIG_SIZES))]
    return ext, data, argv


def gen_mtx(rng):
    """(suffix, raw bytes, extra argv) of one random, possibly damaged, Matrix Market file."""
    banner = _pick(rng, BANNERS) if rng.random() < 0.85 else _pick(rng, BAD_BANNERS)
    words = banner.lower().split()
    pattern = b"pattern" in words
    n = int(rng.integers(0, 9))
    nnz = int(rng.integers(0, 10)) if n else 0
    entries = []
    for _ in range(nnz):
        row = [str(int(rng.integers(1, n + 1))).encode() for _ in range(2)]
        if not pattern:
            row.append(_pick(rng, GOOD_WEIGHTS))
        entries.append(row)
    size = [str(n).encode(), str(n).encode(), str(nnz).encode()]
    for _ in range(int(rng.integers(0, 3))):
        kind = int(rng.integers(8))
        if kind == 0 and len(size) == 3:
            size[int(rng.integers(3))] = str(_pick(rng, BIG_SIZES)).encode()
        elif kind == 1 and len(size) >= 2:
            size[0] = size[1] = str(_pick(rng, BIG_SIZES)).encode()
        elif kind == 2 and len(size) == 3:
            size[int(rng.integers(3))] = _pick(rng, SIZE_TOKENS)
        elif kind == 3 and len(size) == 3:
            size[2] = str(nnz + int(rng.integers(-2, 3))).encode()
        elif kind == 4 and entries:
            row = entries[int(rng.integers(len(entries)))]
            row[int(rng.integers(min(2, len(row))))] = \
                _pick(rng, [b"0", str(n + 1).encode(), b"-1"] + BAD_IDS)
        elif kind == 5 and entries:
            row = entries[int(rng.integers(len(entries)))]
            if len(row) == 3 and rng.random() < 0.7:
                row[2] = _pick(rng, BAD_WEIGHTS)
            else:
                if row and rng.random() < 0.5:
                    row.pop()
                else:
                    row.append(b"1")
        elif kind == 6:
            size = size[:int(rng.integers(3))] + ([b"7"] if rng.random() < 0.5 else [])
        elif kind == 7 and len(size) >= 2:
            size[1] = str(n + 1).encode()
    head = [banner] + ([b"% comment", b"%"] if rng.random() < 0.5 else [])
    data = _render(rng, head + [b" ".join(size)] + entries, b" ",
                   _pick(rng, [b"\n", b"\n", b"\r\n"]), rng.random() < 0.8)
    if rng.random() < 0.2:
        data = _byte_damage(rng, data)
    argv = []
    if rng.random() < 0.1:
        argv = ["--num-vertices", str(_pick(rng, [n, n + 1, 0] + BIG_SIZES))]
    return "mtx", data, argv


MM = b"%%MatrixMarket matrix coordinate pattern general\n"
MMR = b"%%MatrixMarket matrix coordinate real general\n"

#: (name, raw, extra argv): the hostile headers and inputs named in issue 19, always present
FIXED = [
    ("huge_rows_9.mtx", MM + b"1000000000 1000000000 1\n1 2\n", []),
    ("huge_rows_12.mtx", MM + b"1000000000000 1000000000000 1\n1 2\n", []),
    ("huge_rows_30.mtx", MM + b"1" + b"0" * 30 + b" 1" + b"0" * 30 + b" 1\n1 2\n", []),
    ("huge_rows_i64.mtx", MM + b"9223372036854775807 9223372036854775807 1\n1 2\n", []),
    ("huge_rows_2p63.mtx", MM + b"9223372036854775808 9223372036854775808 1\n1 2\n", []),
    ("huge_rows_2p64.mtx", MM + b"18446744073709551616 18446744073709551616 0\n", []),
    ("huge_rows_9.mtx.gz", gzip.compress(MM + b"1000000000 1000000000 1\n1 2\n"), []),
    ("huge_nnz_9.mtx", MM + b"3 3 1000000000\n1 2\n", []),
    ("huge_nnz_12.mtx", MMR + b"3 3 1000000000000\n1 2 1\n", []),
    ("huge_nnz_30.mtx", MM + b"3 3 " + b"9" * 30 + b"\n1 2\n", []),
    ("neg_rows.mtx", MM + b"-3 -3 1\n1 2\n", []),
    ("neg_nnz.mtx", MM + b"3 3 -1\n", []),
    ("float_rows.mtx", MM + b"3.0 3.0 1\n1 2\n", []),
    ("exp_rows.mtx", MM + b"1e3 1e3 1\n1 2\n", []),
    ("hex_rows.mtx", MM + b"0x10 0x10 1\n1 2\n", []),
    ("underscore_rows.mtx", MM + b"1_0 1_0 1\n1 2\n", []),
    ("arabic_rows.mtx", MM + "\u0661\u0660 \u0661\u0660 1\n1 2\n".encode(), []),
    ("fullwidth_rows.mtx", MM + "\uff14 \uff14 1\n1 2\n".encode(), []),
    ("nnz_too_many.mtx", MMR + b"3 3 4\n1 2 1\n2 3 1\n", []),
    ("nnz_too_few.mtx", MMR + b"3 3 1\n1 2 1\n2 3 1\n", []),
    ("entry_oor.mtx", MMR + b"3 3 2\n1 2 1\n4 3 1\n", []),
    ("entry_zero.mtx", MMR + b"3 3 1\n0 2 1\n", []),
    ("entry_i64.mtx", MMR + b"3 3 1\n9223372036854775808 2 1\n", []),
    ("entry_neg_i64.mtx", MMR + b"3 3 1\n-9223372036854775808 2 1\n", []),
    ("complex.mtx", b"%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 2 1 0\n", []),
    ("array.mtx", b"%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", []),
    ("pattern3.mtx", MM + b"2 2 1\n1 2 5\n", []),
    ("nan_value.mtx", MMR + b"2 2 1\n1 2 nan\n", []),
    ("inf_value.mtx", MMR + b"2 2 1\n1 2 inf\n", []),
    ("no_size.mtx", MM + b"% nothing\n", []),
    ("utf16.mtx", (MM + b"2 2 1\n1 2\n").decode().encode("utf-16"), []),
    ("nv_mismatch.mtx", MM + b"2 2 1\n1 2\n", ["--num-vertices", "3"]),
    ("nv_big.mtx", MM + b"2 2 1\n1 2\n", ["--num-vertices", str(10**9)]),
    ("rows_ok.mtx", MM + b"100000 100000 1\n1 2\n", []),
    ("nv_8.txt", b"0 1\n1 2\n", ["--num-vertices", str(10**8)]),
    ("nv_9.txt", b"0 1\n1 2\n", ["--num-vertices", str(10**9)]),
    ("nv_2p63.txt", b"0 1\n1 2\n", ["--num-vertices", str(2**63)]),
    ("nv_30.txt", b"0 1\n1 2\n", ["--num-vertices", str(10**30)]),
    ("nv_30_bad_line.txt", b"0 1\nx y\n", ["--num-vertices", str(10**30)]),
    ("nv_neg.txt", b"0 1\n1 2\n", ["--num-vertices", "-1"]),
    ("nv_ok.txt", b"0 1\n1 2\n", ["--num-vertices", "100000"]),
    ("id_2p63.txt", b"0 1\n9223372036854775808 1\n", []),
    ("id_2p64.txt", b"18446744073709551616 1\n", []),
    ("id_vt.txt", b"99999999999999999999\x0b 1\n", []),
    ("id_nel.txt", b"0 1\n99999999999999999999\xc2\x85 1\n", []),
    ("id_ls.txt", "0 1\n99999999999999999999\u2028 1\n".encode(), []),
    ("id_float.txt", b"1.0 2\n", []),
    ("id_nan.txt", b"nan 2\n", []),
    ("weight_nan.txt", b"0 1 1\n1 2 nan\n", []),
    ("weight_1e309.txt", b"0 1 1e309\n", []),
    ("weight_text.csv", b"0,1,heavy\n", []),
    ("empty_field.csv", b"0,,1\n", []),
    ("latin1.txt", b"0 1\n\xe9 2\n", []),
    ("utf16.txt", "0 1\n1 2\n".encode("utf-16"), []),
    ("utf8bom.txt", BOM + b"0 1\n1 2\n", []),
    ("crlf.csv", b"src,dst\r\n0,1\r\n1,2\r\n", []),
    ("garbage.txt", bytes(range(256)) * 4, []),
    ("nul.txt", b"\x00" * 1000, []),
    ("blank_lines.txt", b"\n" * 2_000_000 + b"0 1\n", []),            # 2 MB of newlines
    ("newlines.txt.gz", gzip.compress(b"\n" * 32_000_000 + b"0 1\n"), []),  # 32 MB from 31 kB
    ("long_then_bad.txt", b"".join(b"%d %d\n" % (i, i + 1) for i in range(300_000)) + b"x y\n",
     []),
    ("truncated.txt.gz", gzip.compress(b"".join(b"%d %d\n" % (i, i + 1)
                                               for i in range(3000)))[:2000], []),
    ("not_gzip.txt.gz", b"0 1\n", []),
    ("magic_only.txt", b"\x1f\x8b", []),
    ("empty.txt", b"", []),
    ("empty.mtx", b"", []),
    ("empty.csv.gz", gzip.compress(b""), []),
]


#: the same cases at every run; set DIGRAPH_FUZZ_SEED to draw others (a search for new bugs)
SEED = int(os.environ.get("DIGRAPH_FUZZ_SEED", "20190419"))


def build_cases(folder, seed=SEED, n_edgelist=1500, n_mtx=1000):
    """Write every case into ``folder``; return a list of dicts (name, argv, expect, size)."""
    rng = np.random.default_rng(seed)
    made = list(FIXED)
    for k in range(n_edgelist + n_mtx):
        ext, data, argv = gen_edgelist(rng) if k < n_edgelist else gen_mtx(rng)
        name = f"case{k:04d}.{ext}"
        if rng.random() < 0.3:
            data = gzip.compress(data, mtime=0)
            if rng.random() < 0.3:
                data = _gzip_damage(rng, data)
            name += ".gz"
        made.append((name, data, argv))
    cases = []
    for name, raw, argv in made:
        (folder / name).write_bytes(raw)
        expect = expectation(raw, name, int(argv[1]) if argv else None)
        try:
            plain = len(_decompress(raw, name))
        except _Bad:
            plain = 0
        cases.append({"name": name, "argv": ["run", "pagerank", name, "--quiet"] + argv,
                      "expect": list(expect), "size": len(raw) + plain})
    return cases


def ceiling(case):
    """Peak RSS growth allowed: 64 MiB + 2x the file (as stored and decompressed) + a generous
    allowance for the graph the file really holds and its PageRank run."""
    status, *rest = case["expect"]
    n, m = rest if status in ("ok", "either") else (0, 0)
    return 64 * MiB + 2 * case["size"] + 400 * n + 200 * m


# ====================================================================== the child process
def _status_kib(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def _reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _child(manifest, results, progress):
    """Run every case of ``manifest`` through ``digraph.cli.main`` in this process."""
    import contextlib
    import io
    import traceback

    resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, resource.getrlimit(resource.RLIMIT_AS)[1]))
    import functools

    import digraph.cli
    from digraph.cli import main
    # argparse builds the same parser for every case (10 ms each): build it once
    digraph.cli.build_parser = functools.lru_cache(maxsize=None)(digraph.cli.build_parser)
    # the CLI prints the first line of a message: note the messages it would cut short
    cut = []
    first_line = getattr(digraph.cli, "_first_line", None)
    if first_line is not None:
        def whole(e, default):
            if len(str(e).splitlines()) > 1:
                cut.append(str(e))
            return first_line(e, default)
        digraph.cli._first_line = whole

    def once(argv):
        del cut[:]
        out, err = io.StringIO(), io.StringIO()
        can_reset = _reset_peak()
        before = _status_kib("VmRSS") if can_reset else _status_kib("VmHWM")
        t0 = time.perf_counter()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = main(argv)
            except SystemExit as e:
                rc = e.code if isinstance(e.code, int) else 1
            except BaseException:  # noqa: BLE001 -- an exception escaping main is a failure
                rc = -1
                err.write(traceback.format_exc())
        grew = max(0, _status_kib("VmHWM") - before) * 1024
        return {"rc": rc, "out": out.getvalue(), "err": err.getvalue(), "grew": grew,
                "seconds": time.perf_counter() - t0, "cut": cut[:1]}

    with open(manifest) as f:
        cases = json.load(f)
    # load every kernel the valid cases use (a cold cache compiles them), outside the measure
    warm = [c for c in cases if c["expect"][0] == "ok"][:60]
    for c in warm:
        once(c["argv"])
    done = []
    with open(progress, "w") as log:
        for c in cases:
            log.write(c["name"] + "\n")
            log.flush()
            r = once(c["argv"])
            if r["grew"] > ceiling(c):  # a second try rules out first-use effects
                again = once(c["argv"])
                r["grew"] = min(r["grew"], again["grew"])
            done.append(r)
    with open(results, "w") as f:
        json.dump(done, f)


def _env():
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    return dict(os.environ, PYTHONPATH=path, DIGRAPH_QUIET="1")


def _problems(case, r):
    """What is wrong with one case's result (empty when nothing)."""
    status, a, b = case["expect"]
    err = r["err"]
    lines = err.splitlines()
    what = []
    if "Traceback" in err or r["rc"] not in (0, 2):
        what.append(f"status {r['rc']}, stderr {err[-600:]!r}")
    elif r["rc"] == 2:
        if len(lines) != 1 or not lines[0].startswith("digraph: error: ") or not err.endswith("\n"):
            what.append(f"not one error line: {err[:600]!r}")
        if r["cut"]:
            what.append(f"a message of several lines, cut to its first: {r['cut'][0][:600]!r}")
        if "internal error" in err:
            what.append(f"an internal error: {err.strip()!r}")
        if status == "ok":
            what.append(f"valid input refused: {err.strip()!r}")
        if status == "error" and b and case["name"] not in err:
            what.append(f"the message does not name the file: {err.strip()!r}")
        if status == "error" and a is not None and f"line {a}" not in err:
            what.append(f"the message does not name line {a}: {err.strip()!r}")
    else:
        if status == "error":
            what.append(f"invalid input accepted (expected an error{f' at line {a}' if a else ''})")
        if err:
            what.append(f"stderr not empty: {err[:300]!r}")
    if r["out"]:
        what.append(f"stdout not empty with --quiet: {r['out'][:200]!r}")
    if r["grew"] > ceiling(case):
        what.append(f"peak RSS grew {r['grew'] / MiB:.0f} MiB (ceiling {ceiling(case) / MiB:.0f})")
    return what


def test_fuzz_cli_inputs(tmp_path):
    """~2,600 damaged and hostile files through ``digraph run pagerank FILE --quiet``."""
    cases = build_cases(tmp_path)
    manifest, results, progress = (tmp_path / n for n in ("cases.json", "results.json", "log"))
    manifest.write_text(json.dumps(cases))
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, __file__, "--child", str(manifest), str(results),
                        str(progress)], cwd=tmp_path, env=_env(), capture_output=True, text=True,
                       timeout=600)
    seconds = time.perf_counter() - t0
    if p.returncode != 0:
        last = progress.read_text().splitlines()[-1:] if progress.exists() else []
        pytest.fail(f"the fuzz child died with status {p.returncode} during {last}:\n"
                    f"{p.stderr[-3000:]}")
    done = json.loads(results.read_text())
    assert len(done) == len(cases)
    bad = []
    for c, r in zip(cases, done):
        for what in _problems(c, r):
            raw = (tmp_path / c["name"]).read_bytes()
            bad.append(f"{c['name']} {c['argv'][4:]} {raw[:120]!r}: {what}")
    assert not bad, f"{len(bad)} problem(s) in {len(cases)} cases:\n" + "\n".join(bad[:40])
    counts = {s: sum(c["expect"][0] == s for c in cases) for s in ("ok", "either", "error")}
    assert counts["ok"] > 300 and counts["error"] > 1000, counts  # both sides well covered
    assert seconds < 120


def test_reference_reader_agrees_with_known_answers():
    """The fuzz's reference reader on a few inputs whose answer is known (so that the fuzz does
    not pass by a wrong expectation)."""
    assert expectation(b"0 1\n1 2 \n", "a.txt", None) == ("ok", 3, 2)
    assert expectation(b"0 1\n1 x\n", "a.txt", None) == ("error", 2, True)
    assert expectation(b"a b\nb 1\n", "a.txt", None) == ("ok", 3, 2)  # vertex names
    assert expectation(b"src dst\n0 1\n1 2\n", "a.txt", None) == ("error", 1, True)
    assert expectation(b"a b\nb \xff\n", "a.txt", None) == ("error", 2, True)
    assert expectation(b"src,dst\n0,1\n", "a.csv", None) == ("ok", 2, 1)
    assert expectation(b"0 1 nan\n", "a.txt", None) == ("error", 1, True)
    assert expectation(b"0 1 inf\n", "a.txt", None) == ("either", 2, 1)
    assert expectation(b"0 1\n", "a.txt", 10**9) == ("error", None, False)
    assert expectation(MM + b"3 3 1\n1 2\n", "a.mtx", None) == ("ok", 3, 1)
    assert expectation(MM + b"1_0 1_0 1\n1 2\n", "a.mtx", None) == ("error", 2, True)
    assert expectation(MM + b"10 10 2\n1 2\n", "a.mtx", None) == ("error", 2, True)
    assert expectation(MM + b"10 10 1\n1 2\n% c\n2 3\n", "a.mtx", None) == ("error", 5, True)
    assert expectation(b"0,1,2.5x\n1,2,3\n", "a.csv", None) == ("error", 1, True)
    assert expectation(b"0,,1\n", "a.csv", None) == ("error", 1, True)
    assert expectation(b"src,dst,w\n0,1,2\n", "a.csv", None) == ("ok", 2, 1)
    assert expectation(MM.replace(b"general", b"symmetric") + b"3 3 2\n1 2\n3 3\n", "a.mtx",
                       None) == ("ok", 3, 3)
    assert expectation(gzip.compress(b"0 1\n")[:-3], "a.txt.gz", None)[0] == "error"


# ====================================================================== true command lines
def _cli(tmp_path, *args, limit=AS_LIMIT):
    """``python -m digraph.cli ARGS`` with an address-space cap (so that a declared size is judged
    against the same memory on every machine); (status, stderr, seconds)."""
    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))

    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "digraph.cli", *map(str, args)], cwd=tmp_path,
                       env=_env(), capture_output=True, text=True, timeout=300, preexec_fn=cap)
    return p.returncode, p.stderr, time.perf_counter() - t0


@pytest.mark.parametrize("name, raw, extra, words", [
    ("huge.mtx", MM + b"1000000000 1000000000 1\n1 2\n", [],
     "huge.mtx, line 2: the size line declares 1,000,000,000 vertices"),
    ("two.txt", b"0 1\n1 2\n", ["--num-vertices", 100_000_000],
     "num_vertices declares 100,000,000 vertices"),
    ("two.txt", b"0 1\n1 2\n", ["--num-vertices", 2**63], "--num-vertices"),
    ("wide.mtx", b"%%MatrixMarket matrix coordinate real general\n" + b"9" * 30 + b" " + b"9" * 30
     + b" 1\n1 2 1\n", [], "wide.mtx, line 2"),
    ("many.mtx", b"%%MatrixMarket matrix coordinate real general\n3 3 1000000000000\n1 2 1\n", [],
     "many.mtx, line 2"),
], ids=["rows-1e9", "num-vertices-1e8", "num-vertices-2p63", "rows-1e30", "entries-1e12"])
def test_worst_headers_from_the_command_line(tmp_path, name, raw, extra, words):
    assert len(raw) < 130  # files of a few dozen bytes
    (tmp_path / name).write_bytes(raw)
    rc, err, seconds = _cli(tmp_path, "run", "pagerank", name, *extra)
    assert rc == 2, err
    assert len(err.splitlines()) == 1 and err.startswith("digraph: error: ") and words in err, err
    assert "Traceback" not in err
    assert seconds < 30


if __name__ == "__main__" and sys.argv[1:2] == ["--child"]:
    _child(*sys.argv[2:5])
