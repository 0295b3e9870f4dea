"""The saved gate-check runs of the H100s and H200s read as one fleet: ``results/fleet-saved/``.

Each gate check ran on a new machine. Every run reads host ``vm`` and PCI address ``0000:00:06.0``, and the
older runs record no UUID or serial (they predate the ``card`` section): those files cannot tell the machines
apart, only the folders can. So one card = one gate-check folder (``gatecheck-<commit>``: one machine; the newer
runs' UUIDs name the card in the report). Its first A/A run (``aa-*.json.xz``: unchanged runs of the full suites) is the card's run in the
fleet, its second A/A run (where the gate check made one) the card's confirmation run; the planted runs of
the same folders are left out (they are slowed on purpose). The labels go to
``gpuperf fleet report --files LABEL=FILE ...`` (the confirmation: a second fleet of the same labels); this
script writes the report as JSON (xz) and prints it as text.

    python scripts/fleet_saved.py [--out results/fleet-saved]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pytest_gpuperf.fleet import fleetformat, fleetload, fleetreport  # noqa: E402
from pytest_gpuperf.util import jsonio  # noqa: E402

#: the device folders whose gate checks each ran on a new machine, and the short label of each
DEVICES = {"nvidia-h100-80gb-hbm3": "h100", "nvidia-h200": "h200"}


def labelled_files(results: Path) -> list[tuple[str, str]]:
    """(label, file) of every A/A run of every gate-check folder: ``h100/gatecheck-04e740c``."""
    pairs = []
    for folder, short in DEVICES.items():
        for aa in sorted((p for p in (results / folder).rglob("aa-*.json*") if jsonio.is_results_name(p.name))):
            check = aa.parent if aa.parent.name.startswith("gatecheck-") else aa.parent.parent \
                if aa.parent.parent.name.startswith("gatecheck-") else aa.parent
            pairs.append((f"{short}/{check.name}", str(aa.relative_to(ROOT))))
    return pairs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(ROOT / "results" / "fleet-saved"))
    args = ap.parse_args(argv)
    pairs = labelled_files(ROOT / "results")
    first: dict[str, str] = {}
    second: dict[str, str] = {}
    for label, path in pairs:  # sorted: aa-1 before aa-2 (the H100's 37994ee folder holds aa-3 and aa-4)
        (first if label not in first else second).setdefault(label, path)
    fleet = fleetload.load_labelled(sorted(first.items()), run_id="saved-gatechecks: first A/A run of each machine")
    confirm = fleetload.load_labelled(sorted(second.items()), run_id="saved-gatechecks: second A/A run")
    report = fleetreport.analyze(fleet, confirm)
    report["labels"] = {"fleet": [{"label": k, "file": v} for k, v in sorted(first.items())],
                        "confirm": [{"label": k, "file": v} for k, v in sorted(second.items())]}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    jsonio.write_xz(out / "fleet-report.json", fleetformat.json_text(report).encode("utf-8"))
    print(fleetformat.text(report))
    return fleetreport.exit_status(report)


if __name__ == "__main__":
    raise SystemExit(main())
