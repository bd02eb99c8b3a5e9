"""File plumbing shared by the text readers: format detection from the file name, opening an input
file (regular files only), reading it -- gunzipped on the fly -- as a stream of blocks of whole
lines, and turning byte offsets reported by the parsing kernels into line numbers and quoted line
text for error messages.

A file is never held whole in memory: :func:`text_blocks` yields blocks of about
:data:`CHUNK_BYTES` of text (decompressed), each ending at a line end, so that what a reader keeps
grows with the arcs it has parsed, not with the text.  A gzip file that expands to gigabytes of
blank lines is read in constant memory; a file without line ends (``/dev/zero`` copied to a file)
is refused after :data:`MAX_LINE_BYTES` past the end of a block.
"""

import os
import stat
import zlib
from pathlib import Path

import numpy as np

from ..errors import GraphFormatError, InvalidParameterError, UnknownFormatError
from ..interrupts import check as check_interrupt

__all__ = ["FORMATS", "EXTENSIONS", "CHUNK_BYTES", "MAX_LINE_BYTES", "InputStream",
           "detect_format", "default_name", "open_regular", "iter_chunks", "text_blocks",
           "read_bytes", "line_number", "line_text", "token_text"]

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

#: bytes of (decompressed) text read and parsed at a time
CHUNK_BYTES = 16 * 2**20

#: lines (comments included) longer than this are not supported: one that runs on for more than
#: this past the end of a block of text read is a GraphFormatError
MAX_LINE_BYTES = 2**20

_GZIP_MAGIC = b"\x1f\x8b"
_GZIP_READ = 4 * 2**20  # compressed bytes fed to zlib at a time
_MAX_QUOTE = 80


class InputStream:
    """A binary stream, such as standard input, read by the file readers in place of a file.

    The command line's ``-`` (``digraph run pagerank -``) is one; :func:`digraph.load` reads it
    as it reads a file, except that it has no name to tell the format from (``format=`` is then
    needed) and that it is read once, as it comes: gzip is recognised by its magic number.

    Parameters
    ----------
    stream : binary file object
        Read with ``os.read`` on its file descriptor when it has one (POSIX): a Ctrl-C while it
        waits for data is acted on within a fraction of a second (:mod:`digraph.interrupts`).
    label : str
        What messages call it (``"<stdin>"``).
    """

    def __init__(self, stream, label="<stdin>"):
        self.stream = stream
        self.label = label

    def __str__(self):
        return self.label

    def __repr__(self):
        return f"InputStream({self.label!r})"


class _StreamReader:
    """``read(n)`` of an :class:`InputStream`: ``n`` bytes, fewer only at its end; a pending
    Ctrl-C is raised while it waits (it does not close the stream)."""

    def __init__(self, stream):
        self.stream = stream
        try:
            import select
            self.fd = stream.fileno()
            self.select = select.select
            self.select([self.fd], [], [], 0)  # Windows: sockets only
        except (AttributeError, OSError, ValueError, ImportError):
            self.fd = None

    def read(self, n):
        parts, got = [], 0
        while got < n:
            check_interrupt()
            if self.fd is None:
                data = self.stream.read(n - got)
            else:
                if not self.select([self.fd], [], [], 0.2)[0]:
                    continue
                data = os.read(self.fd, n - got)
            if not data:
                break
            parts.append(data)
            got += len(data)
        return b"".join(parts)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _file_name(path):
    """The file name of ``path`` (the label of an :class:`InputStream`)."""
    return path.label if isinstance(path, InputStream) else Path(path).name


def _suffixes(path):
    """(extension, compressed) of a file name, e.g. ``("txt", True)`` for ``a.txt.gz``."""
    if isinstance(path, InputStream):
        return "", False
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
    if isinstance(path, InputStream):
        raise UnknownFormatError(f"a stream has no file name to tell the graph format from; pass "
                                 f"format= one of {', '.join(FORMATS)}", path=str(path))
    raise UnknownFormatError(
        f"cannot tell the graph format from the file name (extension {ext or 'none'!r}); "
        f"known extensions: {known}; or pass format= one of {', '.join(FORMATS)}", path=str(path))


def default_name(path):
    """The file name without ``.gz`` and a known graph extension (``cnr-2000.txt.gz`` ->
    ``cnr-2000``)."""
    name = _file_name(path)
    if name.lower().endswith(".gz"):
        name = name[:-3]
    root, ext = os.path.splitext(name)
    if ext.lower() in EXTENSIONS:
        name = root
    return name


def _kind(mode):
    """What a file that is not a regular file is, in words."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def open_regular(path, error=GraphFormatError, what="input"):
    """Open ``path`` for binary reading, refusing anything but a regular file, without blocking.

    Symbolic links are followed: a link to a regular file is fine, a link to ``/dev/zero`` is not.
    The file is checked with ``stat`` before it is opened (so that no device is opened), opened
    with ``O_NONBLOCK`` (a FIFO put in its place meanwhile cannot block the open) and checked
    again with ``fstat`` on the open descriptor.

    Parameters
    ----------
    path : str, os.PathLike or InputStream
        An :class:`InputStream` is read as it is (a reader of its stream, not closed after).
    error : type
        The exception raised for a file that is not regular; it is called as
        ``error(message, path=str(path))`` for a :class:`GraphFormatError`, ``error(message)``
        (the message then starting with the path) otherwise.
    what : str
        What the file is, for the message (``"input"``, ``"seed file"``).

    Returns
    -------
    io.BufferedReader

    Raises
    ------
    FileNotFoundError, PermissionError
        The built-in errors of ``os.stat`` / ``os.open``, naming the path.
    GraphFormatError (or ``error``)
        A directory, FIFO, character or block device or socket ("... is a FIFO (named pipe),
        not a regular file").
    """
    if isinstance(path, InputStream):
        return _StreamReader(path.stream)

    def refuse(mode):
        msg = f"the {what} is {_kind(mode)}; only a regular file can be read"
        if issubclass(error, GraphFormatError):
            return error(msg, path=str(path))
        return error(f"{path}: {msg}")

    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode):
        raise refuse(mode)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
                 | getattr(os, "O_BINARY", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise refuse(mode)
        if getattr(os, "O_NONBLOCK", 0):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _gunzip_chunks(f, head, path, chunk_bytes):
    """Decompress every gzip member read from ``f`` (after the bytes ``head`` already read),
    yielding pieces of at most ``chunk_bytes``; GraphFormatError when cut short or corrupt."""
    pending = head
    at_end = False

    def more():
        nonlocal at_end
        data = b"" if at_end else f.read(_GZIP_READ)
        at_end = not data
        return data

    try:
        while True:
            d = zlib.decompressobj(wbits=31)
            while not d.eof:
                if not pending:
                    pending = more()
                    if not pending:  # the input is over: drain what zlib still holds
                        out = d.decompress(b"", chunk_bytes)
                        if out:
                            yield out
                            continue
                        raise EOFError("compressed stream ended before the end-of-stream marker")
                out = d.decompress(pending, chunk_bytes)
                pending = d.unconsumed_tail
                if out:
                    yield out
            pending = d.unused_data  # (unconsumed_tail holds the same bytes again)
            while len(pending) < len(_GZIP_MAGIC) and not at_end:
                pending += more()
            if not pending:
                return
            if pending.startswith(_GZIP_MAGIC):
                continue  # another member
            while pending:  # gzip(1) tolerates trailing zero padding only
                if pending.strip(b"\x00"):
                    raise zlib.error("trailing garbage after the last gzip member")
                pending = more()
            return
    except (EOFError, zlib.error) as exc:
        raise GraphFormatError(f"truncated or corrupt gzip data ({exc})", path=str(path)) from None


def iter_chunks(path, chunk_bytes=CHUNK_BYTES):
    """The content of ``path`` as successive ``bytes`` pieces of at most ``chunk_bytes``,
    gunzipped on the fly when the name ends with ``.gz`` or the data starts with the gzip magic
    number.

    Raises
    ------
    FileNotFoundError
        The file does not exist (the built-in error, naming the path).
    GraphFormatError
        Not a regular file (see :func:`open_regular`); truncated or corrupt gzip data ("truncated
        or corrupt gzip", naming the file), raised when the reading gets there.
    """
    with open_regular(path) as f:
        head = f.read(max(chunk_bytes, len(_GZIP_MAGIC)))
        if not head:
            return
        _, compressed = _suffixes(path)
        if compressed or head[:2] == _GZIP_MAGIC:
            yield from _gunzip_chunks(f, head, path, chunk_bytes)
            return
        while head:
            yield head
            head = f.read(chunk_bytes)


def _too_long(path, line, text, max_line):
    size = f"{max_line // 2**20} MiB" if max_line % 2**20 == 0 else f"{max_line:,} bytes"
    return GraphFormatError(
        f"a line longer than {size} ({line_text(text, 0, 32)!r}): not a text edge list or "
        f"Matrix Market file", path=str(path), line=line)


def text_blocks(path, chunk_bytes=CHUNK_BYTES, max_line=MAX_LINE_BYTES):
    """The (decompressed) text of ``path`` as blocks of whole lines.

    Yields
    ------
    data : bytes
        The block is ``data[:end]``; bytes past ``end`` belong to the next block.
    end : int
        Every block but the last ends right after a newline; the last one ends at the end of
        the file (with or without a final newline).
    first_line : int
        1-based number of the block's first line in the file.
    newlines : int
        ``data.count(b"\\n", 0, end)``.

    Raises
    ------
    FileNotFoundError, GraphFormatError
        See :func:`iter_chunks`; also a line that runs on for more than ``max_line`` bytes past
        the end of a block (its number and start quoted): a line longer than ``max_line`` may be
        refused, a shorter one never is, and no more than ``max_line + chunk_bytes`` bytes of it
        are read.
    """
    carry = b""
    line = 1
    for chunk in iter_chunks(path, chunk_bytes):
        data = carry + chunk if carry else chunk
        end = data.rfind(b"\n") + 1
        if end == 0:  # no line end yet
            if len(data) > max_line:
                raise _too_long(path, line, data, max_line)
            carry = data
            continue
        if len(data) - end > max_line:
            raise _too_long(path, line + data.count(b"\n", 0, end), data[end:end + 4 * _MAX_QUOTE],
                            max_line)
        carry = data[end:]
        newlines = data.count(b"\n", 0, end)
        yield data, end, line, newlines
        line += newlines
    if carry:
        yield carry, len(carry), line, 0


def read_bytes(path, limit=None):
    """The whole content of ``path`` as ``(bytes, uint8 array view)``, gunzipped when the name
    ends with ``.gz`` or the data starts with the gzip magic number.

    Parameters
    ----------
    path : str or os.PathLike
    limit : int, optional
        Largest (decompressed) size accepted; default: the memory available
        (:func:`digraph.memory.available_bytes`).  Reading stops as soon as it is passed.

    Raises
    ------
    FileNotFoundError
        The file does not exist (the built-in error, naming the path).
    GraphFormatError
        Not a regular file; truncated or corrupt gzip data ("truncated or corrupt gzip", naming
        the file).
    GraphTooLargeError
        The content is larger than ``limit``.
    """
    if limit is None:
        from ..memory import available_bytes
        limit = available_bytes()
    parts, size = [], 0
    for chunk in iter_chunks(path):
        size += len(chunk)
        if limit is not None and size > limit:
            from ..errors import GraphTooLargeError
            raise GraphTooLargeError(f"{path}: its content is larger than the {limit:,} bytes "
                                     f"of memory available")
        parts.append(chunk)
    data = parts[0] if len(parts) == 1 else b"".join(parts)
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
