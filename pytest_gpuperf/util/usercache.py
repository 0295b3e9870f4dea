"""Where the project keeps what it measured once and replays later (the tuning suite's exhaustive
references, the kernel-class suite's Nsight Compute counters): one folder per kind under the user's cache
directory, or a folder the user names in an environment variable.

One home for the convention, so every such store lies under the same root and is moved the same way."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

#: the application folder under the user's cache directory
APP = "pytest-gpuperf"


def cache_folder(folder: str, env: str) -> Path:
    """``$<env>`` where set, else ``<user cache dir>/pytest-gpuperf/<folder>`` (platformdirs:
    ``$XDG_CACHE_HOME`` or ``~/.cache`` on Linux). The folder is not created here: a store creates it
    when it first writes, so a run that only reads leaves nothing behind."""
    named = os.environ.get(env)
    if named:
        return Path(named)
    return Path(platformdirs.user_cache_dir(APP, appauthor=False)) / folder
