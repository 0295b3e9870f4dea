"""The examples of README.md and docs/*.md run as written.

Each fenced block a reader would copy carries a marker on the line above it:

- ``<!-- example: file NAME -->``: the block is a file; it is written as NAME into the doc's folder, for the
  shell blocks after it;
- ``<!-- example: pytest -->``: the block is a pytest file of its own; it runs on the OpenCL device;
- ``<!-- example: shell -->``: each command runs in the doc's folder (after the files above it);
- ``<!-- example: listing (why) -->``: not a program (an interface listing, commands a GPU or cluster runs);
  the reason is said.

Every Python block must carry one, so a new example cannot go unrun by omission. Shell blocks without a
marker are commands for a GPU host, a cluster or a CI runner; their ``gpuperf`` commands still parse with
the CLI's own parser, and every ``--gpuperf-*`` option they name exists. The runs use PoCL; on a host busy
with other work a gated run may exit 9 (HOST TOO BUSY TO GATE), which the test accepts only where the run
says so.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_gpuperf import exits
from pytest_gpuperf.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\S*)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
MARKER = re.compile(r"<!-- example: (file|pytest|shell|listing)\b ?(.*?) ?-->")
SHELLS = ("bash", "sh", "shell", "console", "")


@dataclass(frozen=True)
class Block:
    doc: Path
    line: int
    lang: str
    text: str
    kind: str | None  # the marker's kind, None where the block has none
    arg: str

    @property
    def where(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"


def blocks(doc: Path) -> list[Block]:
    text = doc.read_text(encoding="utf-8")
    out = []
    for m in FENCE.finditer(text):
        before = [ln for ln in text[:m.start()].splitlines() if ln.strip()]
        marker = MARKER.fullmatch(before[-1].strip()) if before else None
        out.append(Block(doc, text[:m.start()].count("\n") + 1, m.group(1), m.group(2),
                         marker.group(1) if marker else None, marker.group(2) if marker else ""))
    return out


ALL = [b for doc in DOCS for b in blocks(doc)]
RUN = sorted({b.doc for b in ALL if b.kind in ("pytest", "shell")})


def commands(text: str, raw: bool = False) -> list[str]:
    """The command lines of a shell (or a workflow's ``run:``) block: continuations joined; unless ``raw``,
    comments and what follows ``||``, ``&&`` or a pipe left out."""
    out = []
    for line in re.sub(r"\\\n\s*", " ", text).splitlines():
        line = line.strip() if raw else re.split(r"\s+#| \|\| | && | \| ", " " + line.strip())[0].strip()
        line = re.sub(r"^(- )?run: ", "", line)
        if line and not line.startswith("#"):
            out.append(line)
    return out


def test_every_python_example_is_run_or_says_why_not():
    unmarked = [b.where for b in ALL if b.lang == "python" and b.kind is None]
    assert not unmarked, f"a Python block without '<!-- example: file|pytest|listing (why) -->' above it: {unmarked}"
    silent = [b.where for b in ALL if b.kind == "listing" and not b.arg.strip("() ")]
    assert not silent, f"'<!-- example: listing -->' says why it is not run: {silent}"
    assert [b for b in ALL if b.kind == "shell"] and [b for b in ALL if b.kind == "file"]


def test_documented_gpuperf_commands_parse():
    """Every ``gpuperf`` command of a shell or workflow block is accepted by the CLI's parser (a synopsis
    with ``[--option]`` is not a command; ``gpuperf run`` hands its arguments to pytest: its options are
    checked below)."""
    bad = []
    for b in ALL:
        if b.lang not in (*SHELLS, "yaml"):
            continue
        for cmd in commands(b.text):
            if not cmd.startswith("gpuperf ") or " [--" in cmd:
                continue
            argv = shlex.split(cmd.replace("${{", "{{"))[1:]
            if argv[0] == "run":
                continue
            err = io.StringIO()
            try:
                with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                    build_parser().parse_args(argv)
            except SystemExit as exc:
                bad.append(f"{b.where}: {cmd}: exit {exc.code}: {err.getvalue().strip()[-300:]}")
    assert not bad, "\n".join(bad)


def test_documented_pytest_options_exist():
    source = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "pytest_gpuperf").rglob("*.py"))
    known = set(re.findall(r"""["'](--gpuperf-[a-z0-9-]+)["']""", source))
    named = {(b.where, opt) for b in ALL if b.lang in (*SHELLS, "yaml")
             for opt in re.findall(r"(--gpuperf-[a-z0-9-]+)", b.text)}
    unknown = sorted(f"{where}: {opt}" for where, opt in named if opt not in known)
    assert not unknown, unknown


def _pocl() -> bool:
    from pytest_gpuperf.devices import discover

    return any(d.backend == "opencl" for d in discover().devices)


def _run(cmd: list[str] | str, folder: Path, env: dict[str, str], what: str) -> str:
    proc = subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True, timeout=600,
                          shell=isinstance(cmd, str), executable="/bin/bash" if isinstance(cmd, str) else None)
    out = proc.stdout + proc.stderr
    busy = proc.returncode == exits.HOST_TOO_BUSY and "HOST TOO BUSY TO GATE" in out
    assert proc.returncode == 0 or busy, f"{what}: exit {proc.returncode}\n{out[-4000:]}"
    return out


@pytest.mark.skipif(not _pocl(), reason="no OpenCL device (install pocl-opencl-icd)")
@pytest.mark.parametrize("doc", RUN, ids=[str(d.relative_to(ROOT)) for d in RUN])
def test_examples_run_as_written(doc, tmp_path):
    """A doc's runnable blocks in order, in one folder, the way a reader pastes them; device 0 is the
    OpenCL device here, the measurement budget short (``PYTEST_ADDOPTS``, so the text runs unchanged)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
               PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
               PYTEST_ADDOPTS="--gpuperf-budget=0.2 -p no:cacheprovider",
               GPUPERF_CACHE=str(tmp_path / "cache"), GPUPERF_TUNING_CACHE=str(tmp_path / "cache" / "tuning"))
    env.pop("GITHUB_ACTIONS", None)
    ran = 0
    for b in (b for b in ALL if b.doc == doc):
        if b.kind == "file":
            (tmp_path / b.arg).write_text(b.text, encoding="utf-8")
        elif b.kind == "pytest":
            name = f"test_example_{b.line}.py"
            (tmp_path / name).write_text(b.text, encoding="utf-8")
            _run([sys.executable, "-m", "pytest", name, "--gpuperf-device=opencl:0"], tmp_path, env, b.where)
            ran += 1
        elif b.kind == "shell":
            for cmd in commands(b.text, raw=True):
                _run(cmd, tmp_path, env, f"{b.where}: {cmd}")
                ran += 1
    assert ran
    if doc.name == "reference.md":  # the suite example recorded its metric, and its baseline holds it
        doc_ = json.loads((tmp_path / "saxpy.json").read_text())
        assert [m["name"] for m in doc_["metrics"]] == ["saxpy.time_us"]
        (baseline,) = (tmp_path / "baselines").glob("*.json")
        assert "saxpy.time_us" in baseline.read_text()
