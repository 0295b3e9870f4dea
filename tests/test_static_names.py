"""Every name the code uses is defined — checked statically, because CI has no GPU: a CUDA-only path
(the PTX model's calibration read ``gpu_device`` where its parameter is ``dev``) would otherwise first
fail on a GPU host, in the README's main command."""

from __future__ import annotations

from pathlib import Path

from pyflakes import api, messages
from pyflakes.reporter import Reporter

ROOT = Path(__file__).resolve().parents[1]
FATAL = (messages.UndefinedName, messages.UndefinedLocal, messages.UndefinedExport)


class _Collect(Reporter):
    def __init__(self) -> None:
        super().__init__(None, None)
        self.found: list[str] = []

    def flake(self, message) -> None:  # noqa: ANN001 - pyflakes' message type
        if isinstance(message, FATAL):
            self.found.append(str(message))

    def syntaxError(self, filename, msg, lineno, offset, text) -> None:  # noqa: N802, ANN001
        self.found.append(f"{filename}:{lineno}: syntax error: {msg}")

    def unexpectedError(self, filename, msg) -> None:  # noqa: N802, ANN001
        self.found.append(f"{filename}: {msg}")


def test_no_undefined_names_in_the_package_suites_scripts_and_examples():
    files = [p for d in ("pytest_gpuperf", "scripts", "examples", "tools") for p in sorted((ROOT / d).rglob("*.py"))]
    assert len(files) > 100
    rep = _Collect()
    for path in files:
        api.checkPath(str(path), rep)
    assert not rep.found, "\n".join(rep.found)


def test_the_check_sees_an_undefined_name(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def calibrate(dev):\n    return gpu_device.info\n")
    rep = _Collect()
    api.checkPath(str(bad), rep)
    assert rep.found and "gpu_device" in rep.found[0]
