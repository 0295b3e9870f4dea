"""Check and write the generated tables of a docs folder.

:func:`check` makes every block's table from the runs its marker names and reports each doc, table and
differing cell where the doc's text is not what its results give; :func:`write` puts the made text in
place (atomically, only docs that change). Every made block ends with the runs it came from, so a
reader of the rendered doc sees which run each figure is from.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from pytest_gpuperf.util.atomic import atomic_write_chunks
from . import markers, mdcells, runfile
from .registry import Inputs, tables
from .runfile import EvidenceError, Run

DEFAULT_DOCS = "docs/*.md"


def doc_paths(root: Path, docs: Sequence[str] = ()) -> list[Path]:
    """The docs to look at: those named (relative to ``root``), else every ``docs/*.md``."""
    if docs:
        paths = [root / d for d in docs]
        missing = [str(p) for p in paths if not p.is_file()]
        if missing:
            raise EvidenceError(f"no such doc: {', '.join(missing)}")
        return paths
    paths = sorted(root.glob(DEFAULT_DOCS))
    if not paths:
        raise EvidenceError(f"no {DEFAULT_DOCS} under {root}: run from the repository root or pass --root")
    return paths


def source_line(roles: dict[str, list[Run]]) -> str:
    """The line that names every run a block was made from."""
    named = len(roles) > 1
    parts = []
    for role, runs in roles.items():
        cites = ", ".join(r.cite() for r in runs)
        parts.append(f"{role}: {cites}" if named else cites)
    return "Runs: " + "; ".join(parts) + "."


class Maker:
    """Makes block bodies, reading each results file once."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.generators = tables()
        self.cache: dict[str, Run] = {}

    def run(self, rel: str) -> Run:
        if rel not in self.cache:
            self.cache[rel] = runfile.load(self.root, rel)
        return self.cache[rel]

    def body(self, block: markers.Block) -> str:
        gen = self.generators.get(block.name)
        if gen is None:
            raise EvidenceError(f"{block.where}: no such table; known: {', '.join(sorted(self.generators))}")
        if not block.roles:
            raise EvidenceError(f"{block.where}: the marker names no results file; add sources=results/<key>/…")
        try:
            roles = {role: [self.run(p) for p in paths] for role, paths in block.roles.items()}
        except EvidenceError as exc:
            raise EvidenceError(f"{block.where}: {exc}") from exc
        lines = list(gen(Inputs(block, roles, self.root)))
        while lines and not lines[-1].strip():
            lines.pop()
        if not lines:
            raise EvidenceError(f"{block.where}: its results give no rows; name the runs that hold its metrics")
        return markers.body_of(lines + ["", source_line(roles)])


def _blocks(root: Path, path: Path) -> tuple[str, list[markers.Block]]:
    text = path.read_text(encoding="utf-8")
    return text, markers.parse(str(path.relative_to(root)), text)


def caption(text: str, block: markers.Block) -> str:
    """The text a table's reader sees with it: from the heading (or the end of the previous block) above its
    marker to the end of the block, marker included."""
    head = text.rfind("\n#", 0, block.start)
    prev = text.rfind("<!-- /gpuperf:table", 0, block.start)
    return text[max(head, prev, 0):block.end]


def check(root: Path, docs: Sequence[str] = ()) -> tuple[int, list[str]]:
    """(blocks checked, problems): one problem per differing block, naming the doc, the table and the
    differing cells, and one per block that cites an interrupted, contended or throttled run without
    saying so (in its caption, its marker, a state column or its Runs line)."""
    maker = Maker(root)
    problems: list[str] = []
    count = 0
    for path in doc_paths(root, docs):
        text, blocks = _blocks(root, path)
        for b in blocks:
            count += 1
            made = maker.body(b)
            if made != b.body:
                diffs = mdcells.differences(b.body, made)
                problems.append(f"{b.where} differs from its results:\n  " + "\n  ".join(diffs or ["whitespace"]))
            quiet = runfile.unsaid([maker.run(p) for p in b.sources()], caption(text, b))
            if quiet:
                problems.append(f"{b.where} cites runs without saying their state: {'; '.join(quiet)} — say it in "
                                "the caption above the marker or a state column (python3 -m tools.evidence write puts it in the "
                                "Runs line)")
    if count == 0:
        raise EvidenceError("no gpuperf:table block in the docs: nothing would be checked; mark the tables "
                            "(<!-- gpuperf:table NAME sources=results/… --> … <!-- /gpuperf:table -->)")
    return count, problems


def write(root: Path, docs: Sequence[str] = ()) -> tuple[int, list[str]]:
    """(blocks made, docs changed): every block replaced by what its results give."""
    maker = Maker(root)
    changed: list[str] = []
    count = 0
    for path in doc_paths(root, docs):
        text, blocks = _blocks(root, path)
        bodies = [maker.body(b) for b in blocks]
        count += len(blocks)
        new = markers.splice(text, blocks, bodies)
        if new != text:
            atomic_write_chunks(path, [new.encode("utf-8")])
            changed.append(str(path.relative_to(root)))
    return count, changed
