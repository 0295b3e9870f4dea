#!/usr/bin/env python3
"""Print the table of docs/history.md's steps from the committed results (never typed by hand).

    python scripts/tables_history.py [results/]

Imports the results folder into a temporary history database (``gpuperf history import``), runs
``detect`` with its defaults and prints one row per device, commit range and status: the metrics that
stepped there, their directions and sizes, and the cause found with ``git log`` on that range
(:data:`CAUSES`, written after reading the range's commits; a range without an entry prints "?", so a new
step cannot go unexplained without showing it).
"""

from __future__ import annotations

import contextlib
import io
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_gpuperf.cli import main as gpuperf  # noqa: E402
from pytest_gpuperf.history.backends import read_runs  # noqa: E402
from pytest_gpuperf.history.detect import detect_all  # noqa: E402

#: (device key, backend, commit range) → what moved it, from ``git log A..B`` (the first commit of a range
#: that the repository no longer has is named by the run that recorded it)
CAUSES: dict[tuple[str, str, str], str] = {
    ("nvidia-h100-80gb-hbm3", "cuda", "849ea2b3a7f4..e391d77"):
        "e391d77: the PTX model charges global loads with Alavani's latency model measured on the device",
    ("nvidia-h100-80gb-hbm3", "cuda", "05c8507..a00f8a6"):
        "5d3968b: accuracy inputs seeded from the test id without the device, so the fuzz and summation "
        "tests draw other (fixed) inputs",
    ("nvidia-h100-80gb-hbm3", "cuda", "840e373..9ab4cdb"):
        "7ea1438: tuning budgets count from the session's start (the one tuning change in the range); one run "
        "recorded the figure since, so it stays a candidate",
    ("nvidia-h100-80gb-hbm3", "cuda", "fbe1609..2ddbc93"):
        "905cbc9/9607a60/c322406: the accuracy kernels' text now comes from the device dialect; bisect to "
        "confirm",
    ("nvidia-h100-80gb-hbm3", "opencl", "849ea2b3a7f4..6bb9be0"):
        "the exploratory OpenCL tuning run with the probe limit lifted (a2f7beb): another configuration space",
    ("nvidia-h100-80gb-hbm3", "opencl", "6bb9be0..df12932"):
        "back to the default space after that exploratory run (a2f7beb); one run so far",
    ("nvidia-h200", "cuda", "d63256a..f9f85d1"):
        "the global-latency sweep: 62b1543 keeps its results per device and 51d2a87 builds the chase kernels' "
        "timed sections from one template (text unchanged). Bisect to tell which",
    ("nvidia-h200", "cuda", "d63256a..46fb54e"):
        "905cbc9/9607a60/c322406 (the accuracy kernels' text now comes from the device dialect) are in this "
        "451-commit range, as in the H100's fbe1609..2ddbc93, where the same fuzz maximum (same seed) fell 1 → 0 "
        "ulp too; bisect to confirm",
    ("pocl-pthread-haswell-amd-epyc", "opencl", "266ec6dc1beb..121c3ffcb1b0"):
        "905cbc9/9607a60/c322406: the accuracy kernels' text now comes from the device dialect; two runs so far",
    ("pocl-pthread-skylake-avx512-amd-epyc", "opencl", "cb1c486216c9..be86e76b2753"):
        "no commit in the range touches the summation or its timing (b9a52ba2 adds an untimed pre-run to "
        "timing.measure that the summation does not use); the two runs at be86e76 read 27.0 and 10.1 µs a "
        "minute apart on the same shared 2-core host, and the later runs at the new level ran on other machines "
        "ten days later: host noise as far as the range shows; bisect to confirm",
    ("pocl-pthread-skylake-avx512-amd-epyc", "opencl", "be86e76b2753..2ae8067e85a3"):
        "the copy procedure itself is unchanged in the 694 commits (392285fc moves it into probes.copy_bandwidth), "
        "which add bdedd50b (OpenCL timed work held behind a user event) and 0c4819f3 (a CPU buffer's pages "
        "committed before timing). The new runs are the fleet scenario's memory-suite jobs on another machine "
        "(kernel fc-v669 → fc-v1098) with other processes on 1.6-1.8 of its 2 cores (docs/fleet.md): machine "
        "and load confounded with code; bisect on one machine",
    ("pocl-pthread-skylake-avx512-amd-epyc", "opencl", "be86e76b2753..0dbf2042e591"):
        "bdedd50b: OpenCL timed work waits on a user event released once all of it is enqueued, so the 12-pass "
        "pairwise sum no longer times PyOpenCL's enqueue gaps (aa175e9d expected this drop); the two runs since "
        "(0dbf204, 6ba6507) ran on another machine ten days later, so it stays a candidate",
    ("pocl-pthread-skylake-avx512-amd-epyc", "opencl", "2ae8067e85a3..0dbf2042e591"):
        "no code change: 0dbf204 is an ancestor of 2ae8067 (git log A..B is empty; the 10 commits 0dbf204..2ae8067 "
        "touch the fleet report, NVML and results writing, not the copy). The contended fleet jobs against the "
        "next day's before/after runs (PoCL reports 13.0 GB of memory against 10.2-10.4 GB): a machine and load "
        "difference; two runs so far, so it stays a candidate",
}


def steps(results: Path) -> tuple[list, int]:
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "h.db")
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            assert gpuperf(["history", "import", str(results), "--db", db]) in (0, 1)
        runs = read_runs(db)
    found = detect_all(runs)
    return found.steps, len(runs) - len(found.left_out)


def table(results: Path) -> str:
    found, runs = steps(results)
    groups: dict[tuple[str, str, str, str], list] = defaultdict(list)
    for s in sorted(found, key=lambda s: (s.device_key, s.backend, s.date, s.name)):
        groups[(s.device_key, s.backend, s.commit_range(), s.status)].append(s)
    confirmed = sum(s.status == "confirmed" for s in found)
    out = [f"{confirmed} confirmed step(s) and {len(found) - confirmed} candidate(s) over {runs} runs.", "",
           "| device | commits (last old..first new) | status | steps | metrics | sizes | cause |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    for (key, backend, commits, status), group in groups.items():
        dirs = Counter(s.direction for s in group)
        names = sorted({s.name for s in group})
        shown = ", ".join(f"`{n}`" for n in names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
        sizes = sorted(s.size() for s in group)
        size = sizes[0] if len(set(sizes)) == 1 else f"{sizes[0]} … {sizes[-1]}"
        cause = CAUSES.get((key, backend, commits), "?")
        out.append(f"| {key}/{backend} | `{commits}` | {status} | "
                   f"{', '.join(f'{n} {d}' for d, n in sorted(dirs.items()))} | {shown} | {size} | {cause} |")
    return "\n".join(out)


if __name__ == "__main__":
    print(table(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "results"))
