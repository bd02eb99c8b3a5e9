"""CUDA kernels of k-core by peeling on one GPU (``mode="peel"``,
:mod:`digraph.dispatch.engines.peel.gpu`): the core numbers in one launch, the GPU twin of
:func:`digraph.smx.cpu.peel.pkc_core`.

The graph is the undirected multigraph of the arcs without self-loops, read straight from the
out-CSR and the in-CSR (:func:`peel_degrees`: ``deg(v) = out(v) + in(v) − 2·loops(v)``, and
``alen(v) = out(v) + in(v)``, the entries a peel of v reads).  Peeling level by level (Kabir &
Madduri's PKC): at level k every remaining vertex of degree k is removed, each removal decrements
its remaining neighbours of degree > k (``atomic_add(deg, u, −1)``); the one decrement that takes
u from k + 1 to k makes u a vertex of level k too; a decrement that finds deg(u) ≤ k is undone.
A vertex keeps the level it was removed at: ``deg`` ends as the core numbers.

:func:`peel_levels` runs every level in one launch, the blocks resident at once and meeting at a
grid barrier (:func:`~digraph.smx.cuda.scc_heavy.grid_barrier`) between *steps*:

* a **level step** scans the remaining vertices (``src``, taken by blocks :data:`TB` at a time
  from an atomic cursor): those of degree k are claimed (``done``) and peeled by the block that
  found them; those above k are kept (compacted into ``dst``, the remaining list of the next
  level).  A block peels its vertices and then, round after round, the vertices its decrements
  took to level k (a queue in shared memory, :func:`_cascade`), so a chain of removals runs
  within the block without a barrier;
* a vertex a block's round finds beyond its shared queue (:data:`TB` a round), and a hub (at
  least :data:`SPREAD` neighbour entries), is *spilled* to the global ``queue``; a **spill step**
  peels the spilled vertices, dealt out evenly to the blocks from a cursor, in the same way,
  until a step spills nothing;
* the level ends after a step that spilled nothing; the next level is the least degree left,
  ``min(degrees kept by the scan, degrees its decrements left above k)`` (a vertex's last
  decrement gives its final degree, so the minimum is exact; a decrement of a vertex removed
  later only lowers it, which costs one empty scan at most): empty levels are jumped over;
* a vertex is claimed once (``atomic_max(done, v, 1) == 0``) by the scan or by the decrement that
  took it to k, whichever comes first, so a vertex taken to k during the scan that meets it is
  peeled once.

Within a block a round's vertices are peeled *arc-balanced*: an inclusive scan of their
``alen`` in shared memory, then each thread takes every :data:`TB`-th entry of their
concatenated neighbour lists (finding its vertex by binary search), so a hub's neighbours are
spread over the whole block.

Once the remaining vertices' neighbour entries (``alen`` summed at a level's scan) are at most
``tail_arcs``, block 0 runs the last levels alone: the same steps with ``syncthreads`` for the
barrier, the other blocks gone (graphs of at most that many entries run alone from the start).

Every step counts its appends in its own slots of ``ctl`` (:data:`QC` spilled, :data:`AC` kept,
:data:`MN` least degree, :data:`CUR` the cursor, :data:`AW` the kept vertices' entries), three
apiece: step t uses slot ``t % 3`` and resets slot ``(t + 1) % 3``, which the last read of was
before the barrier that began step t.  Reads of what other blocks wrote in an earlier step go
through ``ld.relaxed.gpu`` (:func:`~digraph.smx.cuda.timers.load_relaxed`).  ``cnt`` receives
:data:`LEVELS`, :data:`SCANS`, :data:`BARRIERS`, :data:`SPILLED`, :data:`TAIL_STEPS`,
:data:`ARCS` and :data:`PEELED`.

References
----------
H. Kabir, K. Madduri, "Parallel k-core decomposition on multicore platforms", IEEE IPDPSW 2017
(levels, buffers of vertices a thread took to the level, the empty-level jump).
A. Ahmad et al., "Accelerating k-core decomposition by a GPU", IEEE ICDE 2023 (a block's buffer
of the vertices it took to the level, peeled by the block without a global synchronisation).
"""

from numba import cuda, int64

from .common import SIM
from .scc_heavy import grid_barrier
from .timers import load_relaxed

__all__ = ["TB", "BLOCKS_PER_SM", "peel_degrees", "peel_levels"]

TB = 8 if SIM else 256
"""Threads per block of :func:`peel_levels` (a power of two: tree reductions), and the vertices
of a block's round (its shared queue)."""
BLOCKS_PER_SM = 4
"""Blocks of :func:`peel_levels` the compiler must fit on a multiprocessor (its launch bounds),
so that a grid of this many blocks a multiprocessor is surely resident at once."""
SPREAD = 32 if SIM else 4096
"""A vertex of at least this many neighbour entries (``alen``) is spilled when it reaches its
level, so that the hubs of one level are peeled by as many blocks (a spill step deals its
vertices out evenly) instead of by the block that found them, one after another."""

BIG = 1 << 62
QC, AC, MN, CUR, AW = 0, 3, 6, 9, 12
NCTL = 15
"""``ctl``: spilled, kept, least degree, cursor and kept entries, three slots each."""
LEVELS, SCANS, BARRIERS, SPILLED, TAIL_STEPS, ARCS, PEELED = range(7)
NCNT = 7
"""``cnt``: levels that peeled a vertex, scans (levels and empty ones), grid barriers passed,
vertices spilled, steps block 0 ran alone, neighbour entries read, vertices peeled."""


@cuda.jit(cache=True)
def peel_degrees(out_offsets, out_targets, in_offsets, deg0, alen):
    """``deg0[v] = out(v) + in(v) − 2·loops(v)`` and ``alen[v] = out(v) + in(v)``, a thread a
    vertex."""
    v = cuda.grid(1)
    if v < deg0.size:
        loops = 0
        for e in range(out_offsets[v], out_offsets[v + 1]):
            if out_targets[e] == v:
                loops += 1
        a = (out_offsets[v + 1] - out_offsets[v]) + (in_offsets[v + 1] - in_offsets[v])
        alen[v] = a
        deg0[v] = a - 2 * loops


@cuda.jit(device=True, inline=True)
def _reduce(buf, val, least):
    """The block's least (``least``) or total of ``val`` (every thread gets it)."""
    tid = cuda.threadIdx.x
    buf[tid] = val
    cuda.syncthreads()
    step = TB // 2
    while step > 0:
        if tid < step:
            if least:
                buf[tid] = min(buf[tid], buf[tid + step])
            else:
                buf[tid] += buf[tid + step]
        cuda.syncthreads()
        step //= 2
    out = buf[0]
    cuda.syncthreads()
    return out


@cuda.jit(device=True, inline=True)
def _inclusive_scan(buf, val):
    """``buf[i]`` = the sum of ``val`` over threads 0..i (Hillis–Steele); returns the total."""
    tid = cuda.threadIdx.x
    buf[tid] = val
    cuda.syncthreads()
    off = 1
    while off < TB:
        x = buf[tid - off] if tid >= off else int64(0)
        cuda.syncthreads()
        buf[tid] += x
        cuda.syncthreads()
        off *= 2
    return buf[TB - 1]


@cuda.jit(device=True, inline=True)
def _reset(ctl, slot):
    ctl[QC + slot] = 0
    ctl[AC + slot] = 0
    ctl[MN + slot] = BIG
    ctl[CUR + slot] = 0
    ctl[AW + slot] = 0


@cuda.jit(device=True, inline=True)
def _cascade(m, k, slot, spill_at, items, nxt, pre, sh, oo, ot, io, isrc, alen, deg, done, queue,
             ctl):
    """Peel the ``m`` claimed vertices of ``items`` at level ``k``, then round after round those
    their decrements took to k (a round's first :data:`TB` in shared memory, the rest spilled to
    ``queue[spill_at + ...]``, counted in ``ctl[QC + slot]``).  Every thread of the block
    calls it with the same ``m``; returns this thread's neighbour entries read, the vertices the
    block peeled (the same in every thread) and the least degree this thread's decrements left
    above k."""
    tid = cuda.threadIdx.x
    arcs = int64(0)
    peeled = int64(0)
    low = int64(BIG)
    while m > 0:
        peeled += m
        if m == 1:  # one vertex (a chain's next): its entries are the block's, no scan
            total = alen[items[0]]
            if tid == 0:
                arcs += total
        else:
            d = int64(0)
            if tid < m:
                d = alen[items[tid]]
                arcs += d
            total = _inclusive_scan(pre, d)
        if tid == 0:
            sh[1] = 0
        cuda.syncthreads()
        j = 0
        for a in range(tid, total, TB):
            lo = j
            hi = m - 1
            while lo < hi:  # the vertex whose entries hold a: the first with pre > a
                mid = (lo + hi) // 2
                if pre[mid] > a:
                    hi = mid
                else:
                    lo = mid + 1
            j = lo
            v = items[j]
            off = a - (pre[j - 1] if j > 0 else int64(0))
            dout = oo[v + 1] - oo[v]
            u = int64(ot[oo[v] + off]) if off < dout else int64(isrc[io[v] + off - dout])
            if u != v and deg[u] > k:  # a stale (larger) degree only costs an undone decrement
                old = cuda.atomic.add(deg, u, -1)
                if old == k + 1:  # this decrement took u to the level: peel it, once
                    if cuda.atomic.max(done, u, 1) == 0:
                        p = cuda.atomic.add(sh, 1, 1) if alen[u] < SPREAD else TB
                        if p < TB:
                            nxt[p] = u
                        else:
                            queue[spill_at + cuda.atomic.add(ctl, QC + slot, 1)] = u
                elif old <= k:  # u is at the level or below already
                    cuda.atomic.add(deg, u, 1)
                elif old - 1 < low:
                    low = old - 1
        cuda.syncthreads()
        m = min(sh[1], TB)
        if tid < m:
            items[tid] = nxt[tid]
        cuda.syncthreads()
    return arcs, peeled, low


@cuda.jit(device=True, inline=True)
def _grab(ctl, slot, sh, size):
    """The block's next ``size`` positions from the step's cursor (every thread gets them)."""
    if cuda.threadIdx.x == 0:
        sh[0] = cuda.atomic.add(ctl, CUR + slot, size)
    cuda.syncthreads()
    base = sh[0]
    cuda.syncthreads()
    return base


@cuda.jit(device=True, inline=True)
def _sync(alone, bar, target):
    if alone:
        cuda.syncthreads()
    else:
        grid_barrier(bar, target)


@cuda.jit(cache=True, **({} if SIM else {"launch_bounds": (TB, BLOCKS_PER_SM)}))
def peel_levels(oo, ot, io, isrc, deg0, alen, deg, done, alive, spare, queue, ctl, bar, cnt,
                tail_arcs, alone_from_start):
    """Every level of the peel in one launch (see the module text); ``bar[0]`` zero at the
    launch, every block resident at once.  ``deg`` ends as the core numbers; ``deg0``, ``alen``:
    :func:`peel_degrees`; ``done``, ``alive``, ``spare``, ``queue``: n entries each, any content;
    ``ctl``: :data:`NCTL`, ``cnt``: :data:`NCNT` entries, any content."""
    items = cuda.shared.array(TB, int64)
    nxt = cuda.shared.array(TB, int64)
    pre = cuda.shared.array(TB, int64)
    sh = cuda.shared.array(8, int64)
    n = deg.size
    tid = cuda.threadIdx.x
    blk = cuda.blockIdx.x
    nb = cuda.gridDim.x
    alone = alone_from_start != 0
    if alone and blk > 0:
        return
    lead = blk == 0 and tid == 0
    first = cuda.grid(1) if not alone else tid
    for v in range(first, n, TB if alone else nb * TB):
        deg[v] = deg0[v]
        done[v] = 0
    if lead:
        for s in range(3):
            _reset(ctl, s)
        for c in range(NCNT):
            cnt[c] = 0
    passed = 0
    if not alone:
        passed += 1
    _sync(alone, bar, nb * passed)
    k = int64(0)
    t = 0
    total = int64(n)
    qend = int64(0)
    lo = int64(0)
    level_min = int64(BIG)
    level_peeled = int64(0)
    scanning = True
    scanned = False
    kept_work = int64(0)
    src = alive
    dst = spare
    arcs = int64(0)
    levels = 0
    scans = 0
    spilled = int64(0)
    tail_steps = 0
    while True:
        slot = t % 3
        if lead:
            _reset(ctl, (t + 1) % 3)
        least = int64(BIG)
        work = int64(0)
        got = int64(0)  # vertices this block peeled in the step (the same in its threads)
        per = int64(TB)
        if not scanning and not alone:  # the spilled vertices dealt out evenly: a hub a block
            per = min(per, max(int64(1), (qend - lo + nb - 1) // nb))
        while True:
            base = _grab(ctl, slot, sh, per)
            if scanning:
                if base >= total:
                    break
                i = base + tid
                v = int64(-1)
                d = int64(-1)
                if i < total:
                    v = int64(load_relaxed(src, i)) if scanned else i
                    d = load_relaxed(deg, v)
                if tid == 0:
                    sh[2] = 0
                    sh[3] = 0
                cuda.syncthreads()
                keep = -1
                if d == k:
                    if cuda.atomic.max(done, v, 1) == 0:
                        if alen[v] < SPREAD:
                            items[cuda.atomic.add(sh, 2, 1)] = v
                        else:  # a hub: peeled in a spill step, by a block of its own
                            queue[qend + cuda.atomic.add(ctl, QC + slot, 1)] = v
                elif d > k:
                    keep = cuda.atomic.add(sh, 3, 1)
                    least = min(least, d)
                    work += alen[v]
                cuda.syncthreads()
                if tid == 0:
                    sh[4] = cuda.atomic.add(ctl, AC + slot, sh[3])
                cuda.syncthreads()
                if keep >= 0:
                    dst[sh[4] + keep] = v
                m = sh[2]
            else:
                if lo + base >= qend:
                    break
                m = min(per, qend - lo - base)
                if tid < m:
                    items[tid] = load_relaxed(queue, lo + base + tid)
                cuda.syncthreads()
            a, p, low = _cascade(m, k, slot, qend, items, nxt, pre, sh, oo, ot, io, isrc, alen,
                                 deg, done, queue, ctl)
            arcs += a
            got += p
            least = min(least, low)
        least = _reduce(pre, least, True)
        if scanning:
            work = _reduce(pre, work, False)
        if tid == 0:  # a block that found nothing leaves the step's slots alone
            if least < BIG:
                cuda.atomic.min(ctl, MN + slot, least)
            if work:
                cuda.atomic.add(ctl, AW + slot, work)
            if got:
                cuda.atomic.add(cnt, PEELED, got)
        if alone:
            tail_steps += 1
        else:
            passed += 1
        _sync(alone, bar, nb * passed)
        spills = load_relaxed(ctl, QC + slot)
        level_min = min(level_min, load_relaxed(ctl, MN + slot))
        t += 1
        if scanning:
            scans += 1
            total = load_relaxed(ctl, AC + slot)
            kept_work = load_relaxed(ctl, AW + slot)
            src, dst = dst, src
            scanned = True
        if spills > 0:
            lo = qend
            qend += spills
            spilled += spills
            scanning = False
            continue
        if lead:  # the level is over: did it peel a vertex? (the count of its steps)
            level_peeled = load_relaxed(cnt, PEELED) - level_peeled
            if level_peeled > 0:
                levels += 1
            level_peeled = load_relaxed(cnt, PEELED)
        if total == 0:
            break
        k = level_min
        level_min = BIG
        scanning = True
        if not alone and kept_work <= tail_arcs:
            alone = True
            if blk > 0:
                break
    arcs = _reduce(pre, arcs, False)
    if tid == 0:
        cuda.atomic.add(cnt, ARCS, arcs)
    if lead:
        cnt[LEVELS] = levels
        cnt[SCANS] = scans
        cnt[BARRIERS] = passed
        cnt[SPILLED] = spilled
        cnt[TAIL_STEPS] = tail_steps
