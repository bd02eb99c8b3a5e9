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
"""

import numpy as np
from numba import njit

__all__ = ["parse_arcs", "next_data_line", "OK", "E_TOKEN", "E_OVERFLOW", "E_COLUMNS",
           "E_MISMATCH", "E_RANGE", "E_NAN", "E_CAPACITY"]

# error codes returned by parse_arcs
OK = 0
E_TOKEN = 1       # a field is not a number of the expected kind (err_col says which column)
E_OVERFLOW = 2    # an integer vertex id outside the int64 range
E_COLUMNS = 3     # a line with fewer than 2 or more than 3 fields (or not the expected count)
E_MISMATCH = 4    # a line whose field count differs from the first data line's
E_RANGE = 5       # a vertex id outside 0..limit-1 (after subtracting base)
E_NAN = 6         # a NaN weight
E_CAPACITY = 7    # more data lines than the caller's capacity (err_line: the first one beyond)

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
        line_start = pos
        while pos < n and _is_blank(buf[pos]):
            pos += 1
        if pos >= n:
            break
        c = buf[pos]
        if c == _LF:
            pos += 1
            continue
        if c == _HASH or c == _PCT:
            while pos < n and buf[pos] != _LF:
                pos += 1
            pos += 1
            continue
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
