"""File plumbing shared by the text readers: format detection from the file name, reading a whole
(optionally gzip-compressed) file into memory, and turning byte offsets reported by the parsing
kernels into line numbers and quoted line text for error messages."""

import os
import zlib
from pathlib import Path

import numpy as np

from ..errors import GraphFormatError, InvalidParameterError, UnknownFormatError

__all__ = ["FORMATS", "EXTENSIONS", "detect_format", "default_name", "read_bytes", "line_number",
           "line_text", "token_text"]

#: formats accepted by ``load(format=...)``
FORMATS = ("edgelist", "csv", "tsv", "mtx")

#: file extension (after removing ``.gz``) -> format
EXTENSIONS = {
    ".el": "edgelist",
    ".txt": "edgelist",
    ".edges": "edgelist",
    ".tsv": "tsv",
    ".csv": "csv",
    ".mtx": "mtx",
}

_GZIP_MAGIC = b"\x1f\x8b"
_MAX_QUOTE = 80


def _suffixes(path):
    """(extension, compressed) of a file name, e.g. ``("txt", True)`` for ``a.txt.gz``."""
    name = Path(path).name.lower()
    compressed = name.endswith(".gz")
    if compressed:
        name = name[:-3]
    return os.path.splitext(name)[1], compressed


def detect_format(path, fmt=None):
    """The format to read ``path`` with.

    Parameters
    ----------
    path : str or os.PathLike
    fmt : str, optional
        An explicit format (one of :data:`FORMATS`); it overrides the file name.

    Returns
    -------
    str
        One of :data:`FORMATS`.

    Raises
    ------
    InvalidParameterError
        ``fmt`` is not a known format.
    UnknownFormatError
        No ``fmt`` and the extension is not one of :data:`EXTENSIONS`.
    """
    if fmt is not None:
        key = str(fmt).lower()
        if key not in FORMATS:
            raise InvalidParameterError(
                f"format={fmt!r} is not a known format; use one of {', '.join(FORMATS)}")
        return key
    ext, _ = _suffixes(path)
    if ext in EXTENSIONS:
        return EXTENSIONS[ext]
    known = ", ".join(sorted(EXTENSIONS)) + " (each optionally followed by .gz)"
    raise UnknownFormatError(
        f"cannot tell the graph format from the file name (extension {ext or 'none'!r}); "
        f"known extensions: {known}; or pass format= one of {', '.join(FORMATS)}", path=str(path))


def default_name(path):
    """The file name without ``.gz`` and a known graph extension (``cnr-2000.txt.gz`` ->
    ``cnr-2000``)."""
    name = Path(path).name
    if name.lower().endswith(".gz"):
        name = name[:-3]
    root, ext = os.path.splitext(name)
    if ext.lower() in EXTENSIONS:
        name = root
    return name


def _gunzip(data, path):
    """Decompress every gzip member of ``data`` (zlib, in C); GraphFormatError when cut short."""
    parts = []
    try:
        while data:
            d = zlib.decompressobj(wbits=31)
            parts.append(d.decompress(data))
            if not d.eof:
                raise EOFError("compressed stream ended before the end-of-stream marker")
            data = d.unused_data
            if data and not data.startswith(_GZIP_MAGIC):
                if data.strip(b"\x00"):  # gzip(1) tolerates trailing zero padding only
                    raise zlib.error("trailing garbage after the last gzip member")
                break
    except (EOFError, zlib.error) as exc:
        raise GraphFormatError(f"truncated or corrupt gzip data ({exc})", path=str(path)) from None
    return parts[0] if len(parts) == 1 else b"".join(parts)


def read_bytes(path):
    """The whole content of ``path`` as ``(bytes, uint8 array view)``, gunzipped when the name
    ends with ``.gz`` or the data starts with the gzip magic number.

    Raises
    ------
    FileNotFoundError
        The file does not exist (the built-in error, naming the path).
    GraphFormatError
        Truncated or corrupt gzip data ("truncated or corrupt gzip", naming the file).
    """
    with open(path, "rb") as f:
        data = f.read()
    _, compressed = _suffixes(path)
    if data and (compressed or data[:2] == _GZIP_MAGIC):
        data = _gunzip(data, path)
    return data, np.frombuffer(data, dtype=np.uint8)


def line_number(data, offset):
    """1-based number of the line holding byte ``offset`` of ``data`` (newlines before it + 1)."""
    return data.count(b"\n", 0, offset) + 1


def line_text(data, offset, limit=_MAX_QUOTE):
    """The line starting at byte ``offset`` (without its line ending), cut to ``limit``
    characters with an ellipsis."""
    end = data.find(b"\n", offset, offset + 4 * limit)
    raw = data[offset:end if end >= 0 else offset + 4 * limit].rstrip(b"\r")
    text = raw.decode("utf-8", errors="replace").strip()
    if len(text) > limit or (end < 0 and len(data) > offset + 4 * limit):
        text = text[:limit] + "..."
    return text


def token_text(data, offset, comma=False, limit=40):
    """The field starting at byte ``offset`` (up to a blank, a comma when ``comma``, or the line
    end), cut to ``limit`` characters."""
    chunk = data[offset:offset + limit + 1]
    cut = len(chunk)
    for sep in (b" ", b"\t", b"\r", b"\n") + ((b",",) if comma else ()):
        i = chunk.find(sep)
        if 0 <= i < cut:
            cut = i
    text = chunk[:cut].decode("utf-8", errors="replace")
    if cut > limit:
        text = text[:limit] + "..."
    return text
