"""The static dashboard: one self-contained ``index.html`` that works from a file, offline.

Like asv's pages, for GPUs: the front page lists the regressions the history holds (confirmed steps
toward worse, then candidates, newest first; improvements folded below), each linking to its plot; then
for the selected device and family (the metric name's prefix before the first dot) the plots of every
metric with a step, worse first, then each family's other metrics, largest moves first. Commits link to
``commit_url`` + sha where one is given (as asv's ``show_commit_url``; :func:`commit_url_from_remote`).
A plot has real axes (runs in date order, ticks labelled with date and commit; values in the metric's
unit, tick labels as precise as their step so no two read alike, never below 0 for a unit that cannot
be negative), a tooltip per point
(date, commit, value, the run's sample quantiles, baseline and verdict, driver), the run's noise as a
bar (the 25–75 % of its samples, whiskers to 5–95 %; ± 1.4826 MAD where only that was kept), the
baseline band that judged each run, steps (red worse, green better, orange changed; dashed while a
candidate), identity changes (purple), kernel changes (teal, and the line breaks there: the kernels the test
compiled changed, so the two sides are other measurements, never a step; listed apart from the regressions)
and driver/runtime/toolkit changes (grey). Lines never cross a
gap: a run of the metric's test that did not record it breaks the line, and each identity is a series
of its own. Planted and interrupted runs are left out, as in detection, and listed.

The page is rendered from a Jinja2 template (``templates/dashboard.html.j2``); plots are drawn by uPlot
(vendored in :mod:`pytest_gpuperf.report.assets`), inlined with the page's own script and the data
(strict JSON), so nothing is fetched.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable

from ..baselines.classes import NON_NEGATIVE
from ..report import assets
from ..timing.stats import MAD_TO_SIGMA
from ..util.atomic import atomic_write_chunks
from .detect import (CANDIDATE, Detection, KernelChange, Step, detect_all, environment_changes, identity_difference,
                     identity_key)
from .records import TrendMetric, RunRecord, dumps

#: plots drawn per family at first (the rest on "show all")
DEFAULT_MAX_PLOTS = 12


def _r(x: float | None, digits: int = 6) -> float | None:
    """``digits`` significant digits: the page stays small and no plot needs more."""
    if x is None or not math.isfinite(x):
        return None
    return float(f"{x:.{digits}g}")


def _noise(m: TrendMetric) -> tuple[float | None, ...]:
    """(q05, q25, q75, q95) of the run's samples; ± 1.4826 MAD (twice for the whiskers) without them."""
    s = m.samples or {}
    if all(isinstance(s.get(k), (int, float)) for k in ("q05", "q25", "q75", "q95")):
        return tuple(_r(float(s[k]), 4) for k in ("q05", "q25", "q75", "q95"))
    if m.mad is not None and m.value is not None and m.mad > 0:
        sd = MAD_TO_SIGMA * m.mad
        return (_r(m.value - 2 * sd, 4), _r(m.value - sd, 4), _r(m.value + sd, 4), _r(m.value + 2 * sd, 4))
    return (None, None, None, None)


def _test_file(test: str) -> str:
    return test.split("::", 1)[0]


def metric_id(device: str, name: str) -> str:
    """The anchor of a metric's plot: ``m-<device>-<name>`` with only characters safe in a fragment (the page's
    script spells it the same way: ``metricId``)."""
    return "m-" + re.sub(r"[^A-Za-z0-9_.-]", "_", f"{device}-{name}")


def commit_sha(commit: str) -> str:
    """The hex sha of a run's commit (``sha+dirty`` → ``sha``), or '' where it names none (``na``, '')."""
    sha = commit.split("+", 1)[0].strip().lower()
    return sha if re.fullmatch(r"[0-9a-f]{7,40}", sha) else ""


def commit_url_from_remote(root: str | Path = ".") -> str:
    """The commit URL prefix of the repository at ``root``, from its ``origin`` remote (as asv's
    ``show_commit_url``): ``git@github.com:o/r.git`` or ``https://github.com/o/r`` →
    ``https://github.com/o/r/commit/`` (GitLab: ``…/-/commit/``); '' without git, a remote, or a host
    path. Credentials in the remote's URL are never kept."""
    import subprocess

    try:
        remote = subprocess.run(["git", "-C", str(root), "remote", "get-url", "origin"], capture_output=True,
                                text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""
    m = (re.fullmatch(r"(?:ssh://)?[^@/\s]+@([^:/\s]+)[:/](.+?)(?:\.git)?/?", remote)
         or re.fullmatch(r"https?://(?:[^@/\s]*@)?([^/\s]+)/(.+?)(?:\.git)?/?", remote))
    if not m:
        return ""
    host, path = m.groups()
    return f"https://{host}/{path}/{'-/' if 'gitlab' in host else ''}commit/"


def _step_json(st: Step, index_of: dict[str, int], prev_index: int | None) -> dict[str, Any]:
    return {"i": index_of.get(st.run), "p": prev_index, "c": commit_sha(st.commit), "pc": commit_sha(st.previous_commit), "dir": st.direction, "status": st.status, "size": st.size(),
            "rel": _r(st.rel), "delta": _r(st.delta), "before": _r(st.before), "after": _r(st.after),
            "range": st.commit_range(), "date": st.date, "conf": _r(st.confidence, 4),
            "band": _r(st.threshold, 4), "runs": st.runs_after, "model": st.model}


def build_data(runs: Iterable[RunRecord], detection: Detection, max_plots: int = DEFAULT_MAX_PLOTS,
               commit_url: str = "") -> dict[str, Any]:
    """The JSON the page's script draws from, per device id ``key/backend``: its runs (date order), and per
    metric the run indices that ran its test, its values (null where that run did not record it), the
    noise quantiles, the baseline band, identity segments, steps and identity changes."""
    dropped = {x.uid for x, _ in detection.left_out}
    kept = sorted((r for r in runs if r.uid not in dropped), key=lambda r: r.date)
    by_dev: dict[str, list[RunRecord]] = defaultdict(list)
    for r in kept:
        by_dev[f"{r.device_key}/{r.backend}"].append(r)
    steps_by: dict[tuple[str, str], list[Step]] = defaultdict(list)
    for s in detection.steps:
        steps_by[(f"{s.device_key}/{s.backend}", s.name)].append(s)
    kernels_by: dict[tuple[str, str], list[KernelChange]] = defaultdict(list)
    for c in detection.kernel_changes:
        kernels_by[(f"{c.device_key}/{c.backend}", c.name)].append(c)
    env = environment_changes(kept)
    data: dict[str, Any] = {"devices": [], "runs": {}, "env": {}, "metrics": {}, "tests": {}, "verdicts": [],
                            "maxPlots": max_plots, "commitUrl": commit_url}
    verdicts: dict[str, int] = {}
    for dev, dev_runs in sorted(by_dev.items()):
        key, backend = dev.split("/", 1)
        data["devices"].append({"id": dev, "key": key, "backend": backend, "name": dev_runs[-1].device_name,
                                "runs": len(dev_runs)})
        data["runs"][dev] = [{"d": r.date, "c": r.commit[:12], "C": commit_sha(r.commit), "drv": r.driver,
                              "rt": r.runtime, "tk": r.toolkit} for r in dev_runs]
        index_of = {r.uid: i for i, r in enumerate(dev_runs)}
        tests: dict[str, int] = {}
        data["env"][dev] = [{"i": index_of[e["run"]], "what": e["what"]} for e in env.get((key, backend), [])
                            if e["run"] in index_of]
        ran: list[set[str]] = [{_test_file(m.test) for m in r.metrics} for r in dev_runs]
        points: dict[str, dict[int, TrendMetric]] = defaultdict(dict)
        for i, r in enumerate(dev_runs):
            for m in r.metrics:
                if _r(m.value) is not None:
                    points[m.name][i] = m
        metrics = []
        for name, pts in sorted(points.items()):
            last = pts[max(pts)]
            test = _test_file(last.test)
            first, last_i = min(pts), max(pts)
            xs = [i for i in range(first, last_i + 1) if i in pts or (test and test in ran[i])]
            ids: list[str] = []
            seg = []
            ident_of = {i: identity_key(p.identity) for i, p in pts.items()}  # once per point: used twice below
            for i in xs:
                if i in pts:
                    ident = ident_of[i]
                    if ident not in ids:
                        ids.append(ident)
                    seg.append(ids.index(ident))
                else:
                    seg.append(None)
            noise = [_noise(pts[i]) if i in pts else (None,) * 4 for i in xs]
            band = [(pts[i].baseline_value, pts[i].band) if i in pts else (None, None) for i in xs]
            steps = sorted(steps_by.get((dev, name), []), key=lambda s: s.date)
            step_docs = []
            for st in steps:
                prev = next((i for i in reversed(xs) if i < index_of.get(st.run, -1) and i in pts
                             and dev_runs[i].commit == st.previous_commit), None)
                step_docs.append(_step_json(st, index_of, prev))
            id_changes = []
            for a, b in zip([i for i in xs if i in pts], [i for i in xs if i in pts][1:]):
                if ident_of[a] != ident_of[b]:
                    id_changes.append({"i": b, "p": a, "what": identity_difference(pts[a].identity, pts[b].identity)})
            kernel_changes = [{"i": index_of[c.run], "p": index_of.get(c.previous_run), "what": c.what()}
                              for c in kernels_by.get((dev, name), []) if c.run in index_of]
            present = sorted(pts)
            moved = 0.0
            if len(present) >= 2:
                a, b = pts[present[-2]].value, pts[present[-1]].value
                moved = min(abs(b - a) / abs(a), 9.0) if a else (1.0 if b != a else 0.0)
            worse = any(s.worse for s in steps)
            doc: dict[str, Any] = {
                "name": name, "unit": last.unit, "better": last.better, "t": tests.setdefault(test, len(tests)),
                "x": xs, "y": [_r(pts[i].value) if i in pts else None for i in xs],
                "v": [verdicts.setdefault(pts[i].verdict, len(verdicts)) if i in pts else None for i in xs],
                "steps": step_docs, "idc": id_changes,
                "rank": round((20.0 if worse else 10.0 if steps else 0.0) + moved, 3)}
            if kernel_changes:  # most metrics have none: the page's script reads an absent list as empty
                doc["kc"] = kernel_changes
            if last.unit in NON_NEGATIVE:
                doc["nonneg"] = 1
            if len(ids) > 1:  # one identity: every point is segment 0
                doc.update(seg=seg, ids=ids)
            if any(n[0] is not None for n in noise):
                doc["q"] = [list(col) for col in zip(*noise)]
                doc["n"] = [(pts[i].samples or {}).get("n", pts[i].n) if i in pts else None for i in xs]
            if any(v is not None for v, _ in band):
                doc["bv"], doc["bw"] = [_r(v, 5) for v, _ in band], [_r(w, 4) for _, w in band]
            metrics.append(doc)
        data["metrics"][dev] = metrics
        data["tests"][dev] = list(tests)
    data["verdicts"] = list(verdicts)
    return data


def _kernel_changes(detection: Detection, device_names: dict[str, str]) -> list[dict[str, Any]]:
    """The kernel changes for the front page, one row per device and run (newest first): how many metrics,
    one named with the anchor of its plot."""
    by_run: dict[tuple[str, str], list[KernelChange]] = defaultdict(list)
    for c in detection.kernel_changes:
        by_run[(f"{c.device_key}/{c.backend}", c.run)].append(c)
    out = []
    for (dev, _), group in sorted(by_run.items(), key=lambda kv: kv[1][0].date, reverse=True):
        c = group[0]
        out.append({"change": c, "dev": dev, "device": device_names.get(dev, dev), "anchor": metric_id(dev, c.name),
                    "metrics": len(group)})
    return out


def _regressions(detection: Detection, device_names: dict[str, str]) -> list[dict[str, Any]]:
    """Every step for the front page, newest first, with the anchor of its plot."""
    out = []
    for s in sorted(detection.steps, key=lambda s: s.date, reverse=True):
        dev = f"{s.device_key}/{s.backend}"
        out.append({"step": s, "dev": dev, "device": device_names.get(dev, dev), "anchor": metric_id(dev, s.name),
                    "candidate": s.status == CANDIDATE})
    return out


def render_html(runs: Iterable[RunRecord], detection: Detection | None = None, max_plots: int = DEFAULT_MAX_PLOTS,
                title: str = "pytest-gpuperf history", commit_url: str = "") -> str:
    """The page for ``runs`` and what detection found in them (found here when not given); ``commit_url``:
    the prefix a commit's sha is appended to for its link ('' : commits are plain text)."""
    import markupsafe

    runs = list(runs)
    detection = detection if detection is not None else detect_all(runs)
    data = build_data(runs, detection, max_plots, commit_url)
    names = {d["id"]: f"{d['name'] or d['key']} ({d['backend']})" for d in data["devices"]}
    steps = _regressions(detection, names)
    families = sorted({m["name"].split(".", 1)[0] for ms in data["metrics"].values() for m in ms})
    # strict JSON: the page's JSON.parse rejects NaN/Infinity, so a non-finite figure fails here, not in a browser
    payload = dumps(data, separators=(",", ":"))
    return assets.environment(__package__).get_template("dashboard.html.j2").render(
        title=title, devices=data["devices"], families=families,
        worse=[s for s in steps if s["step"].worse], better=[s for s in steps if not s["step"].worse],
        confirmed=len(detection.confirmed), candidates=len(detection.candidates),
        runs=sum(d["runs"] for d in data["devices"]), left_out=[(r, why) for r, why in detection.left_out],
        identity_changes=len(detection.identity_changes), kernel_changes=_kernel_changes(detection, names),
        commit_link=lambda commit: commit_url + commit_sha(commit) if commit_url and commit_sha(commit) else "",
        uplot_css=markupsafe.Markup(assets.inline(assets.shared(assets.UPLOT_CSS))),
        css=markupsafe.Markup(assets.inline(assets.read(__package__, "dashboard.css"))),
        uplot_js=markupsafe.Markup(assets.inline(assets.shared(assets.UPLOT_JS))),
        app_js=markupsafe.Markup(assets.inline(assets.read(__package__, "dashboard.js"))),
        data=markupsafe.Markup(assets.script_json(payload)))


def write(out_dir: str | Path, runs: Iterable[RunRecord], detection: Detection | None = None,
          max_plots: int = DEFAULT_MAX_PLOTS, commit_url: str = "") -> Path:
    """Write ``DIR/index.html`` atomically; returns its path."""
    path = Path(out_dir) / "index.html"
    atomic_write_chunks(path, [render_html(runs, detection, max_plots, commit_url=commit_url).encode("utf-8")])
    return path
