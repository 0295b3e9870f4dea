"""``python -m pytest_gpuperf.studies.static_power.collect``: measure the static power model's corpus on a GPU.

    python -m pytest_gpuperf.studies.static_power.collect --device cuda:0 --budget-s 480 \\
        --out results/<device key>/power-corpus-cuda.json

Resumable: a second call with the same ``--out`` keeps what the first measured and goes on, so a corpus
larger than one time-boxed session is collected over several. A corpus kept compressed (``….json.gz``, as a
repository keeps it) is resumed as it is, named either way: ``--out X.json`` resumes ``X.json.gz`` where
that is the file there, and the file stays compressed; every write replaces the file atomically. The
instruction latencies are the device's probe figures where the checkout has them (``studies.ptx_model.ptx_latency``,
the same table the PTX time model uses), else the thesis' V100 column, named in the file's ``meta``.
Exit status 2 when the device has no power sensor or yields no PTX (the reason is printed).

    python -m pytest_gpuperf.studies.static_power.collect --merge A.json B.json --out results/<key>/power-corpus-cuda.json

joins collections of one device made by calls that could not resume each other's file (no GPU needed):
a configuration measured twice keeps its first measurement, the later ones in ``info["repeats"]``.

    python -m pytest_gpuperf.studies.static_power.collect --check-ptx 90 [--json]

compiles every corpus kernel with NVRTC for ``compute_90`` (no GPU: ``pip install nvidia-cuda-nvrtc``) and
shows each job's PTX loops and the trip counts they get; exit status 1 when a job would be left out.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ...devices import discover, open_device, resolve
from ..ptx_model.ptx_latency import latencies
from .power_model import corpus_path, save_corpus
from ...util import jsonio
from .model_corpus import check_ptx, collect, merge, repeatability


def corpus_out(out: Path | None, root: Path, key: str, backend: str) -> Path:
    """The corpus file a call writes: ``--out`` (default: the device's corpus under ``root``'s results), or its
    compressed twin ``….json.gz`` where only that exists — the file to resume, kept in its form."""
    return corpus_path(root / "results", key, backend) if out is None else jsonio.saved(out)


def _said(asked: Path | None, out: Path) -> None:
    if asked is not None and out != asked:
        print(f"{asked}: the corpus is kept compressed as {out}; writing that file")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pytest_gpuperf.studies.static_power.collect", description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="0", help="a --gpuperf-device spelling (default 0)")
    ap.add_argument("--out", type=Path, default=None,
                    help="corpus file (default results/<device key>/power-corpus-<backend>.json); where only its "
                         "compressed twin (.json.gz) exists, that one is resumed and stays compressed")
    ap.add_argument("--budget-s", type=float, default=480.0, help="stop starting new entries after this long")
    ap.add_argument("--root", type=Path, default=Path.cwd(), help="checkout root (baselines/, results/)")
    ap.add_argument("--merge", type=Path, nargs="+", default=None, metavar="CORPUS",
                    help="join these corpus files of one device into --out instead of measuring")
    ap.add_argument("--check-ptx", default=None, metavar="ARCH",
                    help="compile the corpus offline for compute_ARCH (e.g. 90) and check its loops' trip counts")
    ap.add_argument("--json", action="store_true", help="with --check-ptx: print the rows as JSON")
    args = ap.parse_args(argv)
    if args.check_ptx:
        rows = check_ptx(args.check_ptx)
        bad = [r for r in rows if r["trips"] is None]
        if args.json:
            print(json.dumps(rows, indent=1))
        else:
            for r in rows:
                print(f"{r['kernel']:24} {r['config']:10} {r['loops_in_ptx']:2} loop(s) trips {r['trips']} "
                      f"({r['how']}{'; ' + r['note'] if r['note'] else ''})")
            print(f"{len(rows)} configurations of {len({r['kernel'] for r in rows})} kernels; "
                  f"{len(bad)} would be left out")
        return 1 if bad else 0
    if args.merge:
        if args.out is None:
            ap.error("--merge needs --out (the merged corpus file)")
        try:
            device, entries, meta = merge(args.merge)
        except ValueError as exc:
            print(f"cannot merge: {exc}", file=sys.stderr)
            return 2
        out = jsonio.saved(args.out)
        _said(args.out, out)
        save_corpus(out, device, entries, meta)
        rep = repeatability(entries)
        print(f"{out}: {len(entries)} entries from {len(args.merge)} file(s); repeats: {rep}")
        return 0
    info = resolve(args.device, discover())[0]
    device = open_device(info)
    sensor, why = device.power_sensor()
    if sensor is None:
        print(f"{info.spec} ({info.name}): no power sensor — {why}", file=sys.stderr)
        return 2
    out = corpus_out(args.out, args.root, info.key, info.backend)
    _said(args.out, out)
    table = latencies(args.root, info.key, info.backend, info.clock_mhz)
    try:
        n, total, left = collect(device, table, out, args.budget_s, info.backend)
    finally:
        device.close()
    print(f"{out}: {n} entries of {total} configurations; {len(left)} left out")
    return 0


if __name__ == "__main__":
    sys.exit(main())
