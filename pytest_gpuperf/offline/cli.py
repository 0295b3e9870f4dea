"""``gpuperf offline bundle|collect|references``: run the suites on a GPU host that reaches no package index,
and share what its first run measured with the machines after it."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from .bundle import PLATFORMS, bundle, describe
from .intake import collect
from .reference_export import export

#: what a CUDA GPU host's Python usually has already (a CUDA image with CuPy and the scientific stack);
#: ``--host-has`` replaces it
HOST_HAS = ("numpy", "scipy", "scikit-learn", "cupy-cuda13x", "cupy-cuda12x", "pytest", "networkx", "filelock",
            "joblib", "threadpoolctl", "pluggy", "iniconfig", "packaging", "fastrlock")


def _bundle(args: argparse.Namespace) -> int:
    manifest = bundle(Path(args.dir), python=args.python, extras=args.extra, host_has=args.host_has or HOST_HAS,
                      wheel=args.wheel, platforms=args.platform or PLATFORMS, also=args.also,
                      cache=None if args.cache is None else Path(args.cache))
    print(describe(manifest, Path(args.dir)))
    return 0


def _collect(args: argparse.Namespace) -> int:
    placed = collect(Path(args.source), Path(args.into), args.history or os.environ.get("GPUPERF_HISTORY"))
    print(f"gpuperf offline collect: {len(placed)} files in {args.into}")
    return 0


def _references(args: argparse.Namespace) -> int:
    done = export(Path(args.cache), Path(args.into), args.device, replace=args.replace)
    print(done.describe())
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("offline", help="run the suites on a GPU host without a package index: bundle, run.sh, collect")
    s = p.add_subparsers(dest="offline_command", required=True, metavar="SUBCOMMAND")
    b = s.add_parser("bundle", help="a folder with the plugin, the wheels the host lacks and run.sh")
    b.add_argument("dir", help="the bundle folder to create (must be new or empty)")
    b.add_argument("--python", default="3.12", help="the host's Python version (default 3.12)")
    b.add_argument("--extra", action="append", default=[], metavar="EXTRA",
                   help="extras to include, repeatable (e.g. cuda, power)")
    b.add_argument("--host-has", action="append", default=None, metavar="PROJECT",
                   help="a package the host already has, left out of the bundle (repeatable; default: "
                        + ", ".join(HOST_HAS) + ")")
    b.add_argument("--also", action="append", default=[], metavar="PROJECT",
                   help="another project to install beside the plugin, repeatable (e.g. xgboost-cpu for the power "
                        "model without the CUDA build of XGBoost)")
    b.add_argument("--platform", action="append", default=None, help="pip platform tags (default: glibc x86-64)")
    b.add_argument("--wheel", default=None, help="the plugin wheel to carry (default: built from this checkout)")
    b.add_argument("--cache", default=None, metavar="DIR",
                   help="start the bundle's cache/ (what run.sh replays instead of measuring again: tuning "
                        "references, profiler counters, searches) from this folder, e.g. another bundle's cache/")
    b.set_defaults(func=_bundle)
    c = s.add_parser("collect", help="bring OUT.tgz of run.sh back: results/<key>/, logs, history; "
                                       "power corpora joined with the store's; a gate check (run.sh --gatecheck) "
                                       "as results/<key>/gatecheck-<commit>/")
    c.add_argument("source", help="OUT.tgz (or the OUT folder)")
    c.add_argument("--into", default="results", help="results store (default ./results)")
    c.add_argument("--history", default=None, help="also import the runs into this history store "
                                                   "(default $GPUPERF_HISTORY, else none)")
    c.set_defaults(func=_collect)
    r = s.add_parser("references", help="copy a cache's tuning tables, tuned picks and Nsight Compute profiles into "
                                          "a folder that $GPUPERF_REFERENCES names on other machines: a fresh "
                                          "machine of the same card, driver and toolkit replays them")
    r.add_argument("cache", help="the cache folder ($GPUPERF_CACHE or ~/.cache/pytest-gpuperf of a machine that ran "
                                 "the suites, or a bundle's cache/)")
    r.add_argument("--into", required=True, metavar="DIR", help="the references folder to fill (created)")
    r.add_argument("--device", action="append", default=[], metavar="KEY",
                   help="keep the entries of this device key only (repeatable; default: every entry)")
    r.add_argument("--replace", action="store_true",
                   help="overwrite an entry already in DIR under the same key (default: keep it)")
    r.set_defaults(func=_references)
