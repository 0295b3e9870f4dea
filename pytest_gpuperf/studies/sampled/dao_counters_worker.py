"""The process Nsight Compute profiles for Dao's counter model: each application kernel's two samples.

The parent (:mod:`.dao_counters`) writes a spec — per launch its kernel (an entry of the application
corpus), the size its problem is built at, the sampling point and its work-groups, in launch order — and
runs ``ncu … python -m pytest_gpuperf.studies.sampled.dao_counters_worker spec.json``. The worker opens the CUDA
device, and per kernel compiles it, builds and uploads its problem exactly as the study does
(:func:`.app_check.upload`, outputs unfilled), launches the first ``P1`` and then the first ``P2`` work-groups
once each, and releases the buffers before the next kernel (the largest problems hold gigabytes, and ncu's
replay saves and restores all memory a kernel may reach, pinned host memory included: the device's uploads
stage through none, :meth:`.CudaDevice.to_device`). It writes what it launched to a launch log the parent
checks against ncu's rows, and prints nothing on stdout: ncu's CSV goes there. On stderr it says, per kernel,
how long its problem took to build and upload and its two profiled launches took (replay passes included),
so a collection that runs out of time names the kernel and the step it was in.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ...counters.ncu_worker import read_spec_file, run_worker, write_spec_file

WORKER_SPEC_VERSION = 1


@dataclass(frozen=True)
class SampleLaunch:
    """One profiled launch: the ``index``-th of the plan, the first ``groups`` work-groups of ``local``
    work-items of ``kernel`` on its problem at ``size`` (``AppKernel.gpu``/``.tiny``), at ``point``."""

    index: int
    kernel: str
    size: str
    point: str
    groups: int
    local: int

    @property
    def tag(self) -> str:
        return f"{self.kernel}@{self.point}"


def write_spec(path: Path, launches: Sequence[SampleLaunch], device_index: int, launch_log: Path,
               sync_timeout_s: float = 60.0) -> None:
    """The worker's input: the device, the launches and where to write the launch log."""
    write_spec_file(path, WORKER_SPEC_VERSION, "launches", launches, device_index, launch_log, sync_timeout_s)


def read_spec(path: Path) -> dict[str, Any]:
    return read_spec_file(path, WORKER_SPEC_VERSION, "launches", SampleLaunch)


def execute(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """Open the CUDA device and launch every planned sample once, kernel by kernel (module docstring)."""
    from ...devices import cuda as cudamod
    from ...devices import open_device
    from ...corpora.app_check import upload
    from ...corpora.app_kernels import APP_KERNELS

    apps = {k.name: k for k in APP_KERNELS}
    launches: list[SampleLaunch] = spec["launches"]
    unknown = sorted({la.kernel for la in launches} - set(apps))
    if unknown:
        raise SystemExit(f"dao_counters_worker: no kernel {unknown} in the application corpus")
    infos = {d.index: d for d in cudamod.list_devices()}
    if spec["device"] not in infos:
        raise SystemExit(f"dao_counters_worker: cuda:{spec['device']} does not exist (devices: {sorted(infos)})")
    dev = open_device(infos[spec["device"]])
    done: list[dict[str, Any]] = []
    try:
        for name in dict.fromkeys(la.kernel for la in launches):
            app = apps[name]
            t0 = time.perf_counter()
            say(f"{name}: compiling and building its problem")
            kern = dev.compile(app.source("cuda"), app.name)
            mine = [la for la in launches if la.kernel == name]
            problem = app.problem(app.gpu if mine[0].size == "gpu" else app.tiny)
            t1 = time.perf_counter()
            launched = upload(dev, problem, fill_outputs=False)
            t2 = time.perf_counter()
            say(f"{name}: built in {t1 - t0:.1f} s, {problem_mib(problem):.0f} MiB uploaded in {t2 - t1:.1f} s; "
                f"launching {', '.join(f'{la.point} ({la.groups} groups)' for la in mine)}")
            for la in mine:
                dev.launch(kern, (la.groups * la.local,), (la.local,), launched.args)
                dev.synchronize(spec["sync_timeout_s"])
                done.append({"tag": la.tag, "kernel": la.kernel, "block": [la.local, 1, 1], "grid": [la.groups, 1, 1]})
            say(f"{name}: launches done in {time.perf_counter() - t2:.1f} s")
            del launched, problem
            dev.release_pooled_memory()
    finally:
        Path(spec["launch_log"]).write_text(json.dumps(done))
        dev.close()
    return done


def say(line: str) -> None:
    """A progress line on stderr (stdout carries ncu's CSV)."""
    print(f"dao_counters_worker: {line}", file=sys.stderr, flush=True)


def problem_mib(problem: Any) -> float:
    """The device memory a problem occupies, inputs and outputs (what each replay pass may save and restore)."""
    return (sum(a.nbytes for a in problem.inputs.values()) + sum(o.nbytes for o in problem.outputs.values())) / 2**20


def main(argv: Sequence[str] | None = None) -> int:
    return run_worker("pytest_gpuperf.studies.sampled.dao_counters_worker", argv, execute, read_spec)


if __name__ == "__main__":
    sys.exit(main())
