"""What each shipped test costs on a card's first run, for the status line's time left before the user's own runs
have timed it: ``pytest_gpuperf/report/durations/<key>-<backend>.json`` from a saved run of a fresh machine.

The status line counts each test still to run at its duration in the last session that ran it (the user's cache
directory); on a first run nothing is there, and the mean of the tests already finished says "35 s left" where the
Nsight Compute and tuning tests still have minutes to go. Each file holds, per test function of the shipped suites
(``suites/<file>::<test>``, its parameters dropped), the mean duration of its tests in the named run: a first run
of the same card model and backend estimates from it until its own tests have run.

    python scripts/first_run_durations.py results/nvidia-h200/gatecheck-65861d7/aa-1.json.xz ...
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pytest_gpuperf.util import jsonio  # noqa: E402
from pytest_gpuperf.report.progress import prior_file  # noqa: E402
from pytest_gpuperf.util.atomic import atomic_write_json  # noqa: E402


def per_function(tests: list[dict]) -> dict[str, float]:
    """Mean seconds per test function (``suites/<file>::<test>``) over its tests that ran."""
    sums: dict[str, list[float]] = defaultdict(list)
    for t in tests:
        if t.get("outcome") in ("passed", "failed") and isinstance(t.get("duration_s"), (int, float)):
            sums[t["test"].split("[", 1)[0]].append(float(t["duration_s"]))
    return {k: round(sum(v) / len(v), 3) for k, v in sorted(sums.items())}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", help="results files of complete runs on fresh machines (one per card and backend)")
    args = ap.parse_args(argv)
    for path in args.runs:
        doc = json.loads(jsonio.read_text(jsonio.saved(path)))
        dev, run = doc["device"], doc.get("run") or {}
        if run.get("interrupted"):
            print(f"{path}: an interrupted run: its tests are not all there; name a complete one", file=sys.stderr)
            return 2
        out = prior_file(dev["key"], dev["backend"])
        atomic_write_json(out, {"from": str(path), "commit": (doc.get("environment") or {}).get("commit"),
                                "seconds_per_test": per_function(doc.get("tests") or [])})
        print(f"{out.relative_to(ROOT)}: from {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
