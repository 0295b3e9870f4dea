"""Where does the run-to-run spread of an empty launch's device time live: in the process, or in the queue
the launches are issued on?

Unchanged runs of one GPU machine read ``launch.empty.device_us`` several percent apart while the spans within
one run agree closely. This study times the same spans (:func:`launch_overhead.per_launch_us`, on a GPU 200
back-to-back launches per event pair) round-robin on several queues of one process, so three spreads sit side
by side: ``within_queue_pct`` (one queue's rounds), ``between_queues_pct`` (the queues' medians) and, over the
child processes the suite measures in, ``between_processes_pct``. Which one holds the spread says what a
better launch figure would average over (docs/probes.md, "Where the launch rate lives").

Queues once made stay for the process's life, and a process that made more of them launches slower on all of
them, so the study runs in child processes of its own (:func:`isolated_record`): the figures the suites measure
after it do not depend on whether it ran.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import asdict
from typing import Any

import numpy as np

from ..baselines.classes import PER_SPAN
from ..devices.base import Device, DeviceInfo, Kernel
from ..errors import ProbeVerificationError
from ..timing.measure import MeasureConfig
from ..timing.stats import Stats, spread_pct
from .launch_overhead import EMPTY_NAME, empty_source, per_launch_us, span_identity, span_launches

#: queues per process on a GPU (the device's own and seven more); two on a CPU device, where the study only
#: exercises the path (a CPU device's queues share one pool of worker threads)
GPU_QUEUES = 8
CPU_QUEUES = 2
#: passes over the queues: each queue's rounds give its own spread
ROUNDS = 3
#: processes the suite's study measures in, one after another (:func:`isolated_record`): their spread is the
#: per-process spread of the launch figures, read within one run
GPU_PROCESSES = 4
CPU_PROCESSES = 2


def queue_count(device: Device) -> int:
    """How many queues the study spreads its spans over on ``device``."""
    return CPU_QUEUES if device.info.is_cpu else GPU_QUEUES


def stream_record(device: Device, measurer: Any, kernel: Kernel, queues: int | None = None,
                  rounds: int = ROUNDS) -> dict[str, Any]:
    """``launch.streams.empty.device_us`` as ``gpuperf_record`` arguments: the mean over ``queues`` queues of
    each queue's median per-launch time over ``rounds`` round-robin passes; ``info`` holds every queue's
    rounds and the two spreads the study compares. ``measurer``: the test's ``gpu_measure``."""
    k = queue_count(device) if queues is None else int(queues)
    if k < 2 or rounds < 2:
        raise ValueError(f"the study needs at least two queues and two rounds, got {k} and {rounds}")
    n = span_launches(device.info)
    arg = [np.int32(0)]
    per: list[list[float]] = [[] for _ in range(k)]
    for _ in range(rounds):
        for q in range(k):
            with device.on_queue(q):
                per[q].append(per_launch_us(device, measurer, kernel, (1,), (1,), arg, n).median)
    medians = [float(np.median(r)) for r in per]
    info = {PER_SPAN: n, "queues": k, "rounds": rounds,
            "per_queue_us": [[round(v, 6) for v in r] for r in per],
            "within_queue_pct": round(float(np.median([spread_pct(r) for r in per])), 4),
            "between_queues_pct": round(spread_pct(medians), 4)}
    return {"name": "launch.streams.empty.device_us", "value": float(np.mean(medians)), "unit": "us",
            "better": "lower", "stats": Stats.of(medians), "info": info,
            "identity": {**span_identity(n), "queues": k, "rounds": rounds}}


#: the measurement windows' observations a child hands back to the run that started it (``Device`` lists the
#: session summarises into each metric's ``info``: host load, the card's tenants, board readings)
OBSERVED = ("observations", "tenant_observations", "power_observations")


def _child(info: DeviceInfo, config: MeasureConfig, timeout_s: float) -> dict[str, Any]:
    """:func:`stream_record` measured in one child process on the device ``info`` names (without its stats), with
    its windows' observations (:data:`OBSERVED`). The child counts this run's pids as its own
    (:data:`~pytest_gpuperf.devices.nvml.PARENT_ENV`): this run's context on the card is no tenant of the study."""
    from ..devices.nvml import PARENT_ENV, own_pids

    cmd = [sys.executable, "-m", __name__, info.spec, json.dumps(asdict(config))]
    env = {**os.environ, PARENT_ENV: ",".join(str(p) for p in sorted(own_pids()))}
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False, env=env)
    except subprocess.TimeoutExpired:
        raise ProbeVerificationError(f"the launch-queue study on {info.spec} did not finish within {timeout_s:.0f} s "
                                     "in its own process") from None
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise ProbeVerificationError(f"the launch-queue study runs in a process of its own, which failed on {info.spec} "
                                     f"(exit {done.returncode}): {' | '.join(tail)} — a card in exclusive-process "
                                     "compute mode refuses a second process; deselect it with -k 'not launch_streams'")
    return json.loads(done.stdout.strip().splitlines()[-1])


def process_count(info: DeviceInfo) -> int:
    """How many processes, one after another, the study measures in on the device ``info`` names."""
    return CPU_PROCESSES if info.is_cpu else GPU_PROCESSES


def isolated_record(device: Device, config: MeasureConfig, processes: int | None = None,
                    timeout_s: float = 300.0) -> dict[str, Any]:
    """:func:`stream_record` measured on ``device``'s card in ``processes`` child processes, one after another, so
    the queues each makes die with it, and the spread between processes stands beside the spread between one
    process's queues: the figure is the mean of the processes' figures (``stats`` over them),
    ``info["per_process"]`` holds each one's record info and ``between_processes_pct`` their spread. The
    children's measurement windows join ``device``'s observations, so the figure carries their marks."""
    info = device.info
    p = process_count(info) if processes is None else int(processes)
    if p < 1:
        raise ValueError(f"the study needs at least one process, got {p}")
    runs = [_child(info, config, timeout_s) for _ in range(p)]
    for r in runs:
        for name in OBSERVED:
            getattr(device, name).extend(r.pop(name, []))
    values = [float(r["value"]) for r in runs]
    first = runs[0]
    rec = {**first, "value": float(np.mean(values)), "stats": Stats.of(values)}
    rec["info"] = {PER_SPAN: first["info"][PER_SPAN], "queues": first["info"]["queues"],
                   "rounds": first["info"]["rounds"], "processes": p,
                   "per_process_us": [round(v, 6) for v in values],
                   "between_processes_pct": round(spread_pct(values), 4),
                   "between_queues_pct": round(float(np.median([r["info"]["between_queues_pct"] for r in runs])), 4),
                   "within_queue_pct": round(float(np.median([r["info"]["within_queue_pct"] for r in runs])), 4),
                   "per_process": [r["info"] for r in runs]}
    rec["identity"] = {**first["identity"], "processes": p}
    return rec


def _main(argv: list[str]) -> int:
    """The child of :func:`isolated_record`: ``SPEC CONFIG_JSON`` → the record as one JSON line (without stats)."""
    from ..devices import discover, open_device, resolve
    from ..helpers import Measurer

    spec, config = argv
    (info,) = resolve(spec, discover())
    device = open_device(info)
    try:
        kernel = device.compile(empty_source(device.info.dialect), EMPTY_NAME)
        rec = stream_record(device, Measurer(device, MeasureConfig(**json.loads(config))), kernel)
        rec.update({name: list(getattr(device, name)) for name in OBSERVED})
    finally:
        device.close()
    rec.pop("stats")
    print(json.dumps(rec, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
