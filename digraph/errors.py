"""Exceptions raised by digraph.

Every error names what is wrong: the file and line of a malformed input, the vertex id that is not
in the graph, the parameter and the value that was refused.  All of them derive from
:class:`DigraphError`, and each also derives from the closest built-in exception, so that code
written against ``ValueError`` or ``LookupError`` keeps working.
"""

__all__ = [
    "DigraphError",
    "GraphFormatError",
    "UnknownFormatError",
    "InvalidWeightError",
    "VertexNotFoundError",
    "InvalidParameterError",
    "NotAvailableError",
    "ConvergenceError",
    "GraphTooLargeError",
    "WorkerLostError",
]


class DigraphError(Exception):
    """Base class of every error raised by digraph."""


class GraphFormatError(DigraphError, ValueError):
    """A graph file or object could not be read.

    Attributes
    ----------
    path : str or None
        The file, when the input was a file.
    line : int or None
        The 1-based line number of the offending line, when known.
    """

    def __init__(self, message, path=None, line=None):
        where = ""
        if path is not None:
            where = f"{path}"
            if line is not None:
                where += f", line {line}"
            where += ": "
        super().__init__(where + message)
        self.path = path
        self.line = line


class UnknownFormatError(GraphFormatError):
    """The file's format could not be told from its name (and was not given)."""


class InvalidWeightError(DigraphError, ValueError):
    """An arc weight is not allowed (NaN anywhere; negative or infinite where an algorithm forbids
    it)."""


class VertexNotFoundError(DigraphError, LookupError):
    """A vertex id given by the caller (source, seed, personalization key) is not in the graph."""

    def __init__(self, vertex, what="vertex"):
        super().__init__(f"{what} {vertex!r} is not a vertex of the graph")
        self.vertex = vertex

    def __str__(self):  # LookupError would otherwise quote the message like a KeyError
        return self.args[0]


class InvalidParameterError(DigraphError, ValueError):
    """A parameter of ``digraph.run``, ``digraph.load`` or an algorithm has a value it cannot
    take."""


class NotAvailableError(DigraphError, NotImplementedError):
    """The requested mode or device exists in the design but is not available in this build or
    machine."""


class ConvergenceError(DigraphError, RuntimeError):
    """An iterative algorithm did not reach its tolerance within ``max_iter`` rounds.

    Attributes
    ----------
    result : digraph.Result
        The last iterate, with its statistics (``result.stats["error_bound"]`` says how far it is).
    """

    def __init__(self, message, result=None):
        super().__init__(message)
        self.result = result


class GraphTooLargeError(DigraphError, MemoryError):
    """A declared size (a Matrix Market size line, ``num_vertices``) needs more memory than the
    machine has available; raised before anything of that size is allocated."""


class WorkerLostError(DigraphError, RuntimeError):
    """A worker of a cluster run (``digraph.run(..., cluster=client)``) died, left or stopped
    answering mid-run; the run ended instead of waiting.

    Attributes
    ----------
    worker : str or None
        The address of the worker that was lost (or first found unresponsive), when known.
    """

    def __init__(self, message, worker=None):
        super().__init__(message)
        self.worker = worker

    def __reduce__(self):  # sent back from a worker: rebuilt with its address
        return type(self), (self.args[0], self.worker)


def short_repr(value, limit=40):
    """``repr(value)`` for an error message, cut to about ``limit`` characters.

    A huge integer keeps its first digits and its digit count (``12345678901... (400 digits)``);
    anything else longer than ``limit`` is cut and ends with ``...``.  Control characters come
    out escaped, as ``repr`` writes them.
    """
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 4 * limit:
        if value.bit_length() > 12_000:  # beyond what Python converts to decimal
            return f"an integer of {value.bit_length():,} bits"
        digits = str(abs(value))
        return f"{'-' if value < 0 else ''}{digits[:12]}... ({len(digits)} digits)"
    try:
        r = repr(value)
    except Exception:  # a broken __repr__ must not hide the error being reported
        return f"<{type(value).__name__}>"
    return r if len(r) <= limit else r[:limit] + "..."
