"""Fetch the corpus's graphs that ``../shared/datasets`` does not hold into an ignored folder.

The benchmarks measure every default on every class of graph (``corpus.CLASSES``). The
classes the shared folder lacks come from SNAP (J. Leskovec and A. Krevl, "SNAP Datasets:
Stanford Large Network Dataset Collection", 2014), checked here against the publisher's counts
and the SHA-256 of the file's text:

=================  ========  ========  =============================================================
name               vertices  arcs      what
=================  ========  ========  =============================================================
soc-Slashdot0902   82,168    948,464   Slashdot Zoo friend/foe links; 77% of arcs reciprocated, one
                                       giant SCC, a self-loop on most vertices
soc-Epinions1      75,879    508,837   Epinions who-trusts-whom; 41% of arcs reciprocated, one giant
                                       SCC
=================  ========  ========  =============================================================

Each is written as the shared folder's files are: gzip, one ``src dst`` per line, no header
(``<dest>/<name>.txt.gz``, through a temporary file renamed into place, so an interrupted fetch
leaves nothing). ``benchmarks/graphs.py`` reads ``$DIGRAPH_DATASETS`` (else
``../shared/datasets``) first, then this folder.

    python benchmarks/fetch_datasets.py                       # download from SNAP
    python benchmarks/fetch_datasets.py --source ~/Downloads  # files already on disk

``--source DIR`` takes ``DIR/<name>.txt.gz``, ``DIR/<name>.txt`` or ``DIR/<name>.zip`` (SNAP's
text inside) instead of downloading: for machines without access to snap.stanford.edu.
"""

import argparse
import gzip
import hashlib
import io
import os
import sys
import tempfile
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import FETCHED  # noqa: E402  (where fetched graphs go)


@dataclass(frozen=True)
class Source:
    """A published graph: where it is, and what its text must be."""

    url: str
    sha256: str  # of the uncompressed text as published
    vertices: int
    arcs: int


SOURCES = {
    "soc-Slashdot0902": Source("https://snap.stanford.edu/data/soc-Slashdot0902.txt.gz",
                               "f503f1fea1caa322c10cd2c02bffbd8cac97834375c7cec30cdc8bf3bf2bb756",
                               82_168, 948_464),
    "soc-Epinions1": Source("https://snap.stanford.edu/data/soc-Epinions1.txt.gz",
                            "3e42b000e66cada74053ac7f8b24de291f9837264421dc2f3730b45cc58d17b1",
                            75_879, 508_837),
}


def _text(raw):
    """The published text of ``raw`` (gzip, zip holding one text file, or text)."""
    if raw[:2] == b"\x1f\x8b":
        return gzip.decompress(raw)
    if raw[:4] == b"PK\x03\x04":
        with zipfile.ZipFile(io.BytesIO(raw)) as z:
            names = [n for n in z.namelist() if not n.endswith("/")]
            if len(names) != 1:
                raise ValueError(f"the zip holds {len(names)} files, not one: {names[:5]}")
            return z.read(names[0])
    return raw


def _read(name, source_dir):
    """The raw bytes of ``name``: from ``source_dir`` when given, else downloaded."""
    if source_dir is None:
        url = SOURCES[name].url
        print(f"{name}: downloading {url}")
        with urllib.request.urlopen(url, timeout=60) as r:
            return r.read()
    for suffix in (".txt.gz", ".txt", ".zip"):
        path = Path(source_dir) / f"{name}{suffix}"
        if path.is_file():
            print(f"{name}: reading {path}")
            return path.read_bytes()
    raise FileNotFoundError(f"{name}: none of {name}.txt.gz, {name}.txt, {name}.zip in "
                            f"{source_dir}")


def arcs_of(text, name):
    """The ``(m, 2)`` int64 arcs of a SNAP edge list (``#`` comments, tab or space separated)."""
    lines = [ln for ln in text.splitlines() if ln and not ln.startswith(b"#")]
    arr = np.array(b" ".join(lines).split(), dtype=np.int64)
    if arr.size % 2:
        raise ValueError(f"{name}: an odd number of ids ({arr.size}): a line without two ids")
    return arr.reshape(-1, 2)


def fetch(name, dest=FETCHED, source_dir=None):
    """Fetch ``name``, check it, and write ``dest/<name>.txt.gz``; returns that path.

    Raises
    ------
    ValueError
        The text's SHA-256 or its counts differ from :data:`SOURCES` (nothing is written).
    """
    src = SOURCES[name]
    text = _text(_read(name, source_dir))
    digest = hashlib.sha256(text).hexdigest()
    if digest != src.sha256:
        raise ValueError(f"{name}: SHA-256 of the text is {digest}, expected {src.sha256}")
    arcs = arcs_of(text, name)
    vertices = np.unique(arcs).size
    if (arcs.shape[0], vertices) != (src.arcs, src.vertices):
        raise ValueError(f"{name}: {arcs.shape[0]:,} arcs and {vertices:,} vertices, expected "
                         f"{src.arcs:,} and {src.vertices:,}")
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    out = dest / f"{name}.txt.gz"
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=dest)
    try:
        with os.fdopen(fd, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
            np.savetxt(f, arcs, fmt="%d %d")
        os.chmod(tmp, 0o644)
        os.replace(tmp, out)
    except BaseException:
        os.unlink(tmp)
        raise
    print(f"{name}: {arcs.shape[0]:,} arcs, {vertices:,} vertices -> {out}")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help=f"graphs to fetch, of {', '.join(sorted(SOURCES))} "
                                             "(default: every one not yet there)")
    ap.add_argument("--source", help="a folder holding the published files (no download)")
    ap.add_argument("--dest", default=str(FETCHED), help=f"output folder (default {FETCHED})")
    ap.add_argument("--force", action="store_true", help="fetch again those already there")
    args = ap.parse_args(argv)
    unknown = sorted(set(args.names) - set(SOURCES))
    if unknown:
        ap.error(f"unknown graph(s) {', '.join(unknown)}; known: {', '.join(sorted(SOURCES))}")
    for name in args.names or sorted(SOURCES):
        if not args.force and (Path(args.dest) / f"{name}.txt.gz").is_file():
            print(f"{name}: already in {args.dest}")
            continue
        try:
            fetch(name, args.dest, args.source)
        except (OSError, ValueError) as e:  # no network, a missing file, a wrong checksum
            print(f"{name}: {e}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
