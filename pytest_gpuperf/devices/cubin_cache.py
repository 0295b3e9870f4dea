"""NVRTC's output kept across runs: a CUDA kernel's cubin (or PTX) and compile log, keyed by its source and name, the full
option list (architecture and include folders among them), the target, NVRTC's version and this package's code.

A run compiles every kernel it times, hundreds of them, and the same text with the same options and the same
NVRTC gives the same bytes every time: a later run on the host replays them from the user's cache directory
(:mod:`pytest_gpuperf.util.memo`, ``$GPUPERF_CACHE``) instead of compiling again. Any change of a key's part is a
miss; a miss compiles as if no store existed; a compile error is raised and never stored.
"""

from __future__ import annotations

import base64
from typing import Callable, Sequence

from ..util import memo

KIND = "nvrtc"


def compiled(source: str, name: str, options: Sequence[str], target: str, version: str,
             compile_once: Callable[[], tuple[bytes, str]]) -> tuple[bytes, str, bool]:
    """``compile_once()``'s (binary, log) for this source, program ``name`` (line information names it), option
    list, target and NVRTC ``version`` — from the store when it holds them, else compiled and stored — and
    whether it came from the store."""
    def encoded() -> dict[str, str]:
        binary, log = compile_once()
        return {"binary": base64.b64encode(binary).decode("ascii"), "log": log}

    fields = {"source": source, "name": name, "options": list(options), "target": target, "nvrtc": version}
    value, how = memo.remember(KIND, fields, encoded,
                               valid=lambda v: isinstance(v, dict) and isinstance(v.get("binary"), str))
    return base64.b64decode(value["binary"]), str(value.get("log", "")), bool(how.get("cached"))
