"""Strongly connected components: iterative Tarjan in Numba, and the paper's two-phase parallel use.

:func:`tarjan_scc` labels the nodes of a CSR graph.  Labels are numbered in the order Tarjan's
algorithm completes the components, which is a *reverse topological* order of the condensation:
for every arc ``u -> v`` between two components, ``label[u] > label[v]``.

:func:`scc_two_phase` follows DiGraph section 3.2.1: the nodes are cut into ranges, each worker runs
Tarjan on the subgraph induced by its range (arcs inside the range only) and contracts its local
SCCs; Tarjan then runs once more over the graph of local SCCs (the arcs between different local
SCCs).  A local SCC is a subset of a global one, so the result equals one global Tarjan run; its
labels keep the reverse topological property.
"""

import numpy as np
from numba import njit

from ._parallel import run_parallel

__all__ = ["tarjan_scc", "scc_two_phase"]


@njit(cache=True, nogil=True)
def _tarjan_range(offsets, targets, lo, hi):
    """Tarjan on the subgraph induced by nodes lo..hi-1; returns (local labels, number of SCCs)."""
    nloc = hi - lo
    index = np.full(nloc, -1, dtype=np.int64)
    low = np.empty(nloc, dtype=np.int64)
    label = np.full(nloc, -1, dtype=np.int64)
    onstack = np.zeros(nloc, dtype=np.bool_)
    sstack = np.empty(nloc, dtype=np.int64)
    cstack = np.empty(nloc, dtype=np.int64)   # call stack: node
    cursor = np.empty(nloc, dtype=np.int64)   # next arc to look at per node
    sp = 0
    counter = 0
    ncomp = 0
    for r in range(nloc):
        if index[r] != -1:
            continue
        cp = 0
        cstack[0] = r
        index[r] = counter
        low[r] = counter
        counter += 1
        sstack[sp] = r
        sp += 1
        onstack[r] = True
        cursor[r] = offsets[lo + r]
        while cp >= 0:
            u = cstack[cp]
            end = offsets[lo + u + 1]
            descended = False
            while cursor[u] < end:
                w = targets[cursor[u]] - lo
                cursor[u] += 1
                if w < 0 or w >= nloc:
                    continue
                if index[w] == -1:
                    index[w] = counter
                    low[w] = counter
                    counter += 1
                    sstack[sp] = w
                    sp += 1
                    onstack[w] = True
                    cursor[w] = offsets[lo + w]
                    cp += 1
                    cstack[cp] = w
                    descended = True
                    break
                elif onstack[w]:
                    if index[w] < low[u]:
                        low[u] = index[w]
            if descended:
                continue
            # u is finished
            if low[u] == index[u]:
                while True:
                    sp -= 1
                    w = sstack[sp]
                    onstack[w] = False
                    label[w] = ncomp
                    if w == u:
                        break
                ncomp += 1
            cp -= 1
            if cp >= 0:
                parent = cstack[cp]
                if low[u] < low[parent]:
                    low[parent] = low[u]
    return label, ncomp


def tarjan_scc(offsets, targets, num_nodes=None):
    """SCC label of every node of the CSR graph (``offsets``, ``targets``), iterative Tarjan.

    Returns
    -------
    (labels int64 array, number of components); ``label[u] > label[v]`` for every arc ``u -> v``
    joining two components (reverse topological numbering).
    """
    n = offsets.size - 1 if num_nodes is None else int(num_nodes)
    return _tarjan_range(offsets, targets, np.int64(0), np.int64(n))


@njit(cache=True, nogil=True)
def _contract(offsets, targets, lab, ncomp):
    """CSR of the arcs between different components (duplicates kept)."""
    n = offsets.size - 1
    cnt = np.zeros(ncomp + 1, dtype=np.int64)
    for u in range(n):
        lu = lab[u]
        for k in range(offsets[u], offsets[u + 1]):
            if lab[targets[k]] != lu:
                cnt[lu + 1] += 1
    for c in range(ncomp):
        cnt[c + 1] += cnt[c]
    coff = cnt.copy()
    ctg = np.empty(coff[ncomp], dtype=np.int64)
    for u in range(n):
        lu = lab[u]
        for k in range(offsets[u], offsets[u + 1]):
            lv = lab[targets[k]]
            if lv != lu:
                ctg[cnt[lu]] = lv
                cnt[lu] += 1
    return coff, ctg


def scc_two_phase(offsets, targets, ranges, jobs=1):
    """SCCs by local Tarjan per node range (in parallel) and a global Tarjan over the local SCCs.

    Parameters
    ----------
    offsets, targets : CSR arrays of the graph (node ids 0..n-1).
    ranges : int64 array of range boundaries (first 0, last n).
    jobs : int

    Returns
    -------
    (labels int64 array, number of SCCs, number of local SCCs)
    """
    n = offsets.size - 1
    if n == 0:
        return np.zeros(0, np.int64), 0, 0
    tasks = [(offsets, targets, np.int64(ranges[i]), np.int64(ranges[i + 1])) for i in range(ranges.size - 1)]
    parts = run_parallel(_tarjan_range, tasks, jobs)
    if len(parts) == 1:
        return parts[0][0], int(parts[0][1]), int(parts[0][1])
    bases = np.cumsum([0] + [int(c) for _, c in parts])
    local = np.concatenate([lab + b for (lab, _), b in zip(parts, bases[:-1])])
    nlocal = int(bases[-1])
    coff, ctg = _contract(offsets, targets, local, np.int64(nlocal))
    glab, ng = _tarjan_range(coff, ctg, np.int64(0), np.int64(nlocal))
    return glab[local], int(ng), nlocal
