"""How many blocks the GPU SCC engine's persistent kernels launch
(:mod:`digraph.dispatch.engines.scc.gpu`): both wait on other blocks (the light phase's queue
kernel for queued components, the heavy rounds' kernel at its grid barrier), so every block they
launch must be resident at once.
"""

__all__ = ["resident", "heavy_grid"]


def heavy_grid(be, settings, threads, kern=None):
    """Blocks of a heavy group's rounds, for ``threads`` (:data:`~digraph.smx.cuda.scc_blocks.G` a
    vertex pushed by a group, a block's a vertex pushed by a block), at most
    ``settings.heavy_blocks_per_sm`` a multiprocessor; for the one-launch kernel
    also at most what is surely resident at once (its launch bounds, or the driver's occupancy
    calculator once compiled; one block under the simulator, which runs blocks one after
    another).  ``kern``: the one-launch kernel (``scc_heavy_rounds`` when None).

    (Both one-launch kernels share the launch bounds of
    :data:`~digraph.smx.cuda.scc_heavy.HEAVY_BLOCKS_PER_SM`.)"""
    from ....smx.cuda import scc_heavy
    grid = min(be.grid_hb(threads), settings.heavy_blocks_per_sm * be.sms)
    if not settings.heavy_one_launch:
        return grid
    if be.sim:
        return 1
    # the launch bounds' promise
    bound = min(settings.heavy_blocks_per_sm, scc_heavy.HEAVY_BLOCKS_PER_SM)
    kern = scc_heavy.scc_heavy_rounds if kern is None else kern
    return min(grid, per_sm(be, kern, scc_heavy.TB, bound, bound) * be.sms)


def resident(be, settings):
    """Blocks of the queue kernel that are surely resident at once: ``settings.blocks_per_sm``
    per multiprocessor, fewer if the compiled kernel's registers and shared memory allow fewer
    (the driver's occupancy calculator), one before it is compiled (one in all under the
    simulator, which runs blocks one after another).

    (Until 2026-11-29 this read ``get_regs_per_thread()``, which returns a dict for a kernel not
    compiled for one signature only; the error fell to the fallback and every run had one block
    per multiprocessor whatever ``blocks_per_sm`` said.)"""
    from ....smx.cuda import scc as K
    from ....smx.cuda import scc_blocks
    if be.sim:
        return 1
    return per_sm(be, K.scc_light_phase, scc_blocks.QB, settings.blocks_per_sm, 1) * be.sms


def per_sm(be, kern, threads, wanted, unknown):
    """``wanted`` blocks of ``threads`` a multiprocessor, fewer if the compiled ``kern`` allows
    fewer (the driver's occupancy calculator); ``unknown`` before it is compiled, or with an
    older Numba without the query."""
    try:
        if kern.overloads:
            # a driver query, once per signatures, block and device (kept on the kernel)
            kept = kern.__dict__.setdefault("_digraph_fits", {})
            key = (len(kern.overloads), threads, getattr(be, "device_id", None))
            if key not in kept:
                kept[key] = min(int(o.max_cooperative_grid_blocks(threads))
                                for o in kern.overloads.values())
            return max(1, min(wanted, kept[key] // be.sms))
    except Exception:
        pass
    return unknown
