"""A folder of JSON entries, one file per key, each checked against one schema of this package.

The tuning suite's picks and exhaustive tables and the kernel-class suite's stored ncu profiles are kept
this way: entries are validated when read and before they are written (the writer cannot store what the
reader would refuse), writes are atomic, and an entry that cannot be used — unreadable, torn by a killed
write, of another schema version, or not following this one — is a miss with a warning of the caller's
class that says why and what happens instead.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any, Mapping

from ..util.atomic import atomic_write_json
from . import SchemaError, validate


class KeyedStore:
    """``root/<key>.json`` entries of ``schema``; ``what`` names an entry in messages, ``stale`` is the
    warning class of a refused one and ``instead`` says what the caller does then."""

    def __init__(self, root: Path, schema: str, what: str, stale: type[Warning], instead: str) -> None:
        self.root = Path(root)
        self.schema, self.what, self.stale, self.instead = schema, what, stale, instead

    def path(self, key: str) -> Path:
        return self.root / f"{key}.json"

    def refuse(self, why: str) -> None:
        """Warn that an entry is not used, and what happens instead."""
        warnings.warn(self.stale(f"{why}\nNot used: {self.instead}"), stacklevel=3)

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
