#!/usr/bin/env python3
"""Does the single-thread L2 latency (``model.ptx.global_latency.single_thread.cycles``) depend on where
the chain array lands in physical memory? One process, one card: allocate the same 1 MiB chain (same
permutation) ``--allocations`` times, keeping every earlier allocation alive so each lands on fresh
pages, and measure the single-thread point (one untimed launch, three timed) on each. Within-allocation
spread vs across-allocation spread says whether the run-to-run spread of that metric is placement.

    python scripts/l2_placement.py --allocations 12 --out results/<key>/l2-placement-cuda.json
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pytest_gpuperf.probes import global_latency as gl  # noqa: E402
from pytest_gpuperf.probes.memory import chase_array  # noqa: E402
from pytest_gpuperf.util.atomic import atomic_write_json  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--allocations", type=int, default=12)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    from pytest_gpuperf.devices import cuda as cudamod, open_device

    dev = open_device({d.index: d for d in cudamod.list_devices()}[args.device])
    kernel, _ = gl.build(dev)
    host = chase_array(gl.FOOTPRINT, gl.LINE)
    keep, rows = [], []
    for i in range(args.allocations):
        chain = dev.to_device(host)
        keep.append(chain)
        p = gl.measure_point(dev, kernel, chain, gl.Launch(1, 1), 30.0)
        again = gl.measure_point(dev, kernel, chain, gl.Launch(1, 1), 30.0)  # same allocation, measured again
        rows.append({"allocation": i, "cycles": round(p.cycles, 2), "per_launch": [round(v, 2) for v in p.per_launch],
                     "again": round(again.cycles, 2)})
        print(rows[-1], flush=True)
    c = np.array([r["cycles"] for r in rows])
    within = float(np.max([abs(r["cycles"] - r["again"]) for r in rows]))
    doc = {"tool": "scripts/l2_placement.py", "device": dev.info.name, "clock_mhz": dev.info.clock_mhz,
           "allocations": rows, "across_min": float(c.min()), "across_max": float(c.max()),
           "across_median": float(np.median(c)), "across_range_rel": float((c.max() - c.min()) / np.median(c)),
           "within_max_abs_diff": within}
    print({k: v for k, v in doc.items() if k != "allocations"})
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_json(args.out, doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
