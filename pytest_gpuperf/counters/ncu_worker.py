"""The process Nsight Compute profiles: launch every planned run of the kernel-class dataset once.

Paper 004 (§4.2–4.3) has a *Datagen* tool that first writes every way a kernel can be launched to a
file, then is started by the profiler once per launch. This is the same split in one process: the
parent (:mod:`.ncu`) writes a spec (the plan: kernel, size, group size, repetition, data seed, in launch
order), runs ``ncu … python -m pytest_gpuperf.counters.ncu_worker spec.json``, and the worker compiles the
K1–K10 and unseen kernels (:mod:`..corpora.kernel_classes`, the same generators and launch parameters as
the timing dataset) and launches each run exactly once, on CUDA through the project's :class:`CudaDevice`.

One process for the whole plan (not one per run) because starting Python, CuPy and a CUDA context costs
seconds — 195 starts would spend the profiling budget before a counter is read. Runs are therefore tagged
by their *launch order*: the n-th kernel ncu profiles is the n-th run of the plan, and the worker writes
what it actually launched (name, block, grid) to a launch log the parent checks against ncu's rows.

The worker prints nothing on stdout: ncu's CSV goes there.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from ..corpora import kernel_classes as kc

SPEC_VERSION = 1


@dataclass(frozen=True)
class PlannedRun:
    """One launch of the dataset. ``index`` is its launch order (its tag); runs that share
    (kernel, size, rep) share buffers and ``seed`` (only the work-group size differs), as in the
    timing dataset, which builds one instance per size and relaunches it with each group size."""

    index: int
    kernel: str
    size: int
    local: int
    rep: int
    seed: int

    @property
    def tag(self) -> str:
        return f"r{self.index:04d}"

    @property
    def group(self) -> tuple[str, int, int]:
        return (self.kernel, self.size, self.rep)


def plan(names: Iterable[str], grid: kc.Grid, reps: int = 1, seed: int = 7) -> list[PlannedRun]:
    """Every (kernel, rep, size, local) of the dataset in launch order: kernels in the given order, then
    repetitions, sizes, and the work-group size innermost (consecutive runs reuse one set of buffers)."""
    runs: list[PlannedRun] = []
    group = 0
    for name in names:
        if name not in kc.SOURCES:
            raise KeyError(f"no kernel class {name!r}; known: {', '.join(kc.SOURCES)}")
        for rep in range(reps):
            for size in grid.sizes(name):
                for local in grid.locals:
                    runs.append(PlannedRun(len(runs), name, int(size), int(local), rep, seed + group))
                group += 1
    return runs


def write_spec_file(path: Path, version: int, key: str, items: Sequence[Any], device_index: int,
                    launch_log: Path, sync_timeout_s: float) -> None:
    """A profiled process' input (both workers' shape): its spec ``version``, the device, where to write the
    launch log, the wait limit and the planned launches (dataclasses) under ``key``."""
    doc = {"version": int(version), "device": int(device_index), "launch_log": str(launch_log),
           "sync_timeout_s": float(sync_timeout_s), key: [asdict(i) for i in items]}
    Path(path).write_text(json.dumps(doc, indent=1))


def read_spec_file(path: Path, version: int, key: str, cls: Callable[..., Any]) -> dict[str, Any]:
    """A spec :func:`write_spec_file` wrote, its launches under ``key`` made ``cls`` again; another
    version is refused by name."""
    doc = json.loads(Path(path).read_text())
    if doc.get("version") != version:
        raise ValueError(f"{path}: spec version {doc.get('version')!r}, expected {version}")
    doc[key] = [cls(**i) for i in doc[key]]
    return doc


def write_spec(path: Path, runs: Sequence[PlannedRun], device_index: int, launch_log: Path,
               sync_timeout_s: float = 30.0) -> None:
    """The worker's input: the device, the plan and where to write the launch log."""
    write_spec_file(path, SPEC_VERSION, "runs", runs, device_index, launch_log, sync_timeout_s)


def read_spec(path: Path) -> dict[str, Any]:
    return read_spec_file(path, SPEC_VERSION, "runs", PlannedRun)


def launch_record(run: PlannedRun, inst: kc.Instance) -> dict[str, Any]:
    """What ncu will report for this launch: kernel name, block and grid (3-D, as ncu prints them)."""
    return {"tag": run.tag, "index": run.index, "kernel": run.kernel, "size": inst.size, "local": run.local,
            "rep": run.rep, "block": [inst.local, 1, 1], "grid": [inst.global_size // inst.local, 1, 1]}


def _release(dev: Any) -> None:
    """Return freed buffers to the driver (:meth:`Device.release_pooled_memory`): ncu's kernel replay saves
    and restores the memory the context's kernels can reach between passes (pinned host memory included),
    so a pool holding every earlier run's buffers or upload staging would make each replay copy them all."""
    dev.release_pooled_memory()


def execute(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """Open the CUDA device, compile every kernel of the plan, then launch each run once in order."""
    from ..devices import cuda as cudamod
    from ..devices import open_device

    infos = {d.index: d for d in cudamod.list_devices()}
    if spec["device"] not in infos:
        raise SystemExit(f"ncu_worker: cuda:{spec['device']} does not exist (devices: {sorted(infos)})")
    dev = open_device(infos[spec["device"]])
    runs: list[PlannedRun] = spec["runs"]
    kernels = {name: dev.compile(kc.source(name, "cuda"), name) for name in dict.fromkeys(r.kernel for r in runs)}
    dev.synchronize(spec["sync_timeout_s"])
    launches: list[dict[str, Any]] = []
    base: kc.Instance | None = None
    current: tuple[str, int, int] | None = None
    try:
        for run in runs:
            if run.group != current:
                base = None
                _release(dev)
                base = kc.generate(run.kernel, run.size, run.local, dev, np.random.default_rng(run.seed))
                current = run.group
            inst = base.with_local(run.local)
            dev.launch(kernels[run.kernel], (inst.global_size,), (inst.local,), inst.args)
            dev.synchronize(spec["sync_timeout_s"])
            launches.append(launch_record(run, inst))
    finally:
        Path(spec["launch_log"]).write_text(json.dumps(launches))
        base = None
        _release(dev)
        dev.close()
    return launches


def run_worker(module: str, argv: Sequence[str] | None, execute: Callable[[Any], Sequence[Any]],
               read_spec: Callable[[Path], Any]) -> int:
    """The command line of a process ncu profiles: one spec file in, its launches made, their count on stderr
    (stdout carries ncu's CSV); 2 with the usage line where the arguments are not one spec file."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print(f"usage: python -m {module} SPEC.json", file=sys.stderr)
        return 2
    done = execute(read_spec(Path(args[0])))
    print(f"{module.rsplit('.', 1)[-1]}: {len(done)} launches done", file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return run_worker("pytest_gpuperf.counters.ncu_worker", argv, execute, read_spec)


if __name__ == "__main__":
    sys.exit(main())
