"""The in-memory directed graph: dense renumbering, CSR (out-arcs) and CSC (in-arcs).

A :class:`Graph` holds ``n`` vertices numbered ``0..n-1`` internally and ``m`` arcs.  Arcs are
stored once, sorted by (source, target) in CSR order; the CSC view lists, for every vertex, the
CSR indices of its in-arcs (``in_arcs``), so per-arc data (weights, coefficients, mirror state) is
kept in one array and read through either view.  ``vertex_ids[i]`` is the caller's id of internal
vertex ``i``; results are reported against those ids.

All construction is O(n + m) numpy/Numba work (two stable counting sorts), never a Python loop over
arcs.
"""

import hashlib

import numpy as np
from numba import njit

from .errors import InvalidParameterError, InvalidWeightError, VertexNotFoundError
from .interrupts import check as _check_interrupt, deferring

__all__ = ["Graph"]


@njit(cache=True, nogil=True)
def _counting_sort(keys, num_keys, order_in):
    """Stable counting sort of ``order_in`` by ``keys[order_in]``; returns (order, offsets)."""
    counts = np.zeros(num_keys + 1, dtype=np.int64)
    for i in range(order_in.size):
        counts[keys[order_in[i]] + 1] += 1
    for k in range(num_keys):
        counts[k + 1] += counts[k]
    offsets = counts.copy()
    order = np.empty(order_in.size, dtype=np.int64)
    for i in range(order_in.size):
        e = order_in[i]
        k = keys[e]
        order[counts[k]] = e
        counts[k] += 1
    return order, offsets


@njit(cache=True, nogil=True)
def _csr_order(src, dst, n):
    """Arc permutation sorting by (src, dst), CSR offsets, and the CSC offsets/arc list."""
    ident = np.arange(src.size, dtype=np.int64)
    by_dst, in_offsets = _counting_sort(dst, n, ident)
    order, out_offsets = _counting_sort(src, n, by_dst)
    # CSC over CSR arc indices: walk CSR order and bucket by target; stable, so the in-arcs of a
    # vertex are listed by increasing source.
    counts = in_offsets[:-1].copy()
    in_arcs = np.empty(src.size, dtype=np.int64)
    for e in range(order.size):
        v = dst[order[e]]
        in_arcs[counts[v]] = e
        counts[v] += 1
    return order, out_offsets, in_offsets, in_arcs


NUMPY_ARCS = 1 << 16
"""Graphs of fewer arcs are built by numpy where a kernel would serve larger ones (the CSR order
here, :func:`_csr_order_numpy`; the condensation's sorts and arc split,
:mod:`digraph.paths.condensation`): as fast there, and a first run with an empty Numba cache
compiles none of those kernels."""


def _csr_order_numpy(src, dst, n):
    """:func:`_csr_order` by numpy's stable sorts: the same permutation and offsets."""
    order = np.lexsort((dst, src)).astype(np.int64)  # by source, then target, then arc index
    out_offsets = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=out_offsets[1:])
    in_offsets = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(dst, minlength=n), out=in_offsets[1:])
    in_arcs = np.argsort(dst[order], kind="stable").astype(np.int64)
    return order, out_offsets, in_offsets, in_arcs


def warm_up():
    """Compile (or load from Numba's cache) the CSR builder that graphs of
    :data:`NUMPY_ARCS` arcs or more use (:func:`digraph.warmup`)."""
    a = np.array([0, 1, 2], np.int32)
    _csr_order(a, a[::-1].copy(), 3)


def _index_dtype(n):
    return np.int32 if n < 2**31 - 1 else np.int64


class Graph:
    """A directed graph with dense internal vertex numbering and CSR/CSC adjacency.

    Build one with :func:`digraph.load` (files, networkx graphs, arrays, scipy matrices) or
    :meth:`Graph.from_arrays`.

    Attributes
    ----------
    num_vertices, num_arcs : int
    vertex_ids : numpy.ndarray
        Original id of each internal vertex: int64, or an object array (networkx nodes; the
        ``str`` names of an edge list whose ids are not integers).
    out_offsets : int64 array (n+1)
        CSR offsets: the out-arcs of ``v`` are ``out_offsets[v]:out_offsets[v+1]``.
    out_targets : int32/int64 array (m)
        Target of each arc, in CSR order.  ``arc_sources`` gives the source of each arc.
    weights : float64 array (m) or None
        Arc weights in CSR order; None when the input had none (every weight is then 1).
    in_offsets : int64 array (n+1)
        CSC offsets: the in-arcs of ``v`` are ``in_arcs[in_offsets[v]:in_offsets[v+1]]``.
    in_arcs : int64 array (m)
        CSR index of each in-arc, in CSC order (sources ascending per target).
    directed : bool
        False when the graph came from an undirected source (networkx ``Graph``, symmetric Matrix
        Market); every edge is then stored as two arcs (a self-loop once).
    name : str or None
    """

    def __init__(self, *, num_vertices, out_offsets, out_targets, in_offsets, in_arcs, weights=None,
                 vertex_ids=None, directed=True, name=None):
        self.num_vertices = int(num_vertices)
        self.out_offsets = out_offsets
        self.out_targets = out_targets
        self.in_offsets = in_offsets
        self.in_arcs = in_arcs
        self.weights = weights
        self.directed = bool(directed)
        self.name = name
        if vertex_ids is None:
            vertex_ids = np.arange(self.num_vertices, dtype=np.int64)
        self.vertex_ids = vertex_ids
        self._cache = {}

    # ------------------------------------------------------------------ construction
    @classmethod
    @deferring
    def from_arrays(cls, src, dst, weight=None, *, num_vertices=None, vertex_ids=None,
                    directed=True, name=None):
        """Build a graph from arc arrays.

        Parameters
        ----------
        src, dst : array_like of int
            Source and target of each arc, as the caller's vertex ids.
        weight : array_like of float, optional
            Arc weights (NaN refused).  None: unweighted (every weight 1).
        num_vertices : int, optional
            Keep the vertices ``0..num_vertices-1`` (isolated ones included); every id must be in
            that range.  Without it, the ids that occur are renumbered densely in increasing order.
        vertex_ids : array_like, optional
            When ``src``/``dst`` are already internal indices ``0..n-1``: the original id of each
            (used by the networkx reader).  Implies ``num_vertices = len(vertex_ids)``.
        directed : bool
            False marks a graph built from undirected edges already expanded to both directions.
        name : str, optional

        Raises
        ------
        InvalidParameterError
            Arrays of different lengths, non-integer ids, an id outside the int64 range (unsigned
            ids of 2**63 and above are refused, never wrapped) or outside ``num_vertices``.
        InvalidWeightError
            A NaN weight.
        """
        src = np.asarray(src)
        dst = np.asarray(dst)
        if src.ndim != 1 or dst.ndim != 1 or src.shape != dst.shape:
            raise InvalidParameterError(
                f"src and dst must be 1-d arrays of equal length "
                f"(got shapes {src.shape} and {dst.shape})")
        for a, nm in ((src, "src"), (dst, "dst")):
            if a.size and not np.issubdtype(a.dtype, np.integer):
                if (np.issubdtype(a.dtype, np.floating) and np.all(np.isfinite(a))
                        and np.all(a == np.floor(a))):
                    out = np.flatnonzero((a < -2.0**63) | (a >= 2.0**63))
                    if out.size:
                        raise InvalidParameterError(f"{nm}[{out[0]}] = {a[out[0]]!r} is outside "
                                                    "the int64 range of vertex ids")
                    continue
                raise InvalidParameterError(f"{nm} must hold integer vertex ids "
                                            f"(got dtype {a.dtype})")
            if a.size and a.dtype.kind == "u" and a.dtype.itemsize == 8:
                out = np.flatnonzero(a >= np.uint64(2**63))
                if out.size:  # would wrap to a negative id
                    raise InvalidParameterError(f"{nm}[{out[0]}] = {int(a[out[0]])} is outside "
                                                "the int64 range of vertex ids (2**63 and above)")
        src = src.astype(np.int64, copy=False)
        dst = dst.astype(np.int64, copy=False)
        if weight is not None:
            weight = np.asarray(weight, dtype=np.float64)
            if weight.shape != src.shape:
                raise InvalidParameterError(
                    f"weight must have one entry per arc ({src.size}), got shape {weight.shape}")
            bad = np.flatnonzero(np.isnan(weight))
            if bad.size:
                e = bad[0]
                raise InvalidWeightError(f"arc {src[e]} -> {dst[e]} has a NaN weight")
        if vertex_ids is not None:
            vertex_ids = (np.asarray(vertex_ids) if not isinstance(vertex_ids, np.ndarray)
                          else vertex_ids)
            num_vertices = len(vertex_ids)
        if num_vertices is not None:
            n = int(num_vertices)
            if n < 0:
                raise InvalidParameterError(f"num_vertices must be >= 0, got {num_vertices}")
            from .memory import check_vertices
            check_vertices(n, "num_vertices")
            for a in (src, dst):
                bad = np.flatnonzero((a < 0) | (a >= n))
                if bad.size:
                    raise InvalidParameterError(
                        f"vertex id {a[bad[0]]} (arc {bad[0]}) is outside 0..{n - 1} "
                        f"given by num_vertices={n}")
            s, d = src, dst
            if vertex_ids is None:
                vertex_ids = np.arange(n, dtype=np.int64)
        else:
            vertex_ids, s, d = _renumber(src, dst)
            n = vertex_ids.size
        _check_interrupt()
        itype = _index_dtype(n)
        s = s.astype(itype, copy=False)
        d = d.astype(itype, copy=False)
        csr = _csr_order_numpy if s.size < NUMPY_ARCS else _csr_order
        order, out_offsets, in_offsets, in_arcs = csr(s, d, n)
        return cls(num_vertices=n, out_offsets=out_offsets, out_targets=d[order],
                   in_offsets=in_offsets, in_arcs=in_arcs,
                   weights=None if weight is None else weight[order],
                   vertex_ids=vertex_ids, directed=directed, name=name)

    # ------------------------------------------------------------------ views
    @property
    def num_arcs(self):
        return int(self.out_targets.size)

    @property
    def weighted(self):
        """True when the graph carries arc weights."""
        return self.weights is not None

    def _cached(self, key, make):
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    @property
    def out_degree(self):
        """Number of out-arcs of each vertex (int64, parallel arcs and self-loops counted)."""
        return self._cached("out_degree", lambda: np.diff(self.out_offsets))

    @property
    def in_degree(self):
        """Number of in-arcs of each vertex (int64)."""
        return self._cached("in_degree", lambda: np.diff(self.in_offsets))

    @property
    def arc_sources(self):
        """Source of each arc in CSR order."""
        return self._cached("arc_sources", lambda: np.repeat(
            np.arange(self.num_vertices, dtype=self.out_targets.dtype), self.out_degree))

    @property
    def in_sources(self):
        """Source of each in-arc in CSC order (``arc_sources[in_arcs]``)."""
        return self._cached("in_sources", lambda: self.arc_sources[self.in_arcs])

    def arc_weights(self):
        """Arc weights in CSR order (ones when the graph is unweighted)."""
        if self.weights is not None:
            return self.weights
        return self._cached("ones", lambda: np.ones(self.num_arcs, dtype=np.float64))

    def fingerprint(self):
        """A hex digest of the structure and weights, for checking that a cache fits this graph."""
        def make():
            h = hashlib.blake2b(digest_size=16)
            h.update(np.array([self.num_vertices, self.num_arcs, int(self.directed)],
                              np.int64).tobytes())
            h.update(np.ascontiguousarray(self.out_offsets).tobytes())
            h.update(np.ascontiguousarray(self.out_targets).tobytes())
            if self.weights is not None:
                h.update(np.ascontiguousarray(self.weights).tobytes())
            return h.hexdigest()
        return self._cached("fingerprint", make)

    # ------------------------------------------------------------------ id mapping
    def index_of(self, ids, what="vertex"):
        """Internal indices of the caller's vertex ids.

        Parameters
        ----------
        ids : scalar or sequence
            Original vertex ids.
        what : str
            Word used in the error message ("source", "seed", ...).

        Returns
        -------
        int or numpy.ndarray of int64

        Raises
        ------
        VertexNotFoundError
            Naming the first id that is not a vertex (and, for an integer in a graph of vertex
            names or a text in a graph of integer ids that names a vertex in the other kind,
            which one it names).
        """
        scalar = np.ndim(ids) == 0 and not isinstance(ids, (list, tuple))
        seq = [ids] if scalar else list(ids)
        vid = self.vertex_ids
        if vid.dtype == object:
            lookup = self._cached("id_dict", lambda: {v: i for i, v in enumerate(vid.tolist())})
            out = np.empty(len(seq), dtype=np.int64)
            for k, x in enumerate(seq):  # caller-sized list, not arcs
                if x not in lookup:
                    raise self._not_found(x, what, lookup)
                out[k] = lookup[x]
        else:
            arr = np.asarray(seq)
            if arr.size and not (np.issubdtype(arr.dtype, np.integer)
                                 or np.issubdtype(arr.dtype, np.floating)):
                bad = next((x for x in seq if isinstance(x, (str, bytes, np.str_, np.bytes_))
                            or not np.isscalar(x)), seq[0])
                raise self._not_found(bad, what, None)
            # vertex_ids are sorted after renumbering, but not always (networkx node order)
            sorter = self._cached("id_sorter", lambda: None if np.all(vid[:-1] < vid[1:])
                                  else np.argsort(vid, kind="stable"))
            pos = (np.searchsorted(vid, arr, sorter=sorter) if vid.size
                   else np.zeros(arr.size, np.int64))
            out = np.minimum(pos, max(vid.size - 1, 0))
            if sorter is not None:
                out = sorter[out]
            ok = (pos < vid.size) & (vid[out] == arr) if vid.size else np.zeros(arr.size, bool)
            if not np.all(ok):
                raise VertexNotFoundError(seq[int(np.flatnonzero(~ok)[0])], what)
            out = out.astype(np.int64)
        return int(out[0]) if scalar else out

    def _not_found(self, x, what, lookup):
        """The VertexNotFoundError of ``x``, saying so when ``x`` names a vertex in the other
        kind of id: an integer for a graph of vertex names (``5`` for ``'5'``), or text for a
        graph of integer ids (``'5'`` for ``5``)."""
        err = VertexNotFoundError(x, what)
        hint = ""
        if lookup is not None and isinstance(x, (int, np.integer)) and not isinstance(x, bool) \
                and str(x) in lookup:
            hint = f" (the graph's vertex ids are names, str: {str(x)!r} is one)"
        elif lookup is None and isinstance(x, (str, np.str_)):
            try:
                k = int(x.strip())
            except ValueError:
                k = None
            if k is not None and self.vertex_ids.size and -2**63 <= k < 2**63 and \
                    np.any(self.vertex_ids == k):
                hint = f" (the graph's vertex ids are integers: {k} is one)"
        if hint:
            err.args = (err.args[0] + hint,)
        return err

    # ------------------------------------------------------------------ conversions
    def to_networkx(self):
        """A ``networkx.MultiDiGraph`` with the original ids (and a ``weight`` attribute if
        weighted)."""
        import networkx as nx
        g = nx.MultiDiGraph()
        g.add_nodes_from(self.vertex_ids.tolist())
        s = self.vertex_ids[self.arc_sources].tolist()
        t = self.vertex_ids[self.out_targets].tolist()
        if self.weights is None:
            g.add_edges_from(zip(s, t))
        else:
            g.add_weighted_edges_from(zip(s, t, self.weights.tolist()))
        return g

    def to_scipy(self, weights=True):
        """The adjacency matrix as ``scipy.sparse.csr_array`` (row = source; parallel arcs
        summed)."""
        import scipy.sparse as sp
        data = self.arc_weights() if weights else np.ones(self.num_arcs)
        # copies: scipy may share the index arrays, and sum_duplicates() rewrites them in place
        a = sp.csr_array((data.copy(), self.out_targets.copy(), self.out_offsets.copy()),
                         shape=(self.num_vertices, self.num_vertices))
        a.sum_duplicates()
        return a

    def __repr__(self):
        kind = "weighted" if self.weighted else "unweighted"
        nm = f" {self.name!r}" if self.name else ""
        return f"<digraph.Graph{nm}: {self.num_vertices} vertices, {self.num_arcs} arcs, {kind}>"


def _renumber(src, dst):
    """Dense renumbering of the ids that occur; returns (sorted ids, src index, dst index)."""
    if src.size == 0:
        return np.zeros(0, np.int64), src, dst
    lo = min(src.min(), dst.min())
    hi = max(src.max(), dst.max())
    if lo >= 0 and hi < 4 * src.size + (1 << 20):
        present = np.zeros(hi + 1, dtype=bool)
        present[src] = True
        present[dst] = True
        ids = np.flatnonzero(present)
        if ids.size == hi + 1:  # already 0..n-1
            return ids.astype(np.int64), src, dst
        index = np.full(hi + 1, -1, dtype=np.int64)
        index[ids] = np.arange(ids.size)
        return ids.astype(np.int64), index[src], index[dst]
    ids, inv = np.unique(np.concatenate([src, dst]), return_inverse=True)
    inv = inv.reshape(-1)
    return ids, inv[:src.size], inv[src.size:]
