"""How much memory a graph of a declared or growing size needs, checked before it is allocated.

A :class:`~.Graph` of ``n`` vertices holds about :data:`BYTES_PER_VERTEX` bytes per vertex
while it is built (ids, CSR and CSC offsets, the renumbering; 38.4 B measured for 10^7 isolated
vertices), so a file that *declares* 10^9 rows asks for ~40 GB before a single arc is read.
:func:`check_vertices` refuses such a size with :class:`~.errors.GraphTooLargeError`
naming where it came from, instead of letting the kernel kill the process.

Loading ``m`` arcs from a file peaks at :data:`BYTES_PER_ARC` bytes per arc or more (the arc
arrays parsed block by block, their concatenation, then ``Graph.from_arrays``: renumbering, CSR
and CSC).  The file readers call :func:`check_arcs` after each block of text they parse, so that a
small file that expands to billions of arcs (a gzip bomb) is refused once the arcs read so far
cannot fit, instead of after memory ran out; the reading itself holds the arcs parsed and one
block of text, never the whole text.

"Available" is ``MemAvailable`` of the machine, capped by an address-space limit
(``ulimit -v``) and by the environment variable ``DIGRAPH_MEMORY_LIMIT`` (bytes, or a number with
a ``K``, ``M``, ``G`` or ``T`` suffix, powers of 1024), which lowers the ceiling on purpose (a
shared machine, a test).
"""

import os
import re

from .errors import GraphTooLargeError, InvalidParameterError

__all__ = ["BYTES_PER_VERTEX", "BYTES_PER_ARC", "MEMORY_LIMIT_ENV", "available_bytes",
           "memory_limit", "check_vertices", "check_arcs"]

BYTES_PER_VERTEX = 40
"""Peak bytes per vertex of building a Graph (measured: 38.4 B for 10^7 isolated vertices)."""

BYTES_PER_ARC = 64
"""Peak bytes per arc of loading an edge list, the arc arrays read included, when it costs least:
ids already dense, no weights (measured: 66 B for 10^7 arcs; 72 B with weights; 162 B with
weights and ids spread over the int64 range, whose renumbering sorts them).  A lower bound, so
that :func:`check_arcs` refuses only what cannot fit."""

MEMORY_LIMIT_ENV = "DIGRAPH_MEMORY_LIMIT"

_SIZE = re.compile(r"\s*([0-9]+)\s*([kmgt]?)i?b?\s*", re.I)
_UNITS = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}


def memory_limit():
    """The ceiling set by ``DIGRAPH_MEMORY_LIMIT`` in bytes, or None when it is unset or empty.

    Raises
    ------
    InvalidParameterError
        The variable holds something other than a size (``"512M"``, ``"2G"``, ``"1000000"``).
    """
    text = os.environ.get(MEMORY_LIMIT_ENV, "")
    if not text.strip():
        return None
    m = _SIZE.fullmatch(text)
    if m is None:
        raise InvalidParameterError(
            f"{MEMORY_LIMIT_ENV}={text!r} is not a size: use bytes, or a number with a K, M, G or "
            f"T suffix (e.g. 512M)")
    return int(m.group(1)) * _UNITS[m.group(2).lower()]


def available_bytes():
    """Memory available to this process: ``MemAvailable`` of ``/proc/meminfo`` (Linux), capped by
    what an address-space limit (``ulimit -v``) leaves beyond the process's present size when one
    is set, and by ``DIGRAPH_MEMORY_LIMIT``; None when unknown."""
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
    cap = memory_limit()
    if cap is not None:
        avail = cap if avail is None else min(avail, cap)
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


def check_arcs(m, n, where, available):
    """Raise :class:`GraphTooLargeError` when loading ``m`` arcs (and ``n`` declared vertices)
    needs more than ``available`` bytes.

    The need is ``m * BYTES_PER_ARC + n * BYTES_PER_VERTEX``: the least that reading the arcs
    and building the graph of them takes (ids spread over a wide range take up to 2.5 times
    more), so that what is refused surely does not fit.

    Parameters
    ----------
    m : int
        Arcs read so far.
    n : int
        Vertices declared (``num_vertices``, a Matrix Market order); 0 when they come from the
        arcs (counted in ``BYTES_PER_ARC``).
    where : str
        Where the arcs come from and how far the reading got (``"web.txt, line 81,920"``).
    available : int or None
        :func:`available_bytes` taken once before the reading began (None: unknown, no check).
    """
    need = int(m) * BYTES_PER_ARC + int(n) * BYTES_PER_VERTEX
    if available is not None and need > available:
        raise GraphTooLargeError(
            f"{where}: the {int(m):,} arcs read up to this line already need about {_gb(need)} to "
            f"load, and {_gb(available)} of memory are available")


def _gb(b):
    return f"{b / 2**30:.1f} GiB" if b >= 2**30 else f"{b / 2**20:.0f} MiB"
