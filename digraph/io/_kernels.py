"""Numba kernels that parse text arc lists held in memory as bytes.

The file readers (:mod:`digraph.io.edgelist`, :mod:`digraph.io.mtx`) read a file as blocks of
whole lines (:func:`digraph.io._files.text_blocks`) and hand each block, as a ``uint8`` array, to
:func:`parse_arcs`, which walks its bytes once and fills preallocated ``src``/``dst``/``weight``
arrays.  Nothing here raises: a malformed line stops the scan and is reported as an error code
plus the byte offsets of the line and of the offending token, from which the Python side computes
the line number and writes the message.  The error codes, the line scanning and the number
parsers (ids: int64 decimal integers; weights: decimal floats, Clinger's fast path, the other
tokens left to Python's ``float()``) are in :mod:`digraph.io._scan`.

Files of vertex names (ids that are not integers, :mod:`digraph.io.edgelist`) go through
:func:`parse_named_arcs`, which records where each id's text lies in the block instead of parsing
it, checks that it is UTF-8 text without control characters, and parses the weights as above; then
:func:`digraph.io._names.intern_names` gives each distinct text a dense index in order of first
appearance, in a hash table (open addressing, keyed by a hash with a per-reader random seed, so
that no file can be made to collide on purpose) whose texts are kept in one growing byte array.
Both walk the bytes once; nothing is done per line in Python.
"""

import numpy as np
from numba import njit

from ._names import is_decimal, text_status
from ._scan import (COMMA, LF, E_CAPACITY, E_COLUMNS, E_CONTROL, E_MISMATCH, E_NAN, E_OVERFLOW,
                    E_RANGE, E_TEXT, E_TOKEN, OK, is_blank, parse_float, parse_int, separator,
                    next_data_line)

__all__ = ["parse_arcs", "parse_named_arcs", "next_data_line", "OK", "E_TOKEN", "E_OVERFLOW",
           "E_COLUMNS", "E_MISMATCH", "E_RANGE", "E_NAN", "E_CAPACITY", "E_TEXT", "E_CONTROL"]


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
        while is_blank(buf[pos]):  # the line holds a byte that is not blank
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
        u, pos, st = parse_int(buf, pos, n)
        if st != 0:
            err = E_TOKEN if st == 1 else E_OVERFLOW
            err_line, err_tok, err_col = line_start, tok, 1
            break
        pos, kind = separator(buf, pos, n, comma)
        if kind != 0:
            err = E_TOKEN if kind < 0 else E_COLUMNS
            err_line, err_tok, err_col = line_start, tok, 1
            break
        # column 2: target
        tok2 = pos
        v, pos, st = parse_int(buf, pos, n)
        if st != 0:
            err = E_TOKEN if st == 1 else E_OVERFLOW
            err_line, err_tok, err_col = line_start, tok2, 2
            break
        pos, kind = separator(buf, pos, n, comma)
        if kind < 0:
            err = E_TOKEN
            err_line, err_tok, err_col = line_start, tok2, 2
            break
        cols = 2
        w = 1.0
        if kind == 0:
            # column 3: weight
            tok3 = pos
            w, pos, st = parse_float(buf, pos, n)
            if st == 1:
                err = E_TOKEN
                err_line, err_tok, err_col = line_start, tok3, 3
                break
            tok3_end = pos
            pos, kind = separator(buf, pos, n, comma)
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
        while is_blank(buf[pos]):  # the line holds a byte that is not blank
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
                while q < n and buf[q] != COMMA and buf[q] != LF:
                    q += 1
                e = q
                while e > tok and is_blank(buf[e - 1]):
                    e -= 1
            else:
                while q < n and buf[q] != LF and not is_blank(buf[q]):
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
                status = text_status(buf, tok, e)
                if status != OK:
                    err = status
                    err_tok, err_col = tok, cols
                    break
                if not is_named and not is_decimal(buf, tok, e):
                    is_named = True
                toks[4 * count + 2 * cols - 2] = tok
                toks[4 * count + 2 * cols - 1] = e
            else:
                w, p3, st = parse_float(buf, tok, e)
                if st == 1 or p3 != e:
                    err = E_TOKEN
                    err_tok, err_col = tok, 3
                    break
                tok3, tok3_end = tok, e
            # to the next field, or past the line end
            if comma:
                if q < n and buf[q] == COMMA:
                    pos = q + 1
                    while pos < n and is_blank(buf[pos]):
                        pos += 1
                    continue
                pos = q + 1 if q < n else n
                break
            p = q
            while p < n and is_blank(buf[p]):
                p += 1
            if p >= n:
                pos = n
                break
            if buf[p] == LF:
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
