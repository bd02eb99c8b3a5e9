"""Graph input: text edge lists, Matrix Market, networkx graphs, numpy arrays, scipy matrices.

:func:`load` is the one entry point (exported as ``digraph.load``); it picks a reader by the type of
its argument and, for files, by the file name or ``format=``:

* :mod:`digraph.io.edgelist` -- ``src dst [weight]`` text files (``.el .txt .edges .tsv .csv``,
  optionally ``.gz``), parsed by one Numba pass over the bytes (:mod:`digraph.io._kernels`), with
  integer ids or vertex names (the first data line decides);
* :mod:`digraph.io.mtx` -- Matrix Market coordinate files (``.mtx``, optionally ``.gz``);
* :mod:`digraph.io.objects` -- networkx graphs, ``(src, dst[, w])`` arrays, scipy sparse matrices;
* :mod:`digraph.io._files` -- format detection, reading and gunzipping (a file, or standard input
  through :class:`~._files.InputStream` for the command line's ``-``), line numbers for
  errors.
"""

import os

import numpy as np

from ..errors import InvalidParameterError
from ..graph import Graph
from ..interrupts import deferring
from ..memory import check_vertices
from ._files import EXTENSIONS, FORMATS, InputStream, detect_format
from .edgelist import read_edgelist
from .mtx import read_mtx
from .objects import from_edge_arrays, from_networkx, from_scipy, is_networkx, is_scipy_sparse

__all__ = ["load", "FORMATS", "EXTENSIONS"]


@deferring
def load(source, *, format=None, num_vertices=None, weight="weight", weighted=None, directed=None,
         name=None, header=None):
    """Load a graph from a file or an in-memory object.

    Parameters
    ----------
    source : str, os.PathLike, networkx graph, tuple, list, numpy.ndarray, scipy sparse, Graph
        * a path to a text edge list (``.el``, ``.txt``, ``.edges``, ``.tsv``, ``.csv``) or a
          Matrix Market file (``.mtx``), each optionally gzip-compressed (``.gz``).  Edge lists
          hold one arc ``src dst [weight]`` per line, fields separated by blanks (commas for
          csv); lines whose first non-blank character is ``#`` or ``%`` are comments; a csv/tsv
          file may start with a header line.  The first data line decides the kind of vertex
          ids: when its two ids are decimal integers, every id is an int64 integer, renumbered
          densely in increasing order unless ``num_vertices`` is given; otherwise every id is a
          name (``alice bob 2.5``), kept as the text written (``1`` and ``01`` are two
          vertices) and numbered in order of first appearance.  ``Graph.vertex_ids`` maps back
          (int64, or an object array of ``str``).  ``docs/input.md`` has the rules.  An empty
          file gives an empty graph.  ``"-"`` is a file named ``-`` (the command line reads
          standard input for it);
        * a networkx ``DiGraph``, ``MultiDiGraph``, ``Graph`` or ``MultiGraph`` (any hashable
          nodes; undirected edges become two arcs, a self-loop one);
        * ``(src, dst)`` or ``(src, dst, weight)`` arrays, or an ``(m, 2)``/``(m, 3)`` array;
        * a square scipy sparse matrix/array (stored entry ``(i, j)`` = arc ``i -> j``);
        * a :class:`~digraph.Graph`, returned as is.
    format : {"edgelist", "csv", "tsv", "mtx"}, optional
        File format, overriding the file name (files only).
    num_vertices : int, optional
        Keep vertices ``0..num_vertices-1`` (isolated ones included); every id must be in range
        (an edge list of vertex names is then refused).  For Matrix Market, networkx and scipy
        inputs it must match the input's vertex count.
    weight : str or None
        networkx only: the edge attribute holding the weight (missing = 1.0); None: unweighted.
    weighted : bool, optional
        None: weighted when the input has weights (a third column, a non-pattern Matrix Market
        file, a networkx weight attribute, a non-boolean matrix).  False: drop weights.
        True: require them.
    directed : bool, optional
        None: True, except for undirected networkx graphs and symmetric Matrix Market files.
        Pass False for an edge list that already lists both directions of every edge.
    name : str, optional
        Default: the file name without extensions, or ``G.name`` for networkx graphs.
    header : bool, optional
        Edge lists only.  None: a csv/tsv file's first data line is a header, and skipped, when
        every field is a name (``src,dst``); plain edge lists have none.  True: the first data
        line is a header whatever it holds; False: there is none (a csv of vertex names whose
        first line is an arc).

    Returns
    -------
    digraph.Graph

    Raises
    ------
    FileNotFoundError
        The file does not exist.
    digraph.errors.UnknownFormatError
        The file name has no known extension and ``format`` was not given.
    digraph.errors.GraphFormatError
        A malformed line (the message names the file, the 1-based line number and the line),
        a truncated or corrupt gzip file, an unsupported or inconsistent Matrix Market file, an
        id outside ``num_vertices`` in a file (with its line), a vertex name that is not UTF-8
        text or holds a control character, a first data line that is the only one with a name
        (a header in a plain edge list, or a typo).
    digraph.errors.InvalidWeightError
        A NaN weight (file and line, or the arc).
    digraph.errors.InvalidParameterError
        Bad parameters (``num_vertices`` outside the int64 range, say) or an input of an
        unsupported type or shape.
    digraph.errors.GraphTooLargeError
        ``num_vertices``, or the order of a Matrix Market file, needs more memory than is
        available; refused before anything of that size is allocated.

    Examples
    --------
    >>> import digraph
    >>> g = digraph.load([[0, 1, 2], [1, 2, 0]])
    >>> g.num_vertices, g.num_arcs
    (3, 3)
    """
    if isinstance(source, Graph):
        return source
    if num_vertices is not None:
        try:
            bad = isinstance(num_vertices, bool) or int(num_vertices) != num_vertices
        except (TypeError, ValueError, OverflowError):
            bad = True
        if bad or num_vertices < 0:
            raise InvalidParameterError(
                f"num_vertices must be an integer >= 0, got {num_vertices!r}")
        num_vertices = int(num_vertices)
        if num_vertices >= 2**63:
            raise InvalidParameterError(
                "num_vertices is 2**63 or more, outside the int64 range of vertex ids")
        check_vertices(num_vertices, "num_vertices")  # before the file is read
    if isinstance(source, (str, os.PathLike, InputStream)):
        fmt = detect_format(source, format)
        if fmt == "mtx":
            if header is not None:
                raise InvalidParameterError("header= applies to edge lists, not to a Matrix Market "
                                            "file (whose header is its banner and size line)")
            return read_mtx(source, num_vertices=num_vertices, weighted=weighted,
                            directed=directed, name=name)
        if header is not None and not isinstance(header, bool):
            raise InvalidParameterError(f"header must be True, False or None, got {header!r}")
        return read_edgelist(source, fmt, num_vertices=num_vertices, weighted=weighted,
                             directed=directed, name=name, header=header)
    if header is not None:
        raise InvalidParameterError(f"header= applies to files only, not to a "
                                    f"{type(source).__name__}")
    if format is not None:
        raise InvalidParameterError(f"format={format!r} applies to files only, not to a "
                                    f"{type(source).__name__}")
    opts = dict(weighted=weighted, directed=directed, num_vertices=num_vertices, name=name)
    if is_networkx(source):
        return from_networkx(source, weight=weight, **opts)
    if is_scipy_sparse(source):
        return from_scipy(source, **opts)
    if isinstance(source, (tuple, list)) or (hasattr(source, "ndim") and hasattr(source, "shape")):
        if not isinstance(source, (tuple, list)):
            source = np.asarray(source)
        return from_edge_arrays(source, **opts)
    raise InvalidParameterError(
        f"cannot load a graph from a {type(source).__name__}: expected a file path, a networkx "
        f"graph, (src, dst[, weight]) arrays, a 2-d array, a scipy sparse matrix or a Graph")
