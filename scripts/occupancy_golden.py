"""Write ``tests/data/occupancy_golden.json.gz``: what each of the three former occupancy calculators
returned at commit 7419ccc, over a grid of threads × registers × shared bytes, for every compute
capability each one tabled (and the CPU/PoCL path).

Why: the calculators were merged into :mod:`pytest_gpuperf.devices.occupancy`; the H100 baselines were
measured with the old values (the sampled model's P_sat, the scheduler's threads per SM, Lim's
occupancy), so ``tests/test_devices_occupancy.py`` asserts that the merged module reproduces every one.

The old code is read from git (``git show REV:path``) and executed in place of the modules, so the
file can be regenerated from any checkout that has the revision:

    python scripts/occupancy_golden.py [REV]
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import subprocess
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REV = sys.argv[1] if len(sys.argv) > 1 else "7419ccc"
THREADS = (1, 32, 33, 64, 96, 128, 192, 256, 384, 512, 768, 1024)
REGS = (0, 8, 16, 32, 40, 64, 96, 128, 255, 256)
SHARED = (0, 1, 1024, 16384, 49152, 65536, 100000, 166912, 232448, 240000)
#: What the CUDA backend reports on an H100 (cuDeviceGetAttribute), as tuning's sm_limits reads it.
H100_EXTRA = {"max_threads_per_sm": 2048, "max_blocks_per_sm": 32, "regs_per_sm": 65536,
              "max_shared_per_sm": 233472, "max_shared_per_block_optin": 232448}


def _old(path: str, name: str, package: str, inject: dict[str, types.ModuleType] | None = None) -> types.ModuleType:
    src = subprocess.run(["git", "show", f"{REV}:{path}"], cwd=ROOT, check=True, capture_output=True,
                         text=True).stdout
    spec = importlib.util.spec_from_loader(f"{package}.{name}", loader=None)
    mod = importlib.util.module_from_spec(spec)
    mod.__package__ = package
    saved = {k: sys.modules.get(k) for k in (inject or {})}
    sys.modules.update(inject or {})
    sys.modules[mod.__name__] = mod
    try:
        exec(compile(src, f"{REV}:{path}", "exec"), mod.__dict__)
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    return mod


def main() -> None:
    sys.path.insert(0, str(ROOT))
    from pytest_gpuperf.devices.base import DeviceInfo

    sampling = _old("pytest_gpuperf/models/sampling.py", "_old_sampling", "pytest_gpuperf.models")
    scheduler = _old("pytest_gpuperf/models/scheduler.py", "_old_scheduler", "pytest_gpuperf.models",
                     {"pytest_gpuperf.models.sampling": sampling})
    occupancy = _old("pytest_gpuperf/tuning/occupancy.py", "_old_occupancy", "pytest_gpuperf.tuning")
    grid = [(t, r, s) for t in THREADS for r in REGS for s in SHARED]
    out: dict = {"rev": REV, "grid": {"threads": THREADS, "regs": REGS, "shared": SHARED},
                 "sampling": {}, "sampling_cpu": {}, "scheduler": {}, "scheduler_resident": {}, "tuning": {}}
    for cc in sampling.SM_LIMITS:
        for warp in (32, 0):
            info = DeviceInfo(backend="cuda", index=0, name="x", vendor="NVIDIA", key="x", compute_capability=cc,
                              compute_units=132, warp_size=warp)
            for style in ("cuda", "opencl"):
                rows = []
                for t, r, s in grid:
                    attrs = {"num_regs": r, "shared_size_bytes": s} if style == "cuda" else {"local_bytes": s}
                    sat = sampling.saturation_point(info, attrs, t)
                    rows.append([sat.p_sat, sat.units, sat.limit])
                out["sampling"][f"{cc}/{warp}/{style}"] = rows
        out["scheduler"][cc] = [[o.threads_per_sm, o.limit] for o in
                                (scheduler.occupancy(cc, t, r, s) for t, r, s in grid)]
        out["scheduler_resident"][cc] = sampling.SM_LIMITS[cc][0]
    for units in (1, 2, 16):
        cpu = DeviceInfo(backend="opencl", index=0, name="cpu", vendor="pocl", key="cpu", compute_units=units,
                         is_cpu=True)
        out["sampling_cpu"][str(units)] = [[s.p_sat, s.units, s.limit] for s in
                                           (sampling.saturation_point(cpu, {"num_regs": r}, t)
                                            for t, r, _ in grid)]
    for cc in occupancy._TABLE:
        for tag, extra in (("table", None), ("h100-extra", H100_EXTRA)):
            lim = occupancy.sm_limits(cc, extra)
            rows = []
            for t, r, s in grid:
                o = occupancy.calculate(lim, t, r, s)
                rows.append([o.blocks, o.warps, o.occupancy, o.limiter])
            out["tuning"][f"{cc}/{tag}"] = rows
    out["tuning_none"] = [cc for cc in ("", "1.0", "3.5", "10.0") if occupancy.sm_limits(cc) is None]
    dest = ROOT / "tests" / "data" / "occupancy_golden.json.gz"
    dest.write_bytes(gzip.compress(json.dumps(out, sort_keys=True).encode(), mtime=0))
    print(f"wrote {dest} ({dest.stat().st_size} bytes) from {REV}")


if __name__ == "__main__":
    main()
