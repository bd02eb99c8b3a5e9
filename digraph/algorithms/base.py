"""The algorithm interface: what an algorithm tells the engine, and nothing about how it is run.

An algorithm is a small object (Ligra's habit: the framework owns traversal, frontiers and
parallelism) whose :meth:`Algorithm.prepare` turns a graph and parameters into one of three
*systems*, each naming its initial state, arc function, combine operator and activity measure:

:class:`LinearSystem` — combine = sum.
    ``x = b + A x`` with ``A[v, u] = src_scale[u] * arc_scale[e] * dst_scale[v]`` for every arc
    ``e = (u -> v)`` (coefficients non-negative, parallel arcs add).  Arc function: ``c_e * δ_u``;
    the state only grows from ``x = 0`` with pending residual ``δ = b``; activity: ``|δ_u|``;
    converged when a sound bound on the error of the answer, computed from the residual alone, is
    below ``tol`` (never from the reference).  PageRank, adsorption, personalised PageRank, Katz.
:class:`MonotoneSystem` — combine = min or max.
    Arc function ``relax(x_u, a_e)`` from a small set of operators (``plus``, ``min``, ``max``,
    ``times``, ``first``); a vertex is active when its value improved; converged when no vertex
    improved.  SSSP, BFS, widest path, most reliable path, reachability, label propagation.
:class:`HIndexSystem` — combine = h-index over the undirected neighbourhood (Montresor et al.,
    "Distributed k-core decomposition", IEEE TPDS 2013; Lü et al., Nature Comm. 2016): estimates
    start at the degree and only decrease; active when an estimate dropped.  k-core.

Every mode and device (``bsp`` now; the path modes and GPU kernels later) consumes these systems,
so an algorithm is written once.  A user-defined algorithm subclasses :class:`Algorithm`; see
``docs`` and ``tests/algorithms/test_user_algorithm.py`` for a complete widest-path example.
"""

from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from ..errors import InvalidParameterError, InvalidWeightError, short_repr
from ..smx import relax_codes as _codes

__all__ = ["weight_sums", 
    "Algorithm",
    "LinearSystem",
    "MonotoneSystem",
    "HIndexSystem",
    "REQUIRED",
    "RELAX_OPS",
    "COMBINE_OPS",
    "check_probability",
    "check_bool",
    "check_weights",
]

REQUIRED = object()
"""Marker for a parameter without a default."""

RELAX_OPS = {"plus": _codes.PLUS, "min": _codes.MIN, "max": _codes.MAX, "times": _codes.TIMES,
             "first": _codes.FIRST}
"""Arc functions of monotone systems: candidate = op(x_u, a_e) (``first``: x_u); the values are the
kernels' codes, defined once in :mod:`digraph.smx.relax_codes`."""

COMBINE_OPS = {"min": 0, "max": 1}


@dataclass
class LinearSystem:
    """``x = b + A x``; ``A[v, u] = src_scale[u] * arc_scale[e] * dst_scale[v]`` summed over arcs
    e = (u→v).

    Parameters
    ----------
    b : float64 array (n)
        Constant term (the injected mass).
    src_scale, dst_scale : float64 array (n), optional
        Per-source and per-target factors (None = 1).
    arc_scale : float64 array (m), optional
        Per-arc factor in CSR order (None = 1).
    normalize : bool
        The answer is ``x / sum(x)`` (PageRank); the error bound is then on the normalised answer.
    dangling, dangling_scale : float64 array (n), optional
        A rank-one term: the system becomes ``x = b + A x + dangling · (dangling_scaleᵀ x)``,
        with ``dangling ≥ 0`` summing to 1 and ``dangling_scale ≥ 0`` (PageRank's
        ``dangling=``: α on the vertices without out-weight, 0 elsewhere, so their mass follows
        ``dangling`` instead of the teleport vector).  Only the power iteration runs it
        (``mode="power"``, :mod:`digraph.dispatch.engines.power.cpu`; the router refuses every
        other mode and the GPUs), and only with ``normalize=True``.  None (default): no such
        term.
    """

    b: np.ndarray
    src_scale: np.ndarray = None
    arc_scale: np.ndarray = None
    dst_scale: np.ndarray = None
    normalize: bool = False
    dangling: np.ndarray = None
    dangling_scale: np.ndarray = None
    family = "linear"
    b_constant = None
    """When not None, every entry of ``b`` equals it (engines may make ``b`` themselves)."""
    src_degree_scale = None
    """When not None, ``src_scale[u] = src_degree_scale / out_degree[u]`` (0 where the
    out-degree is 0), so a GPU can make it from the out-degrees it holds."""
    b_support = None
    """When not None, the increasing indices of ``b``'s non-zero entries (adsorption's seeds),
    so that no pass over ``b`` looks for them."""
    error_gammas = None
    """When not None, the (γ1, γ∞) every engine's error bound uses instead of summing this
    system's columns and rows itself: the system's own, once ``digraph.run`` has summed them, or
    those of a system rescaled by dual weights (:func:`digraph.dispatch.dual_bound.scaled_system`),
    whose residual bounds another system's error."""


class _Made:
    """A vector of a :class:`DegreeScaledSystem` made from its recipe on first read (a data
    descriptor, so the dataclass ``__init__`` and assignments go through it too)."""

    def __set_name__(self, owner, name):
        self.name, self.slot = name, "_" + name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        v = obj.__dict__.get(self.slot)
        if v is _LATER:
            v = obj.__dict__[self.slot] = getattr(obj, "_make_" + self.name)()
        return v

    def __set__(self, obj, value):
        obj.__dict__[self.slot] = value


_LATER = object()


class DegreeScaledSystem(LinearSystem):
    """``x = c·1 + A x`` with ``A[v, u] = s / out_degree[u]`` on an unweighted graph (PageRank
    without personalization): ``b`` and ``src_scale`` are given by :attr:`b_constant` and
    :attr:`src_degree_scale` and made as arrays only when an engine reads them.  A GPU run
    makes them on the device from the out-degrees it holds, so a PageRank run on R-MAT 2^25
    neither builds nor uploads 0.5 GB of vectors."""

    b = _Made()
    src_scale = _Made()

    def __init__(self, out_degree, b_constant, src_degree_scale, normalize=False, graph=None):
        self._out_degree = out_degree
        self._graph = graph
        self.b_constant = float(b_constant)
        self.src_degree_scale = float(src_degree_scale)
        super().__init__(b=_LATER, src_scale=_LATER, normalize=normalize)

    def _make_b(self):
        return np.full(self._out_degree.size, self.b_constant)

    def _make_src_scale(self):
        """``src_degree_scale / out_degree``; kept with ``graph`` when given (the same for every
        run with this scale), read-only."""
        def make():
            out = scaled_inverse(self._out_degree, self.src_degree_scale)
            out.setflags(write=False)
            return out
        if self._graph is None:
            return make()
        return self._graph._cached(("degree scale", self.src_degree_scale), make)


@dataclass
class MonotoneSystem:
    """Fixed point of ``x_v = combine(x_v, combine_{u→v} relax(x_u, a_e))`` from ``init``.

    Parameters
    ----------
    init : float64 array (n)
        Initial values (e.g. 0 at the source and +inf elsewhere for SSSP).
    relax : str
        One of :data:`RELAX_OPS`.
    combine : str
        ``"min"`` or ``"max"``.
    arc_value : float64 array (m), optional
        ``a_e`` in CSR order (None = 1 for every arc).
    frontier : int array, optional
        Initially active vertices (default: every vertex whose initial value is finite and not the
        combine's identity, i.e. can improve a neighbour).
    """

    init: np.ndarray
    relax: str
    combine: str
    arc_value: np.ndarray = None
    frontier: np.ndarray = None
    family = "monotone"

    def __post_init__(self):
        if self.relax not in RELAX_OPS:
            raise InvalidParameterError(
                f"relax must be one of {sorted(RELAX_OPS)}, got {self.relax!r}")
        if self.combine not in COMBINE_OPS:
            raise InvalidParameterError(f"combine must be 'min' or 'max', got {self.combine!r}")


@dataclass
class HIndexSystem:
    """Core numbers of the undirected multigraph whose edges are the arcs (self-loops dropped).

    Parameters
    ----------
    halve : bool
        Divide the answer by two (graphs from undirected sources store every edge twice).
    """

    halve: bool = False
    family = "hindex"


class Algorithm:
    """Base class of every algorithm, built-in or user-defined.

    Subclasses set :attr:`name`, :attr:`parameters` (name → default, :data:`REQUIRED` for none)
    and implement :meth:`prepare`; they may override :meth:`finalize` (map the fixed point to the
    answer), :attr:`default_tol` and :meth:`reference` (a slow, obviously right twin for tests).
    """

    name = "algorithm"
    parameters = {}
    value_dtype = np.float64
    default_tol = 1e-6
    default_max_iter = 10_000
    divides_by_sum = False
    """True when :meth:`finalize` is :func:`normalized` of the state and nothing else: an engine
    may then divide the state by its sum where it lives (the GPUs) and hand back a
    :class:`SumNormalized` array, which :func:`normalized` leaves as it is."""

    def bind(self, graph, params):
        """Check ``params`` against :attr:`parameters`, fill defaults; returns a dict."""
        unknown = sorted(set(params) - set(self.parameters))
        if unknown:
            accepted = ", ".join(sorted(self.parameters)) or "none"
            raise InvalidParameterError(
                f"{self.name}: unknown parameter(s) {', '.join(unknown)}; accepted: {accepted}")
        bound = {}
        for k, default in self.parameters.items():
            if k in params:
                bound[k] = params[k]
            elif default is REQUIRED:
                raise InvalidParameterError(f"{self.name}: parameter {k!r} is required")
            else:
                bound[k] = default
        return bound

    def prepare(self, graph, **params):
        """Return a system (:class:`LinearSystem`, :class:`MonotoneSystem`,
        :class:`HIndexSystem`)."""
        raise NotImplementedError

    def finalize(self, graph, x, **params):
        """Map the system's fixed point ``x`` to the answer (default: unchanged)."""
        return x

    def reference(self, graph, **params):
        """A slow, simple reference answer (scipy/networkx) aligned with ``graph.vertex_ids``."""
        raise NotImplementedError

    def __repr__(self):
        return f"<digraph algorithm {self.name}>"


# ---------------------------------------------------------------------------- shared validators

def check_probability(name, value, algo, open_interval=True):
    """``value`` as a float in (0, 1) (``[0, 1]`` when ``open_interval`` is False).

    Raises
    ------
    InvalidParameterError
        Naming ``algo``, ``name`` and the value: not a real number (text, a bool, None, ...), or
        outside the interval (NaN and infinities included).
    """
    interval = "(0, 1)" if open_interval else "[0, 1]"
    try:
        if isinstance(value, (bool, np.bool_, str, bytes)):
            raise TypeError
        v = float(value)
    except (TypeError, ValueError, OverflowError):
        raise InvalidParameterError(
            f"{algo}: {name} must be a number in {interval}, got {short_repr(value)}") from None
    if not (0.0 < v < 1.0) if open_interval else not (0.0 <= v <= 1.0):
        raise InvalidParameterError(
            f"{algo}: {name} must lie in {interval}, got {short_repr(value)}")
    return v


def check_bool(name, value, algo):
    """``value`` as a bool: ``True``, ``False`` or a ``numpy.bool_``, nothing else.

    Text such as ``"no"`` or ``"false"`` is truthy in Python; taken as a flag it would silently
    mean ``True``, so it is refused, as are numbers and None.

    Raises
    ------
    InvalidParameterError
        Naming ``algo``, ``name`` and the value.
    """
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise InvalidParameterError(f"{algo}: {name} must be True or False, got {short_repr(value)}")


def check_weights(graph, algo, *, allow_inf=False):
    """Arc weights (CSR order) after refusing negative (and, unless allowed, infinite) ones."""
    w = graph.arc_weights()
    if not graph.weighted:
        return w
    bad = np.flatnonzero(w < 0)
    if bad.size == 0 and not allow_inf:
        bad = np.flatnonzero(~np.isfinite(w))
    if bad.size:
        e = int(bad[0])
        u, v = (x.item() if isinstance(x, np.generic) else x  # 20, not np.int64(20)
                for x in (graph.vertex_ids[graph.arc_sources[e]],
                          graph.vertex_ids[graph.out_targets[e]]))
        raise InvalidWeightError(
            f"{algo}: arc {u!r} -> {v!r} has weight {float(w[e])!r}; {algo} needs non-negative"
            f"{'' if allow_inf else ', finite'} weights ({bad.size} such arc(s))")
    return w


def weight_sums(graph, w, by, algo, side):
    """Per-vertex sums of the arc weights ``w`` (``by``: each arc's source or target), refused
    with a clear error when a sum of finite weights exceeds what float64 holds (the vertex's
    arcs would otherwise count as weight 0: its mass lost, silently)."""
    sums = np.bincount(by, weights=w, minlength=graph.num_vertices)
    over = np.flatnonzero(np.isinf(sums))
    if over.size:
        v = graph.vertex_ids[over[0]]
        v = v.item() if isinstance(v, np.generic) else v
        raise InvalidWeightError(
            f"{algo}: the {side} weights of vertex {v!r} sum to more than float64 holds "
            f"({over.size} such vertex(es)); divide every weight by a constant ({algo}'s answer "
            "does not change)")
    return sums


def scaled_inverse(weights, scale):
    """``scale / weights[v]`` where ``weights[v] > 0``, 0 elsewhere (float64, one parallel pass).

    The per-vertex factor of PageRank (``α / W_out``) and adsorption (``β / W_in``), in one pass
    where the numpy form (a cast, a mask and a masked division) makes several over large graphs.
    Below :data:`SCALED_INVERSE_PARALLEL` entries the numpy form runs instead (the same
    values): a parallel region's start costs more there than the pass."""
    w = np.asarray(weights)
    if w.size < SCALED_INVERSE_PARALLEL:
        flat = w.ravel()
        out = np.zeros(w.size, np.float64)
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):  # as the Numba pass:
            np.divide(float(scale), flat, out=out, where=flat > 0)  # no warning; an inf from a
        return out  # denormal weight is reported by the system's own checks
    out = np.empty(w.size, np.float64)
    _scaled_inverse(w.ravel(), float(scale), out)
    return out


SCALED_INVERSE_PARALLEL = 1 << 16
"""Vectors of at least this many entries get :func:`scaled_inverse`'s parallel Numba pass,
smaller ones numpy's (the parallel pass's start-up outweighs its gain on small vectors; the
crossover lies between 10^4 and 10^5).  Measured: docs/history/docstring-measurements.md,
"digraph.algorithms.base.SCALED_INVERSE_PARALLEL"."""



@njit(parallel=True, cache=True)
def _scaled_inverse(w, scale, out):
    for i in prange(w.size):
        d = w[i]
        out[i] = scale / d if d > 0 else 0.0



PARALLEL_NORMALIZE = 1 << 20
"""Vectors of at least this many entries are normalised by :func:`normalized` in one parallel
Numba pass per step (smaller ones by numpy, whose rounding the tests' graphs keep)."""



class SumNormalized(np.ndarray):
    """A state an engine has already divided by its sum (or left as it is, the sum being <= 0),
    as :func:`normalized` would: see :attr:`Algorithm.divides_by_sum`."""


def normalized(x):
    """``x / Σx`` (``x`` itself when Σx <= 0), in place when ``x`` is a writeable float64 array;
    a :class:`SumNormalized` ``x`` is returned as a plain array, undivided.

    PageRank's final step; above :data:`PARALLEL_NORMALIZE` entries the sum and the division
    are parallel Numba loops (numpy's take one host thread; the GPU engines divide on the GPUs
    when asked).  Measured: docs/history/benchmarks-lab-notebook.md, "Four GPUs: ranges re-cut
    from measured kernel time, prefaulted host array, parallel finalize"."""

    if isinstance(x, SumNormalized):
        return x.view(np.ndarray)
    in_place = x.dtype == np.float64 and x.flags.writeable and x.flags.c_contiguous
    if in_place and x.size >= PARALLEL_NORMALIZE:
        s = _parallel_sum(x)
        if s > 0:
            _parallel_divide(x, s)
        return x
    s = x.sum()
    if s <= 0:
        return x
    if in_place:
        x /= s
        return x
    return x / s


@njit(parallel=True, cache=True)
def _parallel_sum(x):
    s = 0.0
    for i in prange(x.size):
        s += x[i]
    return s


@njit(parallel=True, cache=True)
def _parallel_divide(x, s):
    for i in prange(x.size):
        x[i] /= s
