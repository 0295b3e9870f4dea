#!/usr/bin/env python3
"""Nsight Compute counters of the PTX model's twelve dwarf kernels, as the model suite times them.

Why: the static PTX model (``studies.ptx_model.scheduler``) sees neither caches nor coalescing nor stalls. Where a
dwarf's error stays above the thesis' Table 4.9 median, these counters say which assumption failed:
DRAM bytes against the bytes the model streams (reuse in L1/L2, or a footprint that stays in L2),
sectors per request (uncoalesced accesses), achieved occupancy, issue utilisation and the stall reasons
per issued instruction (barriers, memory, math pipes).

Each dwarf is launched twice, as the suite launches it (``dwarfs.DWARFS`` ``setup``, scale 1), and the
second launch is the one kept: it finds the caches as the timed repetitions do (``--cache-control none``;
``--clock-control none``: this project never changes the card's clocks).

On the GPU machine (ncu from the CUDA toolkit)::

    python scripts/ncu_dwarfs.py --out results/<key>/ncu-dwarfs-cuda.json

The worker side (``--worker``) is what ncu runs; it prints nothing on stdout (ncu's CSV goes there).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pytest_gpuperf.counters import ncu  # noqa: E402
from pytest_gpuperf.studies.ptx_model.dwarfs import DWARFS  # noqa: E402
from pytest_gpuperf.util.atomic import atomic_write_json  # noqa: E402

#: counters per dwarf: time, traffic at each level, coalescing, occupancy, issue and stall reasons
METRICS: tuple[str, ...] = (
    "gpu__time_duration.sum",
    "dram__bytes_read.sum", "dram__bytes_write.sum",
    "lts__t_sector_hit_rate.pct", "l1tex__t_sector_hit_rate.pct",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "smsp__inst_executed.sum", "smsp__issue_active.avg.pct_of_peak_sustained_active",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio",
)
LAUNCHES = 2  # per dwarf; the last one is kept (warm caches, as the suite's timed repetitions)


def worker(device_index: int) -> int:
    """Launch every dwarf ``LAUNCHES`` times on cuda:``device_index``, synchronising after each."""
    from pytest_gpuperf.devices import cuda as cudamod, open_device

    dev = open_device({d.index: d for d in cudamod.list_devices()}[device_index])
    for d in DWARFS:
        kern = dev.compile(d.source, d.name)
        launch = d.setup(dev, 1)
        for _ in range(LAUNCHES):
            dev.launch(kern, (launch.grid * launch.block,), (launch.block,), launch.args)
            dev.synchronize(30.0)
        dev.release_pooled_memory()
    return 0


def profile(device_index: int, timeout_s: float) -> dict[str, object]:
    exe = ncu.require_ncu()
    names = "|".join(re.escape(d.name) for d in DWARFS)
    metrics = list(METRICS)
    dropped: list[str] = []
    for _ in range(3):
        opts = list(ncu.NCU_OPTIONS)
        opts[opts.index("--cache-control") + 1] = "none"  # warm caches, as the suite times (see docstring)
        cmd = [exe, *opts, "--metrics", ",".join(metrics), "--kernel-name", f"regex:^({names})$",
               sys.executable, str(Path(__file__).resolve()), "--worker", "--device", str(device_index)]
        rc, out, err, wall = ncu.run_command(cmd, timeout_s)
        problem = ncu.diagnose(out + err, rc, metrics)
        if isinstance(problem, ncu.NcuMetricError):
            dropped += problem.metrics
            metrics = [m for m in metrics if m not in problem.metrics]
            continue
        if problem is not None:
            raise problem
        break
    results = ncu.parse_csv(out)
    kept: dict[str, dict[str, object]] = {}
    for r in results:  # the last launch of each dwarf wins
        name = next((d.name for d in DWARFS if re.search(rf"\b{re.escape(d.name)}\b", r.kernel)), r.kernel)
        kept[name] = {"kernel": r.kernel, "block": list(r.block), "grid": list(r.grid), **r.values,
                      "units": dict(r.units)}
    return {"tool": "scripts/ncu_dwarfs.py", "ncu": ncu.version(exe), "options": opts, "metrics": metrics,
            "dropped_metrics": dropped, "launches_per_dwarf": LAUNCHES, "profiled": len(results),
            "wall_s": round(wall, 1), "dwarfs": kept}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--timeout-s", type=float, default=240.0)
    args = ap.parse_args(argv)
    if args.worker:
        return worker(args.device)
    from pytest_gpuperf.devices import cuda as cudamod
    info = {d.index: d for d in cudamod.list_devices()}[args.device]
    doc = {"device": {"name": info.name, "key": info.key}, **profile(args.device, args.timeout_s)}
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_json(args.out, doc)
    for name, v in doc["dwarfs"].items():  # type: ignore[union-attr]
        print(f"{name:24} {v.get('gpu__time_duration.sum', float('nan')):10.0f} {v['units'].get('gpu__time_duration.sum')}  "
              f"DRAM {(v.get('dram__bytes_read.sum', 0) + v.get('dram__bytes_write.sum', 0)) / 1e6:8.2f} MB  "
              f"L2 hit {v.get('lts__t_sector_hit_rate.pct', float('nan')):5.1f} %")
    return 0 if doc["dwarfs"] else 1


if __name__ == "__main__":
    sys.exit(main())
