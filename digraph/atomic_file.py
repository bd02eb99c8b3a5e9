"""Files written whole or not at all: a temporary file in the same folder, renamed when complete.

::

    with atomic_file("ranks.csv", "w") as f:
        f.write(...)

An exception or Ctrl-C inside the block removes the temporary file and leaves ``ranks.csv`` as it
was (absent, or its old content); on success the data is flushed to disk, then ``os.replace``
swaps it in, so a reader sees the old file or the new one, never a part.  Where the system has
anonymous files (Linux's ``O_TMPFILE``) the data is written into one, which has no name until it
is complete: a process killed outright (SIGKILL, power loss) leaves nothing behind, not even a
hidden temporary file; it is given its temporary name only for the instant of the swap.  A new
file gets the permissions ``open`` would give it (``0o666`` less the umask); a replaced file keeps
its own.
"""

import contextlib
import os
import secrets
import stat
from pathlib import Path

__all__ = ["atomic_file", "check_output_path"]


def check_output_path(path, what="output"):
    """Raise ``OSError`` naming ``path`` unless a file can be written there (before any work).

    The folder must exist and ``path`` must not be a folder.  Existing regular files are replaced
    (as ``open(path, "w")`` would, but atomically).
    """
    p = Path(path)
    if p.is_dir():
        raise IsADirectoryError(f"{what} {str(path)!r} is a folder; give a file name")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise FileNotFoundError(f"{what} {str(path)!r}: folder {str(parent)!r} does not exist")
    if not os.access(parent, os.W_OK):
        raise PermissionError(f"{what} {str(path)!r}: folder {str(parent)!r} is not writable")
    if os.path.lexists(p) and not p.is_file():
        raise OSError(f"{what} {str(path)!r} exists and is not a regular file")


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_file(path, mode="w", encoding=None):
    """Open a temporary file beside ``path`` for writing; rename it to ``path`` on success.

    Parameters
    ----------
    path : str or path
    mode : {"w", "wb"}
    encoding : str, optional
        Text mode only (default UTF-8).

    Yields
    ------
    file object
        Open for writing; write through it (it may have no path of its own).
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_file mode must be 'w' or 'wb', not {mode!r}")
    p = Path(path)
    tmp = p.with_name(f".{p.name}.{secrets.token_hex(4)}.tmp")
    try:
        perms = stat.S_IMODE(os.stat(p).st_mode)
    except OSError:
        perms = 0o666 & ~_umask()
    kw = {} if "b" in mode else {"encoding": encoding or "utf-8", "newline": ""}
    fd = anonymous(p.parent if str(p.parent) else Path("."))
    named = fd is None
    f = open(tmp, mode.replace("w", "x"), **kw) if named else os.fdopen(fd, mode, **kw)
    try:
        try:
            yield f
            f.flush()
            os.fsync(f.fileno())
            if not named:  # give the complete file its temporary name, then swap it in
                _name(f.fileno(), tmp)
                named = True
        finally:
            f.close()
        os.chmod(tmp, perms)
        os.replace(tmp, p)
    except BaseException:
        if named:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise


def _name(fd, path):
    """Link the anonymous file ``fd`` at ``path`` (``linkat`` following ``/proc/self/fd/N``)."""
    dfd = os.open(path.parent if str(path.parent) else ".",
                  os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:  # a directory descriptor makes os.link call linkat(..., AT_SYMLINK_FOLLOW)
        os.link(f"/proc/self/fd/{fd}", path.name, src_dir_fd=dfd, dst_dir_fd=dfd,
                follow_symlinks=True)
    finally:
        os.close(dfd)


def anonymous(folder):
    """A descriptor of a new nameless file in ``folder`` (``O_TMPFILE``), or None where the system
    or the file system has none (then a hidden named temporary file is used)."""
    flag = getattr(os, "O_TMPFILE", 0)
    if not flag or not os.path.isdir("/proc/self/fd"):
        return None
    try:
        return os.open(folder, flag | os.O_WRONLY | getattr(os, "O_CLOEXEC", 0), 0o600)
    except OSError:  # EOPNOTSUPP, EISDIR on old kernels, ...
        return None
