"""``gpuperf fleet submit|status|wait``: a fleet run on Slurm, from submission to the jobs' results.

  gpuperf fleet submit --root /shared/fleet --nodes gpu[01-16] --partition gpu --array-throttle 8 -- -k latency
  gpuperf fleet wait /shared/fleet/<fleet-run-id>
  gpuperf fleet report /shared/fleet/<fleet-run-id>

``submit`` plans one job per node (``--chunk N``: per N nodes), submits them as one job array (held,
each task pinned to its node, then released) whose tasks each run ``gpuperf run --gpuperf-device=all``
on every GPU of their node into ``ROOT/<fleet-run-id>/<node>-<index>/``, and records the plan and the
submission in ``ROOT/<fleet-run-id>/fleet.json``. Submitting the same ``--fleet-run`` again submits only
the jobs whose folder holds no complete results (none yet, or interrupted by a time limit) and that are
not queued or running, with the options and ``gpuperf run`` arguments of its latest submission unless
given again. Planted regressions (``--plant-on``) belong to one submission: a re-submission runs none unless named
again. ``--confirm RUN --cards LABEL,...`` re-runs the named jobs of fleet run RUN as a
confirmation run (``RUN-confirm`` unless ``--fleet-run`` names another), for ``gpuperf fleet report RUN
--confirm ROOT/RUN-confirm``.

``status`` and ``wait`` exit 0 when every job holds complete results, 1 when a job ended without them,
3 while jobs are still queued or running (``wait``: after ``--timeout``); 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Mapping

from ..errors import GpuPerfError
from . import slurm_jobs as sj

EXIT_OK, EXIT_INCOMPLETE, EXIT_ACTIVE = 0, 1, 3


def register_submit(sub: Any) -> None:
    """``submit``, ``status`` and ``wait`` under ``gpuperf fleet`` (``sub``: its subparsers)."""
    p = sub.add_parser("submit", help="run the suites on Slurm nodes: one job array task per node, every GPU",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    where = p.add_mutually_exclusive_group()
    where.add_argument("--nodes", default=None, metavar="LIST",
                       help="nodes, comma- or space-separated, Slurm ranges allowed (gpu[01-04]); a node named twice "
                            "runs two jobs (two cards of the fleet)")
    where.add_argument("--nodes-file", default=None, metavar="FILE", help="nodes, one a line (# comments)")
    p.add_argument("--root", required=True, metavar="DIR", help="the shared folder every node writes its results to")
    p.add_argument("--fleet-run", default=None, metavar="ID",
                   help="the fleet run's id and folder name (default: fleet-<UTC date-time>); an existing one resumes")
    p.add_argument("--partition", default=None, metavar="NAME", help="Slurm partition of the jobs (sbatch --partition)")
    p.add_argument("--reservation", default=None, metavar="NAME",
                   help="Slurm reservation of the jobs (sbatch --reservation)")
    p.add_argument("--exclusive", action="store_true", default=None, help="no other job on a node while it is measured")
    p.add_argument("--chunk", type=int, default=1, metavar="N", help="nodes per job (default 1: one job per node)")
    p.add_argument("--array-throttle", type=int, default=None, metavar="K", help="at most K jobs at once (array %%K)")
    p.add_argument("--time", default=None, metavar="LIMIT", help="each job's time limit (sbatch --time)")
    p.add_argument("--signal-lead", type=int, default=None, metavar="S",
                   help="the job gets TERM this many seconds before its time limit and ends its run as interrupted, "
                        "its results written (default 60)")
    p.add_argument("--history", default=None, metavar="URL",
                   help="also record every job's run in this history store (--gpuperf-history; PostgreSQL for many nodes)")
    p.add_argument("--plant-on", action="append", default=[], metavar="JOBINDEX=KIND=ARG",
                   help="plant a regression in one job (--gpuperf-plant; the fleet gate's own check), e.g. 2=compute=1.0")
    p.add_argument("--offline-bundle", default=None, metavar="PATH",
                   help="run the offline bundle's run.sh (gpuperf offline bundle) instead of an installed gpuperf")
    p.add_argument("--python", default=None, metavar="EXE",
                   help="the Python that has pytest-gpuperf on the nodes (default: this one)")
    p.add_argument("--confirm", default=None, metavar="RUN",
                   help="a confirmation run of fleet run RUN's jobs named by --cards")
    p.add_argument("--cards", default=None, metavar="LABELS",
                   help="with --confirm: the job labels (or card names LABEL/KEY) to run again, comma-separated")
    p.add_argument("--dry-run", action="store_true", help="print the batch script and the Slurm commands; submit nothing")
    p.add_argument("--wait", action="store_true", help="then wait for the jobs (as gpuperf fleet wait)")
    p.add_argument("--poll", type=float, default=10.0, metavar="S", help="with --wait: seconds between squeue polls")
    p.add_argument("--timeout", type=float, default=None, metavar="S", help="with --wait: give up after S seconds (exit 3)")
    p.add_argument("pytest_args", nargs="*", help="after --: arguments for gpuperf run (suite files, -k ...)")
    p.set_defaults(func=run_submit)

    for name, helptext, func in (("status", "the jobs of a fleet run: Slurm's state and what each job folder holds",
                                  run_status),
                                 ("wait", "wait until no job of a fleet run is queued or running (squeue polling)",
                                  run_wait)):
        q = sub.add_parser(name, help=helptext, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
        q.add_argument("run", help="the fleet-run folder ROOT/<fleet-run-id>")
        q.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: %(default)s)")
        if name == "wait":
            q.add_argument("--poll", type=float, default=10.0, metavar="S", help="seconds between squeue polls")
            q.add_argument("--timeout", type=float, default=None, metavar="S", help="give up after S seconds (exit 3)")
        q.set_defaults(func=func)


def _nodes(args: argparse.Namespace) -> list[str] | None:
    if args.nodes_file:
        try:
            return sj.parse_nodes(Path(args.nodes_file).read_text(encoding="utf-8"))
        except OSError as exc:
            raise GpuPerfError(f"--nodes-file {args.nodes_file}: {exc.strerror}") from None
    return sj.parse_nodes(args.nodes) if args.nodes else None


def _confirm_tasks(root: Path, run: str, cards: str | None) -> list[sj.Task]:
    """The tasks of fleet run ``run`` that ``cards`` name, with their indices, nodes and labels kept (so the
    report pairs each confirmation with its card), without their plants."""
    manifest = sj.read_manifest(root / run)
    if manifest is None:
        raise GpuPerfError(f"--confirm {run}: {root / run / sj.MANIFEST} not found (a fleet run that gpuperf fleet "
                           "submit made, under --root)")
    if not cards:
        raise GpuPerfError("--confirm needs --cards: the job labels (or LABEL/KEY card names) the report flagged")
    wanted = {c.strip().split("/")[0] for c in cards.split(",") if c.strip()}
    tasks = [sj.Task(t.index, t.nodes) for t in sj.tasks_of(manifest) if wanted & set(t.labels)]
    unknown = wanted - {label for t in tasks for label in t.labels}
    if unknown:
        raise GpuPerfError(f"--cards: {', '.join(sorted(unknown))} not a job of fleet run {run} "
                           f"(its jobs: {', '.join(l for t in sj.tasks_of(manifest) for l in t.labels)})")
    return tasks


def run_submit(args: argparse.Namespace) -> int:
    root = Path(args.root).resolve()
    plants = sj.parse_plant_on(args.plant_on)
    nodes = _nodes(args)
    if args.confirm:
        fleet_run = args.fleet_run or f"{args.confirm}-confirm"
        planned = _confirm_tasks(root, args.confirm, args.cards)
        for t in planned:
            t.plants = list(plants.get(t.index, []))
    else:
        if args.cards:
            raise GpuPerfError("--cards goes with --confirm RUN")
        fleet_run = args.fleet_run or sj.default_fleet_run()
        planned = sj.plan(nodes, args.chunk, plants) if nodes else []
    if "/" in fleet_run or fleet_run.startswith("."):
        raise GpuPerfError(f"--fleet-run {fleet_run!r}: an id is one folder name")
    run_dir = root / fleet_run
    manifest = sj.read_manifest(run_dir)
    if manifest is not None:
        known = sj.tasks_of(manifest)
        if planned and [(t.index, t.nodes) for t in planned] != [(t.index, t.nodes) for t in known]:
            raise GpuPerfError(f"fleet run {fleet_run} was planned for other nodes ({', '.join(l for t in known for l in t.labels)}); "
                               "resume it without --nodes, or start another --fleet-run")
        for t in known:  # plants are this submission's only: a re-submission without --plant-on runs none
            t.plants = list(plants.get(t.index, []))
        planned = known
    elif not planned:
        raise GpuPerfError(f"name the nodes (--nodes or --nodes-file): {run_dir} holds no fleet run to resume")
    stray = sorted(set(plants) - {t.index for t in planned})
    if stray:
        raise GpuPerfError(f"--plant-on {stray[0]}=...: fleet run {fleet_run} has no job {stray[0]} "
                           f"(its jobs: {', '.join(str(t.index) for t in planned)})")
    # a confirmation run measures what the run it confirms did, unless told otherwise
    chosen = _options(args, manifest or (sj.read_manifest(root / args.confirm) if args.confirm else None))
    settings = sj.Settings(root=root, fleet_run=fleet_run, partition=chosen["partition"],
                           reservation=chosen["reservation"], exclusive=bool(chosen["exclusive"]), time=chosen["time"],
                           throttle=chosen["array_throttle"], signal_s=chosen["signal_lead"],
                           offline_bundle=Path(chosen["offline_bundle"]) if chosen["offline_bundle"] else None,
                           history=chosen["history"], confirm=bool(args.confirm or (manifest or {}).get("confirm_of")),
                           pytest_args=list(chosen["pytest_args"]), python=chosen["python"])
    if settings.offline_bundle and not (settings.offline_bundle / "run.sh").is_file():
        raise GpuPerfError(f"--offline-bundle {args.offline_bundle}: no run.sh in it (make one with gpuperf offline bundle)")

    active = _active(manifest) if manifest is not None and not args.dry_run else {}
    todo, skipped = [], []
    for t in planned:
        state = sj.task_state(run_dir, t)
        if state == "complete":
            skipped.append((t, "complete"))
        elif t.index in active:
            skipped.append((t, f"{active[t.index]} in Slurm"))
        else:
            todo.append(t)
    for t, why in skipped:
        print(f"gpuperf fleet: skip job {t.index} ({','.join(t.labels)}): {why}")
    if not todo:
        print(f"gpuperf fleet: nothing to submit in {run_dir}")
        return run_wait_loop(run_dir, args.poll, args.timeout, "text") if args.wait else EXIT_OK
    script = sj.batch_script(todo, settings)
    if args.dry_run:
        sys.stdout.write(script)
        print("# then: sbatch --parsable --hold SCRIPT; " + "; ".join(
            f"scontrol update JobId=<job>_{t.index} ReqNodeList={','.join(t.nodes)} NumNodes={len(t.nodes)} "
            f"StdOut={shlex.quote(str(run_dir / t.labels[0] / 'slurm-%A_%a.out'))}" for t in todo)
              + "; scontrol release <job>")
        return EXIT_OK

    run_dir.mkdir(parents=True, exist_ok=True)
    n = len((manifest or {}).get("submissions", []))
    script_path = run_dir / f"sbatch-{n}.sh"
    job = sj.sbatch(script, script_path)
    try:
        for t in todo:
            sj.pin(job, t, run_dir)
    except GpuPerfError:
        sj.cancel(job)
        raise
    doc = manifest or {"schema": sj.MANIFEST_SCHEMA, "fleet_run": fleet_run, "root": str(root), "created": sj.now_iso(),
                       "confirm_of": args.confirm, "submissions": []}
    doc["tasks"] = [t.as_json() for t in planned]
    doc["updated"] = sj.now_iso()
    doc["submissions"] = list(doc.get("submissions", [])) + [{
        "job_id": job, "indices": [t.index for t in todo], "time": sj.now_iso(),
        "command": ["gpuperf", "fleet", "submit", *sys.argv[3:]] if sys.argv[1:3] == ["fleet", "submit"] else sys.argv,
        "script": script_path.name, "plants": {str(t.index): t.plants for t in todo if t.plants},
        "skipped": {str(t.index): why for t, why in skipped},
        "settings": chosen}]
    sj.write_manifest(run_dir, doc)  # before the release: a job never runs unrecorded
    sj.release(job)
    print(f"gpuperf fleet: fleet run {fleet_run}: job array {job}, tasks "
          f"{','.join(str(t.index) for t in todo)} ({', '.join(l for t in todo for l in t.labels)}) in {run_dir}")
    return run_wait_loop(run_dir, args.poll, args.timeout, "text") if args.wait else EXIT_OK


#: submit's options a resumed fleet run takes from its latest submission when they are not given again
RESUMED = {"partition": None, "reservation": None, "exclusive": False, "time": None, "array_throttle": None,
           "signal_lead": 60, "history": None, "offline_bundle": None, "python": sys.executable, "pytest_args": []}


def _options(args: argparse.Namespace, manifest: dict[str, Any] | None) -> dict[str, Any]:
    """The run's options: those given now; for a resumed run, the others as its latest submission had
    them (so a re-submission measures what the first one did); else the defaults."""
    last = ((manifest or {}).get("submissions") or [{}])[-1].get("settings") or {}
    out = {}
    for key, default in RESUMED.items():
        given = getattr(args, key)
        if key == "offline_bundle" and given:
            given = str(Path(given).resolve())
        out[key] = given if given not in (None, []) else last.get(key, default)
    return out


def _active(manifest: dict[str, Any]) -> dict[int, str]:
    """Task index → Slurm state, for the tasks whose latest job is still queued or running."""
    latest = sj.latest_jobs(manifest)
    states = sj.slurm_states(j.split("_")[0] for j in latest.values())
    return {idx: states[j] for idx, j in latest.items() if states.get(j) in sj.ACTIVE}


def status(run_dir: Path) -> dict[str, Any]:
    """Every job of the fleet run: its latest Slurm job, Slurm's state of it, what its folders hold."""
    manifest = sj.read_manifest(run_dir)
    if manifest is None:
        raise GpuPerfError(f"{run_dir / sj.MANIFEST} not found: not a fleet run that gpuperf fleet submit made")
    latest = sj.latest_jobs(manifest)
    states = sj.slurm_states(j.split("_")[0] for j in latest.values())
    jobs = []
    for t in sj.tasks_of(manifest):
        job = latest.get(t.index)
        slurm = states.get(job, "UNKNOWN") if job else "NOT SUBMITTED"
        jobs.append({"index": t.index, "labels": t.labels, "nodes": t.nodes, "job": job, "slurm": slurm,
                     "results": sj.task_state(run_dir, t), "active": slurm in sj.ACTIVE})
    active = sum(j["active"] for j in jobs)
    incomplete = sum(1 for j in jobs if not j["active"] and j["results"] != "complete")
    return {"fleet_run": manifest.get("fleet_run"), "run_dir": str(run_dir), "jobs": jobs, "active": active,
            "incomplete": incomplete, "complete": len(jobs) - active - incomplete,
            "exit": EXIT_ACTIVE if active else EXIT_INCOMPLETE if incomplete else EXIT_OK}


def status_text(rep: dict[str, Any]) -> str:
    lines = [f"fleet run {rep['fleet_run']}: {rep['complete']} complete, {rep['active']} queued or running, "
             f"{rep['incomplete']} ended without complete results"]
    for j in rep["jobs"]:
        lines.append(f"  {j['index']:>4}  {','.join(j['labels']):<32} {j['job'] or '-':<14} {j['slurm']:<12} {j['results']}")
    return "\n".join(lines)


def _print(rep: dict[str, Any], fmt: str) -> None:
    sys.stdout.write((json.dumps(rep, indent=1) if fmt == "json" else status_text(rep)) + "\n")


def run_status(args: argparse.Namespace) -> int:
    rep = status(Path(args.run))
    _print(rep, args.format)
    return int(rep["exit"])


def run_wait_loop(run_dir: Path, poll_s: float, timeout_s: float | None, fmt: str) -> int:
    """Poll until no job is queued or running (or ``timeout_s`` passes); print the status; its exit."""
    start = time.monotonic()
    said = ""
    while True:
        rep = status(run_dir)
        if not rep["active"] or (timeout_s is not None and time.monotonic() - start >= timeout_s):
            break
        line = _waiting(rep)
        if line != said:  # a line whenever the jobs' states change (stderr: stdout stays the status report)
            print(f"gpuperf fleet: {time.monotonic() - start:.0f} s: {line}", file=sys.stderr, flush=True)
            said = line
        time.sleep(max(0.5, poll_s))
    _print(rep, fmt)
    return int(rep["exit"])


def _waiting(rep: Mapping[str, Any]) -> str:
    """What a wait is waiting for: the jobs counted by Slurm's state (``2 RUNNING, 1 PENDING, 1 COMPLETED``)."""
    counts = Counter(str(j["slurm"]) for j in rep["jobs"])
    return ", ".join(f"{n} {state}" for state, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def run_wait(args: argparse.Namespace) -> int:
    return run_wait_loop(Path(args.run), args.poll, args.timeout, args.format)
