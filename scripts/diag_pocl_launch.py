"""Why do PoCL's launch times read 1 µs in one run and 11–20 µs in another? Separates the hypotheses.

Empty kernels are timed exactly as the suites time them (``Device.timed``: one gated launch, its event's
start→end), under conditions that each hypothesis predicts differently:

* **worker sleep / wake-up** — the per-launch time depends on how long the host paused before the
  launch (``gap``: 0, 0.2, 2, 20 ms): a worker that idled long enough to sleep pays a wake-up inside the
  event span; a launch whose groups reach two workers (2 groups) pays it more often than one.
* **first-run compilation / kernel cache** — a fresh ``POCL_CACHE_DIR`` (a subprocess with an empty
  one) against the same measurement with the cache warm: compilation happens at build/first enqueue,
  outside the timed span, so it should not move the per-launch figure.
* **CPU frequency** — ``cpu MHz`` of /proc/cpuinfo before and after every condition.
* **core contention** — the host's 2 cores hold the Python thread that enqueues and polls, PoCL's
  worker threads (one per core) and any neighbour: the same measurement with a busy neighbour process
  pinned to nothing (``neighbour``), and with PoCL limited to one worker (``POCL_MAX_PTHREAD_COUNT=1``),
  so workers + host no longer outnumber the cores.

Usage: ``python scripts/diag_pocl_launch.py [--out FILE]`` (about a minute on a 2-core host). Prints a
table (p10 / median / p90 µs and the share of launches above 5 µs per condition) and writes JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any

import numpy as np

SRC = "__kernel void empty_kernel(int x) { }"
GAPS_MS = (0.0, 2.0, 20.0)
SLOW_US = 5.0


def cpu_mhz() -> list[float]:
    """``cpu MHz`` of every core (what the kernel reports; a VM may pin it)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            return [float(line.split(":")[1]) for line in f if line.startswith("cpu MHz")]
    except OSError:
        return []


def summary(us: list[float]) -> dict[str, Any]:
    a = np.asarray(us)
    return {"n": int(a.size), "p10": float(np.percentile(a, 10)), "median": float(np.median(a)),
            "p90": float(np.percentile(a, 90)), "slow_share": float(np.mean(a > SLOW_US))}


def measure(n: int) -> dict[str, Any]:
    """Every condition in this process: per-launch µs for each gap and grid, and back-to-back spans."""
    from pytest_gpuperf.devices import discover, open_device

    info = next(d for d in discover().devices if d.backend == "opencl")
    dev = open_device(info)
    t0 = time.perf_counter()
    k = dev.compile(SRC, "empty_kernel")
    compile_s = time.perf_counter() - t0
    arg = [np.int32(0)]
    out: dict[str, Any] = {"device": info.name, "compute_units": info.compute_units, "compile_s": compile_s,
                           "conditions": {}}
    for _ in range(20):  # warm-up: first launches of each grid
        for groups in (1, 2):
            dev.elapsed(dev.timed(lambda g=groups: dev.launch(k, (g * 64,), (64,), arg)), 10.0)
    for groups in (1, 2):
        for gap in GAPS_MS:
            mhz0 = cpu_mhz()
            us = []
            for _ in range(n):
                if gap:
                    time.sleep(gap / 1e3)
                us.append(dev.elapsed(dev.timed(lambda g=groups: dev.launch(k, (g * 64,), (64,), arg)), 10.0) * 1e6)
            out["conditions"][f"{groups}x64 gap {gap:g} ms"] = {**summary(us), "mhz": [mhz0, cpu_mhz()]}
        # back-to-back: 32 launches behind one gate, per launch
        spans = [dev.elapsed(dev.timed(lambda g=groups: [dev.launch(k, (g * 64,), (64,), arg) for _ in range(32)]),
                             10.0) * 1e6 / 32 for _ in range(max(8, n // 8))]
        out["conditions"][f"{groups}x64 back-to-back x32"] = summary(spans)
    dev.close()
    return out


def table(runs: dict[str, Any]) -> str:
    """The printed comparison: one line per condition and variant."""
    lines = [f"{'condition':28s} {'variant':19s} {'p10':>7s} {'median':>7s} {'p90':>7s} {'>5us':>5s}  MHz"]
    for cond in next(iter(runs.values()))["conditions"]:
        for label, doc in runs.items():
            c = doc["conditions"][cond]
            mhz = [f for m in c.get("mhz", []) for f in m]
            span = f"{min(mhz):.0f}-{max(mhz):.0f}" if mhz else ""
            lines.append(f"{cond:28s} {label:19s} {c['p10']:7.2f} {c['median']:7.2f} {c['p90']:7.2f} "
                         f"{c['slow_share']:5.0%}  {span}")
    lines += [f"compile ({label}): {doc['compile_s'] * 1e3:.0f} ms" for label, doc in runs.items()]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None)
    ap.add_argument("-n", type=int, default=150, help="launches per condition")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--show", default=None, metavar="FILE", help="print the table of a saved --out file")
    args = ap.parse_args()
    if args.show:
        with open(args.show, encoding="utf-8") as f:
            print(table(json.load(f)["runs"]))
        return 0
    if args.child:
        print(json.dumps(measure(args.n)))
        return 0
    cache = tempfile.mkdtemp(prefix="diag-pocl-cache-")
    runs = {}
    variants = [("fresh cache", {}, False), ("warm cache", {}, False), ("warm cache again", {}, False),
                ("neighbour", {}, True), ("1 worker", {"POCL_MAX_PTHREAD_COUNT": "1"}, False),
                ("1 worker+neighbour", {"POCL_MAX_PTHREAD_COUNT": "1"}, True)]
    for label, env, neighbour in variants:
        busy = (subprocess.Popen([sys.executable, "-c", "while True: pass"]) if neighbour else None)
        try:
            proc = subprocess.run([sys.executable, __file__, "--child", "-n", str(args.n)], capture_output=True,
                                  text=True, env={**os.environ, "POCL_CACHE_DIR": cache, **env}, check=True)
        finally:
            if busy is not None:
                busy.kill()
                busy.wait()
        runs[label] = json.loads(proc.stdout.strip().splitlines()[-1])
    print(table(runs))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump({"runs": runs, "load_before": os.getloadavg()}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
