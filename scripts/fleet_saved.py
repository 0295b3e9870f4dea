"""The saved gate-check runs of the H100s and H200s read as one fleet: ``results/fleet-saved/``.

Each gate check ran on a new machine (or two). Every run reads host ``vm`` and PCI address ``0000:00:06.0``, and the
older runs record no UUID or serial (they predate the ``card`` section): those files cannot tell the machines
apart, only the folders can. So a gate-check folder (``gatecheck-<commit>``) whose runs record no UUID is one
card; where its runs record the card's UUID (``card.uuid``, NVML's), each UUID is a card, so a gate check whose
A/A runs came from two machines is two cards. A card's first A/A run (``aa-*.json.xz``: unchanged runs of the
full suites) is its run in the fleet, its second A/A run (where the gate check made one) its confirmation
run; the other runs of the same folders (``plant-*``, ``calib-*``: slowed on purpose, or calibrating the
plants) are left out. The labels go to ``gpuperf fleet report --files LABEL=FILE ...`` (the confirmation: a
second fleet of the same labels); this script writes the report as JSON (xz) and prints it as text.

    python scripts/fleet_saved.py [--out results/fleet-saved] [--results results]
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pytest_gpuperf.errors import GpuPerfError  # noqa: E402
from pytest_gpuperf.fleet import fleetformat, fleetload, fleetreport  # noqa: E402
from pytest_gpuperf.report.results import card_identity  # noqa: E402
from pytest_gpuperf.util import jsonio  # noqa: E402

#: the device folders whose gate checks each ran on a new machine, and the short label of each
DEVICES = {"nvidia-h100-80gb-hbm3": "h100", "nvidia-h200": "h200"}


def labelled_files(results: Path) -> list[tuple[str, str]]:
    """(label, file) of every A/A run of every gate-check folder, in name order: ``h100/gatecheck-04e740c``
    (the folder's label; files relative to the folder holding ``results``). Only gate-check folders: their A/A
    runs are the full suites, where other folders' unchanged runs may be a ``-k`` selection of a few tests."""
    pairs = []
    for folder, short in DEVICES.items():
        for aa in sorted((p for p in (results / folder).rglob("aa-*.json*") if jsonio.is_results_name(p.name))):
            check = aa.parent if aa.parent.name.startswith("gatecheck-") else aa.parent.parent \
                if aa.parent.parent.name.startswith("gatecheck-") else aa.parent
            if check.name.startswith("gatecheck"):
                pairs.append((f"{short}/{check.name}", str(aa.relative_to(results.parent))))
    return pairs


def card_uuid(path: Path) -> str | None:
    """The UUID of the card that made the run in ``path`` (its ``card`` section, else the device's NVML
    extras); None where the run records none."""
    raw: Any = jsonio.read_json(path)
    if not isinstance(raw, dict) or not isinstance(raw.get("device"), dict):
        raise GpuPerfError(f"{path}: not a results document (no device section); move it out of the gate-check "
                           f"folder or rename it so that it does not match aa-*.json*")
    card = raw.get("card") if isinstance(raw.get("card"), dict) else \
        card_identity(raw["device"], raw.get("environment") or {})
    return str(card["uuid"]) if card.get("uuid") else None


def card_runs(results: Path) -> list[tuple[str, list[str]]]:
    """(card label, its A/A runs in name order) of every card: a folder's runs paired by the card's UUID
    where they record one. A folder of one card keeps the folder's label; a folder of several cards labels
    each ``<folder label>/<the UUID's head>`` (``h200/gatecheck-<commit>/GPU-1a2b3c4d``; the runs that
    record no UUID keep the folder's label)."""
    by_folder: dict[str, dict[str | None, list[str]]] = {}
    for label, path in labelled_files(results):
        by_folder.setdefault(label, {}).setdefault(card_uuid(results.parent / path), []).append(path)
    cards = []
    for label, by_uuid in by_folder.items():
        short = {u: "-".join(u.split("-")[:2]) for u in by_uuid if u}
        if len(set(short.values())) < len(short):  # two UUIDs share their head: name them in full
            short = {u: u for u in short}
        for uuid, runs in by_uuid.items():
            cards.append((label if len(by_uuid) == 1 or uuid is None else f"{label}/{short[uuid]}", runs))
    return sorted(cards)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(ROOT / "results" / "fleet-saved"))
    ap.add_argument("--results", default=str(ROOT / "results"), help="the results folder to read (default: the "
                    "repository's); the labels' files are named relative to the folder holding it")
    args = ap.parse_args(argv)
    try:
        return _report(Path(args.results).resolve(), Path(args.out).resolve())
    except GpuPerfError as exc:
        print(f"fleet_saved.py: error: {exc}", file=sys.stderr)
        return 2


def _report(results: Path, out: Path) -> int:
    """Write the saved fleet's report under ``out`` and print it; its exit status (``gpuperf fleet report``'s)."""
    first: dict[str, str] = {}
    second: dict[str, str] = {}
    for label, runs in card_runs(results):  # aa-1 before aa-2 (the H100's 37994ee folder holds aa-3 and aa-4)
        first[label] = runs[0]
        if len(runs) > 1:
            second[label] = runs[1]
    with contextlib.chdir(results.parent):  # the report names each file as the labels do: from the repository root
        fleet = fleetload.load_labelled(sorted(first.items()), run_id="saved-gatechecks: first A/A run of each machine")
        confirm = fleetload.load_labelled(sorted(second.items()), run_id="saved-gatechecks: second A/A run") \
            if second else None
    report = fleetreport.analyze(fleet, confirm)
    report["labels"] = {"fleet": [{"label": k, "file": v} for k, v in sorted(first.items())],
                        "confirm": [{"label": k, "file": v} for k, v in sorted(second.items())]}
    out.mkdir(parents=True, exist_ok=True)
    jsonio.write_xz(out / "fleet-report.json", fleetformat.json_text(report).encode("utf-8"))
    print(fleetformat.text(report))
    return fleetreport.exit_status(report)


if __name__ == "__main__":
    raise SystemExit(main())
