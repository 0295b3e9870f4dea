"""``gpuperf baseline table DIR…``: how finely each metric family gates on each device, from the
baseline files themselves — the share of entries that gate, the median relative band of those that do,
the family's noise model (:mod:`.noise`) and, where its widest band is over :data:`.classes.WIDE_BAND`,
why (:func:`cause`), and the detection power of the family's entries (:mod:`.detection`: the median
minimum detectable effect and the entries per class). The table in docs/gating.md is this command's output.

An entry gates unless its test marked it ``gate: if-stable`` and its runs do not agree
(:func:`.verdicts.stability`); a ``bound`` entry gates at its documented limit (band 0 above it)."""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Iterable, Mapping

from . import baseline_file, catalog, detection, noise
from .classes import TIME_UNITS, WIDE_BAND
from .verdicts import band, stability

#: a family is the metric name's first two parts (``memory.copy``, ``accuracy.fp32``)
FAMILY_PARTS = 2


def family(name: str) -> str:
    return ".".join(name.split(".")[:FAMILY_PARTS])


def gates(entry: Mapping[str, Any]) -> bool:
    """Whether a baseline entry judges a run (an ``if-stable`` entry only once its runs agree)."""
    if (entry.get("info") or {}).get("gate") == "if-stable" or entry.get("gate") == "if-stable":
        return stability(entry)[0]
    return True


def relative_band(entry: Mapping[str, Any]) -> float | None:
    """The band's half-width over |value| (None for a zero value)."""
    value = float(entry["value"])
    if value == 0:
        return None
    return band(value, entry.get("tolerance") or {}) / abs(value)


def power(name: str, entry: Mapping[str, Any]) -> detection.Detection:
    """What a gate on this entry would catch (:mod:`.detection`); an entry that does not gate catches nothing."""
    if not gates(entry):
        return detection.Detection(None, "ungated")
    info = entry.get("info") if isinstance(entry.get("info"), Mapping) else None
    tol = entry.get("tolerance") or {}
    width = band(float(entry["value"]), tol)
    return detection.detection(entry, name=name, width=width, ratio_safe=float(tol.get("abs", 0.0)) < width, info=info)


def cause(name: str, entry: Mapping[str, Any], is_cpu: bool = False) -> str:
    """Why an entry's band is as wide as it is: on a GPU, the measured cause its catalog row writes
    (:func:`.catalog.wide_band_cause`, a cause of GPU noise), else what set it — k × the noise measured over its runs
    (``tolerance.k`` × ``spread``), the timer's resolution (the absolute band of a time), or the band its
    family's catalog row sets and the reason written there."""
    written = None if is_cpu else catalog.wide_band_cause(name, str(entry.get("unit", "")))
    if written is not None:
        return f"written: {written}"
    value, tol = abs(float(entry["value"])), entry.get("tolerance") or {}
    width = band(value, tol)
    measured = float(tol.get("k", 0.0)) * float(tol.get("spread", 0.0))
    runs = len(noise.run_values(entry))
    if measured > 0 and measured >= 0.999 * width:
        return f"measured: k {float(tol['k']):g} × σ {float(tol['spread']):.3g} ({runs} runs)"
    if entry.get("unit") in TIME_UNITS and float(tol.get("abs", 0.0)) >= 0.999 * width and "rel" not in tol:
        return "the event timer's resolution"
    fam = catalog.family(name)
    return f"catalog: {fam.why}" if fam is not None and fam.why else "no cause written: its catalog row gives none"


def rows(files: Iterable[Path]) -> list[dict[str, Any]]:
    """One row per (device key, backend, family)."""
    out = []
    for path in files:
        data = baseline_file.load_file(path).data
        is_cpu = baseline_file.known_class(data) == "cpu"
        for backend, section in sorted(data.get("backends", {}).items()):
            groups: dict[str, list[tuple[str, Mapping[str, Any]]]] = defaultdict(list)
            for name, entry in section.get("metrics", {}).items():
                groups[family(name)].append((name, entry))
            for fam, members in sorted(groups.items()):
                powers = [power(n, e) for n, e in members]
                # an informational entry, or a repeated one from too few runs, is recorded, not gated
                gated = [e for (_, e), p in zip(members, powers) if gates(e) and p.basis != "ungated"]
                judged = [(n, e, relative_band(e)) for (n, e), p in zip(members, powers)
                          if gates(e) and p.basis != "ungated" and e.get("better") in ("lower", "higher")]
                bands = [b for _, _, b in judged if b is not None]
                widest = max(((n, e, b) for n, e, b in judged if b is not None and b > WIDE_BAND),
                             key=lambda neb: neb[2], default=None)
                mdes = [p.mde for p in powers if p.mde is not None]
                models = Counter(noise.model_of(n, str(e.get("unit", "")), str(e.get("better", "lower")),
                                                bool(e.get("samples")), noise.declared(n, e)) for n, e in members)
                out.append({"device": path.stem, "backend": backend, "family": fam, "entries": len(members),
                            "gated": len(gated), "median_band": statistics.median(bands) if bands else None,
                            "max_band": max(bands) if bands else None,
                            "widest_why": "" if widest is None else f"`{widest[0]}`: {cause(widest[0], widest[1], is_cpu)}",
                            "noise": ", ".join(f"{m} {c}" for m, c in models.most_common()),
                            "median_mde": statistics.median(mdes) if mdes else None,
                            "max_mde": max(mdes) if mdes else None,
                            "detection": detection.tally(powers),
                            # the targets are a GPU's: a CPU device's host is shared, its floors are wider on purpose
                            "hardware": [] if is_cpu else
                            [(detection.device_timed(n), p.mde is not None and p.mde <= detection.target(n))
                             for (n, _), p in zip(members, powers)
                             if detection.hardware(n) and p.basis not in ("bound", "absolute", "ungated")],
                            # recorded, not gated: the hardware figures the share above leaves out
                            "hardware_ungated": 0 if is_cpu else
                            sum(1 for (n, _), p in zip(members, powers) if detection.hardware(n) and p.basis == "ungated")})
    return out


def markdown(table: list[dict[str, Any]]) -> str:
    """The rows as a Markdown table (bands in %; '-' where a family has no lower/higher entry)."""
    def pct(x: float | None) -> str:
        return "-" if x is None else f"{100 * x:.1f} %"

    lines = ["| device | backend | family | entries | gated | median band | widest band | median MDE | "
             "detection power | noise model | "
             f"why the widest band is over {100 * WIDE_BAND:.0f} % |",
             "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- | --- |"]
    for r in table:
        power = ", ".join(f"{label} {n}" for label, n in r["detection"].items())
        lines.append(f"| {r['device']} | {r['backend']} | `{r['family']}` | {r['entries']} | "
                     f"{100 * r['gated'] / r['entries']:.0f} % | {pct(r['median_band'])} | {pct(r['max_band'])} | "
                     f"{pct(r['median_mde'])} | {power} | "
                     f"{r['noise']} | {r['widest_why'].replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def totals(table: list[dict[str, Any]]) -> str:
    """Per device and backend, its entries counted by detection class: the table's closing lines."""
    sums: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    tight: dict[tuple[str, str], list[tuple[bool, bool]]] = defaultdict(list)  # (device-timed, within target)
    ungated: Counter[tuple[str, str]] = Counter()
    for r in table:
        sums[(r["device"], r["backend"])].update(r["detection"])
        tight[(r["device"], r["backend"])] += r["hardware"]
        ungated[(r["device"], r["backend"])] += r.get("hardware_ungated", 0)
    order = [label for _, label in detection.CLASSES] + [detection.LOOSE_LABEL, *detection.UNRATED]
    out = []
    for (dev, backend), c in sorted(sums.items()):
        hw = tight[(dev, backend)]
        timed = [ok for is_timed, ok in hw if is_timed]
        share = (f"; hardware figures ({', '.join(detection.HARDWARE)}) within their target "
                 f"({100 * detection.HARDWARE_MDE:.0f} %, device-timed {100 * detection.DEVICE_TIMED_MDE:.0f} %): "
                 f"{sum(ok for _, ok in hw)} of {len(hw)} (device-timed within "
                 f"{100 * detection.DEVICE_TIMED_MDE:.0f} %: {sum(timed)} of {len(timed)})"
                 + (f"; {ungated[(dev, backend)]} more recorded, not gated (informational)" if ungated[(dev, backend)] else "")
                 ) if hw else ""
        out.append(f"- {dev} ({backend}): " + ", ".join(f"{c[k]} {k}" for k in order if c[k]) + share + "\n")
    return "".join(out)


def main_table(args: Any) -> int:
    """``gpuperf baseline table``: print the Markdown table of every baseline file named."""
    files: list[Path] = []
    for arg in args.paths:
        p = Path(arg)
        files += sorted(p.glob("*.json")) if p.is_dir() else [p]
    if not files:
        from ..errors import GpuPerfError

        raise GpuPerfError(f"no baseline files in {' '.join(args.paths)}")
    table = rows(files)
    print(markdown(table), end="")
    print("\nDetection power (the smallest change each entry's gate catches, baselines/detection.py):\n")
    print(totals(table), end="")
    return 0
