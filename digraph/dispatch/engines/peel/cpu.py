"""k-core by peeling (``mode="peel"``, CPU): the core numbers in one peeling pass, exact, no
rounds to a fixed point.

Two schedules of the same peeling, both in :mod:`digraph.smx.cpu.peel`: Batagelj–Zaversnik's
bucket peeling (``"bz"``, one thread) and Kabir & Madduri's level-synchronous PKC (``"pkc"``,
threads with local buffers and atomic decrements).  :func:`solve` picks PKC from
:attr:`PeelSettings.pkc_threads` threads on and on graphs of :attr:`PeelSettings.pkc_min_arcs`
arcs or more, BZ otherwise (by measurement, PKC is ahead even on one thread, BZ on the smallest
graphs).  The h-index iteration (``"vertex-async"``, ``"bsp"``)
stays the k-core engine on GPUs.

Counters (docs/design.md §5), filled as for the other k-core modes:

* ``rounds`` — peeling levels: the distinct core values (the same for both schedules);
* ``vertex_updates`` — n: every vertex is peeled once and its core number written once;
* ``arc_updates`` — neighbour entries read: 2m, every arc from both of its ends (self-loops are
  read and skipped);
* ``peel`` — the schedule that ran, ``"bz"`` or ``"pkc"``; ``peel_scans`` — PKC's level scans
  (levels plus the empty scans that jumped to the least remaining degree; 0 for BZ).

``max_iter`` does not limit a peel: the pass always finishes and the answer is exact
(``converged=True``).
"""

from dataclasses import dataclass

import numba

from ...settings import current, register
from ....errors import InvalidParameterError
from ....smx.cpu import peel as K

__all__ = ["solve", "schedule", "PeelSettings", "DEFAULT", "SCHEDULES"]

SCHEDULES = ("bz", "pkc")


@dataclass(frozen=True)
class PeelSettings:
    """Which peeling schedule ``mode="peel"`` runs, and how.

    Measured: docs/history/benchmarks-notebook.md, "k-core: peeling against igraph's coreness"
    (its "BZ / PKC on 1 thread" column); the shared-machine measurements behind ``pkc_threads``
    are in docs/history/benchmarks-lab-notebook.md, "k-core: peeling".

    Attributes
    ----------
    pkc_threads : int
        PKC runs from this many threads on (on graphs of at least ``pkc_min_arcs`` arcs), BZ
        below.  1: PKC on *one* thread can already beat BZ, because a PKC decrement touches one
        counter where a BZ move touches four arrays at random places; raise it where a machine
        shows BZ ahead on one thread.  ``benchmarks/bench_kcore.py`` raises it above the threads
        to force BZ.
    pkc_min_arcs : int
        Below this many arcs BZ runs whatever the threads: a PKC level costs two parallel
        barriers whatever its work, which on the smallest graphs outweighs its gain.
    pkc_serial_tail : int
        PKC runs its last levels on one thread once at most this many vertices remain
        (:func:`~digraph.smx.cpu.peel.pkc_core`'s ``serial_tail``).  Off (0): the tails
        measured gave no consistent gain (docs/history/benchmarks-notebook.md, "k-core: peeling
        against igraph's coreness").
    """


    pkc_threads: int = 1
    pkc_min_arcs: int = 50_000
    pkc_serial_tail: int = 0


DEFAULT = register(PeelSettings())


def schedule(graph, threads=None, settings=None):
    """The schedule :func:`solve` runs on ``graph`` by default with ``threads`` (default: Numba's
    current thread count) and ``settings`` (a :class:`PeelSettings`, default :data:`DEFAULT`):
    ``"pkc"`` from ``pkc_threads`` threads and ``pkc_min_arcs`` arcs on, else ``"bz"``."""
    settings = current(DEFAULT) if settings is None else settings
    if threads is None:
        threads = numba.get_num_threads()
    return ("pkc" if threads >= settings.pkc_threads and graph.num_arcs >= settings.pkc_min_arcs
            else "bz")


def solve(graph, system, *, tol=None, max_iter=None, stats, peel=None, settings=None):
    """Peel the graph's undirected multigraph; returns (core numbers, True).

    Parameters
    ----------
    graph : digraph.Graph
    system : HIndexSystem
        Only the ``"hindex"`` family (k-core) can be peeled.
    tol, max_iter :
        Ignored: the peel is exact and always finishes.
    stats : RunStats
        Counters filled as the module docstring says.
    peel : {"bz", "pkc"}, optional
        Force a schedule (default: :func:`schedule`, PKC from ``settings.pkc_threads`` threads on
        and from ``settings.pkc_min_arcs`` arcs on, else BZ).
    settings : PeelSettings, optional
        Default :data:`DEFAULT`.

    Returns
    -------
    (int64 array, bool)
        The core numbers of the multigraph of the arcs (doubled for an undirected source;
        ``digraph.run`` halves them) and ``True``.

    Raises
    ------
    InvalidParameterError
        A system of another family, or an unknown ``peel``.
    """
    if system.family != "hindex":
        raise InvalidParameterError(
            f"mode='peel' peels k-cores (the hindex family), not the {system.family} family; use "
            "'scc', 'power', 'vertex-async' or 'bsp'")
    settings = current(DEFAULT) if settings is None else settings
    threads = numba.get_num_threads()
    if peel is None:
        peel = schedule(graph, threads, settings)
    if peel not in SCHEDULES:
        raise InvalidParameterError(f"peel must be one of {', '.join(SCHEDULES)}, got {peel!r}")
    core = K.peel_degrees(graph.out_offsets, graph.out_targets, graph.in_offsets)
    args = (graph.out_offsets, graph.out_targets, graph.in_offsets, graph.in_sources, core)
    if peel == "bz":
        levels, arcs = K.bz_core(*args)
        scans = 0
    else:
        levels, scans, arcs = K.pkc_core(*args, threads, settings.pkc_serial_tail)
    stats["peel"] = peel
    stats["peel_scans"] = int(scans)
    stats["rounds"] += int(levels)
    stats["vertex_updates"] += graph.num_vertices
    stats["arc_updates"] += int(arcs)
    return core, True
