"""``gpuperf baseline init``: the first baseline of a device, from N runs of the tests named after ``--``
(your own suite: ``-- test_my_kernel.py``), or of the shipped suites when none is named.

Each run is ``gpuperf run --gpuperf-device=DEV --gpuperf-json=…`` in the current directory (the user's
repository: its commit is what the runs record). Its results go to ``<results dir>/<key>/init-<n>-<backend>.json``
and its output to ``init-<n>.log`` beside them, ``n`` numbered on from the files already there (a run never
replaces an earlier one's results: those may be what an existing baseline was made from); the terminal gets
one line per run. The runs are screened (:mod:`.contention`: figures measured on a busy host or a shared
card set aside, impossible values never stored) and merged by the same rule as ``from-results`` (value =
median of the runs, band from the larger of the within-run and between-run noise) into ``<dir>/<key>.json``:
a candidate for review, with the runs' provenance — and what was left out — as its header. An existing file
is not replaced unless asked.
"""

from __future__ import annotations

import re
import shlex
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from ..verdictwords import Gate
from ..errors import GpuPerfError
from ..timing.observers import CONTENDED_RUN_LIMIT
from ..schemas.results_doc import ResultsDocument
from ..util.child_run import run_child
from . import baseline_file, contention, detection

#: the run results and logs of init: ``init-<n>-<backend>.json``, ``init-<n>.log`` (or ``.gz``, ``.xz``)
RUN_FILE = re.compile(r"init-(\d+)(?:-[a-z]+)?(?:-\d+)?\.(?:json|log)(?:\.gz|\.xz)?")
#: the exit statuses of a run whose results init takes: passed, failed tests (their metrics are still
#: measurements), and the statuses of a run gated against an old baseline (``--replace``) that could not
#: judge enough of it — init screens those figures itself
TAKEN_EXITS = (0, 1, 7, 8, 9)


class InitRefused(GpuPerfError):
    """init wrote nothing because the runs cannot make a baseline; ``exit`` is the status to leave with."""

    def __init__(self, message: str, exit: int) -> None:
        super().__init__(message)
        self.exit = exit


@dataclass(frozen=True)
class Outcome:
    """What init did: the baseline files written, and whether any entry was left out as impossible."""

    written: list[Path]
    impossible: bool


def first_free(folders: Sequence[Path]) -> int:
    """The first run number after every ``init-<n>…`` file in ``folders``: this init's runs start there."""
    taken = [int(m.group(1)) for f in folders if f.is_dir() for p in f.iterdir() if (m := RUN_FILE.fullmatch(p.name))]
    return max(taken, default=0) + 1


def run_commands(device: str, numbers: Sequence[int], results_dir: Path, baseline_dir: Path,
                 pytest_args: Sequence[str], cwd: Path | None = None) -> list[list[str]]:
    """The ``gpuperf run`` command lines of the runs numbered ``numbers`` (their results:
    ``init-<n>-<backend>.json``): the tests ``pytest_args`` name, else the shipped suites. Each run times
    its own tuning tables (``--gpuperf-retune``): runs that replayed one stored table would agree on every
    search figure by construction, and the band would take that for stability."""
    from ..suiterun import command

    return [command([f"--gpuperf-device={device}", f"--gpuperf-json={results_dir}/{{key}}/init-{n}-{{backend}}.json",
                     f"--gpuperf-baseline-dir={baseline_dir}", "-o", "gpuperf_require_baseline=false",
                     "-p", "no:cacheprovider", "--gpuperf-retune", *pytest_args], cwd=cwd)
            for n in numbers]


def run_line(i: int, runs: int, code: int, doc_paths: Sequence[Path], docs: Sequence[ResultsDocument],
             log: Path) -> str:
    """One run in one line: its tests by outcome, its metrics by verdict, where its results and log went."""
    tests = Counter(t.get("outcome") or "?" for doc in docs for t in doc.get("tests", []))
    verdicts = Counter(m.verdict or "?" for doc in docs for m in doc.metrics)
    disturbed = sum(1 for doc in docs for m in doc.metrics
                    if contention.disturbance(m, bool(doc.device.get("is_cpu"))))
    counted = lambda c: ", ".join(f"{n} {k}" for k, n in sorted(c.items()))  # noqa: E731
    n_tests, n_metrics = sum(tests.values()), sum(verdicts.values())
    return (f"run {i} of {runs}: {n_tests} test{'s' if n_tests != 1 else ''} ({counted(tests) or 'none'}); "
            f"{n_metrics} metric{'s' if n_metrics != 1 else ''} ({counted(verdicts) or 'none'}"
            + (f"; {disturbed} measured on a busy host or card" if disturbed else "") + f"); exit {code}; "
            f"results {', '.join(map(str, doc_paths)) or 'none'}; log {log}")


def init(*, device: str, runs: int, baseline_dir: Path, results_dir: Path, pytest_args: Sequence[str],
         replace: bool, k: float, keep_contended: bool = False, echo: Callable[[str], Any] = print,
         cwd: Path | None = None, checkpoint: Callable[[], None] = lambda: None) -> Outcome:
    """Run the tests ``runs`` times and write the candidate baseline of every device they measured.
    Raises :class:`GpuPerfError` naming what stopped it (:class:`InitRefused` when the runs were too
    disturbed to make one); ``checkpoint``: before each run (:func:`~pytest_gpuperf.util.child_run.run_child`)."""
    from ..devices import discover, resolve
    from ..suiterun import named_tests
    from .merge import merge_runs

    def say(line: str) -> None:
        echo(f"gpuperf baseline init: {line}")

    if runs < 1:
        raise GpuPerfError(f"--runs {runs}: at least 1 run (3 recommended: the band then holds the spread between runs)")
    here = cwd or Path.cwd()
    infos = resolve(device, discover())
    existing = [baseline_file.path_for(baseline_dir, i.key) for i in infos if baseline_file.path_for(baseline_dir, i.key).exists()]
    if existing and not replace:
        raise GpuPerfError(f"{', '.join(map(str, existing))} exists; review it with 'gpuperf baseline check', refresh "
                           f"entries with 'gpuperf baseline from-results', or pass --replace to start over")
    baseline_dir.mkdir(parents=True, exist_ok=True)  # the runs name it (a folder that is not there is an error)
    folders = [results_dir / i.key for i in infos]
    first = first_free(folders)
    numbers = list(range(first, first + runs))
    cmds = run_commands(device, numbers, results_dir, baseline_dir, pytest_args, cwd=here)
    named = named_tests(pytest_args, here)
    say(f"{runs} run{'s' if runs > 1 else ''} of {' '.join(named) if named else 'the shipped suites'}; run "
        f"{numbers[0]}'s command (the others differ only in their number): {shlex.join(cmds[0])}")
    docs: dict[tuple[str, str], list[ResultsDocument]] = defaultdict(list)
    for i, (n, cmd) in enumerate(zip(numbers, cmds), start=1):
        log = folders[0] / f"init-{n}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        try:
            out = open(log, "x", encoding="utf-8")  # "x": numbered past every file there, never replaced
        except FileExistsError:
            raise GpuPerfError(f"{log} appeared while this init ran: another init is writing to {log.parent}; let it "
                               "finish (or give this one its own --results-dir), then run init again") from None
        with out:
            out.write("$ " + shlex.join(cmd) + "\n")
            out.flush()
            code = run_child(cmd, out, here, checkpoint=checkpoint)
        found = sorted(p for f in folders for p in f.glob(f"init-{n}-*.json"))
        if code not in TAKEN_EXITS or not found:
            raise GpuPerfError(f"run {i} of {runs} ended with exit {code} and {'partial' if found else 'no'} results; "
                               f"its output is in {log}: fix what it names, then run init again")
        run_docs = [ResultsDocument.load(p) for p in found]
        say(run_line(i, runs, code, found, run_docs, log))
        if code == 1:
            say(f"run {i} had failing tests (exit 1, {log}); their metrics are still taken — review them before "
                "committing the baseline")
        for doc in run_docs:
            docs[(doc.device["key"], doc.device["backend"])].append(doc)
    screened = {group: contention.screen(group_docs, keep_contended) for group, group_docs in docs.items()}
    for (key, backend), sc in sorted(screened.items()):
        if sc.too_disturbed():
            cause = sc.main_cause()
            every = sorted(n for n in sc.left_out if n in sc.causes)
            raise InitRefused(f"{key} ({backend}): {len(every)} of {sc.metrics} metrics were measured while "
                              f"{contention.CAUSES[cause]} in every run ({_few(every)}), more than "
                              f"{CONTENDED_RUN_LIMIT:.0%}: no baseline written — these runs "
                              f"cannot tell the code's figures; {contention.FIXES[cause]} (or keep such entries, "
                              f"flagged in the file, with --keep-contended)", contention.EXITS[cause])
    written: list[Path] = []
    for (key, backend), sc in sorted(screened.items()):
        entries = merge_runs(sc.docs, k)
        target = baseline_file.BaselineFile(baseline_file.path_for(baseline_dir, key))
        if replace and target.path.exists() and target.path not in written:
            _say_dropped(say, target.path, entries, backend)
            target.path.unlink()
        prov = contention.provenance(next(iter(entries.values()))["provenance"] if entries else {}, sc)
        for entry in entries.values():
            entry["provenance"] = prov  # one header: the file says what was left out, once
        if entries:
            baseline_file.update(target, backend, baseline_file.device_header(docs[(key, backend)][-1].device),
                                 prov, entries)
            written.append(target.path)
        _report(say, sc, key, backend)
        say(f"{'wrote ' + str(target.path) if entries else 'wrote nothing for ' + key}: {backend}: {len(entries)} "
            f"metric{'' if len(entries) == 1 else 's'} from {len(sc.docs)} run{'' if len(sc.docs) == 1 else 's'} (results under {results_dir}/{key}/); review it, then commit it")
        if entries:
            say(power_line(target.path, backend, entries, key))
    if not written:
        raise GpuPerfError("the runs left no metric to baseline; check --device, the tests named and the lines above")
    return Outcome(written, any(sc.impossible for sc in screened.values()))


def _say_dropped(say: Callable[[str], None], path: Path, entries: Mapping[str, Any], backend: str) -> None:
    """``--replace`` starts the file over: name the entries of the file being replaced that this init's runs did not
    make (another test's, another backend's), which the new file no longer holds."""
    old = baseline_file.load_file(path).data.get("backends", {})
    gone = sorted(f"{name}" if b == backend else f"{b}: {name}"
                  for b, section in old.items() for name in (section.get("metrics") or {})
                  if b != backend or name not in entries)
    if gone:
        say(f"--replace: {path} is started over; {len(gone)} of its entries are not among this init's metrics and "
            f"are dropped: {_few(gone)} (name their tests after -- to keep them, or leave out --replace and refresh "
            "entries with 'gpuperf baseline from-results')")


def power_line(path: Path, backend: str, names: Iterable[str], key: str) -> str:
    """What the written entries' gates catch (:mod:`.detection`), counted by class, and the loose ones named: a
    baseline whose runs spread too far to gate within 25 % says so when it is made, not at the first gate."""
    from .table import power

    metrics = baseline_file.load_file(path).data["backends"][backend]["metrics"]
    found = {n: power(n, metrics[n]) for n in names if n in metrics}
    counts = detection.tally(list(found.values()))
    loose = sorted((n for n, p in found.items() if p.loose), key=lambda n: -(found[n].mde or 0.0))
    line = (f"{key} ({backend}): the smallest change each entry's gate catches: "
            + ", ".join(f"{n} {'entry' if n == 1 else 'entries'} {label}" for label, n in counts.items()))
    if loose:
        line += (f"; loose (a change under {100 * detection.LOOSE:.0f} % passes): "
                 + _few([f"{n} catches ≥ {100 * (found[n].mde or 0):.3g} %" for n in loose])
                 + " — its runs spread that far: re-make it on a quieter host, with more runs, or a longer "
                   "measurement (gpuperf baseline table shows each band's cause)")
    return line


def _few(names: Sequence[str], shown: int = 5) -> str:
    """Up to ``shown`` names, then how many more."""
    more = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {more} more" if more > 0 else "")


def _report(say: Callable[[str], None], sc: contention.Screened, key: str, backend: str) -> None:
    """What the screening of one section did, named: the entries left out, made from fewer runs, flagged."""
    impossible = sorted(sc.impossible)
    disturbed = sorted(n for n in sc.left_out if n not in sc.impossible)
    if impossible:
        say(f"error: {key} ({backend}): {len(impossible)} entries left out, their runs hold impossible values "
            f"({'; '.join(f'{n}: {sc.left_out[n]}' for n in impossible[:5])}"
            f"{f'; and {len(impossible) - 5} more' if len(impossible) > 5 else ''}): a broken measurement is never "
            "stored — fix the measurement (or run alone on a quiet host if noise exceeds the effect); the file's "
            "provenance lists them under left_out")
    if disturbed:
        cause = sc.main_cause()
        say(f"{key} ({backend}): {len(disturbed)} entries left out, measured while {contention.CAUSES[cause]} in "
            f"every run: {_few(disturbed)}; {contention.FIXES[cause]} to add them (the file's provenance lists them "
            "under left_out)")
    if sc.partial:
        say(f"{key} ({backend}): {len(sc.partial)} entries made from their undisturbed runs only: "
            f"{_few(sorted(sc.partial))} (provenance: partial)")
    if sc.flagged:
        say(f"{key} ({backend}): warning: {len(sc.flagged)} entries kept although measured on a busy host or card "
            f"in every run (--keep-contended): {_few(sorted(sc.flagged))}; the file flags them (provenance: "
            "contended) — re-make them on a quiet host before relying on their bands")


def main_init(args: Any) -> int:
    """``gpuperf baseline init`` (argparse namespace from :mod:`.cli`): 0 when the baseline was written, 1
    when it was written without entries whose values or samples were impossible, the busy statuses of
    :mod:`pytest_gpuperf.exits` when the runs were too disturbed to write one."""
    import sys

    from .. import exits
    from ..util.interrupt_latch import Latch

    extra = list(args.pytest_args)
    if extra[:1] == ["--"]:
        extra = extra[1:]
    latch = Latch()
    latch.install()  # a batch system's SIGTERM stops init as Ctrl-C does
    try:
        done = init(device=args.device, runs=args.runs, baseline_dir=Path(args.dir), results_dir=Path(args.results_dir),
                    pytest_args=extra, replace=args.replace, k=args.k, keep_contended=args.keep_contended,
                    checkpoint=latch.check)
    except InitRefused as exc:
        print(f"gpuperf baseline init: error: {exc}", file=sys.stderr)
        return exc.exit
    except KeyboardInterrupt:  # the run under way was stopped too, and ended as interrupted
        print(f"gpuperf baseline init: stopped by {latch.what}: no baseline written; the runs' results and logs so far "
              f"stay under {args.results_dir}/ (a later init numbers its runs past them)", file=sys.stderr)
        return exits.INTERRUPTED
    finally:
        latch.uninstall()
    return 1 if done.impossible else 0



def _disagreeing(entries: dict[str, dict[str, Any]], results: Sequence[str], backend: str) -> dict[str, str]:
    """Entries whose value another CPU model's results (same runtime and compiler) do not reproduce within
    the entry's own tolerance: such a figure depends on the CPU (PoCL compiles for the host's ISA, and its
    vector math variants differ on a few inputs), so it cannot be shared by the family."""
    from .verdicts import compare

    out: dict[str, str] = {}
    for path in results:
        doc = ResultsDocument.load(path)
        if doc.device["backend"] != backend:
            continue
        for m in doc.metrics:
            e = entries.get(m.require("name").name)
            if e is None or not isinstance(m.value, (int, float)):
                continue
            verdict = compare(float(m.value), e["better"], e, identity=m.get("identity", {}),
                              source_digest=m.get("source_digest")).verdict
            if verdict in (Gate.REGRESSED, Gate.IMPROVED):
                out[m.name] = f"{e['value']:.10g} vs {m.value:.10g} on {doc.device['key']}"
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
