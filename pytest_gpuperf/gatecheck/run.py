"""The gate check: the README's main command run N times against the committed baseline (A/A: an
unchanged system must never fail), and planted regressions (each must be caught in every try).

Each run is a real ``python -m pytest --gpuperf-device=DEV suites/`` subprocess — the command users
run, plus ``--gpuperf-json`` to read its verdicts — so what is checked is the gate as shipped, not a
re-implementation of it. The outcome is ``results/<device key>/gatecheck.json``::

    {"schema": "pytest-gpuperf-gatecheck/1", "device": {...}, "commit": "...", "command": "...",
     "aa": [{"run": 1, "metrics": 1528, "regressed": [], "exit": 0, ...}, ...],
     "planted": [{"kind": "memory", "metric": "...", "size": 0.05, "tries": 3, "detected": 3}, ...],
     "curves": [...],  # the headline figures planted at 1, 2, 5 and 10 % (entries as in "planted")
     "not_planted": [{"kind": "power", "metric": "...", "why": "..."}],
     "detection": {"aa": {"runs": 3, "clean": 3, "false_alarm_rate": 0.0, "incomparable": []},
                   "families": {"memory": {"family": "memory copy", "tries": 12, "detected": 12, ...}}}}

``detection`` is recomputed from the entries of the file's latest commit on every write: per family, the
planted tries and how many the gate caught, beside the A/A runs, how many were clean and which metrics they read
``incomparable`` (not judged: the baseline's entry was measured another way).

A GPU session is cut into 10-minute calls, so ``append=True`` adds runs to an existing file (under a
file lock, written atomically).
"""

from __future__ import annotations

import functools
import json
import os
import re
import shlex
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ..verdictwords import Gate
from ..errors import GpuPerfError
from ..schemas import results_doc
from ..schemas.results_doc import ResultsDocument
from ..util import jsonio, memo
from ..util.atomic import atomic_write_json
from ..util.child_run import run_child
from ..util.locks import file_lock
from . import plants

SCHEMA = "pytest-gpuperf-gatecheck/1"
MAIN_COMMAND = "gpuperf run --gpuperf-device={device}"


#: the target of a memory or compute plant in a gate check of your own tests: any of their metrics
ANY_METRIC = "*"


@dataclass(frozen=True)
class Plant:
    """One planted regression: the ``--gpuperf-plant`` value, the metric that must catch it, and the
    tests (pytest arguments) that measure that metric."""

    kind: str
    arg: str
    metric: str
    tests: tuple[str, ...]
    #: the size the gate claims to catch, where the plant (``arg``) was calibrated to this machine
    #: (:func:`pytest_gpuperf.gatecheck.families.calibrate`), with the values it was calibrated between
    claim: float | None = None
    machine: float | None = None
    baseline: float | None = None

    def at_claim(self) -> "Plant":
        """This plant as it was before any calibration: planted at the size it claims (a function or metric plant,
        never calibrated, is itself)."""
        return self if self.claim is None else Plant(self.kind, f"{self.claim:g}", self.metric, self.tests)

    @property
    def size(self) -> float | str:
        """The size as recorded: the claim (a fraction for slowdowns, 1 ulp for the math plant)."""
        if self.claim is not None:
            return self.claim
        if plants.KINDS[self.kind] == "fraction":
            return float(self.arg)
        return 1.0 if self.kind == "ulp" else self.arg


def default_plants(is_cpu: bool, memory: float | None = None, compute: float | None = None) -> list[Plant]:
    """The four planted kinds: a memory-bound slowdown, a compute-bound slowdown, a math
    function 1 ulp off on some inputs, a metric that disappears. GPUs must catch 5 %; a CPU device
    gets the smallest size its noise lets it catch (``memory``/``compute`` override the sizes)."""
    copy = "256MiB" if is_cpu else "1GiB"
    # The CPU defaults are the smallest sizes the PoCL gate check caught in every try, on a busy and on a
    # quiet host (docs/evidence.md): the copy's band sits at a busy host's reading, so on a quiet host the
    # copy must take 3x its time (2.0); the FMA chain at 2.2x its instructions (1.2) clears its band with room
    mem = memory if memory is not None else (2.0 if is_cpu else 0.05)
    comp = compute if compute is not None else (1.2 if is_cpu else 0.05)
    return [
        Plant("memory", f"{mem:g}", f"memory.copy.bandwidth.{copy}",
              ("suites/test_memory.py", "-k", f"copy_bandwidth and {copy}")),
        Plant("compute", f"{comp:g}", "latency.fp32.fma.cycles",
              ("suites/test_latency.py", "-k", "test_latency and fp32-ieee")),
        Plant("ulp", "sin", "accuracy.fp32.sin.max_ulp",
              ("suites/test_accuracy_math.py", "-k", "test_math_function and sin- and fp32")),
        Plant("missing", "memory.copy.bandwidth.16MiB", "memory.copy.bandwidth.16MiB",
              ("suites/test_memory.py", "-k", "copy_bandwidth and 16MiB")),
    ]


def node_id(test: str, spec: str) -> str:
    """The node id of a baseline entry's ``test`` on device ``spec``: baselines store it without the device
    parameter (``t.py::f[16MiB]``, :func:`pytest_gpuperf.session.strip_device_id`), a run collects
    ``t.py::f[opencl:0-16MiB]`` (the device parameter comes first)."""
    head, bracket, params = test.partition("[")
    params = params[:-1] if bracket and params.endswith("]") else ""
    return f"{head}[{spec}-{params}]" if params else f"{head}[{spec}]"


def choose_plants(specs: Sequence[str] | None, is_cpu: bool, baseline_tests: Mapping[str, str] | None = None,
                  memory: float | None = None, compute: float | None = None, spec: str = "",
                  own_tests: tuple[str, ...] | None = None) -> list[Plant]:
    """The plants a ``--plant`` list asks for: ``KIND`` (the device class's default size and metric) or
    ``KIND=ARG`` (``memory=0.5``, ``compute=0.1``, ``ulp=cos``, ``missing=NAME``); ``none`` alone means no
    plants, ``None`` the four defaults. A plant whose target metric is in the baseline runs only the test
    that recorded it there (its node id on device ``spec``); otherwise the default's ``-k`` selection (a
    ``missing`` plant: ``own_tests``, the tests of your own the gate check runs, else the shipped suites). Raises
    :class:`GpuPerfError` with one line naming the bad value."""
    defaults = {p.kind: p for p in default_plants(is_cpu, memory, compute)}
    if specs is None:
        return list(defaults.values())
    tests = dict(baseline_tests or {})
    chosen: list[Plant] = []
    for value in specs:
        if value == "none":
            continue
        kind, sep, arg = value.partition("=")
        if kind not in defaults:
            raise GpuPerfError(f"--plant {value!r}: use KIND or KIND=ARG with KIND one of {sorted(defaults)} (or none); "
                               "plant the other families with --families")
        base = defaults[kind]
        if not sep:
            chosen.append(base)
            continue
        try:
            plants.parse([value])
        except ValueError as exc:
            raise GpuPerfError(str(exc).replace("--gpuperf-plant", "--plant")) from None
        if kind in ("memory", "compute"):
            # in a gate check of your own tests, the plant lands in them (each honours gpuperf_plant as it can),
            # and any of their metrics that reads regressed catches it: the shipped target is not among them
            chosen.append(Plant(kind, arg, ANY_METRIC, own_tests) if own_tests else Plant(kind, arg, base.metric, base.tests))
            continue
        metric = f"accuracy.fp32.{arg}.max_ulp" if kind == "ulp" else arg
        fallback = (("suites/test_accuracy_math.py", "-k", f"test_math_function and {arg}- and fp32")
                    if kind == "ulp" else (own_tests or ("suites/",)))
        chosen.append(Plant(kind, arg, metric, (node_id(tests[metric], spec),) if metric in tests and spec else fallback))
    return chosen


#: the exit status :func:`run_pytest` gives a run it stopped at its timeout (as ``timeout(1)`` does)
TIMED_OUT = 124
#: how long :func:`run_pytest` lets a run take where the caller names no limit
RUN_TIMEOUT_S = 3600.0


@dataclass
class RunOutcome:
    """What one pytest subprocess said: its exit code, its results document, its wall time."""

    exit: int
    doc: ResultsDocument | None  # the results file it wrote (ResultsDocument.load), None where it wrote none
    wall_s: float
    log: Path
    results: Path
    notes: list[str] = field(default_factory=list)

    def document(self) -> ResultsDocument:
        """Its results document; an empty one (no metrics, nothing missing) where the run wrote none."""
        return self.doc if self.doc is not None else ResultsDocument(keys=("metrics",), source=str(self.results))


def _plugin_args() -> list[str]:
    """``-p pytest_gpuperf.plugin`` where the package is not installed (a GPU machine that runs the
    checkout through PYTHONPATH); nothing where pytest finds the plugin through its entry point."""
    from importlib.metadata import entry_points

    installed = any(e.value == "pytest_gpuperf.plugin" for e in entry_points(group="pytest11"))
    return [] if installed else ["-p", "pytest_gpuperf.plugin"]


def run_pytest(device: str, args: Sequence[str], results: Path, log: Path, *, baseline_dir: str | None,
               env: dict[str, str] | None = None, cwd: str | Path = ".", timeout_s: float = RUN_TIMEOUT_S,
               checkpoint: Callable[[], None] = lambda: None) -> RunOutcome:
    """Run ``python -m pytest --gpuperf-device=DEV ARGS`` writing results to ``results`` and output to ``log``.
    ``checkpoint``: called first, and a stop while it runs is passed on to it
    (:func:`~pytest_gpuperf.util.child_run.run_child`)."""
    from ..suiterun import command

    # the same command line ``gpuperf run`` builds: ``suites/…`` names the shipped suites unless cwd has its
    # own, and the rootdir stays cwd (pytest would otherwise take the installed suites folder)
    cmd = command([*_plugin_args(), f"--gpuperf-device={device}", *args, f"--gpuperf-json={results}",
                   "-p", "no:cacheprovider", "-q", "-rs"], cwd=Path(cwd).resolve())
    if baseline_dir:
        cmd.append(f"--gpuperf-baseline-dir={baseline_dir}")
    results.parent.mkdir(parents=True, exist_ok=True)
    log.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with open(log, "w", encoding="utf-8") as out:
        out.write("$ " + shlex.join(cmd) + "\n")
        out.flush()
        code = run_child(cmd, out, cwd, env={**os.environ, **(env or {})}, timeout_s=timeout_s, checkpoint=checkpoint)
        if code is None:  # the child is killed; what it wrote before stays
            code = TIMED_OUT
    wall = time.perf_counter() - started
    doc = ResultsDocument.load(results) if results.exists() else None
    return RunOutcome(code, doc, wall, log, results)


#: a pytest log's lines that say why a run ended before it measured anything (collection errors, usage errors,
#: the plugin's verdict line)
REASON = re.compile(r"^(ERROR|E   |ImportError|ModuleNotFoundError|import file mismatch|imported module|which is not|"
                    r"!!!|gpuperf (FAILED|INTERRUPTED|PASSED))")


def why_nothing(log: Path, limit: int = 6) -> list[str]:
    """Up to ``limit`` lines of ``log`` saying why its run recorded no metric (the first of each kind of error,
    then the last of the rest), for a gate check to print beside the run instead of a bare exit status."""
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:
        return [f"its log {log} cannot be read: {exc}"]
    found: list[str] = []
    for line in lines:
        if REASON.match(line) and line.strip() not in found:
            found.append(line.strip())
    return found[:limit - 1] + found[-1:] if len(found) > limit else found


def cache_state() -> str:
    """What the runs' cache (:func:`pytest_gpuperf.util.memo.cache_root`: tuning references, profiler counters,
    compiled kernels) holds as a run starts: ``empty`` (no file: the run measures and compiles all of it anew, as on a
    fresh machine, so its time is a first run's), ``warm``, or ``unknown`` (it cannot be read)."""
    root = memo.cache_root()
    try:
        return "warm" if root.is_dir() and any(p.is_file() for p in root.rglob("*")) else "empty"
    except OSError:
        return "unknown"


def failed_tests(tests: list[dict[str, Any]]) -> list[str]:
    """The ids of a run's tests that failed or errored (its results' ``tests``): an A/A run may exit 1 with no
    metric regressed or missing, and then these say why."""
    return [str(t.get("test")) for t in tests if str(t.get("outcome")) in ("failed", "error")]


def _aa_line(entry: dict[str, Any]) -> str:
    """How an A/A run ended, for the progress line and the verdict: exit, regressed, missing, failed tests."""
    failed = entry.get("failed_tests") or []
    return (f"exit {entry['exit']}, regressed {[r['metric'] for r in entry['regressed']]}, missing {entry['missing']}"
            + (f", failed tests {failed}" if failed else ""))


def summarize_aa(k: int, outcome: RunOutcome, fresh: bool, cache: str | None = None) -> dict[str, Any]:
    """One A/A entry: how many metrics, which regressed (with their lines), which were incomparable; ``cache``:
    :func:`cache_state` as the run started."""
    doc = outcome.document()
    metrics = doc.metrics
    regressed = [{"metric": m.name, "line": m.info.get("line", "")} for m in metrics
                 if m.verdict == Gate.REGRESSED]
    verdicts: dict[str, int] = {}
    for m in metrics:
        verdicts[m.verdict] = verdicts.get(m.verdict, 0) + 1
    return {"run": k, "metrics": len(metrics), "regressed": regressed, "missing": doc.get("missing", []),
            "failed_tests": failed_tests(doc.get("tests") or []),
            "incomparable": [m.name for m in metrics if m.verdict == Gate.INCOMPARABLE],
            "verdicts": verdicts, "exit": outcome.exit, "wall_s": round(outcome.wall_s, 1), "fresh_machine": fresh,
            **({"cache": cache} if cache is not None else {}),
            "results": outcome.results.name, "log": outcome.log.name,
            "finished": (doc.run or {}).get("finished")}


def detected(plant: Plant, outcome: RunOutcome) -> tuple[bool, str]:
    """Whether the gate caught ``plant`` in this run, and the verdict it gave the target metric (:data:`ANY_METRIC`:
    the metrics of your own tests that read regressed, if any did)."""
    doc = outcome.document()
    if plant.kind == "missing":
        gone = plant.metric in doc.get("missing", [])
        return gone and outcome.exit != 0, "missing" if gone else ("recorded" if doc.metric(plant.metric) else "absent")
    if plant.metric == ANY_METRIC:
        hit = sorted(m.name for m in doc.metrics if m.verdict == Gate.REGRESSED)
        if hit:
            return outcome.exit != 0, f"regressed: {', '.join(hit)}"
        return False, "no metric regressed (" + ", ".join(sorted({m.verdict for m in doc.metrics})) + ")"
    verdict = next((m.verdict for m in doc.metrics if m.name == plant.metric), "absent")
    return verdict == Gate.REGRESSED and outcome.exit != 0, verdict


def realized(plant: Plant, outcome: RunOutcome) -> float | None:
    """How far the planted run moved the target metric from its baseline value, in the bad direction (a fraction:
    +0.06 is 6 % worse), or None where the run has no such reading. A plant sets what the code does (a spin after
    each span of copies, a spin per launch), not the metric: a plant that hides behind other work, or a machine
    that reads better than the baseline (where the plant was not calibrated to it), moves less than the claimed
    size, and a miss is only the gate's where the metric moved at least its claim."""
    if plant.metric == ANY_METRIC:
        return None  # no one target to read a move off
    m = outcome.document().metric(plant.metric)
    base = (None if m is None else m.baseline) or {}
    delta = None if m is None else m.delta_rel  # as stored, or as a saved run's form leaves it to be read
    if not isinstance(delta, (int, float)):
        return None
    return round(-float(delta) if base.get("better") == "higher" else float(delta), 5)


def pick_gap(plant: Plant, outcome: RunOutcome) -> dict[str, Any] | None:
    """Where a ``tuner`` plant's pick landed in the tuner's space (the target's ``info["planted_pick"]``: its
    slowdown over the honest pick, and the largest slowdown of a configuration between the two), or None for other
    plants."""
    if plant.kind != "tuner":
        return None
    m = outcome.document().metric(plant.metric)
    gap = ((None if m is None else m.info) or {}).get("planted_pick")
    return dict(gap) if isinstance(gap, Mapping) else None


def machine_values(paths: Sequence[Path], key: str | None = None) -> dict[str, float]:
    """The median value per metric over unplanted results documents of this machine (A/A runs, or files named
    by ``--calibrate-from``): what the machine reads where the plants are calibrated from. A run that read a
    metric ``contended`` (a busy host) is left out of that metric's median. ``key``: the device key every
    document must be of (:class:`GpuPerfError` names the one that is not)."""
    seen: dict[str, list[float]] = {}
    for path in paths:
        if not jsonio.saved(path).is_file():
            raise GpuPerfError(f"{path}: no such results file to calibrate the plants from; name unplanted "
                               "results of this machine (--gpuperf-json), or leave --calibrate-from out")
        doc = ResultsDocument.load(path)  # not JSON or not a results document: ResultsDocumentError says so
        got = (doc.device or {}).get("key")
        if key is not None and got != key:
            raise GpuPerfError(f"{path} holds results of {got!r}, not of {key!r}: calibrate from runs of this device")
        for m in doc.metrics:
            if isinstance(m.value, (int, float)) and m.verdict != Gate.CONTENDED:
                seen.setdefault(m.name, []).append(float(m.value))
    return {name: float(statistics.median(v)) for name, v in seen.items()}


def card_uuid(path: Path) -> str:
    """The UUID of the card the results document ``path`` was measured on (:func:`.results_doc.card_uuid`), read
    once per file while it is unchanged: every plant of a call asks it of the same A/A runs."""
    st = path.stat()
    return _card_uuid(str(path), st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=256)
def _card_uuid(path: str, mtime_ns: int, size: int) -> str:
    return results_doc.card_uuid(ResultsDocument.load(path).card)


def same_card(paths: Sequence[Path], unplanted: Path) -> list[Path]:
    """Of ``paths`` (the file's A/A runs of this commit), those measured on the card the unplanted run
    ``unplanted`` was (the same UUID): the same board's readings, which a plant's calibration pools with that
    run, so that one run caught in a passing state of the board (one whose measured SM clock differs from one
    process to the next) does not size every try of the call. None where the card names no UUID."""
    uuid = card_uuid(unplanted)
    return [p for p in paths if card_uuid(p) == uuid] if uuid else []


def aa_results(doc: Mapping[str, Any] | None, commit: str, results_dir: Path) -> list[Path]:
    """The results files of ``doc``'s A/A runs of ``commit`` that are still at hand in ``results_dir``."""
    out = []
    for r in (doc or {}).get("aa", []):
        if r.get("commit", (doc or {}).get("commit")) == commit and r.get("results"):
            p = jsonio.saved(results_dir / r["results"])
            if p.exists():
                out.append(p)
    return out


def _free_index(folder: Path, prefix: str, start: int) -> int:
    """The first index from ``start`` whose ``<prefix>-<index>.json``/``.log`` does not exist yet: a run's
    files never replace an earlier run's (entries moved out of the gate-check file keep theirs)."""
    n = max(1, start)
    while any(jsonio.saved(folder / f"{prefix}-{n}{ext}").exists() for ext in (".json", ".log")):  # or .gz
        n += 1
    return n


def load(path: Path) -> dict[str, Any] | None:
    """An existing gate-check file, validated enough to append to; ``None`` when absent."""
    if not path.exists():
        return None
    try:
        doc = jsonio.read_json(path)
    except json.JSONDecodeError as exc:
        raise GpuPerfError(f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}); move it aside to start a "
                           "new gate check") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise GpuPerfError(f"{path} is not a {SCHEMA} file; move it aside to start a new gate check")
    return doc


def _stamped(entries: list[dict[str, Any]], commit: Any) -> list[dict[str, Any]]:
    """Entries with their commit: one written before entries carried it has the document's."""
    return [e if "commit" in e else {**e, "commit": commit} for e in entries]


def _summed(old: list[dict[str, Any]], old_commit: Any, new: list[dict[str, Any]],
            new_commit: Any) -> list[dict[str, Any]]:
    """Planted entries of two files, tries and detections summed per kind, metric, size and commit."""
    planted = {(p["kind"], p["metric"], json.dumps(p["size"]), p["commit"]): dict(p) for p in _stamped(old, old_commit)}
    for p in _stamped(new, new_commit):
        key = (p["kind"], p["metric"], json.dumps(p["size"]), p["commit"])
        if key in planted:
            q = planted[key]
            q["tries"] += p["tries"]
            q["detected"] += p["detected"]
            q["verdicts"] = q.get("verdicts", []) + p.get("verdicts", [])
            q["runs"] = q.get("runs", []) + p.get("runs", [])
            if "planted" in q or "planted" in p:  # per try: an uncalibrated try planted its claim
                q["planted"] = (q.get("planted") or [q["size"]] * (q["tries"] - p["tries"])) + \
                    (p.get("planted") or [p["size"]] * p["tries"])
            if "calibration" in q or "calibration" in p:
                q["calibration"] = (q.get("calibration") or [None] * (q["tries"] - p["tries"])) + \
                    (p.get("calibration") or [None] * p["tries"])
            for per_try in ("realized", "gaps"):
                if per_try in q or per_try in p:
                    q[per_try] = (q.get(per_try) or [None] * (q["tries"] - p["tries"])) + \
                        (p.get(per_try) or [None] * p["tries"])
        else:
            planted[key] = dict(p)
    return list(planted.values())


#: a catch whose tries moved the metric more than this multiple of its claim (median) shows the gate catching that
#: move, not the claim: a plant that cannot be made as small as the claim (a spin longer than the wait it adds)
OVERSHOOT = 1.5


def beyond_claim(p: Mapping[str, Any]) -> float | None:
    """The median move of a plant's caught tries where it exceeds :data:`OVERSHOOT` × its claim, else None: that
    catch proves detection at the move, not at the claimed size (an additive plant's relative move says nothing)."""
    size = p.get("size")
    moved = [m for v, m in zip(p.get("verdicts") or [], p.get("realized") or [])
             if v == Gate.REGRESSED and isinstance(m, (int, float))]
    if not moved or not isinstance(size, (int, float)) or size <= 0 or p.get("kind") in plants.ADDITIVE:
        return None
    mid = float(statistics.median(moved))
    return mid if mid > OVERSHOOT * float(size) else None


def detection(doc: dict[str, Any]) -> dict[str, Any]:
    """The A/A runs and the planted tries of the file's latest commit: how many A/A runs were clean (no
    regression, nothing missing, exit 0) and, per family, how many planted tries the gate caught — the
    detection rate beside the false-alarm rate. Curve points are left out (they chart the gate's reach below
    its claim, where misses are expected)."""
    commit = doc.get("commit")
    aa = [r for r in doc["aa"] if r.get("commit", commit) == commit]
    clean = sum(1 for r in aa if not r["regressed"] and not r["missing"] and r["exit"] == 0)
    families: dict[str, dict[str, Any]] = {}
    for p in doc["planted"]:
        if p.get("commit", commit) != commit:
            continue
        f = families.setdefault(p["kind"], {"family": plants.FAMILY.get(p["kind"], p["kind"]), "tries": 0,
                                            "detected": 0, "metrics": []})
        f["tries"] += p["tries"]
        f["detected"] += p["detected"]
        row = {"metric": p["metric"], "size": p["size"], "tries": p["tries"], "detected": p["detected"]}
        over = beyond_claim(p)
        if over is not None:
            row["beyond_claim"] = round(over, 5)  # caught at this move: the claim itself is not shown
            gap = next((g for g in p.get("gaps") or [] if g), None)
            if gap is not None:  # a pick's plant: the space's steps around the claim
                row["gap"] = gap
        f["metrics"].append(row)
    for f in families.values():
        f["rate"] = round(f["detected"] / f["tries"], 3) if f["tries"] else None
    # a clean run judged what its baseline could judge: the metrics it read incomparable were not judged at all
    unjudged = sorted({name for r in aa for name in r.get("incomparable", [])})
    return {"commit": commit,
            "aa": {"runs": len(aa), "clean": clean,
                   "false_alarm_rate": round(1 - clean / len(aa), 3) if aa else None, "incomparable": unjudged},
            "families": families}


def merge(old: dict[str, Any] | None, new: dict[str, Any]) -> dict[str, Any]:
    """Append ``new``'s A/A runs (renumbered) and planted tries to ``old``. Every entry keeps the commit it
    was made at (entries of a file written before they carried one take that file's ``commit``), and
    planted tries are summed only per kind, metric, size *and commit*: a later commit's tries never
    inherit an earlier one's detections."""
    if old is None:
        return new
    # a side whose runs reported no device (each failed to start) takes the other's
    if new["device"].get("key") is None:
        new = {**new, "device": old["device"]}
    if old["device"].get("key") is None:
        old = {**old, "device": new["device"]}
    if old["device"].get("key") != new["device"].get("key"):
        raise GpuPerfError(f"cannot append a gate check of {new['device'].get('key')} to one of "
                           f"{old['device'].get('key')}")
    out = dict(old)
    # a run keeps its number (its results files' index) unless the old file already used it
    taken = max((int(e["run"]) for e in old["aa"]), default=0)
    added = []
    for r in _stamped(new["aa"], new.get("commit")):
        taken = max(taken + 1, int(r["run"]))
        added.append({**r, "run": taken})
    out["aa"] = _stamped(old["aa"], old.get("commit")) + added
    for section in ("planted", "curves"):
        out[section] = _summed(old.get(section, []), old.get("commit"), new.get(section, []), new.get("commit"))
    if "not_planted" in new:  # every call's left-out targets, once each (a later call adds to the earlier)
        kept = list(old.get("not_planted", []))
        out["not_planted"] = kept + [n for n in new["not_planted"] if n not in kept]
    commits = {old.get("commit"), new.get("commit")}
    if len(commits) > 1:
        out["commits"] = sorted(c for c in (set(old.get("commits", [])) | commits) if c)
    out["commit"] = new.get("commit")
    out["updated"] = new.get("updated")
    return out


#: a planted run is stopped once it has run this many times as long as its unplanted run of the same tests (never
#: sooner than :data:`PLANT_TIMEOUT_FLOOR_S`): a plant that makes the device's work outlive the session's watchdog
#: leaves a process that cannot exit while that work runs, and it would hold the gate check until its own limit
PLANT_TIMEOUT_FACTOR = 10
PLANT_TIMEOUT_FLOOR_S = 120.0


def plant_timeout(unplanted_s: float | None) -> float:
    """How long a planted run may take: :data:`PLANT_TIMEOUT_FACTOR` × its unplanted run's wall time, at least
    :data:`PLANT_TIMEOUT_FLOOR_S`; :data:`RUN_TIMEOUT_S` where no unplanted run was timed (a ``missing`` plant)."""
    if unplanted_s is None:
        return RUN_TIMEOUT_S
    return max(PLANT_TIMEOUT_FLOOR_S, PLANT_TIMEOUT_FACTOR * float(unplanted_s))


def _tries(p: Plant, tries: int, prev: int, device: str, baseline_dir: str | None, results_dir: Path,
           cwd: str | Path, commit: str, echo: Any,
           recalibrate: Callable[[Sequence[Plant], Mapping[str, float]], list[Plant]] | None = None,
           once: bool = False, peers: Sequence[Path] = (),
           checkpoint: Callable[[], None] = lambda: None) -> tuple[dict[str, Any], dict[str, Any]]:
    """``tries`` runs of one plant: its entry, and the device document its runs reported. ``recalibrate``:
    before each try (``once``: before the first, its size kept for the others), run the plant's tests unplanted
    (``calib-KIND-N``) and calibrate the try's plant to what they read — the machine of that very moment, where a
    scheduler may give each call another machine — pooled with those of ``peers`` (A/A runs of this commit)
    measured on the same card (:func:`same_card`): the median of them all."""
    verdicts: list[str] = []
    planted: list[float | None] = []
    calibration: list[dict[str, Any] | None] = []
    moved: list[float | None] = []
    gaps: list[dict[str, Any] | None] = []
    hits = 0
    tags: list[str] = []
    device_doc: dict[str, Any] = {}
    q = p
    unplanted_s: float | None = None  # the last unplanted run's wall time: the planted runs' watchdog
    stopped: list[str] = []
    for t in range(1, tries + 1):
        index = _free_index(results_dir, f'plant-{p.kind}', prev + t)
        tag = f"plant-{p.kind}-{index}"
        tags.append(tag)
        if t == 1 or not once:  # once: later tries keep the first try's calibrated plant
            q = p
        if recalibrate is not None and p.kind != "missing" and (t == 1 or not once):
            ctag = f"calib-{p.kind}-{_free_index(results_dir, f'calib-{p.kind}', index)}"
            c = run_pytest(device, list(p.tests), results_dir / f"{ctag}.json", results_dir / f"{ctag}.log",
                           baseline_dir=baseline_dir, cwd=cwd, checkpoint=checkpoint)
            unplanted_s = c.wall_s
            pooled = [c.results, *same_card(peers, c.results)] if c.results.exists() else []
            q = recalibrate([p.at_claim()], machine_values(pooled) if pooled else {})[0]
            if q.claim is not None:
                also = f" with {len(pooled) - 1} A/A run(s) of this card" if len(pooled) > 1 else ""
                echo(f"plant {p.kind} on {p.metric} try {t}: claim {q.claim:g}, planted {q.arg} (the unplanted run "
                     f"{ctag}{also} read {q.machine:.6g} against the baseline's {q.baseline:.6g})")
        planted.append(float(q.arg) if q.claim is not None else None)
        calibration.append({"machine": q.machine, "baseline": q.baseline} if q.claim is not None else None)
        limit = plant_timeout(unplanted_s)
        o = run_pytest(device, [*q.tests, "--gpuperf-plant", f"{q.kind}={q.arg}"], results_dir / f"{tag}.json",
                       results_dir / f"{tag}.log", baseline_dir=baseline_dir, cwd=cwd, timeout_s=limit,
                       checkpoint=checkpoint)
        if o.exit == TIMED_OUT:
            why = o.document().get("run", {}).get("abandoned")
            stopped.append(f"{tag}: stopped after {limit:.0f} s ({PLANT_TIMEOUT_FACTOR}× its unplanted run); "
                           + (f"its results say why: {why}" if why else "it wrote no reason"))
            echo(f"plant {q.kind}={q.arg} try {t}: {stopped[-1]}")
        device_doc = device_doc or o.document().get("device", {})
        hit, verdict = detected(p, o)
        hits += hit
        verdicts.append(verdict)
        moved.append(None if p.kind == "missing" else realized(p, o))
        gaps.append(pick_gap(p, o))
        shift = "" if moved[-1] is None else f", moved {moved[-1]:+.2%}"
        echo(f"plant {q.kind}={q.arg} try {t}: {p.metric} → {verdict}{shift} (exit {o.exit}, {o.wall_s:.0f} s)")
    entry = {"kind": p.kind, "arg": p.arg, "metric": p.metric, "size": p.size, "tries": tries, "detected": hits,
             "verdicts": verdicts, "runs": tags, "commit": commit}
    if stopped:  # a plant the device could not finish: named, whatever its verdicts read
        entry["stopped"] = stopped
    if any(x is not None for x in planted):  # calibrated to this machine: per try, the size planted and from what
        entry["planted"] = [float(p.size) if x is None else x for x in planted]  # type: ignore[arg-type]
        entry["calibration"] = calibration
    if any(v is not None for v in moved):
        entry["realized"] = moved
    if any(g is not None for g in gaps):
        entry["gaps"] = gaps
    return entry, device_doc


#: the A/A runs a gate check makes where ``--aa`` is not given; with ``--append``, what this commit's runs in the file
#: are brought up to (:func:`aa_to_make`)
DEFAULT_AA = 3


def aa_of(doc: Mapping[str, Any] | None, commit: str) -> int:
    """The A/A runs of ``commit`` a gate-check file holds."""
    return sum(1 for r in (doc or {}).get("aa", []) if r.get("commit") == commit)


def aa_to_make(aa: int | None, old: Mapping[str, Any] | None, commit: str) -> int:
    """The A/A runs to make: ``aa`` where given; else :data:`DEFAULT_AA` less the runs of ``commit`` the file to
    append to already holds (a call that appends plants to a file of three clean runs makes no fourth)."""
    return aa if aa is not None else max(0, DEFAULT_AA - aa_of(old, commit))


def gatecheck(*, device: str, out: Path, aa: int | None, plant_list: Sequence[Plant], tries: int, baseline_dir: str | None,
              results_dir: Path, commit: str, append: bool, fresh_first: bool, cwd: str | Path = ".",
              echo: Any = print, curve_list: Sequence[Plant] = (),
              not_planted: Sequence[dict[str, Any]] | None = None,
              aa_args: Sequence[str] = ("suites/",),
              calibrate: Callable[[Sequence[Plant], Mapping[str, float]], list[Plant]] | None = None,
              calibrate_from: Sequence[Path] = (), device_key: str | None = None,
              calibrate_each: bool = False, checkpoint: Callable[[], None] = lambda: None) -> dict[str, Any]:
    """Run the A/A and planted runs (and the detection curves' plants, ``curve_list``) and write (or extend)
    ``out``; ``not_planted``: the family targets left out, with the reason; ``aa_args``: what the A/A runs run
    (the shipped suites, or the tests of your own named after ``--``). ``calibrate``: the caller's calibration of
    the plants to what this machine reads (:func:`machine_values`) — of the ``calibrate_from`` results, else of
    the A/A runs of ``commit`` in this call and those in the file of the same card (all of them where the card names
    no UUID); without any, the plants stay at their claims
    (``device_key``: the device the ``calibrate_from`` results must be of); ``calibrate_each``: instead, each
    try is calibrated to an unplanted run of its tests just before it (:func:`_tries`). A call that makes no A/A
    run and names no results calibrates each plant to an unplanted run of its tests made just before its first try,
    pooled with the file's A/A runs of this commit on the same card (:func:`same_card`): the file's other A/A runs
    may come from an earlier call on another machine. ``checkpoint``: called before each run (see :func:`run_pytest`).
    Returns the written document."""
    if (aa is not None and aa < 0) or tries < 0:
        raise GpuPerfError("--aa and --tries must be non-negative")
    if not append and out.exists():
        raise GpuPerfError(f"{out} exists; pass --append to add runs to it, or move it aside")
    old = load(out) if append else None
    if aa is None and old is not None:
        echo(f"A/A: {out} holds {aa_of(old, commit)} run(s) of {commit[:8]}; {aa_to_make(None, old, commit)} more "
             f"before the plants (--aa N to choose)")
    aa = aa_to_make(aa, old, commit)
    # read (and refused) before any run: named results of another device stop the check at once
    named = machine_values(calibrate_from, device_key) if calibrate is not None and calibrate_from else None
    offset = len(old["aa"]) if old else 0
    runs: list[dict[str, Any]] = []
    device_doc: dict[str, Any] = {}
    sections: dict[str, list[dict[str, Any]]] = {"planted": [], "curves": []}
    saved = {"aa": 0, "planted": 0, "curves": 0}  # how many of this call's entries the file already holds
    written = append

    def save() -> dict[str, Any]:
        """Add this call's entries not yet in ``out`` to it: after every A/A run and every plant's tries, so
        an interrupted check (Ctrl-C, a batch system's SIGTERM or time limit) keeps what it measured."""
        nonlocal written
        new = {"schema": SCHEMA, "device": device_doc, "commit": commit,
               "command": MAIN_COMMAND.format(device=device) + "".join(
                   " " + shlex.quote(a) for a in aa_args if a != "suites/"),
               "aa": runs[saved["aa"]:], **{k: v[saved[k]:] for k, v in sections.items()},
               "updated": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        if not_planted is not None:
            new["not_planted"] = list(not_planted)
        out.parent.mkdir(parents=True, exist_ok=True)
        with file_lock(out):
            doc = merge(load(out) if written else None, new)
            doc["detection"] = detection(doc)
            atomic_write_json(out, doc)
        written = True
        saved.update({"aa": len(runs), **{k: len(v) for k, v in sections.items()}})
        return doc

    for k in range(1, aa + 1):
        env = {}
        fresh = fresh_first and k == 1 and offset == 0
        if fresh:  # a fresh machine: no PoCL kernel cache (PoCL compiles and caches kernels on first use)
            env["POCL_CACHE_DIR"] = tempfile.mkdtemp(prefix="gpuperf-fresh-pocl-")
        n = _free_index(results_dir, "aa", offset + k)
        cache = cache_state()
        o = run_pytest(device, list(aa_args), results_dir / f"aa-{n}.json", results_dir / f"aa-{n}.log",
                       baseline_dir=baseline_dir, env=env, cwd=cwd, checkpoint=checkpoint)
        entry = {**summarize_aa(n, o, fresh, cache), "commit": commit}
        device_doc = o.document().get("device", device_doc)
        runs.append(entry)
        save()
        echo(f"A/A run {n}: {entry['metrics']} metrics, {_aa_line(entry)}, {o.wall_s:.0f} s"
             + (" with an empty cache" if cache == "empty" else "")
             + (f", {len(entry['incomparable'])} incomparable (not judged)" if entry["incomparable"] else ""))
        if not entry["metrics"]:  # what a user needs to mend it, from the run's log (named, with its path)
            echo(f"  it recorded nothing; from {o.log}:")
            for line in why_nothing(o.log):
                echo(f"    {line}")
    # no A/A run in this call and no results named: the file's runs may be another machine's, so each plant is
    # calibrated to this machine before its first try
    first_only = calibrate is not None and not calibrate_each and aa == 0 and not calibrate_from
    if calibrate is not None and plant_list and not calibrate_each and not first_only:
        own = [jsonio.saved(results_dir / r["results"]) for r in runs if jsonio.saved(results_dir / r["results"]).exists()]
        earlier = aa_results(old, commit, results_dir)
        if own and card_uuid(own[0]):  # the file's runs of another card were another machine's
            earlier = same_card(earlier, own[0])
        sources = list(calibrate_from) or earlier + own
        if sources:
            plant_list = calibrate(plant_list, named if named is not None else machine_values(sources))
            for p in plant_list:
                if p.claim is not None:
                    echo(f"plant {p.kind} on {p.metric}: claim {p.claim:g}, planted {p.arg} (this machine reads "
                         f"{p.machine:.6g} against the baseline's {p.baseline:.6g}, {len(sources)} unplanted runs)")
    for section, chosen in (("planted", plant_list), ("curves", curve_list)):
        for p in chosen:
            # file indices go on from the earlier tries of the kind, in the file and in this call
            prev = sum(q["tries"] for key in ("planted", "curves") for q in (old or {}).get(key, [])
                       if q["kind"] == p.kind)
            prev += sum(q["tries"] for key in sections for q in sections[key] if q["kind"] == p.kind)
            entry, dev = _tries(p, tries, prev, device, baseline_dir, results_dir, cwd, commit, echo,
                                calibrate if (calibrate_each or first_only) and section == "planted" else None,
                                once=first_only, peers=aa_results(old, commit, results_dir) if first_only else (),
                                checkpoint=checkpoint)
            device_doc = device_doc or dev
            sections[section].append(entry)
            save()
    return save()


#: why a missed try's verdict left it unjudged, where the fix is the baseline's
UNJUDGED_WHY = {Gate.NEW: "the baseline has no entry for it",
                Gate.INCOMPARABLE: "the baseline's entry was measured another way; re-make it with "
                                   "gpuperf baseline from-results --identity-changed"}


def _short_of(p: Mapping[str, Any]) -> str:
    """Why a plant's missed tries were missed, where the record shows it: tries the gate did not judge against a band
    (``new``, ``incomparable``, ``contended``…: the plant could not be caught there), and judged tries that moved the
    metric less than the planted size (the plant under-delivered there). The check fails either way: the claim was
    not shown."""
    said = []
    unjudged = [v for v in p["verdicts"] if v in Gate.ALL and v not in (*Gate.JUDGED, Gate.MISSING)]
    for v in dict.fromkeys(unjudged):
        why = UNJUDGED_WHY.get(v)
        said.append(f"{unjudged.count(v)} tr{'y' if unjudged.count(v) == 1 else 'ies'} read {v}, not judged against "
                    f"a band" + (f": {why}" if why else ""))
    size = p.get("size")
    moved = [m for v, m in zip(p["verdicts"], p.get("realized") or [])
             if v in Gate.JUDGED and v != Gate.REGRESSED and m is not None]
    if moved and isinstance(size, (int, float)) and p.get("kind") not in plants.ADDITIVE:
        under = [m for m in moved if m < float(size)]
        if under:
            said.append(f"the missed tries moved it {', '.join(f'{m:+.2%}' for m in under)}, less than the "
                        f"{float(size):.2%} planted: the plant under-delivered there")
    return "; ".join(said)


def verdict(doc: dict[str, Any]) -> tuple[bool, list[str]]:
    """(passed, problems): no A/A run regressed or went missing, and every plant was caught every try."""
    problems = []
    for r in doc["aa"]:
        if r["regressed"] or r["missing"] or r["exit"] != 0:
            problems.append(f"A/A run {r['run']}: {_aa_line(r)}")
    for p in doc["planted"]:
        if p["detected"] < p["tries"]:
            line = f"plant {p['kind']}={p['arg']} on {p['metric']}: caught {p['detected']} of {p['tries']}"
            if any(x != p["size"] for x in p.get("planted") or []):
                line += (f", claim {p['size']:g} beyond the baseline, planted "
                         + ", ".join(f"{x:g}" for x in p["planted"]) + " (calibrated to this machine)")
            short = _short_of(p)
            if short:
                line += f" ({short})"
            problems.append(line)
    return not problems, problems
