"""The edge-list reader's view of a line in Python: its fields as the Numba parsers split them,
the csv/tsv header rule (:func:`is_header`) and whether a first data line has vertex names
(the rules are in :mod:`digraph.io.edgelist`'s text).
"""

import re

_NUMERIC_START = re.compile(r"[+-]?\.?[0-9]")
_DECIMAL = re.compile(rb"[+-]?[0-9]+")
_BLANKS = re.compile(rb"[ \t\r]+")


def _is_number(field):
    try:
        float(field)
    except ValueError:
        return False
    return True


def raw_line(data, offset):
    end = data.find(b"\n", offset)
    return data[offset:end if end >= 0 else len(data)].rstrip(b"\r")


def split_fields(raw, comma):
    text = raw.decode("utf-8", errors="replace")
    return [f.strip() for f in text.split(",")] if comma else text.split()


def header_fields(raw, comma):
    """The fields of a line as the parsers split it (bytes): at commas, blanks around them
    removed, or at runs of blanks (space, tab, CR)."""
    raw = raw.strip(b" \t\r")
    if comma:
        return [f.strip(b" \t\r") for f in raw.split(b",")]
    return _BLANKS.split(raw) if raw else []


def names_line(raw, comma):
    """The first of the two id fields of a line that is not a decimal integer, or None."""
    for f in header_fields(raw, comma)[:2]:
        if not _DECIMAL.fullmatch(f):
            return f
    return None


def is_header(fields):
    """True when the fields of a csv/tsv first data line are all names (see the header rule of
    :mod:`digraph.io.edgelist`): ``["src", "dst"]`` is a header; ``["0", "1", "2.5x"]``,
    ``["0", "", "1"]``, ``["nan", "x"]`` are data."""
    return bool(fields) and all(f and not _NUMERIC_START.match(f) and not _is_number(f)
                                for f in fields)
