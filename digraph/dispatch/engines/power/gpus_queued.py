"""The sharded power iteration's rounds, queued with no host wait
(:mod:`digraph.dispatch.engines.power.gpus`).

Every decision a round needs is made on the GPUs: after each GPU's pull, every GPU's sums row
(its ``acc``) is copied into a small table on every GPU (peer copies queued on events, a few
hundred bytes); the teleport reads the mass ``c = 1 − Σ_g s_g`` from its table
(:func:`~digraph.smx.cuda.power.power_teleport_rows`); with Anderson, the rows are copied again
after the record pass and each GPU runs the same one-thread solve on the same numbers
(:mod:`digraph.smx.cuda.anderson_state`), then mixes its range into its own vector.  The host
only queues: it keeps one round ahead of the GPUs and reads a round's sums (page-locked copies,
a ring of three) while the next round runs, then decides the stop with the bound of
:mod:`digraph.dispatch.engines.power.gpus`.  The round queued past the stop is left to finish
while the answer's ranges are copied to the host on a stream of their own; the answer is the
stopping round's power step, which that round does not overwrite (the pulls alternate between
two vectors ``y``; the mix writes the iterate ``x``).  When the last two differences foretell
that a round ends the run, its answer's copies are queued behind it before the host reads its
sums (``stats["power_answer_early"]``), so they start when the GPUs finish the round, not when
the host has read the bound; if the run goes on after all, they are waited for before a round
overwrites their vector.

Ordering without the host, on each GPU's default stream: a pull waits for the copies of ``z``
into its GPU; the first table copy waits for every GPU's pull, so a GPU's teleport
(which zeroes the accumulator two rounds on) follows every other GPU's read of it, and its next
``z`` (the mix, the pack) follows every copy out of it of the round before.

Why: with the host reading each round's sums (twice a round with Anderson) the GPUs drain at
every synchronisation and wait for the host's queueing, most of a round's time (measured:
docs/history/benchmarks-notebook.md, "Several GPUs: the power iteration sharded").
"""

import time

import numpy as np

from .gpu_setup import round_bound
from ... import driver
from .gpus_arrays import pull
from .gpus_exchange import (gather, gather_queue, gather_wait, pack, packed_into,
                            packed_push, push_lists, z_vectors)
from ...runtime.cuda.exchange import comm_stream

__all__ = []

_RING = 3  # the page-locked rows and the timing events: rounds r, r + 1 queued, r − 1 read
_D2H = 2  # cudaMemcpyDeviceToHost


def _host_table(sim, shape):
    """A float64 table in page-locked host memory mapped into every GPU's address space
    (``portable``): GPUs write their rows by copies and read the table in kernels; the host reads
    it as a numpy array.  A numpy array under the simulator."""
    if sim:
        return np.zeros(shape, np.float64)
    from numba import cuda
    t = cuda.mapped_array(shape, np.float64, portable=True)
    t[...] = 0.0
    return t


def rounds_queued(shards, ex, K, HB, has, g1, sx0, n, m, tol, max_iter, stats, trip, settings,
                   t0, aa):
    """The rounds (module docstring); returns (converged, the answer on the host)."""
    from ....smx.cuda import anderson_state as AS
    from ....smx.cuda import anderson
    sim = shards[0].be.sim
    k = len(shards)
    mem = aa.memory
    w = 5 + 2 * mem  # the width of a shard's accumulator (_shard_arrays)
    sum_slot = 4 + 2 * mem
    u = np.finfo(np.float64).eps / 2
    mix_terms = k
    blocks = k
    counts = [s.v1 - s.v0 for s in shards]
    packed = k > 1 and pack(shards, ex, settings) <= settings.pack_share * (k - 1) * n
    stats["power_packed"] = packed
    z_vectors(shards, packed)  # z compact when packed, else whole replicas; z_own of the start
    zs = [s.z for s in shards]
    push = packed and ex.peers and settings.shard_push
    if push:
        push_lists(shards)
    stats["power_exchange"] = ("peer writes" if push else "packed copies" if packed else
                               "whole ranges" if k > 1 else "none")
    start = np.array(AS.ctl_start(mem), np.float64)
    t0q = shards[0].w.get("queued")
    if t0q is None or t0q["tables"][0][0].shape != (k, w):
        with shards[0].on():  # host memory every GPU reads and writes (mapped, portable)
            tables = [[_host_table(sim, (k, w)) for _ in range(2)] for _ in range(2)]
    else:
        tables = t0q["tables"]
    for s in shards:
        nl = s.v1 - s.v0
        be, xp = s.be, s.be.xp
        s.grid_tel = max(1, min(be.grid_hb(nl), settings.blocks_per_sm * be.sms))
        s.grid_aa = max(1, min(be.grid_hb(nl), settings.anderson_blocks_per_sm * be.sms))
        mix_terms += s.grid_aa + 8 + -(-nl // (s.grid_aa * HB))
        pulls = (s.grid_tel if s.d.get("sparse") is not None else
                 sum(g for _, _, g in s.d["bins"]) + min(int(s.d["hubs"].size), 65535))
        blocks += pulls + s.grid_tel
        q = s.w.get("queued")
        if q is None or q["tables"] is not tables:  # made once, kept with the work
            with s.on():
                q = s.w["queued"] = {
                    "y1": xp.empty(nl, np.float64), "tables": tables,
                    "ctl": xp.zeros(AS.CTL, np.float64),
                    "ctl0": xp.asarray(start),  # a run's start, copied on the GPU
                    "gram": xp.zeros(anderson.MAX_MEMORY * anderson.MAX_MEMORY, np.float64)}
                if not sim:
                    import cupyx
                    E = xp.cuda.Event
                    q["cuda"] = {
                        "pin": cupyx.empty_pinned((_RING, AS.CTL), np.float64),
                        "read": [E(disable_timing=True) for _ in range(_RING)],
                        # the wait's start, the pull's start and end, the teleport's start, end
                        "ev": [[E() for _ in range(5)] for _ in range(_RING)],
                        "pulled": E(disable_timing=True), "ready": E(disable_timing=True),
                        "lanes": [comm_stream(xp) for _ in shards],
                        "done": [E(disable_timing=True) for _ in shards],
                        "gather": xp.cuda.Stream(non_blocking=True)}
                else:
                    q["cuda"] = {"pin": np.zeros((_RING, AS.CTL))}
        for a in (q["y1"], q["ctl"], q["gram"]) + tuple(t for pair in tables for t in pair):
            be.keep(a)
        s.q = q
        s.Y = [s.y, q["y1"]]
        s.X = s.x
        s.pin = q["cuda"]["pin"]
        if not sim:
            cu = q["cuda"]
            s.lanes, s.done, s.ready_ev = cu["lanes"], cu["done"], cu["ready"]
        with s.switch():
            q["ctl"][...] = q["ctl0"]  # no pageable copy (the host would wait for it)
            s.accbuf.fill(0.0)
    pushed = None if sim else [s.ready_ev for s in shards]
    pulled_tab, teled_tab = tables  # [slot]: the rows after the pulls, after the teleports
    st = {"k": 0, "queued": 0, "sx": sx0, "copied": False, "wait": 0.0, "diffs": [],
          "early": None}
    gather_streams = None if sim else [s.q["cuda"]["gather"] for s in shards]

    def drop_early():
        """Wait for the answer's copies queued early (the round after reads the vector they
        read) and forget them."""
        gather_wait(shards, *st["early"][1], gather_streams)
        st["early"] = None

    def record(s, ev):
        if not sim:
            ev.record()

    def row_out(h, s, slot, tab):
        """Shard ``h``'s ``acc[slot]`` into row ``h`` of the host table ``tab`` (its GPU
        current)."""
        if sim:
            tab[h, :] = s.acc[slot]
        else:
            ex.rt.memcpyAsync(tab.ctypes.data + 8 * w * h, s.acc[slot].data.ptr, 8 * w, _D2H, 0)

    def wait_rows(h, s, events):
        """Shard ``h``'s stream waits for every other shard's event in ``events``."""
        if not sim:
            null = s.be.xp.cuda.Stream.null
            for g in range(k):
                if g != h:
                    null.wait_event(events[g])

    def exchange():
        """Each range of ``z`` (when packed, the entries each GPU reads) sent to every other GPU
        after the range is final: written there by its own GPU's kernel (``push``), or copied on
        the receivers' copy streams; the next pull waits for them."""
        for g, s in enumerate(shards):
            with s.switch():
                if push:
                    packed_push(g, shards, K, HB)
                elif packed and s.send_idx.size:
                    s.be.launch(K.gather_at, s.grid_pack, HB, s.z_own, s.send_idx, s.send,
                                tag=(s.tag, 5))
                record(s, getattr(s, "ready_ev", None))
        if packed:
            stats["bytes_between_gpus"] += 8 * sum(s.send_off[-1] for s in shards)
        else:
            ex._count(zs, counts)
        if sim:
            for g, s in enumerate(shards):
                for h, t in enumerate(shards):
                    if h != g:
                        if packed:
                            t.recv[g][...] = s.send[s.send_off[h]:s.send_off[h + 1]]
                        else:
                            t.z[s.v0:s.v1] = s.z[s.v0:s.v1]
            return
        st["copied"] = True
        if push:
            return
        ready = [s.ready_ev for s in shards]
        for h, t in enumerate(shards):
            with t.switch():
                if packed:
                    packed_into(h, shards, ex, ready)
                else:
                    ex.lanes_into(h, zs, counts, ready, t.lanes, t.done)

    def queue_round(r):
        slot, nxt, qi = r % 2, 1 - r % 2, r % _RING
        for h, s in enumerate(shards):
            with s.switch():
                ev = None if sim else s.q["cuda"]["ev"][qi]
                record(s, ev and ev[0])
                if st["copied"]:  # z's entries from the other GPUs are in place
                    wait_rows(h, s, pushed if push else s.done)
                record(s, ev and ev[1])
                s.y = s.Y[slot]
                pull(s.be, K, HB, s, has, s.acc[slot])
                record(s, ev and ev[2])
                row_out(h, s, slot, pulled_tab[slot])
                record(s, None if sim else s.q["cuda"]["pulled"])
        pulled = None if sim else [s.q["cuda"]["pulled"] for s in shards]
        for h, s in enumerate(shards):
            with s.switch():
                be = s.be
                ev = None if sim else s.q["cuda"]["ev"][qi]
                wait_rows(h, s, pulled)
                record(s, ev and ev[3])
                first = r == 0 or mem > 0
                xin = s.X if first else s.Y[nxt]
                be.launch(K.power_teleport_rows, s.grid_tel, HB, pulled_tab[slot], s.Y[slot],
                          s.tele, xin, s.src_scale, s.z_own, s.acc[slot], s.acc[nxt],
                          tag=(s.tag, "qt", slot, first))
                if mem:
                    be.launch(AS.anderson_record_ctl, s.grid_aa, HB, s.X, s.Y[slot], s.fprev,
                              s.gprev, s.dF, s.dG, s.q["ctl"], s.acc[slot], 4,
                              tag=(s.tag, "qr", slot))
                record(s, ev and ev[4])
                row_out(h, s, slot, teled_tab[slot])  # the round's sums, read by the host too
                record(s, None if sim else s.q["cuda"]["read"][qi])
        if mem:
            teled = None if sim else [s.q["cuda"]["read"][qi] for s in shards]
            for h, s in enumerate(shards):
                with s.switch():
                    be = s.be
                    wait_rows(h, s, teled)
                    be.launch(AS.anderson_solve_rows, 1, AS.SOLVE_THREADS, teled_tab[slot], 4,
                              mem, s.q["ctl"], s.q["gram"], aa.reg, aa.max_coef,
                              -1.0 if aa.start_ratio is None else float(aa.start_ratio),
                              tag=(s.tag, "qs", slot))
                    be.launch(AS.anderson_mix_ctl, s.grid_aa, HB, s.Y[slot], s.dG, s.q["ctl"],
                              s.src_scale, s.z_own, s.X, s.acc[nxt], sum_slot,
                              tag=(s.tag, "qm", slot))
                    if h == 0:  # this round's solve, read with the next round's sums
                        if sim:
                            s.pin[qi] = s.q["ctl"]
                        else:
                            ex.rt.memcpyAsync(s.pin[qi].ctypes.data, s.q["ctl"].data.ptr,
                                              8 * AS.CTL, _D2H, 0)
        if k > 1:
            exchange()

    def read_round(r):
        """Round ``r``'s sums, every GPU's row added up, once its page-locked copies are done;
        its kernel times added to the shards' ``busy`` and ``waited``."""
        qi = r % _RING
        if not sim:
            t_wait = time.perf_counter()
            for s in shards:
                s.q["cuda"]["read"][qi].synchronize()
            st["wait"] += time.perf_counter() - t_wait
            for s in shards:
                ev = s.q["cuda"]["ev"][qi]
                ms = s.be.xp.cuda.get_elapsed_time
                s.busy += (ms(ev[1], ev[2]) + ms(ev[3], ev[4])) / 1e3
                s.waited += ms(ev[0], ev[1]) / 1e3
        return np.array(teled_tab[r % 2]).sum(axis=0)

    if k > 1:
        exchange()  # z of the start, everywhere (a round's exchange: no host wait)
    queue_round(0)
    st["queued"] = 1
    stats["time_setup"] = time.perf_counter() - t0
    t_rounds = time.perf_counter()

    def step():
        kk = st["k"]
        if st["queued"] == kk:  # the round was not queued ahead (its stop was expected)
            queue_round(kk)
            st["queued"] = kk + 1
        d = st["diffs"]
        ends = len(d) >= 2 and d[-2] > 0 and \
            g1 * d[-1] * (d[-1] / d[-2]) / (1.0 - g1) <= tol  # round kk's bound, foreseen
        if st["early"] is not None:  # the run goes on: the answer copied early is not it
            drop_early()
        if kk + 1 < max_iter and st["queued"] == kk + 1 and not ends:
            queue_round(kk + 1)  # one round ahead of the reads
            st["queued"] = kk + 2
        elif ends and not sim:  # the answer's copies queued behind the round, not behind the
            # host's read of its sums and bound (module docstring)
            for s in shards:
                s.x = s.Y[kk % 2]
            st["early"] = (kk, list(gather_queue(shards, n, [s.q["cuda"]["read"][kk % _RING]
                                                              for s in shards], gather_streams)))
        sums = read_round(kk)
        if st["early"] is not None:  # the copies start now: the transfer's time from here
            st["early"][1][2] = time.perf_counter()
        s_k, e_k, diff, sy = sums[0], sums[1], sums[2], sums[3]
        sx, sx_err = st["sx"], 0.0
        mixed = bool(mem and kk > 0 and shards[0].pin[(kk - 1) % _RING, AS.MIX] > 0)
        if mixed:
            sx = sums[sum_slot]  # the iterate pulled is a mix: its own sum, with its rounding
            sx_err = 2 * u * mix_terms * sx
        bound, delta = round_bound(g1, s_k, e_k, diff, sy, sx, sx_err, blocks, mixed)
        st.update(sx=sy, k=kk + 1)
        st["diffs"].append(diff)
        return bound, delta, diff

    if n == 0:
        rounds, converged = 0, True
        stats["error_bound"] = 0.0
    else:
        rounds, converged = driver.power(step, g1=g1, tol=tol, max_iter=max_iter, stats=stats,
                                         trip=trip)
    wall = time.perf_counter() - t_rounds
    stats["power_rounds_past_stop"] = st["queued"] - rounds
    t1 = time.perf_counter()
    last = max(rounds - 1, 0)
    for s in shards:  # the answer: the last round's power step (the start when none ran)
        s.x = s.Y[last % 2] if rounds else s.X
    early = st["early"]
    if early is not None and early[0] == last and rounds:
        out = gather_wait(shards, *early[1], gather_streams)
        stats["power_answer_early"] = True
    else:
        if early is not None:
            drop_early()
        after = None if sim or not rounds else [s.q["cuda"]["read"][last % _RING]
                                                for s in shards]
        out = gather(shards, n, after=after, streams=gather_streams)
        stats["power_answer_early"] = False
    for s in shards:  # the round queued past the stop, before the run's time ends
        if not sim:
            with s.switch():
                s.be.xp.cuda.Stream.null.synchronize()
                for lane in s.lanes:
                    lane.synchronize()
    stats["time_gather"] = time.perf_counter() - t1
    if mem and rounds > 1:  # the solves of the rounds before the last (whose mix ran on)
        ctl = shards[0].pin[(rounds - 2) % _RING]
        aa.mixes = int(ctl[AS.MIXES])
        aa.restarts = int(ctl[AS.RESTARTS])
        aa.memory = int(ctl[AS.MEMORY])
        if ctl[AS.PROBE] >= 0:
            aa.probe_ratio = float(ctl[AS.PROBE])
    stats["time_rounds"] = wall
    stats["time_sync_wait"] = st["wait"]
    stats["rounds"] += rounds
    stats["dense_rounds"] += rounds
    stats["arc_updates"] += rounds * m
    stats["vertex_updates"] += rounds * n
    if sim:  # no clocks: the arc shares of the rounds' time
        arcs = np.array(stats["gpu_arcs"], np.float64)
        busy = list(wall * arcs / max(arcs.sum(), 1.0))
    else:
        busy = [s.busy for s in shards]
        stats["gpu_exchange_wait_s"] = [s.waited for s in shards]
    stats["gpu_busy_s"] = busy
    stats["gpu_idle_share"] = [max(0.0, 1.0 - b / wall) if wall > 0 else 0.0 for b in busy]
    return converged, out
