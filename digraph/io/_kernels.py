"""Numba kernels that parse text arc lists held in memory as bytes.

The file readers (:mod:`digraph.io.edgelist`, :mod:`digraph.io.mtx`) read a file as blocks of
whole lines (:func:`digraph.io._files.text_blocks`) and hand each block, as a ``uint8`` array, to
:func:`parse_arcs`, which walks its bytes once and fills preallocated ``src``/``dst``/``weight``
arrays.  Nothing here raises: a malformed line stops the scan and is reported as an error code
plus the byte offsets of the line and of the offending token, from which the Python side computes
the line number and writes the message.

Numbers are parsed by hand:

* vertex ids are signed decimal integers in the int64 range (overflow is an error);
* weights are decimal floats (``[+-]digits[.digits][(e|E)[+-]digits]``, ``.5`` and ``5.`` too) or
  ``inf``/``infinity``/``nan`` in any case.  Up to 18 significant digits are accumulated into an
  integer mantissa ``M`` with a decimal exponent ``E``; when ``M < 2**53`` and ``|E| <= 22`` the
  value ``M * 10**E`` (or ``M / 10**-E``) is one correctly rounded operation on exact operands
  (Clinger's fast path), so the result equals Python's ``float()``.  Any other token is recorded in
  a short "slow" list (arc index, start, end) and converted afterwards by ``float()`` in Python.

Files of vertex names (ids that are not integers, :mod:`digraph.io.edgelist`) go through
:func:`parse_named_arcs`, which records where each id's text lies in the block instead of parsing
it, checks that it is UTF-8 text without control characters, and parses the weights as above; then
:func:`intern_names` gives each distinct text a dense index in order of first appearance, in a hash
table (open addressing, keyed by a hash with a per-reader random seed, so that no file can be made
to collide on purpose) whose texts are kept in one growing byte array.  Both walk the bytes once;
nothing is done per line in Python.
"""

import numpy as np
from numba import njit

__all__ = ["parse_arcs", "parse_named_arcs", "intern_names", "new_name_table", "next_data_line",
           "OK", "E_TOKEN", "E_OVERFLOW", "E_COLUMNS", "E_MISMATCH", "E_RANGE", "E_NAN",
           "E_CAPACITY", "E_TEXT", "E_CONTROL"]

# error codes returned by parse_arcs
OK = 0
E_TOKEN = 1       # a field is not a number of the expected kind (err_col says which column)
E_OVERFLOW = 2    # an integer vertex id outside the int64 range
E_COLUMNS = 3     # a line with fewer than 2 or more than 3 fields (or not the expected count)
E_MISMATCH = 4    # a line whose field count differs from the first data line's
E_RANGE = 5       # a vertex id outside 0..limit-1 (after subtracting base)
E_NAN = 6         # a NaN weight
E_CAPACITY = 7    # more data lines than the caller's capacity (err_line: the first one beyond)
E_TEXT = 8        # a vertex name that is not UTF-8 text (parse_named_arcs)
E_CONTROL = 9     # a vertex name holding a control character (parse_named_arcs)

_P10 = np.array([1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14,
                 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22], dtype=np.float64)
_TWO53 = 9007199254740992
_I64MIN = -9223372036854775808
_I64MIN_DIV10 = -922337203685477580  # -2**63 == _I64MIN_DIV10 * 10 - 8

_SP = 32
_TAB = 9
_CR = 13
_LF = 10
_COMMA = 44
_HASH = 35
_PCT = 37
_PLUS = 43
_MINUS = 45
_DOT = 46


@njit(cache=True, nogil=True)
def _is_blank(c):
    return c == _SP or c == _TAB or c == _CR


@njit(cache=True, nogil=True)
def next_data_line(buf, pos):
    """Offset of the first byte of the next line at or after ``pos`` that is neither blank nor a
    comment (first non-blank byte ``#`` or ``%``); ``buf.size`` when there is none."""
    n = buf.size
    while pos < n:
        line_start = pos
        while pos < n and _is_blank(buf[pos]):
            pos += 1
        if pos >= n:
            return n
        c = buf[pos]
        if c == _LF:
            pos += 1
            continue
        if c == _HASH or c == _PCT:
            while pos < n and buf[pos] != _LF:
                pos += 1
            pos += 1
            continue
        return line_start
    return n


@njit(cache=True, nogil=True)
def _separator(buf, pos, n, comma):
    """After a token: (new pos, kind) with kind 0 = another field follows, 1 = end of line
    (pos is past the newline), -1 = a byte that cannot follow a number."""
    p = pos
    while p < n and _is_blank(buf[p]):
        p += 1
    if p >= n:
        return p, 1
    c = buf[p]
    if c == _LF:
        return p + 1, 1
    if comma:
        if c == _COMMA:
            p += 1
            while p < n and _is_blank(buf[p]):
                p += 1
            return p, 0
        return p, -1
    if p > pos:
        return p, 0
    return p, -1


@njit(cache=True, nogil=True)
def _parse_int(buf, pos, n):
    """Signed decimal integer at ``pos``: (value, new pos, status) with status 0 = ok,
    1 = not an integer, 2 = outside int64.  Digits are accumulated as a negative number so that
    -2**63 is representable."""
    neg = False
    if pos < n and (buf[pos] == _PLUS or buf[pos] == _MINUS):
        neg = buf[pos] == _MINUS
        pos += 1
    v = 0
    nd = 0
    overflow = False
    while pos < n:
        d = buf[pos] - 48
        if d < 0 or d > 9:
            break
        nd += 1
        if not overflow:
            if v > _I64MIN_DIV10 or (v == _I64MIN_DIV10 and d <= 8):
                v = v * 10 - d
            else:
                overflow = True
        pos += 1
    if nd == 0:
        return 0, pos, 1
    if overflow or (not neg and v == _I64MIN):
        return 0, pos, 2
    return (v if neg else -v), pos, 0


@njit(cache=True, nogil=True)
def _low(buf, p, n):
    """Byte ``p`` folded to lower case (ASCII letters), 0 past the end."""
    return (buf[p] | 32) if p < n else 0


@njit(cache=True, nogil=True)
def _parse_float(buf, pos, n):
    """Decimal float at ``pos``: (value, new pos, status) with status 0 = ok, 1 = not a number,
    2 = valid but needs the slow path (value undefined)."""
    neg = False
    if pos < n and (buf[pos] == _PLUS or buf[pos] == _MINUS):
        neg = buf[pos] == _MINUS
        pos += 1
    if pos < n and ((buf[pos] | 32) == 105 or (buf[pos] | 32) == 110):  # 'i' or 'n'
        c0, c1, c2 = _low(buf, pos, n), _low(buf, pos + 1, n), _low(buf, pos + 2, n)
        if c0 == 110 and c1 == 97 and c2 == 110:  # "nan"
            return np.nan, pos + 3, 0
        if c0 == 105 and c1 == 110 and c2 == 102:  # "inf", maybe "infinity"
            x = -np.inf if neg else np.inf
            if (_low(buf, pos + 3, n) == 105 and _low(buf, pos + 4, n) == 110
                    and _low(buf, pos + 5, n) == 105 and _low(buf, pos + 6, n) == 116
                    and _low(buf, pos + 7, n) == 121):
                return x, pos + 8, 0
            return x, pos + 3, 0
        return 0.0, pos, 1
    mant = 0
    nd = 0          # significant digits kept in mant
    seen = 0        # digits seen in total
    exp10 = 0
    lost = False    # a nonzero significant digit did not fit into mant
    while pos < n:
        d = buf[pos] - 48
        if d < 0 or d > 9:
            break
        seen += 1
        if mant != 0 or d != 0:
            if nd < 18:
                mant = mant * 10 + d
                nd += 1
            else:
                exp10 += 1
                if d != 0:
                    lost = True
        pos += 1
    if pos < n and buf[pos] == _DOT:
        pos += 1
        while pos < n:
            d = buf[pos] - 48
            if d < 0 or d > 9:
                break
            seen += 1
            if mant != 0 or d != 0:
                if nd < 18:
                    mant = mant * 10 + d
                    nd += 1
                    exp10 -= 1
                elif d != 0:
                    lost = True
            else:
                exp10 -= 1
            pos += 1
    if seen == 0:
        return 0.0, pos, 1
    if pos < n and (buf[pos] | 32) == 101:  # 'e'
        pos += 1
        eneg = False
        if pos < n and (buf[pos] == _PLUS or buf[pos] == _MINUS):
            eneg = buf[pos] == _MINUS
            pos += 1
        e = 0
        ed = 0
        while pos < n:
            d = buf[pos] - 48
            if d < 0 or d > 9:
                break
            if e < 100000000:
                e = e * 10 + d
            ed += 1
            pos += 1
        if ed == 0:
            return 0.0, pos, 1
        exp10 += -e if eneg else e
    if mant == 0:
        return (-0.0 if neg else 0.0), pos, 0
    if lost or mant >= _TWO53 or exp10 > 22 or exp10 < -22:
        return 0.0, pos, 2
    x = float(mant)
    if exp10 >= 0:
        x = x * _P10[exp10]
    else:
        x = x / _P10[-exp10]
    return (-x if neg else x), pos, 0


@njit(cache=True, nogil=True)
def parse_arcs(buf, start, capacity, comma, expect_cols, ncols0, keep_weights, base, limit):
    """Parse ``src dst [weight]`` lines of ``buf[start:]``.

    Parameters
    ----------
    buf : uint8 array
        Whole lines of text (a block of a file, or all of it); the text ends at ``buf.size``.
    start : int
        Offset of the first byte to parse (after a header or a Matrix Market size line).
    capacity : int
        Most arcs to parse: a data line beyond them stops the scan with ``E_CAPACITY`` (the
        newline count + 1 never stops it).
    comma : bool
        Fields are separated by one comma (with optional blanks around it) instead of blanks.
    expect_cols : int
        2 or 3 to require that many fields on every line; 0 to take the first data line's count
        (which must be 2 or 3).
    ncols0 : int
        With ``expect_cols`` 0: the field count of the data lines parsed before ``buf`` (by an
        earlier call on an earlier block of the same file), which every line must then have;
        0 when there were none.
    keep_weights : bool
        Store the third column (and refuse NaN); when False the third column is checked for
        syntax only.
    base : int
        Subtracted from every vertex id (1 for Matrix Market); 0 or 1, and 1 only with a
        ``limit`` (so that no id wraps around).
    limit : int
        When >= 0, every id (after ``base``) must lie in ``0..limit-1``.

    Returns
    -------
    src, dst : int64 arrays (capacity)
    weight : float64 array (capacity, or 0 when not kept)
    count : int
        Number of arcs parsed (valid prefix of the arrays).
    ncols : int
        Field count of the data lines (0 when there was none).
    first_line : int
        Offset of the first data line (-1 when none).
    err, err_line, err_tok, err_col : int
        Error code (``OK`` = 0), offsets of the offending line and token, and the 1-based column.
    slow, nslow : int64 array, int
        ``slow[3*i:3*i+3]`` = (arc index, token start, token end) of the ``nslow`` weights left to
        Python's ``float()``.
    """
    n = buf.size
    src = np.empty(capacity, dtype=np.int64)
    dst = np.empty(capacity, dtype=np.int64)
    weight = np.empty(capacity if keep_weights else 0, dtype=np.float64)
    slow = np.empty(48, dtype=np.int64)
    nslow = 0
    count = 0
    ncols = expect_cols if expect_cols != 0 else ncols0
    first_line = -1
    pos = start
    err = OK
    err_line = -1
    err_tok = -1
    err_col = 0
    while pos < n:
        line_start = next_data_line(buf, pos)
        if line_start >= n:
            break
        pos = line_start
        while _is_blank(buf[pos]):  # the line holds a byte that is not blank
            pos += 1
        if count >= capacity:
            err = E_CAPACITY
            err_line = line_start
            err_tok = pos
            break
        if first_line < 0:
            first_line = line_start
        # column 1: source
        tok = pos
        u, pos, st = _parse_int(buf, pos, n)
        if st != 0:
            err = E_TOKEN if st == 1 else E_OVERFLOW
            err_line, err_tok, err_col = line_start, tok, 1
            break
        pos, kind = _separator(buf, pos, n, comma)
        if kind != 0:
            err = E_TOKEN if kind < 0 else E_COLUMNS
            err_line, err_tok, err_col = line_start, tok, 1
            break
        # column 2: target
        tok2 = pos
        v, pos, st = _parse_int(buf, pos, n)
        if st != 0:
            err = E_TOKEN if st == 1 else E_OVERFLOW
            err_line, err_tok, err_col = line_start, tok2, 2
            break
        pos, kind = _separator(buf, pos, n, comma)
        if kind < 0:
            err = E_TOKEN
            err_line, err_tok, err_col = line_start, tok2, 2
            break
        cols = 2
        w = 1.0
        if kind == 0:
            # column 3: weight
            tok3 = pos
            w, pos, st = _parse_float(buf, pos, n)
            if st == 1:
                err = E_TOKEN
                err_line, err_tok, err_col = line_start, tok3, 3
                break
            tok3_end = pos
            pos, kind = _separator(buf, pos, n, comma)
            if kind < 0:
                err = E_TOKEN
                err_line, err_tok, err_col = line_start, tok3, 3
                break
            if kind == 0:
                err = E_COLUMNS
                err_line, err_tok, err_col = line_start, pos, 4
                break
            cols = 3
            if keep_weights:
                if st == 2:
                    if 3 * nslow == slow.size:
                        bigger = np.empty(2 * slow.size, dtype=np.int64)
                        for i in range(slow.size):
                            bigger[i] = slow[i]
                        slow = bigger
                    slow[3 * nslow] = count
                    slow[3 * nslow + 1] = tok3
                    slow[3 * nslow + 2] = tok3_end
                    nslow += 1
                elif w != w:
                    err = E_NAN
                    err_line, err_tok, err_col = line_start, tok3, 3
                    break
        if ncols == 0:
            ncols = cols
        elif cols != ncols:
            err = E_COLUMNS if expect_cols != 0 else E_MISMATCH
            err_line, err_tok, err_col = line_start, tok, cols
            break
        if limit >= 0:  # compared before subtracting base, which could wrap -2**63 around
            if u < base or u - base >= limit:
                err = E_RANGE
                err_line, err_tok, err_col = line_start, tok, 1
                break
            if v < base or v - base >= limit:
                err = E_RANGE
                err_line, err_tok, err_col = line_start, tok2, 2
                break
        src[count] = u - base
        dst[count] = v - base
        if keep_weights and cols == 3:
            weight[count] = w
        count += 1
    return (src, dst, weight, count, ncols, first_line, err, err_line, err_tok, err_col,
            slow, nslow)


# ---------------------------------------------------------------------------- vertex names

_FNV_PRIME = np.uint64(1099511628211)
_MIX = np.uint64(0xFF51AFD7ED558CCD)
_S33 = np.uint64(33)


@njit(cache=True, nogil=True)
def _text_status(buf, s, e):
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
def _is_decimal(buf, s, e):
    """Whether ``buf[s:e]`` is an optional sign and one or more ASCII digits."""
    if s < e and (buf[s] == _PLUS or buf[s] == _MINUS):
        s += 1
    if s >= e:
        return False
    for p in range(s, e):
        d = buf[p] - 48
        if d < 0 or d > 9:
            return False
    return True


@njit(cache=True, nogil=True)
def parse_named_arcs(buf, start, capacity, comma, ncols0, keep_weights):
    """Parse ``src dst [weight]`` lines of ``buf[start:]`` whose ids are names (any text).

    Lines and comments as in :func:`parse_arcs`.  A field is a run of bytes other than blanks
    (space, tab, CR) and the newline, or, with ``comma``, the bytes up to the next comma or line
    end with the blanks around them removed (a name may then hold spaces).  The two ids must be
    non-empty UTF-8 text without control characters; the weight is parsed as in
    :func:`parse_arcs`.

    Parameters
    ----------
    buf, start, capacity, comma, keep_weights
        As for :func:`parse_arcs`.
    ncols0 : int
        The field count of the lines parsed before ``buf`` (0 when none): every line must have it.

    Returns
    -------
    toks : int64 array (4 * capacity)
        ``toks[4*k:4*k+4]`` = start and end offsets in ``buf`` of arc ``k``'s source and target.
    weight : float64 array (capacity, or 0 when not kept)
    count, ncols, first_line, err, err_line, err_tok, err_col, slow, nslow
        As for :func:`parse_arcs` (``err`` may also be ``E_TEXT`` or ``E_CONTROL``).
    named : int
        Arcs parsed one of whose ids is not a decimal integer (sign and digits).
    """
    n = buf.size
    toks = np.empty(4 * capacity, dtype=np.int64)
    weight = np.empty(capacity if keep_weights else 0, dtype=np.float64)
    slow = np.empty(48, dtype=np.int64)
    nslow = 0
    count = 0
    named = 0
    ncols = ncols0
    first_line = -1
    pos = start
    err = OK
    err_line = -1
    err_tok = -1
    err_col = 0
    while pos < n:
        line_start = next_data_line(buf, pos)
        if line_start >= n:
            break
        pos = line_start
        while _is_blank(buf[pos]):  # the line holds a byte that is not blank
            pos += 1
        if count >= capacity:
            err = E_CAPACITY
            err_line = line_start
            err_tok = pos
            break
        if first_line < 0:
            first_line = line_start
        cols = 0
        w = 1.0
        st = 0
        tok3 = -1
        tok3_end = -1
        is_named = False
        while True:  # the fields of the line
            tok = pos
            q = pos
            if comma:
                while q < n and buf[q] != _COMMA and buf[q] != _LF:
                    q += 1
                e = q
                while e > tok and _is_blank(buf[e - 1]):
                    e -= 1
            else:
                while q < n and buf[q] != _LF and not _is_blank(buf[q]):
                    q += 1
                e = q
            cols += 1
            if cols > 3:
                err = E_COLUMNS
                err_tok, err_col = tok, 4
                break
            if e == tok:  # an empty field (comma-separated only)
                err = E_TOKEN
                err_tok, err_col = tok, cols
                break
            if cols <= 2:
                status = _text_status(buf, tok, e)
                if status != OK:
                    err = status
                    err_tok, err_col = tok, cols
                    break
                if not is_named and not _is_decimal(buf, tok, e):
                    is_named = True
                toks[4 * count + 2 * cols - 2] = tok
                toks[4 * count + 2 * cols - 1] = e
            else:
                w, p3, st = _parse_float(buf, tok, e)
                if st == 1 or p3 != e:
                    err = E_TOKEN
                    err_tok, err_col = tok, 3
                    break
                tok3, tok3_end = tok, e
            # to the next field, or past the line end
            if comma:
                if q < n and buf[q] == _COMMA:
                    pos = q + 1
                    while pos < n and _is_blank(buf[pos]):
                        pos += 1
                    continue
                pos = q + 1 if q < n else n
                break
            p = q
            while p < n and _is_blank(buf[p]):
                p += 1
            if p >= n:
                pos = n
                break
            if buf[p] == _LF:
                pos = p + 1
                break
            pos = p
        if err != OK:
            err_line = line_start
            break
        if cols < 2:
            err = E_COLUMNS
            err_line, err_tok, err_col = line_start, line_start, cols
            break
        if ncols == 0:
            ncols = cols
        elif cols != ncols:
            err = E_MISMATCH
            err_line, err_tok, err_col = line_start, line_start, cols
            break
        if cols == 3 and keep_weights:
            if st == 2:
                if 3 * nslow == slow.size:
                    bigger = np.empty(2 * slow.size, dtype=np.int64)
                    for i in range(slow.size):
                        bigger[i] = slow[i]
                    slow = bigger
                slow[3 * nslow] = count
                slow[3 * nslow + 1] = tok3
                slow[3 * nslow + 2] = tok3_end
                nslow += 1
            elif w != w:
                err = E_NAN
                err_line, err_tok, err_col = line_start, tok3, 3
                break
            weight[count] = w
        if is_named:
            named += 1
        count += 1
    return (toks, weight, count, ncols, first_line, err, err_line, err_tok, err_col, slow, nslow,
            named)


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
