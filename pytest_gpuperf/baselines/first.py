"""``gpuperf baseline init``: the first baseline of a device, from N runs of the shipped suites.

Each run is ``gpuperf run --gpuperf-device=DEV --gpuperf-json=…`` in the current directory (the user's
repository: its commit is what the runs record); the runs' results are kept under
``<results dir>/<key>/init-<n>-<backend>.json`` and merged by the same rule as ``from-results`` (value =
median of the runs, band from the larger of the within-run and between-run noise), into
``<dir>/<key>.json``: a candidate for review, with the runs' provenance as its header. An existing file is
not replaced unless asked.
"""

from __future__ import annotations

import subprocess
from collections import defaultdict
from pathlib import Path
from typing import Any, Sequence

from ..errors import GpuPerfError
from ..util import jsonio
from . import baseline_file


def run_commands(device: str, runs: int, results_dir: Path, baseline_dir: Path,
                 pytest_args: Sequence[str]) -> list[list[str]]:
    """The ``gpuperf run`` command lines of the N runs (their results: ``init-<n>-<backend>.json``). Each run
    times its own tuning tables (``--gpuperf-retune``): runs that replayed one stored table would agree on
    every search figure by construction, and the band would take that for stability."""
    from ..suiterun import command

    out = []
    for n in range(1, runs + 1):
        args = [f"--gpuperf-device={device}", f"--gpuperf-json={results_dir}/{{key}}/init-{n}-{{backend}}.json",
                f"--gpuperf-baseline-dir={baseline_dir}", "-o", "gpuperf_require_baseline=false",
                "-p", "no:cacheprovider", "--gpuperf-retune", *pytest_args]
        out.append(command(args))
    return out


def init(*, device: str, runs: int, baseline_dir: Path, results_dir: Path, pytest_args: Sequence[str],
         replace: bool, k: float, echo: Any = print) -> list[Path]:
    """Run the suites ``runs`` times and write the candidate baseline of every device they measured;
    returns the files written. Raises :class:`GpuPerfError` naming what stopped it."""
    from ..devices import discover, resolve
    from .merge import merge_runs

    if runs < 1:
        raise GpuPerfError(f"--runs {runs}: at least 1 run (3 recommended: the band then holds the spread between runs)")
    infos = resolve(device, discover())
    existing = [baseline_file.path_for(baseline_dir, i.key) for i in infos if baseline_file.path_for(baseline_dir, i.key).exists()]
    if existing and not replace:
        raise GpuPerfError(f"{', '.join(map(str, existing))} exists; review it with 'gpuperf baseline check', refresh "
                           f"entries with 'gpuperf baseline from-results', or pass --replace to start over")
    baseline_dir.mkdir(parents=True, exist_ok=True)
    docs: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for n, cmd in enumerate(run_commands(device, runs, results_dir, baseline_dir, pytest_args), start=1):
        echo(f"gpuperf baseline init: run {n} of {runs}: {' '.join(cmd[2:])}")
        code = subprocess.call(cmd)
        found = sorted(results_dir.glob(f"*/init-{n}-*.json"))
        if code not in (0, 1) or not found:
            raise GpuPerfError(f"run {n} ended with exit {code} and {'no' if not found else 'partial'} results; "
                               f"fix what its output names, then run init again")
        if code == 1:
            echo(f"gpuperf baseline init: run {n} had failing tests (exit 1); their metrics are still taken — "
                 f"review them before committing the baseline")
        for path in found:
            doc = jsonio.read_json(path)
            docs[(doc["device"]["key"], doc["device"]["backend"])].append(doc)
    written = []
    for (key, backend), group in sorted(docs.items()):
        entries = merge_runs(group, k)
        target = baseline_file.BaselineFile(baseline_file.path_for(baseline_dir, key))
        if replace and target.path.exists() and target.path not in written:
            target.path.unlink()
        prov = next(iter(entries.values()))["provenance"] if entries else {}
        baseline_file.update(target, backend, baseline_file.device_header(group[-1]["device"]), prov, entries)
        echo(f"gpuperf baseline init: wrote {target.path}: {backend}: {len(entries)} metrics from {len(group)} runs "
             f"(results under {results_dir}/{key}/); review it, then commit it")
        written.append(target.path)
    if not written:
        raise GpuPerfError("the runs recorded no metrics; check --device and the pytest arguments")
    return written


def main_init(args: Any) -> int:
    """``gpuperf baseline init`` (argparse namespace from :mod:`.cli`)."""
    extra = list(args.pytest_args)
    if extra[:1] == ["--"]:
        extra = extra[1:]
    init(device=args.device, runs=args.runs, baseline_dir=Path(args.dir), results_dir=Path(args.results_dir),
         pytest_args=extra, replace=args.replace, k=args.k)
    return 0



def _disagreeing(entries: dict[str, dict[str, Any]], results: Sequence[str], backend: str) -> dict[str, str]:
    """Entries whose value another CPU model's results (same runtime and compiler) do not reproduce within
    the entry's own tolerance: such a figure depends on the CPU (PoCL compiles for the host's ISA, and its
    vector math variants differ on a few inputs), so it cannot be shared by the family."""
    from .verdicts import compare

    out: dict[str, str] = {}
    for path in results:
        doc = jsonio.read_json(path)
        if doc["device"]["backend"] != backend:
            continue
        for m in doc["metrics"]:
            e = entries.get(m["name"])
            if e is None or not isinstance(m.get("value"), (int, float)):
                continue
            verdict = compare(float(m["value"]), e["better"], e, identity=m.get("identity", {})).verdict
            if verdict in ("regressed", "improved"):
                out[m["name"]] = f"{e['value']:.10g} vs {m['value']:.10g} on {doc['device']['key']}"
    return out


def main_family(args: Any) -> int:
    """``gpuperf baseline family FILE…``: each CPU baseline's deterministic entries into its family's file
    (the family key from the file's provenance: runtime, driver, compiler)."""
    from ..devices.base import DeviceInfo
    from . import noise

    for name in args.baselines:
        path = Path(name)
        src = baseline_file.load_file(path)
        for backend, section in src.data.get("backends", {}).items():
            prov = section.get("provenance", {})
            info = DeviceInfo(backend=backend, index=0, name=str(src.data["device"].get("name", "")), vendor="",
                              key=path.stem, driver_version=str(prov.get("driver") or ""),
                              runtime_version=str(prov.get("runtime") or ""), is_cpu=True)
            entries = noise.family_entries(section.get("metrics", {}))
            if not path.stem.startswith("pocl-") or not entries:
                raise GpuPerfError(f"{path}: not a PoCL CPU baseline with deterministic entries")
            apart = _disagreeing(entries, args.agree_with, backend)
            for name in apart:
                entries.pop(name)
            if apart:
                print(f"{len(apart)} entries differ on another CPU model and stay with their own: " + ", ".join(
                    f"{n} {v}" for n, v in sorted(apart.items())))
            prov = {**prov, "cpu_dependent": apart} if apart else prov
            target = baseline_file.BaselineFile(baseline_file.path_for(args.dir, info.family_key))
            baseline_file.update(target, backend, {"key": info.family_key, "name": f"CPU family {info.family_key}",
                                                   "class": baseline_file.device_class(True)},
                                 {**prov, "device_name": f"family of {path.stem}"}, entries)
            print(f"{target.path}: {backend}: {len(entries)} deterministic entries from {path}")
    return 0
