"""The GPU path modes' work kept between runs, and their rounds launched as CUDA graphs
(:mod:`digraph.dispatch.engines.path.gpu` runs them).

A run's device arrays (its :class:`~digraph.dispatch.engines.push.gpu_linear._Linear`, the arcs'
coefficients in path order, the state ``x``, the arcs' mirrors ``s``, the units' counts and
scores, the rounds' control words and counters) stay on the graph for the next run on the same
GPU, PathSet, units and system vectors, in its
:class:`~digraph.dispatch.runtime.cuda.residency.Residency` (kind ``"cuda-path-work"``, an entry
a GPU and key: units, priority rule, the scalars a round reads; a run with another PathSet drops
this GPU's others; :func:`~digraph.dispatch.engines.scc.gpu_work.kept_work` decides), when they
take at most
:attr:`~digraph.dispatch.engines.power.gpu_settings.PowerGpuSettings.keep_work_bytes`.  The
next run only resets them, finds its launches prepared (the engine
:meth:`~digraph.dispatch.runtime.cuda.backend._Backend.retain` s them as ``"path"``) and
replays the CUDA graph of ``rounds_per_check`` rounds captured by an earlier run: one launch
from the host every ``rounds_per_check`` rounds instead of two a round, each of 20-odd arrays
(a launch's host time is comparable to a walk on a small graph).  Measured:
docs/history/benchmarks-notebook.md, "Rounds queued on the device".  A system with arc
factors, or vectors that are neither recipes nor arrays
(:func:`~digraph.dispatch.runtime.cuda.common._vector_key`), is made again every run.
"""


import weakref

from ..scc import gpu_work as scc_work
from ..power.gpu_work import KEPT_GRAPHS, graph_round

__all__ = ["KIND", "work_arrays", "work_bytes", "rounds_graph", "replay", "reset"]

KIND = "cuda-path-work"
"""The residency kind of a path run's kept work
(:func:`~digraph.dispatch.engines.scc.gpu_work.kept_work`, the PathSet its owner: a run with
another PathSet drops this GPU's others)."""


def work_bytes(n, m, units):
    """An upper bound of a work's bytes: the arcs' coefficients and mirrors, six float64 vectors
    of the vertices (the system's three, ``b``, the certificate's residual, ``x``) and five
    words a unit."""
    return 16 * int(m) + 48 * int(n) + 40 * int(units) + 4096


def work_arrays(w):
    """The device arrays a work holds, its :class:`_Linear`'s and graph's included."""
    out = scc_work.work_arrays(w)
    Q = w["Q"]
    out += [Q.ctl, Q.fctl, Q.layer_any, Q.layer_rounds, Q.unit_total, Q.hist]
    return out


def rounds_graph(be, w):
    """The CUDA-graph state of a kept work (``{"stream", "graphs", "primed"}``, as
    :func:`~digraph.dispatch.engines.power.gpu_work._graphs` makes it, and dropped at exit with
    those), made once."""
    cg = w.get("cuda_graphs")
    if cg is None:
        cg = w["cuda_graphs"] = {"stream": be.xp.cuda.Stream(non_blocking=True), "graphs": {},
                                 "primed": set()}
        KEPT_GRAPHS.append(weakref.ref(w))
    return cg


def replay(cg, rounds, stats):
    """``rounds(stream)`` (the launches of ``rounds_per_check`` rounds on ``cg["stream"]``)
    through its CUDA graph (:func:`~digraph.dispatch.engines.power.gpu_work.graph_round`: queued
    plainly the first time, captured the second, replayed from then on;
    ``stats["path_graph_launches"]``, ``["path_graph_failed"]``)."""
    graph_round(cg, "rounds", lambda: rounds(cg["stream"]), stats, "path")


def reset(w, rule):
    """A kept work's state made that of a fresh run (``x`` is set by the caller)."""
    w["s"].fill(0.0)
    w["unit_sent"].fill(0)
    w["unit_pend"].fill(0.0)
    if rule == 2:
        w["score"].fill(0.0)
    w["Q"].unit_total.fill(0)
    w["Q"].layer_rounds.fill(0)
    return w
