"""A fleet run on Slurm: its plan, the batch script of its job array, its manifest, and what its jobs left.

A fleet run is a folder ``ROOT/<fleet-run-id>/`` with one subfolder per job, ``<node>-<index>`` (the node
the job runs on and its array task index), holding the results documents that ``gpuperf run
--gpuperf-json=<job folder>/{key}/run-{backend}.json`` writes and ``job.json`` (``{"fleet_run", "job_id",
"node", "array_task", "confirm"}``), written by the job when it starts. ``ROOT/<fleet-run-id>/fleet.json``
is the manifest (:func:`write_manifest`): the plan and every submission of it.

Every node (or chunk of nodes) is one task of one job array; each task is pinned to its own nodes by
submitting the array held and updating each pending task's ``ReqNodeList`` (``scontrol update
JobId=<array>_<task>``), then releasing the array — Slurm has no per-task node list at submission, and
one array keeps ``%K`` throttling and one job id to follow. Only the standard commands are called
(``sbatch --parsable``, ``scontrol``, ``squeue``; ``sacct`` only when accounting answers).

A task ends complete when its folder holds results documents none of which says ``interrupted`` (a time
limit's SIGTERM reaches the batch shell first, ``--signal=B:TERM@S``, which hands pytest SIGINT: pytest stops
and writes what finished, marked interrupted). Re-submitting the same fleet run submits only the tasks
that are not complete (:func:`job_state`).
"""

from __future__ import annotations

import datetime as _dt
import json
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from .. import RESULTS_SCHEMA
from ..errors import GpuPerfError
from ..schemas.results_doc import ResultsDocument
from ..util.atomic import atomic_write_json

MANIFEST = "fleet.json"
JOB_FILE = "job.json"
MANIFEST_SCHEMA = "pytest-gpuperf-fleet-run/1"  # the report is pytest-gpuperf-fleet/1: another document
#: what a results file of a job is named, below ``<job folder>/{key}/``
RESULTS_NAME = "run-{backend}.json"
#: an #SBATCH value is read by Slurm, not by a shell: only characters that need no quoting there
SBATCH_VALUE = re.compile(r"[A-Za-z0-9_.,:/%@+=\[\]-]+")
#: Slurm states of a job that has not ended
ACTIVE = ("PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED", "RESIZING", "SIGNALING",
          "STAGE_OUT", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD", "STOPPED")


@dataclass
class Task:
    """One array task: the nodes it runs on, the job folder of each, and its planted regressions."""

    index: int
    nodes: list[str]
    plants: list[str] = field(default_factory=list)

    @property
    def labels(self) -> list[str]:
        """The job folder of each node: ``<node>-<index>``."""
        return [f"{n}-{self.index}" for n in self.nodes]

    def as_json(self) -> dict[str, Any]:
        """The task as the manifest plans it (its plants belong to one submission, not to the plan)."""
        return {"index": self.index, "nodes": self.nodes, "labels": self.labels}


@dataclass
class Settings:
    """What every task of one submission shares: the scheduler's options and the run's command."""

    root: Path
    fleet_run: str
    partition: str | None = None
    reservation: str | None = None
    exclusive: bool = False
    time: str | None = None
    throttle: int | None = None
    signal_s: int = 60
    offline_bundle: Path | None = None
    history: str | None = None
    confirm: bool = False
    pytest_args: list[str] = field(default_factory=list)
    python: str = "python3"


def parse_nodes(text: str) -> list[str]:
    """``a,b c`` or a file's lines (``#`` starts a comment) → node names (Slurm's bracket ranges are expanded by
    ``scontrol show hostnames`` when present: ``node[01-03]``)."""
    names: list[str] = []
    tokens = [t for line in text.splitlines() for t in line.partition("#")[0].split()]  # "# ..." is a comment
    for token in tokens:
        if "[" in token:
            names.extend(expand_hostlist(token))
        else:
            names.extend(t for t in token.split(",") if t)
    for n in names:
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", n):
            raise GpuPerfError(f"node name {n!r}: a Slurm node name has letters, digits, '.', '_' and '-' only")
    return names


def expand_hostlist(hostlist: str) -> list[str]:
    """Slurm's ``node[01-03],gpu7`` → names, through ``scontrol show hostnames``."""
    try:
        out = subprocess.run(["scontrol", "show", "hostnames", hostlist], capture_output=True, text=True,
                             check=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise GpuPerfError(f"cannot expand the node list {hostlist!r} with scontrol ({exc}); list the nodes one "
                           "by one") from None
    return out.split()


def plan(nodes: Sequence[str], chunk: int = 1, plants: Mapping[int, list[str]] | None = None) -> list[Task]:
    """One task per ``chunk`` consecutive nodes, numbered from 0 in the order given. A node named twice is
    two jobs on one node (two cards of the fleet: a test cluster with one device per host)."""
    if chunk < 1:
        raise GpuPerfError(f"--chunk {chunk}: a job runs on at least one node")
    if not nodes:
        raise GpuPerfError("no nodes: name them with --nodes a,b,c or --nodes-file FILE")
    tasks = [Task(i, list(nodes[s:s + chunk])) for i, s in enumerate(range(0, len(nodes), chunk))]
    for idx, kinds in (plants or {}).items():
        if not 0 <= idx < len(tasks):
            raise GpuPerfError(f"--plant-on {idx}=...: the fleet run has jobs 0..{len(tasks) - 1}")
        tasks[idx].plants = list(kinds)
    for t in tasks:
        if len(set(t.nodes)) != len(t.nodes):
            raise GpuPerfError(f"job {t.index} names node(s) twice ({','.join(t.nodes)}): one job runs once per node; "
                               "use --chunk 1 to run several jobs on one node")
    return tasks


def parse_plant_on(values: Iterable[str]) -> dict[int, list[str]]:
    """``["2=compute=1.0"]`` → ``{2: ["compute=1.0"]}`` (the kind is checked by the run's own
    ``--gpuperf-plant`` parser, :mod:`pytest_gpuperf.gatecheck.plants`)."""
    from ..gatecheck import plants as plant_kinds

    out: dict[int, list[str]] = {}
    for raw in values:
        idx, sep, kind = raw.partition("=")
        if not sep or not idx.strip().isdigit() or not kind:
            raise GpuPerfError(f"--plant-on {raw!r}: use JOBINDEX=KIND=ARG, e.g. 2=compute=1.0")
        try:
            plant_kinds.parse([kind])
        except ValueError as exc:
            raise GpuPerfError(str(exc)) from None
        out.setdefault(int(idx), []).append(kind)
    return out


def default_fleet_run() -> str:
    """A fleet-run id from the time: ``fleet-20260102-134501``."""
    return "fleet-" + _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%d-%H%M%S")


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def sbatch_value(option: str, value: str) -> str:
    """One ``#SBATCH`` line; Slurm reads these lines itself, so a value that would need quoting is refused."""
    if not SBATCH_VALUE.fullmatch(value):
        raise GpuPerfError(f"{option} {value!r}: an #SBATCH value takes letters, digits and ._,:/%@+=[]- only "
                           "(no spaces or quotes); choose a name or path without them")
    return f"#SBATCH {option}={value}"


def results_template(job_dir: str) -> str:
    """``--gpuperf-json`` of one job: one file per device below its job folder."""
    return f"{job_dir}/{{key}}/{RESULTS_NAME}"


def batch_script(tasks: Sequence[Task], s: Settings) -> str:
    """The batch script of one job array over ``tasks`` (their indices are the array's task ids).

    Every value the shell reads is quoted with :func:`shlex.quote`; the ``#SBATCH`` values are checked by
    :func:`sbatch_value`. The node each task runs on is set after submission (:func:`pin`), as is its log file."""
    if not tasks:
        raise GpuPerfError("nothing to submit")
    run_dir = s.root / s.fleet_run
    chunked = any(len(t.nodes) > 1 for t in tasks)
    width = max(len(t.nodes) for t in tasks)
    array = ",".join(str(t.index) for t in tasks) + (f"%{s.throttle}" if s.throttle else "")
    head = ["#!/bin/bash",
            f"# gpuperf fleet submit: fleet run {s.fleet_run}, {len(tasks)} job(s) "
            f"({'confirmation run' if s.confirm else 'every GPU of each node'})",
            sbatch_value("--job-name", f"gpuperf-{s.fleet_run}"),
            sbatch_value("--array", array),
            sbatch_value("--nodes", str(width)),
            "#SBATCH --ntasks-per-node=1",
            sbatch_value("--output", str(run_dir / "slurm-%A_%a.out")),
            # the batch shell gets TERM this long before the time limit (steps too when a job spans nodes)
            sbatch_value("--signal", f"{'' if chunked else 'B:'}TERM@{int(s.signal_s)}")]
    for option, value in (("--partition", s.partition), ("--reservation", s.reservation), ("--time", s.time)):
        if value:
            head.append(sbatch_value(option, value))
    if s.exclusive:
        head.append("#SBATCH --exclusive")
    q = shlex.quote
    body = ["set -uo pipefail",
            f"root={q(str(s.root))}",
            f"fleet_run={q(s.fleet_run)}",
            f"confirm={'true' if s.confirm else 'false'}",
            f"py={q(s.python)}",
            f"bundle={q(str(s.offline_bundle) if s.offline_bundle else '')}",
            f"history={q(s.history or '')}",
            "pytest_args=(" + " ".join(q(a) for a in s.pytest_args) + ")",
            'case "${SLURM_ARRAY_TASK_ID:?run this script with sbatch: it is a job array}" in']
    for t in tasks:
        body.append(f"  {t.index}) plants=(" + " ".join(q(f"--gpuperf-plant={p}") for p in t.plants) + ") ;;")
    body += ['  *) echo "gpuperf fleet: array task $SLURM_ARRAY_TASK_ID is not a job of fleet run $fleet_run" >&2; exit 2 ;;',
             "esac",
             JOB_BODY_CHUNKED if chunked else JOB_BODY]
    return "\n".join(head) + "\n\n" + "\n".join(body) + "\n"


#: the per-node work: job.json, then the run (installed gpuperf, or the offline bundle's run.sh), in the
#: background so the batch shell can hand a TERM to pytest as SIGINT (pytest ends as interrupted and still
#: writes the results of what finished; a plain TERM would end it with nothing written)
NODE_WORK = r'''node_work() {
  local node=${SLURMD_NODENAME:-$(hostname -s)}
  local dir="$root/$fleet_run/$node-$SLURM_ARRAY_TASK_ID"
  mkdir -p "$dir" || exit 3
  "$py" - "$dir/job.json" "$fleet_run" "${SLURM_JOB_ID:-}" "${SLURM_ARRAY_JOB_ID:-}" "$node" "$SLURM_ARRAY_TASK_ID" "$confirm" <<'PY' || exit 3
import json, os, sys, tempfile
path, run, job, array_job, node, task, confirm = sys.argv[1:]
doc = {"fleet_run": run, "job_id": job, "array_job_id": array_job, "node": node, "array_task": int(task),
       "confirm": confirm == "true"}
fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".job.json.", suffix=".tmp")
with os.fdopen(fd, "w") as fh:
    json.dump(doc, fh, indent=1)
    fh.write("\n")
os.chmod(tmp, 0o644)
os.replace(tmp, path)
PY
  local hist=()
  if [ -n "$history" ]; then hist=("--gpuperf-history=$history"); fi
  set -m
  if [ -n "$bundle" ]; then
    GPUPERF_HISTORY="${history:-$dir/history.db}" GPUPERF_TAG=run bash "$bundle/run.sh" "$dir" \
      --gpuperf-device=all "${plants[@]}" "${pytest_args[@]}" &
  else
    local workers=()
    case " ${pytest_args[*]} " in *" -n "*|*" -n"[0-9a]*|*" --numprocesses"*) ;; *)
      if [ "$("$py" -c 'from pytest_gpuperf.fleet.slurm_jobs import physical_gpus; print(physical_gpus())' 2>/dev/null)" -gt 1 ] 2>/dev/null; then
        workers=(-n auto)
      fi ;;
    esac
    "$py" -m pytest_gpuperf.cli run -p no:cacheprovider --gpuperf-device=all "${workers[@]}" \
      "--gpuperf-json=$dir/{key}/run-{backend}.json" "${hist[@]}" "${plants[@]}" "${pytest_args[@]}" &
  fi
  local pid=$!
  # each signal passed on as itself: the run's log then names what stopped it (a time limit's SIGTERM, a Ctrl-C)
  trap 'kill -INT "$pid" 2>/dev/null' INT
  trap 'kill -TERM "$pid" 2>/dev/null' TERM
  local rc=0
  while :; do
    wait "$pid"; rc=$?
    kill -0 "$pid" 2>/dev/null || break  # wait returned for a trapped signal: the run is still ending
  done
  wait "$pid" 2>/dev/null; rc=$?  # the run's own status (bash keeps it after the wait that reaped it)
  echo "gpuperf fleet: $node-$SLURM_ARRAY_TASK_ID ended with exit status $rc; results in $dir"
  return "$rc"
}'''

JOB_BODY = NODE_WORK + "\nnode_work\n"

#: a job over several nodes: the same work on each, as one step with one task per node
JOB_BODY_CHUNKED = NODE_WORK + r'''
if [ -n "${GPUPERF_FLEET_NODE_STEP:-}" ]; then node_work; exit $?; fi
export GPUPERF_FLEET_NODE_STEP=1
srun --ntasks-per-node=1 --kill-on-bad-exit=0 bash "$0"
'''


def physical_gpus(spec: str = "all") -> int:
    """How many physical GPUs ``--gpuperf-device=spec`` selects on this host (the job's ``-n auto`` choice:
    one xdist worker per GPU only when there are several)."""
    from ..devices import discover, resolve
    from .identity import physical_id

    try:
        return len({physical_id(d) for d in resolve(spec, discover())})
    except GpuPerfError:
        return 0


def sbatch(script: str, script_path: Path) -> str:
    """Submit ``script`` (saved at ``script_path``, kept beside the fleet run) held; returns the array's job id."""
    atomic_write_text_exec(script_path, script)
    out = run_slurm(["sbatch", "--parsable", "--hold", str(script_path)])
    job = out.strip().split(";")[0]
    if not job.isdigit():
        raise GpuPerfError(f"sbatch answered {out.strip()!r}, not a job id")
    return job


def pin(job: str, task: Task, run_dir: Path) -> None:
    """Put array task ``task`` on its nodes, its log into its (first) job folder."""
    log = run_dir / task.labels[0] / "slurm-%A_%a.out"
    log.parent.mkdir(parents=True, exist_ok=True)
    run_slurm(["scontrol", "update", f"JobId={job}_{task.index}", f"ReqNodeList={','.join(task.nodes)}",
               f"NumNodes={len(task.nodes)}",
               f"StdOut={log}"])


def release(job: str) -> None:
    run_slurm(["scontrol", "release", job])


def cancel(job: str) -> None:
    run_slurm(["scancel", job])


def run_slurm(cmd: list[str], timeout_s: float = 120.0) -> str:
    """A Slurm command's stdout; a missing command or a refusal is a GpuPerfError with Slurm's own words."""
    if shutil.which(cmd[0]) is None:
        raise GpuPerfError(f"{cmd[0]} not found: run this on a Slurm login node (or install slurm-client)")
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise GpuPerfError(f"{shlex.join(cmd)} did not answer in {timeout_s:.0f} s: is slurmctld up?") from None
    if res.returncode != 0:
        raise GpuPerfError(f"{shlex.join(cmd)} failed ({res.returncode}): {res.stderr.strip() or res.stdout.strip()}")
    return res.stdout


def atomic_write_text_exec(path: Path, text: str) -> None:
    from ..util.atomic import atomic_write_text

    atomic_write_text(path, text)
    path.chmod(0o755)


def slurm_states(array_jobs: Iterable[str]) -> dict[str, str]:
    """``"<array>_<task>"`` → Slurm state, for every task of these job arrays Slurm still knows: squeue for
    live tasks, ``scontrol show job`` for ended ones kept by ``MinJobAge``, ``sacct`` for older ones when
    accounting answers. A task none of them knows is absent."""
    states: dict[str, str] = {}
    for job in dict.fromkeys(array_jobs):
        try:
            out = run_slurm(["squeue", "-h", "-r", "-j", job, "-o", "%K|%T"])
        except GpuPerfError:
            out = ""  # squeue refuses a job id it no longer knows
        for line in out.splitlines():
            task, _, state = line.strip().partition("|")
            if task.isdigit():
                states[f"{job}_{task}"] = state
        try:
            shown = run_slurm(["scontrol", "-o", "show", "job", job])
        except GpuPerfError:
            shown = ""
        for line in shown.splitlines():
            fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
            if fields.get("ArrayJobId") == job and fields.get("ArrayTaskId", "").isdigit():
                states.setdefault(f"{job}_{fields['ArrayTaskId']}", fields.get("JobState", "UNKNOWN"))
        if shutil.which("sacct"):
            try:
                acct = subprocess.run(["sacct", "-n", "-P", "-X", "-j", job, "-o", "JobID,State"], capture_output=True,
                                      text=True, timeout=60)
            except (OSError, subprocess.SubprocessError):
                continue
            for line in acct.stdout.splitlines() if acct.returncode == 0 else ():
                jid, _, state = line.partition("|")
                if re.fullmatch(rf"{job}_\d+", jid):
                    states.setdefault(jid, state.split()[0] if state else "UNKNOWN")
    return states


def job_state(folder: Path) -> str:
    """What a job folder holds: ``complete`` (results documents, none interrupted), ``interrupted`` (a
    results document says the run was interrupted), ``missing`` (no results document)."""
    docs: list[ResultsDocument] = []
    if folder.is_dir():
        for p in sorted(folder.rglob("*.json")):
            if p.name in (JOB_FILE, MANIFEST):
                continue
            try:
                doc = ResultsDocument.load(p)
            except (OSError, ValueError):  # not JSON, or not a results document (ResultsDocumentError)
                continue
            if doc.schema == RESULTS_SCHEMA:
                docs.append(doc)
    if not docs:
        return "missing"
    if any((d.run or {}).get("interrupted") for d in docs):
        return "interrupted"
    return "complete"


def task_state(run_dir: Path, task: Task) -> str:
    """A task's folders together: complete only when every node's folder is."""
    states = {job_state(run_dir / label) for label in task.labels}
    for worst in ("missing", "interrupted"):
        if worst in states:
            return worst
    return "complete"


def read_manifest(run_dir: Path) -> dict[str, Any] | None:
    path = run_dir / MANIFEST
    if not path.is_file():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise GpuPerfError(f"{path}: not readable JSON ({exc}); move it away to start the fleet run afresh") from None
    if not isinstance(doc, dict) or doc.get("schema") != MANIFEST_SCHEMA:
        raise GpuPerfError(f"{path}: not a fleet run manifest (schema {MANIFEST_SCHEMA})")
    return doc


def write_manifest(run_dir: Path, doc: Mapping[str, Any]) -> None:
    atomic_write_json(run_dir / MANIFEST, dict(doc))


def tasks_of(manifest: Mapping[str, Any]) -> list[Task]:
    return [Task(int(t["index"]), list(t["nodes"])) for t in manifest.get("tasks", [])]


def latest_jobs(manifest: Mapping[str, Any]) -> dict[int, str]:
    """Task index → the ``<array>_<task>`` id of its latest submission."""
    out: dict[int, str] = {}
    for sub in manifest.get("submissions", []):
        for idx in sub.get("indices", []):
            out[int(idx)] = f"{sub['job_id']}_{idx}"
    return out
