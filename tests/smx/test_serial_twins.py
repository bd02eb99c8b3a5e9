"""Serial twins of the parallel kernels (digraph.smx.cpu.serial): picked by size, the same
answers, cached apart, and compiled ahead with the parallel kernels by digraph.warmup."""

import numpy as np

import digraph
from digraph.dispatch import convergence
from digraph.dispatch.engines.power import cpu as power_cpu
from digraph.dispatch.runtime.cpu_tasks import arc_tasks
from digraph.paths import condensation
from digraph.smx.cpu import serial


def test_pick_by_size_and_parallel_only():
    k, t = power_cpu._pull, power_cpu._pull_serial
    assert serial.pick(k, t, serial.SERIAL_ITEMS - 1) is t
    assert serial.pick(k, t, serial.SERIAL_ITEMS) is k
    with serial.parallel_only():
        assert serial.pick(k, t, 1) is k
    assert serial.pick(k, t, 1) is t


def test_twins_are_cached_apart():
    for k, t in [(power_cpu._pull, power_cpu._pull_serial),
                 (convergence.residual_norms, convergence.residual_norms_serial),
                 (condensation._split_arcs, condensation._split_arcs_serial)]:
        assert t.py_func.__qualname__ == k.py_func.__qualname__ + "_serial"
        assert t.targetoptions.get("parallel") in (None, False)
        assert k.targetoptions.get("parallel")


def test_twins_give_the_kernels_answers():
    rng = np.random.default_rng(3)
    n, m = 500, 4000
    g = digraph.Graph.from_arrays(rng.integers(0, n, m), rng.integers(0, n, m), num_vertices=n)
    x = rng.random(n)
    args = (arc_tasks(g, threads=2), g.in_offsets, g.in_sources, np.ones(1), False, rng.random(n), rng.random(n),
            rng.random(n), x)
    out_k, out_t = np.empty(n), np.empty(n)
    r_k = convergence.residual_norms(*args, out_k)
    r_t = convergence.residual_norms_serial(*args, out_t)
    assert np.array_equal(out_k, out_t)  # each entry is computed alone: the same
    assert np.allclose(r_k, r_t, rtol=1e-12, atol=0)  # the norms' sums, in another order
    cond = condensation.condensation_for(g)[0]
    comp = np.repeat(np.arange(cond.num_components), np.diff(cond.comp_offsets))
    pos = np.empty(n, np.int32)
    pos[cond.order] = np.arange(n, dtype=np.int32)
    split = (pos, comp, cond.comp_offsets, g.out_offsets, g.out_targets, g.in_offsets,
             g.in_sources, g.in_arcs)
    for a, b in zip(condensation._split_arcs(*split), condensation._split_arcs_serial(*split)):
        assert np.array_equal(a, b)


def test_warmup_compiles_the_twins_and_the_parallel_kernels():
    digraph.warmup(modes=["power"], families=["linear"], jobs=1)  # signatures seen here
    assert power_cpu._pull.signatures and power_cpu._pull_serial.signatures
    assert power_cpu._teleport.signatures and power_cpu._teleport_serial.signatures
