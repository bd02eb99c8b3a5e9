"""The GPU SCC engine's work kept between runs, as ``power`` keeps its
(:mod:`digraph.dispatch.engines.scc.gpu` runs it).

A run's device arrays (the system's vectors in the condensation's order, the state ``x``, the
heavy rounds' residual ``r``, the queue, the predecessor counts, the control words, the counters,
the sweeps a component took and the answer in the graph's order) and its :class:`_Linear` (the
system on the device with its contraction factors ``γ``, the certificate's residual) stay on the
graph for the next run on the same GPU, schedule and system vectors, in the graph's
:class:`~digraph.dispatch.runtime.cuda.residency.Residency` (kind ``"cuda-scc-work"``), when
they take at most
:attr:`~digraph.dispatch.engines.power.gpu_settings.PowerGpuSettings.keep_work_bytes`.  The next
run then only resets them, and its launches find the arrays they were prepared for (the engine
:meth:`~digraph.dispatch.runtime.cuda.backend._Backend.retain` s them as ``"scc"``).

What identifies the system's vectors is :func:`~digraph.dispatch.runtime.cuda.common.vector_key`
(recipes by value, arrays by identity); a system with arc factors, or vectors that
are neither, is made again every run.  Measured: docs/history/benchmarks-notebook.md, "PageRank
by components on one GPU".
"""

import weakref

from ...runtime.cuda.residency import residency
from ...runtime.cuda.common import same_vectors, stored_key, vector_key

__all__ = ["kept_work", "work_arrays", "work_bytes", "reset"]

_KIND = "cuda-scc-work"


def _key(system):
    """What besides the vectors makes a kept work usable: the arc factors' absence, the error's
    factors given by dual weights, the normalisation."""
    g = getattr(system, "error_gammas", None)
    return (system.arc_scale is None, None if g is None else tuple(float(v) for v in g),
            bool(system.normalize))


def kept_work(be, graph, system, key, nbytes, limit, make, kind=_KIND, owner=None):
    """(the work dict for ``key`` (device, schedule), reused, kept): the one the last run kept for
    the same ``system`` vectors, else ``make()``, kept for the next run when it takes at most
    ``limit`` bytes (``nbytes``) and the system's vectors can be recognised.

    ``kind``: the residency kind (the GPU path modes keep theirs as ``"cuda-path-work"``).
    ``owner``: an object the work is made for, held weakly (a path run's PathSet): the work is
    reused only for it, and a work made for another drops every work of ``kind`` kept on the
    same device (``key[:2]``) for an owner other than this one."""
    vkey = vector_key(system)
    res = residency(graph)
    rec = res.peek(kind, key)
    if rec is not None and vkey is not None and rec["key"] == _key(system) and \
            same_vectors(rec["vkey"], vkey) and (owner is None or rec["owner"]() is owner):
        be.keep_all(rec["work"])
        return rec["work"], True, True

    def stale(k):  # this key's, and (with an owner) another owner's on this device
        if k == key:
            return True
        if owner is None or k[:2] != key[:2]:
            return False
        other = res.peek(kind, k)
        return other is None or other["owner"]() is not owner
    res.forget(kind, where=stale)
    w = make()
    kept = vkey is not None and system.arc_scale is None and nbytes <= limit
    if kept:
        res.put(kind, key, {"vkey": stored_key(vkey), "key": _key(system), "work": w,
                            "owner": None if owner is None else weakref.ref(owner)})
    return w, False, kept


def work_arrays(w):
    """The device arrays a kept work holds, its :class:`_Linear`'s and graph's included (what the
    engine retains for its prepared launches)."""
    out = [v for v in w.values() if hasattr(v, "__cuda_array_interface__")]
    L = w.get("L")
    if L is not None:
        out += [a for a in (L.src_scale, L.dst_scale, L.arc, L.in_coef, L.b, L.r, L.norms)
                if hasattr(a, "__cuda_array_interface__")]
        out += [a for a in L.g.values() if hasattr(a, "__cuda_array_interface__")]
    return out


def work_bytes(n, components):
    """An upper bound of a kept work's bytes: sixteen float64 vectors of the vertices (the
    system's three and the certificate's residual in :class:`_Linear`, ``vscale``, ``b``, ``x``,
    ``r``, the answer, a spare; the Anderson rounds' steps ``dpos`` and five rows of history)
    and the queue, counts and sweeps of the components."""
    return 128 * int(n) + 16 * int(components) + 4096


def reset(w, xp):
    """A kept work's state made that of a fresh run: ``x`` and ``r`` zero, the queue and the
    predecessor counts as scheduled, the control words (the heavy groups' too, and their grid
    barriers' counters and the Anderson rounds' sums) as at the start, the counters zero."""
    w["x"].fill(0.0)
    w["r"].fill(0.0)
    w["queue"][...] = w["queue0"]
    w["pending"][...] = w["pending0"]
    w["ctl"][...] = w["ctl0"]
    w["cnt"].fill(0)
    w["comp_sweeps"].fill(0)
    w["ctlh"].fill(0.0)
    w["sums"].fill(0.0)
    w["bar"].fill(0)
    return w

