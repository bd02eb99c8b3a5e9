"""What a graph keeps on its GPUs between runs: one :class:`Residency` per
graph, made on first use and kept in one place on it (``graph._cache["cuda-residency"]``,
:func:`residency`), owns the device-resident entries of every GPU engine, by *kind* and key:

* ``"cuda"``: (device, sim) → the CSR/CSC dict (``runtime/cuda/device_graph.py``);
* ``"cuda-undirected"``: (device, sim) → k-core's undirected adjacency (``device_graph.py``);
* ``"cuda-peel"``: (device, sim) → the GPU peel's degrees and work arrays (``engines/peel/gpu.py``);
* ``"cuda-power-csr"``: (device,) → the cuSPARSE matrix (``engines/power/gpu_work.py``);
* ``"cuda-power-work"``: (device, sim, n, memory) → a power run's kept vectors (``power_work.py``);
* ``"cuda-power-bins"``: (device, sim, bins, blocks a SM) → in-degree classes (``power_setup.py``);
* ``"cuda-clusters"``: (device, sim, size) → the cluster layout (``engines/cluster/gpu.py``);
* ``"cuda-scc"``: (device, sim, heavy arcs, light size) → the SCC schedule (``engines/scc/gpu.py``);
* ``"cuda-proxies"``: (device, sim, least in-degree or None) → the path modes' proxy slots
  (``engines/path/gpu.py``);
* ``"cuda-path-work"``: (device, sim, units, rule, proxies, round scalars) → a path run's kept
  work and its CUDA graph (``engines/path/gpu_work.py``);
* ``"multi-gpu"``: (family, device, sim, v0, v1) → a shard's arrays (``runtime/cuda/shards.py``);
* ``"multi-gpu-layout"``: (order, ((device, sim, v0, v1) a shard), split) → a linear layout
  (``engines/push/gpus_layout.py``);
* ``"multi-gpu-power-work"``: None → the sharded power run's kept work
  (``engines/power/gpus_work.py``).

An entry is the object the engine made (a dict, a tuple, a work object), kept as it is: the
engines register its arrays with their backend themselves.  Dropping an entry
(:meth:`Residency.forget`) drops the residency's reference only; the device memory is freed when
nothing else holds the arrays (a backend's registered views hold them until its ``retain`` or
``release``).  Host-only state stays in ``graph._cache`` (shard boundaries, the balance learnt per
graph, heavy-vertex lists), and a :class:`~digraph.PathSet`'s walk arrays on the path set.
Nothing here imports an engine.
"""

import os

import numpy as np

__all__ = ["Residency", "residency", "KEY"]

KEY = "cuda-residency"
"""The one key of ``graph._cache`` the residency is kept under."""


class Residency:
    """A graph's device-resident entries: ``{kind: {key: entry}}``.

    ``get`` builds on first use and keeps, ``peek`` only looks, ``put`` keeps an entry made by the
    caller (one kept only when small, say), ``forget`` drops entries; ``kinds``, ``entries`` and
    ``nbytes`` tell what is kept.  Lookups from several host threads (one per GPU) are safe as
    the graph's dict was: an entry is built outside any lock, and two threads building the same
    key keep the last one built.
    """

    __slots__ = ("_kinds",)

    def __init__(self):
        self._kinds = {}

    def get(self, kind, key, build):
        """The entry ``(kind, key)``, made by ``build()`` and kept when absent (a ``None`` that
        ``build`` returns is not kept: it is asked again next time)."""
        got = self._kinds.get(kind)
        if got is not None:
            entry = got.get(key)
            if entry is not None:
                return entry
        entry = build()
        if entry is not None:
            self._kinds.setdefault(kind, {})[key] = entry
        return entry

    def peek(self, kind, key, default=None):
        """The entry ``(kind, key)``, or ``default`` (nothing is built)."""
        got = self._kinds.get(kind)
        return default if got is None else got.get(key, default)

    def put(self, kind, key, entry):
        """Keep ``entry`` as ``(kind, key)`` (replacing what was there); returns it."""
        self._kinds.setdefault(kind, {})[key] = entry
        return entry

    def forget(self, kind=None, where=None):
        """Drop the entries of ``kind`` (every kind when None) whose key satisfies ``where``
        (every key when None); returns how many were dropped."""
        dropped = 0
        for k in ([kind] if kind is not None else list(self._kinds)):
            got = self._kinds.get(k)
            if got is None:
                continue
            for key in list(got):
                if where is None or where(key):
                    if got.pop(key, None) is not None:
                        dropped += 1
        return dropped  # a kind's dict stays, emptied: a thread may be putting into it

    def kinds(self):
        """The kinds that hold an entry, sorted."""
        return sorted(k for k, got in self._kinds.items() if got)

    def entries(self, kind=None):
        """``[(kind, key, entry)]`` of ``kind`` (every kind when None)."""
        return [(k, key, entry) for k, got in list(self._kinds.items())
                if kind is None or k == kind for key, entry in list(got.items())]

    def nbytes(self, kind=None, host=None):
        """Bytes of the arrays found in the entries of ``kind`` (every kind when None): device
        arrays (``__cuda_array_interface__``), and numpy arrays when ``host`` (default: under
        Numba's CUDA simulator, ``NUMBA_ENABLE_CUDASIM=1``, whose device arrays are numpy).
        Arrays are found in dicts, lists and tuples (not inside other objects: a cuSPARSE
        matrix's or SpMV's own buffers are not counted); a view counts as the array it views, and
        an array reached twice counts once."""
        if host is None:
            host = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") == "1"
        seen, walked = {}, set()
        stack = [entry for _, _, entry in self.entries(kind)]
        while stack:
            v = stack.pop()
            if isinstance(v, (dict, list, tuple)):
                if id(v) not in walked:
                    walked.add(id(v))
                    stack.extend(v.values() if isinstance(v, dict) else v)
            elif hasattr(v, "__cuda_array_interface__") or host and isinstance(v, np.ndarray):
                while getattr(v, "base", None) is not None and hasattr(v.base, "nbytes") and \
                        (hasattr(v.base, "__cuda_array_interface__")
                         or isinstance(v.base, np.ndarray)):
                    v = v.base
                seen[id(v)] = v
        return sum(int(a.nbytes) for a in seen.values())

    def __len__(self):
        return sum(len(got) for got in self._kinds.values())

    def __repr__(self):
        return (f"Residency({len(self)} entries: "
                + ", ".join(f"{k} ×{len(self._kinds[k])}" for k in self.kinds()) + ")")


def residency(graph, create=True):
    """The graph's :class:`Residency` (kept as ``graph._cache["cuda-residency"]``), made on first
    use; None when it has none and ``create`` is False."""
    cache = graph._cache
    got = cache.get(KEY)
    if got is None and create:
        got = cache.setdefault(KEY, Residency())
    return got


def peek(graph, kind, key, default=None):
    """``residency(graph).peek(kind, key, default)``, without making a residency for the graph."""
    got = residency(graph, create=False)
    return default if got is None else got.peek(kind, key, default)
