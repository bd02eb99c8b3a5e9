"""The corpus by class: the graphs every default is measured on (``bench_cpu.py --classes``).

This module imports neither digraph nor Numba, so that :mod:`tables` reads it too.
"""

import os
from pathlib import Path

FETCHED = Path(os.environ.get("DIGRAPH_FETCHED") or Path(__file__).resolve().parent / "datasets")
"""Where ``fetch_datasets.py`` puts the graphs it fetches (ignored by git; ``$DIGRAPH_FETCHED``
moves it) and where :func:`graphs.load` looks after ``$DIGRAPH_DATASETS``."""

CLASSES = {
    "web": ["cnr-2000"],
    "social": ["soc-Slashdot0902", "soc-Epinions1", "wiki-Vote"],
    "collaboration": ["dblp-2010"],
    "citation": ["cit-HepPh"],
    "peer-to-peer": ["p2p-Gnutella25"],
    "road": ["grid700", "geo200000"],
    "rmat": ["rmat20"],
    "kronecker": ["kron18"],
}
"""Class → graph names of :mod:`graphs`.  Web: a crawl with a giant SCC and a deep DAG around it;
social: high reciprocity, one giant SCC (``benchmarks/fetch_datasets.py`` fetches the two SNAP
graphs); collaboration: every arc reciprocated; citation: nearly a DAG; peer-to-peer: sparse, small
SCCs; road: planar-like, long diameters (generated); R-MAT: Graph500's skew, directed; Kronecker:
Graph500's undirected graph of that skew (every arc reciprocated)."""


def class_of(name):
    """The class of a graph of :data:`CLASSES`, else None."""
    return next((c for c, names in CLASSES.items() if name in names), None)


def graphs_of(classes):
    """The graphs of ``classes`` (names of :data:`CLASSES`; ``["all"]``: every class), in order.

    Raises
    ------
    KeyError
        A class that is not in :data:`CLASSES` (named in the message).
    """
    names = list(CLASSES) if list(classes) == ["all"] else list(classes)
    unknown = [c for c in names if c not in CLASSES]
    if unknown:
        raise KeyError(f"unknown class(es) {', '.join(unknown)}; classes: {', '.join(CLASSES)}")
    return [g for c in names for g in CLASSES[c]]
