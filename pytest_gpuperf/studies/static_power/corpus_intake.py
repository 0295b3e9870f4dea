"""A power corpus brought back by ``gpuperf offline collect``: its card's key, and the join with the store's
corpus of that card.

The offline intake (``offline.intake``, of the gate wing) owns results documents only; it loads this module
by name (:data:`pytest_gpuperf.offline.intake.CORPUS_INTAKE`) when a run brought a corpus back, so the gate
never reads a corpus itself. A configuration measured on both sides keeps the store's measurement, the other
as a repeat (:func:`.model_corpus.merge`)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from ...errors import GpuPerfError
from ...paths import safe_name
from ...util import jsonio
from .model_corpus import merge
from .power_model import read_corpus, save_corpus


def key_of(src: Path, echo: Callable[[str], object]) -> str | None:
    """The device key of a power corpus brought back (checked: it names a folder), or None when ``src`` is
    not a corpus."""
    try:
        key = read_corpus(src)[0]["key"]
    except (ValueError, KeyError, TypeError, OSError) as exc:
        echo(f"skipped {src.name}: not a power corpus ({exc})")
        return None
    return safe_name(key, f"{src.name}: device key")


def join(src: Path, key: str, into: Path, echo: Callable[[str], object]) -> Path:
    """A power corpus brought back, joined with the store's corpus of its card (or placed, compressed, where the
    store has none): the file now in the store."""
    existing = jsonio.saved(into / key / jsonio.uncompressed_name(src.name))
    if not existing.exists():
        placed = jsonio.write_xz(existing, jsonio.read_bytes(src))
        echo(f"collected {placed}")
        return placed
    if jsonio.read_bytes(existing) == jsonio.read_bytes(src):
        return existing
    try:
        device, entries, meta = merge([existing, src])
    except ValueError as exc:
        raise GpuPerfError(f"{src.name} cannot be joined with {existing}: {exc}; move one of them away") from None
    save_corpus(existing, device, entries, meta)
    echo(f"joined {src.name} with {existing}: {len(entries)} configurations")
    return existing
