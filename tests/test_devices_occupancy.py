"""The one occupancy model (:mod:`pytest_gpuperf.devices.occupancy`): hand-computed cases of the CUDA
calculator's rules (Lim Eqs. 3.1-3.5), equality with the three calculators it replaced (golden values
generated once from their code, before the merge), unknown devices as explicit
errors, and the CUDA driver's own occupancy query where CUDA exists."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from pytest_gpuperf.devices.base import DeviceInfo
from pytest_gpuperf.devices.architectures import ARCHITECTURES
from pytest_gpuperf.devices.occupancy import cuda_occupancy, sm_limits
from pytest_gpuperf.errors import UnsupportedDevice
from pytest_gpuperf.studies.ptx_model import scheduler
from pytest_gpuperf.studies.sampled.sampling import saturation_point
from pytest_gpuperf.tuning.tuner import sm_model

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
    occ = cuda_occupancy(lim, threads, regs, shared)
    assert (occ.blocks, occ.warps, occ.limiter) == (blocks, warps, limiter)
    assert occ.occupancy == pytest.approx(warps / lim.max_warps)


def test_unknown_architecture_and_bad_input():
    for cc in ("", "1.0", "10.0"):
        with pytest.raises(UnsupportedDevice, match="ARCHITECTURES" if cc else "no compute capability"):
            sm_limits(cc)
    with pytest.raises(ValueError, match="at least one work-item"):
        cuda_occupancy(H100, 0, 32, 0)


def test_device_reported_limits_override_table():
    lim = sm_limits("9.0", {"max_threads_per_sm": 1536, "max_blocks_per_sm": 16})
    assert lim.max_warps == 48 and lim.max_blocks == 16


def test_resources_once_per_build(gpu_device, monkeypatch):
    """Every size of a kernel without ``-DWG=`` is the same build: its resources (ptxas -v or the
    verbose driver build on NVIDIA OpenCL) are read once, not once per size."""
    import dataclasses

    from pytest_gpuperf.devices.resources import resources_of
    from pytest_gpuperf.tuning.evaluate import Config, Evaluator
    from pytest_gpuperf.tuning.kernels import by_name
    from pytest_gpuperf.tuning.tuner import tuning_config

    calls = []
    real = gpu_device.kernel_resources
    monkeypatch.setattr(gpu_device, "kernel_resources", lambda k: calls.append(k.options) or real(k))
    bench = dataclasses.replace(by_name("matvec_row"), source=by_name("matvec_row").source + "\n// fresh build\n")
    ev = Evaluator(gpu_device, bench, {"m": 64, "n": 32}, tuning_config(gpu_device))
    w = ev.warp
    got = {resources_of(ev.kernel(Config((s,)))) for s in (w, 2 * w, 3 * w)}
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


# ---- unchanged values: every former calculator's answer at 7419ccc -------------------------------------
GOLDEN = json.loads(gzip.decompress((Path(__file__).parent / "data" / "occupancy_golden.json.gz").read_bytes()))
GRID = [(t, r, s) for t in GOLDEN["grid"]["threads"] for r in GOLDEN["grid"]["regs"] for s in GOLDEN["grid"]["shared"]]
#: What the CUDA backend reports on an H100/H200 (cuDeviceGetAttribute) — the same numbers as the table.
SM90_EXTRA = {"max_threads_per_sm": 2048, "max_blocks_per_sm": 32, "regs_per_sm": 65536,
              "max_shared_per_sm": 233472, "max_shared_per_block_optin": 232448}


def _info(cc: str, warp: int, extra: dict | None = None) -> DeviceInfo:
    return DeviceInfo(backend="cuda", index=0, name="x", vendor="NVIDIA", key="x", compute_capability=cc,
                      compute_units=132, warp_size=warp, extra=extra or {})


@pytest.mark.parametrize("key", sorted(GOLDEN["sampling"]))
def test_sampled_model_saturation_unchanged(key):
    """Dao's P_sat (studies/sampled/sampling.py) as before, from the table and, on sm_90, from the driver's limits."""
    cc, warp, style = key.split("/")
    infos = [_info(cc, int(warp))] + ([_info(cc, int(warp), SM90_EXTRA)] if cc == "9.0" else [])
    for info in infos:
        got = []
        for t, r, s in GRID:
            attrs = {"num_regs": r, "shared_size_bytes": s} if style == "cuda" else {"local_bytes": s}
            sat = saturation_point(info, attrs, t)
            got.append([sat.p_sat, sat.units, sat.limit])
        assert got == GOLDEN["sampling"][key]


@pytest.mark.parametrize("units", sorted(GOLDEN["sampling_cpu"]))
def test_sampled_model_cpu_path_unchanged(units):
    cpu = DeviceInfo(backend="opencl", index=0, name="cpu", vendor="pocl", key="cpu", compute_units=int(units),
                     is_cpu=True)
    got = [[s.p_sat, s.units, s.limit] for s in (saturation_point(cpu, {"num_regs": r}, t) for t, r, _ in GRID)]
    assert got == GOLDEN["sampling_cpu"][units]


@pytest.mark.parametrize("cc", sorted(GOLDEN["scheduler"]))
def test_scheduler_occupancy_unchanged(cc):
    """Alavani's threads per SM (studies/ptx_model/scheduler.py) and the resident fraction's denominator, as before."""
    got = [[o.threads_per_sm, o.limit] for o in (scheduler.occupancy(cc, t, r, s) for t, r, s in GRID)]
    assert got == GOLDEN["scheduler"][cc]
    assert sm_limits(cc).max_threads == GOLDEN["scheduler_resident"][cc]


@pytest.mark.parametrize("key", sorted(GOLDEN["tuning"]))
def test_tuning_occupancy_unchanged(key):
    """Lim's CUDA-calculator occupancy (tuning), from the table and with the driver's H100 limits."""
    cc, tag = key.split("/")
    lim = sm_limits(cc, SM90_EXTRA if tag == "h100-extra" else None)
    got = [[o.blocks, o.warps, o.occupancy, o.limiter] for o in (cuda_occupancy(lim, t, r, s) for t, r, s in GRID)]
    assert got == GOLDEN["tuning"][key]


def test_every_old_table_row_is_in_the_one_table():
    assert set(GOLDEN["scheduler"]) | {k.split("/")[0] for k in GOLDEN["tuning"]} <= set(ARCHITECTURES)


def test_unknown_gpu_is_an_explicit_error_not_the_h100():
    """Before: an unknown compute capability became the H100 in the models and None in tuning."""
    b200 = _info("10.0", 32)
    with pytest.raises(UnsupportedDevice, match="compute capability 10.0"):
        saturation_point(b200, {"num_regs": 32}, 256)
    with pytest.raises(UnsupportedDevice, match="10.0"):
        scheduler.occupancy("10.0", 256, 32, 0)
    gpu_without_cc = DeviceInfo(backend="opencl", index=0, name="gfx90a", vendor="AMD", key="amd")
    with pytest.raises(UnsupportedDevice, match="no compute capability"):
        saturation_point(gpu_without_cc, {}, 64)


def test_tuning_sm_model_of_this_device(gpu_device):
    """Tuning on a device without an SM (PoCL, non-NVIDIA) gets no SM model, as before; an NVIDIA device
    gets its table row with the driver's limits."""
    info = gpu_device.info
    if info.compute_capability and not info.is_cpu:
        assert sm_model(gpu_device) == sm_limits(info.compute_capability, info.extra)
    else:
        assert sm_model(gpu_device) is None


# ---- the CUDA driver's own answer ---------------------------------------------------------------------
_REG_HEAVY = r"""
extern "C" __global__ void heavy(float* out, int n) {
    extern __shared__ float dyn[];
    float acc[24];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    #pragma unroll
    for (int k = 0; k < 24; ++k) acc[k] = out[(i + k * 977) % n] * (k + 1);
    #pragma unroll
    for (int k = 0; k < 24; ++k) acc[(k * 7) % 24] = acc[(k * 7) % 24] * acc[k] + acc[(k + 5) % 24];
    float s = 0.f;
    #pragma unroll
    for (int k = 0; k < 24; ++k) s += acc[k];
    if (blockDim.x > 0) dyn[threadIdx.x % 32] = s;
    __syncthreads();
    out[i % n] = s + dyn[(threadIdx.x + 1) % 32];
}
"""


def test_cuda_rules_match_the_driver():
    """``cuOccupancyMaxActiveBlocksPerMultiprocessor`` for real compiled kernels (register counts from the
    compiler, bounded by --maxrregcount) over block sizes and dynamic shared bytes: the CUDA rules give
    the same number of blocks per SM."""
    cupy = pytest.importorskip("cupy", reason="CUDA occupancy cross-check needs CuPy (pip install -e .[cuda])")
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # noqa: BLE001 - no driver / no device
        pytest.skip(f"no CUDA device: {type(exc).__name__}: {exc}")
    if count == 0:
        pytest.skip("no CUDA device")
    props = cupy.cuda.runtime.getDeviceProperties(0)
    cc = f"{props['major']}.{props['minor']}"
    extra = {"max_threads_per_sm": props["maxThreadsPerMultiProcessor"], "max_blocks_per_sm":
             props.get("maxBlocksPerMultiProcessor", 0), "regs_per_sm": props["regsPerMultiprocessor"],
             "max_shared_per_sm": props["sharedMemPerMultiprocessor"],
             "max_shared_per_block_optin": props.get("sharedMemPerBlockOptin", 0)}
    lim = sm_limits(cc, extra)  # an unknown cc fails here: the table must know every GPU we run on
    checked = 0
    for maxreg in (32, 64, 128, 255):
        kern = cupy.RawKernel(_REG_HEAVY, "heavy", options=(f"--maxrregcount={maxreg}",))
        kern.max_dynamic_shared_size_bytes = lim.shared_block - kern.attributes["shared_size_bytes"]
        regs, static = kern.attributes["num_regs"], kern.attributes["shared_size_bytes"]
        for block in (32, 64, 96, 128, 256, 384, 512, 768, 1024):
            if block > kern.attributes["max_threads_per_block"]:
                continue
            for dyn in (0, 1024, 12 * 1024, 48 * 1024, 100 * 1024):
                if static + dyn > lim.shared_block:
                    continue
                driver = cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(kern.kernel.ptr, block, dyn)
                ours = cuda_occupancy(lim, block, regs, static + dyn).blocks
                assert ours == driver, (cc, maxreg, regs, block, static + dyn)
                checked += 1
    assert checked > 50


def test_per_architecture_figures_live_in_one_table():
    """No module but devices/architectures.py keeps a table keyed by compute capability (``{"8.0": …,
    "9.0": …}``): the scheduler's units and the power model's issue widths are read from that table."""
    import ast
    import re

    from pytest_gpuperf.studies.static_power import power_model

    pkg = Path(__file__).resolve().parents[1] / "pytest_gpuperf"
    tables = []
    for path in pkg.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            keys = [k.value for k in getattr(node, "keys", []) or [] if isinstance(k, ast.Constant)
                    and isinstance(k.value, str) and re.fullmatch(r"\d+\.\d", k.value)]
            if isinstance(node, ast.Dict) and len(keys) >= 2:
                tables.append(f"{path.relative_to(pkg)}:{node.lineno}")
    assert [t.split(":")[0] for t in tables] == ["devices/architectures.py"], tables
    assert scheduler.units_per_sm("8.0") == ARCHITECTURES["8.0"].units
    assert scheduler.units_per_sm("7.5") == ARCHITECTURES["9.0"].units  # no unit counts for Turing: Hopper's
    assert power_model.issue_width("3.5") == (4, 8) and power_model.issue_width("7.5") == (4, 4)
