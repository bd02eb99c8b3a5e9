"""Anderson's state on the GPU (:mod:`digraph.smx.cuda.anderson_state`, the sharded power
iteration's rounds queued with no host wait): the one-thread solve takes the host's
:class:`digraph.dispatch.anderson.Anderson` decisions step for step — the record slots, the
third-round probe, the restarts (a growing difference, a zero pivot, a coefficient too large),
the coefficients — from a table of per-GPU rows, and the mix uses them."""

import numpy as np
import pytest

from digraph.dispatch.anderson import Anderson
from digraph.smx.cuda import anderson_state as AS
from digraph.smx.cuda import anderson

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("one_gpu")]

BASE = 4  # the dots' first column in a shard's accumulator row (multi_gpu_power)


def _device(be, a):
    a = np.asarray(a, np.float64)
    return a.copy() if be.sim else be.xp.asarray(a)


def _host(be, a):
    return np.array(a) if be.sim else a.get()


def _rows(rng, k, mem, diff, cnt, scale=1.0):
    """A table of ``k`` rows whose sums give ``‖f‖₁ = diff`` and random dots of ``cnt`` slots:
    ``a`` the Gram row of a random set of differences (positive definite), ``b`` random."""
    w = 5 + 2 * mem
    rows = np.zeros((k, w))
    parts = rng.dirichlet(np.ones(k))
    rows[:, 2] = diff * parts
    F = rng.standard_normal((cnt + 2, cnt)) * scale
    gram = F.T @ F
    a = gram[-1] if cnt else np.zeros(0)
    b = rng.standard_normal(cnt) * scale
    for i in range(cnt):
        rows[:, BASE + i] = a[i] * parts
        rows[:, BASE + mem + i] = b[i] * parts
    return rows


@pytest.mark.parametrize("start_ratio, diffs, seen", [
    (None, [1.0, 0.5, 0.3, 0.2, 0.25, 0.1, 0.05, 0.02, 0.01, 0.004], "restarts"),  # a growth
    (0.3, [1.0, 0.5, 0.3, 0.2, 0.1, 0.05, 0.02, 0.01], "mixes"),  # the probe's ratio 0.6
    (0.3, [1.0, 0.2, 0.04, 0.008, 0.001], "off"),  # the probe's ratio 0.2: switched off
])
def test_the_device_solve_follows_the_host(one_gpu, start_ratio, diffs, seen):
    be = one_gpu
    mem, k = 4, 3
    rng = np.random.default_rng(7)
    host = Anderson(mem, start_ratio=start_ratio)
    ctl = _device(be, AS.ctl_start(mem))
    gram = _device(be, np.zeros(anderson.MAX_MEMORY ** 2))
    for r, diff in enumerate(diffs):
        slot = host.record_slot() if host.memory else None
        c = _host(be, ctl)
        # the record pass reads its slot from ctl: the host's record_slot()
        assert bool(c[AS.REC]) == (slot is not None)
        if slot is not None:
            assert (int(c[AS.REC_J]), int(c[AS.REC_CNT])) == slot
        cnt = 0 if slot is None else slot[1]
        rows = _rows(rng, k, mem, diff, cnt)
        sums = rows.sum(axis=0)
        want = host.solve(sums[2], None if slot is None else sums[BASE:BASE + cnt],
                          None if slot is None else sums[BASE + mem:BASE + mem + cnt])
        be.launch(AS.anderson_solve_rows, 1, AS.SOLVE_THREADS, _device(be, rows), BASE, mem, ctl,
                  gram, host.reg, host.max_coef, -1.0 if start_ratio is None else start_ratio)
        c = _host(be, ctl)
        got = int(c[AS.MIX])
        assert got == (0 if want is None else len(want)), r
        if want is not None:
            np.testing.assert_allclose(c[AS.GAMMA:AS.GAMMA + got], want, rtol=1e-9, atol=1e-12)
        assert (int(c[AS.COUNT]), int(c[AS.SLOT])) == (host.count, host.slot)
        assert (int(c[AS.RESTARTS]), int(c[AS.MIXES])) == (host.restarts, host.mixes)
        assert int(c[AS.MEMORY]) == host.memory
        assert (c[AS.PROBE] < 0) == (host.probe_ratio is None)
    assert {"restarts": host.restarts > 0, "mixes": host.mixes > 0,
            "off": host.memory == 0}[seen]


def test_a_singular_or_wild_solve_restarts(one_gpu):
    be = one_gpu
    mem, k = 2, 2
    for scale, why in ((0.0, "zero pivot"), (1e-200, "coefficients too large")):
        ctl = _device(be, AS.ctl_start(mem))
        gram = _device(be, np.zeros(anderson.MAX_MEMORY ** 2))
        host = Anderson(mem, reg=0.0 if scale == 0.0 else 1e-10)
        for r, diff in enumerate([1.0, 0.5, 0.25]):
            slot = host.record_slot()
            cnt = 0 if slot is None else slot[1]
            rows = np.zeros((k, 5 + 2 * mem))
            rows[:, 2] = diff / k
            if cnt:  # a Gram row of zeros (singular) or a tiny one with a large right side
                rows[:, BASE:BASE + cnt] = scale
                rows[:, BASE + mem:BASE + mem + cnt] = 1.0
            sums = rows.sum(axis=0)
            want = host.solve(sums[2], None if slot is None else sums[BASE:BASE + cnt],
                              None if slot is None else sums[BASE + mem:BASE + mem + cnt])
            be.launch(AS.anderson_solve_rows, 1, AS.SOLVE_THREADS, _device(be, rows), BASE, mem,
                      ctl, gram, host.reg, host.max_coef, -1.0)
            c = _host(be, ctl)
            assert want is None and int(c[AS.MIX]) == 0, why
            assert int(c[AS.RESTARTS]) == host.restarts, why
        assert host.restarts == 2, why


def test_the_mix_uses_the_solve_and_keeps_the_power_step(one_gpu):
    be = one_gpu
    from digraph.smx.cuda.common import HB
    rng = np.random.default_rng(3)
    n, mem = 100, 4
    g = rng.random(n)
    dG = rng.standard_normal((mem, n)) * 0.01
    scale = rng.random(n)
    gamma = [0.3, -0.2, 0.0, 0.0]
    ctl = np.array(AS.ctl_start(mem))
    acc = np.zeros(2)
    for cnt in (2, 0):
        ctl[AS.MIX] = cnt
        ctl[AS.GAMMA:AS.GAMMA + cnt] = gamma[:cnt]
        dg, z, out, dacc = (_device(be, g), _device(be, np.full(n, -1.0)),
                            _device(be, np.zeros(n)), _device(be, acc))
        be.launch(AS.anderson_mix_ctl, 2, HB, dg, _device(be, dG), _device(be, ctl),
                  _device(be, scale), z, out, dacc, 1)
        want = np.maximum(g - np.asarray(gamma[:cnt]) @ dG[:cnt], 0.0) if cnt else g
        np.testing.assert_allclose(_host(be, out), want, rtol=1e-14)
        np.testing.assert_array_equal(_host(be, dg), g)  # the power step stays
        if cnt:
            np.testing.assert_allclose(_host(be, z), scale * want, rtol=1e-14)
            assert _host(be, dacc)[1] == pytest.approx(want.sum(), rel=1e-13)
        else:  # the plain step: z is the teleport's, nothing added
            assert (_host(be, z) == -1.0).all() and _host(be, dacc)[1] == 0.0
