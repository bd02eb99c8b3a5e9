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

from ._parallel import run_parallel, workspace_or_numpy

__all__ = ["tarjan_scc", "scc_two_phase"]


@njit(cache=True, nogil=True)
def _tarjan_range(offsets, targets, eoffsets, etargets, lo, hi, label):
    """Tarjan on the subgraph induced by nodes lo..hi-1 of the union of two CSR graphs
    (``eoffsets``, ``etargets``: extra arcs, taken after each node's arcs of the first); writes the
    local labels into ``label[0:hi-lo]`` and returns the number of SCCs.  Scratch is int32 when
    ``label`` is."""
    nloc = hi - lo
    it = label.dtype
    return _tarjan_scan(offsets, targets, eoffsets, etargets, lo, hi, label,
                        np.empty(nloc, dtype=it), np.empty(nloc, dtype=it),
                        np.empty(nloc, dtype=np.bool_), np.empty(nloc, dtype=it),
                        np.empty(nloc, dtype=it), np.empty(nloc, dtype=np.int64))


@njit(cache=True, nogil=True)
def _tarjan_scan(offsets, targets, eoffsets, etargets, lo, hi, label, index, low, onstack, sstack,
                 cstack, cursor):
    """:func:`_tarjan_range` with its scratch given (``hi - lo`` entries or more each, any
    content): ``index``, ``low``, the stack ``sstack`` and the call stack ``cstack`` of
    ``label``'s type, ``onstack`` (bool) and ``cursor`` (int64: each node's next arc, past its
    CSR row for the extra arcs).  It allocates nothing, so that it compiles without numpy's
    allocators."""
    nloc = hi - lo
    for r in range(nloc):
        label[r] = -1
        index[r] = -1
        onstack[r] = False
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
            gu = lo + u
            gend = offsets[gu + 1]
            ebase = eoffsets[gu] - gend      # extra arc j of u has cursor gend + j
            end = gend + eoffsets[gu + 1] - eoffsets[gu]
            descended = False
            k = cursor[u]
            while k < end:
                if k < gend:
                    w = targets[k] - lo
                else:
                    w = etargets[ebase + k] - lo
                k += 1
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
            cursor[u] = k
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
    return ncomp


def _label_dtype(n):
    return np.int32 if n < 2**31 - 1 else np.int64


def _no_extra(n):
    return np.zeros(n + 1, dtype=np.int64), np.zeros(0, dtype=np.int32)


def tarjan_scc(offsets, targets, num_nodes=None):
    """SCC label of every node of the CSR graph (``offsets``, ``targets``), iterative Tarjan.

    Returns
    -------
    (labels int64 array, number of components); ``label[u] > label[v]`` for every arc ``u -> v``
    joining two components (reverse topological numbering).
    """
    n = offsets.size - 1 if num_nodes is None else int(num_nodes)
    it = _label_dtype(n)
    lab = np.empty(n, dtype=it)
    eoff, etg = _no_extra(offsets.size - 1)
    nc = _tarjan_scan(offsets, targets, eoff, etg, np.int64(0), np.int64(n), lab,
                      *(np.empty(n, t) for t in (it, it, np.bool_, it, it, np.int64)))
    return lab.astype(np.int64), int(nc)


@njit(cache=True, nogil=True)
def _add_bases(lab, ranges, bases):
    for i in range(ranges.size - 1):
        b = bases[i]
        for u in range(ranges[i], ranges[i + 1]):
            lab[u] += b


@njit(cache=True, nogil=True)
def _contract_count(offsets, targets, eoffsets, etargets, lab, ncomp):
    """Offsets (ncomp+1) of the CSR of the arcs between different components."""
    n = offsets.size - 1
    cnt = np.zeros(ncomp + 1, dtype=np.int64)
    for u in range(n):
        lu = lab[u]
        for k in range(offsets[u], offsets[u + 1]):
            if lab[targets[k]] != lu:
                cnt[lu + 1] += 1
        for k in range(eoffsets[u], eoffsets[u + 1]):
            if lab[etargets[k]] != lu:
                cnt[lu + 1] += 1
    for c in range(ncomp):
        cnt[c + 1] += cnt[c]
    return cnt


@njit(cache=True, nogil=True)
def _contract_fill(offsets, targets, eoffsets, etargets, lab, coff, ctg):
    """Targets of the arcs between different components (duplicates kept), node order then arc
    order."""
    n = offsets.size - 1
    cur = coff[:-1].copy()
    for u in range(n):
        lu = lab[u]
        for k in range(offsets[u], offsets[u + 1]):
            lv = lab[targets[k]]
            if lv != lu:
                ctg[cur[lu]] = lv
                cur[lu] += 1
        for k in range(eoffsets[u], eoffsets[u + 1]):
            lv = lab[etargets[k]]
            if lv != lu:
                ctg[cur[lu]] = lv
                cur[lu] += 1


@njit(cache=True, nogil=True)
def _gather_labels(glab, local, out):
    for u in range(local.size):
        out[u] = glab[local[u]]


def scc_two_phase(offsets, targets, ranges, jobs=1, extra=None, ws=None, label_dtype=np.int64):
    """SCCs by local Tarjan per node range (in parallel) and a global Tarjan over the local SCCs.

    Parameters
    ----------
    offsets, targets : CSR arrays of the graph (node ids 0..n-1).
    ranges : int64 array of range boundaries (first 0, last n).
    jobs : int
    extra : (offsets, targets), optional
        A second CSR over the same nodes whose arcs are added to the graph's (taken after each
        node's own arcs), so that graph + extra arcs need not be copied into one CSR.

    label_dtype : dtype of the returned labels (int64; int32 halves the array later stages read
        at random).

    Returns
    -------
    (labels array, number of SCCs, number of local SCCs)
    """
    n = offsets.size - 1
    if n == 0:
        return np.zeros(0, label_dtype), 0, 0
    eoff, etg = extra if extra is not None else _no_extra(n)
    ws = workspace_or_numpy(ws)
    local = ws.empty(n, _label_dtype(n))
    tasks = [(offsets, targets, eoff, etg, np.int64(ranges[i]), np.int64(ranges[i + 1]),
              local[ranges[i]:ranges[i + 1]]) for i in range(ranges.size - 1)]
    counts = run_parallel(_tarjan_range, tasks, jobs)
    if len(counts) == 1:
        out = local.astype(label_dtype)
        ws.release(local)
        return out, int(counts[0]), int(counts[0])
    bases = np.cumsum([0] + [int(c) for c in counts]).astype(np.int64)
    _add_bases(local, np.asarray(ranges, dtype=np.int64), bases)
    nlocal = int(bases[-1])
    coff = _contract_count(offsets, targets, eoff, etg, local, np.int64(nlocal))
    ctg = ws.empty(int(coff[-1]), _label_dtype(nlocal))
    _contract_fill(offsets, targets, eoff, etg, local, coff, ctg)
    glab = ws.empty(nlocal, _label_dtype(nlocal))
    ceoff, cetg = _no_extra(nlocal)
    ng = _tarjan_range(coff, ctg, ceoff, cetg, np.int64(0), np.int64(nlocal), glab)
    ws.release(ctg)
    del ctg
    out = np.empty(n, dtype=label_dtype)
    _gather_labels(glab, local, out)
    ws.release(local, glab)
    return out, int(ng), nlocal
