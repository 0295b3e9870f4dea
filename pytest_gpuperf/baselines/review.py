"""``gpuperf baseline diff A B``: what changed from one baseline file to another, as a reviewer reads it.

A line-by-line diff of a baseline file says that numbers moved; a reviewer asks which expectations
moved and by how much. Per backend section this lists the header's changes (driver, toolkit, commit),
the metrics added and removed, identities that changed (the entry now judges runs made another way),
values and bands that moved (largest relative change first), and the other fields that changed; entries
re-measured with the same value and band are only counted. A band widened more than a factor (1.5 unless
asked otherwise) is listed on its own with the measured cause its entry records, or "no measured cause
stated": a band is widened only for a named, measured cause, and the reviewer sees at once which lack one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from .catalog import measured_band, measured_informational
from .verdicts import band

#: changed metrics listed per kind unless every one is asked for
SHOWN = 40
#: a band that grew more than this factor is listed with its measured cause (``gpuperf baseline diff --widened``)
WIDENED = 1.5
#: what a widened band's line says where its entry records no measured cause
NO_CAUSE = "no measured cause stated"

#: entry fields the value/band/identity lines already cover, or that change with every re-measurement
_COVERED = ("value", "tolerance", "identity", "provenance", "samples", "run_values", "runs", "measured")


@dataclass
class SectionChanges:
    """The changes of one backend section."""

    backend: str
    header: list[str] = field(default_factory=list)  # "driver: 550 → 580"
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    identities: list[str] = field(default_factory=list)
    moved: list[tuple[float, str]] = field(default_factory=list)  # (|relative change|, line)
    widened: list[tuple[float, str, bool]] = field(default_factory=list)  # (new / old band, line, a cause recorded)
    other: list[str] = field(default_factory=list)
    remeasured: int = 0
    counts: tuple[int, int] = (0, 0)  # metrics in A, in B

    def any(self) -> bool:
        return bool(self.header or self.added or self.removed or self.identities or self.moved or self.other
                    or self.remeasured)


@dataclass
class Changes:
    """Everything that changed from file A to file B."""

    device: list[str] = field(default_factory=list)
    sections: list[SectionChanges] = field(default_factory=list)
    widen: float = WIDENED

    def any(self) -> bool:
        return bool(self.device) or any(s.any() for s in self.sections)


def _fmt(x: Any) -> str:
    return f"{x:.6g}" if isinstance(x, float) else str(x)


def _fields(a: Mapping[str, Any], b: Mapping[str, Any], skip: tuple[str, ...] = ()) -> list[str]:
    """``key: old → new`` for every key whose value differs (``(unset)`` where one side lacks it)."""
    out = []
    for key in sorted(set(a) | set(b)):
        if key in skip or a.get(key) == b.get(key):
            continue
        out.append(f"{key}: {_fmt(a.get(key, '(unset)'))} → {_fmt(b.get(key, '(unset)'))}")
    return out


def _band_text(entry: Mapping[str, Any]) -> str:
    value = float(entry["value"])
    width = band(value, entry.get("tolerance") or {})
    rel = f" ({width / abs(value):.1%})" if value else ""
    return f"± {width:.4g}{rel}"


def _describe(entry: Mapping[str, Any]) -> str:
    return (f"{_fmt(float(entry['value']))} {entry.get('unit', '')} {_band_text(entry)}, "
            f"{entry.get('better', '?')} is better").replace("  ", " ")


def _bands(a: Mapping[str, Any], b: Mapping[str, Any]) -> tuple[float, float]:
    """The absolute half-widths of entry ``a``'s and entry ``b``'s bands."""
    return band(float(a["value"]), a.get("tolerance") or {}), band(float(b["value"]), b.get("tolerance") or {})


def _moved(name: str, a: Mapping[str, Any], b: Mapping[str, Any],
           bands: tuple[float, float]) -> tuple[float, str] | None:
    va, vb = float(a["value"]), float(b["value"])
    ba, bb = bands
    if va == vb and ba == bb:
        return None
    parts = []
    rel = abs(vb - va) / abs(va) if va else (0.0 if vb == va else float("inf"))
    if va != vb:
        delta = f" ({(vb - va) / abs(va):+.1%})" if va else ""
        parts.append(f"{_fmt(va)} → {_fmt(vb)} {b.get('unit', '')}{delta}".replace(" )", ")"))
    if ba != bb:
        parts.append(f"band {_band_text(a)} → {_band_text(b)}")
        rel = max(rel, abs(bb - ba) / abs(va) if va else 0.0)
    runs_a, runs_b = len(a.get("run_values") or []) or 1, len(b.get("run_values") or []) or 1
    if runs_a != runs_b:
        parts.append(f"runs {runs_a} → {runs_b}")
    return rel, f"{name}: " + ", ".join(parts)


def _widened(name: str, a: Mapping[str, Any], b: Mapping[str, Any], bands: tuple[float, float],
             factor: float) -> tuple[float, str, bool] | None:
    """Entry ``name``'s band grown more than ``factor`` from ``a`` to ``b`` (a band from nothing counts as
    infinitely wider): the ratio, a line with the measured cause ``b`` records for it, and whether it records one;
    else None."""
    ba, bb = bands
    if not bb > factor * ba:
        return None
    ratio = bb / ba if ba else float("inf")
    cause = measured_band(name, b) or measured_informational(name, b)
    times = f"×{ratio:.2f}" if ba else "from none"
    return ratio, f"{name}: band {_band_text(a)} → {_band_text(b)} ({times}); cause: {cause or NO_CAUSE}", bool(cause)


def _section(backend: str, a: Mapping[str, Any], b: Mapping[str, Any], widen: float = WIDENED) -> SectionChanges:
    out = SectionChanges(backend)
    out.header = _fields(a.get("provenance") or {}, b.get("provenance") or {})
    ma, mb = a.get("metrics") or {}, b.get("metrics") or {}
    out.counts = (len(ma), len(mb))
    out.added = [f"{n}: {_describe(mb[n])}" for n in sorted(set(mb) - set(ma))]
    out.removed = [f"{n}: {_describe(ma[n])}" for n in sorted(set(ma) - set(mb))]
    for name in sorted(set(ma) & set(mb)):
        ea, eb = ma[name], mb[name]
        if ea == eb:
            continue
        listed = False
        if (ea.get("identity") or {}) != (eb.get("identity") or {}):
            out.identities.append(f"{name}: " + "; ".join(_fields(ea.get("identity") or {}, eb.get("identity") or {})))
            listed = True
        bands = _bands(ea, eb)
        moved = _moved(name, ea, eb, bands)
        if moved is not None:
            out.moved.append(moved)
            listed = True
            grown = _widened(name, ea, eb, bands, widen)
            if grown is not None:
                out.widened.append(grown)
        rest = _fields(ea, eb, skip=_COVERED)
        if rest:
            out.other.append(f"{name}: " + "; ".join(rest))
            listed = True
        if not listed:
            out.remeasured += 1
    out.moved.sort(key=lambda m: (-m[0], m[1]))
    out.widened.sort(key=lambda m: (-m[0], m[1]))
    return out


def diff(a: Mapping[str, Any], b: Mapping[str, Any], widen: float = WIDENED) -> Changes:
    """The changes from expanded baseline document ``a`` to ``b`` (:attr:`.baseline_file.BaselineFile.data`);
    ``widen``: the factor beyond which a grown band is listed with its cause."""
    out = Changes(device=_fields(a.get("device") or {}, b.get("device") or {}), widen=widen)
    sa, sb = a.get("backends") or {}, b.get("backends") or {}
    for backend in sorted(set(sa) | set(sb)):
        out.sections.append(_section(backend, sa.get(backend) or {}, sb.get(backend) or {}, widen))
    return out


def _listed(title: str, lines: list[str], mark: str, verbose: bool) -> list[str]:
    if not lines:
        return []
    shown = lines if verbose else lines[:SHOWN]
    out = [f"  {title} ({len(lines)}):"] + [f"    {mark} {line}" for line in shown]
    if len(shown) < len(lines):
        out.append(f"    … and {len(lines) - len(shown)} more (--all lists them)")
    return out


def render(changes: Changes, name_a: str, name_b: str, verbose: bool = False) -> str:
    """The review as text: one block per backend section, each change on one line."""
    lines = [f"baseline diff {name_a} → {name_b}"]
    if not changes.any():
        return "\n".join(lines + ["no changes: every entry and header is the same"]) + "\n"
    lines += [f"device {line}" for line in changes.device]
    for s in changes.sections:
        if not s.any():
            lines.append(f"{s.backend}: unchanged ({s.counts[1]} metrics)")
            continue
        lines.append(f"{s.backend}: {s.counts[0]} → {s.counts[1]} metrics: {len(s.added)} added, {len(s.removed)} "
                     f"removed, {len(s.identities)} identities changed, {len(s.moved)} values or bands moved, "
                     f"{s.remeasured} re-measured with the same value and band")
        lines += [f"  header {line}" for line in s.header]
        lines += _listed("added", s.added, "+", verbose)
        lines += _listed("removed", s.removed, "-", verbose)
        lines += _listed("identity changed (judges runs made another way)", s.identities, "~", verbose)
        if s.widened:
            bare = sum(1 for *_, caused in s.widened if not caused)
            lines += _listed(f"band widened more than ×{changes.widen:g}, widest first, {bare} of them with {NO_CAUSE}",
                             [m[1] for m in s.widened], "!", verbose)
        lines += _listed("value or band moved, largest first", [m[1] for m in s.moved], "~", verbose)
        lines += _listed("other fields changed", s.other, "~", verbose)
    return "\n".join(lines) + "\n"
