"""The files :func:`digraph.load_distributed` reads: the paths a source names (a file, a folder, a
glob pattern, a list), their format, the columns asked for, and each file opened as a
``dask.dataframe`` checked against its schema (Parquet) or header (CSV/TSV); errors name the
file.  Nothing here reads the arcs: ``dask.dataframe`` reads a Parquet file's footer and a CSV
file's first bytes to set up the columns."""

import glob
import os

from ..errors import GraphFormatError, InvalidParameterError, short_repr

__all__ = ["columns", "files", "open_frame", "name", "why"]

#: file formats :func:`digraph.load_distributed` reads, and the names that tell them
_SUFFIXES = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".tsv": "tsv"}


def columns(columns, weight):
    """The columns read: (src, dst) or (src, dst, weight), checked."""
    if isinstance(columns, str):
        columns = [c.strip() for c in columns.split(",")]
    try:
        cols = list(columns)
    except TypeError:
        cols = []
    if len(cols) != 2 or not all(isinstance(c, str) and c for c in cols) or cols[0] == cols[1]:
        raise InvalidParameterError(f"columns must name two different columns (source, "
                                    f"target), got {short_repr(columns)}")
    if weight is not None:
        if not isinstance(weight, str) or not weight or weight in cols:
            raise InvalidParameterError(f"weight must name a third column, got "
                                        f"{short_repr(weight)}")
        cols.append(weight)
    return cols


def files(source, fmt):
    """(the files ``source`` names, sorted, and their format), or GraphFormatError naming the
    first path that names none."""
    if fmt is not None and fmt not in ("parquet", "csv", "tsv"):
        raise InvalidParameterError(f"format must be 'parquet', 'csv' or 'tsv', got "
                                    f"{short_repr(fmt)}")
    items = [source] if isinstance(source, (str, os.PathLike)) else source
    if not isinstance(items, (list, tuple)) or not items or not all(
            isinstance(s, (str, os.PathLike)) for s in items):
        raise InvalidParameterError(f"load_distributed reads files (a path, a folder, a glob or "
                                    f"a list of them) or a Graph, got {short_repr(source)}")
    files = []
    for s in map(os.fspath, items):
        if os.path.isdir(s):
            found = sorted(os.path.join(s, f) for f in os.listdir(s)
                           if _format_of(f) is not None and (fmt is None or _format_of(f) == fmt)
                           and not f.startswith((".", "_")))
            what = f"no {fmt or 'parquet, csv or tsv'} file in the folder"
        elif glob.has_magic(s):
            found = sorted(f for f in glob.glob(s) if os.path.isfile(f))
            what = "no file matches the pattern"
        else:
            found = [s] if os.path.isfile(s) else []
            what = "no such file"
        if not found:
            raise GraphFormatError(what, path=s)
        files += found
    kinds = {fmt or _format_of(f) for f in files}
    if None in kinds:
        bad = next(f for f in files if _format_of(f) is None)
        raise GraphFormatError("cannot tell the format from the name; pass format='parquet', "
                               "'csv' or 'tsv'", path=bad)
    if len(kinds) > 1:
        raise InvalidParameterError(f"load_distributed reads files of one format, got "
                                    f"{', '.join(sorted(kinds))}; pass format=")
    return files, kinds.pop()


def _format_of(name):
    return _SUFFIXES.get(os.path.splitext(name)[1].lower())


def open_frame(dd, path, fmt, cols, sep, header):
    """``path`` as a dask DataFrame of the columns ``cols``, checked against its schema."""
    try:
        if fmt == "parquet":
            frame = dd.read_parquet(path)
        else:
            sep = sep if sep is not None else ("\t" if fmt == "tsv" else ",")
            kinds = dict(zip(cols, ["int64", "int64", "float64"]))
            if header:
                frame = dd.read_csv(path, sep=sep, dtype=kinds, comment="#",
                                    blocksize="64MB")
            else:
                frame = dd.read_csv(path, sep=sep, header=None, names=cols, usecols=range(
                    len(cols)), dtype=kinds, comment="#", blocksize="64MB")
    except (OSError, ValueError, TypeError) as e:
        raise GraphFormatError(f"cannot be read ({type(e).__name__}: {why(e)})",
                               path=path) from None
    missing = [c for c in cols if c not in frame.columns]
    if missing:
        raise GraphFormatError(f"no column {missing[0]!r} (its columns: "
                               f"{', '.join(map(str, frame.columns))})", path=path)
    from pandas.api.types import is_bool_dtype, is_integer_dtype, is_numeric_dtype
    for c, kind in zip(cols, ("id", "id", "weight")):
        dt = frame.dtypes[c]
        if kind == "id" and fmt == "parquet" and (not is_integer_dtype(dt) or is_bool_dtype(dt)):
            raise GraphFormatError(f"column {c!r} holds {frame.dtypes[c]}, not integer vertex "
                                   "ids", path=path)
        if kind == "weight" and (not is_numeric_dtype(dt) or is_bool_dtype(dt)):
            raise GraphFormatError(f"column {c!r} holds {frame.dtypes[c]}, not numbers (weights)",
                                   path=path)
    return frame[cols]


def name(files):
    """The files in a message: the one, or the first and how many more."""
    return files[0] if len(files) == 1 else f"{files[0]} (and {len(files) - 1} more files)"


def why(e):
    """The first line of ``e``'s message that says what went wrong (dask's wrapper of a pandas
    reader's error quotes it after ``Original Message:``)."""
    text = str(e).strip()
    if "Original Message:" in text:
        text = text.split("Original Message:", 1)[1].strip()
    return text.splitlines()[0] if text else type(e).__name__
