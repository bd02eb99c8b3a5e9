"""CUDA kernels of the SCC engine on one GPU (``mode="scc"``,
:mod:`digraph.dispatch.engines.scc.gpu`): a linear system ``x = b + A x`` solved component by
component of the vertex condensation (:mod:`digraph.paths.condensation`), in position space, the
GPU twin of :mod:`digraph.smx.cpu.scc`.

Two kinds of work, by the component's size (:mod:`digraph.paths.scc_schedule`):

* **Light components** (few arcs, at most :data:`SH` vertices) run in :func:`scc_light_phase`, a
  persistent kernel with a device-side ready queue: a block takes the next queued component,
  *pulls* its in-arcs from other components (final by then: ``r_v = b_v + Σ c·x_u``), and, when
  the component has arcs inside, *sweeps* it in shared memory until its pending mass is within
  its budget (:mod:`digraph.smx.cuda.scc_sweeps`: Anderson-accelerated sweeps, or with the soft
  priority of the CPU engine, a vertex pushing when ``|r_v| > deg_v · max(prio · mass / arcs,
  per_arc)``).  A sweep has two steps: the vertices that push write their shares
  to shared memory, then each vertex gathers its in-arcs' shares (a warp for a vertex with many),
  so no atomic is needed: a Jacobi sweep over the pushing vertices.  It then writes ``x``,
  and each successor component of the same phase whose last predecessor this was is queued.  A
  component whose predecessors are done starts at once, whatever its level: no launch and no
  synchronisation per DAG level, and a slow component holds up only what depends on it.
* **Heavy components** (the giant component of a web graph) run in rounds over the whole GPU:
  :func:`scc_pull_list` once, then push rounds (:mod:`digraph.smx.cuda.scc_heavy`: all of them in
  one launch with a grid barrier between rounds, or a launch a round), the threshold and the stop
  decided on the device from the previous round's mass, without a host synchronisation.

Deadlock freedom of the queue: a block claims queue slots in order (``ctl[0]``) and waits for its
slot to be filled; a slot is filled when a component's last same-phase predecessor finishes.  If
every block waited, every earlier slot's component would be finished, and the phase's components
form a closed set (their other predecessors finished in earlier phases), so one of the waited-for
components would already be queued: a contradiction.  The grid must be resident at once (the
engine launches at most that many blocks; one under the simulator, which runs blocks one after
another).

Coherence: a block publishes a successor only after ``threadfence``; the block that takes it
polls its queue slot with ``ld.relaxed.gpu``, fences once it is filled (an acquire, without the
L1 invalidation an ``ld.acquire`` costs on every poll), and reads the values of other blocks'
components with ``ld.relaxed.gpu`` (:mod:`digraph.smx.cuda.timers`), so no atomic
read-modify-write stands in for a read.

The block-level helpers (the reductions, a group leader's value, the exact solve of a small
component) are in :mod:`digraph.smx.cuda.scc_blocks`.

Counters (``cnt``): :data:`PULLS`, :data:`PUSHES` (arcs), :data:`VERTEX_PUSHES`, :data:`SWEEPS`,
:data:`ONCE` (components done without a sweep), :data:`CAPPED` (stopped by ``max_sweeps``),
:data:`RAN`, :data:`ROUNDS` (heavy rounds that ran); defined in :mod:`digraph.smx.cuda.scc_blocks`.
"""

from numba import cuda, float64, int32, int64

from .common import SIM
from .scc_blocks import (CAPPED,
    COUNTERS,
    DIRECT,
    DK,
    GATHERED,
    HUB_PULL,
    HUB_PUSH,
    ONCE,
    PULLS,
    PUSHES,
    QB,
    RAN,
    SH,
    SWEEPS,
    VERTEX_PUSHES,
    WL,
    G,
    arc_coef,
    direct_solve,
    lanes_sum,
    sum_max)
from .scc_sweeps import ACC as _ACC, anderson_sweeps, priority_sweeps
from .scc_heavy import BIG_OUT, HEAVY_BLOCKS_PER_SM, TB, scc_heavy_rounds, scc_pull_list, scc_round
from .timers import globaltimer, load_relaxed, smid

__all__ = ["SH", "QB", "DK", "G", "HUB_PULL", "HUB_PUSH", "TB", "COUNTERS", "TRACE",
           "LIGHT_BLOCKS_PER_SM", "HEAVY_BLOCKS_PER_SM", "BIG_OUT", "scc_light_phase",
           "scc_pull_list", "scc_round", "scc_heavy_rounds"]

_BUF = max(2 * SH, DK * DK + DK)
_RBUF = 2 * QB  # shared sizes must be plain constants

TRACE = 8
"""Entries a component of :func:`scc_light_phase`'s ``trace``."""


LIGHT_BLOCKS_PER_SM = 4
"""Blocks of :func:`scc_light_phase` the compiler must fit on a multiprocessor (its launch bounds:
at most 64 registers a thread; without them, fewer blocks fit).  Each block works one component
at a time and a component's work is a chain of dependent memory accesses (its work, then the
queueing of its successors), so on a wide DAG the phase is bound by how many blocks run at once;
the shared arrays would allow six.  Neither a back-off in the queue poll (``nanosleep``) nor
atomic reads changed the times beyond the noise (measured: docs/history/benchmarks-notebook.md,
"The light phase profiled: one block a multiprocessor, and hubs walked by one thread")."""


@cuda.jit(cache=True, **({} if SIM else {"launch_bounds": (QB, LIGHT_BLOCKS_PER_SM)}))
def scc_light_phase(queue, q0, ctl, c0, count, comp_offsets, comp_arcs, ein_off,
                    ein_src, ecoef, iout_off, iout_tgt, icoef, has_coef, vscale, b, x, per_arc,
                    vmax, linf, prio, mem, max_sweeps, eout_off, eout_comp, pending, comp_sweeps,
                    cnt, hub_off, hub_pos, iin_off, iin_src, iin_arc, ihub_off, ihub_pos, trace):
    """The light components of one phase (module docstring), a block of ``QB`` threads each:
    ``count`` components reach the queue ``queue[q0:q0 + count]``, the first ones before the
    launch; ``ctl[c0]`` is the next slot to take, ``ctl[c0 + 1]`` the next to fill.  ``mem``: the
    memory of the swept components' Anderson acceleration (0: the soft priority's sweeps).
    ``hub_pos[hub_off[c]:hub_off[c + 1]]``: the positions of component ``c`` with more than
    :data:`~.scc_blocks.HUB_PULL` in-arcs from other components (a warp each).
    ``iin_off``, ``iin_src``, ``iin_arc``: the arcs inside swept components by target position
    (source position, index of the arc in ``iout_*``); ``ihub_pos[ihub_off[c]:ihub_off[c + 1]]``:
    the positions of ``c`` with more than :data:`~.scc_blocks.HUB_PUSH` of them
    (a warp each gathers them in a sweep).

    ``trace`` (int64, :data:`TRACE` entries a component, or one entry: off) receives, for each
    component ``c``, at ``TRACE * c``: the global timer when its block took its queue slot, when
    the slot held ``c``, when ``c``'s values were written, when its successors were queued; the
    slot, the block, the multiprocessor and its sweeps (a profile:
    ``benchmarks/profile_gpu_scc_light.py``)."""
    sh = cuda.shared.array(_BUF, float64)  # residuals sh[:SH], shares sh[SH:2SH]; or _direct's
    rbuf = cuda.shared.array(_RBUF, float64)
    item = cuda.shared.array(1, int32)
    acc = cuda.local.array(_ACC, float64)  # the values of this thread's vertices (swept)
    tid = cuda.threadIdx.x
    lane = tid % WL
    pushes = 0
    vpushes = 0
    pulls = 0
    sweeps_all = 0
    once = 0
    capped = 0
    ran = 0
    direct = 0
    reads = 0
    R = DK * DK
    tracing = trace.size > 1
    t_claim = int64(0)
    t_got = int64(0)
    slot = 0
    while True:
        if tid == 0:
            slot = cuda.atomic.add(ctl, c0, int32(1))
            if tracing:
                t_claim = globaltimer()
            c = -1
            if slot < count:
                c = load_relaxed(queue, q0 + slot)  # filled by another block, after its x
                while c < 0:
                    c = load_relaxed(queue, q0 + slot)
                cuda.threadfence()  # with the relaxed reads: an acquire, once
            item[0] = c
            if tracing:
                t_got = globaltimer()
        cuda.syncthreads()
        c = item[0]
        cuda.syncthreads()
        if c < 0:
            break
        a = comp_offsets[c]
        z = comp_offsets[c + 1]
        k = z - a
        arcs = comp_arcs[c]
        small = k <= DK and arcs > 0
        base = R if small else 0  # where the pulled residuals go
        if tid == 0:
            ran += 1
            pulls += ein_off[z] - ein_off[a]
        if k == 1:  # one vertex: its in-arcs over the block
            s = 0.0
            for q in range(ein_off[a] + tid, ein_off[a + 1], QB):
                u = ein_src[q]
                s += arc_coef(q, ecoef, has_coef, vscale, u) * load_relaxed(x, u)
            s, _t = sum_max(rbuf, s, 0.0)
            if tid == 0:
                sh[base] = b[a] + s
        else:
            for j in range(tid, k, QB):
                s = b[a + j]
                lo = ein_off[a + j]
                hi = ein_off[a + j + 1]
                if hi - lo <= HUB_PULL:  # else a warp's, below
                    for q in range(lo, hi):
                        u = ein_src[q]
                        s += arc_coef(q, ecoef, has_coef, vscale, u) * load_relaxed(x, u)
                sh[base + j] = s
            h0 = hub_off[c]
            h1 = hub_off[c + 1]
            if h1 > h0:  # the hubs: a warp each, its lanes over the in-arcs
                cuda.syncthreads()
                for h in range(h0 + tid // WL, h1, QB // WL):
                    p = hub_pos[h]
                    s = 0.0
                    for q in range(ein_off[p] + lane, ein_off[p + 1], WL):
                        u = ein_src[q]
                        s += arc_coef(q, ecoef, has_coef, vscale, u) * load_relaxed(x, u)
                    s = lanes_sum(rbuf, s)
                    if lane == 0:
                        sh[base + p - a] += s
        cuda.syncthreads()
        sweeps = 0
        if arcs == 0:  # acyclic: exact from final inputs
            if tid == 0:
                x[a] = sh[0]
                vpushes += 1
                once += 1
        elif small:  # exact by elimination, the first warp
            if tid < DK:
                direct_solve(sh, a, k, iout_off, iout_tgt, icoef, has_coef, vscale)
                if tid < k:
                    x[a + tid] = sh[R + tid]
            if tid == 0:
                pushes += arcs
                vpushes += k
                once += 1
                direct += 1
        else:  # swept (cuda_scc_sweeps), Anderson-accelerated or with the soft priority
            if mem > 0 and not linf:
                sweeps, cap1, p1, v1, r1 = anderson_sweeps(
                    sh, rbuf, acc, a, k, arcs, mem, per_arc * arcs, max_sweeps, vscale,
                    has_coef, icoef, ihub_off[c], ihub_off[c + 1], iin_off, iin_src, iin_arc,
                    ihub_pos)
            else:
                sweeps, cap1, p1, v1, r1 = priority_sweeps(
                    sh, rbuf, acc, a, k, arcs, per_arc, vmax, linf, prio, max_sweeps, iout_off,
                    vscale, has_coef, icoef, ihub_off[c], ihub_off[c + 1], iin_off, iin_src,
                    iin_arc, ihub_pos)
            pushes += p1
            vpushes += v1
            reads += r1
            for m in range(_ACC):
                j = tid + m * QB
                if j < k:
                    x[a + j] = acc[m]
            if tid == 0:
                capped += cap1
                if sweeps == 0:
                    once += 1
        if tid == 0:
            comp_sweeps[c] = sweeps
            sweeps_all += sweeps
        cuda.threadfence()
        cuda.syncthreads()
        if tracing and tid == 0:
            trace[TRACE * c + 2] = globaltimer()
        for q in range(eout_off[c] + tid, eout_off[c + 1], QB):
            t = eout_comp[q]
            if cuda.atomic.sub(pending, t, int32(1)) == 1:
                cuda.atomic.exch(queue, q0 + cuda.atomic.add(ctl, c0 + 1, int32(1)), t)
        cuda.syncthreads()
        if tracing and tid == 0:
            i = TRACE * c
            trace[i] = t_claim
            trace[i + 1] = t_got
            trace[i + 3] = globaltimer()
            trace[i + 4] = slot
            trace[i + 5] = cuda.blockIdx.x
            trace[i + 6] = smid()
            trace[i + 7] = sweeps
    # a block's counts summed first: one atomic a block, as one a thread (every block's threads
    # on three addresses as the blocks leave) holds up the last components of every light phase
    pushes_b, _t = sum_max(rbuf, float64(pushes), 0.0)
    vpushes_b, _t = sum_max(rbuf, float64(vpushes), 0.0)
    reads_b, _t = sum_max(rbuf, float64(reads), 0.0)
    if tid == 0:
        cuda.atomic.add(cnt, PUSHES, int64(pushes_b))
        cuda.atomic.add(cnt, VERTEX_PUSHES, int64(vpushes_b))
        cuda.atomic.add(cnt, GATHERED, int64(reads_b))
        cuda.atomic.add(cnt, PULLS, pulls)
        cuda.atomic.add(cnt, SWEEPS, sweeps_all)
        cuda.atomic.add(cnt, ONCE, once)
        cuda.atomic.add(cnt, CAPPED, capped)
        cuda.atomic.add(cnt, RAN, ran)
        cuda.atomic.add(cnt, DIRECT, direct)
