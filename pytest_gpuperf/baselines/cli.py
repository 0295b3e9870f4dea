"""``gpuperf baseline …``: make, check, migrate and review baseline files outside a pytest run.

* ``init`` — the first baseline of a device, from N runs of your tests (named after ``--``) or the shipped suites.
* ``from-results R1.json R2.json ...`` — rebuild baseline entries from several results files of the
  same device and backend, so tolerances reflect *run-to-run* noise: value = median of the runs'
  values, spread = max(median within-run σ, between-run σ), tolerance = k × spread with the floor.
  A tolerance the test set itself is kept, widened to k × the between-run σ where the runs disagree.
* ``check [PATH ...]`` — validate baseline files, listing every problem of every file (CI, review).
* ``migrate [PATH ...]`` — rewrite baseline files in the lean form (one provenance header per section),
  recording the device class where a file proves it; with ``--catalog-bands gpu|cpu``, also give every
  entry its class band as the installed catalog states it (after an upgrade that measured a class's noise
  anew), refusing a file whose class is another.
* ``diff A B`` — what changed from baseline file A to B, for a reviewer.
* ``gatecheck``, ``family``, ``table`` — the gate check, a CPU family's file, the gating table.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any, Mapping, Sequence


from .. import exits, options
from ..errors import BaselineFileError, GpuPerfError
from ..verdictwords import Gate
from ..gatecheck.run import DEFAULT_AA
from ..schemas.results_doc import ResultsDocument, ResultsDocumentError
from ..util import jsonio
from ..util.interrupt_latch import Latch
from ..util.listing import few
from . import first, review, baseline_file, catalog, lookup, noise, table, verdicts
from .merge import merge_runs


def changed_identity(entries: dict[str, dict[str, Any]], existing: Mapping[str, Mapping[str, Any]]
                     ) -> dict[str, dict[str, Any]]:
    """The entries whose identity or kernel source differs from the baseline's (or that it lacks): after a
    change that gave metrics an identity (or a new one), or changed their kernels, only those entries read
    ``incomparable`` and need re-making; every other entry keeps the runs and bands it was reviewed with."""
    from .verdicts import identity_problem, source_problem
    return {n: e for n, e in entries.items()
            if n not in existing or identity_problem(existing[n].get("identity"), e.get("identity")) is not None
            or source_problem(existing[n].get("source_digest"), e.get("source_digest")) is not None}


def cmd_from_results(args: argparse.Namespace) -> int:
    groups: dict[tuple[str, str], list[ResultsDocument]] = defaultdict(list)
    for path in args.results:
        groups_key, doc = _results_doc(path)
        if args.match:  # before merging: runs may differ in metrics the selection leaves out
            doc = replace(doc, metrics=tuple(m for m in doc.metrics if re.search(args.match, m.require("name").name)))
        groups[groups_key].append(doc)
    for (key, backend), docs in groups.items():
        floor = None if args.floor is None else (args.floor[0], args.floor[1])
        try:
            entries = merge_runs(docs, args.k, floor)
        except (KeyError, TypeError, ValueError) as exc:
            raise GpuPerfError(f"results of {key}/{backend} lack a field from-results needs ({type(exc).__name__}: "
                               f"{exc}); pass results files written by pytest --gpuperf-json") from None
        baseline = baseline_file.load(args.dir, key)
        if args.identity_changed:
            entries = changed_identity(entries, baseline.metrics(backend))
        prov = next(iter(entries.values()))["provenance"] if entries else {}
        baseline_file.update(baseline, backend, baseline_file.device_header(docs[-1].device), prov, entries)
        print(f"{baseline.path}: {backend}: {len(entries)} metrics from {len(docs)} runs")
        if len(docs) < noise.MIN_REPEATS:  # said now, not found out when every tuner and model figure is ungated
            repeated = sum(1 for n, e in entries.items()
                           if noise.model_of(n, str(e.get("unit", "")), str(e.get("better", "lower")),
                                             bool(e.get("samples")), noise.declared(n, e)) == "repeated")
            print(f"  note: {repeated} of them (tuner picks and costs, model errors: no samples of their own) are "
                  f"judged only against {noise.MIN_REPEATS} runs or more and read 'ungated' until then; make it "
                  f"from {noise.MIN_REPEATS} runs (add {noise.MIN_REPEATS - len(docs)} more results files)")
    return 0


def _results_doc(path: str) -> tuple[tuple[str, str], ResultsDocument]:
    """A results document and its (device key, backend); one clear error for a file that is missing,
    not JSON, or not a results document (a traceback before)."""
    try:
        raw = jsonio.read_json(path)
    except OSError as exc:
        raise GpuPerfError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise GpuPerfError(f"{path}: not a JSON results file ({exc})") from None
    try:
        doc = ResultsDocument.from_json(raw, path)
        device = doc.device or {}
        key = (str(device["key"]), str(device["backend"]))
    except ResultsDocumentError as exc:
        raise GpuPerfError(f"{path}: not a results file (no device key/backend or metrics: {exc.problem})") from None
    except KeyError as exc:
        raise GpuPerfError(f"{path}: not a results file (no device key/backend or metrics: {exc})") from None
    return key, doc


def _k(text: str) -> float:
    """argparse type of ``--k``: a finite, non-negative multiple of the noise σ."""
    return _checked(options.non_negative, "--k", text)


def _add_k(parser: argparse.ArgumentParser) -> None:
    """The ``--k`` option of the commands that set bands from runs (from-results, init)."""
    parser.add_argument("--k", type=_k, default=6.0,
                        help="tolerance = k × spread, spread the larger of the within-run and between-run σ "
                             "(default: %(default)s)")


def _floor(text: str) -> float:
    """argparse type of each ``--floor`` value: a finite, non-negative fraction."""
    return _checked(options.non_negative, "--floor", text)


def _checked(check: Any, name: str, text: str) -> float:
    try:
        return check(name, text)
    except options.OptionError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _files(paths: Sequence[str]) -> list[Path]:
    """The baseline files named: files, and each ``*.json`` of a directory; a path that does not exist or
    a directory without baseline files is an error (nothing would be checked)."""
    files: list[Path] = []
    for arg in paths:
        path = Path(arg)
        if path.is_dir():
            found = sorted(path.glob("*.json"))
            if not found:
                raise GpuPerfError(f"{path} holds no baseline files (*.json)")
            files += found
        elif os.path.lexists(path):  # a file; a FIFO or a link to nothing too, whose check fails
            files.append(path)
        else:
            raise GpuPerfError(f"{path} does not exist")
    return files


def cmd_check(args: argparse.Namespace) -> int:
    """Validate every baseline file named (a file, or each ``*.json`` of a directory) and report every
    problem of every file — not only the first of the first bad file. Exit 0 when all are valid, 1 when
    any is malformed, 2 when a path does not exist or names no baseline files (nothing was checked)."""
    files = _files(args.paths or ["baselines"])
    bad = 0
    for path in files:
        try:
            loaded = baseline_file.load_file(path)
        except BaselineFileError as exc:
            bad += 1
            print(f"FAIL {path}: {len(exc.problems)} problem(s)")
            for problem in exc.problems:
                print(f"  {problem}")
            continue
        key = (loaded.data.get("device") or {}).get("key")
        if key != path.stem:  # a run looks its baseline up by file name: this file would gate another device
            bad += 1
            print(f"FAIL {path}: 1 problem(s)")
            print(f"  device.key is {key!r} but the file is named {path.name!r}: a run of {path.stem!r} would be "
                  f"gated by {key!r}'s figures; rename the file to {key}.json or fix device.key")
            continue
        print(f"ok {path}")
    if bad:
        print(f"gpuperf baseline check: {bad} of {len(files)} file(s) malformed", file=sys.stderr)
    return 1 if bad else 0


def cmd_migrate(args: argparse.Namespace) -> int:
    """Rewrite every baseline file named in the lean form, without the entries of metrics the suites no longer
    record (:data:`.catalog.RETIRED`). Every other entry (and so every verdict) stays as it was, unless
    ``--catalog-bands`` names the files' device class: then each entry whose family row sets a band for it
    takes that band (what a new run would record). A file that records no device class gets the one it
    proves (:func:`.baseline_file.proven_class`) or, failing that, the one ``--catalog-bands`` names. A
    malformed file, or a class that contradicts the one a file records or proves, stops the command before
    anything is written."""
    files = _files(args.paths or ["baselines"])
    classes = {path: _device_class(path, baseline_file.load_file(path).data, args.catalog_bands)
               for path in files}  # every file valid, and of the class asked for, before the first is rewritten
    band = None
    if args.catalog_bands is not None:
        is_cpu = args.catalog_bands == "cpu"
        band = lambda name, metrics: catalog.baseline_band(name, is_cpu, metrics)  # noqa: E731
    for path in files:
        device_class, how = classes[path]
        done = baseline_file.migrate(path, catalog.retired, band, device_class)
        print(f"{'migrated' if done.changed else 'already lean'} {path}"
              + (f": device class {device_class} recorded ({how})" if how else "")
              + (f": {len(done.dropped)} retired entries dropped ({few(done.dropped)})" if done.dropped else "")
              + (f": {len(done.rebanded)} entries given the catalog's band ({few(done.rebanded)})"
                 if done.rebanded else ""))
        for line in done.unbanded:
            print(f"  kept its band: {line}; re-make the entry with 'gpuperf baseline from-results'")
    return 0


def _device_class(path: Path, data: Mapping[str, Any], asked: str | None) -> tuple[str | None, str]:
    """(the device class to record in ``path``'s header, how it is known — empty where the file records it
    already); GpuPerfError where ``asked`` (``--catalog-bands``) contradicts the class the file records or
    proves. A file that records and proves none takes ``asked``, and the output says so."""
    recorded = baseline_file.recorded_class(data)
    proven = baseline_file.proven_class(data) if recorded is None else None
    known, how = (recorded, "its device header records it") if recorded else proven or (None, "")
    if asked is not None and known is not None and asked != known:
        raise GpuPerfError(f"{path} is a {known} baseline ({how}), and --catalog-bands {asked} would give its entries "
                           f"the bands of a {asked} device: pass --catalog-bands {known} (or migrate the files of "
                           f"each class separately), or correct the file's device class if it is wrong")
    if recorded is not None:
        return recorded, ""
    if proven is not None:
        return proven
    if asked is not None:
        return asked, "it records none and nothing in it proves one: taken from --catalog-bands"
    return None, ""


def cmd_diff(args: argparse.Namespace) -> int:
    """Print what changed from baseline file A to B; exit 0 when nothing did, 1 when something did."""
    for path in (args.a, args.b):
        if not Path(path).is_file():
            raise GpuPerfError(f"{path} is not a file; pass two baseline files (an older version: "
                               f"git show REV:PATH > old.json)")
    a, b = (baseline_file.load_file(p) for p in (args.a, args.b))
    if not args.widened > 1:
        raise GpuPerfError(f"--widened {args.widened:g}: give a factor above 1 (e.g. 1.5: bands that grew by half)")
    changes = review.diff(a.data, b.data, args.widened)
    print(review.render(changes, args.a, args.b, verbose=args.all), end="")
    return 1 if changes.any() else 0


def gated_entries(baseline_dir: str | None, info: Any) -> dict[str, Any]:
    """The entries the runs of device ``info`` are gated against: the user's file in ``baseline_dir`` (default
    ``baselines``), else the reviewed one shipped, plus a CPU family's — what the gate check sizes its plants
    from, so a check run where no ``baselines/`` folder exists plants what the shipped baseline claims."""
    return lookup.resolve(Path(baseline_dir or "baselines"), info.key, info.backend,
                          info.family_key).file.metrics(info.backend)


def _kept(out: Path) -> str:
    """What an interrupted gate check's file holds: every A/A run and plant that ended before the stop."""
    try:
        doc = json.loads(out.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return f"{out} was not written (nothing had ended)"
    return f"{out} keeps {len(doc.get('aa', []))} A/A runs and {len(doc.get('planted', []))} planted kinds"


def cmd_gatecheck(args: argparse.Namespace) -> int:
    """Run the README's main command N times (A/A) and the planted regressions; write gatecheck.json."""
    from ..devices import discover, resolve
    from ..gatecheck import families
    from ..gatecheck import run as gc
    from ..suiterun import named_tests, shadowing
    from ..util.provenance import git_commit

    if why := shadowing(Path.cwd()):  # every run of the check would fail collecting the suites
        raise GpuPerfError(why)
    (info,) = resolve(args.device, discover())[:1]
    key = info.key
    extra = list(args.pytest_args)[1:] if list(args.pytest_args)[:1] == ["--"] else list(args.pytest_args)
    own = named_tests(extra, Path.cwd())
    aa_args = extra if own else ["suites/", *extra]
    results_dir = Path(args.results_dir or f"results/{key}") / "gatecheck"
    out = Path(args.out or f"results/{key}/gatecheck.json")
    entries = gated_entries(args.baseline_dir, info)
    recorded = {name: e["test"] for name, e in entries.items() if "test" in e}
    not_planted = None
    if args.families is not None:
        wanted = None if args.families == "all" else [f.strip() for f in args.families.split(",") if f.strip()]
        try:
            chosen, not_planted = families.family_plants(wanted, info.is_cpu, entries, entry_band, spec=info.spec,
                                                         ungated=lambda n, u: informational_why(n, u, entries.get(n)),
                                                         power=lambda n, e: table.power(n, e).mde,
                                                         compute_units=info.compute_units)
        except ValueError as exc:
            raise GpuPerfError(f"--families {args.families!r}: {exc}") from None
        if args.plant:
            chosen += gc.choose_plants(args.plant, info.is_cpu, recorded, args.memory, args.compute, spec=info.spec)
    elif own and args.plant is None:
        chosen = []  # the default plants target the shipped suites' metrics: none of them is in your tests
        print(f"gatecheck: A/A runs of {' '.join(own)}; no plant (the default plants target the shipped suites' "
              "metrics): plant with --plant KIND=ARG — compute=3 or memory=0.5 in your tests (each does what "
              "gpuperf_plant asks, as the docs' example does), or missing=<one of your metrics>")
    else:
        chosen = gc.choose_plants(args.plant, info.is_cpu, recorded, args.memory, args.compute, spec=info.spec,
                                  own_tests=tuple(own) or None)
    curve: list[Any] = []
    if args.curve:
        curve, no_curve = families.curve_plants(info.is_cpu, entries, info.spec,
                                                ungated=lambda n, u: informational_why(n, u, entries.get(n)))
        not_planted = [*(not_planted or []), *no_curve]
    latch = Latch()
    latch.install()  # a batch system's SIGTERM stops the check as Ctrl-C does
    try:
        doc = gc.gatecheck(device=args.device, out=out, aa=args.aa, plant_list=chosen, tries=args.tries,
                           baseline_dir=args.baseline_dir, results_dir=results_dir,
                           commit=args.commit or git_commit(), append=args.append, fresh_first=args.fresh_first,
                           curve_list=curve, not_planted=not_planted, aa_args=aa_args,
                           calibrate=None if args.no_calibrate else lambda ps, mv: families.calibrate(ps, entries, mv),
                           calibrate_from=[Path(f) for f in args.calibrate_from or []], device_key=key,
                           calibrate_each=args.calibrate_each, checkpoint=latch.check)
        latch.check()  # a stop swallowed after the last run began (in a finalizer, say) still ends as interrupted
    except KeyboardInterrupt:
        print(f"gatecheck: stopped by {latch.what}; {_kept(out)}. The run under way was stopped too (its results, "
              "marked interrupted, count for nothing); go on with the same command and --append", file=sys.stderr)
        return exits.INTERRUPTED
    finally:
        latch.uninstall()
    passed, problems = gc.verdict(doc)
    print(f"{out}: {len(doc['aa'])} A/A runs, {len(doc['planted'])} planted kinds — "
          + ("gate check passed" if passed else "GATE CHECK FAILED"))
    det = doc["detection"]
    print(f"  A/A: {det['aa']['clean']} of {det['aa']['runs']} runs clean")
    unjudged = det["aa"].get("incomparable") or []
    if unjudged:
        shown = ", ".join(unjudged[:5]) + (f" and {len(unjudged) - 5} more" if len(unjudged) > 5 else "")
        print(f"  A/A: {len(unjudged)} metric(s) read incomparable, not judged ({shown}): "
              f"{gc.UNJUDGED_WHY[Gate.INCOMPARABLE]}")
    for kind, f in det["families"].items():
        print(f"  {f['family']} ({kind}): caught {f['detected']} of {f['tries']} planted tries")
    for p in doc["planted"]:
        if "planted" in p and any(s != p["size"] for s in p["planted"]):
            sizes = ", ".join(sorted({f"{s:g}" for s in p["planted"]}))
            print(f"  {p['kind']} on {p['metric']}: claim {p['size']:g} beyond the baseline, planted {sizes} "
                  "(calibrated to this machine's unplanted reading)")
    for f in det["families"].values():
        for m in f["metrics"]:
            if "beyond_claim" in m:
                print(f"  {m['metric']}: caught, but its tries moved it {m['beyond_claim']:.1%}, over "
                      f"{gc.OVERSHOOT:g} × the {m['size']:.2%} claimed: that shows the gate catching "
                      f"{m['beyond_claim']:.1%}, not its claim (the plant moved it further than it was sized to)")
                gap = m.get("gap")
                if gap:
                    print(f"    the space allows no pick nearer the claim: the plant picked {gap['pick']}, "
                          f"{gap['pick_slowdown']:.1%} slower than the honest pick in the tuner's timings, and the "
                          f"slowest configuration below it is {gap['next_below']:.1%} slower")
    for c in doc.get("curves", []):
        print(f"  curve {c['metric']} at {c['size']:g}: caught {c['detected']} of {c['tries']}")
    for n in doc.get("not_planted", []):
        print(f"  not planted: {n['kind']} on {n['metric']}: {n['why']}")
    for line in problems:
        print("  " + line)
    return 0 if passed else 1


def entry_band(entry: Mapping[str, Any]) -> float:
    """The half-width of a baseline entry's band (the gate check's claimed plant sizes are measured in it)."""
    return verdicts.band(float(entry["value"]), entry.get("tolerance") or {})


def informational_why(name: str, unit: str, entry: Mapping[str, Any] | None = None) -> str | None:
    """Why the gate records a metric without judging it (its catalog row's informational noise model, or its
    baseline entry's measured reason, :func:`.catalog.measured_informational`), or None: the gate check plants
    no family on such a metric."""
    measured = None if entry is None else catalog.measured_informational(name, entry)
    if measured is not None:
        return measured
    row = catalog.row(name, unit).noise
    return row.why if row is not None and row.model == "informational" else None


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("baseline", help="baseline files: init, from-results, check, migrate, diff, gatecheck, "
                                             "family, table", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    bs = parser.add_subparsers(dest="baseline_command", required=True, metavar="SUBCOMMAND")
    p = bs.add_parser("from-results", help="rebuild baseline entries from several results JSON files")
    p.add_argument("results", nargs="+", metavar="RESULTS.json",
                   help="results files of several runs of one device (--gpuperf-json); their values are merged")
    p.add_argument("--dir", default="baselines", help="baseline folder to write <key>.json into (default: %(default)s)")
    _add_k(p)
    p.add_argument("--identity-changed", action="store_true",
                   help="update only the entries whose identity or kernel source (source_digest) differs from the "
                        "baseline's (or that it lacks)")
    p.add_argument("--match", default=None, metavar="REGEX",
                   help="update only the metrics whose name matches REGEX (re.search)")
    p.add_argument("--floor", type=_floor, nargs=2, default=None, metavar=("GPU", "CPU"),
                   help="relative floor for every metric class (default: per class, baselines/classes.py)")
    p.set_defaults(func=cmd_from_results)
    c = bs.add_parser("check", help="validate baseline files (each *.json of a directory, or files), "
                                    "listing every problem; exit 1 if any is malformed, 2 if a path is missing")
    c.add_argument("paths", nargs="*", metavar="PATH", help="baseline directories or files (default: baselines)")
    c.set_defaults(func=cmd_check)
    m = bs.add_parser("migrate", help="rewrite baseline files in the lean form (one provenance header per "
                                      "section, sample digests, one line per metric); the entries stay as they were")
    m.add_argument("paths", nargs="*", metavar="PATH", help="baseline directories or files (default: baselines)")
    m.add_argument("--catalog-bands", choices=("gpu", "cpu"), default=None, metavar="gpu|cpu",
                   help="also give each entry the band its family's catalog row sets for this device class "
                        "(the files named must all be of that class: one whose header records or whose content "
                        "proves another is refused; one that does neither records this one); review the change "
                        "with 'gpuperf baseline diff'")
    m.set_defaults(func=cmd_migrate)
    d = bs.add_parser("diff", help="what changed from baseline file A to B, for review: headers, added and removed "
                                   "metrics, values, bands, identities (exit 1 when anything changed)")
    d.add_argument("a", metavar="A", help="the older baseline file (e.g. from git show main:PATH > old.json)")
    d.add_argument("b", metavar="B", help="the newer baseline file")
    d.add_argument("--all", action="store_true", help="list every changed metric (default: the first 40 per kind)")
    d.add_argument("--widened", type=float, default=review.WIDENED, metavar="FACTOR",
                   help="also list each band that grew more than FACTOR, with the measured cause its entry records "
                        "(default: %(default)s)")
    d.set_defaults(func=cmd_diff)
    g = bs.add_parser("gatecheck", help="run the README's main command N times (A/A) plus planted regressions")
    g.add_argument("--device", default="0", help="--gpuperf-device of the runs (default 0, as in the README)")
    g.add_argument("--aa", type=int, default=None,
                   help=f"A/A runs of the whole suites/ to make (default {DEFAULT_AA}; with --append, as many as "
                        f"bring the file's runs of this commit to {DEFAULT_AA}, so appending plants makes none "
                        "where the file has them)")
    g.add_argument("--plant", action="append", default=None, metavar="KIND[=ARG]",
                   help="planted regression to try, repeatable: memory[=F], compute[=F], ulp[=FUNCTION], "
                        "missing[=METRIC] (default: all four at the device class's sizes; 'none' for none)")
    g.add_argument("--families", default=None, metavar="all|KIND,...",
                   help="plant every named family (launch, memory, chase, compute, throughput, ulp, summation, "
                        "power, tuner, model, missing) at the size its baseline entries' bands claim to catch, on "
                        "every target metric of the family (gatecheck/families.py), in the order named; 'all' for "
                        "every family. "
                        "--plant values are added to them")
    g.add_argument("--curve", action="store_true",
                   help="also plant the headline figures (1 GiB copy, FMA latency, launch overhead, L2 chase) at "
                        "1, 2, 5 and 10 %% (--tries each): detection curves, reported, never failing the check")
    g.add_argument("--calibrate-from", nargs="+", default=None, metavar="RESULTS.json",
                   help="unplanted results of this machine (--gpuperf-json) to calibrate the plants from: each "
                        "fraction plant is sized so that its planted value lands the claimed size beyond the "
                        "baseline value (default: the file's A/A runs of this commit, and this call's; a call that "
                        "makes no A/A run calibrates each plant to an unplanted run of its tests before its first "
                        "try, the file's runs being perhaps another machine's)")
    g.add_argument("--calibrate-each", action="store_true",
                   help="calibrate each planted try to an unplanted run of its tests just before it (the same "
                        "machine at the same time, where a scheduler may give each call another machine)")
    g.add_argument("--no-calibrate", action="store_true",
                   help="plant the claimed sizes as they are, whatever this machine reads")
    g.add_argument("--tries", type=int, default=3, help="tries per planted kind (default 3)")
    g.add_argument("--memory", type=float, default=None, help="planted memory-bound slowdown (default 0.05 on GPUs)")
    g.add_argument("--compute", type=float, default=None, help="planted compute-bound slowdown (default 0.05)")
    g.add_argument("--baseline-dir", default=None, help="baselines to gate against (default: the runs' default)")
    g.add_argument("--results-dir", default=None, help="where each run's results and log go "
                                                        "(default results/<key>; runs under gatecheck/)")
    g.add_argument("--out", default=None, help="the gate-check file (default results/<key>/gatecheck.json)")
    g.add_argument("--commit", default=None, help="commit to record (default: git HEAD; pass it on a copy without .git)")
    g.add_argument("--append", action="store_true", help="add the runs to an existing gate-check file")
    g.add_argument("--fresh-first", action="store_true",
                   help="start the first A/A run with an empty PoCL kernel cache, as on a fresh machine")
    g.add_argument("pytest_args", nargs=argparse.REMAINDER, metavar="-- PYTEST ARGS",
                   help="the A/A runs' tests and options: tests of your own (-- test_my_kernel.py: only they run, "
                        "and no plant unless --plant names one) or options for the shipped suites (default: suites/)")
    g.set_defaults(func=cmd_gatecheck)
    i = bs.add_parser("init", help="the first baseline of a device: run the tests named after -- (default: the "
                                   "shipped suites) N times and write a candidate <dir>/<key>.json from them, for review")
    i.add_argument("--runs", type=int, default=3, help="runs to merge (default 3: the band holds their spread)")
    i.add_argument("--device", default="0", help="--gpuperf-device of the runs (default 0)")
    i.add_argument("--dir", default="baselines", help="your baseline folder (default ./baselines; created)")
    i.add_argument("--results-dir", default="results", help="where each run's results and log go "
                                                             "(<dir>/<key>/init-N-*.json, init-N.log; N numbered on)")
    i.add_argument("--replace", action="store_true",
                   help="start the device's baseline file over (entries this init's runs do not make are dropped, and named)")
    _add_k(i)
    i.add_argument("--keep-contended", action="store_true",
                   help="keep entries measured on a busy host or card in every run, flagged in the file's provenance "
                        "(default: left out, named; the init is refused when they pass a tenth of the metrics)")
    i.add_argument("pytest_args", nargs=argparse.REMAINDER, metavar="-- PYTEST ARGS",
                   help="passed to every run: tests of your own (-- test_my_kernel.py: only they run; none named: "
                        "the shipped suites), options (-- -k 'memory or latency')")
    i.set_defaults(func=first.main_init)
    f = bs.add_parser("family", help="a CPU family baseline: the deterministic entries of CPU baseline files, "
                                     "which every CPU model of one OpenCL runtime and compiler shares")
    f.add_argument("baselines", nargs="+", help="baseline files of CPU devices")
    f.add_argument("--dir", default="baselines", help="where <family key>.json is written (default baselines)")
    f.add_argument("--agree-with", action="append", default=[], metavar="RESULTS.json",
                   help="results of the same runtime on another CPU model: entries it does not reproduce stay out "
                        "of the family (repeatable)")
    f.set_defaults(func=first.main_family)
    t = bs.add_parser("table", help="per device and metric family: the gated share, the median band and the noise model")
    t.add_argument("paths", nargs="+", metavar="PATH", help="baseline files or directories")
    t.set_defaults(func=table.main_table)
