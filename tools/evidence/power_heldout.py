"""The static power model's held-out predictions of each saved power corpus, fitted once and saved for the
energy table of docs/power.md (``power-energy``, role ``heldout``)::

    python3 -m tools.evidence.power_heldout      # from the repository root: refits, writes the file below

The file, ``results/offline/power-heldout.json.xz``, is derived (no GPU): for each corpus, every row's
predicted watts from the outer fold that held its kernel out (``energy_estimate.heldout_watts``: extra trees
under the ``kernels`` protocol, a nested cross-validation of seconds per card) and the digest of the corpus
rows it was fitted on. A table reading it for a corpus whose rows differ from that digest is refused with the
command above, and ``tests/test_power_energy_estimate.py`` refits every corpus the file holds and compares,
so the file cannot drift from the corpora or from the fit's code. The fit sums its trees' predictions in
threads, so a refit equals the file to the last few bits, not bit for bit.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any, Mapping, Sequence

from pytest_gpuperf.studies.static_power import energy_estimate as ee
from pytest_gpuperf.studies.static_power import power_model as pm
from pytest_gpuperf.util import jsonio

#: the file format
SCHEMA = "pytest-gpuperf-power-heldout/1"
#: where the repository keeps the file (relative to its root)
PATH = "results/offline/power-heldout.json.xz"
#: the command that writes it, as an error names it
COMMAND = "python3 -m tools.evidence.power_heldout"
#: the cards whose CUDA corpora it holds by default (those of scripts/power_model_offline.py)
KEYS = ("nvidia-h100-80gb-hbm3", "nvidia-h200")


def digest(entries: Sequence[pm.Entry]) -> str:
    """``sha256:…`` of the corpus rows as read (kernel, configuration, features, watts, energy, info, in order):
    equal rows give an equal digest whatever the file's compression."""
    rows = json.dumps([asdict(e) for e in entries], sort_keys=True, separators=(",", ":"), allow_nan=False)
    return "sha256:" + hashlib.sha256(rows.encode("utf-8")).hexdigest()


def default_corpora(root: Path) -> list[str]:
    """The saved CUDA corpus of each card of :data:`KEYS` that ``root`` holds, relative to ``root``."""
    paths = [pm.corpus_path(root / "results", key, "cuda") for key in KEYS]
    return [str(p.relative_to(root)) for p in paths if p.is_file()]


def make(root: Path, corpora: Sequence[str]) -> dict[str, Any]:
    """The file's document: each corpus (relative to ``root``) fitted, its rows' digest beside its predictions."""
    out: dict[str, Any] = {"schema": SCHEMA, "what": "each corpus row's predicted watts from the outer fold that "
                           "held its kernel out (energy_estimate.heldout_watts)", "command": COMMAND,
                           "family": ee.FAMILY, "protocol": ee.PROTOCOL, "corpora": {}}
    for rel in corpora:
        _, entries = pm.load_corpus(jsonio.saved(root / rel))
        out["corpora"][rel] = {"digest": digest(entries), "watts": ee.heldout_watts(entries)}
    return out


def write(root: Path, corpora: Sequence[str]) -> Path:
    """Fit every corpus and store the document at ``root/PATH``, compact and xz-compressed (atomically)."""
    doc = make(root, corpora)
    return jsonio.write_xz(root / PATH, json.dumps(doc, separators=(",", ":"), allow_nan=False).encode("utf-8"))


def predictions(doc: Mapping[str, Any], corpus: str, entries: Sequence[pm.Entry]) -> list[float]:
    """The saved predictions of ``corpus`` (its path as the file names it), refused (ValueError naming
    :data:`COMMAND`) where the file is not this format, lacks the corpus, or was fitted on other rows."""
    redo = f"; rerun {COMMAND} and commit {PATH}"
    if doc.get("schema") != SCHEMA:
        raise ValueError(f"schema {doc.get('schema')!r}, expected {SCHEMA!r}: not a file of saved held-out predictions")
    if (doc.get("family"), doc.get("protocol")) != (ee.FAMILY, ee.PROTOCOL):
        raise ValueError(f"fitted with {doc.get('family')} under {doc.get('protocol')}, the estimate uses "
                         f"{ee.FAMILY} under {ee.PROTOCOL}{redo}")
    saved = (doc.get("corpora") or {}).get(corpus)
    if saved is None:
        raise ValueError(f"holds no predictions of {corpus} (it holds {', '.join(doc.get('corpora') or {}) or 'none'}); "
                         f"rerun {COMMAND} naming every corpus the docs cite, and commit {PATH}")
    if saved.get("digest") != digest(entries) or len(saved.get("watts") or []) != len(entries):
        raise ValueError(f"its predictions of {corpus} were fitted on other rows than the corpus holds now "
                         f"(digest {saved.get('digest')}, the corpus' {digest(entries)}){redo}")
    return [float(w) for w in saved["watts"]]


def main(argv: Sequence[str] | None = None) -> int:
    """Refit the corpora named (default: :func:`default_corpora`) and write :data:`PATH`."""
    p = argparse.ArgumentParser(prog=COMMAND, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("corpora", nargs="*", metavar="CORPUS",
                   help="saved power corpora, relative to the root (default: the CUDA corpus of each card of KEYS)")
    p.add_argument("--root", default=".", help="repository root holding results/ (default: .)")
    args = p.parse_args(argv)
    root = Path(args.root).resolve()
    corpora = args.corpora or default_corpora(root)
    if not corpora:
        print(f"{COMMAND}: error: no saved power corpus under {root / 'results'}; pass --root or name the corpora",
              file=sys.stderr)
        return 2
    path = write(root, corpora)
    print(f"wrote {path.relative_to(root)}: held-out predictions of {', '.join(corpora)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
