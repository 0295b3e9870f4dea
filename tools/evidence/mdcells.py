"""Where a doc's table differs from what its results give: cell by cell for Markdown table rows (row
label, column header, the doc's text and the results'), line by line otherwise."""

from __future__ import annotations

import difflib
import re

SEPARATOR = re.compile(r"^\|\s*:?-{3,}")


def cells(line: str) -> list[str] | None:
    """The cells of a Markdown table row (``| a | b |``), or None for any other line."""
    s = line.strip()
    if not (s.startswith("|") and s.endswith("|")) or len(s) < 2:
        return None
    return [c.strip() for c in re.split(r"(?<!\\)\|", s[1:-1])]


def headers(lines: list[str]) -> list[list[str] | None]:
    """For each line, the header cells of the table it belongs to (None outside tables)."""
    out: list[list[str] | None] = []
    current: list[str] | None = None
    for i, line in enumerate(lines):
        row = cells(line)
        if row is None:
            current = None
        elif i + 1 < len(lines) and SEPARATOR.match(lines[i + 1].strip()):
            current = row
        out.append(current)
    return out


def differences(doc_body: str, made_body: str, limit: int = 30) -> list[str]:
    """Readable differences of a block's text in the doc against the text its results make."""
    old, new = doc_body.strip("\n").split("\n"), made_body.strip("\n").split("\n")
    heads = headers(new)
    found: list[str] = []
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal":
            continue
        pairs = list(zip(range(a0, a1), range(b0, b1))) if op == "replace" else []
        for i, j in pairs:
            ro, rn = cells(old[i]), cells(new[j])
            if ro is not None and rn is not None and len(ro) == len(rn):
                head = heads[j] or []
                for k, (x, y) in enumerate(zip(ro, rn)):
                    if x != y:
                        col = head[k] if k < len(head) else f"column {k + 1}"
                        found.append(f"row {rn[0]!r}, column {col!r}: doc has {x!r}, results give {y!r}")
            else:
                found.append(f"line {i + 1}: doc has {old[i]!r}, results give {new[j]!r}")
        extra_old = range(a0 + len(pairs), a1)
        extra_new = range(b0 + len(pairs), b1)
        found += [f"line {i + 1}: doc has {old[i]!r}, which its results do not give" for i in extra_old]
        found += [f"missing line: results give {new[j]!r}" for j in extra_new]
    if len(found) > limit:
        found = found[:limit] + [f"… and {len(found) - limit} more"]
    return found
