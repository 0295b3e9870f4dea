"""The lean on-disk form of a baseline file (schema ``pytest-gpuperf-baseline/2``) and its expansion.

Code works on the *expanded* document (schema ``/1``'s shape: every entry carries its own
``provenance`` object and its ``samples`` list), which is also what older files hold. On disk a file
is written lean so that a reviewer can read its diff:

* one provenance header per backend section (``provenance``: the latest update); entries made by an
  earlier update name it by label (``"provenance": "<commit> <date> <n> runs"``), defined once under the
  section's ``provenances``;
* ``samples`` as a digest ``{"median", "mad", "values"}``: ``values`` are exactly the (at most 64) values
  the significance test resamples, so verdicts do not change; median and MAD are for the reader;
* ``run_values`` once where every run read the same value (a deterministic figure): ``runs`` says how many;
* an entry's ``test`` and ``citation`` — the same few strings over hundreds of entries — as a label
  (``"#"`` and the first hex digits of the string's SHA-256) defined once under the section's ``tests`` and
  ``citations``;
* one line per metric, so a changed metric is one changed line, in compact JSON (no space after a comma or
  colon inside it).

:func:`expand` turns either schema into the expanded document (listing every problem of a lean file),
:func:`dumps` writes the lean text. An entry without a provenance of its own takes its section's.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any, Mapping

import numpy as np

from .. import BASELINE_SCHEMA, LEAN_BASELINE_SCHEMA
from ..timing.stats import mad

#: the order of an entry's keys on its line: what a reviewer compares first comes first
ENTRY_ORDER = ("value", "unit", "better", "tolerance", "identity", "source_digest", "measured", "run_values", "runs", "samples",
               "gate", "unit_note", "test", "provenance", "citation")


#: entry fields whose strings a section defines once, by label: the field → the section's table of them
SHARED = {"test": "tests", "citation": "citations"}
#: a label's prefix and hex digits (more where two strings of one table would share a label)
LABEL_PREFIX, LABEL_DIGITS = "#", 8


def _string_labels(texts: set[str]) -> dict[str, str]:
    """A label per distinct string, stable across updates (a digest of the string, not its position)."""
    digits = LABEL_DIGITS
    while True:
        out = {t: LABEL_PREFIX + hashlib.sha256(t.encode()).hexdigest()[:digits] for t in texts}
        if len(set(out.values())) == len(out):
            return out
        digits += 4


def _g7(x: float) -> float:
    return float(f"{x:.7g}")


def digest(samples: list[float]) -> dict[str, Any]:
    """The lean form of an entry's samples: their median and MAD (for the reader) and the values themselves."""
    xs = np.asarray(samples, dtype=np.float64)
    median = float(np.median(xs))
    return {"median": _g7(median), "mad": _g7(mad(xs)), "values": list(samples)}


#: a commit as git names it in full, and an ISO date with its time: a label shows the commit's first digits, as
#: ``git log --oneline`` does, and the day (the provenance the label stands for keeps both whole; labels only
#: refer within their file, and two provenances of one label are numbered apart)
_FULL_COMMIT = re.compile(r"[0-9a-f]{40}")
_ISO_TIME = re.compile(r"(\d{4}-\d{2}-\d{2})T[0-9:.]+(?:Z|[+-]\d{2}:\d{2})?")
SHORT_COMMIT = 7


def _label(prov: Mapping[str, Any]) -> str:
    runs = prov.get("runs")
    tail = f" {runs} run{'s' if runs != 1 else ''}" if isinstance(runs, int) else ""
    commit, date = prov.get("commit") or "no commit", prov.get("date") or "no date"
    if isinstance(commit, str) and _FULL_COMMIT.fullmatch(commit):
        commit = commit[:SHORT_COMMIT]
    day = _ISO_TIME.fullmatch(date) if isinstance(date, str) else None
    return f"{commit} {day.group(1) if day else date}{tail}"


def _labels(texts: set[str]) -> dict[str, str]:
    """A readable label per distinct provenance (its canonical JSON → label); numbered where two share one."""
    out: dict[str, str] = {}
    taken: dict[str, int] = {}
    for text in sorted(texts):
        base = _label(json.loads(text))
        taken[base] = taken.get(base, 0) + 1
        out[text] = base if taken[base] == 1 else f"{base} ({taken[base]})"
    return out


def _prov_text(prov: Mapping[str, Any], seen: dict[tuple, str]) -> str:
    """A provenance's canonical text, computed once per content: the entries of a section pooled together
    share one (large) provenance, as one object or as shallow copies of one (:func:`expand` gives each entry
    its own dict over the same values), and encoding it again for each of them cost seconds. The key is the
    provenance's keys and the identities of its values: while the document lives, the same key is the same
    text; equal values held in different objects are simply encoded again."""
    key = tuple((k, id(v)) for k, v in prov.items())
    if key not in seen:
        seen[key] = json.dumps(prov, sort_keys=True)
    return seen[key]


def _lean_entry(entry: Mapping[str, Any], section_prov: str, labels: Mapping[str, str],
                seen: dict[tuple, str], shared: Mapping[str, Mapping[str, str]]) -> dict[str, Any]:
    e = dict(entry)
    prov = e.pop("provenance", None)
    if isinstance(prov, dict):
        text = _prov_text(prov, seen)
        if text != section_prov:
            e["provenance"] = labels[text]
    for field, table in shared.items():
        if isinstance(e.get(field), str):
            e[field] = table[e[field]]
    if isinstance(e.get("samples"), list) and e["samples"]:
        e["samples"] = digest(e["samples"])
    values = e.get("run_values")
    if isinstance(values, list) and len(values) > 1 and e.get("runs") == len(values) and len(set(values)) == 1:
        e["run_values"] = values[:1]  # every run read the same: once, with their count in ``runs``
    known = [k for k in ENTRY_ORDER if k in e]
    return {k: e[k] for k in known + [k for k in e if k not in ENTRY_ORDER]}


def lean(data: Mapping[str, Any]) -> dict[str, Any]:
    """The lean document of an expanded one (which :func:`expand` gives back)."""
    out: dict[str, Any] = {"schema": LEAN_BASELINE_SCHEMA}
    out.update({k: v for k, v in data.items() if k not in ("schema", "backends")})
    backends: dict[str, Any] = {}
    for backend, section in data.get("backends", {}).items():
        metrics = section.get("metrics", {})
        prov = section.get("provenance", {})
        own = json.dumps(prov, sort_keys=True)
        seen: dict[tuple, str] = {}
        others = {_prov_text(e["provenance"], seen) for e in metrics.values() if isinstance(e.get("provenance"), dict)}
        others.discard(own)
        labels = _labels(others)
        lean_section: dict[str, Any] = {"provenance": prov}
        if labels:
            lean_section["provenances"] = {label: json.loads(text) for text, label in
                                           sorted(labels.items(), key=lambda kv: kv[1])}
        shared = {field: _string_labels({e[field] for e in metrics.values() if isinstance(e.get(field), str)})
                  for field in SHARED}
        for field, table in shared.items():
            if table:
                lean_section[SHARED[field]] = {label: text for text, label in sorted(table.items())}  # by the text
        lean_section.update({k: v for k, v in section.items()
                             if k not in ("provenance", "provenances", "metrics", *SHARED.values())})
        lean_section["metrics"] = {name: _lean_entry(e, own, labels, seen, shared) for name, e in metrics.items()}
        backends[backend] = lean_section
    out["backends"] = backends
    return out


def _line(value: Any) -> str:
    """``value`` as compact JSON: a file of thousands of metric lines is a tenth smaller without the spaces."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _block(items: Mapping[str, Any], indent: int) -> list[str]:
    """``"key": value`` lines at ``indent``, each value on its one line."""
    pad = " " * indent
    keys = list(items)
    return [f"{pad}{_line(k)}: {_line(items[k])}{',' if i < len(keys) - 1 else ''}" for i, k in enumerate(keys)]


def dumps(data: Mapping[str, Any]) -> str:
    """The text of the lean file: headers and one line per metric (raises ValueError on a non-finite number)."""
    doc = lean(data)
    lines = ["{"] + [f"  {_line(k)}: {_line(v)}," for k, v in doc.items() if k != "backends"]
    lines.append('  "backends": {')
    names = list(doc["backends"])
    for i, backend in enumerate(names):
        section = doc["backends"][backend]
        lines.append(f"    {_line(backend)}: {{")
        for key in section:
            if key in ("provenances", "metrics"):  # a line each; a table of shared strings is one line
                lines.append(f"      {_line(key)}: {{")
                lines += _block(section[key], 8)
                lines.append("      }" + ("," if key != list(section)[-1] else ""))
            else:
                lines += [line + ("," if key != list(section)[-1] else "") for line in _block({key: section[key]}, 6)]
        lines.append("    }" + ("," if i < len(names) - 1 else ""))
    lines += ["  }", "}"]
    return "\n".join(lines) + "\n"


def _where(backend: str, name: str | None = None, field: str | None = None) -> str:
    out = f"backends.{backend}"
    if name is not None:
        out += f".metrics[{name!r}]"
    return out + (f".{field}" if field else "")


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _expand_samples(digest_: Any, where: str, found: list[str]) -> Any:
    if not isinstance(digest_, dict) or not isinstance(digest_.get("values"), list) or not digest_["values"]:
        found.append(f"{where} must be a digest {{\"median\", \"mad\", \"values\": [numbers]}} with values")
        return None
    values = digest_["values"]
    if not all(_finite(x) for x in values):
        found.append(f"{where}.values must be a list of finite numbers")
        return None
    check = digest(values)
    for key in ("median", "mad"):
        if key in digest_ and digest_[key] != check[key]:
            found.append(f"{where}.{key} is {digest_[key]!r} but its values give {check[key]!r}: correct it or "
                         f"delete it ('gpuperf baseline migrate FILE' rewrites the digest)")
    return list(values)


def expand(doc: Any) -> tuple[Any, list[str]]:
    """The expanded document of a lean one, and the problems of its lean parts (unknown provenance labels,
    malformed digests). A document of another schema is returned as it is (the expanded form's own checks,
    :mod:`.problems`, judge it)."""
    if not isinstance(doc, dict) or doc.get("schema") != LEAN_BASELINE_SCHEMA:
        return doc, []
    found: list[str] = []
    out: dict[str, Any] = {k: v for k, v in doc.items() if k != "backends"}
    out["schema"] = BASELINE_SCHEMA
    backends = doc.get("backends")
    if not isinstance(backends, dict):
        out["backends"] = backends
        return out, found
    out["backends"] = {}
    for backend, section in backends.items():
        if not isinstance(section, dict) or not isinstance(section.get("metrics", {}), dict):
            out["backends"][backend] = section
            continue
        prov = section.get("provenance", {})
        table = section.get("provenances", {})
        if not isinstance(table, dict) or not all(isinstance(p, dict) for p in table.values()):
            found.append(f"{_where(backend)}.provenances must map labels to provenance objects")
            table = {}
        strings: dict[str, dict[str, str]] = {}
        for field, name in SHARED.items():
            got = section.get(name, {})
            if not isinstance(got, dict) or not all(isinstance(v, str) for v in got.values()):
                found.append(f"{_where(backend)}.{name} must map labels to strings")
                got = {}
            strings[field] = got
        expanded: dict[str, Any] = {k: v for k, v in section.items()
                                    if k not in ("provenances", "metrics", *SHARED.values())}
        metrics: dict[str, Any] = {}
        for name, entry in section.get("metrics", {}).items():
            if not isinstance(entry, dict):
                metrics[name] = entry
                continue
            e = dict(entry)
            ref = e.get("provenance")
            if ref is None:
                e["provenance"] = dict(prov) if isinstance(prov, dict) else prov
            elif isinstance(ref, str) and ref in table:
                e["provenance"] = dict(table[ref])
            elif isinstance(ref, dict):  # written out in full: taken as it is
                pass
            else:
                found.append(f"{_where(backend, name, 'provenance')} names {ref!r}, which is not among "
                             f"{_where(backend)}.provenances {sorted(table)}")
                e.pop("provenance")
            for field, defined in strings.items():
                ref = e.get(field)
                if isinstance(ref, str) and ref.startswith(LABEL_PREFIX):
                    if ref in defined:
                        e[field] = defined[ref]
                    else:
                        found.append(f"{_where(backend, name, field)} names {ref!r}, which is not among "
                                     f"{_where(backend)}.{SHARED[field]}")
                        e.pop(field)
            runs, values = e.get("runs"), e.get("run_values")
            if isinstance(values, list) and len(values) == 1 and isinstance(runs, int) and runs > 1:
                e["run_values"] = values * runs  # runs that all read one value, written once
            if "samples" in e:
                values = _expand_samples(e["samples"], _where(backend, name, "samples"), found)
                if values is None:
                    e.pop("samples")
                else:
                    e["samples"] = values
            metrics[name] = e
        expanded["metrics"] = metrics
        out["backends"][backend] = expanded
    return out, found
