"""Vertex names in the Numba parsers: the checks on a name's bytes (UTF-8 text without control
characters; whether it is a decimal integer) used by :func:`digraph.io._kernels.parse_named_arcs`,
and the hash table of :func:`intern_names`, which gives each distinct text a dense index in order
of first appearance (open addressing, keyed by a hash with a per-reader random seed, so that no
file can be made to collide on purpose), its texts kept in one growing byte array.
"""

import numpy as np
from numba import njit

from ._scan import MINUS, PLUS, E_CONTROL, E_TEXT, OK

_FNV_PRIME = np.uint64(1099511628211)
_MIX = np.uint64(0xFF51AFD7ED558CCD)
_S33 = np.uint64(33)


@njit(cache=True, nogil=True)
def text_status(buf, s, e):
    """``OK`` when ``buf[s:e]`` is UTF-8 text without control characters, else ``E_TEXT`` (not
    UTF-8: a stray continuation byte, an overlong form, a surrogate, a code point above U+10FFFF,
    a sequence cut short) or ``E_CONTROL`` (U+0000-U+001F, U+007F or U+0080-U+009F)."""
    p = s
    while p < e:
        c = buf[p]
        if c < 0x80:
            if c < 0x20 or c == 0x7F:
                return E_CONTROL
            p += 1
            continue
        if c < 0xC2 or c > 0xF4:
            return E_TEXT
        lo = 0x80
        hi = 0xBF
        if c < 0xE0:
            need = 1
        elif c < 0xF0:
            need = 2
            if c == 0xE0:
                lo = 0xA0
            elif c == 0xED:
                hi = 0x9F
        else:
            need = 3
            if c == 0xF0:
                lo = 0x90
            elif c == 0xF4:
                hi = 0x8F
        if p + need >= e:  # cut short
            return E_TEXT
        b1 = buf[p + 1]
        if b1 < lo or b1 > hi:
            return E_TEXT
        for k in range(2, need + 1):
            if (buf[p + k] & 0xC0) != 0x80:
                return E_TEXT
        if c == 0xC2 and b1 <= 0x9F:
            return E_CONTROL
        p += need + 1
    return OK


@njit(cache=True, nogil=True)
def is_decimal(buf, s, e):
    """Whether ``buf[s:e]`` is an optional sign and one or more ASCII digits."""
    if s < e and (buf[s] == PLUS or buf[s] == MINUS):
        s += 1
    if s >= e:
        return False
    for p in range(s, e):
        d = buf[p] - 48
        if d < 0 or d > 9:
            return False
    return True


def new_name_table(seed):
    """An empty table for :func:`intern_names`: ``[slots, hashes, bounds, arena, count, used,
    seed]`` (``seed``: a nonzero 64-bit integer, random per reader)."""
    return [np.full(1024, -1, dtype=np.int64), np.zeros(512, dtype=np.uint64),
            np.zeros(513, dtype=np.int64), np.zeros(4096, dtype=np.uint8), 0, 0,
            np.uint64(seed)]


@njit(cache=True, nogil=True)
def _hash(buf, s, e, seed):
    h = seed
    for p in range(s, e):
        h = (h ^ np.uint64(buf[p])) * _FNV_PRIME
    h ^= h >> _S33
    h *= _MIX
    h ^= h >> _S33
    return h


@njit(cache=True, nogil=True)
def _place(slots, hashes, u):
    mask = slots.size - 1
    i = np.int64(hashes[u] & np.uint64(mask))
    while slots[i] >= 0:
        i = (i + 1) & mask
    slots[i] = u


@njit(cache=True, nogil=True)
def intern_names(buf, toks, count, slots, hashes, bounds, arena, nuniq, used, seed):
    """The dense index of each id text of ``count`` arcs (``toks`` of :func:`parse_named_arcs`),
    the distinct texts numbered in order of first appearance across calls.

    Parameters
    ----------
    buf : uint8 array
        The block the offsets point into.
    toks : int64 array
        ``toks[2*k:2*k+2]``: start and end of the ``k``-th id (source, target, source, ...).
    count : int
        Arcs (``2 * count`` ids).
    slots, hashes, bounds, arena, nuniq, used, seed
        The table (:func:`new_name_table`): open-addressing slots holding text indices (-1 =
        empty), each text's hash, the offsets of the texts in ``arena`` (text ``u`` is
        ``arena[bounds[u]:bounds[u + 1]]``), the count of texts and of arena bytes, the seed.

    Returns
    -------
    ids : int64 array (2 * count)
        Source, target, source, ... indices.
    slots, hashes, bounds, arena, nuniq, used
        The table after the call (arrays reallocated when they grew).
    """
    ids = np.empty(2 * count, dtype=np.int64)
    for k in range(2 * count):
        s = toks[2 * k]
        e = toks[2 * k + 1]
        length = e - s
        h = _hash(buf, s, e, seed)
        mask = slots.size - 1
        i = np.int64(h & np.uint64(mask))
        found = -1
        while True:
            u = slots[i]
            if u < 0:
                break
            if hashes[u] == h and bounds[u + 1] - bounds[u] == length:
                b = bounds[u]
                same = True
                for t in range(length):
                    if arena[b + t] != buf[s + t]:
                        same = False
                        break
                if same:
                    found = u
                    break
            i = (i + 1) & mask
        if found < 0:
            found = nuniq
            if nuniq + 2 > hashes.size:
                bigger_h = np.zeros(2 * hashes.size, dtype=np.uint64)
                bigger_h[:nuniq] = hashes[:nuniq]
                hashes = bigger_h
                bigger_b = np.zeros(2 * hashes.size + 1, dtype=np.int64)
                bigger_b[:nuniq + 1] = bounds[:nuniq + 1]
                bounds = bigger_b
            if used + length > arena.size:
                bigger_a = np.zeros(max(2 * arena.size, used + length), dtype=np.uint8)
                bigger_a[:used] = arena[:used]
                arena = bigger_a
            arena[used:used + length] = buf[s:e]
            used += length
            hashes[nuniq] = h
            bounds[nuniq + 1] = used
            slots[i] = nuniq
            nuniq += 1
            if 2 * nuniq > slots.size:  # load factor 1/2: double and re-place every text
                slots = np.full(2 * slots.size, -1, dtype=np.int64)
                for v in range(nuniq):
                    _place(slots, hashes, v)
        ids[k] = found
    return ids, slots, hashes, bounds, arena, nuniq, used
