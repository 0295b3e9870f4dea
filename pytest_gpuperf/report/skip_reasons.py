"""The skipped tests of a session in one line, grouped by what they need: on a device without CUDA a full
run skips a few hundred tests, and ``-rs`` lists each — the line says how many need what, and which
device of this run lacks it.

A skip's reason is free text written where the test decides (the ``gpuperf(requires=[...])`` marker's
"opencl:0 (…) lacks cuda, fp16", a suite's own "has no binary64 support"); :data:`CATEGORIES` reads the
category from it, the first that matches winning, so a test that needs CUDA and fp16 counts once, under
CUDA (the reason it would still skip on any non-CUDA device). A reason no row matches counts as "other".
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from typing import Iterable

#: (what the tests need, pattern of their skip reasons), most fundamental first
CATEGORIES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("were skipped after their device was abandoned", re.compile(r"abandoned earlier in this run")),
    ("need CUDA", re.compile(r"\blacks\b[^;]*\bcuda\b|needs a CUDA device|is a cuda function|only (on )?CUDA devices"
                             r"|exist only on CUDA|not an NVIDIA device|CUDA-only|Nsight Compute", re.I)),
    ("need an OpenCL device", re.compile(r"\blacks\b[^;]*\bopencl\b|needs an OpenCL device|is an? opencl function", re.I)),
    ("need a GPU", re.compile(r"\blacks\b[^;]*\bgpu\b")),
    ("need a CPU device", re.compile(r"\blacks\b[^;]*\bcpu\b")),
    ("need fp64", re.compile(r"\blacks\b[^;]*\bfp64\b|binary64|has no fp64", re.I)),
    ("need fp16", re.compile(r"\blacks\b[^;]*\bfp16\b|binary16|cl_khr_fp16|has no fp16", re.I)),
    ("need a device clock", re.compile(r"\blacks\b[^;]*\bclock\b|reports no clock|device clock", re.I)),
    ("need a power sensor", re.compile(r"no power sensor", re.I)),
    # the folder the run stands in holds no measured corpus: nothing the device lacks
    ("found no saved power corpus (results/<key>/power-corpus-<backend>.json)", re.compile(r"no power corpus", re.I)),
    ("ran out of --gpuperf-tuning-budget", re.compile(r"--gpuperf-tuning-budget")),
    ("are opt-in", re.compile(r"opt-in", re.I)),
)
OTHER = "skipped for other reasons"


def category(reason: str) -> str:
    """What a test skipped with ``reason`` needs (a row of :data:`CATEGORIES`), else :data:`OTHER`."""
    for label, pattern in CATEGORIES:
        if pattern.search(reason):
            return label
    return OTHER


def device_of(nodeid: str, specs: Iterable[str]) -> str | None:
    """The device spec among ``specs`` that a test id's parameters name (``test_x[opencl:0-fp32]``)."""
    _, bracket, params = nodeid.partition("[")
    if not bracket:
        return None
    parts = params.rstrip("]").split("-")
    return next((s for s in specs if s in parts), None)


def summary_line(skips: Iterable[tuple[str, str]], specs: Iterable[str] = ()) -> str | None:
    """One line for the ``(test id, reason)`` of every skipped test, largest group first: "228 tests need
    CUDA, which opencl:0 lacks; 20 need fp16, which opencl:0 lacks; 3 skipped for other reasons (-rs lists
    each)"; None when nothing was skipped."""
    specs = list(specs)
    counts: Counter[str] = Counter()
    devices: dict[str, set[str]] = defaultdict(set)
    for nodeid, reason in skips:
        label = category(reason)
        counts[label] += 1
        device = device_of(nodeid, specs)
        if device is not None:
            devices[label].add(device)
    if not counts:
        return None
    parts = []
    for i, (label, n) in enumerate(sorted(counts.items(), key=lambda kv: (kv[0] == OTHER, -kv[1], kv[0]))):
        text = f"{n} {'test' + ('s' if n != 1 else '') + ' ' if i == 0 else ''}{_agreeing(label, n)}"
        if label.startswith("need") and devices[label]:
            lacking = sorted(devices[label])
            text += f", which {' and '.join(lacking)} lack{'s' if len(lacking) == 1 else ''}"
        parts.append(text)
    return "gpuperf skipped: " + "; ".join(parts) + " (-rs lists each)"


def _agreeing(label: str, n: int) -> str:
    """A category's label with its verb agreeing with one test (``1 needs CUDA``, ``1 is opt-in``)."""
    if n != 1:
        return label
    for many, one in (("need ", "needs "), ("are ", "is "), ("were ", "was ")):
        if label.startswith(many):
            return one + label[len(many):]
    return label


def reason_of(report: object) -> str:
    """The reason of a skip report (pytest keeps ``(path, line, 'Skipped: reason')`` for a skip)."""
    longrepr = getattr(report, "longrepr", None)
    text = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr or "")
    return text[len("Skipped: "):] if text.startswith("Skipped: ") else text
