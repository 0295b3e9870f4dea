"""Start-up checks of the command line: every bad value is one usage line before any test runs.

Before, ``--gpuperf-timeout=0`` made every measurement time out, ``--gpuperf-budget=-5`` and
``--gpuperf-tolerance-k=nan`` were taken as given (a NaN band passes everything), ``--gpuperf-floor -1 -1``
wrote negative floors into baselines, a third ``--gpuperf-floor`` number became "file or directory
not found: 0.3", and a bad ``--gpuperf-json`` path or placeholder raised a traceback only after the
whole run (losing its results and its history line). Each function raises :class:`OptionError` with
the option's name, the value and what is accepted; the plugin turns it into ``pytest.UsageError``.
"""

from __future__ import annotations

import math
import os
import string
import tempfile
from pathlib import Path
from typing import Any, Iterable, Sequence

#: placeholders ``--gpuperf-json`` fills in per device: the device's key, backend, index and ``{device}``
#: (``<key>-<backend>``), the measured repository's commit, the session's start (UTC) and ``{n}``, the first
#: number from 1 whose file does not exist yet (:func:`numbered`)
JSON_FIELDS = ("key", "backend", "index", "device", "commit", "date", "n")
#: how ``{date}`` spells the session's start: sortable, and no colon (not allowed in Windows file names)
JSON_DATE = "%Y%m%dT%H%M%SZ"


def fill_json(template: str, key: str, backend: str, index: int | str, commit: str, date: str) -> str:
    """``--gpuperf-json``'s template with every placeholder filled but ``{n}``, which only the write can
    decide (:func:`numbered`). ``commit`` as git gives it (``sha+dirty``, '' outside git): its first 12
    characters, ``-dirty``, ``nocommit`` where there is none."""
    sha, _, dirty = commit.partition("+")
    spelled = (sha[:12] + ("-dirty" if dirty else "")) if sha else "nocommit"
    return template.format(key=key, backend=backend, index=index, device=f"{key}-{backend}", commit=spelled,
                           date=date, n="{n}")


def numbered(path: str) -> str:
    """``path`` with ``{n}`` replaced by the first number from 1 whose file does not exist (each run its own
    file, never an earlier run's overwritten); ``path`` itself without ``{n}``. The caller holds the path's
    lock from this choice until its file is written."""
    if "{n}" not in path:
        return path
    n = 1
    while os.path.lexists(path.replace("{n}", str(n))):
        n += 1
    return path.replace("{n}", str(n))


class OptionError(ValueError):
    """A command-line value the plugin cannot run with; the message is the whole usage line."""


def positive(option: str, value: Any) -> float:
    """A finite number > 0 (watchdogs and budgets: 0 would time out or stop every measurement)."""
    x = _number(option, value)
    if not x > 0:
        raise OptionError(f"{option}={value!r}: must be a positive number of seconds")
    return x


def non_negative(option: str, value: Any, what: str = "number") -> float:
    """A finite number ≥ 0 (``k``, floors, 'no budget' = 0)."""
    x = _number(option, value)
    if x < 0:
        raise OptionError(f"{option}={value!r}: must be a non-negative {what}")
    return x


def choice(option: str, value: Any, allowed: Sequence[str]) -> str:
    """One of ``allowed`` (an ini value is free text, unlike an option with ``choices``)."""
    text = str(value).strip()
    if text not in allowed:
        raise OptionError(f"{option}={value!r}: must be one of {', '.join(allowed)}")
    return text


def _number(option: str, value: Any) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise OptionError(f"{option}={value!r}: not a number") from None
    if not math.isfinite(x):
        raise OptionError(f"{option}={value!r}: must be a finite number")
    return x


def floors(value: Sequence[Any] | None, positional: Iterable[str]) -> tuple[float, float] | None:
    """``--gpuperf-floor GPU CPU``: two non-negative fractions. ``positional`` (pytest's file-or-dir
    arguments) is checked for a stray third number, which argparse would otherwise hand to collection."""
    if value is None:
        return None
    gpu, cpu = (non_negative("--gpuperf-floor", v, "fraction (e.g. 0.03 for 3 %)") for v in value)
    for arg in positional:
        if _is_number(arg) and not Path(arg).exists():
            raise OptionError(f"--gpuperf-floor takes exactly two numbers (GPU CPU); {arg!r} after them was "
                              f"taken as a test path — remove it")
    return gpu, cpu


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def json_template(template: str) -> None:
    """``--gpuperf-json``: known placeholders only, and a place a file can be written — checked now, so a
    typo never costs the run its results (nor, through the crash at the end, its history line)."""
    fields: list[str] = []
    try:
        for _, name, _spec, _conv in string.Formatter().parse(template):
            if name is not None:
                fields.append(name)
    except ValueError as exc:
        raise OptionError(f"--gpuperf-json={template!r}: {exc}; write a literal brace as {{{{ or }}}}") from None
    unknown = [f for f in fields if f not in JSON_FIELDS]
    if unknown:
        raise OptionError(f"--gpuperf-json={template!r}: unknown placeholder {{{unknown[0]}}}; use "
                          + ", ".join("{" + f + "}" for f in JSON_FIELDS))
    sample = fill_json(template, "device-key", "opencl", 0, "0123456789abcdef", "20260101T000000Z").replace("{n}", "1")
    writable_file("--gpuperf-json", sample, fixed_part(template))


def fixed_part(template: str) -> Path:
    """The directory of ``template`` up to its first placeholder: what exists before any device is known."""
    if "{" not in template:
        return Path(template).parent
    head = template.split("{", 1)[0]
    return Path(head) if head.endswith(os.sep) else Path(head).parent


def writable_file(option: str, path: str, probe_from: Path | None = None) -> None:
    """``path`` can be created or replaced: it is no directory, and the nearest existing ancestor of its
    folder is a directory where a file can really be created (a probe file, removed at once — the only
    test that also catches /proc, read-only mounts and root-owned dirs under a non-root user)."""
    target = Path(path)
    if target.is_dir():
        raise OptionError(f"{option}={path}: is a directory; name a file in it, e.g. {target / 'results.json'}")
    folder = target.parent if probe_from is None else probe_from
    existing = folder if str(folder) else Path(".")
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise OptionError(f"{option}={path}: {existing} is not a directory")
    try:
        fd, probe = tempfile.mkstemp(prefix=".gpuperf-probe-", dir=existing)
    except OSError as exc:
        raise OptionError(f"{option}={path}: cannot create files in {existing} ({exc.strerror or exc}); choose a "
                          f"writable location") from None
    os.close(fd)
    os.unlink(probe)
    if target.exists() and not os.access(target, os.W_OK):
        raise OptionError(f"{option}={path}: the file is not writable; fix its permissions or choose another path")


def writable_dir(option: str, path: Path) -> None:
    """A folder files can be written into (created if missing): checked before a
    ``--gpuperf-update-baselines`` run, whose whole point is the files it writes at the end."""
    if path.exists() and not path.is_dir():
        raise OptionError(f"{option}={path}: is not a directory")
    writable_file(option, str(path / "probe.json"), path)


def readable_dir(option: str, path: Path) -> None:
    """A baseline folder a run is gated from: it exists, is a directory and can be listed. A missing or
    unreadable one is a usage error, never an empty baseline that gates nothing."""
    if not path.exists():
        raise OptionError(f"{option}={path}: does not exist; create your first baseline with "
                          f"'gpuperf baseline init --dir {path}', or name the folder that holds your <device-key>.json files")
    if not path.is_dir():
        raise OptionError(f"{option}={path}: is not a directory; name the folder that holds your <device-key>.json files")
    try:
        next(iter(os.scandir(path)), None)
    except OSError as exc:
        raise OptionError(f"{option}={path}: cannot be read ({exc.strerror or exc}); fix its permissions") from None
