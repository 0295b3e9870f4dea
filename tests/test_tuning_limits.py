"""Work-group limits: the register-file bound, PTX directives and driver build logs (limits.py)."""

from __future__ import annotations

import pytest

from pytest_gpuperf.tuning.limits import explain, log_registers, ptx_directives, register_limit


@pytest.mark.parametrize("regs,expected", [
    (0, 1024),    # unknown: the device maximum
    (32, 1024),   # 1024 regs/warp · 32 warps = 32 K ≤ 64 K
    (64, 1024),   # 2048 regs/warp · 32 warps = 64 K: exactly fits (why -cl-nv-maxrregcount=64)
    (65, 896),    # ceil(65·32/256)·256 = 2304 per warp → 65536 // 2304 = 28 warps
    (128, 512),   # 4096 per warp → 16 warps
    (255, 256),   # 8192 per warp → 8 warps: a 256 limit means ≥ 228 registers
    (204, 288),   # ceil(204·32/256)·256 = 6656 per warp → 65536 // 6656 = 9 warps
])
def test_register_limit(regs, expected):
    assert register_limit(regs) == expected


def test_register_limit_respects_device_max_and_warp():
    assert register_limit(16, device_max=512) == 512
    assert register_limit(64, regs_per_block=32768) == 512


def test_ptx_directives_and_log():
    ptx = ".visible .entry k(\n.param .u64 a\n)\n.maxntid 256, 1, 1\n{\n ret;\n}\n"
    assert ptx_directives(ptx) == {"maxntid": "256, 1, 1"}
    assert ptx_directives(".visible .entry k()\n{\n ret;\n}") == {}
    log = "ptxas info    : Compiling entry function 'k' for 'sm_90'\nptxas info    : Used 40 registers, 368 bytes cmem[0]"
    assert log_registers(log) == 40
    assert log_registers("") is None


def test_explain_names_the_binding_limit():
    assert "device maximum" in explain(1024, 1024, 30, 65536, 32)
    assert "register-bound" in explain(1024, 256, 240, 65536, 32)
    assert "not explained by registers" in explain(1024, 256, 20, 65536, 32)


def test_launch_probe_accepts_a_verified_launch_and_keeps_the_limit_on_refusal(gpu_device):
    """The opt-in launch probe (GPUPERF_TUNING_PROBE_LIMIT=1) on a real device: a group of the device
    maximum that launches and matches NumPy extends the space; one beyond it is refused and the
    reported limit stays."""
    from pytest_gpuperf.tuning.evaluate import Config, Evaluator
    from pytest_gpuperf.tuning.kernels import by_name
    from pytest_gpuperf.tuning.limits import _probe_launch
    from pytest_gpuperf.tuning.tuner import tuning_config

    bench = by_name("matvec_row")
    ev = Evaluator(gpu_device, bench, bench.sizes(gpu_device), tuning_config(gpu_device))
    dev_max = int(gpu_device.info.max_work_group_size)
    info: dict = {}
    assert _probe_launch(ev, Config((ev.warp,)), ev.warp, dev_max, info) == dev_max
    assert "matched NumPy" in info["launch_probe"]
    info = {}
    assert _probe_launch(ev, Config((ev.warp,)), ev.warp, 2 * dev_max, info) == ev.warp
    assert "refused or wrong" in info["launch_probe"]
