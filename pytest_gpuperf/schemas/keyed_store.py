"""A folder of JSON entries, one file per key, each checked against one schema of this package.

The tuning suite's picks and exhaustive tables and the kernel-class suite's stored ncu profiles are kept
this way: entries are validated when read and before they are written (the writer cannot store what the
reader would refuse), writes are atomic, and an entry that cannot be used — unreadable, torn by a killed
write, of another schema version, or not following this one — is a miss with a warning of the caller's
class that says why and what happens instead.

Under the user's folder a store may have a read-only layer of reviewed entries (``shipped``: the
package's references, or a fleet's shared folder, :func:`~..util.memo.reference_folder`), stored as
``<key>.json.xz``. An entry is looked up there only where the user's folder has none; it is checked the
same way, and never written: what a run adds to an entry it read there goes to the user's folder.
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path
from typing import Any, Mapping

from ..util.atomic import atomic_write_json
from ..util.jsonio import read_text
from . import SchemaError, validate

#: the suffix of an entry in a read-only layer
SHIPPED_SUFFIX = ".json.xz"


class KeyedStore:
    """``root/<key>.json`` entries of ``schema``; ``what`` names an entry in messages, ``stale`` is the
    warning class of a refused one and ``instead`` says what the caller does then; ``shipped``: the
    read-only layer of ``<key>.json.xz`` entries read where ``root`` has none (None: no layer)."""

    def __init__(self, root: Path, schema: str, what: str, stale: type[Warning], instead: str,
                 shipped: Path | None = None) -> None:
        self.root = Path(root)
        self.shipped = None if shipped is None else Path(shipped)
        self.schema, self.what, self.stale, self.instead = schema, what, stale, instead

    def path(self, key: str) -> Path:
        return self.root / f"{key}.json"

    def shipped_path(self, key: str) -> Path | None:
        """Where the read-only layer would hold ``key`` (None without a layer)."""
        return None if self.shipped is None else self.shipped / f"{key}{SHIPPED_SUFFIX}"

    def find(self, key: str) -> tuple[dict[str, Any], Path] | None:
        """The entry and the file it was read from — the user's folder first, then the read-only layer —
        or None: absent from both (silently), or unreadable, torn or refused (with a warning)."""
        entry = self.get(key)
        if entry is not None:
            return entry, self.path(key)
        shipped = self.shipped_path(key)
        if shipped is None:
            return None
        try:
            text = read_text(shipped)
        except FileNotFoundError:
            return None
        except (EOFError, ValueError, OSError) as exc:
            self.refuse(f"{self.what} {shipped} cannot be read: torn or not xz ({exc})")
            return None
        entry = self._checked(text, shipped)
        return None if entry is None else (entry, shipped)

    def refuse(self, why: str) -> None:
        """Warn that an entry is not used, and what happens instead."""
        level, frame = 1, sys._getframe(0)
        while frame is not None and frame.f_code.co_filename == __file__:  # name the store's caller
            frame, level = frame.f_back, level + 1
        warnings.warn(self.stale(f"{why}\nNot used: {self.instead}"), stacklevel=level)

    def get(self, key: str) -> dict[str, Any] | None:
        """The entry, or None: absent (silently), or unreadable, torn or refused (with a warning)."""
        path = self.path(key)
        try:
            text = path.read_text()
        except FileNotFoundError:
            return None
        except OSError as exc:
            self.refuse(f"{self.what} {path} cannot be read ({exc.strerror or exc})")
            return None
        return self._checked(text, path)

    def _checked(self, text: str, path: Path) -> dict[str, Any] | None:
        """The entry ``text`` holds when it follows the schema, else None with a warning."""
        try:
            entry = json.loads(text)
            validate(entry, self.schema, source=f"{self.what} {path}")
        except SchemaError as exc:
            self.refuse(str(exc))
            return None
        except ValueError:
            self.refuse(f"{self.what} {path} is not JSON (a torn or foreign file)")
            return None
        return entry

    def put(self, key: str, value: Mapping[str, Any]) -> Path:
        """Store ``value`` under ``key`` stamped with the schema (validated before writing)."""
        entry = {"schema": self.schema, **value}
        validate(entry, self.schema, source=f"{self.what} for {key}")
        atomic_write_json(self.path(key), entry)
        return self.path(key)
