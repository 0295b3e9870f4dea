"""Whether a change of the code kept every metric: two runs of the suites, before and after it, metric by metric.

    python scripts/before_after.py BEFORE.json AFTER.json [--baseline-dir DIR] [--format text|json]

Each side is one results document as ``--gpuperf-json`` writes it (``.json``, ``.json.gz`` or ``.json.xz``),
both of the same device model. The report says

* **names**: the metrics recorded by one side only;
* **identities**: the metrics whose ``identity`` (the options that shaped the value), ``unit`` or ``better``
  differ, and those whose noise model differs (one side's figure deterministic, the other's not);
* **kernel sources**: the metrics whose ``source_digest`` (the digest of the kernels their test compiled)
  differs. A metric that carries a digest on one side only is *not* a difference: runs made before digests
  were recorded carry none, and a figure of the host alone or a planted run never does;
* **deterministic values**: the value of every metric the package's own rule calls deterministic
  (:func:`pytest_gpuperf.metric_verdict.deterministic`, the ``deterministic`` noise model of
  :mod:`pytest_gpuperf.baselines.noise`: the same bits whoever shared the machine), compared exactly, except a
  figure read off a grid of timed points (a cache size, λ0: ``catalog.grid_tolerance``), which is the same figure
  within one step of its grid, as the gate and the fleet report judge it (listed, not a difference);
* **verdicts**: each side's metrics judged *again* against one and the same baseline — the reviewed baseline
  shipped with the package for the device, or the one in ``--baseline-dir`` — through
  :func:`pytest_gpuperf.metric_verdict.judge`, the judgement a pytest run makes as a test records a metric (and
  the one ``scripts/verdict_snapshot.py`` replays), so a band changed between the two commits does not read as a
  change of the code. A timing figure's verdict can differ by the runs' noise alone (a figure ``contended``
  on a shared host in one run, a figure near its band's edge): the report gives each re-judged line so the
  cause can be read;
* **timing metrics** (every other metric in both runs): their values differ by the runs' noise; only their
  count and the spread of the relative differences are reported, never as a failure.

Exit 0 when names, identities, kernel sources, deterministic values and re-judged verdicts agree; 1 otherwise;
2 on bad input (a file that is not a results document, two different devices, a baseline folder without the
device's baseline).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import numpy as np  # noqa: E402
from verdict_snapshot import device_info  # noqa: E402

from pytest_gpuperf import baselines as bl  # noqa: E402
from pytest_gpuperf.baselines import catalog, lookup  # noqa: E402
from pytest_gpuperf.compare.load import CompareInputError, read_results  # noqa: E402
from pytest_gpuperf.device_runs import DeviceRun  # noqa: E402
from pytest_gpuperf.errors import GpuPerfError  # noqa: E402
from pytest_gpuperf.metric_verdict import deterministic, judge, unjudged  # noqa: E402
from pytest_gpuperf.report.results import Metric  # noqa: E402
from pytest_gpuperf.schemas.results_doc import MetricRecord, ResultsDocument  # noqa: E402
from pytest_gpuperf.timing import observers  # noqa: E402

#: what every results file given must be, said in each input error
FIX = "give two results files as `pytest --gpuperf-json` writes them (.json, .json.gz or .json.xz) of one device model"


class InputError(Exception):
    """Bad input: one line naming the file and the fix (exit 2)."""


@dataclass
class Judged:
    """One side's metric: as stored, as the session holds it, and judged again against the common baseline."""

    record: MetricRecord
    metric: Metric
    deterministic: bool  # the package's rule on the metric as recorded (before its verdict)
    verdict: str | None = None
    line: str | None = None
    marks: tuple[str, ...] = ()  # what the observers saw while it was measured (:func:`marks_of`)


@dataclass
class Report:
    """What differs between the two runs, and the counts of what agrees."""

    before: dict[str, Any]
    after: dict[str, Any]
    baseline: dict[str, Any]
    common: int = 0
    only_before: list[str] = field(default_factory=list)
    only_after: list[str] = field(default_factory=list)
    identity: list[dict[str, Any]] = field(default_factory=list)
    noise_model: list[dict[str, Any]] = field(default_factory=list)
    digests: list[dict[str, Any]] = field(default_factory=list)
    digest_one_side: int = 0
    digest_both_equal: int = 0
    deterministic_equal: int = 0
    deterministic_grid: list[dict[str, Any]] = field(default_factory=list)  # within one step of their grid
    deterministic_differ: list[dict[str, Any]] = field(default_factory=list)
    verdicts_equal: int = 0
    verdicts_differ: list[dict[str, Any]] = field(default_factory=list)
    timing: dict[str, Any] = field(default_factory=dict)
    tests_moved: list[dict[str, Any]] = field(default_factory=list)

    @property
    def same(self) -> bool:
        """Names, identities, noise models, kernel sources, deterministic values and re-judged verdicts agree."""
        return not (self.only_before or self.only_after or self.identity or self.noise_model or self.digests
                    or self.deterministic_differ or self.verdicts_differ)

    def to_json(self) -> dict[str, Any]:
        return {"same": self.same, "before": self.before, "after": self.after, "baseline": self.baseline,
                "names": {"both": self.common, "only_before": self.only_before, "only_after": self.only_after},
                "identities": {"equal": self.common - len(self.identity), "differ": self.identity},
                "noise_models": {"differ": self.noise_model},
                "source_digests": {"equal": self.digest_both_equal, "one_side_only": self.digest_one_side,
                                   "differ": self.digests},
                "deterministic_values": {"equal": self.deterministic_equal, "within_grid_step": self.deterministic_grid,
                                         "differ": self.deterministic_differ},
                "verdicts": {"equal": self.verdicts_equal, "differ": self.verdicts_differ},
                "timing": self.timing, "tests_moved": self.tests_moved}


def read_side(path: str) -> ResultsDocument:
    """One side's results document (schema-checked by the comparison's reader); :class:`InputError` otherwise."""
    try:
        return read_results(path)
    except CompareInputError as exc:
        raise InputError(f"{exc}; {FIX}") from None


def commit_of(doc: ResultsDocument) -> str:
    """The plugin's commit the run was made with (``environment.plugin.commit``, else ``environment.commit``)."""
    env = doc.environment or {}
    plugin = env.get("plugin") if isinstance(env.get("plugin"), dict) else {}
    return str(plugin.get("commit") or env.get("commit") or "")[:12]


def describe(path: str, doc: ResultsDocument) -> dict[str, Any]:
    return {"file": path, "device": doc.device.get("key"), "backend": doc.device.get("backend"),
            "commit": commit_of(doc), "metrics": len(doc.metrics), "started": (doc.run or {}).get("started")}


def baseline_source(before: ResultsDocument, after: ResultsDocument, paths: Sequence[str],
                    baseline_dir: str | None) -> lookup.Source:
    """The one baseline both sides are judged against: the reviewed one shipped for the device (with its CPU
    family's deterministic entries), or ``baseline_dir``'s alone."""
    kinds = [(d.device.get("key"), d.device.get("backend")) for d in (before, after)]
    if kinds[0] != kinds[1]:
        raise InputError(f"{paths[0]} is {kinds[0][0]} ({kinds[0][1]}) but {paths[1]} is {kinds[1][0]} "
                         f"({kinds[1][1]}); {FIX}")
    key, backend = kinds[1]
    family = str(after.device.get("family_key") or before.device.get("family_key") or "")
    try:
        if baseline_dir is None:
            with tempfile.TemporaryDirectory() as tmp:  # no user baseline: the reviewed one shipped gates
                return lookup.resolve(Path(tmp) / "none", str(key), str(backend), family)
        folder = Path(baseline_dir)
        if not folder.is_dir():
            raise InputError(f"{folder}: no such folder; give --baseline-dir a folder of baseline files "
                             f"(<device key>.json), or leave it out to judge against the reviewed baselines")
        src = lookup.resolve(folder, str(key), str(backend), family, reviewed_dir=folder)
    except GpuPerfError as exc:  # a malformed baseline file
        raise InputError(f"{exc}; fix the file, or leave --baseline-dir out") from None
    if src.origin == "none":
        raise InputError(f"{folder}: holds no baseline of {key} ({key}.json); give a folder that does, or leave "
                         f"--baseline-dir out to judge against the reviewed baselines")
    return src


def marks_of(metric: Metric, is_cpu: bool, fixed: bool) -> tuple[str, ...]:
    """What the observers saw while the metric was measured, in words: another process on the card, the
    card throttling, a CPU device's host busy with other work (:mod:`pytest_gpuperf.timing.observers`)."""
    seen = (("card shared", observers.shared_metric(metric.info, fixed)),
            ("throttled", observers.throttled_metric(metric.info, fixed)),
            ("host busy", is_cpu and observers.contended_metric(metric.info, fixed)))
    return tuple(word for word, yes in seen if yes)


def judged_side(doc: ResultsDocument, source: lookup.Source) -> dict[str, Judged]:
    """Every metric of one run judged again against ``source`` as a live run judges a recorded metric
    (:func:`pytest_gpuperf.metric_verdict.judge`)."""
    info = device_info(doc.to_json())
    out: dict[str, Judged] = {}
    run = DeviceRun(info, source)
    for rec in doc.metrics:
        if rec.name in out:
            raise InputError(f"{doc.source}: records {rec.name} twice; {FIX}")
        metric, bound = unjudged(rec)
        fixed = deterministic(metric)  # on the metric as recorded, before its verdict
        judge(run, metric, bound)
        out[str(rec.name)] = Judged(rec, metric, fixed, metric.verdict, metric.info.get("line"),
                                    marks_of(metric, info.is_cpu, fixed))
    return out


def number(value: Any) -> float:
    """A stored value as a float (the writer stores a non-finite one as its string)."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def same_value(a: Any, b: Any) -> bool:
    """Exactly equal, NaN equal to NaN."""
    x, y = number(a), number(b)
    return x == y or (math.isnan(x) and math.isnan(y))


def relative(before: Any, after: Any) -> float | None:
    """after / before − 1, or None where it has no meaning (a zero or non-finite side)."""
    x, y = number(before), number(after)
    if not (math.isfinite(x) and math.isfinite(y)) or x == 0:
        return None
    return y / x - 1.0


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=repr)


def spread(rels: list[tuple[float, str]]) -> dict[str, Any]:
    """The spread of the timing metrics' relative differences: median and 90th percentile of |d|, the widest.
    Each quantile is one of the differences (numpy's ``higher`` method: the upper of the two around it), never
    a value between two metrics."""
    if not rels:
        return {}
    size = np.abs([r for r, _ in rels])
    median, p90 = np.quantile(size, (0.5, 0.9), method="higher")
    widest = max(rels, key=lambda t: abs(t[0]))
    return {"median_abs": float(median), "p90_abs": float(p90), "widest": widest[0], "widest_metric": widest[1],
            "lowest": min(r for r, _ in rels), "highest": max(r for r, _ in rels)}


def compare(before_path: str, after_path: str, baseline_dir: str | None = None) -> Report:
    """The metric-by-metric report of ``before_path`` against ``after_path`` (:class:`InputError` on bad input)."""
    before, after = read_side(before_path), read_side(after_path)
    source = baseline_source(before, after, (before_path, after_path), baseline_dir)
    a, b = judged_side(before, source), judged_side(after, source)
    report = Report(describe(before_path, before), describe(after_path, after),
                    {"origin": source.origin, "read": [Path(p).name for p in source.read],
                     "describe": source.describe().replace(str(ROOT) + "/", "")})
    report.only_before = sorted(set(a) - set(b))
    report.only_after = sorted(set(b) - set(a))
    both = [n for n in a if n in b]
    report.common = len(both)
    rels: list[tuple[float, str]] = []
    timing = 0
    for name in sorted(both):
        x, y = a[name], b[name]
        rx, ry = x.record, y.record
        fields = {k: (getattr(rx, k), getattr(ry, k)) for k in ("identity", "unit", "better")}
        changed = {k: {"before": v[0], "after": v[1]} for k, v in fields.items()
                   if canonical(v[0] or ({} if k == "identity" else None))
                   != canonical(v[1] or ({} if k == "identity" else None))}
        if changed:
            report.identity.append({"metric": name, **changed})
        if x.deterministic != y.deterministic:
            report.noise_model.append({"metric": name, "before": "deterministic" if x.deterministic else "timing",
                                       "after": "deterministic" if y.deterministic else "timing"})
        dx, dy = rx.get("source_digest"), ry.get("source_digest")
        if dx is not None and dy is not None:
            if dx != dy:
                report.digests.append({"metric": name, "before": dx, "after": dy})
            else:
                report.digest_both_equal += 1
        elif (dx is None) != (dy is None):
            report.digest_one_side += 1
        if x.deterministic and y.deterministic:
            step = catalog.grid_tolerance(name, bool(before.device.get("is_cpu")))
            if same_value(rx.value, ry.value):
                report.deterministic_equal += 1
            elif step is not None and abs(ry.value - rx.value) <= bl.band(rx.value, step):
                # read off a grid of timed points (a cache size, λ0): one step apart is the same figure, as the
                # gate and the fleet report judge it (baselines.catalog.grid_tolerance)
                report.deterministic_grid.append({"metric": name, "before": rx.value, "after": ry.value,
                                                  "relative": relative(rx.value, ry.value)})
            else:
                report.deterministic_differ.append({"metric": name, "before": rx.value, "after": ry.value,
                                                    "relative": relative(rx.value, ry.value)})
        elif not (x.deterministic or y.deterministic):
            timing += 1
            r = relative(rx.value, ry.value)
            if r is not None:
                rels.append((r, name))
        if x.verdict == y.verdict:
            report.verdicts_equal += 1
        else:
            report.verdicts_differ.append({
                "metric": name, "before": x.verdict, "after": y.verdict,
                "noise": "deterministic" if x.deterministic and y.deterministic else "timing",
                "relative": relative(rx.value, ry.value), "before_marks": list(x.marks), "after_marks": list(y.marks),
                "before_line": x.line, "after_line": y.line})
        if rx.test != ry.test:
            report.tests_moved.append({"metric": name, "before": rx.test, "after": ry.test})
    report.timing = {"metrics": timing, "compared": len(rels), **spread(rels)}
    return report


def percent(r: float | None) -> str:
    return "n/a" if r is None else f"{r:+.2%}"


def text(report: Report) -> str:
    """The report for a terminal: counts first, then every difference by name."""
    out = []
    for label, side in (("before", report.before), ("after", report.after)):
        out.append(f"{label}: {side['file']} ({side['device']}, {side['backend']}; commit {side['commit'] or '?'}; "
                   f"{side['metrics']} metrics)")
    out.append(f"both judged again against: {report.baseline['describe']}")
    n = report.common
    out.append("")
    out.append(f"names: {n} in both, {len(report.only_before)} only before, {len(report.only_after)} only after")
    out.append(f"identities (identity, unit, better): {n - len(report.identity)} equal, {len(report.identity)} differ;"
               f" noise model differs: {len(report.noise_model)}")
    out.append(f"kernel sources (source_digest): {report.digest_both_equal} equal, {len(report.digests)} differ, "
               f"{report.digest_one_side} carried by one side only (not a difference)")
    out.append(f"deterministic values: {report.deterministic_equal} equal, {len(report.deterministic_grid)} within one "
               f"step of their grid, {len(report.deterministic_differ)} differ")
    out.append(f"verdicts judged again against the same baseline: {report.verdicts_equal} equal, "
               f"{len(report.verdicts_differ)} differ")
    t = report.timing
    line = f"timing metrics (values differ by the runs' noise; not a failure): {t['metrics']}"
    if t.get("compared"):
        line += (f"; relative difference after/before over {t['compared']}: median |d| {t['median_abs']:.2%}, "
                 f"90 % within {t['p90_abs']:.2%}, from {percent(t['lowest'])} to {percent(t['highest'])} "
                 f"(widest {t['widest_metric']})")
    out.append(line)
    if report.tests_moved:
        out.append(f"test ids changed (not a difference of the metric): {len(report.tests_moved)}")
    out.append(f"result: {'SAME' if report.same else 'DIFFERENT'}")
    sections = (("only before", [{"metric": m} for m in report.only_before]),
                ("only after", [{"metric": m} for m in report.only_after]),
                ("identity differs", report.identity), ("noise model differs", report.noise_model),
                ("kernel source differs", report.digests),
                ("deterministic value within one step of its grid (the same figure)", report.deterministic_grid),
                ("deterministic value differs", report.deterministic_differ))
    for title, rows in sections:
        if rows:
            out.append("")
            out.append(f"{title}:")
            for row in rows:
                rest = {k: v for k, v in row.items() if k != "metric"}
                out.append(f"  {row['metric']}" + (f": {canonical(rest)}" if rest else ""))
    if report.verdicts_differ:
        out.append("")
        out.append("verdict differs (judged again against the same baseline; each side's observers' marks, then its "
                   "line: the band's judgement, which a mark turns into 'contended' or 'throttled'):")
        for row in report.verdicts_differ:
            out.append(f"  {row['metric']}: {row['before']} -> {row['after']} ({row['noise']}; value "
                       f"{percent(row['relative'])})")
            for side in ("before", "after"):
                marks = ", ".join(row[f"{side}_marks"]) or "none"
                out.append(f"    {side + ':':7} [{marks}] {row[f'{side}_line']}")
    if report.tests_moved:
        out.append("")
        out.append("test ids changed:")
        for row in report.tests_moved:
            out.append(f"  {row['metric']}: {row['before']} -> {row['after']}")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before", help="the run before the change (results JSON, .json.gz or .json.xz)")
    ap.add_argument("after", help="the run after the change")
    ap.add_argument("--baseline-dir", help="judge both runs against this folder's baseline of the device "
                                           "(default: the reviewed baseline shipped with the package)")
    ap.add_argument("--format", choices=("text", "json"), default="text")
    args = ap.parse_args(argv)
    try:
        report = compare(args.before, args.after, args.baseline_dir)
    except InputError as exc:
        print(f"before_after.py: error: {exc}", file=sys.stderr)
        return 2
    if args.format == "json":
        print(json.dumps(report.to_json(), indent=1, sort_keys=True, default=repr))
    else:
        sys.stdout.write(text(report))
    return 0 if report.same else 1


if __name__ == "__main__":
    sys.exit(main())
