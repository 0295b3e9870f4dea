"""Occupancy calculator (Lim Eqs. 3.1-3.5) against cases computed by hand from the per-SM limits."""

from __future__ import annotations

import pytest

from pytest_gpuperf.tuning.occupancy import calculate, sm_limits

H100 = sm_limits("9.0")  # 64 warps, 32 blocks, 64K regs (unit 256), 228 KiB shared (+1 KiB/block reserved)
TITANX = sm_limits("5.2")  # Dao's GTX Titan X


@pytest.mark.parametrize("lim,threads,regs,shared,blocks,warps,limiter", [
    # 256 threads, 32 regs: 8 warps/block; warps 64//8=8; regs 65536/(1024·8)=8 → 8 blocks, 64 warps
    (H100, 256, 32, 0, 8, 64, "warps"),
    # 128 threads, 64 regs: 2048 regs/warp · 4 warps = 8192 per block → 8 blocks → 32 warps
    (H100, 128, 64, 0, 8, 32, "registers"),
    # 64 threads, 48 KiB shared: ceil((49152+1024)/128)·128 = 50176 → 233472//50176 = 4 blocks
    (H100, 64, 16, 49152, 4, 8, "shared"),
    # one warp per block: the 32-block limit leaves half the warps idle
    (H100, 32, 0, 0, 32, 32, "blocks"),
    # 255 registers is the per-thread maximum; 256 cannot launch
    (H100, 32, 256, 0, 0, 0, "registers"),
    # Maxwell, 192 threads, 40 regs: 1280 regs/warp · 6 warps → 65536//7680 = 8 blocks → 48 warps (75 %)
    (TITANX, 192, 40, 0, 8, 48, "registers"),
    # Maxwell, 96 threads, 0 shared: warps 64//3 = 21 blocks, under the 32-block limit → 63 warps
    (TITANX, 96, 16, 0, 21, 63, "warps"),
])
def test_hand_computed(lim, threads, regs, shared, blocks, warps, limiter):
    occ = calculate(lim, threads, regs, shared)
    assert (occ.blocks, occ.warps, occ.limiter) == (blocks, warps, limiter)
    assert occ.occupancy == pytest.approx(warps / lim.max_warps)


def test_unknown_architecture_and_bad_input():
    assert sm_limits("") is None and sm_limits("1.0") is None
    with pytest.raises(ValueError, match="at least one work-item"):
        calculate(H100, 0, 32, 0)


def test_device_reported_limits_override_table():
    lim = sm_limits("9.0", {"max_threads_per_sm": 1536, "max_blocks_per_sm": 16})
    assert lim.max_warps == 48 and lim.max_blocks == 16


def test_resources_once_per_build(gpu_device, monkeypatch):
    """Every size of a kernel without ``-DWG=`` is the same build: its resources (ptxas -v or the
    verbose driver build on NVIDIA OpenCL) are read once, not once per size."""
    import dataclasses

    from pytest_gpuperf.tuning import occupancy
    from pytest_gpuperf.tuning.evaluate import Config, Evaluator
    from pytest_gpuperf.tuning.kernels import by_name
    from pytest_gpuperf.tuning.tuner import tuning_config

    calls = []
    real = occupancy._resources
    monkeypatch.setattr(occupancy, "_resources", lambda k: calls.append(k.options) or real(k))
    bench = dataclasses.replace(by_name("matvec_row"), source=by_name("matvec_row").source + "\n// fresh build\n")
    ev = Evaluator(gpu_device, bench, {"m": 64, "n": 32}, tuning_config(gpu_device))
    w = ev.warp
    got = {occupancy.resources(ev.kernel(Config((s,)))) for s in (w, 2 * w, 3 * w)}
    assert len(got) == 1 and len(calls) == 1


def test_lim_static_and_rules_keep_t_star(gpu_device):
    """Lim's T* on a real device's compiled kernel (the H100 limits stand in where the device has no SM
    model): lim_static visits exactly the occupancy maximisers; without a PTX mix (non-NVIDIA) the
    rule is balanced and lim_rules keeps the same set."""
    import math

    from pytest_gpuperf.tuning.kernels import by_name
    from pytest_gpuperf.tuning.strategies import lim_rules, lim_static
    from pytest_gpuperf.tuning.tuner import context

    ctx = context(gpu_device, by_name("matvec_row"), {"m": 64, "n": 32})
    if ctx.sm is None:
        ctx.sm = H100
    occ = {c: ctx.occupancy(c).occupancy for c in ctx.space}
    top = max(occ.values())
    t_star = {c for c in ctx.space if math.isclose(occ[c], top)}
    ls = lim_static(ctx)
    assert set(ls.ledger.visited) == t_star and ls.pruning["after_static"] == len(t_star) and ls.best in t_star
    lr = lim_rules(ctx)
    assert lr.pruning["after_static"] == len(t_star) and set(lr.ledger.visited) <= t_star
