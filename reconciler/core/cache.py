"""Where viewsync keeps what it can make again: `$XDG_CACHE_HOME/viewsync` (default ~/.cache/viewsync).
Spark's class-data-sharing archives and the pinned jars live under it."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "viewsync"
