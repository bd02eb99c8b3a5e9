"""The folder mechanics of the path cache: whose folder it is, generations, the writers' lock.

A cache folder holds a *marker* ``.digraph-cache``, ``manifest.json`` and one *generation* folder
``arrays-<id>/`` with one ``.npy`` file per array; the manifest names its generation.  A new cache
is written as a new generation beside the current one, and the manifest is swapped in with
``os.replace`` (atomic on one file system): a reader sees the old cache or the new one, never a mix
and never an empty folder.  Generations no manifest names (the one replaced, or one left by a
crash) are deleted afterwards, under an exclusive lock (``.lock``, ``fcntl.flock``) that also keeps
two writers from interleaving.

Whose folder it is is decided by the marker, never by file names: the writer writes the marker (a
small JSON object: format name, version and a random folder id) before anything else, and keeps the
same id in every manifest it writes (``"folder"``).  A folder is written only when it does not
exist, is empty, or holds a valid marker (see :func:`check_writable`); a folder that merely holds
files named like a cache's (``manifest.json``, ``path_heat.npy``, ...), a folder of a user's files,
a regular file or the current directory is refused with a
:class:`~digraph.preprocess.errors.CacheError` naming the path, and nothing there is touched.  A
cache written before markers existed is recognised by its manifest's content (a digraph manifest
whose generation folder is there) and given a marker on its next write.  Even in a marked folder
only the names this module writes are ever deleted.
"""

import contextlib
import json
import os
import re
import secrets
import stat
from pathlib import Path

from ..preprocess.errors import CacheError

__all__ = ["MANIFEST", "LOCK", "MARKER", "check_writable", "folder_id", "ensure_marker",
           "remove_marker", "new_generation", "generation_dir", "writer_lock",
           "try_writer_lock", "remove_stale", "write_manifest", "read_json"]

MANIFEST = "manifest.json"
LOCK = ".lock"
MARKER = ".digraph-cache"
#: The marker's ``format`` and ``version``.
MARKER_FORMAT = "digraph-cache-folder"
MARKER_VERSION = 1
_FOLDER_ID = re.compile(r"^[0-9a-f]{32}$")
_GENERATION = re.compile(r"^arrays-[0-9a-f]{8,32}$")
_MANIFEST_TMP = re.compile(r"^\.manifest-[0-9a-f]{8,32}\.tmp$")
_MARKER_TMP = re.compile(r"^\.digraph-cache-[0-9a-f]{8,32}\.tmp$")


#: A manifest larger than this is refused unread (a real one is a few kilobytes).
MAX_MANIFEST_BYTES = 1 << 24


def read_json(path):
    """The JSON object in the regular file ``path``, read without following a symbolic link or
    blocking on a FIFO, and at most :data:`MAX_MANIFEST_BYTES` long.

    Raises ``FileNotFoundError`` when absent and :class:`CacheError` naming the file otherwise.
    """
    from .validate import open_regular

    with open_regular(path) as f:
        try:
            size = os.fstat(f.fileno()).st_size
            data = f.read(min(size, MAX_MANIFEST_BYTES) + 1)  # never a buffer larger than the file
        except OSError as e:
            raise CacheError(f"{path}: unreadable manifest ({e.strerror or e})") from None
    if len(data) > MAX_MANIFEST_BYTES:
        raise CacheError(f"{path}: unreadable manifest (larger than {MAX_MANIFEST_BYTES} bytes)")
    try:
        return json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError) as e:  # JSONDecodeError, UnicodeDecodeError: ValueErrors
        raise CacheError(f"{path}: unreadable manifest ({str(e)[:120]})") from None


def folder_id(directory):
    """The folder id of the valid marker in ``directory``, else None (absent, a link, damaged)."""
    try:
        mark = read_json(Path(directory) / MARKER)
    except (OSError, CacheError):
        return None
    if (isinstance(mark, dict) and mark.get("format") == MARKER_FORMAT
            and mark.get("version") == MARKER_VERSION
            and isinstance(mark.get("id"), str) and _FOLDER_ID.match(mark["id"])):
        return mark["id"]
    return None


def _is_lock_only(d, names):
    """True when the folder's one entry is an empty regular ``.lock`` (a first writer's, racing
    us)."""
    if names != [LOCK]:
        return False
    try:
        st = os.lstat(Path(d) / LOCK)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_size == 0


def _legacy_cache(d):
    """True for a cache written before markers: a digraph manifest of format 2 or 3 whose
    generation folder is there, and no name beside it that only format 1 wrote (top-level
    arrays)."""
    try:
        man = read_json(d / MANIFEST)
    except (OSError, CacheError):
        return False
    if not (isinstance(man, dict) and man.get("format") == "digraph-pathset"
            and man.get("format_version") in (2, 3)
            and not isinstance(man.get("format_version"), bool)):
        return False
    gen = man.get("generation")
    if not isinstance(gen, str) or not _GENERATION.match(f"arrays-{gen}"):
        return False
    gdir = d / f"arrays-{gen}"
    return gdir.is_dir() and not gdir.is_symlink()


def check_writable(directory):
    """Refuse to write a cache at ``directory`` unless that cannot lose anything of the user's.

    Writable: a path that does not exist; an empty folder; a folder holding a valid marker
    (:data:`MARKER`, written only by this module); a cache written before markers existed (its
    manifest, by content, is a digraph manifest whose generation folder is there).  Anything else
    -- a regular file, a folder of other files, a folder holding only files *named* like a cache's
    -- raises :class:`CacheError` naming the path; nothing is touched.
    """
    d = Path(directory)
    if not os.path.lexists(d):
        return
    if not d.is_dir():
        raise CacheError(f"{d}: exists and is not a folder; refusing to replace it with a path "
                         "cache (choose another cache path or remove it yourself)")
    if folder_id(d) is not None:
        return
    try:
        names = sorted(os.listdir(d))
    except OSError as e:
        raise CacheError(f"{d}: cannot list the folder ({e.strerror or e})") from None
    if not names or _is_lock_only(d, names) or _legacy_cache(d):
        return
    shown = ", ".join(repr(n) for n in names[:3]) + (", ..." if len(names) > 3 else "")
    raise CacheError(f"{d}: is a folder that is not a digraph path cache (it holds {shown} and no "
                     f"{MARKER} marker); refusing to write a cache there (use an empty or new "
                     "folder)")


def ensure_marker(directory):
    """The folder id of ``directory``'s marker, writing a new marker first when there is none.

    Returns ``(id, written)``.  Call with the writer lock held, after :func:`check_writable`.
    """
    d = Path(directory)
    fid = folder_id(d)
    if fid is not None:
        return fid, False
    fid = secrets.token_hex(16)
    tmp = d / f"{MARKER}-{secrets.token_hex(8)}.tmp"
    try:
        with open(tmp, "x", encoding="utf-8") as f:
            json.dump({"format": MARKER_FORMAT, "version": MARKER_VERSION, "id": fid}, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, d / MARKER)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return fid, True


def remove_marker(directory):
    """Delete the marker of ``directory`` (a first write that failed: the folder goes back as it
    was)."""
    with contextlib.suppress(FileNotFoundError, IsADirectoryError, PermissionError):
        (Path(directory) / MARKER).unlink()


def new_generation():
    """A fresh generation id (hex)."""
    return secrets.token_hex(8)


def generation_dir(directory, generation):
    """The arrays folder of ``generation`` inside the cache folder ``directory``."""
    if not isinstance(generation, str) or not _GENERATION.match(f"arrays-{generation}"):
        raise CacheError(f"{Path(directory) / MANIFEST}: bad generation {generation!r}")
    return Path(directory) / f"arrays-{generation}"


try:  # POSIX
    import fcntl
except ImportError:  # pragma: no cover - Windows: no inter-process lock
    fcntl = None


_LOCK_FLAGS = (os.O_RDWR | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
               | getattr(os, "O_CLOEXEC", 0))


def _open_lock(path):
    """Open (creating) the lock file; a lock that is no regular file (a symbolic link, a FIFO: a
    forged cache) is removed -- it is this module's own name -- and created afresh."""
    for attempt in range(2):
        try:
            fd = os.open(path, _LOCK_FLAGS | os.O_CREAT, 0o666)
        except OSError:
            if (attempt or not os.path.lexists(path)
                    or os.path.isdir(path) and not os.path.islink(path)):
                raise
            os.unlink(path)  # a symbolic link named .lock: remove the link, never its target
            continue
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return fd
        os.close(fd)
        if attempt:
            break
        os.unlink(path)
    raise CacheError(f"{path}: the cache's lock is not a regular file")


@contextlib.contextmanager
def writer_lock(directory):
    """Hold the cache folder's exclusive writer lock (blocks while another writer holds it)."""
    if fcntl is None:  # pragma: no cover
        yield
        return
    fd = _open_lock(Path(directory) / LOCK)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


@contextlib.contextmanager
def try_writer_lock(directory):
    """Yield True holding the writer lock when it is free (and the folder writable), else False."""
    if fcntl is None:  # pragma: no cover
        yield False
        return
    try:
        fd = os.open(Path(directory) / LOCK, _LOCK_FLAGS)
    except OSError:
        yield False
        return
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        yield False
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


def _remove_generation(path, array_names):
    """Delete a generation folder's array files, then the folder if that left it empty."""
    for name in array_names:
        with contextlib.suppress(FileNotFoundError, IsADirectoryError, PermissionError):
            (path / f"{name}.npy").unlink()
    with contextlib.suppress(OSError):
        path.rmdir()  # fails, and keeps it, when something else is inside


def remove_stale(directory, keep, array_names):
    """Delete what no manifest refers to: other generations (their array files, then the folder
    when that left it empty) and manifest or marker temporaries.  Call with the writer lock held,
    in a folder :func:`check_writable` accepted.  Only this module's own names are touched."""
    d = Path(directory)
    try:
        names = os.listdir(d)
    except OSError:
        return
    for name in names:
        p = d / name
        if _GENERATION.match(name) and name != f"arrays-{keep}":
            if p.is_dir() and not p.is_symlink():
                _remove_generation(p, array_names)
        elif _MANIFEST_TMP.match(name) or _MARKER_TMP.match(name):
            with contextlib.suppress(FileNotFoundError, IsADirectoryError, PermissionError):
                p.unlink()


def write_manifest(directory, manifest):
    """Write ``manifest.json`` through a temporary file, fsynced, then ``os.replace``."""
    d = Path(directory)
    tmp = d / f".manifest-{secrets.token_hex(8)}.tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(manifest, f, indent=1)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, d / MANIFEST)
    except BaseException as e:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(e, IsADirectoryError):
            raise CacheError(f"{d / MANIFEST}: is a folder; refusing to replace it") from None
        raise
    _fsync_dir(d)


def _fsync_dir(d):
    """Make a rename in ``d`` durable (best effort; not every platform can open folders)."""
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
