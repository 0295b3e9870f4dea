"""The generated blocks of a doc: ``<!-- gpuperf:table NAME key=value … -->`` … ``<!-- /gpuperf:table -->``.

The opening marker's words after ``NAME`` are ``key=value`` pairs. A value that names files
(comma-separated paths) makes ``key`` a *role*, the runs a generator reads under that name (``sources`` is
the usual one), and every one of them must lie under ``results/``; any other value is an option. The text between the markers is the
generator's output and nothing else: :func:`splice` replaces it whole.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .runfile import EvidenceError

#: a marker quoted in inline code (a backtick right before it) is text about markers, not a marker
OPEN = re.compile(r"(?<!`)<!--\s*gpuperf:table\b(?P<words>.*?)-->", re.S)
CLOSE = re.compile(r"(?<!`)<!--\s*/gpuperf:table\s*-->")
RESULTS = "results/"


@dataclass(frozen=True)
class Block:
    """One generated table of a doc: where its body lies (``start``:``end`` of the doc text) and what
    its marker asks for."""

    doc: str
    name: str
    line: int
    start: int
    end: int
    body: str
    roles: dict[str, list[str]] = field(default_factory=dict)
    options: dict[str, str] = field(default_factory=dict)

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line} table {self.name!r}"

    def sources(self) -> list[str]:
        """Every file the block names, in marker order, each once."""
        seen: list[str] = []
        for paths in self.roles.values():
            seen += [p for p in paths if p not in seen]
        return seen


def _words(doc: str, line: int, words: str) -> tuple[str, dict[str, list[str]], dict[str, str]]:
    parts = words.split()
    if not parts or "=" in parts[0]:
        raise EvidenceError(f"{doc}:{line}: a gpuperf:table marker must name its table first "
                            "(<!-- gpuperf:table NAME sources=results/… -->)")
    roles: dict[str, list[str]] = {}
    options: dict[str, str] = {}
    for word in parts[1:]:
        key, sep, value = word.partition("=")
        if not sep or not key or not value:
            raise EvidenceError(f"{doc}:{line}: marker word {word!r} is not key=value; write e.g. "
                                "sources=results/<key>/run.json.xz")
        if key in roles or key in options:
            raise EvidenceError(f"{doc}:{line}: {key!r} is given twice in the marker; join the files with commas")
        items = value.split(",")
        if key == "sources" or any("/" in i or i.endswith((".json", ".gz", ".xz")) for i in items):
            bad = [i for i in items if not i.startswith(RESULTS)]
            if bad:
                raise EvidenceError(f"{doc}:{line}: {key}= names {', '.join(bad)}, outside results/; a table "
                                    "is made from saved runs only")
            twice = sorted({i for i in items if items.count(i) > 1})
            if twice:
                raise EvidenceError(f"{doc}:{line}: {key}= names {', '.join(twice)} more than once; a run counted "
                                    "twice weighs twice in every median and count: name each run once")
            roles[key] = items
        else:
            options[key] = value
    return parts[0], roles, options


def parse(doc: str, text: str) -> list[Block]:
    """Every generated block of ``text`` (the doc named ``doc``), in order. An opening marker without its
    closing one, or a closing one without an opening one, is an error naming the line."""
    blocks: list[Block] = []
    pos = 0
    while True:
        m = OPEN.search(text, pos)
        close = CLOSE.search(text, pos)
        if m is None:
            if close is not None:
                raise EvidenceError(f"{doc}:{text.count(chr(10), 0, close.start()) + 1}: a closing "
                                    "<!-- /gpuperf:table --> without its opening marker")
            return blocks
        line = text.count("\n", 0, m.start()) + 1
        if close is not None and close.start() < m.start():
            raise EvidenceError(f"{doc}:{text.count(chr(10), 0, close.start()) + 1}: a closing "
                                "<!-- /gpuperf:table --> without its opening marker")
        if close is None:
            raise EvidenceError(f"{doc}:{line}: the gpuperf:table marker is never closed; end the block with "
                                "<!-- /gpuperf:table -->")
        nxt = OPEN.search(text, m.end())
        if nxt is not None and nxt.start() < close.start():
            raise EvidenceError(f"{doc}:{line}: the gpuperf:table block is not closed before the next one "
                                f"(line {text.count(chr(10), 0, nxt.start()) + 1})")
        name, roles, options = _words(doc, line, m.group("words"))
        blocks.append(Block(doc, name, line, m.end(), close.start(), text[m.end():close.start()], roles, options))
        pos = close.end()


def body_of(lines: list[str]) -> str:
    """The text a block holds for generated ``lines``: one newline after the opening marker, one before
    the closing one."""
    return "\n" + "\n".join(lines).strip("\n") + "\n"


def splice(text: str, blocks: list[Block], bodies: list[str]) -> str:
    """``text`` with each block's body replaced by the matching entry of ``bodies``."""
    if len(blocks) != len(bodies):
        raise ValueError("one body per block")
    out, pos = [], 0
    for b, body in zip(blocks, bodies):
        out += [text[pos:b.start], body]
        pos = b.end
    out.append(text[pos:])
    return "".join(out)
