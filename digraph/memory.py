"""How much memory a graph of a declared size needs, checked before it is allocated.

A :class:`~digraph.Graph` of ``n`` vertices holds about :data:`BYTES_PER_VERTEX` bytes per vertex
while it is built (ids, CSR and CSC offsets, the renumbering; 38.4 B measured for 10^7 isolated
vertices), so a file that *declares* 10^9 rows asks for ~40 GB before a single arc is read.
:func:`check_vertices` refuses such a size with :class:`~digraph.errors.GraphTooLargeError`
naming where it came from, instead of letting the kernel kill the process.
"""

import os

from .errors import GraphTooLargeError

__all__ = ["BYTES_PER_VERTEX", "available_bytes", "check_vertices"]

BYTES_PER_VERTEX = 40
"""Peak bytes per vertex of building a Graph (measured: 38.4 B for 10^7 isolated vertices)."""


def available_bytes():
    """Memory available to this process: ``MemAvailable`` of ``/proc/meminfo`` (Linux), capped by
    what an address-space limit (``ulimit -v``) leaves beyond the process's present size when one
    is set; None when unknown."""
    avail = None
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    avail = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError):
        pass
    if avail is None:
        try:
            avail = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            avail = None
    try:
        import resource
        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft != resource.RLIM_INFINITY:
            soft = max(0, soft - _mapped_bytes())  # the limit counts what is mapped already
            avail = soft if avail is None else min(avail, soft)
    except (ImportError, ValueError, OSError):
        pass
    return avail


def _mapped_bytes():
    """The process's address space in use (``VmSize`` of ``/proc/self/status``); 0 when unknown."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


def check_vertices(n, where):
    """Raise :class:`GraphTooLargeError` when ``n`` vertices cannot fit in the available memory.

    ``where`` says who declared ``n`` (``"web.mtx, line 2: the size line"``, ``"num_vertices"``).
    """
    need = int(n) * BYTES_PER_VERTEX
    avail = available_bytes()
    if avail is not None and need > avail:
        raise GraphTooLargeError(
            f"{where} declares {int(n):,} vertices: holding them needs about {_gb(need)}, and "
            f"{_gb(avail)} of memory are available")


def _gb(b):
    return f"{b / 2**30:.1f} GiB" if b >= 2**30 else f"{b / 2**20:.0f} MiB"
