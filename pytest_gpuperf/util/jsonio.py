"""Saved files that may be gzip-compressed: results kept as evidence are stored as ``*.json.gz``
(``*.log.gz``…), and every reader of a results document, a log or a corpus takes either form.

:func:`saved` finds the file a name means (``x.json`` or ``x.json.gz``); :func:`read_text` and
:func:`read_json` open it, decompressing by the ``.gz`` suffix; :func:`write_gz` stores a file
compressed, atomically."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Any

from .atomic import atomic_write_chunks

GZ = ".gz"


def saved(path: str | os.PathLike[str]) -> Path:
    """The file ``path`` names: itself if it exists, else its ``.gz`` twin if that exists, else ``path``
    unchanged (so a caller's "does not exist" message names what was asked for)."""
    p = Path(path)
    if p.exists() or p.suffix == GZ:
        return p
    twin = p.with_name(p.name + GZ)
    return twin if twin.exists() else p


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    p = saved(path)
    data = p.read_bytes()
    return gzip.decompress(data) if p.suffix == GZ else data


def read_text(path: str | os.PathLike[str]) -> str:
    return read_bytes(path).decode("utf-8")


def read_json(path: str | os.PathLike[str]) -> Any:
    return json.loads(read_text(path))


def write_gz(path: str | os.PathLike[str], data: bytes) -> Path:
    """Store ``data`` gzip-compressed at ``path`` (``.gz`` appended if missing), atomically; the
    compressed bytes do not depend on when they were written (mtime 0), so equal files stay equal."""
    p = Path(path)
    if p.suffix != GZ:
        p = p.with_name(p.name + GZ)
    atomic_write_chunks(p, [gzip.compress(data, compresslevel=9, mtime=0)])
    return p
