"""Byte-level scanning for the text arc parsers (:mod:`digraph.io._kernels`): the error codes
they return, skipping blank and comment lines (:func:`next_data_line`), the separator after a
field, and the hand-written number parsers.

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

# error codes returned by parse_arcs and parse_named_arcs (digraph.io._kernels)
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
LF = 10
COMMA = 44
_HASH = 35
_PCT = 37
PLUS = 43
MINUS = 45
_DOT = 46


@njit(cache=True, nogil=True)
def is_blank(c):
    return c == _SP or c == _TAB or c == _CR


@njit(cache=True, nogil=True)
def next_data_line(buf, pos):
    """Offset of the first byte of the next line at or after ``pos`` that is neither blank nor a
    comment (first non-blank byte ``#`` or ``%``); ``buf.size`` when there is none."""
    n = buf.size
    while pos < n:
        line_start = pos
        while pos < n and is_blank(buf[pos]):
            pos += 1
        if pos >= n:
            return n
        c = buf[pos]
        if c == LF:
            pos += 1
            continue
        if c == _HASH or c == _PCT:
            while pos < n and buf[pos] != LF:
                pos += 1
            pos += 1
            continue
        return line_start
    return n


@njit(cache=True, nogil=True)
def separator(buf, pos, n, comma):
    """After a token: (new pos, kind) with kind 0 = another field follows, 1 = end of line
    (pos is past the newline), -1 = a byte that cannot follow a number."""
    p = pos
    while p < n and is_blank(buf[p]):
        p += 1
    if p >= n:
        return p, 1
    c = buf[p]
    if c == LF:
        return p + 1, 1
    if comma:
        if c == COMMA:
            p += 1
            while p < n and is_blank(buf[p]):
                p += 1
            return p, 0
        return p, -1
    if p > pos:
        return p, 0
    return p, -1


@njit(cache=True, nogil=True)
def parse_int(buf, pos, n):
    """Signed decimal integer at ``pos``: (value, new pos, status) with status 0 = ok,
    1 = not an integer, 2 = outside int64.  Digits are accumulated as a negative number so that
    -2**63 is representable."""
    neg = False
    if pos < n and (buf[pos] == PLUS or buf[pos] == MINUS):
        neg = buf[pos] == MINUS
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
def parse_float(buf, pos, n):
    """Decimal float at ``pos``: (value, new pos, status) with status 0 = ok, 1 = not a number,
    2 = valid but needs the slow path (value undefined)."""
    neg = False
    if pos < n and (buf[pos] == PLUS or buf[pos] == MINUS):
        neg = buf[pos] == MINUS
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
        if pos < n and (buf[pos] == PLUS or buf[pos] == MINUS):
            eneg = buf[pos] == MINUS
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
